/* sched-queue: the controller's engine. It keeps the cluster's state from
 * watches, queues GPUWorkloads, places them with sched-pick's engine and
 * writes Jobs and status; only what changed, only when something changed.
 *
 *   sched-queue [-1v] [-S strategy] [-n namespace] [-m ns/name]
 *               [-T tolerations] [-I image] [-B seconds] [-r seconds]
 *               [-w writers] [-d statedir] [-A extended|dra]
 *               [--context name] [--kubeconfig file]
 *   sched-queue -f events [-v] [-S strategy] [-m ns/name] [-T tolerations]
 *               [-I image] [-B seconds] [-A extended|dra]
 *
 * The decisions are lib/sqe's (sqe.h): this file is its shell, the
 * watches that feed it, the writer threads that carry out the writes it
 * emits, and its state files. With -f it talks to no API server: the
 * records of the file (- for stdin) are events, results, clock settings
 * and passes, and the writes the engine decides on are printed, one JSON
 * record a line (sched-queue(1), Replay).
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
 * Nothing is placed until every watch has listed once, then each change
 * makes one pass; what a pass decides (placed, waiting, retried with
 * backoff and jitter, Failed) is sqe.h's, "Passes".
 *
 * Writes go through -w writer threads (default 4), each workload's
 * always through the same one, in order, each on a connection of its
 * own that it keeps (kube_keep). Every -r seconds (default 600)
 * each watch lists again as a safety net; nothing else runs while
 * nothing happens.
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
 * API server could not be reached. With -f: 0, or 1 when a record was
 * bad (named by its line) or the file could not be read. 2 on bad
 * usage. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "ck.h"
#include "clock.h"
#include "err.h"
#include "fnv.h"
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
#include "sqe.h"
#include "watch.h"

#define USAGE                                                                  \
	"usage: sched-queue [-1v] [-S strategy] [-n namespace] [-m ns/name] "  \
	"[-T tolerations]\n"                                                   \
	"                   [-I image] [-B seconds] [-r seconds] [-w "         \
	"writers] [-d statedir]\n"                                             \
	"                   [-A extended|dra] [--context name] "               \
	"[--kubeconfig file]\n"                                                \
	"       sched-queue -f events [-v] [-S strategy] [-m ns/name] "        \
	"[-T tolerations]\n"                                                   \
	"                   [-I image] [-B seconds] [-A extended|dra]\n"

enum { F_RESULT = SQE_NFEEDS };

#define MAX_WRITERS 16
#define READY_EVERY 20.0
#define METRICS_EVERY 1.0
#define WORKLOADS "gpuworkloads.canhazgpu.dev"
#define NOT_SERVED                                                             \
	"the resource is not served (is the CRD installed? kubectl apply -k "  \
	"manifests/)"

/* ---- options ---- */

static struct {
	int once, verbose;
	int strategy;
	const char *ns;
	char *cm_ns;
	const char *cm_name;
	json_t *tol;
	const char *image;
	double max_backoff;
	double resync;
	int writers;
	const char *statedir;
	const char *context, *kubeconfig;
	int dra;                 /* -A dra: devices by claims */
	struct migchain *chains; /* dra: the fallback chains */
	const char *replay;      /* -f: the events to replay */
} opt;

static struct sqe *E; /* the engine: the main thread's alone */

/* ---- the event queue ---- */

struct ev {
	struct ev *next;
	int feed;  /* SQE_*, or F_RESULT */
	char type; /* 'A'dded, 'M'odified, 'D'eleted, 'S'ynced, 'E'rror */
	json_t *obj;
	char *uid;           /* SQE_PODS: the uid of the ended pod's Job */
	struct sqe_result r; /* F_RESULT: the answer to one write */
	char *msg;           /* its message; 'E': the error's */
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
		ts = clock_after(left > 3600 ? 3600 : left);
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
	struct js_doc doc;  /* SQE_PODS, SQE_NODES: the event's object */
	struct hm *digests; /* SQE_NODES: name -> uint64_t, passed on last */
};
static struct feed feeds[SQE_NFEEDS];

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

/* node_unchanged says whether the Node event in d changes nothing of what
 * placement reads since the last one passed on: a heartbeat is dropped
 * here, in the watch's thread, before any object is built. */
