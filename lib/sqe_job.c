/* sqe_job: the engine's Jobs: what each holds, how its phase shows in
 * its workload's status, the pods that end, the Jobs deleted, and the
 * holds no Job explains any more (see sqe_int.h). */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jload.h"
#include "sqe_int.h"

/* condition returns the condition of job of type type that is True, or
 * NULL. */
static const json_t *
condition(const json_t *job, const char *type)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(job, "status"),
				   "conditions"),
		i, c) {
		if (!strcmp(sqe_str_at(c, "type", NULL) ?: "", type) &&
			!strcmp(sqe_str_at(c, "status", NULL) ?: "", "True"))
			return c;
	}
	return NULL;
}

static int
job_phase(const json_t *job)
{
	if (condition(job, "Complete"))
		return P_SUCCEEDED;
	if (condition(job, "Failed"))
		return P_FAILED;
	return json_integer_value(
		       json_object_get(json_object_get(job, "status"),
			       "ready")) > 0
		? P_RUNNING
		: P_SCHEDULED;
}

/* job_devices returns the devices Job job names (a new array). */
static json_t *
job_devices(const json_t *job)
{
	const char *a = sqe_annotation(job, "canhazgpu.dev/devices");
	json_t *v = a ? json_loads(a, 0, NULL) : NULL;

	if (!json_is_array(v)) {
		json_decref(v);
		v = json_array();
	}
	return v;
}

/* job_obj reads the Job j keeps back into a tree (the caller's). */
static json_t *
job_obj(const struct sqe_job *j)
{
	json_t *o = jl_loadb(j->js, strlen(j->js), 0, NULL);

	if (!o)
		err_die(HAZ_FAIL, "a Job kept does not read back");
	return o;
}

/* holds_same says whether hold h holds exactly the devices devs. */
static int
holds_same(const struct sp_hold *h, const json_t *devs)
{
	const json_t *d;
	size_t i, same = 0;

	if (!h || h->ndevs != json_array_size(devs))
		return 0;
	json_array_foreach(devs, i, d)
		if (h->devs[i]->uuid && json_string_value(d) &&
			!strcmp(h->devs[i]->uuid, json_string_value(d)))
			same++;
	return same == h->ndevs;
}

/* hold_job makes the placement engine hold what unfinished Job j
 * (job, as just seen) holds. */
static void
hold_job(struct sqe *e, const struct sqe_job *j, const json_t *job)
{
	json_t *devs = job_devices(job);
	const char *ex = sqe_annotation(job, "canhazgpu.dev/exclusive"),
		   *mem = sqe_annotation(job, "canhazgpu.dev/memory-mib");
	struct jb *b = &e->scratch;
	char *what;

	if (holds_same(hm_get(e->live.holds, j->owner), devs) ||
		!json_array_size(devs)) {
		json_decref(devs);
		return;
	}
	jb_reset(b);
	jb_raw(b, "{\"kind\":\"allocation\",\"id\":");
	jb_str(b, j->owner);
	jb_raw(b, ",\"devices\":");
	jb_json(b, devs);
	if (ex && !strcmp(ex, "false")) {
		jb_raw(b, ",\"exclusive\":false,\"memory_mib\":");
		jb_int(b, mem ? atol(mem) : 0);
	}
	jb_raw(b, "}");
	what = easprintf("Job %s", sqe_str_at(job, "metadata", "name"));
	sqe_feed(&e->live, b->buf, b->len, what);
	free(what);
	json_decref(devs);
}

/* ---- the status a Job makes ---- */

static const char *const phase_name[] = {"Scheduled", "Running", "Succeeded",
	"Failed"};

static const char *
job_failure(const json_t *job)
{
	const char *m = sqe_str_at(condition(job, "Failed"), "message", NULL);

	return m ? m : "see the Job";
}

/* job_message says what phase j (job) is in, for a status. */
static char *
job_message(const struct sqe_job *j, const json_t *job, const char *name)
{
	switch (j->phase) {
	case P_SCHEDULED:
		return easprintf("Job %s created on node %s", name, j->node);
	case P_RUNNING: return easprintf("running on node %s", j->node);
	case P_SUCCEEDED: return estrdup("completed");
	default: return easprintf("Job failed: %s", job_failure(job));
	}
}

