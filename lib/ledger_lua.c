/* ledger_lua: running the ledger's Lua scripts (lib/lua/, made into
 * lua_ledger.h by the build). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "err.h"
#include "jload.h"
#include "ledger.h"
#include "lua_ledger.h"

static const struct {
	const char *name;
	const char *body;
} bodies[] = {
	[LG_RESERVE] = {"reserve", lua_reserve},
	[LG_RELEASE] = {"release", lua_release},
	[LG_HEARTBEAT] = {"heartbeat", lua_heartbeat},
	[LG_CLEANUP] = {"cleanup", lua_cleanup},
	[LG_K8S_SYNC] = {"k8s-sync", lua_k8s_sync},
	[LG_K8S_PREPARE] = {"k8s-prepare", lua_k8s_prepare},
	[LG_QUEUE_ADD] = {"queue-add", lua_queue_add},
	[LG_QUEUE_HEARTBEAT] = {"queue-heartbeat", lua_queue_heartbeat},
	[LG_QUEUE_TRY] = {"queue-try", lua_queue_try},
	[LG_QUEUE_CANCEL] = {"queue-cancel", lua_queue_cancel},
};

#define NSCRIPTS (sizeof bodies / sizeof bodies[0])

/* The scripts' texts and SHA-1s, built once, under scripts_mu, by the
 * first lg_init of any thread: lua_lib then the body. Never changed or
 * freed while the process runs (threads share them); freed at exit to
 * keep leak checks clean. */
static struct rd_script scripts[NSCRIPTS];
static pthread_mutex_t scripts_mu = PTHREAD_MUTEX_INITIALIZER;

static void
free_scripts(void)
{
	size_t i;

	for (i = 0; i < NSCRIPTS; i++)
		free((char *)scripts[i].src);
}

void
lg_init(struct lg *l, struct rd *rd, double lockwait_s)
{
	size_t i;

	memset(l, 0, sizeof *l);
	l->rd = rd;
	l->lockwait_s = lockwait_s;
	lg_random_hex(l->token, 16);
	pthread_mutex_lock(&scripts_mu);
	if (!scripts[0].src) {
		for (i = 0; i < NSCRIPTS; i++) {
			scripts[i].name = bodies[i].name;
			scripts[i].src = easprintf("%s%s%s%s", lg_lua_bounds(),
				lua_lib, lua_mig, bodies[i].body);
			rd_script_sha(&scripts[i]);
		}
		atexit(free_scripts);
	}
	pthread_mutex_unlock(&scripts_mu);
}

/* pause_jitter sleeps 1 to 20 ms. */
static void
pause_jitter(void)
{
	char hex[3];
	struct timespec ts;

	lg_random_hex(hex, 1);
	ts.tv_sec = 0;
	ts.tv_nsec = (1 + strtol(hex, NULL, 16) % 20) * 1000000L;
	nanosleep(&ts, NULL);
}

/* common_error says what the answers any script can give mean (NULL
 * for none): the pool has no size, or one out of range; a parameter out
 * of bounds (the C side checks them first: a defect if seen); the queue
 * is full. Returns a malloc'd message. */
static char *
common_error(const json_t *res, const char *script)
{
	const char *e = json_string_value(json_object_get(res, "error"));
	char why[256];

	if (!e)
		return NULL;
	if (strcmp(e, "nocount") == 0)
		return estrdup(
			LG_PREFIX "gpu_count is not set; initialise the pool "
				  "with `gpu-reserve init -g N` (or canhazgpu "
				  "admin --gpus N)");
	if (strcmp(e, "badcount") == 0)
		return easprintf(LG_PREFIX "gpu_count is not a number from 0 "
					   "to %d; nothing done (set it with "
					   "`gpu-reserve init -f -g N`)",
			LG_MAX_GPUS);
	if (strcmp(e, "param") == 0) {
		snprintf(why, sizeof why, "%s",
			json_string_value(json_object_get(res, "why")));
		return easprintf("the %s script refused its parameters: %s",
			script, err_clean(why));
	}
	if (strcmp(e, "queuefull") == 0)
		return easprintf(
			"the queue is full (%d requests); nothing done",
			LG_MAX_QUEUE);
	return NULL;
}