static int
node_unchanged(struct feed *f, const char *type, const struct js_doc *d)
{
	int md = js_raw_get(d, 0, "metadata");
	uint64_t h, *old;
	char *name;

	if (md < 0 || !(name = js_raw_str(d, js_raw_get(d, md, "name"))))
		return 0;
	if (type[0] == 'D') {
		hm_del(f->digests, name);
		free(name);
		return 0;
	}
	h = nf_digest_raw(d);
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

/* on_event builds the object of an event, as far as the engine reads it
 * (sqe_load), and queues it for the main thread. */
static int
on_event(const char *type, const char *js, size_t len, void *arg)
{
	struct feed *f = arg;
	struct ev *e;
	json_error_t je;
	json_t *obj;

	__atomic_add_fetch(&f->events, 1, __ATOMIC_RELAXED);
	if (f->i == SQE_NODES && js_scan(&f->doc, js, len) == 0 &&
		f->doc.t[0].type == JS_OBJECT &&
		node_unchanged(f, type, &f->doc))
		return 0;
	obj = sqe_load(f->i, js, len, &je);
	if (!obj) {
		err_warn("%s: an object that is no JSON: %s",
			sqe_feed_name[f->i], je.text);
		return 0;
	}
	e = ecalloc(1, sizeof *e);
	e->feed = f->i;
	e->type = type[0];
	e->obj = obj;
	post(e);
	return 0;
}

/* feed_listed says that a list went through: the first makes the
 * feed's state complete. */
static void
feed_listed(void *arg, int first)
{
	struct feed *f = arg;
	struct ev *s = ecalloc(1, sizeof *s);

	(void)first;
	s->feed = f->i;
	s->type = 'S';
	post(s);
}

/* feed_run lists, then watches for ever, listing again every -r seconds
 * as a safety net; with -1 it posts the error a first list ends with. */
static void *
feed_run(void *arg)
{
	struct feed *f = arg;
	struct watch_loop l = {.name = sqe_feed_name[f->i],
		.turn = opt.resync,
		.relist = 1,
		.once = opt.once,
		.verbose = opt.verbose,
		.listed = feed_listed,
		.arg = f};
	struct kube_error e;
	struct ev *s;

	if (watch_loop(f->w, &l, &e) < 0) {
		s = ecalloc(1, sizeof *s);
		s->feed = f->i;
		s->type = 'E';
		s->r.temporary = e.kind == KUBE_ETEMP;
		s->msg = estrdup(e.msg);
		post(s);
	}
	return NULL;
}

/* ---- writers ---- */

struct task {
	struct task *next;
	char *rec; /* a write record of the engine's (sqe.h), as compact
		    * JSON: a burst of writes waits as text, not as trees */
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
/* how many writers are through warm() */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int n;
} warmth = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

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

/* carry_out does write rec, answering r; returns the last answer of the
 * API server, or NULL when a step failed (e says why). */
static json_t *
carry_out(struct writer *w, const json_t *rec, struct sqe_result *r,
	struct kube_error *e)
{
	const json_t *tmpl = json_object_get(rec, "template"),
		     *job = json_object_get(rec, "job"),
		     *status = json_object_get(rec, "status");
	json_t *res;

	if (!strcmp(json_string_value(json_object_get(rec, "verb")), "delete"))
		return delete_job_now(w, job, e);
	res = tmpl ? apply_template(w, tmpl, e) : json_null();
	if (res && job) {
		json_decref(res);
		res = ap_apply(w->ap, job, e);
		r->job_written = res != NULL;
	}
	if (res && status) {
		json_decref(res);
		res = ap_apply(w->ap, status, e);
	}
	return res;
}

/* warm resolves, once at start, the path of a Job: the writer's
 * connection and the server's discovery are made before the first
 * placement, which then waits for neither. A failure is left to the
 * writes, which say it. */
static void
warm(struct writer *w)
{
	json_t *job = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion",
		"batch/v1", "kind", "Job", "metadata", "namespace", "default",
		"name", "x");
	struct kube_error e;

	free(ap_path(w->ap, job, 1, &e));
	json_decref(job);
	pthread_mutex_lock(&warmth.mu);
	warmth.n++;
	pthread_cond_signal(&warmth.cv);
	pthread_mutex_unlock(&warmth.mu);
}

