/* claim-make: turn records into Kubernetes objects; with -a, apply them.
 *
 *   claim-make [-a | -c | -D] [-x] [-m manager] [-d driver] [-N node]...
 *              [-n namespace] [-R file] [--context name]
 *              [--kubeconfig file] [file...]
 *
 * Input records, by kind:
 *   gpu   (gpu-probe(1)) are checked field by field (gobj_check: type,
 *         range, health one of its values, node a node name) and are
 *         gathered per node until the end of input; a bad one, or one
 *         giving a device name the node already has, is refused (warned,
 *         exit 1) and the others go on; the text of a hold (below) over
 *         its bound is cut to it instead (gobj_bound_held), said once;
 *         each node then becomes a Node object with GPU feature discovery
 *         and AgentaFlow labels and annotations (with -x also its
 *         nvidia.com/ extended resources in status) and ResourceSlices of
 *         DRA driver -d, one device per whole GPU and per MIG device.
 *         A GPU held on the host (a record of its index carrying the
 *         `held` object of gpu-reserve(1) mark) is withheld as an
 *         unhealthy one is: none of its devices in the slices or in
 *         allocatable, nor in the labels counting what is usable, and
 *         the Node's canhazgpu.dev/host-holds annotation names its
 *         holder; the next batch without the mark gives it all back
 *         (and, with -a, removes the annotation: see ap_release).
 *         -N names a node to publish even when no record names it: a node
 *         whose GPUs are all gone is published empty, so nothing stale
 *         stays behind.
 *         A node with records also gets its two GPUNodes (gpunode.h:
 *         canhazgpu.dev/v1alpha1 and agentaflow.io/v1), printed after the
 *         Node. With -a they are owned by the Node (its uid), what is in
 *         use and what its allocatable leaves come from the pods bound to
 *         it (listed every batch) and the ResourceClaims they name, a
 *         GPUNode that already says it all is left alone (the heartbeat
 *         rule below), one of a node without records is deleted, and a
 *         group not served is said once and is no error. Printed, no pod
 *         is known: nothing is in use, allocatable is the Node's.
 *   any record with apiVersion and kind is a Kubernetes object, passed
 *         through as it is once its names are strings that can name it.
 * A {"kind":"flush"} record (gpu-probe -i writes one after every probe)
 * publishes the nodes gathered so far at once, and starts gathering anew,
 * so one long-running `gpu-probe -i 30 | claim-make -a` keeps its
 * connection and publishes every cycle; at the end of input what was
 * gathered since the last flush is published.
 * Without -a the objects are printed, one per line. With -a they are
 * applied by server-side apply as field manager -m, and one `result`
 * record is printed per write: {"kind":"result","op":"apply",
 * "ref":"v1/Node/small","resourceVersion":"42"}. ResourceSlices whose
 * devices did not change are left alone (op "unchanged"); changed ones
 * get the pool's next generation; slices of the node and driver that are
 * no longer wanted are deleted (op "delete"). Labels, annotations and
 * resources this field manager applied before and no longer produces
 * are removed first (ap_release: op "unlabel", "unresource"); what other
 * writers set, under any prefix, is never touched.
 *
 * -R file: the file's modification time is set to now (the file made,
 * mode 0644, when missing) after each batch (up to a flush record, or
 * to the end of input) in which no record was bad and no write failed,
 * so that stat-serve(1) -d's /readyz tells a pipeline whose probe cycles
 * are published from one that stalled or keeps failing. A batch that
 * failed leaves it as it was.
 *
 * $GPU_UTILIZATION_GOAL (percent, 1 to 100, default 80) sets the
 * utilization tiers (gobj_tier); anything else is refused with status 2.
 *
 * $K8SHAZGPU_NOW (Unix seconds) fixes the agentaflow.gpu/last-update
 * stamp (and the GPUNodes' lastUpdate), for reproducible output. With
 * -a a node that already carries every label, annotation and resource
 * is not written again (op "unchanged") until its last-update stamp is
 * $K8SHAZGPU_HEARTBEAT seconds old (default 300). Either, set to
 * anything but a whole number from 0 to SECONDS_MAX, is refused with
 * status 2.
 *
 * -c creates each object with a POST instead (no apply): a name already
 * taken fails, atomically, leaving that object as it was:
 *   {"kind":"result","op":"create","ref":"v1/ConfigMap/ns/x",
 *    "uid":"...","resourceVersion":"42"}
 *   {"kind":"result","op":"exists","ref":"v1/ConfigMap/ns/x"}
 * the latter also warned about ("claim-make: REF: already exists") and
 * failing the run, so that a caller that must own what it made (an
 * ownerReference needs the uid) stops there. -D deletes each object
 * (apiVersion, kind, metadata.name and .namespace suffice; metadata.uid,
 * when given, is a precondition) with propagationPolicy Background:
 *   {"kind":"result","op":"delete","ref":"...","uid":"..."}
 *   {"kind":"result","op":"absent","ref":"..."}  (no error)
 * -c and -D take objects only: a gpu record is refused.
 *
 * EXIT STATUS: 0 all done; 1 a record or a write failed (the others went
 * on; with -c, an object that exists); 2 usage; 75 the API server was
 * unreachable or overloaded. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "err.h"
#include "gpunode.h"
#include "gpuobj.h"
#include "kname.h"
#include "kube.h"
#include "kubeconfig.h"
#include "nd.h"

/* the last second of the year 9999: an RFC 3339 stamp has four digits */
#define SECONDS_MAX 253402300799LL

