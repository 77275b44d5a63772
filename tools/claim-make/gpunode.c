/* gpunode: a node's GPUNode objects from its gpu records, its Node and
 * its pods (see gpunode.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gpunode.h"
#include "gpuobj.h"
#include "hmap.h"
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

/* ---- indexes ------------------------------------------------------------ */

/* Everything below is linear in the records, or n log n: a node may
 * bring thousands of them, and each pod and claim looks some up. */

/* A by-name index of gpus: the positions of the records that have a
 * name (a device name, a UUID), those sharing one chained in record
 * order. */
struct byname {
	struct hm *first; /* name -> position + 1 */
	size_t *next;     /* position -> the next of its name; n at the end */
	size_t n;
};

typedef const char *name_fn(const json_t *g, char *buf, size_t len);

static void
byname_init(struct byname *ix, const json_t *gpus, name_fn *name)
{
	char buf[GOBJ_DEVICE_NAME_MAX];
	const char *key;
	size_t i;
	void *at;

	ix->n = json_array_size(gpus);
	ix->first = hm_new(NULL);
	ix->next = ecalloc(ix->n ? ix->n : 1, sizeof *ix->next);
	for (i = ix->n; i-- > 0;) {
		if (!(key = name(json_array_get(gpus, i), buf, sizeof buf)))
			continue;
		at = hm_get(ix->first, key);
		ix->next[i] = at ? (size_t)((uintptr_t)at - 1) : ix->n;
		hm_put(ix->first, key, (void *)(uintptr_t)(i + 1));
	}
}

/* byname_first is the first position of name, or n when none has it. */
static size_t
byname_first(const struct byname *ix, const char *name)
{
	void *at = hm_get(ix->first, name);

	return at ? (size_t)((uintptr_t)at - 1) : ix->n;
}

static void
byname_free(struct byname *ix)
{
	hm_free(ix->first);
	free(ix->next);
}

static const char *
device_name_of(const json_t *g, char *buf, size_t len)
{
	(void)len;
	return gobj_is_device(g) ? gobj_device_name(g, buf) : NULL;
}

static const char *
uuid_of(const json_t *g, char *buf, size_t len)
{
	(void)buf;
	(void)len;
	return sget(g, "uuid");
}

/* The extended resources of a node's devices: res[i] is the resource of
 * record i (an index into names), -1 for a record that is no device. */
struct resources {
	char **names;
	size_t count;
	int *of;
};

static void
resources_init(struct resources *r, const json_t *gpus)
{
	struct hm *seen = hm_new(NULL);
	char name[128];
	size_t i, n = json_array_size(gpus);
	void *at;

	r->names = NULL;
	r->count = 0;
	r->of = ecalloc(n ? n : 1, sizeof *r->of);
	for (i = 0; i < n; i++) {
		r->of[i] = -1;
		if (!gobj_resource_name(json_array_get(gpus, i), name,
			    sizeof name))
			continue;
		if (!(at = hm_get(seen, name))) {
			r->names = erealloc(r->names,
				(r->count + 1) * sizeof *r->names);
			r->names[r->count++] = estrdup(name);
			hm_put(seen, name, at = (void *)(uintptr_t)r->count);
		}
		r->of[i] = (int)((uintptr_t)at - 1);
	}
	hm_free(seen);
}

static void
resources_free(struct resources *r)
{
	size_t i;

	for (i = 0; i < r->count; i++)
		free(r->names[i]);
	free(r->names);
	free(r->of);
}

/* ---- what is in use ---------------------------------------------------- */

