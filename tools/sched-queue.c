/* sched-queue: the controller's engine. It keeps the cluster's state from
 * watches, queues GPUWorkloads, places them with sched-pick's engine and
 * writes Jobs and status; only what changed, only when something changed.
 *
 *   sched-queue [-1v] [-S strategy] [-n namespace] [-m ns/name]
 *               [-T tolerations] [-I image] [-B seconds] [-r seconds]
 *               [-w writers] [-d statedir] [-A extended|dra]
 *               [--context name] [--kubeconfig file]
 *
 * Four watches (watch.h: resumed from the last resourceVersion, listed
 * again after 410 Gone with only the difference passed on) feed one
 * event queue: GPUWorkloads, Nodes, the Jobs labelled
 * canhazgpu.dev/workload, and the strategy ConfigMap (-m). The main
 * thread applies each event to its state: the inventory of sched-pick
 * (node and gpu records from each Node, its eligibility labels), the
 * holds (the devices of every unfinished Job, and of placements whose
 * Job is being written), and each workload's place in the queue.
 *
 * Nothing is placed until every watch has listed once: a restarted
 * controller first learns every Job, so it never places a workload twice
 * or gives a held device away. Then, whenever something changed (a new
 * workload, a finished Job, a node, the strategy, a retry due), one pass
 * feeds the waiting workloads to the engine in priority, then creation,
 * then arrival order:
 *
 *  - placed: the Job (wl.h) is applied, then the status Scheduled; the
 *    devices stay held until the Job finishes or goes. With -A dra
 *    (K8SHAZGPU_ALLOCATION=dra) the Job's pod claims its devices: a
 *    ResourceClaimTemplate named after the workload is applied before
 *    the Job (pinning the whole GPUs placed, or a MIG profile with its
 *    fallback chain as firstAvailable subrequests, lib/migchain's
 *    built-in chains where the workload names none), and the engine is
 *    asked for that chain and for exclusive devices, as a claim gets
 *    them; a template a new placement cannot change (its spec is
 *    immutable) is deleted and applied again;
 *  - unschedulable although an empty cluster could hold it: it waits,
 *    Pending, and is tried again as soon as capacity frees (no retry
 *    spent);
 *  - unschedulable even on an empty cluster (too many GPUs, a profile no
 *    node has, no node its tolerations and affinity admit): a retry of
 *    retryPolicy (backoffSeconds * 2^(n-1), at most -B, times a jitter
 *    of 0.5 to 1.5 drawn from its uid); Failed when they are spent;
 *  - a Job that cannot be written: the same retries, with the API's
 *    message.
 *
 * Writes go through -w writer threads (default 4), each workload's
 * always through the same one, in order. A Job's pods are pinned to its
 * node; a Job left on a node that is gone is deleted and its workload
 * placed again. Every -r seconds (default 600) each watch lists again
 * as a safety net; nothing else runs while nothing happens.
 *
 * The state directory (-d) gets metrics (Prometheus text, rewritten at
 * most once a second after a change), counters.json (kept across
 * restarts), ready (touched every 20 s once synced) and round-robin.
 *
 * A GPUWorkload resource the API server does not serve (the CRD not
 * installed; $K8SHAZGPU_WORKLOAD_RESOURCE names another resource, for
 * tests) is said once, naming it, and looked up again with backoff (30 s
 * at most), discovery fetched anew each time: the controller comes up by
 * itself once the CRD is applied. Nothing is watched, placed or touched
 * ready meanwhile.
 *
 * Exit: runs until TERM or INT (0). With -1: one pass after the lists,
 * then 0, 1 when a write failed, the GPUWorkload resource is not served
 * or the API server refused a list (4xx: a 403 from RBAC), 75 when the
 * API server could not be reached. 2 on bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "clock.h"
#include "err.h"
#include "hmap.h"
#include "jbuf.h"
#include "jload.h"
#include "jscan.h"
#include "kube.h"
#include "kubeconfig.h"
#include "migchain.h"
#include "nd.h"
#include "nodefit.h"
#include "sched.h"
#include "sched_index.h"
#include "watch.h"
#include "wl.h"

#define USAGE                                                                  \
	"usage: sched-queue [-1v] [-S strategy] [-n namespace] [-m ns/name] "  \
	"[-T tolerations]\n"                                                   \
	"                   [-I image] [-B seconds] [-r seconds] [-w "         \
	"writers] [-d statedir]\n"                                             \
	"                   [-A extended|dra] [--context name] "               \
	"[--kubeconfig file]\n"

enum { F_WL, F_NODE, F_JOB, F_CM, F_POD, F_N, F_RESULT = F_N };
static const char *const feed_name[F_N] = {"gpuworkloads", "nodes", "jobs",
	"configmaps", "pods"};

#define MAX_WRITERS 16
#define READY_EVERY 20.0
#define METRICS_EVERY 1.0
#define ORPHAN_AFTER 120.0 /* s a hold waits for a Job it wrote */
#define WORKLOADS "gpuworkloads.canhazgpu.dev"
#define NOT_SERVED                                                             \
	"the resource is not served (is the CRD installed? kubectl apply -k "  \
	"manifests/)"

/* ---- options ---- */

static struct {
	int once, verbose;
	int strategy;
	const char *ns;
	const char *cm_ns, *cm_name;
	json_t *tol;
	const char *image;
	double max_backoff;
	double resync;
	int writers;
	const char *statedir;
	const char *context, *kubeconfig;
	int dra;                 /* -A dra: devices by claims */
	struct migchain *chains; /* dra: the fallback chains */
} opt;

/* ---- the event queue ---- */

struct ev {
	struct ev *next;
	int feed;  /* F_*, or F_RESULT */
	char type; /* 'A'dded, 'M'odified, 'D'eleted, 'S'ynced, 'E'rror */
	json_t *obj;
	/* F_RESULT: the outcome of one task */
	char *uid;
	int what; /* T_* */
	int ok, temp, gone;
	char *msg;
	char *strategy; /* of a Job applied */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ev *head, **tail;
} evq = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, &evq.head};

static void
post(struct ev *e)
{
	pthread_mutex_lock(&evq.mu);
	e->next = NULL;
	*evq.tail = e;
	evq.tail = &e->next;
	pthread_cond_signal(&evq.cv);
	pthread_mutex_unlock(&evq.mu);
}

/* take waits until an event comes or the monotonic time until, and
 * returns every event queued (NULL when none came). */
static struct ev *
take(double until)
{
	struct timespec ts;
	struct ev *list;
	double left;

	pthread_mutex_lock(&evq.mu);
	while (!evq.head && (left = until - clock_mono()) > 0) {
		clock_gettime(CLOCK_REALTIME, &ts);
		if (left > 3600)
			left = 3600;
		ts.tv_sec += (time_t)left;
		ts.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&evq.cv, &evq.mu, &ts);
	}
	list = evq.head;
	evq.head = NULL;
	evq.tail = &evq.head;
	pthread_mutex_unlock(&evq.mu);
	return list;
}

static void
ev_free(struct ev *e)
{
	json_decref(e->obj);
	free(e->uid);
	free(e->msg);
	free(e->strategy);
	free(e);
}

/* ---- watches ---- */

struct feed {
	int i;
	char *path;
	const char *label, *field;
	struct kc_config kc;
	struct kube *k;
	struct watch *w;
	pthread_t th;
	long events;
	struct js_doc doc;  /* F_POD, F_NODE: the event's object */
	struct hm *digests; /* F_NODE: name -> uint64_t, what was passed on */
};
static struct feed feeds[F_N];

/* on_pod_event reads a pod's event where it arrives, parsing nothing
 * but its phase and its Job's uid, and passes on only a pod that has
 * ended: its devices are free from then on, before its Job says so. */
static int
on_pod_event(const char *type, const char *js, size_t len, void *arg)
{
	struct feed *f = arg;
	struct js_doc *d = &f->doc;
	int st, md, lab;
	char *phase, *job;
	struct ev *e;

	__atomic_add_fetch(&f->events, 1, __ATOMIC_RELAXED);
	if (js_scan(d, js, len) < 0 || d->t[0].type != JS_OBJECT)
		return 0;
	st = js_raw_get(d, 0, "status");
	md = js_raw_get(d, 0, "metadata");
	lab = md >= 0 ? js_raw_get(d, md, "labels") : -1;
	phase = st >= 0 ? js_raw_str(d, js_raw_get(d, st, "phase")) : NULL;
	job = lab >= 0 ? js_raw_str(d,
				 js_raw_get(d, lab,
					 "batch.kubernetes.io/controller-uid"))
		       : NULL;
	if (job && phase &&
		(!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))) {
		e = ecalloc(1, sizeof *e);
		e->feed = f->i;
		e->type = type[0];
		e->uid = job;
		job = NULL;
		post(e);
	}
	free(phase);
	free(job);
	return 0;
}

/* skip names what no one reads of an object, so that it is never built:
 * managedFields everywhere, a Job's spec (its template is ours), a Node's
 * status but its conditions (images, capacity, daemon endpoints...). */
static const char *const *
skip(const char *const *path, int depth, int *keep, void *arg)
{
	static const char *const managed[] = {"managedFields", NULL};
	static const char *const spec[] = {"spec", NULL};
	static const char *const conditions[] = {"conditions", NULL};
	const struct feed *f = arg;

	if (depth == 0 && f->i == F_JOB)
		return spec;
	if (depth == 1 && path[1] && !strcmp(path[1], "metadata"))
		return managed;
	if (depth == 1 && f->i == F_NODE && path[1] &&
		!strcmp(path[1], "status")) {
		*keep = 1;
		return conditions;
	}
	return NULL;
}

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 1099511628211ULL;
	return (h ^ 0x100) * 1099511628211ULL; /* ends each part */
}

/* raw_hash folds token t of d (its raw text, or its type) into h. */
static uint64_t
raw_hash(uint64_t h, const struct js_doc *d, int t)
{
	if (t < 0)
		return fnv(h, "-", 1);
	switch (d->t[t].type) {
	case JS_STRING:
	case JS_OBJECT:
	case JS_ARRAY: return fnv(h, d->t[t].s, d->t[t].len);
	default: return fnv(h, &d->t[t].type, sizeof d->t[t].type);
	}
}

/* node_unchanged says whether the Node event in d changes nothing of what
 * placement reads (its labels, taints, cordon, Ready condition, devices
 * and cost annotations) since the last one passed on: a heartbeat is
 * dropped here, in the watch's thread, before any object is built. */