enum { MANAGER_MAX = 128 }; /* the API server's bound on a field manager */

enum mode {
	PRINT,  /* no server: print the objects */
	APPLY,  /* -a: server-side apply */
	CREATE, /* -c: POST, a taken name fails */
	DELETE, /* -D */
};

struct ctx {
	enum mode mode;
	int extended;
	const char *manager, *driver, *namespace;
	const char *default_ns; /* -n, else the kubeconfig's, else default */
	const char *context, *kubeconfig;
	json_t *nodes; /* node name -> array of gpu records */
	json_t *order; /* node names in first-seen order */
	json_t *fixed; /* the -N nodes, published in every batch */
	json_t *names; /* node name -> {device name: "input:record"} */
	int pending;   /* records gathered since the last flush */
	int flushed;   /* a flush was seen */
	time_t now;
	int now_fixed; /* $K8SHAZGPU_NOW was given */
	long long heartbeat;
	struct kc_config kc;
	struct kube *k;
	struct applier *ap;
	int status;

	const char *ready; /* -R: touched after each batch without error */
	int batch_bad;     /* a record or write of this batch failed */

	json_t *unserved; /* GPUNode apiVersions not served, said so */
	json_t *cut_told; /* "node/device/member": a hold's text cut, said */
};

static const char usage_text[] =
	"usage: claim-make [-a | -c | -D] [-x] [-m manager] [-d driver] [-N node]...\n"
	"                  [-n namespace] [-R file] [--context name]\n"
	"                  [--kubeconfig file] [file...]\n";

static const char help_text[] =
	"Turn gpu records and Kubernetes objects into objects; -a applies them.\n"
	"\n"
	"  -a              apply (server-side apply) instead of printing\n"
	"  -c              create objects (POST); one that exists is not changed\n"
	"  -D              delete objects; one already gone is no error\n"
	"  -x              also publish nvidia.com/ extended resources in node status\n"
	"  -m manager      field manager (default k8shazgpu)\n"
	"  -d driver       DRA driver name (default gpu.canhazgpu.dev)\n"
	"  -N node         publish this node even if no record names it\n"
	"  -n namespace    namespace for namespaced objects naming none\n"
	"  -R file         touch file after each batch applied without error\n"
	"  --context name  kubeconfig context\n"
	"  --kubeconfig f  kubeconfig file\n"
	"  -h, -V          this help; the version\n";

static void
usage(void)
{
	fputs(usage_text, stderr);
	exit(HAZ_USAGE);
}

/* fail records a failed write: HAZ_TEMP wins over HAZ_FAIL. */
static void
fail(struct ctx *c, const struct kube_error *e, const char *what)
{
	err_warn("%s: %s", what, e->msg);
	c->batch_bad = 1;
	if (kube_exit_status(e) == HAZ_TEMP || c->status == HAZ_TEMP)
		c->status = HAZ_TEMP;
	else
		c->status = HAZ_FAIL;
}

static void
note_node(struct ctx *c, const char *node)
{
	if (json_object_get(c->nodes, node))
		return;
	json_object_set_new(c->nodes, node, json_array());
	json_array_append_new(c->order, json_string(node));
}

/* settled returns a copy of obj naming its namespace when it is
 * namespaced, with its collection path in *path (malloc'd), or NULL with
 * e filled. A namespaced collection path names its namespace; that of
 * Namespaces, "/api/v1/namespaces", has nothing after it. */
static json_t *
settled(struct ctx *c, const json_t *obj, char **path, struct kube_error *e)
{
	json_t *copy, *meta;

	if (!(*path = ap_path(c->ap, obj, 0, e)))
		return NULL;
	copy = json_deep_copy(obj);
	if (!json_is_object(meta = json_object_get(copy, "metadata")))
		json_object_set_new(copy, "metadata", meta = json_object());
	if (strstr(*path, "/namespaces/") &&
		!json_object_get(meta, "namespace"))
		json_object_set_new(meta, "namespace",
			json_string(c->default_ns));
	return copy;
}

/* result prints {"kind":"result","op":op,"ref":REF} with the uid of
 * answer (an object, or the Status answering a delete, which has it in
 * details) when it has one, and with_rv its resourceVersion. */
