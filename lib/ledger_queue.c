/* ledger_queue: waiting in canhazgpu's FCFS queue, and listing it. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "err.h"
#include "ledger.h"
#include "nd.h"

static volatile sig_atomic_t stop_signal;

static void
on_stop(int sig)
{
	stop_signal = sig;
}

/* new_uuid writes a random (version 4) UUID. */
static void
new_uuid(char out[37])
{
	char h[33];

	lg_random_hex(h, 16);
	h[12] = '4';
	h[16] = "89ab"[strtol((char[]){h[16], 0}, NULL, 16) & 3];
	snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12, h + 16,
		h + 20);
}

/* enqueue adds entry (taken) under id; returns its position. */
static long long
enqueue(struct lg *l, json_t *entry, const char *id)
{
	struct lg_clock c;
	json_t *p = json_object(), *res;
	char score[40];
	long long pos;

	lg_clock(&c);
	snprintf(score, sizeof score, "%.0f",
		(double)c.sec * 1e9 + (double)c.nsec);
	json_object_set_new(entry, "id", json_string(id));
	json_object_set_new(p, "entry", entry);
	json_object_set_new(p, "score", json_string(score));
	res = lg_run(l, LG_QUEUE_ADD, p);
	pos = (long long)json_number_value(json_object_get(res, "position"));
	json_decref(res);
	return pos;
}

static json_t *
qid_params(const char *id)
{
	json_t *p = json_object();

	json_object_set_new(p, "qid", json_string(id));
	return p;
}

json_t *
lg_queue_wait(struct lg *l, json_t *entry, json_t *unreserved, double wait_s,
	struct rd *sub)
{
	double start = clock_mono(), beat = start, left;
	struct sigaction sa, old_int, old_term;
	sigset_t block, old, during;
	struct timespec ts;
	struct pollfd pfd;
	json_t *res, *p, *done = NULL;
	long long count, pos;
	char id[37];
	int sig;

