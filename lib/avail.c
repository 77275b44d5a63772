/* avail: free MIG devices per node, waiting demand, RuntimeClass limits.
 *
 * Maps are jansson objects, only ever touched under the lock:
 *   nodes    name -> {"ready":bool, "alloc":{res:n}, "base":{res:n}}
 *            (base: the "allocated" of an inventory record)
 *   bound    node name -> {res:n} asked by live pods bound there
 *   waiting  {res:n} asked by live pods not bound yet
 *   pods     uid -> {"node":name, "demand":{res:n}, "state":s}; only pods
 *            that ask for MIG devices; state is "bound", "waiting" or
 *            "idle" (terminated, unschedulable or gated: counts nowhere)
 *   pending  token -> {"demand":{res:n}, "expires":monotonic seconds,
 *            "match":key}, in the order admitted (jansson keeps insertion
 *            order), which is the order they expire in
 *   matches  key -> [token...], oldest first
 *   pending_sum  {res:n} over pending
 *   classes  name -> {annotation: value} of limits.k8s.gpu/ keys */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "avail.h"
#include "clock.h"
#include "err.h"
#include "podres.h"

#define CLASS_PREFIX "limits.k8s.gpu/"

struct avail {
	pthread_mutex_t mu;
	double ttl;
	int synced;
	json_t *nodes, *bound, *waiting, *pods, *pending, *pending_sum,
		*matches;
	json_t *classes;
};

struct avail *
avail_new(double pending_seconds)
{
	struct avail *a = ecalloc(1, sizeof *a);

	pthread_mutex_init(&a->mu, NULL);
	a->ttl = pending_seconds;
	a->nodes = json_object();
	a->bound = json_object();
	a->waiting = json_object();
	a->pods = json_object();
	a->pending = json_object();
	a->pending_sum = json_object();
	a->matches = json_object();
	a->classes = json_object();
	return a;
}

