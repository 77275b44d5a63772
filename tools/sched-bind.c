/* sched-bind: a secondary Kubernetes scheduler for GPU pods.
 *
 * usage: sched-bind [-1v] [-S strategy] [-N scheduler-name] [-i seconds]
 *                   [--context name] [--kubeconfig file]
 *        sched-bind [-v] [-S strategy] [-N scheduler-name]
 *                   -j nodes pods slices claims
 *
 * Places the pods whose spec.schedulerName is ours (k8shazgpu, or
 * $K8SHAZGPU_SCHEDULER_NAME, or -N) and that have no node yet. A pass
 * lists Nodes, Pods, ResourceSlices and ResourceClaims and decides every
 * such pod (lib/bind.h: priority order, node filter, the sched engine's
 * strategies, DRA claims and extended resources), then writes, pod by
 * pod: the status of each claim it allocates or reserves (with the
 * resourceVersion listed: a conflict leaves the pod to the next pass),
 * the pod's canhazgpu.dev/devices annotation, and its Binding. Warning
 * events (FailedScheduling) say why a pod waits or what annotation or
 * claim request is wrong; a Normal Scheduled event follows a binding.
 *
 * With -1 one pass runs at once, and sched-bind exits. Otherwise a pass
 * runs only while a pod of ours waits for a node (the pod watch's first
 * list tells of those there at start): ~200 ms after such a pod comes or
 * any Pod, ResourceClaim, ResourceSlice or Node watch event while one
 * waits, and every -i seconds (default 10) while one does. With none
 * waiting nothing is listed. -j reads the four lists from files instead (a List
 * object or an array each) and prints what a pass would do, writing
 * nothing: decisions, then "event" and "claim" records.
 *
 * stdout, one record per decision (a pod's unschedulable reason only
 * when it changed, unless -1):
 *   {"kind":"bind","pod":"ns/name","node","devices":[uuid...],
 *    "strategy","priority"}
 *   {"kind":"unschedulable","pod","reason"}
 *
 * Exit: 0; 1 a write failed (-1) or a -j file is unreadable; 2 usage;
 * 75 the API server is unreachable (-1, or at start). */
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bind.h"
#include "clock.h"
#include "err.h"
#include "hmap.h"
#include "jscan.h"
#include "kube.h"
#include "kubeconfig.h"
#include "nd.h"
#include "sched.h"
#include "watch.h"

#define USAGE                                                                  \
	"usage: sched-bind [-1v] [-S strategy] [-N scheduler-name] "           \
	"[-i seconds]\n"                                                       \
	"                  [--context name] [--kubeconfig file]\n"             \
	"       sched-bind [-v] [-S strategy] [-N scheduler-name] "            \
	"-j nodes pods slices claims\n"

#define DRA "/apis/resource.k8s.io/v1"

static struct {
	int once, verbose, snapshot;
	double interval;
	struct bind_opts b;
	const char *context, *kubeconfig;
} opt;

static struct kube *K;
static char *rr_last;   /* round_robin's position, for every pass */
static struct hm *said; /* pod uid -> the last warning said of it */

static void
help(void)
{
	fputs(USAGE, stdout);
	puts("  -1           one pass, then exit\n"
	     "  -i SECONDS   seconds between passes without events (10)\n"
	     "  -j           read nodes, pods, slices, claims from files; "
	     "write nothing\n"
	     "  -N NAME      scheduler name (K8SHAZGPU_SCHEDULER_NAME, else "
	     "k8shazgpu)\n"
	     "  -S NAME      strategy of pods without the annotation\n"
	     "               agentaflow.gpu/scheduling-strategy "
	     "(least_utilized)\n"
	     "  -v           say each pass on stderr\n"
	     "  --context NAME, --kubeconfig FILE   which cluster");
}

static void __attribute__((noreturn)) usage(void)
{
	fputs(USAGE, stderr);
	exit(HAZ_USAGE);
}

/* ---- lists ---- */

/* slim takes out of a listed object what no decision reads (lib/bind*):
 * every object's managedFields; a Node's image list; of a Pod its
 * statuses and volumes, and of each container all but its name,
 * resources and restartPolicy. A pass holds the cluster's Pods at once:
 * what is left of one is a fraction of it. */
enum { L_NODES, L_PODS, L_SLICES, L_CLAIMS };

