/* ledger_mark: gpu records marked with who holds their GPU on the host,
 * batch by batch, and again when the ledger changes. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "jbuf.h"
#include "ledger.h"
#include "nd.h"

/* A batch of input records, as read, and what was last written of it. */
struct batch {
	json_t *recs;     /* the records, the flush record not among them */
	int flushed;      /* it ended with a flush record */
	char *written;    /* the marked records last written, or NULL */
	long long wakeup; /* unix time a hold turns stale, 0 for none */
};

static int
is_kind(const json_t *rec, const char *kind)
{
	const char *k = json_string_value(json_object_get(rec, "kind"));

	return k && strcmp(k, kind) == 0;
}

/* gpu_index returns a gpu record's index, or -1 for other records. */
static long long
gpu_index(const json_t *rec)
{
	const json_t *i = json_object_get(rec, "index");

	if (!is_kind(rec, "gpu") || !json_is_integer(i) ||
		json_integer_value(i) < 0 ||
		json_integer_value(i) > LG_MAX_GPU_ID)
		return -1;
	return json_integer_value(i);
}

static int
is_whole_gpu(const json_t *rec)
{
	const json_t *m = json_object_get(rec, "mig");

	return !m || json_is_null(m);
}

/* held_of returns the held member for a state, or NULL when the GPU is
 * free to publish; unreserved: in use without a reservation. */
static json_t *
held_of(const struct lg_state *st, int unreserved)
{
	json_t *h;

	if (st->kind == LG_HELD && st->active && strcmp(st->type, "k8s") == 0)
		return NULL;
	if (!lg_holds(st) && !unreserved)
		return NULL;
	h = json_object();
	if (st->kind == LG_BAD || !lg_holds(st)) {
		json_object_set_new(h, "user", json_null());
		json_object_set_new(h, "actual_user", json_null());
		json_object_set_new(h, "type",
			json_string(
				st->kind == LG_BAD ? "error" : "unreserved"));
		json_object_set_new(h, "since", json_null());
		json_object_set_new(h, "expires", json_null());
		json_object_set_new(h, "note", json_null());
		return h;
	}
	json_object_set_new(h, "user", json_string(st->user));
	json_object_set_new(h, "actual_user", lg_str_or_null(st->actual_user));
	json_object_set_new(h, "type", json_string(st->type));
	json_object_set_new(h, "since", lg_time_json(&st->start));
	json_object_set_new(h, "expires", lg_time_json(&st->expiry));
	json_object_set_new(h, "note", lg_str_or_null(st->note));
	return h;
}

/* read_states reads the states of the GPUs the batch names (one MGET);
 * sts[i] is GPU i's, for i < *n. */
static struct lg_state *
read_states(struct lg *l, const struct batch *b, long long now, int *n)
{
	const char **argv;
	struct lg_state *sts;
	redisReply *y, *e;
	long long top = -1, i;
	size_t k;

	for (k = 0; k < json_array_size(b->recs); k++)
		if (gpu_index(json_array_get(b->recs, k)) > top)
			top = gpu_index(json_array_get(b->recs, k));
	*n = (int)(top + 1);
	sts = ecalloc((size_t)*n + 1, sizeof *sts);
	if (!*n)
		return sts;
	argv = ecalloc((size_t)*n + 1, sizeof *argv);
	argv[0] = "MGET";
	for (i = 0; i < *n; i++)
		argv[i + 1] = easprintf(LG_PREFIX "gpu:%lld", i);
	y = rd_cmdv(l->rd, *n + 1, argv, NULL);
	if (y->type != REDIS_REPLY_ARRAY || y->elements != (size_t)*n)
		rd_fail(l->rd, y, HAZ_TEMP, "mget");
	for (i = 0; i < *n; i++) {
		e = y->element[i];
		lg_state_parse(&sts[i], (int)i,
			e->type == REDIS_REPLY_STRING ? e->str : NULL,
			e->type == REDIS_REPLY_STRING ? e->len : 0, now);
		free((char *)argv[i + 1]);
	}
	freeReplyObject(y);
	free(argv);
	return sts;
}

/* mark sets or removes the held member of every gpu record of b, and
 * notes when the next hold turns stale. Returns the marked records as
 * text, one a line, the flush record last when b has one. */