/* unchanged says whether status cur already says what j says. */
static int
unchanged(const json_t *cur, const struct sqe_job *j, const json_t *devs)
{
	const char *ph = sqe_str_at(cur, "phase", NULL),
		   *node = sqe_str_at(cur, "assignedNode", NULL);

	return ph && !strcmp(ph, phase_name[j->phase]) &&
		json_equal(json_object_get(cur, "devices"), devs) && node &&
		j->node && !strcmp(node, j->node);
}

void
sqe_status_from_job(struct sqe *e, struct sqe_wl *w, const struct sqe_job *j,
	const json_t *job)
{
	/* what was last written counts: a Job seen before the status
	 * written with it is not a change */
	const json_t *cur = w->want ? w->want
				    : json_object_get(w->obj, "status");
	json_t *s, *devs, *read = job ? NULL : job_obj(j);
	const char *name, *strat;
	char *msg, now[CLOCK_RFC3339_SIZE];

	if (read)
		job = read;
	devs = job_devices(job);
	name = sqe_str_at(job, "metadata", "name");
	strat = sqe_annotation(job, "canhazgpu.dev/strategy");
	if (unchanged(cur, j, devs)) {
		json_decref(devs);
		json_decref(read);
		return;
	}
	s = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	msg = job_message(j, job, name);
	json_object_set_new(s, "phase", json_string(phase_name[j->phase]));
	json_object_set_new(s, "assignedNode", json_string(j->node ?: ""));
	json_object_set_new(s, "devices", devs);
	json_object_set_new(s, "jobName", json_string(name ?: ""));
	json_object_set_new(s, "requestedGPUs", sqe_status_requested(w));
	if (strat)
		json_object_set_new(s, "strategy", json_string(strat));
	json_object_set_new(s, "lastTransitionTime",
		json_string(sqe_status_now(e, 0, now)));
	json_object_set_new(s, "message", json_string(msg));
	json_object_del(s, "nextRetryTime");
	free(msg);
	json_decref(read);
	if (j->phase == P_FAILED && w->state != W_DONE)
		e->c.failed_job++;
	sqe_status_set(e, w, s, NULL, NULL);
}

/* ---- events ---- */

static const char *
owner_uid(const json_t *job)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(job, "metadata"),
				   "ownerReferences"),
		i, r) {
		if (sqe_str_at(r, "kind", NULL) &&
			!strcmp(sqe_str_at(r, "kind", NULL), "GPUWorkload"))
			return sqe_str_at(r, "uid", NULL);
	}
	return NULL;
}

/* job_gone forgets the Job of workload uid (j); a workload whose Job
 * went before it finished is placed again. */
static void
job_gone(struct sqe *e, const char *uid, struct sqe_job *j)
{
	struct sqe_wl *w = hm_get(e->wls, uid);

	sqe_release(e, uid);
	if (w && (j->phase == P_SUCCEEDED || j->phase == P_FAILED)) {
		sqe_set_state(e, w, W_DONE);
	} else if (w && w->state != W_DONE) {
		err_warn("workload %s: its Job went before it finished; "
			 "placing it again",
			w->key);
		sqe_set_state(e, w, W_QUEUED);
		json_decref(w->want);
		w->want = NULL;
		e->dirty = 1;
	}
	hm_del(e->jobs, uid);
}

/* job_get returns the Job of workload uid, made when new, with obj. */
static struct sqe_job *
job_get(struct sqe *e, const char *uid, json_t *obj)
{
	struct sqe_job *j = hm_get(e->jobs, uid);
	const char *node = sqe_annotation(obj, "canhazgpu.dev/node"),
		   *own = sqe_str_at(json_object_get(obj, "metadata"), "uid",
			   NULL);

	if (!j) {
		j = ecalloc(1, sizeof *j);
		j->e = e;
		j->owner = estrdup(uid);
		hm_put(e->jobs, uid, j);
	}
	free(j->js);
	j->js = jb_dumps(obj);
	free(j->node);
	j->node = node ? estrdup(node) : NULL;
	if (!j->uid && own) {
		j->uid = estrdup(own);
		hm_put(e->job_owner, j->uid, estrdup(uid));
	}
	j->phase = job_phase(obj);
	return j;
}