/* mark_claims marks the devices the claims were allocated on node */
static void
mark_claims(const json_t *gpus, char *used, const json_t *claims,
	const char *node, const char *driver)
{
	const json_t *c, *r, *results;
	struct byname names;
	size_t i, j, k;

	if (!json_array_size(claims))
		return;
	byname_init(&names, gpus, device_name_of);
	json_array_foreach(claims, i, c) {
		results = json_object_get(
			json_object_get(json_object_get(json_object_get(c,
								"status"),
						"allocation"),
				"devices"),
			"results");
		json_array_foreach(results, j, r) {
			if (!sget(r, "driver") || !sget(r, "pool") ||
				!sget(r, "device") ||
				strcmp(sget(r, "driver"), driver) != 0 ||
				strcmp(sget(r, "pool"), node) != 0)
				continue;
			for (k = byname_first(&names, sget(r, "device"));
				k < names.n; k = names.next[k])
				used[k] = 1;
		}
	}
	byname_free(&names);
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
 * it asks beyond them, per resource of res (malloc'd, res->count
 * counts: at most zero when the annotation covers it) */
static long long *
mark_named(char *used, const json_t *pod, const struct byname *by_uuid,
	const struct resources *res)
{
	long long *left = ecalloc(res->count ? res->count : 1, sizeof *left);
	json_t *uuids = annotated(pod);
	const json_t *u;
	struct qty q;
	int64_t want;
	size_t i, j;
	int bad = 0;

	for (i = 0; i < res->count; i++) {
		want = 0;
		if (podreq_request(pod, res->names[i], &q, &bad) &&
			qty_value(&q, &want) != QTY_OK)
			want = 0;
		left[i] = want;
	}
	json_array_foreach(uuids, j, u) {
		if (!json_is_string(u))
			continue;
		for (i = byname_first(by_uuid, json_string_value(u));
			i < by_uuid->n; i = by_uuid->next[i]) {
			if (res->of[i] < 0)
				continue;
			used[i] = 1;
			left[res->of[i]]--;
		}
	}
	json_decref(uuids);
	return left;
}

/* mark_unnamed marks, per resource, left of it more offered devices not
 * yet in use, the first in record order */
static void
mark_unnamed(size_t n, char *used, const char *offered,
	const struct resources *res, long long *left)
{
	size_t i, r, asking = 0;

	for (r = 0; r < res->count; r++)
		asking += left[r] > 0;
	for (i = 0; i < n && asking; i++) {
		if (res->of[i] < 0 || used[i] || !offered[i] ||
			left[res->of[i]] <= 0)
			continue;
		used[i] = 1;
		asking -= --left[res->of[i]] == 0;
	}
}

/* mark_parents marks every MIG-enabled GPU one of whose MIG devices
 * (the records of its index) is in use */
static void
mark_parents(const json_t *gpus, char *used)
{
	struct hm *busy = hm_new(NULL);
	const json_t *g;
	char key[24];
	size_t i;

	json_array_foreach(gpus, i, g) {
		if (!used[i] || !mig_of(g))
			continue;
		snprintf(key, sizeof key, "%lld",
			(long long)json_integer_value(
				json_object_get(g, "index")));
		hm_put(busy, key, (void *)1);
	}
	json_array_foreach(gpus, i, g) {
		if (mig_of(g) || gobj_is_device(g))
			continue;
		snprintf(key, sizeof key, "%lld",
			(long long)json_integer_value(
				json_object_get(g, "index")));
		if (hm_get(busy, key))
			used[i] = 1;
	}
	hm_free(busy);
}

/* in_use returns one flag per record of gpus (malloc'd): 1 when in use;
 * offered holds gobj_offered's flags */
static char *
in_use(const json_t *gpus, const char *offered, const char *node,
	const char *driver, const json_t *pods, const json_t *claims)
{
	size_t n = json_array_size(gpus), i, k = 0;
	char *used = ecalloc(n ? n : 1, 1);
	long long **left = ecalloc(json_array_size(pods) + 1, sizeof *left);
	struct byname by_uuid;
	struct resources res;
	const json_t *p;

	resources_init(&res, gpus);
	byname_init(&by_uuid, gpus, uuid_of);
	/* every device named, by a claim or an annotation, before any
	 * device is guessed for a request naming none */
	mark_claims(gpus, used, claims, node, driver);
	json_array_foreach(pods, i, p)
		if (!podreq_terminal(p))
			left[k++] = mark_named(used, p, &by_uuid, &res);
	for (i = 0; i < k; i++) {
		mark_unnamed(n, used, offered, &res, left[i]);
		free(left[i]);
	}
	free(left);
	/* a MIG-enabled GPU is in use when one of its devices is */
	mark_parents(gpus, used);
	byname_free(&by_uuid);
	resources_free(&res);
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
gpu_entry(const json_t *g, int held, int inuse)
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
		"held", held, "inUse", inuse);
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
	char *held, *offered_flags = gobj_offered(gpus, &held);
	char *used = in_use(gpus, offered_flags, node, driver, pods, claims);
	char stamp[32];
	long long total = 0, devices = 0, offered = 0, free_devices = 0;
	const json_t *g, *first = NULL, *alloc;
	int worst = 0, mig = 0, nutil = 0;
	json_t *list = json_array(), *st;
	double util = 0;
	struct tm tm;
	size_t i;

	json_array_foreach(gpus, i, g) {
		json_array_append_new(list, gpu_entry(g, held[i], used[i]));
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
		if (offered_flags[i]) {
			offered++;
			free_devices += !used[i];
		}
	}
	free(used);
	free(held);
	free(offered_flags);
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