static int
node_unchanged(struct feed *f, const char *type, const struct js_doc *d)
{
	int md = js_raw_get(d, 0, "metadata"), sp = js_raw_get(d, 0, "spec"),
	    st = js_raw_get(d, 0, "status"), ann, conds, c, i;
	uint64_t h = 14695981039346656037ULL, *old;
	char *name;

	if (md < 0 || !(name = js_raw_str(d, js_raw_get(d, md, "name"))))
		return 0;
	if (type[0] == 'D') {
		hm_del(f->digests, name);
		free(name);
		return 0;
	}
	ann = js_raw_get(d, md, "annotations");
	h = raw_hash(h, d, js_raw_get(d, md, "labels"));
	h = raw_hash(h, d,
		ann < 0 ? -1 : js_raw_get(d, ann, "agentaflow.gpu/devices"));
	h = raw_hash(h, d,
		ann < 0 ? -1 : js_raw_get(d, ann, "canhazgpu.dev/cost"));
	h = raw_hash(h, d, sp < 0 ? -1 : js_raw_get(d, sp, "taints"));
	h = raw_hash(h, d, sp < 0 ? -1 : js_raw_get(d, sp, "unschedulable"));
	conds = st < 0 ? -1 : js_raw_get(d, st, "conditions");
	if (conds >= 0 && d->t[conds].type == JS_ARRAY)
		for (i = 0, c = conds + 1; i < d->t[conds].n;
			i++, c = d->t[c].next)
			if (d->t[c].type == JS_OBJECT &&
				js_raw_eq(d, js_raw_get(d, c, "type"), "Ready"))
				h = raw_hash(h, d, js_raw_get(d, c, "status"));
	if ((old = hm_get(f->digests, name)) && *old == h) {
		free(name);
		return 1;
	}
	old = emalloc(sizeof *old);
	*old = h;
	hm_put(f->digests, name, old);
	free(name);
	return 0;
}

/* on_event builds the object of an event, without what skip names, and
 * queues it for the main thread. */
static int
on_event(const char *type, const char *js, size_t len, void *arg)
{
	struct feed *f = arg;
	struct ev *e;
	json_error_t je;
	json_t *obj;

	__atomic_add_fetch(&f->events, 1, __ATOMIC_RELAXED);
	if (f->i == F_NODE && js_scan(&f->doc, js, len) == 0 &&
		f->doc.t[0].type == JS_OBJECT &&
		node_unchanged(f, type, &f->doc))
		return 0;
	obj = jl_loadb_skip(js, len, 0, &je, skip, f);
	if (!obj) {
		err_warn("%s: an object that is no JSON: %s", feed_name[f->i],
			je.text);
		return 0;
	}
	e = ecalloc(1, sizeof *e);
	e->feed = f->i;
	e->type = type[0];
	e->obj = obj;
	post(e);
	return 0;
}

/* feed_run lists (retrying with backoff), says so, then watches for
 * ever, listing again every -r seconds as a safety net. */
static void *
feed_run(void *arg)
{
	struct feed *f = arg;
	struct kube_error e;
	double backoff = 0.5;
	int listed = 0, said = 0;
	struct ev *s;

	for (;;) {
		kube_set_deadline(f->k, listed ? opt.resync : 0);
		if (listed ? watch_run(f->w, &e) : watch_list(f->w, &e)) {
			if (e.kind == KUBE_EDEADLINE) {
				listed = 0; /* the resync: list again */
				continue;
			}
			/* one pass waits for nothing: an unreachable server
			 * is 75 at once, a refusal (403...) never gets better;
			 * a list gone stale or cut short is tried again */
			if (opt.once && !listed &&
				(e.kind == KUBE_ETEMP || e.kind == KUBE_EAPI ||
					e.kind == KUBE_EFAIL)) {
				s = ecalloc(1, sizeof *s);
				s->feed = f->i;
				s->type = 'E';
				s->temp = e.kind == KUBE_ETEMP;
				s->msg = estrdup(e.msg);
				post(s);
				return NULL;
			}
			if (!said || opt.verbose)
				err_warn("%s; retrying in %.1f s", e.msg,
					backoff);
			said = 1;
			usleep((useconds_t)(backoff * 1e6));
			backoff = backoff * 2 > 30 ? 30 : backoff * 2;
			continue;
		}
		if (said)
			err_warn("%s: watching again", feed_name[f->i]);
		said = 0;
		backoff = 0.5;
		if (!listed) {
			listed = 1;
			s = ecalloc(1, sizeof *s);
			s->feed = f->i;
			s->type = 'S';
			post(s);
		}
	}
	return NULL;
}

/* ---- writers ---- */

enum { T_APPLY, T_DELETE_JOB };

struct task {
	struct task *next;
	int what;
	char *uid;
	json_t *tmpl;   /* T_APPLY: its claim template (dra), or NULL */
	json_t *job;    /* T_APPLY: the Job, or NULL; T_DELETE_JOB: it */
	json_t *status; /* the status object, or NULL */
};

struct writer {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct task *head, **tail;
	struct kc_config kc;
	struct kube *k;
	struct applier *ap;
};
static struct writer writers[MAX_WRITERS];
static long busy;           /* tasks given out and not answered */
static struct hm *inflight; /* uid -> long *: its tasks not answered */

/* delete_job_now deletes Job job in the foreground: it goes, and the
 * devices it holds stay held, until its pods are gone (the API server's
 * default for Jobs would orphan them). A Job already gone counts as
 * deleted. */
static json_t *
delete_job_now(struct writer *w, const json_t *job, struct kube_error *e)
{
	char *path = ap_path(w->ap, job, 1, e);
	json_t *body, *res;

	if (!path)
		return NULL;
	body = json_pack("{s:s,s:s,s:s}", "apiVersion", "v1", "kind",
		"DeleteOptions", "propagationPolicy", "Foreground");
	res = kube_request(w->k, "DELETE", path, "application/json", body, e);
	if (!res && e->status == 404)
		res = json_null();
	json_decref(body);
	free(path);
	return res;
}

/* apply_template applies claim template tmpl; one the server refuses as
 * invalid (its spec is immutable: the workload was placed again
 * elsewhere) is deleted and applied anew. */
static json_t *
apply_template(struct writer *w, const json_t *tmpl, struct kube_error *e)
{
	json_t *res = ap_apply(w->ap, tmpl, e);
	const json_t *md;

	if (res || e->status != 422)
		return res;
	md = json_object_get(tmpl, "metadata");
	err_warn("resourceclaimtemplate %s/%s: its spec cannot change; "
		 "deleting it to apply it anew",
		json_string_value(json_object_get(md, "namespace")),
		json_string_value(json_object_get(md, "name")));
	if (!(res = ap_delete(w->ap, tmpl, e)))
		return NULL;
	json_decref(res);
	return ap_apply(w->ap, tmpl, e);
}

static void *
writer_run(void *arg)
{
	struct writer *w = arg;
	struct kube_error e;
	struct task *t;
	struct ev *r;
	json_t *res;
	const char *s;

	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (!w->head)
			pthread_cond_wait(&w->cv, &w->mu);
		t = w->head;
		w->head = t->next;
		if (!w->head)
			w->tail = &w->head;
		pthread_mutex_unlock(&w->mu);

		r = ecalloc(1, sizeof *r);
		r->feed = F_RESULT;
		r->what = t->what;
		r->uid = t->uid;
		r->ok = 1;
		if (t->what == T_DELETE_JOB) {
			res = delete_job_now(w, t->job, &e);
		} else {
			res = t->tmpl ? apply_template(w, t->tmpl, &e)
				      : json_null();
			if (res && t->job) {
				json_decref(res);
				res = ap_apply(w->ap, t->job, &e);
			}
			if (res && t->job &&
				(s = json_string_value(json_object_get(
					 json_object_get(json_object_get(t->job,
								 "metadata"),
						 "annotations"),
					 "canhazgpu.dev/strategy"))))
				r->strategy = estrdup(s);
			if (res && t->status) {
				json_decref(res);
				res = ap_apply(w->ap, t->status, &e);
			}
		}
		if (!res) {
			r->ok = 0;
			r->gone = e.status == 404;
			r->temp = e.kind == KUBE_ETEMP;
			r->msg = estrdup(e.msg);
		}
		json_decref(res);
		json_decref(t->tmpl);
		json_decref(t->job);
		json_decref(t->status);
		free(t);
		post(r);
	}
	return NULL;
}

/* give hands a task for uid to its writer: always the same one, so a
 * workload's writes land in the order made. Takes tmpl, job and status
 * (each may be NULL). */