static char *
mark(struct lg *l, struct batch *b, long long threshold)
{
	struct lg_clock now;
	struct lg_state *sts, *st;
	long long *mem, i, t;
	struct jb out = {0};
	json_t *rec, *h;
	char *text;
	size_t k;
	int n;

	lg_clock(&now);
	sts = read_states(l, b, now.sec, &n);
	mem = ecalloc((size_t)n + 1, sizeof *mem);
	json_array_foreach(b->recs, k, rec) {
		i = gpu_index(rec);
		if (i >= 0 && is_whole_gpu(rec) &&
			json_is_integer(
				json_object_get(rec, "memory_used_mib")))
			mem[i] = json_integer_value(
				json_object_get(rec, "memory_used_mib"));
	}
	b->wakeup = 0;
	json_array_foreach(b->recs, k, rec) {
		i = gpu_index(rec);
		if (i < 0) {
			jb_json(&out, rec);
			jb_raw(&out, "\n");
			continue;
		}
		st = &sts[i];
		if (st->kind == LG_BAD)
			lg_bad_warning((int)i, st->why);
		h = held_of(st, mem[i] > threshold);
		if (h)
			json_object_set_new(rec, "held", h);
		else
			json_object_del(rec, "held");
		t = 0;
		if (st->kind == LG_HELD && st->active && st->heartbeat.set &&
			strcmp(st->type, "run") == 0)
			t = st->heartbeat.sec + LG_RUN_TIMEOUT + 1;
		else if (st->kind == LG_HELD && st->active && st->expiry.set)
			t = st->expiry.sec + 1;
		if (t && (!b->wakeup || t < b->wakeup))
			b->wakeup = t;
		jb_json(&out, rec);
		jb_raw(&out, "\n");
	}
	if (b->flushed)
		jb_raw(&out, "{\"kind\":\"flush\"}\n");
	lg_states_free(sts, n);
	free(mem);
	text = emalloc(out.len + 1);
	memcpy(text, out.buf, out.len);
	text[out.len] = '\0';
	jb_free(&out);
	return text;
}

/* emit marks b and writes it when watching is off or its text differs
 * from what was written last. */
static void
emit(struct lg *l, struct batch *b, long long threshold, int always)
{
	char *text = mark(l, b, threshold);

	if (always || !b->written || strcmp(text, b->written) != 0) {
		if (fputs(text, stdout) == EOF || fflush(stdout) == EOF)
			err_die(HAZ_FAIL, "<stdout>: write error:");
		free(b->written);
		b->written = text;
	} else {
		free(text);
	}
}

/* buffered says whether r holds a whole line not yet read. */
static int
buffered(const struct nd_reader *r)
{
	return r->line && r->pos < r->end &&
		memchr(r->line + r->pos, '\n', r->end - r->pos);
}

int
lg_mark(struct lg *l, struct rd *sub, int watch, long long threshold)
{
	struct batch cur = {0}, last = {0};
	struct nd_reader r;
	struct pollfd pfd[2];
	struct lg_clock now;
	json_t *rec;
	int got, ms, status = HAZ_OK;

	if (nd_open(&r, "-", 0) < 0)
		return HAZ_FAIL;
	cur.recs = json_array();
	for (;;) {
		if (watch && last.recs && !buffered(&r)) {
			pfd[0].fd = r.fd;
			pfd[0].events = POLLIN;
			pfd[1].fd = sub ? rd_fd(sub) : -1;
			pfd[1].events = POLLIN;
			ms = sub ? -1 : 2000;
			lg_clock(&now);
			if (last.wakeup) {
				long long w = (last.wakeup - now.sec) * 1000;

				if (w < 0)
					w = 0;
				if (ms < 0 || w < ms)
					ms = (int)w;
			}
			if (poll(pfd, 2, ms) < 0)
				continue;
			if (pfd[1].revents)
				lg_drain(sub, NULL);
			if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR))) {
				emit(l, &last, threshold, 0);
				continue;
			}
		}
		got = nd_read(&r, &rec);
		if (got == 0)
			break;
		if (got < 0) {
			status = HAZ_FAIL;
			continue;
		}
		if (!is_kind(rec, "flush")) {
			json_array_append_new(cur.recs, rec);
			continue;
		}
		json_decref(rec);
		cur.flushed = 1;
		emit(l, &cur, threshold, 1);
		json_decref(last.recs);
		free(last.written);
		last = cur;
		memset(&cur, 0, sizeof cur);
		cur.recs = json_array();
	}
	if (json_array_size(cur.recs))
		emit(l, &cur, threshold, 1);
	json_decref(cur.recs);
	free(cur.written);
	json_decref(last.recs);
	free(last.written);
	nd_close(&r);
	return status || r.failed ? HAZ_FAIL : HAZ_OK;
}