void
sqe_job_event(struct sqe *e, char type, json_t *obj)
{
	const char *uid = owner_uid(obj);
	struct sqe_job *j;
	struct sqe_wl *w;

	char *own;

	if (type == 'D') {
		/* a deletion found by a relist names the Job alone (watch.h);
		 * the owner is copied: forgetting the Job frees its entry */
		if (!uid)
			uid = hm_get(e->job_owner,
				sqe_str_at(obj, "metadata", "uid") ?: "");
		if (uid && (j = hm_get(e->jobs, uid))) {
			own = estrdup(uid);
			job_gone(e, own, j);
			free(own);
		}
		return;
	}
	if (!uid)
		return;
	j = job_get(e, uid, obj);
	if (j->phase == P_SUCCEEDED || j->phase == P_FAILED || j->pod_done)
		sqe_release(e, uid);
	else
		hold_job(e, j, obj);
	if ((w = hm_get(e->wls, uid))) {
		if (w->state != W_DONE)
			sqe_set_state(e, w,
				j->phase >= P_SUCCEEDED ? W_DONE : W_PLACED);
		sqe_status_from_job(e, w, j, obj);
	}
	if (sqe_all_synced(e) && j->phase < P_SUCCEEDED && j->node &&
		!hm_get(e->nodes, j->node))
		sqe_job_delete(j, "its node is gone");
}

/* The Job (backoffLimit 0, one completion) makes no other pod. */
void
sqe_job_pod_ended(struct sqe *e, const char *job)
{
	const char *owner = hm_get(e->job_owner, job);
	struct sqe_job *j = owner ? hm_get(e->jobs, owner) : NULL;

	if (!j || j->pod_done)
		return;
	j->pod_done = 1;
	sqe_release(e, j->owner);
}

void
sqe_job_delete(struct sqe_job *j, const char *why)
{
	json_t *job;

	if (j->deleting)
		return;
	j->deleting = 1;
	job = job_obj(j);
	err_warn("Job %s/%s: %s; deleting it so that its workload is placed "
		 "again",
		sqe_str_at(json_object_get(job, "metadata"), "namespace", NULL),
		sqe_str_at(job, "metadata", "name"), why);
	sqe_write_delete(j->e, j->owner, job);
	json_decref(job);
}

void
sqe_job_free(void *p)
{
	struct sqe_job *j = p;

	if (!j)
		return;
	if (j->uid)
		hm_del(j->e->job_owner, j->uid);
	free(j->uid);
	free(j->owner);
	free(j->node);
	free(j->js);
	free(j);
}

/* ---- orphans ---- */

/* explained says whether the hold of uid has a reason to be: a Job, a
 * write in flight, or a Job written less than SQE_ORPHAN_AFTER ago. */
static int
explained(const struct sqe *e, const char *uid)
{
	const struct sqe_wl *w;

	if (hm_get(e->jobs, uid))
		return 1;
	w = hm_get(e->wls, uid);
	if (w)
		return w->state == W_FLIGHT || w->state == W_AGAIN ||
			(w->state == W_PLACED &&
				e->mono - w->placed_at < SQE_ORPHAN_AFTER);
	return hm_get(e->inflight, uid) != NULL;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A placement whose Job was written but never seen (created and deleted
 * while a watch was away) holds nothing after SQE_ORPHAN_AFTER. */
void
sqe_job_orphans(struct sqe *e)
{
	const char *k;
	void *v;
	size_t pos = 0, n = 0, i;
	char **gone = NULL;
	struct sqe_wl *w;

	while (hm_next(e->live.holds, &pos, &k, &v)) {
		if (explained(e, k))
			continue;
		gone = erealloc(gone, (n + 1) * sizeof *gone);
		gone[n++] = estrdup(k);
	}
	if (n)
		qsort(gone, n, sizeof *gone, cmp_str);
	for (i = 0; i < n; i++) {
		err_warn("%s: no Job holds its devices any more; freeing them",
			gone[i]);
		if ((w = hm_get(e->wls, gone[i])) && w->state == W_PLACED) {
			sqe_set_state(e, w, W_QUEUED);
			json_decref(w->want);
			w->want = NULL;
		}
		sqe_release(e, gone[i]);
		free(gone[i]);
	}
	free(gone);
}