static void
give(int what, const char *uid, json_t *tmpl, json_t *job, json_t *status)
{
	struct task *t = ecalloc(1, sizeof *t);
	unsigned h = 2166136261u;
	const char *p;
	struct writer *w;
	long *pending;

	for (p = uid; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	w = &writers[h % (unsigned)opt.writers];
	t->what = what;
	t->uid = estrdup(uid);
	t->tmpl = tmpl;
	t->job = job;
	t->status = status;
	busy++;
	if (!(pending = hm_get(inflight, uid))) {
		pending = ecalloc(1, sizeof *pending);
		hm_put(inflight, uid, pending);
	}
	(*pending)++;
	pthread_mutex_lock(&w->mu);
	*w->tail = t;
	w->tail = &t->next;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* ---- state ---- */

enum {
	W_QUEUED, /* waiting for a pass */
	W_WAIT,   /* a retry is due at ->due */
	W_FLIGHT, /* placed; its Job is being written */
	W_PLACED, /* its Job was written, or seen */
	W_DONE,   /* Succeeded or Failed: nothing more to do */
	W_AGAIN,  /* its Job met a temporary failure: written again at ->due */
};

struct sig; /* an eligibility class (see sig_for) */

struct wl {
	char *uid, *key; /* key: namespace/name */
	json_t *obj;
	long long gen;
	int state;
	double due;
	int retries;
	unsigned long long seq;
	long long prio;
	char *req;   /* request record for gen, or NULL */
	int req_all; /* req was made while its class admitted every node */
	struct sig *sig;
	int fits; /* -1 unknown; else whether an empty cluster could */
	unsigned long fgen; /* inventory generation fits is for */
	json_t *want;       /* the status last given to a writer */
	json_t *job;        /* W_FLIGHT, W_AGAIN: the Job being written */
	json_t *tmpl;       /* and its claim template (dra), or NULL */
	int again;          /* temporary failures of its Job write in a row */
	double placed_at;   /* W_PLACED by a write of ours: when */
};

struct job {
	char *owner; /* workload uid */
	json_t *obj;
	char *node;
	int phase; /* P_* */
	int deleting;
	int pod_done; /* its pod ended: it holds nothing any more */
	char *uid;    /* the Job's own */
};

enum { P_SCHEDULED, P_RUNNING, P_SUCCEEDED, P_FAILED };
static const char *const phase_name[] = {"Scheduled", "Running", "Succeeded",
	"Failed"};

struct knode {
	json_t *obj;
	json_t *extra; /* the class labels it carries */
	uint64_t digest;
	json_t *uuids; /* devices fed last, to retire the ones that go */
};

struct sig {
	char *label; /* "sig.canhazgpu.dev/N" */
	json_t *cons;
	size_t eligible; /* known nodes it admits */
};

static struct {
	struct sp_state live, cap; /* with holds; inventory only */
	struct hm *wls;            /* uid -> struct wl */
	struct hm *jobs;           /* owner uid -> struct job */
	struct hm *nodes;          /* name -> struct knode */
	struct hm *sigs;           /* constraints dump -> struct sig */
	struct hm *job_owner;      /* Job uid -> its workload's uid */
	size_t nsigs;
	int synced; /* bit per feed */
	int dirty;  /* a pass may place something */
	unsigned long inv_gen;
	unsigned long long seq;
	char *cm_strategy;
	struct jb scratch;
	char *answers; /* a pass's answers, one per line */
	size_t alen, acap;
	int failed, temp; /* -1: a write failed, the server was unreachable */
	/* counters */
	struct hm *scheduled; /* strategy -> long * */
	long failed_invalid, failed_unsched, failed_job;
	long retries, writes_ok, writes_err;
	double hist[11];
	long hcount;
	double hsum, last_pass;
	int metrics_dirty;
	double metrics_at;
	double next_due; /* no retry is due before this */
} S;

static const double buckets[11] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
	2.5, 5, 10};

static int
all_synced(void)
{
	return S.synced == (1 << F_N) - 1;
}

static const char *
str_at(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return json_string_value(b ? json_object_get(v, b) : v);
}

static const char *
annotation(const json_t *o, const char *key)
{
	return json_string_value(
		json_object_get(json_object_get(json_object_get(o, "metadata"),
					"annotations"),
			key));
}

/* ---- feeding the engine ---- */

static void
collect(void *arg, const char *rec, size_t len)
{
	(void)arg;
	if (S.alen + len + 2 > S.acap) {
		S.acap = (S.alen + len + 2) * 2;
		S.answers = erealloc(S.answers, S.acap);
	}
	memcpy(S.answers + S.alen, rec, len);
	S.alen += len;
	S.answers[S.alen++] = '\n';
	S.answers[S.alen] = '\0';
}

/* feed hands one record (text, any length) to st; what names it in a
 * warning. */
static void
feed(struct sp_state *st, const char *rec, size_t len, const char *what)
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

static char *
estrndup_(const char *p, size_t n)
{
	char *s = emalloc(n + 1);

	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

/* swap returns s (taken) with its first from made to, or s. */
static char *
swap(char *s, const char *from, const char *to)
{
	char *f = strstr(s, from), *r;

	if (!f)
		return s;
	r = easprintf("%.*s%s%s", (int)(f - s), s, to, f + strlen(from));
	free(s);
	return r;
}

/* feed_lines feeds every line of text to both states. With whole set,
 * the node record goes to the state of an empty cluster as ready and
 * schedulable: a node that is there may come back, so a workload that
 * only it could hold waits for it instead of spending retries. */
static void
feed_lines(const char *text, size_t len, const char *what, int whole)
{
	const char *p = text, *end = text + len, *nl;
	char *rec;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (nl > p) {
			feed(&S.live, p, (size_t)(nl - p), what);
			if (whole && p == text) {
				rec = estrndup_(p, (size_t)(nl - p));
				rec = swap(rec, ",\"ready\":false",
					",\"ready\":true");
				rec = swap(rec, ",\"unschedulable\":true",
					",\"unschedulable\":false");
				feed(&S.cap, rec, strlen(rec), what);
				free(rec);
			} else {
				feed(&S.cap, p, (size_t)(nl - p), what);
			}
		}
		p = nl + 1;
	}
}

/* ---- eligibility classes ----
 *
 * Workloads whose pods carry the same tolerations and required node
 * affinity share a class; a node their pods may use carries its label
 * (true) in the engine, and their requests select it, unless the class
 * admits every node. */

static json_t *
node_extra(const json_t *node)
{
	json_t *extra = json_object();
	const json_t *tol, *terms;
	struct sig *g;
	const char *k;
	void *v;
	size_t pos = 0;

	while (hm_next(S.sigs, &pos, &k, &v)) {
		g = v;
		tol = json_object_get(g->cons, "tolerations");
		terms = json_object_get(g->cons, "terms");
		if (nf_eligible(node, tol, terms, NULL, 0) == NF_OK)
			json_object_set_new(extra, g->label,
				json_string("true"));
	}
	return extra;
}

/* recount moves the eligible counts of the classes from a node's old
 * labels to its new ones. */
static void
recount(const json_t *old, const json_t *now)
{
	const char *k;
	void *v;
	size_t pos = 0;
	struct sig *g;

	while (hm_next(S.sigs, &pos, &k, &v)) {
		g = v;
		if (json_object_get(old, g->label))
			g->eligible--;
		if (json_object_get(now, g->label))
			g->eligible++;
	}
}

/* node_feed feeds the inventory of node name (obj NULL: gone) to both
 * states, retiring devices it no longer has. */
static void
node_feed(const char *name, struct knode *kn, const json_t *obj)
{
	json_t *extra, *uuids = json_array(), *d, *devs;
	struct jb *b = &S.scratch;
	const char *ann;
	char *what = easprintf("node %s", name);
	size_t i;
	int n;

	jb_reset(b);
	extra = obj ? node_extra(obj) : json_object();
	recount(kn->extra, extra);
	json_decref(kn->extra);
	kn->extra = extra;
	if (obj) {
		n = nf_records(obj, extra, b);
		if (n < 0)
			err_warn(
				"node %s: agentaflow.gpu/devices is not a JSON "
				"array; no devices taken from it",
				name);
		ann = annotation(obj, "agentaflow.gpu/devices");
		devs = ann ? json_loads(ann, 0, NULL) : NULL;
		json_array_foreach(devs, i, d) {
			if (json_string_value(json_object_get(d, "uuid")))
				json_array_append(uuids,
					json_object_get(d, "uuid"));
		}
		json_decref(devs);
	} else {
		jb_raw(b, "{\"kind\":\"node\",\"name\":");
		jb_str(b, name);
		jb_raw(b, ",\"ready\":false,\"unschedulable\":true}\n");
	}
	/* a device gone from the node is fed as unhealthy: the engine
	 * forgets no device, so it must never be chosen again */
	json_array_foreach(kn->uuids, i, d) {
		size_t j;
		json_t *u;
		int kept = 0;

		json_array_foreach(uuids, j, u)
			if (json_equal(u, d))
				kept = 1;
		if (kept)
			continue;
		jb_raw(b, "{\"kind\":\"gpu\",\"node\":");
		jb_str(b, name);
		jb_raw(b, ",\"index\":0,\"uuid\":");
		jb_str(b, json_string_value(d));
		jb_raw(b, ",\"health\":\"unhealthy\"}\n");
	}
	json_decref(kn->uuids);
	kn->uuids = uuids;
	feed_lines(b->buf, b->len, what, obj != NULL);
	free(what);
	S.inv_gen++;
	S.dirty = 1;
}

static void
refeed_nodes(void)
{
	const char *k;
	void *v;
	size_t pos = 0;

	while (hm_next(S.nodes, &pos, &k, &v))
		node_feed(k, v, ((struct knode *)v)->obj);
}

/* sig_for returns the class of w's constraints, making it (and
 * labelling every node) when new. */
static struct sig *
sig_for(const json_t *w)
{
	json_t *cons = wl_constraints(w, opt.tol);
	char *dump = json_dumps(cons, JSON_SORT_KEYS | JSON_COMPACT);
	struct sig *g = hm_get(S.sigs, dump);

	if (g) {
		json_decref(cons);
		free(dump);
		return g;
	}
	g = ecalloc(1, sizeof *g);
	g->label = easprintf("sig.canhazgpu.dev/%zu", ++S.nsigs);
	g->cons = cons;
	hm_put(S.sigs, dump, g);
	free(dump);
	refeed_nodes(); /* counts g->eligible too */
	return g;
}

/* ---- status ---- */

static char *
now_rfc3339(double offset)
{
	time_t t = time(NULL) + (time_t)offset;
	struct tm tm;
	char buf[32];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return estrdup(buf);
}

static double
parse_time(const char *s)
{
	struct tm tm = {0};
	const char *end;

	if (!s || !(end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		return 0;
	return (double)timegm(&tm);
}

/* status_obj wraps status s (taken) for w, to be applied. */
static json_t *
status_obj(const struct wl *w, json_t *s)
{
	const json_t *md = json_object_get(w->obj, "metadata");

	return json_pack("{s:s,s:s,s:{s:O,s:O},s:o}", "apiVersion",
		"canhazgpu.dev/v1alpha1", "kind", "GPUWorkload", "metadata",
		"name", json_object_get(md, "name"), "namespace",
		json_object_get(md, "namespace"), "status", s);
}

/* same_status says whether a and b agree but for lastTransitionTime:
 * compared member by member, copying nothing. */
static int
same_status(const json_t *a, const json_t *b)
{
	const char *k;
	const json_t *v;
	size_t n = 0, m = 0;

	if (!json_is_object(a) || !json_is_object(b))
		return 0;
	json_object_foreach((json_t *)a, k, v) {
		if (!strcmp(k, "lastTransitionTime"))
			continue;
		if (!json_equal(v, json_object_get(b, k)))
			return 0;
		n++;
	}
	json_object_foreach((json_t *)b, k, v)
		if (strcmp(k, "lastTransitionTime"))
			m++;
	return n == m;
}

/* set_status writes s (taken) as w's status unless it is what w has or
 * was last given; tmpl and job (taken, may be NULL) go first. */
static void
set_status(struct wl *w, json_t *s, json_t *tmpl, json_t *job)
{
	const json_t *cur = json_object_get(w->obj, "status");

	if (!job &&
		(same_status(s, w->want) ||
			(!w->want && same_status(s, cur)))) {
		json_decref(s);
		return;
	}
	json_decref(w->want);
	w->want = json_incref(s);
	give(T_APPLY, w->uid, tmpl, job, status_obj(w, s));
	S.metrics_dirty = 1;
}

static json_t *
requested(const struct wl *w)
{
	char n[24];

	snprintf(n, sizeof n, "%d", wl_gpus(w->obj));
	return json_string(n);
}

static void
fail(struct wl *w, const char *msg, long *counter)
{
	json_t *s = json_pack("{s:s,s:o,s:i,s:s,s:o}", "phase", "Failed",
		"requestedGPUs", requested(w), "retries", w->retries, "message",
		msg, "lastTransitionTime", json_string(""));
	char *now = now_rfc3339(0);

	json_object_set_new(s, "lastTransitionTime", json_string(now));
	free(now);
	w->state = W_DONE;
	(*counter)++;
	set_status(w, s, NULL, NULL);
}

/* jitter_hash is the hash the delays were drawn with before: a string's
 * characters folded as h = (h * 31 + c) mod 1000003 from 7. */
static long
jitter_hash(const char *s)
{
	long h = 7;

	for (; *s; s++)
		h = (h * 31 + (unsigned char)*s) % 1000003;
	return h;
}

/* retry spends one of w's retries on why, or fails it when they are
 * spent. */
static void
retry(struct wl *w, const char *why, const char *unsched_prefix)
{
	int n = w->retries + 1, max = wl_max_retries(w->obj);
	double base = wl_backoff(w->obj), d;
	char key[300], *msg, *when;
	long delay;
	json_t *s;

	if (n > max) {
		msg = easprintf("%s after %d %s: %s", unsched_prefix, max,
			max == 1 ? "retry" : "retries", why);
		fail(w, msg,
			strcmp(unsched_prefix, "unschedulable") == 0
				? &S.failed_unsched
				: &S.failed_job);
		free(msg);
		return;
	}
	d = base * pow(2, n - 1);
	if (d > opt.max_backoff)
		d = opt.max_backoff;
	snprintf(key, sizeof key, "%s/%d", w->uid, n);
	delay = (long)floor(
		d * (0.5 + (double)(jitter_hash(key) % 1000) / 1000));
	if (delay < 1)
		delay = 1;
	w->retries = n;
	w->state = W_WAIT;
	w->due = clock_mono() + (double)delay;
	if (w->due < S.next_due)
		S.next_due = w->due;
	S.retries++;
	when = now_rfc3339((double)delay);
	msg = easprintf("%s; retry %d of %d in %lds", why, n, max, delay);
	s = json_pack("{s:s,s:i,s:o,s:s,s:s}", "phase", "Pending", "retries", n,
		"requestedGPUs", requested(w), "nextRetryTime", when, "message",
		msg);
	free(when);
	free(msg);
	set_status(w, s, NULL, NULL);
}

/* ---- jobs ---- */

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
		if (!strcmp(str_at(c, "type", NULL) ?: "", type) &&
			!strcmp(str_at(c, "status", NULL) ?: "", "True"))
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

static const char *
job_failure(const json_t *job)
{
	const char *m = str_at(condition(job, "Failed"), "message", NULL);

	return m ? m : "see the Job";
}

static json_t *
job_devices(const json_t *job)
{
	const char *a = annotation(job, "canhazgpu.dev/devices");
	json_t *v = a ? json_loads(a, 0, NULL) : NULL;

	if (!json_is_array(v)) {
		json_decref(v);
		v = json_array();
	}
	return v;
}

/* status_from_job writes w's status as its Job j says. */
static void
status_from_job(struct wl *w, const struct job *j)
{
	/* what was last written counts: a Job seen before the status
	 * written with it is not a change */
	const json_t *cur = w->want ? w->want
				    : json_object_get(w->obj, "status");
	json_t *s, *devs = job_devices(j->obj);
	const char *name = str_at(j->obj, "metadata", "name"),
		   *strat = annotation(j->obj, "canhazgpu.dev/strategy");
	char *msg, *now;

	if (str_at(cur, "phase", NULL) &&
		!strcmp(str_at(cur, "phase", NULL), phase_name[j->phase]) &&
		json_equal(json_object_get(cur, "devices"), devs) &&
		str_at(cur, "assignedNode", NULL) && j->node &&
		!strcmp(str_at(cur, "assignedNode", NULL), j->node)) {
		json_decref(devs);
		return;
	}
	s = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	switch (j->phase) {
	case P_SCHEDULED:
		msg = easprintf("Job %s created on node %s", name, j->node);
		break;
	case P_RUNNING: msg = easprintf("running on node %s", j->node); break;
	case P_SUCCEEDED: msg = estrdup("completed"); break;
	default: msg = easprintf("Job failed: %s", job_failure(j->obj));
	}
	now = now_rfc3339(0);
	json_object_set_new(s, "phase", json_string(phase_name[j->phase]));
	json_object_set_new(s, "assignedNode", json_string(j->node ?: ""));
	json_object_set_new(s, "devices", devs);
	json_object_set_new(s, "jobName", json_string(name ?: ""));
	json_object_set_new(s, "requestedGPUs", requested(w));
	if (strat)
		json_object_set_new(s, "strategy", json_string(strat));
	json_object_set_new(s, "lastTransitionTime", json_string(now));
	json_object_set_new(s, "message", json_string(msg));
	json_object_del(s, "nextRetryTime");
	free(msg);
	free(now);
	if (j->phase == P_FAILED && w->state != W_DONE)
		S.failed_job++;
	set_status(w, s, NULL, NULL);
}

/* hold_job makes the engine hold what unfinished Job j holds. */
static void
hold_job(const struct job *j)
{
	const struct sp_hold *h = hm_get(S.live.holds, j->owner);
	json_t *devs = job_devices(j->obj), *d;
	const char *ex = annotation(j->obj, "canhazgpu.dev/exclusive"),
		   *mem = annotation(j->obj, "canhazgpu.dev/memory-mib");
	struct jb *b = &S.scratch;
	size_t i, same = 0;
	char *what;

	if (h && h->ndevs == json_array_size(devs)) {
		json_array_foreach(devs, i, d)
			if (h->devs[i]->uuid && json_string_value(d) &&
				!strcmp(h->devs[i]->uuid, json_string_value(d)))
				same++;
		if (same == h->ndevs) {
			json_decref(devs);
			return;
		}
	}
	if (!json_array_size(devs)) {
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
	what = easprintf("Job %s", str_at(j->obj, "metadata", "name"));
	feed(&S.live, b->buf, b->len, what);
	free(what);
	json_decref(devs);
}

static void
release(const char *uid)
{
	if (sp_release(&S.live, uid) == 0) {
		S.dirty = 1;
		S.metrics_dirty = 1;
	}
}

/* orphans frees holds that no Job and no write in flight explains: a
 * placement whose Job was written but never seen (created and deleted
 * while a watch was away) holds nothing after ORPHAN_AFTER seconds. */
static void
orphans(void)
{
	const char *k;
	void *v;
	size_t pos = 0, n = 0, i;
	char **gone = NULL;
	struct wl *w;

	while (hm_next(S.live.holds, &pos, &k, &v)) {
		if (hm_get(S.jobs, k))
			continue;
		w = hm_get(S.wls, k);
		if (w &&
			(w->state == W_FLIGHT || w->state == W_AGAIN ||
				(w->state == W_PLACED &&
					clock_mono() - w->placed_at <
						ORPHAN_AFTER)))
			continue;
		if (!w && hm_get(inflight, k))
			continue;
		gone = erealloc(gone, (n + 1) * sizeof *gone);
		gone[n++] = estrdup(k);
	}
	for (i = 0; i < n; i++) {
		err_warn("%s: no Job holds its devices any more; freeing them",
			gone[i]);
		if ((w = hm_get(S.wls, gone[i])) && w->state == W_PLACED) {
			w->state = W_QUEUED;
			json_decref(w->want);
			w->want = NULL;
		}
		release(gone[i]);
		free(gone[i]);
	}
	free(gone);
}

static void
delete_job(struct job *j, const char *why)
{
	if (j->deleting)
		return;
	j->deleting = 1;
	err_warn("Job %s/%s: %s; deleting it so that its workload is placed "
		 "again",
		str_at(json_object_get(j->obj, "metadata"), "namespace", NULL),
		str_at(j->obj, "metadata", "name"), why);
	give(T_DELETE_JOB, j->owner, NULL, json_incref(j->obj), NULL);
}

static void
job_free(void *p)
{
	struct job *j = p;

	if (!j)
		return;
	if (j->uid)
		hm_del(S.job_owner, j->uid);
	free(j->uid);
	free(j->owner);
	free(j->node);
	json_decref(j->obj);
	free(j);
}

static const char *
owner_uid(const json_t *job)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(job, "metadata"),
				   "ownerReferences"),
		i, r) {
		if (str_at(r, "kind", NULL) &&
			!strcmp(str_at(r, "kind", NULL), "GPUWorkload"))
			return str_at(r, "uid", NULL);
	}
	return NULL;
}

static void
on_job(char type, json_t *obj)
{
	const char *uid = owner_uid(obj);
	struct job *j;
	struct wl *w;

	if (!uid)
		return;
	j = hm_get(S.jobs, uid);
	w = hm_get(S.wls, uid);
	if (type == 'D') {
		if (!j)
			return;
		release(uid);
		if (w && (j->phase == P_SUCCEEDED || j->phase == P_FAILED))
			w->state = W_DONE;
		else if (w && w->state != W_DONE) {
			err_warn("workload %s: its Job went before it "
				 "finished; placing it again",
				w->key);
			w->state = W_QUEUED;
			json_decref(w->want);
			w->want = NULL;
			S.dirty = 1;
		}
		hm_del(S.jobs, uid);
		return;
	}
	if (!j) {
		j = ecalloc(1, sizeof *j);
		j->owner = estrdup(uid);
		hm_put(S.jobs, uid, j);
	}
	json_decref(j->obj);
	j->obj = json_incref(obj);
	free(j->node);
	j->node = annotation(obj, "canhazgpu.dev/node")
		? estrdup(annotation(obj, "canhazgpu.dev/node"))
		: NULL;
	if (!j->uid && str_at(json_object_get(obj, "metadata"), "uid", NULL)) {
		j->uid = estrdup(
			str_at(json_object_get(obj, "metadata"), "uid", NULL));
		hm_put(S.job_owner, j->uid, estrdup(uid));
	}
	j->phase = job_phase(obj);
	if (j->phase == P_SUCCEEDED || j->phase == P_FAILED || j->pod_done)
		release(uid);
	else
		hold_job(j);
	if (w) {
		if (w->state != W_DONE)
			w->state = j->phase >= P_SUCCEEDED ? W_DONE : W_PLACED;
		status_from_job(w, j);
	}
	if (all_synced() && j->phase < P_SUCCEEDED && j->node &&
		!hm_get(S.nodes, j->node))
		delete_job(j, "its node is gone");
}

/* on_pod: the pod of Job uid job ended; its devices are free. The Job
 * (backoffLimit 0, one completion) makes no other pod. */
static void
on_pod(const char *job)
{
	const char *owner = hm_get(S.job_owner, job);
	struct job *j = owner ? hm_get(S.jobs, owner) : NULL;

	if (!j || j->pod_done)
		return;
	j->pod_done = 1;
	release(j->owner);
}

/* ---- workloads ---- */

static void
wl_free_(void *p)
{
	struct wl *w = p;

	if (!w)
		return;
	free(w->uid);
	free(w->key);
	free(w->req);
	json_decref(w->obj);
	json_decref(w->want);
	json_decref(w->job);
	json_decref(w->tmpl);
	free(w);
}

static void
on_workload(char type, json_t *obj)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *uid = str_at(md, "uid", NULL), *ph;
	const json_t *st = json_object_get(obj, "status");
	struct wl *w;
	struct job *j;
	char *problem;
	double next;
	long long gen;
	int changed;

	if (!uid || !str_at(md, "name", NULL) || !str_at(md, "namespace", NULL))
		return;
	w = hm_get(S.wls, uid);
	if (type == 'D') {
		if (w && w->state == W_FLIGHT)
			err_warn("workload %s deleted while its Job is being "
				 "written; the Job goes with it",
				w->key);
		if (w)
			S.metrics_dirty = 1;
		hm_del(S.wls, uid);
		return;
	}
	gen = json_integer_value(json_object_get(md, "generation"));
	if (!w) {
		w = ecalloc(1, sizeof *w);
		w->uid = estrdup(uid);
		w->key = easprintf("%s/%s", str_at(md, "namespace", NULL),
			str_at(md, "name", NULL));
		w->seq = S.seq++;
		w->fits = -1;
		w->state = -1;
		hm_put(S.wls, uid, w);
	}
	json_decref(w->obj);
	w->obj = json_incref(obj);
	S.metrics_dirty = 1;
	changed = gen != w->gen || !w->req;
	if (changed) {
		w->gen = gen;
		free(w->req);
		w->req = NULL;
		w->fits = -1;
		w->sig = NULL;
	}
	if ((j = hm_get(S.jobs, uid))) {
		if (w->state != W_DONE)
			w->state = j->phase >= P_SUCCEEDED ? W_DONE : W_PLACED;
		status_from_job(w, j);
		return;
	}
	if (w->state == W_FLIGHT || w->state == W_AGAIN ||
		w->state == W_PLACED || w->state == W_DONE)
		return;
	ph = str_at(st, "phase", NULL);
	if (ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"))) {
		w->state = W_DONE;
		return;
	}
	if ((problem = wl_problem(obj))) {
		w->retries = (int)json_integer_value(
			json_object_get(st, "retries"));
		fail(w, problem, &S.failed_invalid);
		free(problem);
		return;
	}
	if (w->state == -1) {
		/* first seen: resume what its status says */
		w->retries = (int)json_integer_value(
			json_object_get(st, "retries"));
		w->prio = wl_priority(obj);
		next = parse_time(str_at(st, "nextRetryTime", NULL));
		if (next > (double)time(NULL)) {
			w->state = W_WAIT;
			w->due = clock_mono() + next - (double)time(NULL);
			if (w->due < S.next_due)
				S.next_due = w->due;
		} else {
			w->state = W_QUEUED;
			S.dirty = 1;
		}
	} else if (w->state == W_QUEUED && changed) {
		w->prio = wl_priority(obj);
		S.dirty = 1; /* its spec may fit now */
	}
}