static void
slim(json_t *o, int list)
{
	static const char *const pod_status[] = {"conditions",
		"containerStatuses", "initContainerStatuses",
		"ephemeralContainerStatuses", "podIPs", "hostIPs", NULL};
	static const char *const lists[] = {"containers", "initContainers",
		"ephemeralContainers", NULL};
	json_t *spec = json_object_get(o, "spec"), *st, *c, *k;
	const char *key;
	void *tmp;
	size_t i, j;

	json_object_del(json_object_get(o, "metadata"), "managedFields");
	if (list == L_NODES)
		json_object_del(json_object_get(o, "status"), "images");
	if (list != L_PODS)
		return;
	st = json_object_get(o, "status");
	for (i = 0; pod_status[i]; i++)
		json_object_del(st, pod_status[i]);
	json_object_del(spec, "volumes");
	for (i = 0; lists[i]; i++)
		json_array_foreach(json_object_get(spec, lists[i]), j, c)
			json_object_foreach_safe(c, tmp, key, k)
				if (strcmp(key, "name") &&
					strcmp(key, "resources") &&
					strcmp(key, "restartPolicy"))
					json_object_del(c, key);
}

/* ---- snapshot mode ---- */

static json_t *
items(const char *path, int *status)
{
	json_error_t je;
	json_t *j = json_load_file(path, JSON_DECODE_ANY, &je), *v;

	if (!j) {
		err_warn("%s: %s", path, je.text);
		*status = HAZ_FAIL;
		return json_array();
	}
	v = json_is_array(j) ? j : json_object_get(j, "items");
	if (!json_is_array(v)) {
		err_warn("%s: neither a List nor an array", path);
		*status = HAZ_FAIL;
		json_decref(j);
		return json_array();
	}
	json_incref(v);
	json_decref(j);
	return v;
}

static void
print_action(const json_t *a)
{
	const json_t *e, *c;
	size_t i;
	json_t *r;

	nd_write(json_object_get(a, "decision"));
	json_array_foreach(json_object_get(a, "events"), i, e) {
		r = json_pack("{s:s,s:O,s:O,s:O,s:O}", "kind", "event", "pod",
			json_object_get(json_object_get(a, "decision"), "pod"),
			"type", json_object_get(e, "type"), "reason",
			json_object_get(e, "reason"), "message",
			json_object_get(e, "message"));
		nd_write(r);
		json_decref(r);
	}
	json_array_foreach(json_object_get(a, "claims"), i, c) {
		const json_t *st = json_object_get(c, "status");
		const json_t *md = json_object_get(c, "metadata");
		char *k = easprintf("%s/%s",
			json_string_value(json_object_get(md, "namespace")),
			json_string_value(json_object_get(md, "name")));

		r = json_pack("{s:s,s:s,s:O,s:O}", "kind", "claim", "claim", k,
			"allocation", json_object_get(st, "allocation"),
			"reservedFor", json_object_get(st, "reservedFor"));
		nd_write(r);
		json_decref(r);
		free(k);
	}
}

static int
snapshot(char **files)
{
	int status = HAZ_OK;
	json_t *l[4], *acts, *it;
	const json_t *a;
	size_t i, j;

	for (i = 0; i < 4; i++) {
		l[i] = items(files[i], &status);
		json_array_foreach(l[i], j, it)
			slim(it, (int)i);
	}
	acts = bind_pass(l[0], l[1], l[2], l[3], &opt.b);
	json_array_foreach(acts, i, a)
		print_action(a);
	json_decref(acts);
	for (i = 0; i < 4; i++)
		json_decref(l[i]);
	free(rr_last);
	return status;
}

/* ---- writing ---- */

static char *
pod_path(const json_t *a, const char *sub)
{
	char *ns = kube_escape(
		json_string_value(json_object_get(a, "namespace")));
	char *n = kube_escape(json_string_value(json_object_get(a, "name")));
	char *p = easprintf("/api/v1/namespaces/%s/pods/%s%s", ns, n, sub);

	free(ns);
	free(n);
	return p;
}

