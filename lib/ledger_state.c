/* ledger_state: canhazgpu:gpu:<id> values read by the scripts' rules
 * (lua_lib's sload), and the records that show them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jload.h"
#include "ledger.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static const char *const str_members[] = {"user", "actual_user", "type", "note",
	"partial_queue_id", "claim_uid"};
static const char *const time_members[] = {"start_time", "last_heartbeat",
	"expiry_time", "last_released"};

/* bad marks st unreadable for why (a format taking one string). */
static void
bad(struct lg_state *st, const char *fmt, const char *arg)
{
	st->kind = LG_BAD;
	st->why = easprintf(fmt, arg);
}

void
lg_state_parse(struct lg_state *st, int gpu, const char *raw, size_t len,
	long long now)
{
	char **strs[6];
	struct lg_time *times[4];
	json_error_t jerr;
	const char *v;
	json_t *j, *m;
	size_t i;

	memset(st, 0, sizeof *st);
	st->gpu = gpu;
	st->kind = LG_FREE;
	if (!raw)
		return;
	if ((v = lg_value_check(raw, len))) {
		bad(st, "%s", v);
		return;
	}
	j = jl_loadb(raw, len, JSON_DECODE_ANY, &jerr);
	if (!j) {
		bad(st, "%s", "not JSON");
		return;
	}
	if (!json_is_object(j)) {
		bad(st, "%s", "not a JSON object");
		json_decref(j);
		return;
	}
	strs[0] = &st->user, strs[1] = &st->actual_user, strs[2] = &st->type;
	strs[3] = &st->note, strs[4] = &st->queue_id, strs[5] = &st->claim_uid;
	for (i = 0; i < 6; i++) {
		m = json_object_get(j, str_members[i]);
		if (!m || json_is_null(m))
			continue;
		if (!json_is_string(m)) {
			bad(st, "%s is not a string", str_members[i]);
			goto out;
		}
		if (*json_string_value(m))
			*strs[i] = estrdup(json_string_value(m));
	}
	times[0] = &st->start, times[1] = &st->heartbeat;
	times[2] = &st->expiry, times[3] = &st->released;
	for (i = 0; i < 4; i++) {
		if (lg_time_parse(json_object_get(j, time_members[i]),
			    times[i])) {
			bad(st, "%s is not a time", time_members[i]);
			goto out;
		}
	}
	if (!st->user)
		goto out;
	st->kind = LG_HELD;
	v = st->type ? st->type : "";
	if (strcmp(v, "run") == 0)
		st->active = st->heartbeat.set &&
			now - st->heartbeat.sec <= LG_RUN_TIMEOUT &&
			st->heartbeat.sec - now <= LG_MAX_AHEAD;
	else if (strcmp(v, "manual") == 0)
		st->active = !st->expiry.set || st->expiry.sec >= now;
	else if (strcmp(v, "k8s") == 0)
		st->active = 1;
	else
		bad(st, "%s", "type is not run, manual or k8s");
out:
	json_decref(j);
}

void
lg_state_free(struct lg_state *st)
{
	free(st->user);
	free(st->actual_user);
	free(st->type);
	free(st->note);
	free(st->claim_uid);
	free(st->queue_id);
	free(st->why);
	memset(st, 0, sizeof *st);
}

int
lg_holds(const struct lg_state *st)
{
	return st->kind == LG_BAD || (st->kind == LG_HELD && st->active);
}

int
lg_gpu_count(struct lg *l)
{
	redisReply *y = rd_cmd(l->rd, "GET " LG_PREFIX "gpu_count");
	char *end, text[48];
	long n;

	if (y->type == REDIS_REPLY_NIL) {
		freeReplyObject(y);
		err_die(HAZ_FAIL,
			LG_PREFIX "gpu_count is not set; initialise the pool "
				  "with `gpu-reserve init -g N` (or canhazgpu "
				  "admin --gpus N)");
	}
	if (y->type != REDIS_REPLY_STRING)
		rd_fail(l->rd, y, HAZ_FAIL, "get " LG_PREFIX "gpu_count");
	snprintf(text, sizeof text, "%s", y->str);
	freeReplyObject(y);
	errno = 0;
	n = strtol(text, &end, 10);
	if (*end || end == text || errno || n < 0 || n > LG_MAX_GPUS)
		err_die(HAZ_FAIL,
			LG_PREFIX "gpu_count is not a number from 0 to %d: %s",
			LG_MAX_GPUS, err_clean(text));
	return (int)n;
}

struct lg_state *
lg_read_states(struct lg *l, int count, long long now)
{
	struct lg_state *sts = ecalloc((size_t)count + 1, sizeof *sts);
	const char **argv = ecalloc((size_t)count + 1, sizeof *argv);
	redisReply *y, *e;
	int i;

	if (!count) {
		free(argv);
		return sts;
	}
	argv[0] = "MGET";
	for (i = 0; i < count; i++)
		argv[i + 1] = easprintf(LG_PREFIX "gpu:%d", i);
	y = rd_cmdv(l->rd, count + 1, argv, NULL);
	if (y->type != REDIS_REPLY_ARRAY || y->elements != (size_t)count)
		rd_fail(l->rd, y, HAZ_FAIL, "mget");
	for (i = 0; i < count; i++) {
		e = y->element[i];
		lg_state_parse(&sts[i], i,
			e->type == REDIS_REPLY_STRING ? e->str : NULL,
			e->type == REDIS_REPLY_STRING ? e->len : 0, now);
		free((char *)argv[i + 1]);
	}
	freeReplyObject(y);
	free(argv);
	return sts;
}

