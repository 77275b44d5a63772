/* sqe: the engine's state, its workloads, the strategy ConfigMap, and
 * the writes it gives out and the answers to them (see sqe.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "jscan.h"
#include "nd.h"
#include "sched_index.h"
#include "sqe_int.h"
#include "wl.h"

const char *const sqe_feed_name[SQE_NFEEDS] = {"gpuworkloads", "nodes", "jobs",
	"configmaps", "pods"};

/* ---- helpers ---- */

const char *
sqe_str_at(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return json_string_value(b ? json_object_get(v, b) : v);
}

const char *
sqe_annotation(const json_t *o, const char *key)
{
	return json_string_value(
		json_object_get(json_object_get(json_object_get(o, "metadata"),
					"annotations"),
			key));
}

/* collect keeps an answer of the placement engine, one per line. */
static void
collect(void *arg, const char *rec, size_t len)
{
	struct sqe *e = arg;

	if (e->alen + len + 2 > e->acap) {
		e->acap = (e->alen + len + 2) * 2;
		e->answers = erealloc(e->answers, e->acap);
	}
	memcpy(e->answers + e->alen, rec, len);
	e->alen += len;
	e->answers[e->alen++] = '\n';
	e->answers[e->alen] = '\0';
}

void
sqe_feed(struct sp_state *st, const char *rec, size_t len, const char *what)
{
	struct nd_reader r = {0};
	char *copy = emalloc(len + 1);

	memcpy(copy, rec, len);
	copy[len] = '\0';
	r.name = (char *)what;
	r.recno = 1;
	if (js_parse(&st->doc, copy, len) < 0)
		err_warn("internal error: %s: invalid record at column %d: %s",
			what, st->doc.errcol, st->doc.err);
	else
		sp_feed(st, &r, &st->doc);
	free(copy);
}

void
sqe_release(struct sqe *e, const char *uid)
{
	if (sp_release(&e->live, uid) == 0) {
		e->dirty = 1;
		e->c.changed = 1;
	}
}

void
sqe_set_state(struct sqe *e, struct sqe_wl *w, int s)
{
	if (s == W_QUEUED)
		hm_put(e->queue, w->uid, w);
	else if (w->state == W_QUEUED)
		hm_take(e->queue, w->uid);
	w->state = s;
	sqe_wl_recount(e, w, 1);
}

int
sqe_wl_gauges(const struct sqe_wl *w)
{
	const char *ph = sqe_str_at(json_object_get(w->obj, "status"), "phase",
		NULL);
	int g = 0;

	if (!ph || !strcmp(ph, "Pending"))
		g |= G_PENDING;
	else if (!strcmp(ph, "Running"))
		g |= G_RUNNING;
	if (w->state == W_QUEUED || w->state == W_WAIT)
		g |= G_QUEUED;
	return g;
}

void
sqe_wl_recount(struct sqe *e, struct sqe_wl *w, int sign)
{
	int now = sign > 0 ? sqe_wl_gauges(w) : 0, b;

	for (b = 0; b < 3; b++) {
		e->nwl[b] -= (size_t) !!(w->counted & (1 << b));
		e->nwl[b] += (size_t) !!(now & (1 << b));
	}
	w->counted = now;
}

void
sqe_wait_until(struct sqe *e, struct sqe_wl *w, double due)
{
	w->due = due;
	if (w->due < e->next_due)
		e->next_due = w->due;
}

/* ---- new, free, time ---- */

static void
wl_free_(void *p)
{
	struct sqe_wl *w = p;

	if (!w)
		return;
	free(w->uid);
	free(w->key);
	free(w->req);
	json_decref(w->obj);
	json_decref(w->want);
	free(w->job);
	free(w->tmpl);
	free(w);
}

static void
sig_free(void *p)
{
	struct sqe_sig *g = p;

	if (!g)
		return;
	free(g->label);
	json_decref(g->cons);
	free(g);
}

static void
pending_free(void *p)
{
	struct sqe_pending *w = p;

	if (!w)
		return;
	free(w->uid);
	free(w->strategy);
	free(w);
}

struct sqe *
sqe_new(const struct sqe_opts *o)
{
	struct sqe *e = ecalloc(1, sizeof *e);

	e->o = *o;
	e->rng = o->seed;
	e->wls = hm_new(wl_free_);
	e->queue = hm_new(NULL);
	e->jobs = hm_new(sqe_job_free);
	e->nodes = hm_new(sqe_node_free);
	e->sigs = hm_new(sig_free);
	e->job_owner = hm_new(free);
	e->inflight = hm_new(free);
	e->pending = hm_new(pending_free);
	e->c.scheduled = hm_new(free);
	e->next_due = HUGE_VAL;
	sp_init(&e->live, &spx_ops, o->strategy, 1);
	sp_init(&e->cap, &spx_ops, o->strategy, 1);
	e->live.emit = e->cap.emit = collect;
	e->live.emit_arg = e->cap.emit_arg = e;
	return e;
}

