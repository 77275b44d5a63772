/* ledger_lua: running the ledger's Lua scripts (lib/lua_ledger.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	[LG_QUEUE_ADD] = {"queue-add", lua_queue_add},
	[LG_QUEUE_HEARTBEAT] = {"queue-heartbeat", lua_queue_heartbeat},
	[LG_QUEUE_TRY] = {"queue-try", lua_queue_try},
	[LG_QUEUE_CANCEL] = {"queue-cancel", lua_queue_cancel},
};

#define NSCRIPTS (sizeof bodies / sizeof bodies[0])

/* The scripts' texts, built once: lua_lib then the body. Never freed
 * while the process runs; freed at exit to keep leak checks clean. */
static struct rd_script scripts[NSCRIPTS];

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
	if (scripts[0].src)
		return;
	for (i = 0; i < NSCRIPTS; i++) {
		scripts[i].name = bodies[i].name;
		scripts[i].src = easprintf("%s%s", lua_lib, bodies[i].body);
	}
	atexit(free_scripts);
}

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

/* common_errors ends the tool for the answers any script can give (res
 * freed first). */
static void
common_errors(json_t *res)
{
	const char *e = json_string_value(json_object_get(res, "error"));
	int nocount = e && strcmp(e, "nocount") == 0;
	int badcount = e && strcmp(e, "badcount") == 0;

	if (nocount || badcount)
		json_decref(res);
	if (nocount)
		err_die(HAZ_FAIL,
			LG_PREFIX "gpu_count is not set; initialise the pool "
				  "with `gpu-reserve init -g N` (or canhazgpu "
				  "admin --gpus N)");
	if (badcount)
		err_die(HAZ_FAIL, LG_PREFIX "gpu_count is not a number");
}

json_t *
lg_run(struct lg *l, enum lg_script s, json_t *params)
{
	double start = mono();
	struct lg_clock c;
	json_error_t jerr;
	redisReply *y;
	const char *argv[1];
	char *text;
	json_t *res;

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
		if (y->type != REDIS_REPLY_STRING) {
			json_decref(params);
			rd_fail(l->rd, y, HAZ_FAIL, scripts[s].name);
		}
		res = jl_loadb(y->str, y->len, 0, &jerr);
		freeReplyObject(y);
		if (!res || !json_is_object(res)) {
			json_decref(params);
			json_decref(res);
			err_die(HAZ_FAIL, "redis %s: %s: not a JSON object",
				l->rd->addr, scripts[s].name);
		}
		if (!json_is_true(json_object_get(res, "locked")))
			break;
		json_decref(res);
		if (mono() - start >= l->lockwait_s) {
			json_decref(params);
			err_die(HAZ_TEMP,
				LG_PREFIX "allocation_lock is held by someone "
					  "else (waited %g s); left as it is",
				l->lockwait_s);
		}
		pause_jitter();
	}
	json_decref(params);
	common_errors(res);
	return res;
}
