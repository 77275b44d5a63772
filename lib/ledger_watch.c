/* ledger_watch: changes of the GPU keys, by keyspace notifications when
 * the server sends them, else by polling. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "err.h"
#include "ledger.h"
#include "nd.h"

/* events_on says whether a notify-keyspace-events value sends keyspace
 * events for SET and DEL of string keys. */
static int
events_on(const char *v)
{
	return strchr(v, 'K') &&
		(strchr(v, 'g') || strchr(v, '$') || strchr(v, 'A'));
}

int
lg_keyspace_open(struct lg *l, struct rd *sub)
{
	static int said;
	const char *why = NULL;
	redisReply *y;
	char *pattern, *err;
	int on = 0;

	y = rd_cmd(l->rd, "CONFIG GET notify-keyspace-events");
	if (y->type == REDIS_REPLY_ERROR)
		why = "CONFIG GET is refused";
	else if (y->type == REDIS_REPLY_ARRAY && y->elements == 2 &&
		y->element[1]->type == REDIS_REPLY_STRING)
		on = events_on(y->element[1]->str);
	else
		why = "CONFIG GET answered oddly";
	freeReplyObject(y);
	if (on) {
		rd_connect(sub, l->rd->addr, l->rd->db, l->rd->password,
			l->rd->timeout_s);
		pattern = easprintf("__keyspace@%d__:" LG_PREFIX "gpu:*",
			l->rd->db);
		if (rd_psubscribe(sub, pattern, &err) == 0) {
			free(pattern);
			return 0;
		}
		free(pattern);
		rd_close(sub);
		free(err);
		why = "PSUBSCRIBE is refused";
	}
	if (!said++)
		err_warn("redis %s: %s; polling every 2 s (keyspace events "
			 "wake us at once: CONFIG SET notify-keyspace-events "
			 "K$g)",
			l->rd->addr, why ? why : "keyspace events are off");
	return -1;
}

int
lg_drain(struct rd *sub, json_t *keys)
{
	char *chan, *k;
	int n = 0;

	rd_read_input(sub);
	while ((chan = rd_pop_message(sub))) {
		k = strstr(chan, "__:");
		if (k && keys)
			json_array_append_new(keys, json_string(k + 3));
		n += k != NULL;
		free(chan);
	}
	return n;
}

/* snapshot returns the values of the GPU keys as one array of strings
 * and nulls. */
static json_t *
snapshot(struct lg *l)
{
	redisReply *y = rd_cmd(l->rd, "GET " LG_PREFIX "gpu_count");
	int n = y->type == REDIS_REPLY_STRING ? atoi(y->str) : 0, i;
	const char **argv;
	json_t *a = json_array();

	freeReplyObject(y);
	if (n <= 0 || n > 100000)
		return a;
	argv = ecalloc((size_t)n + 1, sizeof *argv);
	argv[0] = "MGET";
	for (i = 0; i < n; i++)
		argv[i + 1] = easprintf(LG_PREFIX "gpu:%d", i);
	y = rd_cmdv(l->rd, n + 1, argv, NULL);
	for (i = 0; i < n; i++) {
		free((char *)argv[i + 1]);
		if (y->type == REDIS_REPLY_ARRAY && (size_t)i < y->elements &&
			y->element[i]->type == REDIS_REPLY_STRING)
			json_array_append_new(a,
				json_stringn(y->element[i]->str,
					y->element[i]->len));
		else
			json_array_append_new(a, json_null());
	}
	freeReplyObject(y);
	free(argv);
	return a;
}

static void
changed(const char *key)
{
	json_t *r = json_object();

	json_object_set_new(r, "kind", json_string("changed"));
	json_object_set_new(r, "key", json_string(key));
	nd_write(r);
	json_decref(r);
}

int
lg_watch(struct lg *l, struct rd *sub, double secs)
{
	double end = secs >= 0 ? clock_mono() + secs : -1, left;
	json_t *before = sub ? NULL : snapshot(l), *now, *keys;
	struct pollfd pfd;
	size_t i, n;
	char key[64];
	int ms;

	for (;;) {
		left = end >= 0 ? end - clock_mono() : 2;
		if (left <= 0)
			break;
		ms = (int)((left < 2 ? left : 2) * 1000) + 1;
		if (sub) {
			pfd.fd = rd_fd(sub);
			pfd.events = POLLIN;
			if (poll(&pfd, 1, ms) > 0) {
				keys = json_array();
				lg_drain(sub, keys);
				for (i = 0; i < json_array_size(keys); i++)
					changed(json_string_value(
						json_array_get(keys, i)));
				json_decref(keys);
			}
			continue;
		}
		poll(NULL, 0, ms);
		now = snapshot(l);
		n = json_array_size(now) > json_array_size(before)
			? json_array_size(now)
			: json_array_size(before);
		for (i = 0; i < n; i++) {
			json_t *a = json_array_get(before, i),
			       *b = json_array_get(now, i);

			if ((a || b) && !(a && b && json_equal(a, b))) {
				snprintf(key, sizeof key, LG_PREFIX "gpu:%zu",
					i);
				changed(key);
			}
		}
		json_decref(before);
		before = now;
	}
	json_decref(before);
	return HAZ_OK;
}