void
sqe_free(struct sqe *e)
{
	if (!e)
		return;
	hm_free(e->jobs); /* before job_owner: a Job takes its uid out */
	hm_free(e->job_owner);
	hm_free(e->queue);
	hm_free(e->wls);
	hm_free(e->nodes);
	hm_free(e->sigs);
	hm_free(e->inflight);
	hm_free(e->pending);
	hm_free(e->c.scheduled);
	sp_free(&e->live);
	sp_free(&e->cap);
	jb_free(&e->scratch);
	free(e->cm_strategy);
	free(e->answers);
	free(e);
}

void
sqe_set_time(struct sqe *e, double mono, double wall)
{
	e->mono = mono;
	e->wall = wall;
}

/* ---- writes and their answers ---- */

/* give numbers a write for uid, notes it as unanswered, and emits it. */
static void
give(struct sqe *e, json_t *rec, const char *uid, int verb, const char *strat)
{
	struct sqe_pending *p = ecalloc(1, sizeof *p);
	char key[24];
	long *n;

	snprintf(key, sizeof key, "%ld", ++e->nwrites);
	p->uid = estrdup(uid);
	p->verb = verb;
	p->strategy = strat ? estrdup(strat) : NULL;
	hm_put(e->pending, key, p);
	e->busy++;
	if (!(n = hm_get(e->inflight, uid))) {
		n = ecalloc(1, sizeof *n);
		hm_put(e->inflight, uid, n);
	}
	(*n)++;
	json_object_set_new(rec, "write", json_integer(e->nwrites));
	json_object_set_new(rec, "uid", json_string(uid));
	e->o.emit(e->o.arg, rec);
}

void
sqe_write_apply(struct sqe *e, const char *uid, json_t *tmpl, json_t *job,
	json_t *status)
{
	json_t *rec = json_object();

	json_object_set_new(rec, "write", json_integer(0));
	json_object_set_new(rec, "verb", json_string("apply"));
	json_object_set_new(rec, "uid", json_string(uid));
	if (tmpl)
		json_object_set_new(rec, "template", tmpl);
	if (job)
		json_object_set(rec, "job", job);
	if (status)
		json_object_set_new(rec, "status", status);
	give(e, rec, uid, SQE_APPLY,
		job ? sqe_annotation(job, "canhazgpu.dev/strategy") : NULL);
	json_decref(job);
}

void
sqe_write_delete(struct sqe *e, const char *uid, const json_t *job)
{
	const json_t *md = json_object_get(job, "metadata");
	json_t *rec = json_pack("{s:i,s:s,s:s,s:{s:s,s:s,s:{s:O,s:O}},s:s}",
		"write", 0, "verb", "delete", "uid", uid, "job", "apiVersion",
		"batch/v1", "kind", "Job", "metadata", "namespace",
		json_object_get(md, "namespace"), "name",
		json_object_get(md, "name"), "propagationPolicy", "Foreground");

	give(e, rec, uid, SQE_DELETE, NULL);
}

/* flight_failed handles an apply of w's Job that failed (r). */
static void
flight_failed(struct sqe *e, struct sqe_wl *w, const struct sqe_result *r)
{
	double d;

	if (r->temporary && w->job) {
		/* the server may have the Job or not: keep its devices and
		 * write the same Job again, spending no retry */
		d = 1 << (w->again < 5 ? w->again : 5);
		w->again++;
		sqe_set_state(e, w, W_AGAIN);
		e->rng = e->rng * 6364136223846793005ULL +
			1442695040888963407ULL;
		sqe_wait_until(e, w,
			e->mono +
				d *
					(0.75 +
						(double)((e->rng >> 33) % 500) /
							1000));
		err_warn("workload %s: its Job will be written again", w->key);
		return;
	}
	/* the Job was not written: free its devices, retry */
	sqe_release(e, w->uid);
	json_decref(w->want);
	w->want = NULL;
	sqe_status_retry(e, w, r->message, "Job not written");
}

/* job_written counts the Job an apply wrote, whatever became of the
 * status after it. */
static void
job_written(struct sqe *e, struct sqe_wl *w, const char *strategy)
{
	long *n;

	if (!(n = hm_get(e->c.scheduled, strategy))) {
		n = ecalloc(1, sizeof *n);
		hm_put(e->c.scheduled, strategy, n);
	}
	(*n)++;
	e->c.changed = 1;
	if (w && w->state == W_FLIGHT) {
		sqe_set_state(e, w, W_PLACED);
		w->placed_at = e->mono;
		free(w->job);
		w->job = NULL;
		free(w->tmpl);
		w->tmpl = NULL;
	}
}