/* ---- nodes ---- */

static void
knode_free(void *p)
{
	struct knode *kn = p;

	if (!kn)
		return;
	json_decref(kn->obj);
	json_decref(kn->extra);
	json_decref(kn->uuids);
	free(kn);
}

static void
on_node(char type, json_t *obj)
{
	const char *name = str_at(obj, "metadata", "name");
	struct knode *kn;
	struct job *j;
	const char *k;
	void *v;
	size_t pos = 0;
	uint64_t dg;

	if (!name)
		return;
	kn = hm_get(S.nodes, name);
	if (type == 'D') {
		if (!kn)
			return;
		node_feed(name, kn, NULL);
		hm_del(S.nodes, name);
		if (all_synced())
			while (hm_next(S.jobs, &pos, &k, &v)) {
				j = v;
				if (j->phase < P_SUCCEEDED && j->node &&
					!strcmp(j->node, name))
					delete_job(j, "its node is gone");
			}
		S.metrics_dirty = 1;
		return;
	}
	dg = nf_digest(obj);
	if (kn && kn->digest == dg) {
		json_decref(kn->obj);
		kn->obj = json_incref(obj);
		return;
	}
	if (!kn) {
		kn = ecalloc(1, sizeof *kn);
		kn->uuids = json_array();
		hm_put(S.nodes, name, kn);
	}
	json_decref(kn->obj);
	kn->obj = json_incref(obj);
	kn->digest = dg;
	node_feed(name, kn, obj);
	S.metrics_dirty = 1;
}