static void
result(const char *op, const char *ref, const json_t *answer, int with_rv)
{
	const json_t *m = json_object_get(answer, "metadata");
	const json_t *uid = json_object_get(m, "uid");
	json_t *res = json_pack("{s:s, s:s, s:s}", "kind", "result", "op", op,
		"ref", ref);

	if (!uid)
		uid = json_object_get(json_object_get(answer, "details"),
			"uid");
	if (json_is_string(uid))
		json_object_set(res, "uid", (json_t *)uid);
	if (with_rv && json_is_string(json_object_get(m, "resourceVersion")))
		json_object_set(res, "resourceVersion",
			json_object_get(m, "resourceVersion"));
	nd_write(res);
	json_decref(res);
}

/* create POSTs obj; a name taken is reported (op "exists") and fails the
 * run, the object left as it is. */
static void
create(struct ctx *c, const json_t *given)
{
	struct kube_error e;
	char *path = NULL, *ref;
	json_t *obj = settled(c, given, &path, &e), *ans = NULL;

	ref = ap_ref(obj ? obj : given);
	if (obj) {
		kube_query(&path, "fieldManager", c->manager);
		ans = kube_create(c->k, path, obj, &e);
	}
	if (ans) {
		/* the name the server generated, for metadata.generateName */
		free(ref);
		ref = ap_ref(ans);
		result("create", ref, ans, 1);
	} else if (obj && e.kind == KUBE_EAPI && e.status == 409 &&
		strcmp(e.reason, "AlreadyExists") == 0) {
		result("exists", ref, NULL, 0);
		err_warn("%s: already exists", ref);
		c->batch_bad = 1;
		if (c->status != HAZ_TEMP)
			c->status = HAZ_FAIL;
	} else {
		fail(c, &e, ref);
	}
	json_decref(ans);
	json_decref(obj);
	free(path);
	free(ref);
}

/* delete deletes the object obj names, its uid a precondition when
 * given, its dependents in the background; one not there is reported
 * (op "absent"), no error. */
static void delete (struct ctx *c, const json_t *given)
{
	const char *uid = json_string_value(
		json_object_get(json_object_get(given, "metadata"), "uid"));
	json_t *opts = json_pack("{s:s, s:s, s:s}", "apiVersion", "v1", "kind",
		"DeleteOptions", "propagationPolicy", "Background");
	struct kube_error e;
	char *path = NULL, *ref;
	json_t *obj = settled(c, given, &path, &e), *ans = NULL;

	ref = ap_ref(obj ? obj : given);
	free(path);
	path = obj ? ap_path(c->ap, obj, 1, &e) : NULL;
	if (uid)
		json_object_set_new(opts, "preconditions",
			json_pack("{s:s}", "uid", uid));
	if (path)
		ans = kube_request(c->k, "DELETE", path, NULL, opts, &e);
	if (ans)
		result("delete", ref, ans, 0);
	else if (path && e.kind == KUBE_EAPI && e.status == 404)
		result("absent", ref, NULL, 0);
	else
		fail(c, &e, ref);
	json_decref(ans);
	json_decref(obj);
	json_decref(opts);
	free(path);
	free(ref);
}

/* emit prints obj, or writes it as the mode says and prints the result. */
static void
emit(struct ctx *c, const json_t *obj)
{
	struct kube_error e;
	json_t *res;
	char *ref;

	switch (c->mode) {
	case PRINT: nd_write((json_t *)obj); return;
	case CREATE: create(c, obj); return;
	case DELETE: delete (c, obj); return;
	case APPLY: break;
	}
	if ((res = ap_apply(c->ap, obj, &e))) {
		nd_write(res);
		json_decref(res);
		return;
	}
	ref = ap_ref(obj);
	fail(c, &e, ref);
	free(ref);
}

static void publish(struct ctx *c, const char *node, const json_t *gpus);

/* touch_ready sets the -R file's modification time to now, making it
 * (mode 0644) when missing; a failure is warned about and fails the run
 * (status 1), the tool going on. */
static void
touch_ready(struct ctx *c)
{
	int fd = open(c->ready,
		O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);

	if (fd < 0 || futimens(fd, NULL) < 0) {
		err_warn("-R %s:", c->ready);
		if (c->status == HAZ_OK)
			c->status = HAZ_FAIL;
	}
	if (fd >= 0)
		close(fd);
}

/* publish_batch publishes every node gathered, touches the -R file when
 * nothing of the batch failed, then starts a new batch holding just the
 * -N nodes. */
static void
publish_batch(struct ctx *c)
{
	json_t *name;
	size_t i;

	json_array_foreach(c->order, i, name)
		publish(c, json_string_value(name),
			json_object_get(c->nodes, json_string_value(name)));
	if (c->ready && !c->batch_bad)
		touch_ready(c);
	c->batch_bad = 0;
	json_object_clear(c->nodes);
	json_object_clear(c->names);
	json_array_clear(c->order);
	json_array_foreach(c->fixed, i, name)
		note_node(c, json_string_value(name));
	c->pending = 0;
	if (!c->now_fixed)
		c->now = time(NULL);
}

/* clean_string: v is a non-empty string holding no "\u0000", so that
 * json_string_value gives all of it. */
static int
clean_string(const json_t *v)
{
	return json_is_string(v) && json_string_length(v) > 0 &&
		strlen(json_string_value(v)) == json_string_length(v);
}