/* say_dropped warns of each queue entry a script took out of the queue
 * for another reason than its age. */
static void
say_dropped(const json_t *res)
{
	const json_t *d;
	char id[80], why[200];
	size_t i;

	json_array_foreach(json_object_get(res, "dropped"), i, d) {
		snprintf(id, sizeof id, "%s",
			json_string_value(json_object_get(d, "id")));
		snprintf(why, sizeof why, "%s",
			json_string_value(json_object_get(d, "why")));
		err_warn(LG_PREFIX "queue:entry:%s: %s; taken out of the queue",
			err_clean(id), err_clean(why));
	}
}

/* failed sets *status and *why (malloc'd) and returns NULL, for
 * lg_try_run. */
static json_t *
failed(int *status, char **why, int st, char *msg)
{
	*status = st;
	*why = msg;
	return NULL;
}

json_t *
lg_try_run(struct lg *l, enum lg_script s, json_t *params, int *status,
	char **why)
{
	double start = clock_mono();
	struct lg_clock c;
	json_error_t jerr;
	redisReply *y;
	const char *argv[1];
	char *text, *msg = NULL, *e;
	json_t *res = NULL;

	*status = HAZ_OK;
	*why = NULL;
	for (;;) {
		lg_clock(&c);
		json_object_set_new(params, "now", json_integer(c.sec));
		json_object_set_new(params, "ns", json_integer(c.nsec));
		json_object_set_new(params, "off", json_integer(c.off));
		json_object_set_new(params, "token", json_string(l->token));
		text = json_dumps(params, JSON_COMPACT);
		if (!text)
			err_die(HAZ_FAIL, "out of memory");
		argv[0] = text;
		y = rd_eval(l->rd, &scripts[s], 1, argv);
		free(text);
		if (!y) {
			json_decref(params);
			return failed(status, why, HAZ_TEMP,
				estrdup(l->rd->why ? l->rd->why
						   : "redis: connection lost"));
		}
		if (y->type != REDIS_REPLY_STRING) {
			msg = easprintf("redis %s: %s: %s", l->rd->addr,
				scripts[s].name,
				y->type == REDIS_REPLY_ERROR
					? y->str
					: "unexpected reply");
			freeReplyObject(y);
			json_decref(params);
			return failed(status, why, HAZ_FAIL, err_clean(msg));
		}
		res = jl_loadb(y->str, y->len, 0, &jerr);
		freeReplyObject(y);
		if (!res || !json_is_object(res)) {
			json_decref(params);
			json_decref(res);
			return failed(status, why, HAZ_FAIL,
				easprintf("redis %s: %s: not a JSON object",
					l->rd->addr, scripts[s].name));
		}
		if (!json_is_true(json_object_get(res, "locked")))
			break;
		json_decref(res);
		if (clock_mono() - start >= l->lockwait_s) {
			json_decref(params);
			return failed(status, why, HAZ_TEMP,
				easprintf(LG_PREFIX
					"allocation_lock is held by someone "
					"else (waited %g s); left as it is",
					l->lockwait_s));
		}
		pause_jitter();
	}
	json_decref(params);
	say_dropped(res);
	if ((e = common_error(res, scripts[s].name))) {
		json_decref(res);
		return failed(status, why, HAZ_FAIL, e);
	}
	return res;
}

json_t *
lg_run(struct lg *l, enum lg_script s, json_t *params)
{
	char msg[1024], *why;
	json_t *res;
	int status;

	if ((res = lg_try_run(l, s, params, &status, &why)))
		return res;
	/* copied, so that nothing is left allocated at exit */
	snprintf(msg, sizeof msg, "%s", why);
	free(why);
	err_die(status, "%s", msg);
}