static void *
writer_run(void *arg)
{
	struct writer *w = arg;
	struct kube_error e;
	struct task *t;
	struct ev *r;
	json_t *res, *rec;

	warm(w);
	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (!w->head)
			pthread_cond_wait(&w->cv, &w->mu);
		t = w->head;
		w->head = t->next;
		if (!w->head)
			w->tail = &w->head;
		pthread_mutex_unlock(&w->mu);

		if (!(rec = jl_loadb(t->rec, strlen(t->rec), 0, NULL)))
			err_die(HAZ_FAIL, "a write record does not read back");
		free(t->rec);
		free(t);
		r = ecalloc(1, sizeof *r);
		r->feed = F_RESULT;
		r->r.write = (long)json_integer_value(
			json_object_get(rec, "write"));
		r->r.ok = 1;
		if (!(res = carry_out(w, rec, &r->r, &e))) {
			r->r.ok = 0;
			r->r.code = e.status;
			r->r.temporary = e.kind == KUBE_ETEMP;
			r->msg = estrdup(e.msg);
		}
		json_decref(res);
		json_decref(rec);
		post(r);
	}
	return NULL;
}

/* give hands write rec (taken) to its workload's writer: always the same
 * one, so that a workload's writes land in the order made. */
static void
give(void *arg, json_t *rec)
{
	struct task *t = ecalloc(1, sizeof *t);
	const char *uid = json_string_value(json_object_get(rec, "uid"));
	struct writer *w;

	(void)arg;
	w = &writers[fnv_64(FNV64_BASIS, uid, strlen(uid)) %
		(unsigned)opt.writers];
	t->rec = jb_dumps(rec);
	json_decref(rec);
	pthread_mutex_lock(&w->mu);
	*w->tail = t;
	w->tail = &t->next;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* ---- metrics and state files ---- */

static double metrics_at;

static char *
state_path(const char *name)
{
	return easprintf("%s/%s", opt.statedir, name);
}

/* put_file writes text to statedir/name whole, or not at all. */
static void
put_file(const char *name, const char *text, size_t len)
{
	char *path = state_path(name);

	if (ck_write_atomic(path, text, len) < 0)
		err_warn("%s: cannot write:", path);
	free(path);
}

/* load_counters restores the counters of counters.json, when there is
 * one. */
static void
load_counters(void)
{
	char *path = state_path("counters.json");
	json_t *j = json_load_file(path, 0, NULL);

	free(path);
	sqe_metrics_load(E, j);
	json_decref(j);
}

static void
write_metrics(void)
{
	struct sqe_counters *c = sqe_counters(E);
	struct sqe_watches ws;
	char *buf;
	size_t len, i;

	for (i = 0; i < SQE_NFEEDS; i++) {
		ws.events[i] = __atomic_load_n(&feeds[i].events,
			__ATOMIC_RELAXED);
		ws.lists[i] = feeds[i].w ? watch_lists(feeds[i].w) : 0;
	}
	buf = sqe_metrics(E, &ws, &len);
	put_file("metrics", buf, len);
	free(buf);
	buf = sqe_metrics_save(E, &len);
	put_file("counters.json", buf, len);
	free(buf);
	c->changed = 0;
	metrics_at = clock_mono();
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
	const char *last = json_string_value(
		json_object_get(s, "round_robin_last"));

	if (last)
		sqe_set_rr_last(E, last);
	json_decref(s);
	free(path);
}

static void
save_rr(char **saved)
{
	struct jb b = {0};
	const char *last = sqe_rr_last(E);

	if (!last || (*saved && !strcmp(*saved, last)))
		return;
	free(*saved);
	*saved = estrdup(last);
	jb_raw(&b, "{\"kind\":\"sched-state\",\"round_robin_last\":");
	jb_str(&b, last);
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
	o.no_last = 1; /* the engine keeps what it reads */
	f->w = watch_new_raw(f->k, &o, i == SQE_PODS ? on_pod_event : on_event,
		f);
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
		/* small writes, one after another: no libcurl transfer each */
		kube_keep(w->k);
		w->ap = ap_new(w->k, "k8shazgpu-controller", NULL);
		if (pthread_create(&w->th, NULL, writer_run, w) != 0)
			err_die(HAZ_FAIL, "pthread_create failed");
	}
}