/* is_path_name: s can be the last segment of an object's API path, as
 * the API server requires of names: not "." or "..", no '/' or '%'. */
static int
is_path_name(const char *s)
{
	return strcmp(s, ".") && strcmp(s, "..") && !strpbrk(s, "/%");
}

/* check_object says whether rec is a Kubernetes object whose apiVersion,
 * kind and names are strings claim-make can read whole; warns if not. */
static int
check_object(struct nd_reader *r, const json_t *rec)
{
	static const char *const top[] = {"apiVersion", "kind"};
	static const char *const names[] = {"name", "namespace"};
	const json_t *meta = json_object_get(rec, "metadata"), *v;
	char val[64];
	size_t i;

	for (i = 0; i < 2; i++) {
		if (clean_string(v = json_object_get(rec, top[i])))
			continue;
		gobj_shown(v, val, sizeof val);
		nd_warn(r,
			"object: field \"%s\" must be a non-empty string "
			"without \\u0000, not %s",
			top[i], val);
		return -1;
	}
	if (meta && !json_is_object(meta)) {
		gobj_shown(meta, val, sizeof val);
		nd_warn(r,
			"object: field \"metadata\" must be an object, not %s",
			val);
		return -1;
	}
	for (i = 0; i < 2; i++) {
		if (!(v = json_object_get(meta, names[i])) ||
			(clean_string(v) && is_path_name(json_string_value(v))))
			continue;
		gobj_shown(v, val, sizeof val);
		nd_warn(r,
			"object: field \"metadata.%s\" must be a non-empty "
			"string without \\u0000, \"/\" or \"%%\", other than \".\" "
			"and \"..\", not %s",
			names[i], val);
		return -1;
	}
	return 0;
}

/* The members of a record's hold that gobj_bound_held cut. */
struct cuts {
	int n;
	struct {
		const char *member;
		size_t was, now;
	} at[8];
};

static void
note_cut(const char *member, size_t was, size_t now, void *arg)
{
	struct cuts *k = arg;

	if (k->n < (int)(sizeof k->at / sizeof *k->at)) {
		k->at[k->n].member = member;
		k->at[k->n].was = was;
		k->at[k->n].now = now;
		k->n++;
	}
}

/* tell_cuts warns of each member of a hold cut to its bound, once a run
 * per node, device and member. */
static void
tell_cuts(struct ctx *c, struct nd_reader *r, const char *node,
	const char *device, const struct cuts *k)
{
	char *key;
	int i;

	for (i = 0; i < k->n; i++) {
		key = easprintf("%s/%s/%s", node, device, k->at[i].member);
		if (!json_object_get(c->cut_told, key)) {
			json_object_set_new(c->cut_told, key, json_true());
			/* a note, not a bad record: nd_warn would fail it */
			err_warn("%s:%ld: gpu: node \"%s\" device \"%s\": "
				 "held.%s of %zu bytes cut to %zu",
				r->name, r->recno, node, device,
				k->at[i].member, k->at[i].was, k->at[i].now);
		}
		free(key);
	}
}

/* take_gpu checks a gpu record and gathers it for its node; warns and
 * returns -1 when it is bad or names a device its node already has. A
 * hold's text over its bound is cut, not refused (gobj_bound_held). */
static int
take_gpu(struct ctx *c, struct nd_reader *r, json_t *rec)
{
	char why[512], name[GOBJ_DEVICE_NAME_MAX], *where_at;
	struct cuts cut = {0};
	const char *node;
	json_t *seen, *where;

	gobj_bound_held(rec, note_cut, &cut);
	if (gobj_check(rec, c->driver, why, sizeof why) < 0) {
		nd_warn(r, "gpu: %s", why);
		return -1;
	}
	node = json_string_value(json_object_get(rec, "node"));
	if (!(seen = json_object_get(c->names, node))) {
		seen = json_object();
		json_object_set_new(c->names, node, seen);
	}
	gobj_device_name(rec, name);
	tell_cuts(c, r, node, name, &cut);
	if ((where = json_object_get(seen, name))) {
		nd_warn(r,
			"gpu: node \"%s\" already has device \"%s\", from %s",
			node, name, json_string_value(where));
		return -1;
	}
	where_at = easprintf("%s:%ld", r->name, r->recno);
	json_object_set_new(seen, name, json_string_nocheck(where_at));
	free(where_at);
	note_node(c, node);
	json_array_append(json_object_get(c->nodes, node), rec);
	return 0;
}