/* answered applies r to the write p of workload w (NULL: gone). */
static void
answered(struct sqe *e, const struct sqe_pending *p, struct sqe_wl *w,
	const struct sqe_result *r)
{
	if (p->verb == SQE_APPLY && p->strategy && (r->ok || r->job_written))
		job_written(e, w, p->strategy);
	if (r->ok) {
		e->c.writes_ok++;
		return;
	}
	e->c.writes_err++;
	if (r->code == 404 && !w) {
		/* its workload went first: nothing to write any more */
		if (p->verb == SQE_APPLY)
			sqe_release(e, p->uid);
		return;
	}
	if (r->temporary)
		e->temp = 1;
	else
		e->failed = 1;
	err_warn("%s", r->message ? r->message : "write failed");
	if (p->verb == SQE_APPLY && w && w->state == W_FLIGHT) {
		flight_failed(e, w, r);
	} else if (p->verb == SQE_APPLY && !w) {
		sqe_release(e, p->uid);
	} else if (w && p->verb == SQE_APPLY) {
		/* a status write failed: write it again on the next change */
		json_decref(w->want);
		w->want = NULL;
	}
}

void
sqe_result(struct sqe *e, const struct sqe_result *r)
{
	char key[24];
	struct sqe_pending *p;
	long *n;

	snprintf(key, sizeof key, "%ld", r->write);
	if (!(p = hm_take(e->pending, key)))
		return;
	e->busy--;
	if ((n = hm_get(e->inflight, p->uid)) && --*n == 0)
		hm_del(e->inflight, p->uid);
	answered(e, p, hm_get(e->wls, p->uid), r);
	pending_free(p);
}

/* ---- workloads ---- */

/* wl_first resumes what w's status says, when first seen. */
static void
wl_first(struct sqe *e, struct sqe_wl *w, const json_t *st)
{
	double next;

	w->retries = (int)json_integer_value(json_object_get(st, "retries"));
	w->prio = wl_priority(w->obj);
	next = clock_parse_rfc3339(sqe_str_at(st, "nextRetryTime", NULL));
	if (next > e->wall) {
		sqe_set_state(e, w, W_WAIT);
		sqe_wait_until(e, w, e->mono + next - e->wall);
	} else {
		sqe_set_state(e, w, W_QUEUED);
		e->dirty = 1;
	}
}

/* wl_get returns the workload of uid, made when new. */
static struct sqe_wl *
wl_get(struct sqe *e, const char *uid, const json_t *md)
{
	struct sqe_wl *w = hm_get(e->wls, uid);

	if (w)
		return w;
	w = ecalloc(1, sizeof *w);
	w->uid = estrdup(uid);
	w->key = easprintf("%s/%s", sqe_str_at(md, "namespace", NULL),
		sqe_str_at(md, "name", NULL));
	w->seq = e->seq++;
	w->fits = -1;
	w->state = -1;
	hm_put(e->wls, uid, w);
	return w;
}

/* wl_deleted forgets workload w (NULL: not known). */
static void
wl_deleted(struct sqe *e, struct sqe_wl *w)
{
	if (!w)
		return;
	if (w->state == W_FLIGHT)
		err_warn("workload %s deleted while its Job is being written; "
			 "the Job goes with it",
			w->key);
	e->c.changed = 1;
	sqe_wl_recount(e, w, -1);
	hm_take(e->queue, w->uid);
	hm_del(e->wls, w->uid);
}

/* wl_settle decides what a workload without a Job waits for. */
static void
wl_settle(struct sqe *e, struct sqe_wl *w, int changed)
{
	const json_t *st = json_object_get(w->obj, "status");
	const char *ph = sqe_str_at(st, "phase", NULL);
	char *problem;

	if (w->state == W_FLIGHT || w->state == W_AGAIN ||
		w->state == W_PLACED || w->state == W_DONE)
		return;
	if (ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"))) {
		sqe_set_state(e, w, W_DONE);
		return;
	}
	if ((problem = wl_problem(w->obj))) {
		w->retries = (int)json_integer_value(
			json_object_get(st, "retries"));
		sqe_status_fail(e, w, problem, &e->c.failed_invalid);
		free(problem);
		return;
	}
	if (w->state == -1) {
		wl_first(e, w, st);
	} else if (w->state == W_QUEUED && changed) {
		w->prio = wl_priority(w->obj);
		e->dirty = 1; /* its spec may fit now */
	}
}