/* post_event creates an Event about the pod of action a. */
static int
post_event(const json_t *a, const char *type, const char *reason,
	const char *msg)
{
	const char *ns = json_string_value(json_object_get(a, "namespace"));
	const char *name = json_string_value(json_object_get(a, "name"));
	struct kube_error e;
	char ts[CLOCK_RFC3339_SIZE], *path, *gen, *nse;
	json_t *ev, *r;

	clock_rfc3339((long long)time(NULL), ts);
	gen = easprintf("%s.", name);
	ev = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s,s:O},"
		       "s:s,s:s,s:s,s:{s:s},s:s,s:s,s:i,s:s}",
		"apiVersion", "v1", "kind", "Event", "metadata", "generateName",
		gen, "namespace", ns, "involvedObject", "apiVersion", "v1",
		"kind", "Pod", "namespace", ns, "name", name, "uid",
		json_object_get(a, "uid"), "reason", reason, "message", msg,
		"type", type, "source", "component", opt.b.scheduler,
		"firstTimestamp", ts, "lastTimestamp", ts, "count", 1,
		"reportingComponent", opt.b.scheduler);
	nse = kube_escape(ns);
	path = easprintf("/api/v1/namespaces/%s/events", nse);
	r = kube_create(K, path, ev, &e);
	if (!r)
		err_warn("event for pod %s/%s: %s", ns, name, e.msg);
	json_decref(r);
	json_decref(ev);
	free(path);
	free(nse);
	free(gen);
	return r ? 0 : -1;
}

/* write_claim puts claim c's status. Returns 0, 1 on a conflict, -1. */
static int
write_claim(const json_t *c, int *temp)
{
	const json_t *md = json_object_get(c, "metadata");
	char *ns = kube_escape(
		json_string_value(json_object_get(md, "namespace")));
	char *n = kube_escape(json_string_value(json_object_get(md, "name")));
	char *path = easprintf(DRA "/namespaces/%s/resourceclaims/%s/status",
		ns, n);
	struct kube_error e;
	json_t *r = kube_replace(K, path, c, &e);
	int ret = 0;

	if (!r) {
		ret = e.status == 409 ? 1 : -1;
		if (e.kind == KUBE_ETEMP)
			*temp = 1;
		if (ret > 0 && opt.verbose)
			err_warn("%s: conflict: trying again next pass", path);
		else if (ret < 0)
			err_warn("%s", e.msg);
	}
	json_decref(r);
	free(path);
	free(ns);
	free(n);
	return ret;
}

/* bind writes what action a decided; 0 (also when the pod was deleted
 * meanwhile), 1 when a claim changed since it was listed (the pod waits
 * for the next pass), or -1 (warned). */
static int
bind(const json_t *a, int *temp)
{
	const json_t *d = json_object_get(a, "decision"), *c;
	const char *node = json_string_value(json_object_get(d, "node"));
	struct kube_error e;
	char *path, *devs, *msg;
	json_t *body, *r;
	size_t i;
	int ret;

	json_array_foreach(json_object_get(a, "claims"), i, c)
		if ((ret = write_claim(c, temp)))
			return ret;
	devs = json_dumps(json_object_get(d, "devices"), JSON_COMPACT);
	body = json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
		BIND_ANN_DEVICES, devs);
	path = pod_path(a, "");
	r = kube_patch(K, path, KUBE_PATCH_MERGE, body, &e);
	json_decref(body);
	free(path);
	free(devs);
	if (!r)
		goto fail;
	json_decref(r);
	body = json_pack("{s:s,s:s,s:{s:O},s:{s:s,s:s,s:s}}", "apiVersion",
		"v1", "kind", "Binding", "metadata", "name",
		json_object_get(a, "name"), "target", "apiVersion", "v1",
		"kind", "Node", "name", node);
	path = pod_path(a, "/binding");
	r = kube_create(K, path, body, &e);
	json_decref(body);
	free(path);
	if (!r)
		goto fail;
	json_decref(r);
	nd_write((json_t *)d);
	msg = easprintf("Successfully assigned %s to %s",
		json_string_value(json_object_get(d, "pod")), node);
	post_event(a, "Normal", "Scheduled", msg);
	free(msg);
	hm_del(said, json_string_value(json_object_get(a, "uid")));
	return 0;
fail:
	/* deleted after it was placed (its namespace cleared, say): nothing
	 * is left to bind, and that is no error */
	if (e.status == 404) {
		hm_del(said, json_string_value(json_object_get(a, "uid")));
		return 0;
	}
	if (e.kind == KUBE_ETEMP)
		*temp = 1;
	err_warn("%s", e.msg);
	return -1;
}

/* warn_events posts the warnings of a, each once per pod and message
 * unless -1; returns -1 when one failed. */
