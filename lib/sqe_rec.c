/* sqe_rec: the engine driven by records, for sched-queue -f: watch
 * events, listings, the answers to writes, the clock, the seed, passes
 * and orphan checks, one record each (see sched-queue(1), Replay). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "sqe_int.h"

/* bad says why a record is refused, into why; returns -1. */
static int
bad(char *why, size_t n, const char *text)
{
	snprintf(why, n, "%s", text);
	return -1;
}

static const char *const kinds[SQE_NFEEDS] = {"GPUWorkload", "Node", "Job",
	"ConfigMap", "Pod"};

/* pod_event passes on a pod that ended, as the tool's watch does. */
static void
pod_event(struct sqe *e, const json_t *pod)
{
	const char *phase = sqe_str_at(json_object_get(pod, "status"), "phase",
			   NULL),
		   *job = json_string_value(
			   json_object_get(json_object_get(json_object_get(pod,
								   "metadata"),
						   "labels"),
				   "batch.kubernetes.io/controller-uid"));

	if (job && phase &&
		(!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
		sqe_pod_ended(e, job);
}

/* watch_event applies {"type":..., "object":...}. */
static int
watch_event(struct sqe *e, const json_t *rec, char *why, size_t n)
{
	const char *type = json_string_value(json_object_get(rec, "type"));
	json_t *obj = json_object_get(rec, "object");
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const json_t *md = json_object_get(obj, "metadata");
	json_t *kept;
	char *text;
	int f;

	if (!type ||
		(strcmp(type, "ADDED") && strcmp(type, "MODIFIED") &&
			strcmp(type, "DELETED")))
		return bad(why, n, "type: not ADDED, MODIFIED or DELETED");
	for (f = 0; f < SQE_NFEEDS && kind && strcmp(kind, kinds[f]); f++)
		;
	if (!kind || f == SQE_NFEEDS)
		return bad(why, n,
			"object.kind: not GPUWorkload, Node, Job, ConfigMap "
			"or Pod");
	if (f == SQE_CONFIGMAPS &&
		(!sqe_str_at(md, "namespace", NULL) ||
			strcmp(sqe_str_at(md, "namespace", NULL), e->o.cm_ns) ||
			!sqe_str_at(md, "name", NULL) ||
			strcmp(sqe_str_at(md, "name", NULL), e->o.cm_name)))
		return bad(why, n, "a ConfigMap that -m does not name");
	if (f == SQE_PODS) {
		pod_event(e, obj);
		return 0;
	}
	/* what a watch hands on: the object as far as the engine reads it */
	if (!(text = json_dumps(obj, JSON_COMPACT)) ||
		!(kept = sqe_load(f, text, strlen(text), NULL))) {
		free(text);
		return bad(why, n, "object: cannot be read back");
	}
	free(text);
	sqe_event(e, f, type[0], kept);
	json_decref(kept);
	return 0;
}

/* synced applies {"synced": FEED or "all"}. */
static int
synced(struct sqe *e, const json_t *v, char *why, size_t n)
{
	const char *s = json_string_value(v);
	int f, all = s && !strcmp(s, "all"), known = 0;

	for (f = 0; s && f < SQE_NFEEDS; f++)
		known |= !strcmp(s, sqe_feed_name[f]);
	if (!all && !known)
		return bad(why, n,
			"synced: not gpuworkloads, nodes, jobs, configmaps, "
			"pods or all");
	for (f = 0; f < SQE_NFEEDS; f++)
		if (all || !strcmp(s, sqe_feed_name[f]))
			sqe_synced(e, f);
	return 0;
}

/* result applies {"result": N, "ok": ..., ...}. */
static int
result(struct sqe *e, const json_t *rec, char *why, size_t n)
{
	struct sqe_result r = {0};
	const json_t *ok = json_object_get(rec, "ok");

	if (!json_is_integer(json_object_get(rec, "result")))
		return bad(why, n, "result: not a write's number");
	if (!json_is_boolean(ok))
		return bad(why, n, "ok: not true or false");
	r.write = (long)json_integer_value(json_object_get(rec, "result"));
	r.ok = json_is_true(ok);
	r.job_written = json_is_true(json_object_get(rec, "job_written"));
	r.code = (int)json_integer_value(json_object_get(rec, "code"));
	r.temporary = json_is_true(json_object_get(rec, "temporary"));
	r.message = json_string_value(json_object_get(rec, "message"));
	if (!r.ok && !r.message)
		return bad(why, n, "message: a failed write says what failed");
	sqe_result(e, &r);
	return 0;
}

/* clock applies {"time": RFC3339} or {"advance": SECONDS}: in a replay
 * the monotonic clock is the wall clock. */
static int
clock_rec(struct sqe *e, const json_t *rec, char *why, size_t n)
{
	const json_t *t = json_object_get(rec, "time"),
		     *a = json_object_get(rec, "advance");
	double s;

	if (t) {
		s = clock_parse_rfc3339(json_string_value(t));
		if (s <= 0)
			return bad(why, n,
				"time: not YYYY-MM-DDTHH:MM:SSZ after 1970");
		sqe_set_time(e, s, s);
		return 0;
	}
	if (!json_is_number(a) || !(json_number_value(a) >= 0) ||
		json_number_value(a) > 1e9)
		return bad(why, n, "advance: not a number of seconds >= 0");
	s = json_number_value(a);
	sqe_set_time(e, e->mono + s, e->wall + s);
	return 0;
}

/* check_counts recounts the workload gauges the engine keeps as each
 * workload changes (sqe_wl_recount): a replay after each pass proves them
 * against the whole. */
static void
check_counts(struct sqe *e)
{
	size_t want[3] = {0}, pos = 0;
	const char *k;
	void *v;
	int g, b;

	while (hm_next(e->wls, &pos, &k, &v))
		for (g = sqe_wl_gauges(v), b = 0; b < 3; b++)
			want[b] += (size_t) !!(g & (1 << b));
	if (memcmp(want, e->nwl, sizeof want))
		err_die(HAZ_FAIL,
			"internal error: workloads pending/running/queued "
			"kept as %zu/%zu/%zu, counted %zu/%zu/%zu",
			e->nwl[0], e->nwl[1], e->nwl[2], want[0], want[1],
			want[2]);
}

int
sqe_rec_apply(struct sqe *e, const json_t *rec, char *why, size_t n)
{
	const json_t *v;

	if (!json_is_object(rec))
		return bad(why, n, "not a JSON object");
	if (json_object_get(rec, "type"))
		return watch_event(e, rec, why, n);
	if ((v = json_object_get(rec, "synced")))
		return synced(e, v, why, n);
	if (json_object_get(rec, "result"))
		return result(e, rec, why, n);
	if (json_object_get(rec, "time") || json_object_get(rec, "advance"))
		return clock_rec(e, rec, why, n);
	if ((v = json_object_get(rec, "seed"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return bad(why, n, "seed: not a whole number >= 0");
		e->rng = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (json_object_get(rec, "pass")) {
		sqe_pass_due(e);
		sqe_pass(e);
		check_counts(e);
		return 0;
	}
	if (json_object_get(rec, "orphans")) {
		sqe_job_orphans(e);
		return 0;
	}
	return bad(why, n,
		"not a replay record: no type, synced, result, time, advance, "
		"seed, pass or orphans");
}