/* wait_warm waits up to seconds for the writers to be through warm():
 * the memory they take for good is then there before the controller
 * says it is ready, and the first writes find their connections. */
static void
wait_warm(double seconds)
{
	struct timespec ts = clock_after(seconds);

	pthread_mutex_lock(&warmth.mu);
	while (warmth.n < opt.writers &&
		pthread_cond_timedwait(&warmth.cv, &warmth.mu, &ts) == 0)
		;
	pthread_mutex_unlock(&warmth.mu);
}

static void
start_feeds(void)
{
	const char *wl_resource = getenv("K8SHAZGPU_WORKLOAD_RESOURCE");
	char *cm_field;

	if (!wl_resource || !*wl_resource)
		wl_resource = WORKLOADS;
	start_feed(SQE_WORKLOADS, wl_resource, opt.ns, NULL, NULL);
	start_feed(SQE_NODES, "nodes", NULL, NULL, NULL);
	start_feed(SQE_JOBS, "jobs.batch", opt.ns, "canhazgpu.dev/workload",
		NULL);
	cm_field = easprintf("metadata.name=%s", opt.cm_name);
	start_feed(SQE_CONFIGMAPS, "configmaps", opt.cm_ns, NULL, cm_field);
	start_feed(SQE_PODS, "pods", opt.ns, "canhazgpu.dev/workload", NULL);
}

static void *
signals(void *arg)
{
	sigset_t *set = arg;
	int sig;

	sigwait(set, &sig);
	_exit(HAZ_OK);
}

/* ---- options ---- */