static int
warn_events(const json_t *a)
{
	const char *uid = json_string_value(json_object_get(a, "uid"));
	const json_t *ev;
	struct jb b = {0};
	char *all;
	size_t i;
	int ret = 0, same;

	json_array_foreach(json_object_get(a, "events"), i, ev) {
		jb_raw(&b, json_string_value(json_object_get(ev, "message")));
		jb_raw(&b, "\n");
	}
	all = easprintf("%.*s", (int)b.len, b.buf ? b.buf : "");
	jb_free(&b);
	same = hm_get(said, uid) && !strcmp(hm_get(said, uid), all);
	if (same && !opt.once) {
		free(all);
		return 1;
	}
	json_array_foreach(json_object_get(a, "events"), i, ev)
		if (post_event(a,
			    json_string_value(json_object_get(ev, "type")),
			    json_string_value(json_object_get(ev, "reason")),
			    json_string_value(json_object_get(ev, "message"))))
			ret = -1;
	/* what could not be said is tried again next pass */
	if (ret < 0)
		free(all);
	else
		hm_put(said, uid, all);
	return ret;
}

/* ---- a pass ---- */

/* prune forgets what was said of pods no longer pending: bound, gone. */
static void
prune(const json_t *acts)
{
	struct hm *now = hm_new(NULL);
	const json_t *a;
	const char *k;
	char **gone = NULL;
	size_t i, n = 0, pos = 0;
	void *v;

	json_array_foreach(acts, i, a)
		hm_put(now, json_string_value(json_object_get(a, "uid")),
			(void *)1);
	while (hm_next(said, &pos, &k, &v))
		if (!hm_get(now, k)) {
			gone = erealloc(gone, (n + 1) * sizeof *gone);
			gone[n++] = estrdup(k);
		}
	for (i = 0; i < n; i++) {
		hm_del(said, gone[i]);
		free(gone[i]);
	}
	free(gone);
	hm_free(now);
}

struct listing {
	json_t *items;
	int list;
};

static int
keep_slim(json_t *item, void *arg)
{
	struct listing *l = arg;

	slim(item, l->list);
	json_array_append(l->items, item);
	return 0;
}

static void
clear(void *arg)
{
	json_array_clear(((struct listing *)arg)->items);
}

static json_t *
list(const char *path, int which, int *temp, int *bad)
{
	struct kube_error e;
	struct listing l = {json_array(), which};
	char *rv = NULL;
	static int said_nodra;

	if (kube_list_each(K, path, 500, keep_slim, clear, &l, &rv, &e) == 0) {
		free(rv);
		return l.items;
	}
	json_decref(l.items);
	if (e.kind == KUBE_ENORES || e.status == 404) {
		if (!said_nodra++)
			err_warn("%s: not served; no DRA claims", path);
		return json_array();
	}
	err_warn("%s", e.msg);
	if (e.kind == KUBE_ETEMP)
		*temp = 1;
	else
		*bad = 1;
	return NULL;
}

/* pass runs one pass; returns an exit status. */
static int
pass(void)
{
	static const char *const paths[4] = {"/api/v1/nodes", "/api/v1/pods",
		DRA "/resourceslices", DRA "/resourceclaims"};
	json_t *l[4] = {0}, *acts = NULL;
	const json_t *a, *d;
	int temp = 0, bad = 0, status = HAZ_OK, w;
	size_t i, nbound = 0;
	const char *kind;

	for (i = 0; i < 4 && !temp && !bad; i++)
		l[i] = list(paths[i], (int)i, &temp, &bad);
	if (temp || bad)
		goto out;
	acts = bind_pass(l[0], l[1], l[2], l[3], &opt.b);
	json_array_foreach(acts, i, a) {
		d = json_object_get(a, "decision");
		kind = json_string_value(json_object_get(d, "kind"));
		if (!strcmp(kind, "bind")) {
			if (json_array_size(json_object_get(a, "events")) &&
				warn_events(a) < 0)
				status = HAZ_FAIL;
			w = bind(a, &temp);
			if (w < 0)
				status = HAZ_FAIL;
			nbound += w == 0;
			continue;
		}
		w = warn_events(a);
		if (w < 0)
			status = HAZ_FAIL;
		if (w <= 0)
			nd_write((json_t *)d);
	}
	prune(acts);
	if (opt.verbose)
		err_warn("pass: %zu pending, %zu bound", json_array_size(acts),
			nbound);
out:
	json_decref(acts);
	for (i = 0; i < 4; i++)
		json_decref(l[i]);
	if (temp)
		return HAZ_TEMP;
	return bad ? HAZ_FAIL : status;
}