/* ---- the strategy ConfigMap ---- */

static void
on_configmap(char type, json_t *obj)
{
	const char *s = type == 'D'
		? NULL
		: str_at(json_object_get(obj, "data"), "strategy", NULL);

	if (s && sp_strategy_parse(s) < 0) {
		err_warn("configmap %s/%s: unknown strategy \"%s\"; keeping "
			 "%s",
			opt.cm_ns, opt.cm_name, s,
			S.cm_strategy ?: sp_strategy_name(opt.strategy));
		return;
	}
	if ((s && S.cm_strategy && !strcmp(s, S.cm_strategy)) ||
		(!s && !S.cm_strategy))
		return;
	free(S.cm_strategy);
	S.cm_strategy = s ? estrdup(s) : NULL;
	err_warn("strategy %s", s ?: sp_strategy_name(opt.strategy));
	S.dirty = 1;
}

/* ---- results of writes ---- */

static void
on_result(struct ev *e)
{
	struct wl *w = hm_get(S.wls, e->uid);
	long *n = hm_get(inflight, e->uid);

	busy--;
	if (n && --*n == 0)
		hm_del(inflight, e->uid);
	if (e->what == T_APPLY && e->strategy) {
		/* the Job was written, whatever became of the status */
		if (!(n = hm_get(S.scheduled, e->strategy))) {
			n = ecalloc(1, sizeof *n);
			hm_put(S.scheduled, e->strategy, n);
		}
		(*n)++;
		S.metrics_dirty = 1;
		if (w && w->state == W_FLIGHT) {
			w->state = W_PLACED;
			w->placed_at = clock_mono();
			json_decref(w->job);
			w->job = NULL;
			json_decref(w->tmpl);
			w->tmpl = NULL;
		}
	}
	if (e->ok) {
		S.writes_ok++;
		return;
	}
	S.writes_err++;
	if (e->gone && !w) {
		/* its workload went first: nothing to write any more */
		if (e->what == T_APPLY)
			release(e->uid);
		return;
	}
	if (e->temp)
		S.temp = 1;
	else
		S.failed = 1;
	err_warn("%s", e->msg);
	if (e->what == T_APPLY && w && w->state == W_FLIGHT && e->temp &&
		w->job) {
		/* the server may have the Job or not: keep its devices and
		 * write the same Job again, spending no retry */
		double d = 1 << (w->again < 5 ? w->again : 5);

		w->again++;
		w->state = W_AGAIN;
		w->due = clock_mono() +
			d * (0.75 + (double)(rand() % 500) / 1000);
		if (w->due < S.next_due)
			S.next_due = w->due;
		err_warn("workload %s: its Job will be written again", w->key);
	} else if (e->what == T_APPLY && w && w->state == W_FLIGHT) {
		/* the Job was not written: free its devices, retry */
		release(w->uid);
		json_decref(w->want);
		w->want = NULL;
		retry(w, e->msg, "Job not written");
	} else if (e->what == T_APPLY && !w) {
		release(e->uid);
	} else if (w && e->what == T_APPLY) {
		/* a status write failed: write it again on the next change */
		json_decref(w->want);
		w->want = NULL;
	}
}

/* ---- the pass ---- */