static void
help(void)
{
	fputs(USAGE, stdout);
	puts("  -1            list, make one pass, write, exit\n"
	     "  -f events     replay events (- for stdin) and print the writes; "
	     "no\n"
	     "                API server is asked (sched-queue(1), Replay)\n"
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

static int
writers_arg(const char *s)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (!*s || *end || errno || n < 1 || n > MAX_WRITERS) {
		err_warn("-w %s: a number from 1 to %d", s, MAX_WRITERS);
		usage();
	}
	return (int)n;
}

/* check_opts checks what the options left to be read together. */
static void
check_opts(const char *alloc, const char *alloc_from, const char *tol,
	const char *cm)
{
	json_error_t je;
	const char *slash;

	if (strcmp(alloc, "dra") && strcmp(alloc, "extended")) {
		err_warn("%s%s: not extended or dra", alloc_from, alloc);
		usage();
	}
	opt.dra = !strcmp(alloc, "dra");
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
	if (opt.dra)
		opt.chains = migchain_default();
	opt.cm_ns = strndup(cm, (size_t)(slash - cm));
	opt.cm_name = slash + 1;
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
	while ((c = getopt_long(argc, argv, "1vf:S:n:m:T:I:B:r:w:d:A:hV", longs,
			NULL)) != -1) {
		switch (c) {
		case '1': opt.once = 1; break;
		case 'v': opt.verbose = 1; break;
		case 'f': opt.replay = optarg; break;
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
		case 'w': opt.writers = writers_arg(optarg); break;
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
	check_opts(alloc, alloc_from, tol, cm);
}

static struct sqe *
engine(void (*emit)(void *, json_t *))
{
	struct sqe_opts o = {0};

	o.strategy = opt.strategy;
	o.tol = opt.tol;
	o.image = opt.image;
	o.max_backoff = opt.max_backoff;
	o.dra = opt.dra;
	o.chains = opt.chains;
	o.cm_ns = opt.cm_ns;
	o.cm_name = opt.cm_name;
	o.verbose = opt.verbose;
	o.seed = 1;
	o.emit = emit;
	return sqe_new(&o);
}

/* ---- replay ---- */

static void
print_write(void *arg, json_t *rec)
{
	(void)arg;
	nd_write(rec);
	json_decref(rec);
}

/* replay applies the records of opt.replay, printing the writes. */
static int
replay(void)
{
	struct nd_reader r;
	json_t *rec;
	char why[160];
	int rc;

	if (nd_open(&r, opt.replay, 0) < 0)
		return HAZ_FAIL;
	E = engine(print_write);
	while ((rc = nd_read(&r, &rec)) != 0) {
		if (rc < 0)
			continue;
		if (sqe_rec_apply(E, rec, why, sizeof why) < 0)
			nd_warn(&r, "%s", why);
		json_decref(rec);
	}
	rc = r.failed ? HAZ_FAIL : HAZ_OK;
	nd_close(&r);
	sqe_free(E);
	migchain_free(opt.chains);
	json_decref(opt.tol);
	free(opt.cm_ns);
	return nd_finish(rc);
}

/* ---- the loop ---- */

/* apply_event gives event e to the engine; an error of a one-pass run
 * ends it. */
static void
apply_event(struct ev *e, int *listed)
{
	if (e->feed == F_RESULT) {
		e->r.message = e->msg;
		sqe_result(E, &e->r);
	} else if (e->type == 'S') {
		if (!(*listed & (1 << e->feed)) && opt.verbose)
			err_warn("%s listed", sqe_feed_name[e->feed]);
		*listed |= 1 << e->feed;
		sqe_synced(E, e->feed);
	} else if (e->type == 'E') {
		err_warn("%s", e->msg);
		exit(e->r.temporary ? HAZ_TEMP : HAZ_FAIL);
	} else if (e->feed == SQE_PODS) {
		sqe_pod_ended(E, e->uid);
	} else {
		sqe_event(E, e->feed, e->type, e->obj);
	}
}

static void
tick(void)
{
	sqe_set_time(E, clock_mono(), (double)time(NULL));
}

/* until returns when the loop has something to do next. */
static double
until(double ready_at)
{
	double now = clock_mono(), next = now + 3600;

	if (sqe_all_synced(E))
		next = ready_at + READY_EVERY;
	if (sqe_counters(E)->changed && metrics_at + METRICS_EVERY < next)
		next = metrics_at + METRICS_EVERY;
	if (sqe_next_due(E) < next)
		next = sqe_next_due(E);
	if (sqe_dirty(E) && sqe_all_synced(E))
		next = now;
	return next;
}

static int
run(void)
{
	struct ev *list, *e;
	double ready_at = 0, now, t0;
	char *rr = NULL;
	int passed = 0, listed = 0, n;

	for (;;) {
		list = take(until(ready_at));
		tick();
		while ((e = list)) {
			list = e->next;
			apply_event(e, &listed);
			ev_free(e);
		}
		tick();
		sqe_pass_due(E);
		if (!sqe_all_synced(E))
			continue;
		t0 = now = clock_mono();
		if ((n = sqe_pass(E)) >= 0) {
			if (n > 0)
				sqe_metrics_pass(E, clock_mono() - t0);
			passed = 1;
			save_rr(&rr);
		}
		if (sqe_counters(E)->changed &&
			now >= metrics_at + METRICS_EVERY)
			write_metrics();
		if (now >= ready_at + READY_EVERY) {
			sqe_job_orphans(E);
			touch_ready();
			ready_at = now;
		}
		if (opt.once && passed && !sqe_busy(E)) {
			write_metrics();
			return sqe_exit_status(E);
		}
	}
}

int
main(int argc, char **argv)
{
	sigset_t set;
	pthread_t sigth;

	err_init(argv[0]);
	/* jansson draws its hash seed here, before any thread starts */
	json_object_seed(0);
#ifdef M_ARENA_MAX
	/* the watch threads build what the main thread frees: two arenas
	 * keep that from leaving free memory stranded in one per thread */
	mallopt(M_ARENA_MAX, 2);
#endif
	parse_opts(argc, argv);
	if (opt.replay)
		return replay();
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (pthread_create(&sigth, NULL, signals, &set) != 0)
		err_die(HAZ_FAIL, "pthread_create failed");

	E = engine(give);
	load_counters();
	load_rr();
	start_writers();
	wait_warm(5);
	start_feeds();
	return run();
}