/* ---- watching ---- */

/* wake is what the watches tell the main thread: the pods of ours that
 * wait for a node (uid -> nothing), and whether anything changed since
 * the last pass while some did. Nothing else makes a pass: with no pod
 * waiting there is nothing to place, so nothing is listed. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int dirty;
	struct hm *waiting;
} wake = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL};

struct watcher {
	const char *path;
	int pods;
	struct kc_config kc;
	struct kube *k;
	struct js_doc doc; /* pods: the event's pod */
	pthread_t t;
};

/* pod_waits says whether the pod in d, of an event of type, is ours and
 * waits for a node; *uid gets its uid (malloc'd) or NULL. */
static int
pod_waits(const char *type, const struct js_doc *d, char **uid)
{
	int md = js_raw_get(d, 0, "metadata"), sp = js_raw_get(d, 0, "spec");
	char *name = NULL, *node;
	int ours;

	*uid = md >= 0 ? js_raw_str(d, js_raw_get(d, md, "uid")) : NULL;
	if (type[0] == 'D' || sp < 0)
		return 0;
	name = js_raw_str(d, js_raw_get(d, sp, "schedulerName"));
	node = js_raw_str(d, js_raw_get(d, sp, "nodeName"));
	ours = name && !strcmp(name, opt.b.scheduler) && (!node || !*node);
	free(name);
	free(node);
	return ours;
}

/* maybe_ours says whether the pod in js[0..len) may be ours: a pod's
 * schedulerName never changes, so one whose compact JSON names another
 * scheduler (or none) at every "schedulerName" key is not ours and never
 * was, and is not read further. Unescaped, the key can only be a key
 * (the spec's, or a label's or an annotation's of the same name): any
 * that names ours, or is written otherwise, has the pod read whole. */
static int
maybe_ours(const char *js, size_t len)
{
	static const char key[] = "\"schedulerName\"";
	const char *p = js, *end = js + len, *v;
	size_t n = strlen(opt.b.scheduler);

	while ((p = memmem(p, (size_t)(end - p), key, sizeof key - 1))) {
		v = p + sizeof key - 1;
		if (end - v < 2 || v[0] != ':' || v[1] != '"')
			return 1;
		v += 2;
		if ((size_t)(end - v) > n && !memcmp(v, opt.b.scheduler, n) &&
			v[n] == '"')
			return 1;
		p = v;
	}
	return 0;
}

/* on_event keeps the waiting pods, and wakes the main thread when a pod
 * of ours waits, or something changed while one does. */
static int
on_event(const char *type, const char *js, size_t len, void *arg)
{
	struct watcher *w = arg;
	char *uid = NULL;
	int waits = 0;

	if (w->pods && maybe_ours(js, len) && js_scan(&w->doc, js, len) == 0 &&
		w->doc.t[0].type == JS_OBJECT)
		waits = pod_waits(type, &w->doc, &uid);
	pthread_mutex_lock(&wake.mu);
	if (uid && waits)
		hm_put(wake.waiting, uid, wake.waiting);
	else if (uid)
		hm_del(wake.waiting, uid);
	if (hm_len(wake.waiting)) {
		wake.dirty = 1;
		pthread_cond_signal(&wake.cv);
	}
	pthread_mutex_unlock(&wake.mu);
	free(uid);
	return 0;
}

static void *
watcher_run(void *arg)
{
	struct watcher *w = arg;
	struct watch_opts o = {w->path, NULL, NULL, 500, 1e9, 0, 1};
	struct watch *wa = watch_new_raw(w->k, &o, on_event, w);
	struct kube_error e;

	if (watch_run(wa, &e) < 0 && e.kind != KUBE_ENORES)
		err_warn("watch %s: %s", w->path, e.msg);
	watch_free(wa);
	return NULL;
}

static void
start_watches(void)
{
	static struct watcher w[4] = {{.path = "/api/v1/pods", .pods = 1},
		{.path = DRA "/resourceclaims"},
		{.path = DRA "/resourceslices"}, {.path = "/api/v1/nodes"}};

	wake.waiting = hm_new(NULL);
	for (size_t i = 0; i < 4; i++) {
		if (kc_load(&w[i].kc, opt.kubeconfig, opt.context) < 0)
			exit(HAZ_FAIL);
		w[i].k = kube_new(&w[i].kc);
		if (pthread_create(&w[i].t, NULL, watcher_run, &w[i]))
			err_die(HAZ_FAIL,
				"pthread_create: cannot start a "
				"watch");
	}
}