void
lg_states_free(struct lg_state *sts, int count)
{
	int i;

	for (i = 0; i < count; i++)
		lg_state_free(&sts[i]);
	free(sts);
}

json_t *
lg_state_record(const struct lg_state *st, long long mem, int unreserved,
	json_t *(*time_json)(const struct lg_time *))
{
	int in_use = lg_holds(st);
	const char *state = st->kind == LG_BAD ? "ERROR"
		: in_use                       ? "IN_USE"
		: unreserved                   ? "UNRESERVED"
					       : "AVAILABLE";
	json_t *r = json_object();
	char *err = NULL;

	json_object_set_new(r, "kind", json_string("gpu-state"));
	json_object_set_new(r, "gpu", json_integer(st->gpu));
	json_object_set_new(r, "state", json_string(state));
	json_object_set_new(r, "user",
		lg_str_or_null(in_use ? st->user : NULL));
	json_object_set_new(r, "actual_user",
		lg_str_or_null(in_use ? st->actual_user : NULL));
	json_object_set_new(r, "type",
		lg_str_or_null(in_use ? st->type : NULL));
	json_object_set_new(r, "claim_uid",
		lg_str_or_null(in_use ? st->claim_uid : NULL));
	json_object_set_new(r, "since",
		in_use ? time_json(&st->start) : json_null());
	json_object_set_new(r, "heartbeat",
		in_use ? time_json(&st->heartbeat) : json_null());
	json_object_set_new(r, "expires",
		in_use ? time_json(&st->expiry) : json_null());
	json_object_set_new(r, "last_released", time_json(&st->released));
	json_object_set_new(r, "note",
		lg_str_or_null(in_use ? st->note : NULL));
	json_object_set_new(r, "queue_id",
		lg_str_or_null(in_use ? st->queue_id : NULL));
	json_object_set_new(r, "memory_used_mib",
		mem >= 0 ? json_integer(mem) : json_null());
	if (st->kind == LG_BAD)
		err = easprintf(LG_PREFIX "gpu:%d: %s", st->gpu, st->why);
	json_object_set_new(r, "error", lg_str_or_null(err));
	free(err);
	return r;
}

json_t *
lg_reservation(const char *op, const json_t *info)
{
	static const char *const strs[] = {"user", "actual_user", "type",
		"claim_uid"};
	json_t *r = json_object(), *v;
	size_t i;

	json_object_set_new(r, "kind", json_string("reservation"));
	json_object_set_new(r, "op", json_string(op));
	json_object_set_new(r, "gpu",
		json_integer((json_int_t)json_number_value(
			json_object_get(info, "gpu"))));
	v = json_object_get(info, "mig");
	if (json_is_string(v))
		json_object_set_new(r, "mig", json_copy(v));
	for (i = 0; i < 4; i++) {
		v = json_object_get(info, strs[i]);
		json_object_set_new(r, strs[i],
			json_is_string(v) ? json_copy(v) : json_null());
	}
	json_object_set_new(r, "since",
		lg_secs_json(json_object_get(info, "since")));
	json_object_set_new(r, "expires",
		lg_secs_json(json_object_get(info, "expires")));
	v = json_object_get(info, "note");
	json_object_set_new(r, "note",
		json_is_string(v) ? json_copy(v) : json_null());
	return r;
}

void
lg_bad_warning(int gpu, const char *why)
{
	static unsigned char warned[4096];

	if (gpu >= 0 && gpu < 4096 * 8) {
		if (warned[gpu / 8] & (1u << (gpu % 8)))
			return;
		warned[gpu / 8] |= (unsigned char)(1u << (gpu % 8));
	}
	err_warn(LG_PREFIX "gpu:%d: %s (treated as held; left as it is)", gpu,
		why);
}

void
lg_delete_states(struct lg *l)
{
	redisReply *y, *keys, *d;
	char cursor[32] = "0";
	size_t i;

	do {
		y = rd_cmd(l->rd, "SCAN %s MATCH " LG_PREFIX "gpu:* COUNT 1000",
			cursor);
		if (y->type != REDIS_REPLY_ARRAY || y->elements != 2)
			rd_fail(l->rd, y, HAZ_FAIL, "scan");
		snprintf(cursor, sizeof cursor, "%s", y->element[0]->str);
		keys = y->element[1];
		for (i = 0; i < keys->elements; i++) {
			d = rd_cmd(l->rd, "DEL %b", keys->element[i]->str,
				keys->element[i]->len);
			freeReplyObject(d);
		}
		freeReplyObject(y);
	} while (strcmp(cursor, "0") != 0);
}