static int
on_record(struct ctx *c, struct nd_reader *r, json_t *rec)
{
	const json_t *k = json_object_get(rec, "kind");
	const char *kind;
	char val[64];

	if (!k) {
		nd_warn(r, "record has no kind");
		return 1;
	}
	if (!clean_string(k)) {
		gobj_shown(k, val, sizeof val);
		nd_warn(r,
			"field \"kind\" must be a non-empty string without "
			"\\u0000, not %s",
			val);
		return 1;
	}
	kind = json_string_value(k);
	if (strcmp(kind, "flush") == 0) {
		publish_batch(c);
		c->flushed = 1;
		return 0;
	}
	c->pending = 1;
	if (strcmp(kind, "gpu") == 0 &&
		(c->mode == CREATE || c->mode == DELETE)) {
		nd_warn(r, "gpu: -c and -D take Kubernetes objects only");
		return 1;
	}
	if (strcmp(kind, "gpu") == 0)
		return take_gpu(c, r, rec) < 0;
	if (json_object_get(rec, "apiVersion")) {
		if (check_object(r, rec) < 0)
			return 1;
		emit(c, rec);
		return 0;
	}
	nd_warn(r, "unknown record kind \"%s\"", kind);
	return 1;
}

/* node_object is the Node carrying the labels, annotations and, with -x,
 * the extended resources of gpus. */
static json_t *
node_object(struct ctx *c, const char *node, const json_t *gpus)
{
	json_t *obj = json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind",
		"Node", "metadata", gobj_metadata(gpus, c->now));

	json_object_set_new(json_object_get(obj, "metadata"), "name",
		json_string(node));
	if (c->extended)
		json_object_set_new(obj, "status", gobj_resources(gpus));
	return obj;
}

/* existing_slices lists the node's slices of our driver. */
static json_t *
existing_slices(struct ctx *c, const char *node, struct kube_error *e)
{
	char *path = estrdup("/apis/resource.k8s.io/v1/resourceslices");
	char *sel = easprintf("spec.nodeName=%s,spec.driver=%s", node,
		c->driver);
	json_t *items = NULL;
	char *rv = NULL;

	kube_query(&path, "fieldSelector", sel);
	if (kube_list(c->k, path, 0, &items, &rv, e) < 0)
		items = NULL;
	free(rv);
	free(sel);
	free(path);
	return items;
}

static const json_t *
name_of(const json_t *obj)
{
	return json_object_get(json_object_get(obj, "metadata"), "name");
}

/* has_name says whether some object of list has obj's name. */
static int
has_name(const json_t *list, const json_t *obj)
{
	const json_t *o;
	size_t i;

	json_array_foreach(list, i, o)
		if (json_equal(name_of(o), name_of(obj)))
			return 1;
	return 0;
}

static const json_t *
devices_of(const json_t *slice)
{
	return json_object_get(json_object_get(slice, "spec"), "devices");
}

/* same_devices: every wanted slice exists under its name with the same
 * devices, and no other slice does. */
static int
same_devices(const json_t *have, const json_t *want)
{
	const json_t *w, *h;
	size_t i, j;
	int found;

	if (json_array_size(have) != json_array_size(want))
		return 0;
	json_array_foreach(want, i, w) {
		found = 0;
		json_array_foreach(have, j, h)
			found |= json_equal(name_of(h), name_of(w)) &&
				json_equal(devices_of(h), devices_of(w));
		if (!found)
			return 0;
	}
	return 1;
}

static long long
max_generation(const json_t *slices)
{
	long long gen = 0, g;
	const json_t *s;
	size_t i;

	json_array_foreach(slices, i, s) {
		g = json_integer_value(
			json_object_get(json_object_get(json_object_get(s,
								"spec"),
						"pool"),
				"generation"));
		gen = g > gen ? g : gen;
	}
	return gen;
}

static void
print_result(const char *op, const json_t *obj)
{
	char *ref = ap_ref(obj);
	json_t *res = json_pack("{s:s, s:s, s:s}", "kind", "result", "op", op,
		"ref", ref);

	nd_write(res);
	json_decref(res);
	free(ref);
}

/* owned_by makes every slice an object the node owns, so deleting the
 * node deletes them. */
static void
owned_by(json_t *slices, const json_t *node)
{
	const json_t *meta = json_object_get(node, "metadata");
	json_t *s;
	size_t i;

	json_array_foreach(slices, i, s)
		json_object_set_new(json_object_get(s, "metadata"),
			"ownerReferences",
			json_pack("[{s:s, s:s, s:O, s:O}]", "apiVersion", "v1",
				"kind", "Node", "name",
				json_object_get(meta, "name"), "uid",
				json_object_get(meta, "uid")));
}

/* sync_slices makes the node's slices hold devices, and only them. */
static void
sync_slices(struct ctx *c, const char *node, const json_t *devices,
	const json_t *node_obj)
{
	struct kube_error e;
	json_t *have = existing_slices(c, node, &e), *want, *s, *res;
	size_t i;

	if (!have) {
		fail(c, &e, node);
		return;
	}
	want = gobj_slices(node, c->driver, max_generation(have) + 1, devices);
	if (same_devices(have, want)) {
		json_array_foreach(have, i, s)
			print_result("unchanged", s);
	} else {
		owned_by(want, node_obj);
		json_array_foreach(want, i, s)
			emit(c, s);
		json_array_foreach(have, i, s) {
			if (has_name(want, s))
				continue;
			if ((res = ap_delete(c->ap, s, &e))) {
				nd_write(res);
				json_decref(res);
			} else {
				fail(c, &e, node);
			}
		}
	}
	json_decref(want);
	json_decref(have);
}