void
avail_free(struct avail *a)
{
	if (!a)
		return;
	json_decref(a->nodes);
	json_decref(a->bound);
	json_decref(a->waiting);
	json_decref(a->pods);
	json_decref(a->pending);
	json_decref(a->pending_sum);
	json_decref(a->matches);
	json_decref(a->classes);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

void
avail_lock(struct avail *a)
{
	pthread_mutex_lock(&a->mu);
}

void
avail_unlock(struct avail *a)
{
	pthread_mutex_unlock(&a->mu);
}

/* ---- small maps of counts ------------------------------------------- */

/* Every count in the maps is at most AVAIL_COUNT_MAX + 1 per node or pod
 * (mig_counts, bounded_demand), so sums over fewer than 2^32 pods or
 * nodes fit in 63 bits; sums and products over nodes are taken in 128
 * bits all the same, and map_add saturates rather than overflow. */
typedef unsigned __int128 u128;

static long
count(const json_t *map, const char *res)
{
	json_int_t n = json_integer_value(json_object_get(map, res));

	return n > 0 ? (long)n : 0;
}

/* map_add adds sign * every count of d into map; zero counts go. A sum
 * beyond LONG_MAX (2^32 pods asking the most) stays at LONG_MAX. */
static void
map_add(json_t *map, const json_t *d, int sign)
{
	const char *res;
	json_t *v;
	long n, add;

	json_object_foreach((json_t *)d, res, v) {
		add = (long)json_integer_value(v);
		if (sign > 0 ? __builtin_add_overflow(count(map, res), add, &n)
			     : __builtin_sub_overflow(count(map, res), add, &n))
			n = sign > 0 ? LONG_MAX : 0;
		if (n)
			json_object_set_new(map, res, json_integer(n));
		else
			json_object_del(map, res);
	}
}

/* bounded_demand returns a new copy of a demand ({res:n}) with each
 * count above AVAIL_COUNT_MAX taken as AVAIL_COUNT_MAX + 1: more than any
 * node holds, so it still fits nowhere. */
static json_t *
bounded_demand(const json_t *d)
{
	json_t *out = json_object(), *v;
	const char *res;
	json_int_t n;

	json_object_foreach((json_t *)d, res, v) {
		n = json_integer_value(v);
		if (n > AVAIL_COUNT_MAX)
			n = (json_int_t)AVAIL_COUNT_MAX + 1;
		if (n > 0)
			json_object_set_new(out, res, json_integer(n));
	}
	return out;
}

/* mig_counts returns {res:n} of the MIG resources of a resource list
 * ({"nvidia.com/mig-1g.10gb":"28", "cpu":"64"}), each at most
 * AVAIL_COUNT_MAX; values that are no quantities, or not above zero, are
 * left out. */
static json_t *
mig_counts(const json_t *list)
{
	json_t *out = json_object(), *v;
	const char *res;
	struct qty q;
	int64_t n;

	json_object_foreach((json_t *)list, res, v) {
		if (strncmp(res, AVAIL_MIG_PREFIX, strlen(AVAIL_MIG_PREFIX)) ||
			podres_qty(v, &q) != QTY_OK || q.neg ||
			(!q.whole && !q.nano))
			continue;
		if (qty_value(&q, &n) != QTY_OK || n > AVAIL_COUNT_MAX)
			n = AVAIL_COUNT_MAX;
		json_object_set_new(out, res, json_integer(n));
	}
	return out;
}

static const char *
meta(const json_t *obj, const char *key)
{
	return json_string_value(
		json_object_get(json_object_get(obj, "metadata"), key));
}

/* drop_pending forgets the admitted entry of token, if any. */
static void
drop_pending(struct avail *a, const char *token)
{
	json_t *p = json_object_get(a->pending, token), *list, *t;
	const char *match;
	size_t i;

	if (!p)
		return;
	match = json_string_value(json_object_get(p, "match"));
	list = json_object_get(a->matches, match ? match : "");
	json_array_foreach(list, i, t) {
		if (strcmp(json_string_value(t), token) == 0) {
			json_array_remove(list, i);
			break;
		}
	}
	if (list && !json_array_size(list))
		json_object_del(a->matches, match);
	map_add(a->pending_sum, json_object_get(p, "demand"), -1);
	json_object_del(a->pending, token);
}

/* match_pending drops the admitted entry a pod of key match, asking
 * demand, stands for: the oldest asking the same, else the oldest.
 * Returns 1 when there was one. */
static int
match_pending(struct avail *a, const char *match, const json_t *demand)
{
	json_t *list = json_object_get(a->matches, match), *t, *p;
	const char *pick = NULL;
	char *token;
	size_t i;

	json_array_foreach(list, i, t) {
		p = json_object_get(a->pending, json_string_value(t));
		if (json_equal(json_object_get(p, "demand"),
			    (json_t *)demand)) {
			pick = json_string_value(t);
			break;
		}
	}
	if (!pick && json_array_size(list))
		pick = json_string_value(json_array_get(list, 0));
	if (!pick)
		return 0;
	token = estrdup(pick); /* pick lives in the list drop_pending edits */
	drop_pending(a, token);
	free(token);
	return 1;
}

char *
avail_match_key(const json_t *pod, const char *ns)
{
	const char *name = meta(pod, "name"), *gen = meta(pod, "generateName");
	const char *pns = meta(pod, "namespace");

	if (pns && *pns)
		ns = pns;
	if (name && *name)
		return easprintf("%s/%s", ns ? ns : "", name);
	return easprintf("%s/%s*", ns ? ns : "", gen ? gen : "");
}

/* ---- nodes ---------------------------------------------------------- */

static int
node_ready(const json_t *node)
{
	json_t *conds = json_object_get(json_object_get(node, "status"),
		       "conditions"),
	       *c;
	const char *type, *status;
	size_t i;

	if (json_is_true(json_object_get(json_object_get(node, "spec"),
		    "unschedulable")))
		return 0;
	json_array_foreach(conds, i, c) {
		type = json_string_value(json_object_get(c, "type"));
		status = json_string_value(json_object_get(c, "status"));
		if (type && status && strcmp(type, "Ready") == 0)
			return strcmp(status, "True") == 0;
	}
	return 0;
}

static void
put_node(struct avail *a, const char *name, int ready, json_t *alloc,
	json_t *base)
{
	json_object_set_new(a->nodes, name,
		json_pack("{s:b,s:o,s:o}", "ready", ready, "alloc", alloc,
			"base", base));
}

static void
node_event(struct avail *a, const char *type, const json_t *node)
{
	const char *name = meta(node, "name");

	if (!name)
		return;
	if (strcmp(type, "DELETED") == 0) {
		json_object_del(a->nodes, name);
		return;
	}
	put_node(a, name, node_ready(node),
		mig_counts(json_object_get(json_object_get(node, "status"),
			"allocatable")),
		json_object());
}

/* ---- pods ----------------------------------------------------------- */

/* pod_idle says whether a pod without a node is not about to take
 * anything: the scheduler found no room for it, or a gate holds it. */
static int
pod_idle(const json_t *pod)
{
	json_t *status = json_object_get(pod, "status"), *c;
	const char *type, *reason;
	size_t i;

	if (json_array_size(json_object_get(json_object_get(pod, "spec"),
		    "schedulingGates")))
		return 1;
	json_array_foreach(json_object_get(status, "conditions"), i, c) {
		type = json_string_value(json_object_get(c, "type"));
		reason = json_string_value(json_object_get(c, "reason"));
		if (type && reason && strcmp(type, "PodScheduled") == 0 &&
			(!strcmp(reason, "Unschedulable") ||
				!strcmp(reason, "SchedulingGated")))
			return 1;
	}
	return 0;
}

/* contribute adds (sign 1) or takes away (-1) what pod entry p counts. */
static void
contribute(struct avail *a, const json_t *p, int sign)
{
	const char *state = json_string_value(json_object_get(p, "state"));
	const char *node = json_string_value(json_object_get(p, "node"));
	json_t *demand = json_object_get(p, "demand"), *map;

	if (strcmp(state, "waiting") == 0) {
		map_add(a->waiting, demand, sign);
	} else if (strcmp(state, "bound") == 0) {
		if (!(map = json_object_get(a->bound, node))) {
			map = json_object();
			json_object_set_new(a->bound, node, map);
		}
		map_add(map, demand, sign);
		if (!json_object_size(map))
			json_object_del(a->bound, node);
	}
}

static char *
pod_key(const json_t *pod)
{
	const char *uid = meta(pod, "uid"), *ns = meta(pod, "namespace");
	const char *name = meta(pod, "name");

	if (uid && *uid)
		return estrdup(uid);
	return easprintf("%s/%s", ns ? ns : "", name ? name : "");
}

/* seen_first drops the admitted entry a pod seen for the first time
 * stands for: by its name, else by its generateName. */
static void
seen_first(struct avail *a, const json_t *pod, const json_t *demand)
{
	const char *gen = meta(pod, "generateName"),
		   *ns = meta(pod, "namespace");
	char *key = avail_match_key(pod, NULL);
	int found = match_pending(a, key, demand);

	free(key);
	if (!found && gen && *gen) {
		key = easprintf("%s/%s*", ns ? ns : "", gen);
		match_pending(a, key, demand);
		free(key);
	}
}

static void
pod_event(struct avail *a, const char *type, const json_t *pod)
{
	json_t *spec = json_object_get(pod, "spec"), *old, *demand, *asked;
	const char *node = json_string_value(json_object_get(spec, "nodeName"));
	const char *phase = json_string_value(
		json_object_get(json_object_get(pod, "status"), "phase"));
	const char *state = "waiting";
	char *key = pod_key(pod);

	asked = podres_demand(spec, AVAIL_MIG_PREFIX);
	demand = bounded_demand(asked);
	json_decref(asked);
	if ((old = json_object_get(a->pods, key))) {
		contribute(a, old, -1);
		json_object_del(a->pods, key);
	} else if (json_object_size(demand)) {
		seen_first(a, pod, demand);
	}
	if (strcmp(type, "DELETED") != 0 && json_object_size(demand)) {
		if (phase &&
			(!strcmp(phase, "Succeeded") ||
				!strcmp(phase, "Failed")))
			state = "idle";
		else if (node && *node)
			state = "bound";
		else if (pod_idle(pod))
			state = "idle";
		old = json_pack("{s:s?,s:O,s:s}", "node",
			node && *node ? node : NULL, "demand", demand, "state",
			state);
		contribute(a, old, 1);
		json_object_set_new(a->pods, key, old);
	}
	json_decref(demand);
	free(key);
}

/* ---- runtime classes ------------------------------------------------ */

static void
put_class(struct avail *a, const char *name, const json_t *annotations)
{
	json_t *keep = json_object(), *v;
	const char *key;

	json_object_foreach((json_t *)annotations, key, v) {
		if (strncmp(key, CLASS_PREFIX, strlen(CLASS_PREFIX)) == 0 &&
			json_is_string(v))
			json_object_set(keep, key, v);
	}
	json_object_set_new(a->classes, name, keep);
}

static void
class_event(struct avail *a, const char *type, const json_t *rc)
{
	const char *name = meta(rc, "name");

	if (!name)
		return;
	if (strcmp(type, "DELETED") == 0)
		json_object_del(a->classes, name);
	else
		put_class(a, name,
			json_object_get(json_object_get(rc, "metadata"),
				"annotations"));
}

static void
event_locked(struct avail *a, const char *kind, const char *type,
	const json_t *obj)
{
	if (strcmp(kind, "Node") == 0)
		node_event(a, type, obj);
	else if (strcmp(kind, "Pod") == 0)
		pod_event(a, type, obj);
	else if (strcmp(kind, "RuntimeClass") == 0)
		class_event(a, type, obj);
}

void
avail_event(struct avail *a, const char *kind, const char *type,
	const json_t *obj)
{
	avail_lock(a);
	event_locked(a, kind, type, obj);
	avail_unlock(a);
}

/* ---- inventory records ---------------------------------------------- */

static int
record_locked(struct avail *a, const json_t *rec, char *err, size_t errlen,
	int depth)
{
	const char *kind = json_string_value(json_object_get(rec, "kind"));
	const char *name = json_string_value(json_object_get(rec, "name"));
	json_t *ready = json_object_get(rec, "ready"), *item;
	size_t i, len = kind ? strlen(kind) : 0;

	if (!json_is_object(rec))
		return snprintf(err, errlen, "not a JSON object"), -1;
	if (!kind)
		return snprintf(err, errlen, "record has no kind"), -1;
	if (len >= 4 && strcmp(kind + len - 4, "List") == 0 && depth == 0 &&
		json_is_array(json_object_get(rec, "items"))) {
		json_array_foreach(json_object_get(rec, "items"), i, item) {
			if (record_locked(a, item, err, errlen, 1) < 0)
				return -1;
		}
		return 0;
	}
	if (!strcmp(kind, "Node") || !strcmp(kind, "Pod") ||
		!strcmp(kind, "RuntimeClass")) {
		if (!meta(rec, "name"))
			return snprintf(err, errlen, "%s has no metadata.name",
				       kind),
			       -1;
		event_locked(a, kind, "ADDED", rec);
		return 0;
	}
	if (strcmp(kind, "node") && strcmp(kind, "runtimeclass"))
		return snprintf(err, errlen, "unknown record kind \"%.64s\"",
			       kind),
		       -1;
	if (!name)
		return snprintf(err, errlen, "%s record has no name", kind), -1;
	if (!strcmp(kind, "runtimeclass")) {
		put_class(a, name, json_object_get(rec, "annotations"));
		return 0;
	}
	if (ready && !json_is_boolean(ready))
		return snprintf(err, errlen,
			       "node %.64s: ready is not a boolean", name),
		       -1;
	put_node(a, name, !ready || json_is_true(ready),
		mig_counts(json_object_get(rec, "allocatable")),
		mig_counts(json_object_get(rec, "allocated")));
	return 0;
}

int
avail_record(struct avail *a, const json_t *rec, char *err, size_t errlen)
{
	int rc;

	avail_lock(a);
	rc = record_locked(a, rec, err, errlen, 0);
	avail_unlock(a);
	return rc;
}

void
avail_set_synced(struct avail *a, int bits)
{
	avail_lock(a);
	a->synced |= bits;
	avail_unlock(a);
}

int
avail_synced(struct avail *a)
{
	int s;

	avail_lock(a);
	s = a->synced;
	avail_unlock(a);
	return s;
}

int
avail_synced_locked(struct avail *a)
{
	return a->synced;
}

int
avail_class_limit(struct avail *a, const char *name, const char *key,
	char **value)
{
	json_t *c;
	const char *v;
	int rc = -1;

	*value = NULL;
	avail_lock(a);
	if ((c = json_object_get(a->classes, name))) {
		v = json_string_value(json_object_get(c, key));
		rc = v != NULL;
		if (v)
			*value = estrdup(v);
	}
	avail_unlock(a);
	return rc;
}

/* ---- what is free ---------------------------------------------------- */

/* expire drops admitted entries whose pod never showed up in time; they
 * expire in the order they were admitted, so it stops at the first that
 * has time left. */
static void
expire(struct avail *a)
{
	double t = clock_mono();
	const char *token;
	json_t *p;
	void *tmp;

	json_object_foreach_safe(a->pending, tmp, token, p) {
		if (json_real_value(json_object_get(p, "expires")) > t)
			break;
		drop_pending(a, token);
	}
}

static long
pending_of(struct avail *a, const char *res)
{
	return count(a->pending_sum, res);
}

struct slot {
	long v;
	size_t i;
};

static int
by_value_desc(const void *x, const void *y)
{
	const struct slot *a = x, *b = y;

	if (a->v != b->v)
		return a->v < b->v ? 1 : -1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* level takes w units from v[0..n) (each from 0 to AVAIL_COUNT_MAX),
 * always from the largest values, so the top ones end level with each
 * other. */
static void
level(long *v, size_t n, u128 w)
{
	struct slot *s;
	u128 prefix = 0, rem;
	long next = 0;
	size_t i, k;

	if (w == 0 || !n)
		return;
	s = emalloc(n * sizeof *s);
	for (i = 0; i < n; i++)
		s[i] = (struct slot){v[i], i};
	qsort(s, n, sizeof *s, by_value_desc);
	for (k = 1; k <= n; k++) {
		prefix += (u128)s[k - 1].v;
		next = k < n ? s[k].v : 0;
		if (prefix - (u128)k * (u128)next >= w)
			break;
	}
	if (k > n)
		k = n;
	rem = prefix > w ? prefix - w : 0;
	for (i = 0; i < k; i++) /* rem / k <= s[0].v: it fits a long */
		v[s[i].i] = (long)(rem / k) + (i < (size_t)(rem % k));
	free(s);
}

/* remaining fills v (one slot per node, a->nodes order) with what is
 * free of res on each ready node after waiting demand. */
static void
remaining(struct avail *a, const char *res, long *v)
{
	const char *name;
	json_t *node;
	size_t i = 0;
	long alloc, taken;

	json_object_foreach(a->nodes, name, node) {
		alloc = count(json_object_get(node, "alloc"), res);
		taken = count(json_object_get(node, "base"), res);
		if (alloc > taken) /* both 0 to AVAIL_COUNT_MAX */
			alloc -= taken;
		else
			alloc = 0;
		taken = count(json_object_get(a->bound, name), res);
		v[i++] = json_is_true(json_object_get(node, "ready")) &&
				alloc > taken
			? alloc - taken
			: 0;
	}
	level(v, i, (u128)count(a->waiting, res) + (u128)pending_of(a, res));
}

long
avail_free_locked(struct avail *a, const char *res, long *total)
{
	size_t n = json_object_size(a->nodes), i;
	long *v = ecalloc(n ? n : 1, sizeof *v), best = 0;
	u128 sum = 0;

	expire(a);
	remaining(a, res, v);
	for (i = 0; i < n; i++) {
		sum += (u128)v[i];
		if (v[i] > best)
			best = v[i];
	}
	free(v);
	if (total)
		*total = sum > LONG_MAX ? LONG_MAX : (long)sum;
	return best;
}

int
avail_fits_locked(struct avail *a, const json_t *demand, long times)
{
	size_t n = json_object_size(a->nodes), r = json_object_size(demand);
	size_t i, j = 0;
	long *v = ecalloc((n ? n : 1) * (r ? r : 1), sizeof *v);
	json_int_t want;
	const char *res;
	json_t *d;
	int fits = 1, node_ok = 0;
	u128 sum;

	if (times <= 0 || !r) {
		free(v);
		return 1;
	}
	expire(a);
	json_object_foreach((json_t *)demand, res, d) {
		remaining(a, res, v + j * n);
		want = json_integer_value(d);
		for (sum = 0, i = 0; i < n; i++)
			sum += (u128)v[j * n + i];
		if (want > 0 && sum < (u128)want * (u128)times)
			fits = 0;
		j++;
	}
	for (i = 0; fits && !node_ok && i < n; i++) {
		node_ok = 1;
		j = 0;
		json_object_foreach((json_t *)demand, res, d) {
			if (v[j++ * n + i] < json_integer_value(d))
				node_ok = 0;
		}
	}
	free(v);
	return fits && node_ok;
}

void
avail_admit_locked(struct avail *a, const char *token, const char *match,
	const json_t *demand)
{
	json_t *list, *bounded = bounded_demand(demand);

	drop_pending(a, token);
	json_object_set_new(a->pending, token,
		json_pack("{s:O,s:f,s:s}", "demand", bounded, "expires",
			clock_mono() + a->ttl, "match", match));
	if (!(list = json_object_get(a->matches, match))) {
		list = json_array();
		json_object_set_new(a->matches, match, list);
	}
	json_array_append_new(list, json_string(token));
	map_add(a->pending_sum, bounded, 1);
	json_decref(bounded);
}

json_t *
avail_stats(struct avail *a)
{
	json_t *free_ = json_object(), *p, *d;
	json_t *out;
	const char *key, *res;
	long total;

	avail_lock(a);
	expire(a);
	json_object_foreach(a->nodes, key, p) {
		json_object_foreach(json_object_get(p, "alloc"), res, d) {
			if (!json_object_get(free_, res)) {
				avail_free_locked(a, res, &total);
				json_object_set_new(free_, res,
					json_integer(total));
			}
		}
	}
	out = json_pack("{s:i,s:i,s:o,s:o,s:o}", "nodes",
		(int)json_object_size(a->nodes), "pods",
		(int)json_object_size(a->pods), "pending",
		json_deep_copy(a->pending_sum), "waiting",
		json_deep_copy(a->waiting), "free", free_);
	avail_unlock(a);
	return out;
}