static int
queue_cmp(const void *a, const void *b)
{
	const struct wl *x = *(struct wl *const *)a,
			*y = *(struct wl *const *)b;
	const char *cx = str_at(x->obj, "metadata", "creationTimestamp"),
		   *cy = str_at(y->obj, "metadata", "creationTimestamp");
	int c;

	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if ((c = strcmp(cx ?: "", cy ?: "")))
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

#define REQ_HEAD "{\"kind\":\"request\",\"id\":"

/* request_for returns w's request record, made once per generation and
 * inventory shape. */
static const char *
request_for(struct wl *w)
{
	struct jb b = {0}, id = {0};
	struct sig *g;
	size_t skip;
	int all;

	if (!w->sig) {
		w->sig = sig_for(w->obj);
		free(w->req);
		w->req = NULL;
	}
	g = w->sig;
	all = g->eligible == hm_len(S.nodes);
	if (w->req && w->req_all != all) {
		free(w->req);
		w->req = NULL;
	}
	if (!w->req) {
		/* the request is known by the workload's uid, as its hold
		 * and its Job's are: a workload made again under the same
		 * name is another one */
		w->req_all = all;
		jb_raw(&id, REQ_HEAD);
		jb_str(&id, w->key);
		if (opt.dra)
			wl_request_dra(w->obj, all ? NULL : g->label,
				opt.chains, &b);
		else
			wl_request(w->obj, all ? NULL : g->label, &b);
		if (b.len < id.len || memcmp(b.buf, id.buf, id.len))
			err_die(HAZ_FAIL, "internal error: request of %s",
				w->key);
		skip = id.len;
		jb_reset(&id);
		jb_raw(&id, REQ_HEAD);
		jb_str(&id, w->uid);
		w->req = easprintf("%.*s%.*s", (int)id.len, id.buf,
			(int)(b.len - skip), b.buf + skip);
		jb_free(&id);
		jb_free(&b);
	}
	return w->req;
}

/* strip_sig takes the eligibility label out of a reason. */
static char *
strip_sig(const char *reason, const struct sig *g)
{
	char *s = estrdup(reason), *p, *lab = easprintf("%s=true", g->label);
	size_t n = strlen(lab);
	const char *phrase;

	if ((p = strstr(s, lab))) {
		if (p > s && p[-1] == ',') {
			memmove(p - 1, p + n, strlen(p + n) + 1);
		} else if (p[n] == ',') {
			memmove(p, p + n + 1, strlen(p + n + 1) + 1);
		} else {
			phrase = " matching node selector ";
			if (p - s >= (long)strlen(phrase) &&
				!strncmp(p - strlen(phrase), phrase,
					strlen(phrase)))
				p -= strlen(phrase);
			memmove(p, p + (strstr(p, lab) - p) + n,
				strlen(strstr(p, lab) + n) + 1);
		}
	}
	free(lab);
	return s;
}

/* selects says whether node's labels hold every pair of selector sel. */
static int
selects(const json_t *node, const json_t *sel)
{
	const json_t *labels = json_object_get(json_object_get(node,
						       "metadata"),
		"labels");
	const char *k, *have;
	const json_t *v;

	json_object_foreach((json_t *)sel, k, v) {
		have = json_string_value(json_object_get(labels, k));
		if (!have || !json_string_value(v) ||
			strcmp(have, json_string_value(v)))
			return 0;
	}
	return 1;
}

/* cause says why no node that w's node selector picks admits its pods,
 * when none does: how many have a taint it does not tolerate (naming the
 * commonest), how many do not match its required node affinity. NULL
 * when no node matches the selector (sched-pick's reason says so) or
 * some node admits it. */
static char *
cause(const struct wl *w)
{
	const struct sig *g = w->sig;
	const json_t *spec = json_object_get(w->obj, "spec");
	json_t *sel = json_object(), *sv;
	char why[256], best[256] = "", *text, *on;
	size_t taint = 0, aff = 0, nbest = 0, matched = 0, ok = 0;
	const char *k;
	void *v;
	size_t pos = 0;
	struct hm *counts = hm_new(free);
	struct jb b = {0};
	size_t *c;

	json_object_update(sel, json_object_get(spec, "nodeSelector"));
	json_object_update(sel,
		json_object_get(json_object_get(json_object_get(spec,
							"podTemplate"),
					"spec"),
			"nodeSelector"));
	while (g && hm_next(S.nodes, &pos, &k, &v)) {
		if (!selects(((struct knode *)v)->obj, sel))
			continue;
		matched++;
		switch (nf_eligible(((struct knode *)v)->obj,
			json_object_get(g->cons, "tolerations"),
			json_object_get(g->cons, "terms"), why, sizeof why)) {
		case NF_TAINT:
			taint++;
			if (!(c = hm_get(counts, why))) {
				c = ecalloc(1, sizeof *c);
				hm_put(counts, why, c);
			}
			if (++*c > nbest) {
				nbest = *c;
				snprintf(best, sizeof best, "%s", why);
			}
			break;
		case NF_AFFINITY: aff++; break;
		default: ok++;
		}
	}
	hm_free(counts);
	if (!matched || ok) {
		json_decref(sel);
		return NULL;
	}
	json_object_foreach(sel, k, sv) {
		jb_raw(&b, b.len ? "," : "");
		jb_raw(&b, k);
		jb_raw(&b, "=");
		jb_raw(&b, json_string_value(sv) ?: "");
	}
	json_decref(sel);
	on = b.len
		? easprintf(" matching node selector %.*s", (int)b.len, b.buf)
		: estrdup("");
	jb_free(&b);
	if (taint && aff)
		text = easprintf("no node%s admits its pods: %zu have a taint "
				 "it does not tolerate (%zu %s), %zu do not "
				 "match its required node affinity",
			on, taint, nbest, best, aff);
	else if (taint)
		text = easprintf("no node%s admits its pods: %zu %s a taint it "
				 "does not tolerate (%zu %s)",
			on, taint, taint == 1 ? "has" : "have", nbest, best);
	else
		text = easprintf("no node%s admits its pods: %zu %s not match "
				 "its required node affinity",
			on, aff, aff == 1 ? "does" : "do");
	free(on);
	return text;
}

/* could_fit says whether w fits the cluster with nothing held. */
static int
could_fit(struct wl *w, const char *req)
{
	size_t mark = S.alen;
	int fits;

	if (w->fits >= 0 && w->fgen == S.inv_gen)
		return w->fits;
	feed(&S.cap, req, strlen(req), w->key);
	feed(&S.cap, "{\"kind\":\"flush\"}", 16, w->key);
	fits = S.alen > mark && strstr(S.answers + mark, "\"placement\"");
	S.alen = mark;
	sp_release(&S.cap, w->uid);
	w->fits = fits;
	w->fgen = S.inv_gen;
	return fits;
}

static const json_t *
gpu_req(const struct wl *w)
{
	return json_object_get(json_object_get(w->obj, "spec"),
		"gpuRequirements");
}

static void
placed(struct wl *w, const struct js_doc *d)
{
	struct wl_place p = {0};
	json_t *devs = json_array(), *job, *s, *tmpl = NULL;
	int t = js_get(d, 0, "devices"), i, k;
	const char *from = js_str(d, js_get(d, 0, "fallback_from"));
	char *msg, *now;

	for (i = 0, k = t + 1; t >= 0 && i < d->t[t].n; i++, k = d->t[k].next)
		json_array_append_new(devs, json_string(d->t[k].s));
	p.node = js_str(d, js_get(d, 0, "node"));
	p.devices = devs;
	p.strategy = js_str(d, js_get(d, 0, "strategy"));
	p.mig_profile = js_str(d, js_get(d, 0, "mig_profile"));
	if (opt.dra) {
		p.claim_template = str_at(w->obj, "metadata", "name");
		tmpl = wl_claim_template(w->obj, &p, opt.chains);
	}
	job = wl_job(w->obj, &p, opt.image, opt.tol);
	if (!opt.dra &&
		json_is_false(json_object_get(gpu_req(w), "exclusiveAccess"))) {
		/* shared: a restarted controller must hold it shared too */
		json_t *ann = json_object_get(json_object_get(job, "metadata"),
			"annotations");
		const json_t *m = json_object_get(gpu_req(w), "minGPUMemory");
		char mem[24];

		if (!m)
			m = json_object_get(json_object_get(w->obj, "spec"),
				"gpuMemoryRequired");
		snprintf(mem, sizeof mem, "%lld",
			(long long)json_number_value(m));
		json_object_set_new(ann, "canhazgpu.dev/exclusive",
			json_string("false"));
		json_object_set_new(ann, "canhazgpu.dev/memory-mib",
			json_string(mem));
	}
	msg = easprintf("placed on node %s by %s%s%s%s%s", p.node, p.strategy,
		from ? ", MIG " : "", from ? from : "",
		from ? " fell back to " : "", from ? p.mig_profile : "");
	now = now_rfc3339(0);
	s = json_pack("{s:s,s:s,s:O,s:s,s:o,s:s,s:i,s:s,s:s}", "phase",
		"Scheduled", "assignedNode", p.node, "devices", devs,
		"strategy", p.strategy, "requestedGPUs", requested(w),
		"jobName", str_at(w->obj, "metadata", "name"), "retries",
		w->retries, "lastTransitionTime", now, "message", msg);
	if (p.mig_profile)
		json_object_set_new(s, "migProfile",
			json_string(p.mig_profile));
	if (from)
		json_object_set_new(s, "fallbackFrom", json_string(from));
	free(msg);
	free(now);
	json_decref(devs);
	w->state = W_FLIGHT;
	json_decref(w->job);
	w->job = json_incref(job);
	json_decref(w->tmpl);
	w->tmpl = json_incref(tmpl);
	w->again = 0;
	set_status(w, s, tmpl, job);
}

/* waiting keeps w queued: it fits the cluster, just not now. */
static void
waiting(struct wl *w, const char *reason)
{
	char *msg = easprintf("waiting for capacity: %s", reason);
	json_t *s = json_pack("{s:s,s:i,s:o,s:s}", "phase", "Pending",
		"retries", w->retries, "requestedGPUs", requested(w), "message",
		msg);

	free(msg);
	set_status(w, s, NULL, NULL);
}

static void
pass(void)
{
	struct wl **q = NULL, *w;
	size_t n = 0, cap = 0, i, nplaced = 0, nwait = 0, nunsched = 0;
	const char *k, *rec, *end, *nl, *id, *why, *req;
	void *v;
	size_t pos = 0;
	double t0 = clock_mono();
	char *line, *r, *c;
	struct js_doc d = {0};
	int strat;

	S.dirty = 0;
	while (hm_next(S.wls, &pos, &k, &v)) {
		w = v;
		if (w->state != W_QUEUED)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			q = erealloc(q, cap * sizeof *q);
		}
		q[n++] = w;
	}
	if (opt.verbose)
		err_warn("pass: %zu waiting", n);
	if (!n) {
		free(q);
		return;
	}
	qsort(q, n, sizeof *q, queue_cmp);
	strat = S.cm_strategy ? sp_strategy_parse(S.cm_strategy) : opt.strategy;
	S.live.strategy = S.cap.strategy = strat;
	S.alen = 0;
	for (i = 0; i < n; i++) {
		req = request_for(q[i]);
		feed(&S.live, req, strlen(req), q[i]->key);
	}
	feed(&S.live, "{\"kind\":\"flush\"}", 16, "pass");
	/* the answers are parsed from a copy: could_fit appends to them */
	end = S.answers ? S.answers + S.alen : NULL;
	line = S.alen ? emalloc(S.alen + 1) : NULL;
	if (line)
		memcpy(line, S.answers, S.alen + 1);
	end = line ? line + S.alen : NULL;
	for (rec = line; rec && rec < end; rec = nl + 1) {
		nl = memchr(rec, '\n', (size_t)(end - rec));
		if (js_parse(&d, (char *)rec, (size_t)(nl - rec)) < 0)
			continue;
		id = js_str(&d, js_get(&d, 0, "id"));
		if (!id || !(w = hm_get(S.wls, id)))
			continue;
		if (js_str(&d, js_get(&d, 0, "kind")) &&
			!strcmp(js_str(&d, js_get(&d, 0, "kind")),
				"placement")) {
			placed(w, &d);
			nplaced++;
			continue;
		}
		why = js_str(&d, js_get(&d, 0, "reason")) ?: "unschedulable";
		r = strip_sig(why, w->sig);
		if (could_fit(w, w->req)) {
			nwait++;
			waiting(w, r);
		} else {
			if ((c = cause(w))) {
				free(r);
				r = c;
			}
			nunsched++;
			retry(w, r, "unschedulable");
		}
		free(r);
	}
	free(line);
	free(d.t);
	free(q);
	S.alen = 0;
	S.last_pass = clock_mono() - t0;
	for (i = 0; i < 11; i++)
		if (S.last_pass <= buckets[i])
			S.hist[i]++;
	S.hsum += S.last_pass;
	S.hcount++;
	S.metrics_dirty = 1;
	if (nplaced || nunsched)
		err_warn("strategy %s: %zu placed, %zu waiting for capacity, "
			 "%zu unschedulable",
			sp_strategy_name(strat), nplaced, nwait, nunsched);
}

/* due queues the workloads whose retry fell due by now, and finds when
 * the next one falls due. */
static void
due(double now)
{
	const char *k;
	void *v;
	size_t pos = 0;
	struct wl *w;

	S.next_due = HUGE_VAL;
	while (hm_next(S.wls, &pos, &k, &v)) {
		w = v;
		if (w->state != W_WAIT && w->state != W_AGAIN)
			continue;
		if (w->due <= now && w->state == W_AGAIN) {
			w->state = W_FLIGHT;
			give(T_APPLY, w->uid, json_incref(w->tmpl),
				json_incref(w->job),
				w->want ? status_obj(w, json_incref(w->want))
					: NULL);
		} else if (w->due <= now) {
			w->state = W_QUEUED;
			S.dirty = 1;
		} else if (w->due < S.next_due) {
			S.next_due = w->due;
		}
	}
}

/* ---- metrics and state files ---- */

static char *
state_path(const char *name)
{
	return easprintf("%s/%s", opt.statedir, name);
}

/* put_file writes text to statedir/name through a temporary file. */
static void
put_file(const char *name, const char *text, size_t len)
{
	char *path = state_path(name), *tmp = easprintf("%s.tmp", path);
	FILE *f = fopen(tmp, "w");

	if (!f || fwrite(text, 1, len, f) != len || fclose(f) == EOF) {
		err_warn("%s: cannot write:", tmp);
		if (f)
			fclose(f);
	} else if (rename(tmp, path) < 0) {
		err_warn("%s: rename:", tmp);
	}
	free(path);
	free(tmp);
}