/* release drops the labels, annotations and resources this field
 * manager applied to the node before and obj no longer has (see
 * ap_release). Returns 0, or -1 when that failed: obj must not be applied
 * then, or the server would forget which of them were ours. */
static int
release(struct ctx *c, const char *node, const json_t *current,
	const json_t *obj)
{
	struct kube_error e;
	json_t *res, *r;
	size_t i;

	if (!(res = ap_release(c->ap, current, obj, &e))) {
		fail(c, &e, node);
		return -1;
	}
	json_array_foreach(res, i, r)
		nd_write(r);
	json_decref(res);
	return 0;
}

/* has_all says whether every key of want is in have with an equal
 * value; skip names a key not compared. */
static int
has_all(const json_t *have, const json_t *want, const char *skip)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)want, key, v)
		if ((!skip || strcmp(key, skip)) &&
			!json_equal(v, json_object_get(have, key)))
			return 0;
	return 1;
}

/* node_current says whether the node already carries everything obj
 * would write, as things this field manager applied, and its
 * agentaflow.gpu/last-update stamp is younger than the heartbeat
 * ($K8SHAZGPU_HEARTBEAT seconds, default 300): then the write is left
 * out, and an idle cluster sees no node updates every cycle. A node whose
 * keys someone else wrote (its creator) is applied once, so that what we
 * publish is ours to remove when it goes stale. */
static int
node_current(const struct ctx *c, const json_t *current, const json_t *obj)
{
	const json_t *hm = json_object_get(current, "metadata");
	const json_t *wm = json_object_get(obj, "metadata");
	const json_t *hs = json_object_get(current, "status");
	const json_t *ws = json_object_get(obj, "status");
	const char *stamp = json_string_value(
		json_object_get(json_object_get(hm, "annotations"),
			"agentaflow.gpu/last-update"));
	struct tm tm = {0};
	const char *end;

	if (!stamp || !(end = strptime(stamp, "%Y-%m-%dT%H:%M:%SZ", &tm)) ||
		*end ||
		(long long)c->now - (long long)timegm(&tm) >= c->heartbeat ||
		!ap_owns(c->ap, current, obj))
		return 0;
	if (!has_all(json_object_get(hm, "labels"),
		    json_object_get(wm, "labels"), NULL) ||
		!has_all(json_object_get(hm, "annotations"),
			json_object_get(wm, "annotations"),
			"agentaflow.gpu/last-update"))
		return 0;
	return !ws ||
		(has_all(json_object_get(hs, "capacity"),
			 json_object_get(ws, "capacity"), NULL) &&
			has_all(json_object_get(hs, "allocatable"),
				json_object_get(ws, "allocatable"), NULL));
}

/* gpunode_path returns the path of obj, a GPUNode, or NULL: when its
 * group is not served (said once until it is, no error) or that failed. */
static char *
gpunode_path(struct ctx *c, const json_t *obj)
{
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	struct kube_error e;
	char *path, *ref;

	/* asked every batch: a CRD installed later is written to at once */
	if ((path = ap_path(c->ap, obj, 1, &e))) {
		json_object_del(c->unserved, av);
		return path;
	}
	if (e.kind == KUBE_ENORES) {
		if (!json_object_get(c->unserved, av))
			err_warn("%s GPUNode: not written: %s", av, e.msg);
		json_object_set_new(c->unserved, av, json_true());
	} else {
		ref = ap_ref(obj);
		fail(c, &e, ref);
		free(ref);
	}
	return NULL;
}

/* write_gpunode applies obj unless the server holds it already, fresh
 * (gn_current); with gone set, deletes it where it is. */
static void
write_gpunode(struct ctx *c, const json_t *obj, int gone)
{
	char *path = gpunode_path(c, obj), *ref;
	struct kube_error e;
	json_t *have, *res;

	if (!path)
		return;
	have = kube_get(c->k, path, &e);
	free(path);
	if (!have && !(e.kind == KUBE_EAPI && e.status == 404)) {
		ref = ap_ref(obj);
		fail(c, &e, ref);
		free(ref);
	} else if (gone) {
		if (have && (res = ap_delete(c->ap, obj, &e))) {
			nd_write(res);
			json_decref(res);
		} else if (have) {
			fail(c, &e, json_string_value(name_of(obj)));
		}
	} else if (have && gn_current(have, obj, c->now, c->heartbeat)) {
		print_result("unchanged", obj);
	} else {
		emit(c, obj);
	}
	json_decref(have);
}

/* publish_gpunodes writes the node's GPUNodes (gpunode.h) from its gpu
 * records, the Node as it now is and the pods bound to it; a node without
 * GPUs has none (a GPUNode left from before is deleted). */