	count = json_integer_value(json_object_get(entry, "requested_count"));
	new_uuid(id);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	during = old;
	sigdelset(&during, SIGINT);
	sigdelset(&during, SIGTERM);
	json_incref(entry);
	pos = enqueue(l, entry, id);
	err_warn("queued at position %lld, waiting for %lld GPU%s", pos, count,
		count == 1 ? "" : "s");
	for (;;) {
		p = qid_params(id);
		json_object_set(p, "unreserved", unreserved);
		res = lg_run(l, LG_QUEUE_TRY, p);
		if ((done = json_object_get(res, "done"))) {
			json_incref(done);
			json_decref(res);
			break;
		}
		if (json_is_true(json_object_get(res, "gone"))) {
			err_warn("the queue entry %s was dropped as stale; "
				 "queueing again",
				id);
			json_incref(entry);
			enqueue(l, entry, id);
		}
		json_decref(res);
		left = wait_s >= 0 ? start + wait_s - clock_mono() : 2;
		if (left <= 0)
			break;
		if (clock_mono() - beat >= 30) {
			res = lg_run(l, LG_QUEUE_HEARTBEAT, qid_params(id));
			json_decref(res);
			beat = clock_mono();
		}
		left = left < 2 ? left : 2;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		pfd.fd = sub ? rd_fd(sub) : -1;
		pfd.events = POLLIN;
		if (ppoll(&pfd, 1, &ts, &during) > 0 && sub)
			lg_drain(sub, NULL);
		if (stop_signal)
			break;
	}
	sig = stop_signal;
	if (!done) {
		res = lg_run(l, LG_QUEUE_CANCEL, qid_params(id));
		json_decref(res);
	}
	json_decref(entry);
	json_decref(unreserved);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (sig && !done) {
		fflush(stdout);
		signal(sig, SIG_DFL);
		raise(sig);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return done;
}

/* time_member reads member k of QueueEntry e (under key) as a time into
 * *t; one that is none is named on stderr and read as unset. Returns 0,
 * or -1 when it was named. */
static int
time_member(const json_t *e, const char *k, const char *key, struct lg_time *t)
{
	const json_t *v = json_object_get(e, k);

	if (!lg_time_parse(v, t))
		return 0;
	err_warn("%s: %s: %s (left as it is)", key, k,
		json_is_number(v) ? "a number out of the range of times"
				  : "not a time");
	return -1;
}

/* wait_member reads e's wait_timeout, a time as canhazgpu writes it, into
 * *t; a number (the wait in nanoseconds that earlier versions wrote) or
 * anything else that is no time is named on stderr and read as unset.
 * Returns 0, or -1 when it was named. */
static int
wait_member(const json_t *e, const char *key, struct lg_time *t)
{
	const json_t *v = json_object_get(e, "wait_timeout");

	memset(t, 0, sizeof *t);
	if (json_is_number(v)) {
		err_warn("%s: wait_timeout: a number (a wait in nanoseconds, "
			 "as written before), not a time (left as it is)",
			key);
		return -1;
	}
	return time_member(e, "wait_timeout", key, t);
}

/* half_written names on stderr the members every QueueEntry has that e
 * lacks (one written by hand, or cut short). Returns 0, or -1 when some
 * were named. */
static int
half_written(const json_t *e, const char *key)
{
	static const char *const need[] = {"id", "user", "actual_user",
		"requested_count", "allocated_gpus", "reservation_type",
		"enqueue_time", "last_heartbeat"};
	char missing[160] = "";
	size_t i;

	for (i = 0; i < sizeof need / sizeof need[0]; i++)
		if (!json_object_get(e, need[i]))
			snprintf(missing + strlen(missing),
				sizeof missing - strlen(missing), "%s%s",
				*missing ? ", " : "", need[i]);
	if (!*missing)
		return 0;
	err_warn("%s: %s: missing (left as it is)", key, missing);
	return -1;
}

/* entry_record turns a QueueEntry (e, read from key) at position pos
 * into a queue-entry record, with the entry itself as member entry when
 * raw; members it lacks are named, a time it cannot read is named and
 * null. *bad is set when something was named. */
static json_t *
entry_record(json_t *e, const char *key, long long pos, const char *id,
	long long now, int raw, int *bad)
{
	json_t *r, *ids, *v;
	struct lg_time enq, hb, wt;

	*bad |= half_written(e, key) |
		time_member(e, "enqueue_time", key, &enq) |
		time_member(e, "last_heartbeat", key, &hb) |
		wait_member(e, key, &wt);
	r = json_object();
	json_object_set_new(r, "kind", json_string("queue-entry"));
	json_object_set_new(r, "position", json_integer(pos));
	/* an id that is not UTF-8 (written by hand) is shown cleaned */
	if (!(v = json_string(id))) {
		char *c = estrdup(id);

		v = json_string(err_clean(c));
		free(c);
	}
	json_object_set_new(r, "id", v);
	json_object_set_new(r, "user",
		lg_copy_or_null(json_object_get(e, "user")));
	json_object_set_new(r, "actual_user",
		lg_copy_or_null(json_object_get(e, "actual_user")));
	json_object_set_new(r, "requested",
		lg_copy_or_null(json_object_get(e, "requested_count")));
	ids = json_object_get(e, "requested_ids");
	json_object_set_new(r, "requested_ids",
		json_array_size(ids) ? json_deep_copy(ids) : json_null());
	ids = json_object_get(e, "allocated_gpus");
	json_object_set_new(r, "allocated",
		json_is_array(ids) ? json_deep_copy(ids) : json_array());
	json_object_set_new(r, "type",
		lg_copy_or_null(json_object_get(e, "reservation_type")));
	json_object_set_new(r, "enqueued", lg_time_json(&enq));
	json_object_set_new(r, "heartbeat", lg_time_json(&hb));
	json_object_set_new(r, "waiting_s",
		enq.set ? json_integer(now - enq.sec) : json_null());
	json_object_set_new(r, "wait_timeout", lg_time_json(&wt));
	if (raw)
		json_object_set(r, "entry", e);
	return r;
}

int
lg_queue_list(struct lg *l, int raw)
{
	redisReply *ids, *y;
	struct lg_clock now;
	json_error_t jerr;
	json_t *r, *e;
	char *key;
	size_t i;
	int bad = 0;

	lg_clock(&now);
	ids = rd_cmd(l->rd, "ZRANGE " LG_PREFIX "queue 0 -1");
	if (ids->type != REDIS_REPLY_ARRAY)
		rd_fail(l->rd, ids, HAZ_FAIL, "zrange " LG_PREFIX "queue");
	for (i = 0; i < ids->elements; i++) {
		key = easprintf(LG_PREFIX "queue:entry:%s",
			ids->element[i]->str);
		err_clean(key);
		y = rd_cmd(l->rd, "GET " LG_PREFIX "queue:entry:%b",
			ids->element[i]->str, ids->element[i]->len);
		e = y->type == REDIS_REPLY_STRING
			? json_loadb(y->str, y->len, 0, &jerr)
			: NULL;
		if (y->type != REDIS_REPLY_STRING) {
			err_warn("%s: missing (left as it is)", key);
			bad = 1;
		} else if (!json_is_object(e)) {
			err_warn("%s: %s (left as it is)", key,
				e ? "not a JSON object" : "not JSON");
			bad = 1;
		} else {
			r = entry_record(e, key, (long long)i + 1,
				ids->element[i]->str, now.sec, raw, &bad);
			nd_write(r);
			json_decref(r);
		}
		json_decref(e);
		freeReplyObject(y);
		free(key);
	}
	freeReplyObject(ids);
	return bad ? HAZ_FAIL : HAZ_OK;
}