static void
load_counters(void)
{
	char *path = state_path("counters.json");
	json_t *c = json_load_file(path, 0, NULL), *h, *v;
	const char *k;
	long *n;
	size_t i;

	free(path);
	if (!c)
		return;
	json_object_foreach(json_object_get(c, "scheduled"), k, v) {
		n = ecalloc(1, sizeof *n);
		*n = (long)json_integer_value(v);
		hm_put(S.scheduled, k, n);
	}
	h = json_object_get(c, "failed");
	S.failed_invalid = (long)json_integer_value(
		json_object_get(h, "invalid"));
	S.failed_unsched = (long)json_integer_value(
		json_object_get(h, "unschedulable"));
	S.failed_job = (long)json_integer_value(
		json_object_get(h, "job_failed"));
	S.retries = (long)json_integer_value(json_object_get(c, "retries"));
	h = json_object_get(c, "reconcile");
	json_array_foreach(json_object_get(h, "buckets"), i, v)
		if (i < 11)
			S.hist[i] = json_number_value(v);
	S.hsum = json_number_value(json_object_get(h, "sum"));
	S.hcount = (long)json_integer_value(json_object_get(h, "count"));
	json_decref(c);
}

static void
save_counters(void)
{
	struct jb b = {0};
	const char *k;
	void *v;
	size_t pos = 0, i;

	jb_raw(&b, "{\"scheduled\":{");
	while (hm_next(S.scheduled, &pos, &k, &v)) {
		if (b.buf[b.len - 1] != '{')
			jb_raw(&b, ",");
		jb_str(&b, k);
		jb_raw(&b, ":");
		jb_int(&b, *(long *)v);
	}
	jb_raw(&b, "},\"failed\":{\"invalid\":");
	jb_int(&b, S.failed_invalid);
	jb_raw(&b, ",\"unschedulable\":");
	jb_int(&b, S.failed_unsched);
	jb_raw(&b, ",\"job_failed\":");
	jb_int(&b, S.failed_job);
	jb_raw(&b, "},\"retries\":");
	jb_int(&b, S.retries);
	jb_raw(&b, ",\"reconcile\":{\"buckets\":[");
	for (i = 0; i < 11; i++) {
		if (i)
			jb_raw(&b, ",");
		jb_int(&b, (long long)S.hist[i]);
	}
	jb_raw(&b, "],\"sum\":");
	jb_real(&b, S.hsum);
	jb_raw(&b, ",\"count\":");
	jb_int(&b, S.hcount);
	jb_raw(&b, "}}\n");
	put_file("counters.json", b.buf, b.len);
	jb_free(&b);
}

static void
metric(struct jb *b, const char *name, const char *type, const char *help)
{
	jb_raw(b, "# HELP ");
	jb_raw(b, name);
	jb_raw(b, " ");
	jb_raw(b, help);
	jb_raw(b, "\n# TYPE ");
	jb_raw(b, name);
	jb_raw(b, " ");
	jb_raw(b, type);
	jb_raw(b, "\n");
}

static void
sample(struct jb *b, const char *name, const char *label, const char *value,
	double v)
{
	char num[JB_DTOA_SIZE];
	const char *p;

	jb_raw(b, name);
	if (label) {
		jb_raw(b, "{");
		jb_raw(b, label);
		jb_raw(b, "=\"");
		for (p = value; *p; p++) {
			char c[3] = {*p, 0, 0};

			if (*p == '\\' || *p == '"' || *p == '\n') {
				c[0] = '\\';
				c[1] = *p == '\n' ? 'n' : *p;
			}
			jb_raw(b, c);
		}
		jb_raw(b, "\"}");
	}
	jb_raw(b, " ");
	if (v == floor(v) && fabs(v) < 1e15)
		jb_int(b, (long long)v);
	else {
		jb_dtoa(v, num);
		jb_raw(b, num);
	}
	jb_raw(b, "\n");
}

static void
write_metrics(void)
{
	struct jb b = {0};
	size_t pos = 0, i, total = 0, avail = 0, pending = 0, running = 0,
	       queued = 0;
	double util = 0;
	const char *k, *ph;
	void *v;
	struct sp_node *n;
	struct sp_dev *dv;
	struct wl *w;
	char le[32];

	for (i = 0; i < S.live.nnodes; i++) {
		n = S.live.nodes[i];
		if (!hm_get(S.nodes, n->name))
			continue;
		for (size_t j = 0; j < n->ndevs; j++) {
			dv = n->devs[j];
			if (dv->prof == SP_NO_PROFILE)
				continue;
			total++;
			util += dv->util;
			if (dv->healthy && !dv->excl && !dv->nshared)
				avail++;
		}
	}
	while (hm_next(S.wls, &pos, &k, &v)) {
		w = v;
		ph = str_at(json_object_get(w->obj, "status"), "phase", NULL);
		if (!ph || !strcmp(ph, "Pending"))
			pending++;
		else if (!strcmp(ph, "Running"))
			running++;
		if (w->state == W_QUEUED || w->state == W_WAIT)
			queued++;
	}
	metric(&b, "agentaflow_gpu_total", "gauge",
		"GPUs and MIG devices the nodes publish.");
	sample(&b, "agentaflow_gpu_total", NULL, NULL, (double)total);
	metric(&b, "agentaflow_gpu_available", "gauge",
		"Devices neither allocated nor unhealthy.");
	sample(&b, "agentaflow_gpu_available", NULL, NULL, (double)avail);
	metric(&b, "agentaflow_gpu_utilization", "gauge",
		"Mean utilization of the GPUs, percent.");
	sample(&b, "agentaflow_gpu_utilization", NULL, NULL,
		total ? util / (double)total : 0);
	metric(&b, "agentaflow_workloads_pending", "gauge",
		"GPUWorkloads waiting to be placed.");
	sample(&b, "agentaflow_workloads_pending", NULL, NULL, (double)pending);
	metric(&b, "agentaflow_workloads_running", "gauge",
		"GPUWorkloads running.");
	sample(&b, "agentaflow_workloads_running", NULL, NULL, (double)running);
	metric(&b, "agentaflow_scheduling_duration", "gauge",
		"Seconds the last placement pass took.");
	sample(&b, "agentaflow_scheduling_duration", NULL, NULL, S.last_pass);
	metric(&b, "warp_gpuworkload_scheduled_total", "counter",
		"Workloads placed, by strategy.");
	pos = 0;
	while (hm_next(S.scheduled, &pos, &k, &v))
		sample(&b, "warp_gpuworkload_scheduled_total", "strategy", k,
			(double)*(long *)v);
	metric(&b, "warp_gpuworkload_failed_total", "counter",
		"Workloads that ended Failed, by reason.");
	sample(&b, "warp_gpuworkload_failed_total", "reason", "invalid",
		(double)S.failed_invalid);
	sample(&b, "warp_gpuworkload_failed_total", "reason", "job_failed",
		(double)S.failed_job);
	sample(&b, "warp_gpuworkload_failed_total", "reason", "unschedulable",
		(double)S.failed_unsched);
	metric(&b, "warp_gpuworkload_retries_total", "counter",
		"Placement attempts scheduled for a retry.");
	sample(&b, "warp_gpuworkload_retries_total", NULL, NULL,
		(double)S.retries);
	metric(&b, "warp_gpuworkload_reconcile_duration_seconds", "histogram",
		"Time of one placement pass.");
	for (i = 0; i < 11; i++) {
		jb_dtoa(buckets[i], le);
		sample(&b, "warp_gpuworkload_reconcile_duration_seconds_bucket",
			"le", le, S.hist[i]);
	}
	sample(&b, "warp_gpuworkload_reconcile_duration_seconds_bucket", "le",
		"+Inf", (double)S.hcount);
	sample(&b, "warp_gpuworkload_reconcile_duration_seconds_sum", NULL,
		NULL, S.hsum);
	sample(&b, "warp_gpuworkload_reconcile_duration_seconds_count", NULL,
		NULL, (double)S.hcount);
	metric(&b, "k8shazgpu_controller_queue_depth", "gauge",
		"Workloads waiting: for capacity or for a retry.");
	sample(&b, "k8shazgpu_controller_queue_depth", NULL, NULL,
		(double)queued);
	metric(&b, "k8shazgpu_controller_watch_events_total", "counter",
		"Watch events received, by resource.");
	for (i = 0; i < F_N; i++)
		sample(&b, "k8shazgpu_controller_watch_events_total",
			"resource", feed_name[i],
			(double)__atomic_load_n(&feeds[i].events,
				__ATOMIC_RELAXED));
	metric(&b, "k8shazgpu_controller_watch_lists_total", "counter",
		"Lists made: the first, after 410 Gone, and each resync.");
	for (i = 0; i < F_N; i++)
		sample(&b, "k8shazgpu_controller_watch_lists_total", "resource",
			feed_name[i],
			feeds[i].w ? (double)watch_lists(feeds[i].w) : 0);
	metric(&b, "k8shazgpu_controller_writes_total", "counter",
		"Writes to the API server, by result.");
	sample(&b, "k8shazgpu_controller_writes_total", "result", "error",
		(double)S.writes_err);
	sample(&b, "k8shazgpu_controller_writes_total", "result", "ok",
		(double)S.writes_ok);
	put_file("metrics", b.buf, b.len);
	jb_free(&b);
	save_counters();
	S.metrics_dirty = 0;
	S.metrics_at = clock_mono();
}

static void
touch_ready(void)
{
	char *path = state_path("ready");
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0 || futimens(fd, NULL) < 0)
		err_warn("%s:", path);
	if (fd >= 0)
		close(fd);
	free(path);
}

static void
load_rr(void)
{
	char *path = state_path("round-robin");
	json_t *s = json_load_file(path, 0, NULL);
	const char *last = str_at(s, "round_robin_last", NULL);

	if (last) {
		S.live.rr_last = estrdup(last);
	}
	json_decref(s);
	free(path);
}

static void
save_rr(char **saved)
{
	struct jb b = {0};

	if (!S.live.rr_last || (*saved && !strcmp(*saved, S.live.rr_last)))
		return;
	free(*saved);
	*saved = estrdup(S.live.rr_last);
	jb_raw(&b, "{\"kind\":\"sched-state\",\"round_robin_last\":");
	jb_str(&b, S.live.rr_last);
	jb_raw(&b, "}\n");
	put_file("round-robin", b.buf, b.len);
	jb_free(&b);
}

/* ---- start ---- */