static void
publish_gpunodes(struct ctx *c, const char *node, const json_t *gpus,
	const json_t *node_obj)
{
	json_t *pods = NULL, *claims = NULL, *status = NULL, *objs, *o;
	struct kube_error e;
	size_t i;
	int bad = 0;

	if (json_array_size(gpus)) {
		if (gn_pods(c->k, node, &pods, &e) < 0 ||
			gn_claims(c->k, pods, &claims, &e) < 0) {
			fail(c, &e, node);
			json_decref(pods);
			return;
		}
		status = gn_status(gpus, node, c->driver,
			json_object_get(node_obj, "status"), pods, claims,
			c->now, &bad);
	}
	objs = gn_objects(node,
		json_string_value(
			json_object_get(json_object_get(node_obj, "metadata"),
				"uid")),
		status ? status : json_null());
	json_array_foreach(objs, i, o)
		write_gpunode(c, o, status == NULL);
	json_decref(objs);
	json_decref(status);
	json_decref(claims);
	json_decref(pods);
}

/* print_node prints the node's objects: the Node, its GPUNodes (no pod
 * known: nothing in use, allocatable the Node's) and its slices. */
static void
print_node(struct ctx *c, const char *node, const json_t *gpus,
	const json_t *obj, const json_t *devices)
{
	json_t *slices, *s, *status, *objs;
	size_t i;
	int bad = 0;

	nd_write((json_t *)obj);
	if (json_array_size(gpus)) {
		status = gn_status(gpus, node, c->driver,
			json_object_get(obj, "status"), NULL, NULL, c->now,
			&bad);
		objs = gn_objects(node, NULL, status);
		json_array_foreach(objs, i, s)
			nd_write(s);
		json_decref(objs);
		json_decref(status);
	}
	slices = gobj_slices(node, c->driver, 1, devices);
	json_array_foreach(slices, i, s)
		nd_write(s);
	json_decref(slices);
}

/* publish writes one node's objects. */
static void
publish(struct ctx *c, const char *node, const json_t *gpus)
{
	json_t *obj = node_object(c, node, gpus), *devices = gobj_devices(gpus);
	json_t *current, *now;
	struct kube_error e;
	char *path;
	int written = 0;

	if (c->mode == PRINT) {
		print_node(c, node, gpus, obj, devices);
		json_decref(devices);
		json_decref(obj);
		return;
	}
	path = easprintf("/api/v1/nodes/%s", node);
	if (!(current = kube_get(c->k, path, &e))) {
		fail(c, &e, node);
	} else {
		/* not applied when the release failed: next time */
		if (release(c, node, current, obj) == 0) {
			if (node_current(c, current, obj)) {
				print_result("unchanged", obj);
			} else {
				emit(c, obj);
				written = 1;
			}
		}
		sync_slices(c, node, devices, current);
		/* the GPUNode tells the Node as it is after the write */
		now = written ? kube_get(c->k, path, &e) : json_incref(current);
		if (now)
			publish_gpunodes(c, node, gpus, now);
		else
			fail(c, &e, node);
		json_decref(now);
		json_decref(current);
	}
	free(path);
	json_decref(devices);
	json_decref(obj);
}

/* env_seconds returns $name, a whole number of seconds from 0 to
 * SECONDS_MAX, or dflt when it is not set; anything else is refused. */
static long long
env_seconds(const char *name, long long dflt)
{
	const char *s = getenv(name);
	long long v;
	char *end;

	if (!s)
		return dflt;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (!isdigit((unsigned char)*s) || *end || errno || v > SECONDS_MAX)
		err_die(HAZ_USAGE,
			"$%s: not a whole number of seconds from 0 to "
			"%lld: \"%.64s\"",
			name, SECONDS_MAX, s);
	return v;
}

/* env_goal returns $GPU_UTILIZATION_GOAL, a whole percentage from 1 to
 * 100, or the default when it is not set; anything else is refused. */
static int
env_goal(void)
{
	const char *s = getenv("GPU_UTILIZATION_GOAL");
	char *end;
	long v;

	if (!s)
		return GOBJ_GOAL_DEFAULT;
	errno = 0;
	v = strtol(s, &end, 10);
	if (!isdigit((unsigned char)*s) || *end || errno || v < 1 || v > 100)
		err_die(HAZ_USAGE,
			"$GPU_UTILIZATION_GOAL: not a whole percentage from 1 "
			"to 100: \"%.64s\"",
			s);
	return (int)v;
}

/* is_manager: m can name a field manager: 1 to 128 bytes, no control
 * characters. */
