/* claim-make: turn records into Kubernetes objects; with -a, apply them.
 *
 *   claim-make [-ax] [-m manager] [-d driver] [-N node]... [-n namespace]
 *              [--context name] [--kubeconfig file] [file...]
 *
 * Input records, by kind:
 *   gpu   (gpu-probe(1)) are gathered per node until the end of input;
 *         each node then becomes a Node object with GPU feature discovery
 *         and AgentaFlow labels and annotations (with -x also its
 *         nvidia.com/ extended resources in status) and ResourceSlices of
 *         DRA driver -d, one device per whole GPU and per MIG device.
 *         -N names a node to publish even when no record names it: a node
 *         whose GPUs are all gone is published empty, so nothing stale
 *         stays behind.
 *   any record with apiVersion and kind is a Kubernetes object, passed
 *         through as it is.
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
 * no longer wanted are deleted (op "delete").
 *
 * $K8SHAZGPU_NOW (Unix seconds) fixes the agentaflow.gpu/last-update
 * stamp, for reproducible output. With -a a node that already carries
 * every label, annotation and resource is not written again (op
 * "unchanged") until its last-update stamp is $K8SHAZGPU_HEARTBEAT
 * seconds old (default 300).
 *
 * EXIT STATUS: 0 all done; 1 a record or a write failed (the others went
 * on); 2 usage; 75 the API server was unreachable or overloaded. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apply.h"
#include "err.h"
#include "gpuobj.h"
#include "kube.h"
#include "kubeconfig.h"
#include "nd.h"

struct ctx {
	int apply, extended;
	const char *manager, *driver, *namespace;
	const char *context, *kubeconfig;
	json_t *nodes;  /* node name -> array of gpu records */
	json_t *order;  /* node names in first-seen order */
	json_t *fixed;  /* the -N nodes, published in every batch */
	int pending;    /* records gathered since the last flush */
	int flushed;    /* a flush was seen */
	time_t now;
	struct kc_config kc;
	struct kube *k;
	struct applier *ap;
	int status;
};

static const char usage_text[] =
	"usage: claim-make [-ax] [-m manager] [-d driver] [-N node]... [-n namespace]\n"
	"                  [--context name] [--kubeconfig file] [file...]\n";

static const char help_text[] =
	"Turn gpu records and Kubernetes objects into objects; -a applies them.\n"
	"\n"
	"  -a              apply (server-side apply) instead of printing\n"
	"  -x              also publish nvidia.com/ extended resources in node status\n"
	"  -m manager      field manager (default k8shazgpu)\n"
	"  -d driver       DRA driver name (default gpu.canhazgpu.dev)\n"
	"  -N node         publish this node even if no record names it\n"
	"  -n namespace    namespace for namespaced objects naming none\n"
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