static void
start_feed(int i, const char *resource, const char *ns, const char *label,
	const char *field)
{
	struct feed *f = &feeds[i];
	struct kube_resource r;
	struct kube_error e;
	struct watch_opts o = {0};
	double backoff = 0.5;
	struct kube *fresh;
	int missing = 0;

	f->i = i;
	f->digests = hm_new(free);
	if (kc_load(&f->kc, opt.kubeconfig, opt.context) < 0)
		exit(HAZ_FAIL);
	f->k = kube_new(&f->kc);
	while (kube_resolve(f->k, resource, &r, &e) < 0) {
		if (opt.once && e.kind == KUBE_ENORES)
			err_die(HAZ_FAIL, "%s: " NOT_SERVED, resource);
		if (opt.once)
			err_die(kube_exit_status(&e), "%s", e.msg);
		if (e.kind != KUBE_ENORES)
			err_warn("%s; trying again in %.0f s", e.msg, backoff);
		else if (!missing++)
			err_warn("%s: " NOT_SERVED "; trying again until it is",
				resource);
		sleep((unsigned)backoff);
		backoff = backoff * 2 > 30 ? 30 : backoff < 1 ? 1 : backoff * 2;
		if (e.kind == KUBE_ENORES) {
			/* the client keeps the discovery it fetched */
			fresh = kube_new(&f->kc);
			kube_free(f->k);
			f->k = fresh;
		}
	}
	if (missing)
		err_warn("%s: served now", resource);
	f->path = kube_path(&r, r.namespaced ? ns : NULL, NULL);
	kube_resource_free(&r);
	o.path = f->path;
	o.label_selector = label;
	o.field_selector = field;
	o.page_limit = 500;
	o.give_up = 1e9;
	o.verbose = opt.verbose;
	f->w = watch_new_raw(f->k, &o, i == F_POD ? on_pod_event : on_event, f);
	if (pthread_create(&f->th, NULL, feed_run, f) != 0)
		err_die(HAZ_FAIL, "pthread_create failed");
}

static void
start_writers(void)
{
	int i;

	for (i = 0; i < opt.writers; i++) {
		struct writer *w = &writers[i];

		pthread_mutex_init(&w->mu, NULL);
		pthread_cond_init(&w->cv, NULL);
		w->tail = &w->head;
		if (kc_load(&w->kc, opt.kubeconfig, opt.context) < 0)
			exit(HAZ_FAIL);
		w->k = kube_new(&w->kc);
		w->ap = ap_new(w->k, "k8shazgpu-controller", NULL);
		if (pthread_create(&w->th, NULL, writer_run, w) != 0)
			err_die(HAZ_FAIL, "pthread_create failed");
	}
}

static void *
signals(void *arg)
{
	sigset_t *set = arg;
	int sig;

	sigwait(set, &sig);
	_exit(HAZ_OK);
}

static void
help(void)
{
	fputs(USAGE, stdout);
	puts("  -1            list, make one pass, write, exit\n"
	     "  -S strategy   default strategy (least_utilized)\n"
	     "  -n namespace  only this namespace's GPUWorkloads and Jobs\n"
	     "  -m ns/name    the strategy ConfigMap "
	     "(canhazgpu-system/k8shazgpu-config)\n"
	     "  -T json       tolerations every Job's pods get (a JSON array)\n"
	     "  -I image      image of a workload that names none\n"
	     "  -B seconds    longest wait before a retry (300)\n"
	     "  -r seconds    list everything again this often (600)\n"
	     "  -w writers    threads writing to the API server (4)\n"
	     "  -d statedir   metrics, counters, readiness, round-robin "
	     "position\n"
	     "  -A mode       extended: nvidia.com/ resources (the default); "
	     "dra: a\n"
	     "                ResourceClaimTemplate per workload "
	     "(K8SHAZGPU_ALLOCATION)\n"
	     "  -v            say when watches connect\n"
	     "  -h, -V        help, version");
}

static void
usage(void)
{
	fputs(USAGE, stderr);
	exit(HAZ_USAGE);
}

static double
seconds_arg(const char *flag, const char *s, double min)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !(v >= min) || v > 1e9) {
		err_warn("%s %s: not a number of seconds >= %g", flag, s, min);
		usage();
	}
	return v;
}

static void
parse_opts(int argc, char **argv)
{
	static const struct option longs[] = {
		{"context", required_argument, NULL, 'C'},
		{"kubeconfig", required_argument, NULL, 'K'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *cm = "canhazgpu-system/k8shazgpu-config", *tol = "[]";
	const char *alloc = getenv("K8SHAZGPU_ALLOCATION"), *alloc_from = "-A ";
	json_error_t je;
	char *slash, *end;
	int c;

	opt.image = "nvidia/cuda:12.4.1-base-ubuntu22.04";
	opt.max_backoff = 300;
	opt.resync = 600;
	opt.writers = 4;
	opt.statedir = ".";
	if (alloc && *alloc)
		alloc_from = "K8SHAZGPU_ALLOCATION=";
	else
		alloc = "extended";
	while ((c = getopt_long(argc, argv, "1vS:n:m:T:I:B:r:w:d:A:hV", longs,
			NULL)) != -1) {
		switch (c) {
		case '1': opt.once = 1; break;
		case 'v': opt.verbose = 1; break;
		case 'S':
			if ((opt.strategy = sp_strategy_parse(optarg)) < 0) {
				err_warn("-S %s: unknown strategy", optarg);
				usage();
			}
			break;
		case 'n': opt.ns = *optarg ? optarg : NULL; break;
		case 'm': cm = optarg; break;
		case 'T': tol = optarg; break;
		case 'I': opt.image = optarg; break;
		case 'B': opt.max_backoff = seconds_arg("-B", optarg, 1); break;
		case 'r': opt.resync = seconds_arg("-r", optarg, 10); break;
		case 'w':
			errno = 0;
			opt.writers = (int)strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || opt.writers < 1 ||
				opt.writers > MAX_WRITERS) {
				err_warn("-w %s: a number from 1 to %d", optarg,
					MAX_WRITERS);
				usage();
			}
			break;
		case 'd': opt.statedir = optarg; break;
		case 'A':
			alloc = optarg;
			alloc_from = "-A ";
			break;
		case 'C': opt.context = optarg; break;
		case 'K': opt.kubeconfig = optarg; break;
		case 'h': help(); exit(HAZ_OK);
		case 'V': puts("sched-queue " HAZ_VERSION); exit(HAZ_OK);
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (strcmp(alloc, "dra") && strcmp(alloc, "extended")) {
		err_warn("%s%s: not extended or dra", alloc_from, alloc);
		usage();
	}
	opt.dra = !strcmp(alloc, "dra");
	if (opt.dra)
		opt.chains = migchain_default();
	opt.tol = json_loads(tol, 0, &je);
	if (!json_is_array(opt.tol)) {
		err_warn("-T: not a JSON array of tolerations: %s",
			opt.tol ? "not an array" : je.text);
		usage();
	}
	slash = strchr(cm, '/');
	if (!slash || slash == cm || !slash[1]) {
		err_warn("-m %s: expected namespace/name", cm);
		usage();
	}
	opt.cm_ns = strndup(cm, (size_t)(slash - cm));
	opt.cm_name = slash + 1;
}

int
main(int argc, char **argv)
{
	sigset_t set;
	pthread_t sigth;
	struct ev *list, *e;
	double next, ready_at = 0, now;
	char *cm_field, *rr = NULL;
	const char *wl_resource = getenv("K8SHAZGPU_WORKLOAD_RESOURCE");
	int passed = 0;

	err_init(argv[0]);
	parse_opts(argc, argv);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (pthread_create(&sigth, NULL, signals, &set) != 0)
		err_die(HAZ_FAIL, "pthread_create failed");

	S.wls = hm_new(wl_free_);
	S.jobs = hm_new(job_free);
	S.nodes = hm_new(knode_free);
	S.sigs = hm_new(NULL);
	S.job_owner = hm_new(free);
	inflight = hm_new(free);
	S.scheduled = hm_new(free);
	S.next_due = HUGE_VAL;
	sp_init(&S.live, &spx_ops, opt.strategy, 1);
	sp_init(&S.cap, &spx_ops, opt.strategy, 1);
	S.live.emit = S.cap.emit = collect;
	load_counters();
	load_rr();

	start_writers();
	if (!wl_resource || !*wl_resource)
		wl_resource = WORKLOADS;
	start_feed(F_WL, wl_resource, opt.ns, NULL, NULL);
	start_feed(F_NODE, "nodes", NULL, NULL, NULL);
	start_feed(F_JOB, "jobs.batch", opt.ns, "canhazgpu.dev/workload", NULL);
	cm_field = easprintf("metadata.name=%s", opt.cm_name);
	start_feed(F_CM, "configmaps", opt.cm_ns, NULL, cm_field);
	start_feed(F_POD, "pods", opt.ns, "canhazgpu.dev/workload", NULL);

	for (;;) {
		now = clock_mono();
		next = now + 3600;
		if (all_synced())
			next = ready_at + READY_EVERY;
		if (S.metrics_dirty && S.metrics_at + METRICS_EVERY < next)
			next = S.metrics_at + METRICS_EVERY;
		if (S.next_due < next)
			next = S.next_due;
		if (S.dirty && all_synced())
			next = now;
		list = take(next);
		while ((e = list)) {
			list = e->next;
			switch (e->feed) {
			case F_WL:
				if (e->type != 'S')
					on_workload(e->type, e->obj);
				break;
			case F_NODE:
				if (e->type != 'S')
					on_node(e->type, e->obj);
				break;
			case F_JOB:
				if (e->type != 'S')
					on_job(e->type, e->obj);
				break;
			case F_CM:
				if (e->type != 'S')
					on_configmap(e->type, e->obj);
				break;
			case F_POD:
				if (e->type != 'S')
					on_pod(e->uid);
				break;
			case F_RESULT: on_result(e); break;
			}
			if (e->feed < F_N && e->type == 'S') {
				if (!(S.synced & (1 << e->feed)) && opt.verbose)
					err_warn("%s listed",
						feed_name[e->feed]);
				S.synced |= 1 << e->feed;
				S.dirty = 1;
			}
			if (e->feed < F_N && e->type == 'E') {
				err_warn("%s", e->msg);
				exit(e->temp ? HAZ_TEMP : HAZ_FAIL);
			}
			ev_free(e);
		}
		now = clock_mono();
		if (now >= S.next_due)
			due(now);
		if (!all_synced())
			continue;
		if (S.dirty) {
			pass();
			passed = 1;
			save_rr(&rr);
		}
		if (S.metrics_dirty && now >= S.metrics_at + METRICS_EVERY)
			write_metrics();
		if (now >= ready_at + READY_EVERY) {
			orphans();
			touch_ready();
			ready_at = now;
		}
		if (opt.once && passed && !busy) {
			write_metrics();
			return S.temp ? HAZ_TEMP : S.failed ? HAZ_FAIL : HAZ_OK;
		}
	}
}
