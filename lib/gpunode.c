/* gpunode: a node's GPUNode objects from its gpu records, its Node and
 * its pods (see gpunode.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gpunode.h"
#include "gpuobj.h"
#include "podreq.h"

#define DEVICES_ANNOTATION "canhazgpu.dev/devices"

static const char *const groups[] = {"canhazgpu.dev/v1alpha1",
	"agentaflow.io/v1"};

static const char *
sget(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static const json_t *
mig_of(const json_t *g)
{
	const json_t *m = json_object_get(g, "mig");

	return json_is_object(m) ? m : NULL;
}

/* held: some record of g's index carries a hold (a MIG device carries
 * its parent's index) */
static int
held(const json_t *gpus, const json_t *g)
{
	json_int_t idx = json_integer_value(json_object_get(g, "index"));
	const json_t *o;
	size_t i;

	json_array_foreach(gpus, i, o)
		if (json_integer_value(json_object_get(o, "index")) == idx &&
			json_is_object(json_object_get(o, "held")))
			return 1;
	return 0;
}

/* ---- what is in use ---------------------------------------------------- */

/* mark_name marks the device named name (a DRA device name) */
static void
mark_name(const json_t *gpus, char *used, const char *name)
{
	char buf[GOBJ_DEVICE_NAME_MAX];
	const json_t *g;
	size_t i;

	json_array_foreach(gpus, i, g)
		if (gobj_is_device(g) &&
			strcmp(gobj_device_name(g, buf), name) == 0)
			used[i] = 1;
}

/* mark_claims marks the devices the claims were allocated on node */
static void
mark_claims(const json_t *gpus, char *used, const json_t *claims,
	const char *node, const char *driver)
{
	const json_t *c, *r, *results;
	size_t i, j;

	json_array_foreach(claims, i, c) {
		results = json_object_get(
			json_object_get(json_object_get(json_object_get(c,
								"status"),
						"allocation"),
				"devices"),
			"results");
		json_array_foreach(results, j, r) {
			if (sget(r, "driver") && sget(r, "pool") &&
				sget(r, "device") &&
				strcmp(sget(r, "driver"), driver) == 0 &&
				strcmp(sget(r, "pool"), node) == 0)
				mark_name(gpus, used, sget(r, "device"));
		}
	}
}

/* annotated returns the UUIDs of pod's canhazgpu.dev/devices annotation
 * (a new array; empty when absent or no JSON array) */
static json_t *
annotated(const json_t *pod)
{
	const char *s = sget(json_object_get(json_object_get(pod, "metadata"),
				     "annotations"),
		DEVICES_ANNOTATION);
	json_t *v = s ? json_loads(s, 0, NULL) : NULL;

	if (!json_is_array(v)) {
		json_decref(v);
		return json_array();
	}
	return v;
}

/* mark_named marks the devices pod's annotation names and returns what
 * it asks beyond them, per extended resource of gpus (a new object:
 * resource -> count, at most zero when the annotation covers it) */
static json_t *
mark_named(const json_t *gpus, char *used, const json_t *pod)
{
	json_t *uuids = annotated(pod), *asked = json_object(), *u, *n;
	char res[128];
	const json_t *g;
	struct qty q;
	int64_t want;
	size_t i, j;
	int bad = 0;

	json_array_foreach(gpus, i, g) {
		if (!gobj_resource_name(g, res, sizeof res))
			continue;
		if (!json_object_get(asked, res)) {
			want = 0;
			if (podreq_request(pod, res, &q, &bad) &&
				qty_value(&q, &want) != QTY_OK)
				want = 0;
			json_object_set_new(asked, res, json_integer(want));
		}
		json_array_foreach(uuids, j, u) {
			if (!json_is_string(u) || !sget(g, "uuid") ||
				strcmp(json_string_value(u), sget(g, "uuid")))
				continue;
			used[i] = 1;
			n = json_object_get(asked, res);
			json_integer_set(n, json_integer_value(n) - 1);
		}
	}
	json_decref(uuids);
	return asked;
}

/* mark_unnamed marks, per resource of asked, that many more offered
 * devices not yet in use, the first in record order */
static void
mark_unnamed(const json_t *gpus, char *used, json_t *asked)
{
	char res[128];
	const json_t *g;
	json_t *n;
	size_t i;

	json_array_foreach(gpus, i, g) {
		if (!gobj_resource_name(g, res, sizeof res) || used[i] ||
			!gobj_offered(gpus, g))
			continue;
		n = json_object_get(asked, res);
		if (json_integer_value(n) <= 0)
			continue;
		used[i] = 1;
		json_integer_set(n, json_integer_value(n) - 1);
	}
}