static void
on_workload(struct sqe *e, char type, json_t *obj)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *uid = sqe_str_at(md, "uid", NULL);
	struct sqe_wl *w;
	struct sqe_job *j;
	long long gen;
	int changed;

	if (!uid || !sqe_str_at(md, "name", NULL) ||
		!sqe_str_at(md, "namespace", NULL))
		return;
	if (type == 'D') {
		wl_deleted(e, hm_get(e->wls, uid));
		return;
	}
	gen = json_integer_value(json_object_get(md, "generation"));
	w = wl_get(e, uid, md);
	json_decref(w->obj);
	w->obj = json_incref(obj);
	sqe_wl_recount(e, w, 1);
	sqe_status_seen(w);
	e->c.changed = 1;
	changed = gen != w->gen || !w->req;
	if (changed) {
		w->gen = gen;
		free(w->req);
		w->req = NULL;
		w->fits = -1;
		w->sig = NULL;
	}
	if ((j = hm_get(e->jobs, uid))) {
		if (w->state != W_DONE)
			sqe_set_state(e, w,
				j->phase >= P_SUCCEEDED ? W_DONE : W_PLACED);
		sqe_status_from_job(e, w, j, NULL);
		return;
	}
	wl_settle(e, w, changed);
}

/* ---- the strategy ConfigMap ---- */

static void
on_configmap(struct sqe *e, char type, json_t *obj)
{
	const char *s = type == 'D'
		? NULL
		: sqe_str_at(json_object_get(obj, "data"), "strategy", NULL);

	if (s && sp_strategy_parse(s) < 0) {
		err_warn("configmap %s/%s: unknown strategy \"%s\"; keeping "
			 "%s",
			e->o.cm_ns, e->o.cm_name, s,
			e->cm_strategy ?: sp_strategy_name(e->o.strategy));
		return;
	}
	if ((s && e->cm_strategy && !strcmp(s, e->cm_strategy)) ||
		(!s && !e->cm_strategy))
		return;
	free(e->cm_strategy);
	e->cm_strategy = s ? estrdup(s) : NULL;
	err_warn("strategy %s", s ?: sp_strategy_name(e->o.strategy));
	e->dirty = 1;
}

/* ---- events ---- */

void
sqe_event(struct sqe *e, int feed, char type, json_t *obj)
{
	switch (feed) {
	case SQE_WORKLOADS: on_workload(e, type, obj); break;
	case SQE_NODES: sqe_node_event(e, type, obj); break;
	case SQE_JOBS: sqe_job_event(e, type, obj); break;
	case SQE_CONFIGMAPS: on_configmap(e, type, obj); break;
	default: break;
	}
}

void
sqe_pod_ended(struct sqe *e, const char *job)
{
	sqe_job_pod_ended(e, job);
}

void
sqe_synced(struct sqe *e, int feed)
{
	e->synced |= 1 << feed;
	e->dirty = 1;
}

int
sqe_all_synced(const struct sqe *e)
{
	return e->synced == (1 << SQE_NFEEDS) - 1;
}

/* ---- what the caller reads ---- */

int
sqe_dirty(const struct sqe *e)
{
	return e->dirty;
}

double
sqe_next_due(const struct sqe *e)
{
	return e->next_due;
}

long
sqe_busy(const struct sqe *e)
{
	return e->busy;
}

int
sqe_exit_status(const struct sqe *e)
{
	return e->temp ? HAZ_TEMP : e->failed ? HAZ_FAIL : HAZ_OK;
}

struct sqe_counters *
sqe_counters(struct sqe *e)
{
	return &e->c;
}

/* count_devices adds the devices of the nodes that are there to g. */
static void
count_devices(const struct sqe *e, struct sqe_gauges *g)
{
	const struct sp_node *n;
	const struct sp_dev *dv;
	size_t i, j;

	for (i = 0; i < e->live.nnodes; i++) {
		n = e->live.nodes[i];
		if (!hm_get(e->nodes, n->name))
			continue;
		for (j = 0; j < n->ndevs; j++) {
			dv = n->devs[j];
			if (dv->prof == SP_NO_PROFILE)
				continue;
			g->total++;
			g->util += dv->util;
			if (dv->healthy && !dv->excl && !dv->nshared)
				g->avail++;
		}
	}
	g->util = g->total ? g->util / (double)g->total : 0;
}

void
sqe_gauges(const struct sqe *e, struct sqe_gauges *g)
{
	memset(g, 0, sizeof *g);
	count_devices(e, g);
	g->pending = e->nwl[0];
	g->running = e->nwl[1];
	g->queued = e->nwl[2];
}

const char *
sqe_rr_last(const struct sqe *e)
{
	return e->live.rr_last;
}

void
sqe_set_rr_last(struct sqe *e, const char *node)
{
	free(e->live.rr_last);
	e->live.rr_last = node ? estrdup(node) : NULL;
}