static int
is_manager(const char *m)
{
	const unsigned char *p;

	for (p = (const unsigned char *)m; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return *m && strlen(m) <= MANAGER_MAX;
}

/* check_args refuses, with status 2, names the API server would refuse. */
static void
check_args(struct ctx *c)
{
	size_t node_max = KN_SUBDOMAIN_MAX - GOBJ_SLICE_NAME_EXTRA;
	json_t *v;
	size_t i;

	if (!kn_is_dns_subdomain(c->driver, KN_LABEL_MAX))
		err_die(HAZ_USAGE,
			"-d: not a DRA driver name (a DNS subdomain of "
			"at most %d bytes): \"%.64s\"",
			KN_LABEL_MAX, c->driver);
	node_max -= strlen(c->driver);
	json_array_foreach(c->fixed, i, v)
		if (!kn_is_dns_subdomain(json_string_value(v), node_max))
			err_die(HAZ_USAGE,
				"-N: not a node name (a DNS subdomain of "
				"at most %zu bytes): \"%.64s\"",
				node_max, json_string_value(v));
	if (c->namespace && !kn_is_dns_label(c->namespace))
		err_die(HAZ_USAGE,
			"-n: not a namespace name (a DNS label): "
			"\"%.64s\"",
			c->namespace);
	if (!is_manager(c->manager))
		err_die(HAZ_USAGE,
			"-m: not a field manager (1 to %d bytes, no "
			"control characters): \"%.64s\"",
			MANAGER_MAX, c->manager);
}

/* set_mode takes -a, -c or -D, refusing a second one. */
static void
set_mode(struct ctx *c, enum mode m)
{
	if (c->mode != PRINT && c->mode != m) {
		err_warn("-a, -c and -D exclude each other");
		usage();
	}
	c->mode = m;
}

static void
parse_args(struct ctx *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"context", required_argument, NULL, 'C'},
		{"kubeconfig", required_argument, NULL, 'K'},
		{NULL, 0, NULL, 0},
	};
	json_t *v;
	size_t i;
	int ch;

	while ((ch = getopt_long(argc, argv, "acDxm:d:N:n:R:hV", longopts,
			NULL)) != -1) {
		switch (ch) {
		case 'a': set_mode(c, APPLY); break;
		case 'c': set_mode(c, CREATE); break;
		case 'D': set_mode(c, DELETE); break;
		case 'x': c->extended = 1; break;
		case 'm': c->manager = optarg; break;
		case 'd': c->driver = optarg; break;
		case 'N':
			json_array_append_new(c->fixed,
				json_string_nocheck(optarg));
			break;
		case 'n': c->namespace = optarg; break;
		case 'R': c->ready = optarg; break;
		case 'C': c->context = optarg; break;
		case 'K': c->kubeconfig = optarg; break;
		case 'h':
			fputs(usage_text, stdout);
			fputs(help_text, stdout);
			exit(HAZ_OK);
		case 'V': puts("claim-make " HAZ_VERSION); exit(HAZ_OK);
		default: usage();
		}
	}
	check_args(c);
	if ((c->mode == CREATE || c->mode == DELETE) &&
		(json_array_size(c->fixed) || c->extended)) {
		err_warn(
			"-c and -D take objects: -N and -x do not go with them");
		usage();
	}
	json_array_foreach(c->fixed, i, v)
		note_node(c, json_string_value(v));
}

/* take_input hands a record to on_record; a bad one, one on_record
 * refuses, or an input that could not be opened fails the batch. */
static int
take_input(struct nd_reader *r, json_t *rec, void *arg)
{
	struct ctx *c = arg;

	if (rec && on_record(c, r, rec) == 0)
		return 0;
	c->batch_bad = 1;
	return 1;
}

/* connect loads the kubeconfig and opens the client, for -a, -c, -D. */
static void
connect(struct ctx *c)
{
	if (kc_load(&c->kc, c->kubeconfig, c->context) < 0)
		exit(HAZ_FAIL);
	c->k = kube_new(&c->kc);
	/* one create or apply after another: on one kept connection */
	kube_keep(c->k);
	c->default_ns = c->namespace ? c->namespace : c->kc.namespace;
	c->ap = ap_new(c->k, c->manager, c->default_ns);
}

int
main(int argc, char **argv)
{
	struct ctx c = {.manager = "k8shazgpu", .driver = "gpu.canhazgpu.dev"};
	int st;

	err_init(argv[0]);
	c.nodes = json_object();
	c.order = json_array();
	c.fixed = json_array();
	c.names = json_object();
	c.unserved = json_object();
	c.cut_told = json_object();
	parse_args(&c, argc, argv);
	c.now_fixed = getenv("K8SHAZGPU_NOW") != NULL;
	c.now = (time_t)env_seconds("K8SHAZGPU_NOW", (long long)time(NULL));
	c.heartbeat = env_seconds("K8SHAZGPU_HEARTBEAT", 300);
	gobj_set_goal(env_goal());
	if (c.mode != PRINT)
		connect(&c);
	st = nd_each_record(argc - optind, argv + optind, 0, take_input, &c);
	if (c.pending || !c.flushed)
		publish_batch(&c);
	if (st != HAZ_OK && c.status == HAZ_OK)
		c.status = st;
	ap_free(c.ap);
	kube_free(c.k);
	if (c.mode != PRINT)
		kc_free(&c.kc);
	json_decref(c.nodes);
	json_decref(c.order);
	json_decref(c.fixed);
	json_decref(c.names);
	json_decref(c.unserved);
	json_decref(c.cut_told);
	return nd_finish(c.status);
}