/* in_use returns one flag per record of gpus (malloc'd): 1 when in use */
static char *
in_use(const json_t *gpus, const char *node, const char *driver,
	const json_t *pods, const json_t *claims)
{
	size_t n = json_array_size(gpus), i, j;
	char *used = ecalloc(n ? n : 1, 1);
	json_t *unnamed = json_array(), *a;
	const json_t *p, *g, *o;

	/* every device named, by a claim or an annotation, before any
	 * device is guessed for a request naming none */
	mark_claims(gpus, used, claims, node, driver);
	json_array_foreach(pods, i, p)
		if (!podreq_terminal(p))
			json_array_append_new(unnamed,
				mark_named(gpus, used, p));
	json_array_foreach(unnamed, i, a)
		mark_unnamed(gpus, used, a);
	json_decref(unnamed);
	/* a MIG-enabled GPU is in use when one of its devices is */
	json_array_foreach(gpus, i, g) {
		if (mig_of(g) || gobj_is_device(g))
			continue;
		json_array_foreach(gpus, j, o)
			if (used[j] && mig_of(o) &&
				json_equal(json_object_get(o, "index"),
					json_object_get(g, "index")))
				used[i] = 1;
	}
	return used;
}

/* ---- the status -------------------------------------------------------- */

static json_t *
or_null(const json_t *v)
{
	return v ? json_deep_copy(v) : json_null();
}

/* number: v as JSON, an integer when it is whole, so that what the API
 * server echoes back compares equal */
static json_t *
number(const json_t *v)
{
	double d;

	if (!json_is_real(v))
		return or_null(v);
	d = json_real_value(v);
	if (d == floor(d) && fabs(d) < 9e15)
		return json_integer((json_int_t)d);
	return json_real(d);
}

static json_t *
gpu_entry(const json_t *gpus, const json_t *g, int inuse)
{
	const json_t *m = mig_of(g), *r = json_object_get(g, "health_reasons");
	json_t *mig = json_null();

	if (m)
		mig = json_pack("{s:o, s:o, s:o}", "profile",
			or_null(json_object_get(m, "profile")), "device",
			or_null(json_object_get(m, "device")), "parentUUID",
			or_null(json_object_get(m, "parent_uuid")));
	return json_pack(
		"{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:b}",
		"index", or_null(json_object_get(g, "index")), "uuid",
		or_null(json_object_get(g, "uuid")), "product",
		or_null(json_object_get(g, "product")), "memoryMiB",
		or_null(json_object_get(g, "memory_mib")), "memoryUsedMiB",
		or_null(json_object_get(g, "memory_used_mib")), "utilPct",
		number(json_object_get(g, "util_pct")), "tempC",
		or_null(json_object_get(g, "temp_c")), "eccErrors",
		or_null(json_object_get(g, "ecc_errors")), "health",
		or_null(json_object_get(g, "health")), "healthReasons",
		json_is_array(r) ? json_deep_copy(r) : json_array(), "mig", mig,
		"held", held(gpus, g), "inUse", inuse);
}

static int
health_rank(const char *h)
{
	return !h                             ? 0
		: strcmp(h, "unhealthy") == 0 ? 2
					      : strcmp(h, "warn") == 0;
}

static json_t *
copy_or_empty(const json_t *v)
{
	return json_is_object(v) ? json_deep_copy(v) : json_object();
}

json_t *
gn_status(const json_t *gpus, const char *node, const char *driver,
	const json_t *node_status, const json_t *pods, const json_t *claims,
	time_t now, int *bad)
{
	static const char *const health[] = {"ok", "warn", "unhealthy"};
	char *used = in_use(gpus, node, driver, pods, claims), stamp[32];
	long long total = 0, devices = 0, offered = 0, free_devices = 0;
	const json_t *g, *first = NULL, *alloc;
	int worst = 0, mig = 0, nutil = 0;
	json_t *list = json_array(), *st;
	double util = 0;
	struct tm tm;
	size_t i;

	json_array_foreach(gpus, i, g) {
		json_array_append_new(list, gpu_entry(gpus, g, used[i]));
		if (health_rank(sget(g, "health")) > worst)
			worst = health_rank(sget(g, "health"));
		mig |= mig_of(g) != NULL;
		if (!mig_of(g)) {
			total++;
			first = first ? first : g;
			if (json_is_number(json_object_get(g, "util_pct"))) {
				util += json_number_value(
					json_object_get(g, "util_pct"));
				nutil++;
			}
		}
		if (!gobj_is_device(g))
			continue;
		devices++;
		if (gobj_offered(gpus, g)) {
			offered++;
			free_devices += !used[i];
		}
	}
	free(used);
	util = nutil ? util / nutil : 0;
	alloc = json_object_get(node_status, "allocatable");
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
	st = json_pack("{s:I, s:I, s:I, s:I, s:s, s:I, s:s, s:o, s:s, s:o, "
		       "s:o, s:o, s:s}",
		"totalGPUs", (json_int_t)total, "devices", (json_int_t)devices,
		"offeredDevices", (json_int_t)offered, "freeDevices",
		(json_int_t)free_devices, "utilizationTier", gobj_tier(util),
		"utilizationPct", (json_int_t)(util + 0.5), "health",
		health[worst], "product",
		or_null(first ? json_object_get(first, "product") : NULL),
		"migStrategy", mig ? "mixed" : "none", "gpus", list, "capacity",
		copy_or_empty(json_object_get(node_status, "capacity")),
		"allocatable",
		pods && json_is_object(alloc) ? podreq_left(alloc, pods, bad)
					      : copy_or_empty(alloc),
		"lastUpdate", stamp);
	return st;
}