/* wait_wake returns after a change while pods wait, or after seconds
 * when some do (a pass again for what could not be placed). */
static void
wait_wake(double seconds)
{
	struct timespec ts;

	pthread_mutex_lock(&wake.mu);
	for (;;) {
		ts = clock_after(seconds);
		while (!wake.dirty &&
			pthread_cond_timedwait(&wake.cv, &wake.mu, &ts) == 0)
			;
		if (wake.dirty || hm_len(wake.waiting))
			break;
	}
	pthread_mutex_unlock(&wake.mu);
	/* a burst of events (a pass's own writes, a Deployment's pods)
	 * makes one pass */
	nanosleep(&(struct timespec){0, 200000000L}, NULL);
	pthread_mutex_lock(&wake.mu);
	wake.dirty = 0;
	pthread_mutex_unlock(&wake.mu);
}

static void
opts(int argc, char **argv)
{
	static const struct option longs[] = {
		{"context", required_argument, NULL, 'C'},
		{"kubeconfig", required_argument, NULL, 'K'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char *end;
	int c;

	opterr = 0;
	opt.interval = 10;
	opt.b.rr_last = &rr_last;
	opt.b.scheduler = getenv("K8SHAZGPU_SCHEDULER_NAME");
	if (!opt.b.scheduler || !*opt.b.scheduler)
		opt.b.scheduler = "k8shazgpu";
	while ((c = getopt_long(argc, argv, ":1vjS:N:i:hV", longs, NULL)) != -1)
		switch (c) {
		case '1': opt.once = 1; break;
		case 'v': opt.verbose = 1; break;
		case 'j': opt.snapshot = 1; break;
		case 'S':
			if ((opt.b.strategy = sp_strategy_parse(optarg)) < 0) {
				err_warn("-S %s: unknown strategy", optarg);
				usage();
			}
			break;
		case 'N':
			if (!*optarg)
				usage();
			opt.b.scheduler = optarg;
			break;
		case 'i':
			opt.interval = strtod(optarg, &end);
			if (*end || !*optarg || !(opt.interval >= 0.1) ||
				opt.interval > 86400) {
				err_warn("-i %s: not a number of seconds from "
					 "0.1 to 86400",
					optarg);
				usage();
			}
			break;
		case 'C': opt.context = optarg; break;
		case 'K': opt.kubeconfig = optarg; break;
		case 'h': help(); exit(HAZ_OK);
		case 'V': puts("sched-bind " HAZ_VERSION); exit(HAZ_OK);
		case ':':
			err_warn("%s needs an argument", argv[optind - 1]);
			usage();
		default:
			if (optopt)
				err_warn("unknown option -%c", optopt);
			else
				err_warn("unknown option %s", argv[optind - 1]);
			usage();
		}
	if (opt.snapshot ? argc - optind != 4 : argc != optind)
		usage();
	{
		/* the engine reads it at each placement: refuse a bad one
		 * at start rather than at the first pod */
		char why[160];

		if (sp_goal_from_env(why, sizeof why) < 0)
			err_die(HAZ_USAGE, "%s", why);
	}
}

int
main(int argc, char **argv)
{
	struct kc_config kc;
	int status = HAZ_OK;

	err_init(argv[0]);
	/* jansson draws its hash seed here, before any thread starts */
	json_object_seed(0);
#ifdef M_ARENA_MAX
	/* the watch threads build what the main thread frees: two arenas
	 * keep that from leaving free memory stranded in one per thread */
	mallopt(M_ARENA_MAX, 2);
#endif
	opts(argc, argv);
	if (opt.snapshot)
		return nd_finish(snapshot(argv + optind));
	if (kc_load(&kc, opt.kubeconfig, opt.context) < 0)
		return HAZ_FAIL;
	K = kube_new(&kc);
	/* a binding, an event, a claim's status: small requests, kept */
	kube_keep(K);
	said = hm_new(free);
	if (opt.once)
		status = pass();
	else {
		/* the pod watch's first list says whether a pod waits: with
		 * none, nothing is listed whole, at start or after */
		start_watches();
		for (;;) {
			wait_wake(opt.interval);
			pass();
		}
	}
	hm_free(said);
	free(rr_last);
	kube_free(K);
	kc_free(&kc);
	return nd_finish(status);
}
