/* avail: what MIG devices are free in the cluster, and the RuntimeClass
 * limits, kept current from watch events or read from inventory records.
 *
 * For every ready, schedulable node it keeps the allocatable count of
 * each nvidia.com/mig-* resource, and takes away what non-terminated pods
 * bound to that node ask for (init containers and sidecars counted as the
 * scheduler counts them). On top of that it counts waiting demand, the
 * requests of pods that will soon take devices but are not bound yet:
 *   - pods in the watch that have no node yet (those the scheduler has
 *     already called Unschedulable, or that wait on a scheduling gate, do
 *     not count: they are not about to take anything);
 *   - pods this process admitted (avail_admit) that the watch has not
 *     shown yet. The pod is not marked (so a pod that fits needs no
 *     patch): an admitted entry is known by "namespace/name", or
 *     "namespace/generateName*" for a pod whose name the API server has
 *     yet to make, and goes when the watch first shows a pod of that key
 *     (the oldest entry asking what the pod asks, else the oldest of the
 *     key; from then on the pod itself counts, waiting or bound), or
 *     after the pending lifetime when none appears (its creation failed
 *     later on). Pods of one generateName are interchangeable here.
 * So a burst of pods created faster than the scheduler binds them does
 * not see the same free devices twice.
 *
 * Waiting demand is not tied to nodes; to judge whether a pod fits on
 * one node it is taken, per resource, from the nodes with the most free
 * devices first (leveling them down), as a scheduler spreading the load
 * would. Taints, node selectors and affinities are not considered.
 *
 * Inventory records (one JSON object a line), for running offline:
 *   {"kind":"node","name":"medium","ready":true,
 *    "allocatable":{"nvidia.com/mig-2g.20gb":"12"},
 *    "allocated":{"nvidia.com/mig-2g.20gb":"3"}}
 *   {"kind":"runtimeclass","name":"seeweb-nvidia-1xa6000",
 *    "annotations":{"limits.k8s.gpu/cpu":"8000m",...}}
 * and Kubernetes Node, Pod and RuntimeClass objects as the API returns
 * them (a List of them too). "ready" defaults to true.
 *
 * Every function takes the object's lock itself, except those named
 * *_locked, which must be called between avail_lock and avail_unlock. */
#ifndef HAZ_AVAIL_H
#define HAZ_AVAIL_H

#include <stddef.h>

#include <jansson.h>

#define AVAIL_MIG_PREFIX "nvidia.com/mig-"

/* The most devices of one resource counted on a node, and in one pod's
 * demand: a node's allocatable or allocated beyond it counts as this
 * many, a pod asking more as asking one more than this (so it fits
 * nowhere). No node holds 2^31 devices; the bound keeps every sum and
 * product exact. */
#define AVAIL_COUNT_MAX 2147483647L

/* Bits of avail_synced: which collections have been listed once. */
enum {
	AVAIL_NODES = 1,
	AVAIL_PODS = 2,
	AVAIL_CLASSES = 4,
	AVAIL_ALL = 7,
};

struct avail;

/* avail_new returns an empty table; admitted pods the watch never shows
 * stop counting after pending_seconds. */
struct avail *avail_new(double pending_seconds);
void avail_free(struct avail *a);

/* avail_event applies a watch event (ADDED, MODIFIED, DELETED) for a
 * Node, Pod or RuntimeClass object; kind says which. */
void avail_event(struct avail *a, const char *kind, const char *type,
	const json_t *obj);

/* avail_record applies one inventory record. Returns 0, or -1 with a
 * one-line reason in err. */
int avail_record(struct avail *a, const json_t *rec, char *err, size_t errlen);

/* avail_set_synced marks collections (AVAIL_* bits) as listed. */
void avail_set_synced(struct avail *a, int bits);
int avail_synced(struct avail *a);
int avail_synced_locked(struct avail *a);

/* avail_class_limit sets *value to a malloc'd copy of the annotation key
 * of RuntimeClass name, whole. Returns 1 when the class is known and has
 * it, 0 when the class is known without it, -1 when the class is
 * unknown (*value NULL for both). */
int avail_class_limit(struct avail *a, const char *name, const char *key,
	char **value);

void avail_lock(struct avail *a);
void avail_unlock(struct avail *a);

/* avail_fits_locked returns 1 when demand ({resource: count}) fits on
 * one ready node and times * demand fits in the cluster, once waiting
 * demand is taken away; the product and sums are exact for any counts
 * and times. */
int avail_fits_locked(struct avail *a, const json_t *demand, long times);

/* avail_free_locked returns the most devices of res free on one node
 * and, in *total when not NULL, in the whole cluster (at most LONG_MAX),
 * after waiting demand. */
long avail_free_locked(struct avail *a, const char *res, long *total);

/* avail_admit_locked counts demand as admitted under token (unique, the
 * review's uid) until a pod of key match ("ns/name" or "ns/gen*", see
 * avail_match_key) shows up, or pending_seconds pass. */
void avail_admit_locked(struct avail *a, const char *token, const char *match,
	const json_t *demand);

/* avail_match_key returns the malloc'd key of a pod object: "ns/name",
 * or "ns/generateName*" when it has no name yet (ns from the object,
 * else the namespace given). */
char *avail_match_key(const json_t *pod, const char *ns);

/* avail_stats returns a new object for metrics and tests:
 * {"nodes":n,"pods":n,"pending":{res:n},"waiting":{res:n},
 *  "free":{res:n}} (free: cluster total after waiting demand). */
json_t *avail_stats(struct avail *a);

#endif