json_t *
gn_objects(const char *node, const char *uid, const json_t *status)
{
	json_t *list = json_array(), *obj, *meta;
	size_t i;

	for (i = 0; i < sizeof groups / sizeof groups[0]; i++) {
		meta = json_pack("{s:s}", "name", node);
		if (uid)
			json_object_set_new(meta, "ownerReferences",
				json_pack("[{s:s, s:s, s:s, s:s}]",
					"apiVersion", "v1", "kind", "Node",
					"name", node, "uid", uid));
		obj = json_pack("{s:s, s:s, s:o, s:{s:s}, s:O}", "apiVersion",
			groups[i], "kind", "GPUNode", "metadata", meta, "spec",
			"nodeName", node, "status", status);
		json_array_append_new(list, obj);
	}
	return list;
}

/* without_stamp returns a copy of a status with no lastUpdate */
static json_t *
without_stamp(const json_t *status)
{
	json_t *c = json_is_object(status) ? json_deep_copy(status)
					   : json_object();

	json_object_del(c, "lastUpdate");
	return c;
}

int
gn_current(const json_t *current, const json_t *want, time_t now,
	long long heartbeat)
{
	const json_t *hs = json_object_get(current, "status");
	const char *stamp = sget(hs, "lastUpdate"), *end;
	json_t *a, *b;
	struct tm tm = {0};
	int same;

	if (!stamp || !(end = strptime(stamp, "%Y-%m-%dT%H:%M:%SZ", &tm)) ||
		*end || (long long)now - (long long)timegm(&tm) >= heartbeat)
		return 0;
	if (!json_equal(json_object_get(current, "spec"),
		    json_object_get(want, "spec")) ||
		!json_equal(json_object_get(json_object_get(current,
						    "metadata"),
				    "ownerReferences"),
			json_object_get(json_object_get(want, "metadata"),
				"ownerReferences")))
		return 0;
	a = without_stamp(hs);
	b = without_stamp(json_object_get(want, "status"));
	same = json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return same;
}

/* ---- reading the cluster ----------------------------------------------- */

int
gn_pods(struct kube *k, const char *node, json_t **pods, struct kube_error *e)
{
	char *path = estrdup("/api/v1/pods");
	char *sel = easprintf("spec.nodeName=%s", node);
	char *rv = NULL;
	int ret;

	kube_query(&path, "fieldSelector", sel);
	ret = kube_list(k, path, 0, pods, &rv, e);
	free(rv);
	free(sel);
	free(path);
	return ret < 0 ? -1 : 0;
}

/* get_claim appends to claims the ResourceClaim ns/name unless seen has
 * it; one gone is left out. Returns 0, or -1 with e filled. */
static int
get_claim(struct kube *k, const char *ns, const char *name, json_t *seen,
	json_t *claims, struct kube_error *e)
{
	char *key = easprintf("%s/%s", ns, name), *ens, *ename, *path;
	json_t *c;

	if (json_object_get(seen, key)) {
		free(key);
		return 0;
	}
	json_object_set_new(seen, key, json_true());
	free(key);
	ens = kube_escape(ns);
	ename = kube_escape(name);
	path = easprintf("/apis/resource.k8s.io/v1/namespaces/%s/"
			 "resourceclaims/%s",
		ens, ename);
	free(ens);
	free(ename);
	c = kube_get(k, path, e);
	free(path);
	if (c)
		json_array_append_new(claims, c);
	else if (!(e->kind == KUBE_EAPI && e->status == 404))
		return -1;
	return 0;
}

int
gn_claims(struct kube *k, const json_t *pods, json_t **claims,
	struct kube_error *e)
{
	/* a claim named in the spec, or made from a template for the pod */
	static const char *const where[][2] = {{"spec", "resourceClaims"},
		{"status", "resourceClaimStatuses"}};
	json_t *seen = json_object();
	const json_t *p, *st;
	const char *ns, *name;
	size_t i, j, w;
	int ret = 0;

	*claims = json_array();
	json_array_foreach(pods, i, p) {
		ns = sget(json_object_get(p, "metadata"), "namespace");
		if (podreq_terminal(p) || !ns)
			continue;
		for (w = 0; w < 2 && ret == 0; w++)
			json_array_foreach(json_object_get(json_object_get(p,
								   where[w][0]),
						   where[w][1]),
				j, st) {
				if ((name = sget(st, "resourceClaimName")) &&
					get_claim(k, ns, name, seen, *claims,
						e) < 0) {
					ret = -1;
					break;
				}
			}
	}
	json_decref(seen);
	if (ret < 0) {
		json_decref(*claims);
		*claims = NULL;
	}
	return ret;
}