/* emit prints obj, or applies it and prints the result. */
static void
emit(struct ctx *c, const json_t *obj)
{
	struct kube_error e;
	json_t *res;
	char *ref;

	if (!c->apply) {
		nd_write((json_t *)obj);
		return;
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

/* publish_batch publishes every node gathered, then starts a new batch
 * holding just the -N nodes. */
static void
publish_batch(struct ctx *c)
{
	json_t *name;
	size_t i;

	json_array_foreach(c->order, i, name)
		publish(c, json_string_value(name),
			json_object_get(c->nodes, json_string_value(name)));
	json_object_clear(c->nodes);
	json_array_clear(c->order);
	json_array_foreach(c->fixed, i, name)
		note_node(c, json_string_value(name));
	c->pending = 0;
	if (!getenv("K8SHAZGPU_NOW"))
		c->now = time(NULL);
}

static int
on_record(struct nd_reader *r, json_t *rec, void *arg)
{
	struct ctx *c = arg;
	const char *kind = json_string_value(json_object_get(rec, "kind"));
	const char *node;

	if (kind && strcmp(kind, "flush") == 0) {
		publish_batch(c);
		c->flushed = 1;
		return 0;
	}
	c->pending = 1;
	if (kind && strcmp(kind, "gpu") == 0) {
		if (!(node = json_string_value(json_object_get(rec, "node")))) {
			nd_warn(r, "gpu record has no node");
			return 1;
		}
		note_node(c, node);
		json_array_append(json_object_get(c->nodes, node), rec);
		return 0;
	}
	if (kind && json_is_string(json_object_get(rec, "apiVersion"))) {
		emit(c, rec);
		return 0;
	}
	nd_warn(r, kind ? "unknown record kind \"%s\"" : "record has no kind%s",
		kind ? kind : "");
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
	char *sel = easprintf("spec.nodeName=%s,spec.driver=%s", node, c->driver);
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
		g = json_integer_value(json_object_get(json_object_get(
			json_object_get(s, "spec"), "pool"), "generation"));
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
		json_object_set_new(json_object_get(s, "metadata"), "ownerReferences",
			json_pack("[{s:s, s:s, s:O, s:O}]", "apiVersion", "v1", "kind",
			"Node", "name", json_object_get(meta, "name"), "uid",
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

/* stale_keys returns an object mapping to null every key of have (the
 * node's labels or annotations) under our prefixes that want lacks. */
static json_t *
stale_keys(const json_t *have, const json_t *want)
{
	json_t *out = json_object(), *v;
	const char *key;

	json_object_foreach((json_t *)have, key, v)
		if ((!strncmp(key, GOBJ_NVIDIA_PREFIX, strlen(GOBJ_NVIDIA_PREFIX)) ||
			!strncmp(key, GOBJ_AGENTAFLOW_PREFIX, strlen(GOBJ_AGENTAFLOW_PREFIX))) &&
			!json_object_get(want, key))
			json_object_set_new(out, key, json_null());
	return out;
}

/* remove_stale deletes the GPU labels and annotations the node carries
 * but obj no longer has. Server-side apply removes those this field
 * manager set alone; this also takes those another writer set or
 * shares, such as the node's creator. */
static void
remove_stale(struct ctx *c, const char *node, const json_t *current,
	const json_t *obj)
{
	const json_t *have = json_object_get(current, "metadata");
	const json_t *want = json_object_get(obj, "metadata");
	json_t *labels = stale_keys(json_object_get(have, "labels"),
		json_object_get(want, "labels"));
	json_t *ann = stale_keys(json_object_get(have, "annotations"),
		json_object_get(want, "annotations"));
	json_t *patch, *ans;
	struct kube_error e;
	char *path;

	if (json_object_size(labels) + json_object_size(ann) > 0) {
		patch = json_pack("{s:{s:O, s:O}}", "metadata", "labels", labels,
			"annotations", ann);
		path = easprintf("/api/v1/nodes/%s", node);
		if ((ans = kube_patch(c->k, path, KUBE_PATCH_MERGE, patch, &e))) {
			print_result("unlabel", obj);
			json_decref(ans);
		} else {
			fail(c, &e, node);
		}
		free(path);
		json_decref(patch);
	}
	json_decref(labels);
	json_decref(ann);
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
 * would write, and its agentaflow.gpu/last-update stamp is younger than
 * the heartbeat ($K8SHAZGPU_HEARTBEAT seconds, default 300): then the
 * write is left out, and an idle cluster sees no node updates every cycle. */
static int
node_current(const struct ctx *c, const json_t *current, const json_t *obj)
{
	const json_t *hm = json_object_get(current, "metadata");
	const json_t *wm = json_object_get(obj, "metadata");
	const json_t *hs = json_object_get(current, "status");
	const json_t *ws = json_object_get(obj, "status");
	const char *stamp = json_string_value(json_object_get(
		json_object_get(hm, "annotations"), "agentaflow.gpu/last-update"));
	const char *hb = getenv("K8SHAZGPU_HEARTBEAT");
	struct tm tm = {0};

	if (!stamp || !strptime(stamp, "%Y-%m-%dT%H:%M:%SZ", &tm) ||
		c->now - timegm(&tm) >= (hb ? atol(hb) : 300))
		return 0;
	if (!has_all(json_object_get(hm, "labels"), json_object_get(wm, "labels"), NULL) ||
		!has_all(json_object_get(hm, "annotations"),
			json_object_get(wm, "annotations"), "agentaflow.gpu/last-update"))
		return 0;
	return !ws || (has_all(json_object_get(hs, "capacity"), json_object_get(ws, "capacity"), NULL) &&
		has_all(json_object_get(hs, "allocatable"), json_object_get(ws, "allocatable"), NULL));
}

/* publish writes one node's objects. */
static void
publish(struct ctx *c, const char *node, const json_t *gpus)
{
	json_t *obj = node_object(c, node, gpus), *devices = gobj_devices(gpus);
	json_t *slices, *s, *current;
	struct kube_error e;
	char *path;
	size_t i;

	if (!c->apply) {
		nd_write(obj);
		slices = gobj_slices(node, c->driver, 1, devices);
		json_array_foreach(slices, i, s)
			nd_write(s);
		json_decref(slices);
	} else {
		path = easprintf("/api/v1/nodes/%s", node);
		current = kube_get(c->k, path, &e);
		free(path);
		if (!current) {
			fail(c, &e, node);
		} else {
			remove_stale(c, node, current, obj);
			if (node_current(c, current, obj))
				print_result("unchanged", obj);
			else
				emit(c, obj);
			sync_slices(c, node, devices, current);
			json_decref(current);
		}
	}
	json_decref(devices);
	json_decref(obj);
}

static void
parse_args(struct ctx *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"context", required_argument, NULL, 'C'},
		{"kubeconfig", required_argument, NULL, 'K'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "axm:d:N:n:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'a': c->apply = 1; break;
		case 'x': c->extended = 1; break;
		case 'm': c->manager = optarg; break;
		case 'd': c->driver = optarg; break;
		case 'N':
			note_node(c, optarg);
			json_array_append_new(c->fixed, json_string(optarg));
			break;
		case 'n': c->namespace = optarg; break;
		case 'C': c->context = optarg; break;
		case 'K': c->kubeconfig = optarg; break;
		case 'h': fputs(usage_text, stdout); fputs(help_text, stdout); exit(HAZ_OK);
		case 'V': puts("claim-make " HAZ_VERSION); exit(HAZ_OK);
		default: usage();
		}
	}
}

/* connect loads the kubeconfig and opens the client, for -a. */
static void
connect(struct ctx *c)
{
	if (kc_load(&c->kc, c->kubeconfig, c->context) < 0)
		exit(HAZ_FAIL);
	c->k = kube_new(&c->kc);
	c->ap = ap_new(c->k, c->manager,
		c->namespace ? c->namespace : c->kc.namespace);
}

int
main(int argc, char **argv)
{
	struct ctx c = {.manager = "k8shazgpu", .driver = "gpu.canhazgpu.dev"};
	const char *env = getenv("K8SHAZGPU_NOW");
	int st;

	err_init(argv[0]);
	c.nodes = json_object();
	c.order = json_array();
	c.fixed = json_array();
	parse_args(&c, argc, argv);
	c.now = env ? (time_t)strtoll(env, NULL, 10) : time(NULL);
	if (c.apply)
		connect(&c);
	st = nd_loop_files(argc - optind, argv + optind, 0, on_record, &c);
	if (c.pending || !c.flushed)
		publish_batch(&c);
	if (st != HAZ_OK && c.status == HAZ_OK)
		c.status = st;
	ap_free(c.ap);
	kube_free(c.k);
	if (c.apply)
		kc_free(&c.kc);
	json_decref(c.nodes);
	json_decref(c.order);
	json_decref(c.fixed);
	return nd_finish(c.status);
}
