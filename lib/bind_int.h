/* bind_int: what the files of lib/bind share, not for tools.
 *
 * A resource list (struct brl) is a small map from resource name to
 * quantity: a node's allocatable, what its bound pods request, what a pod
 * asks. kube-scheduler's arithmetic: a pod requests, of each resource,
 * the larger of the sum over its containers and the largest of its init
 * containers, plus its overhead; "pods" counts 1 (bind_res.c).
 *
 * A demand is what a pod needs on one node: k devices of a profile, for
 * an extended resource or one request of a ResourceClaim, with the
 * alternatives firstAvailable lists, tried in order (bind_claim.c). */
#ifndef HAZ_BIND_INT_H
#define HAZ_BIND_INT_H

#include <stddef.h>

#include <jansson.h>

#include "err.h"
#include "quantity.h"
#include "sched.h"

struct brl {
	char **name;
	struct qty *q;
	size_t n, cap;
};

void bind_rl_free(struct brl *r);

/* bind_rl_get returns the quantity of name, or NULL when r has none. */
const struct qty *bind_rl_get(const struct brl *r, const char *name);

/* bind_rl_add adds q (subtracts it when sub) to name's quantity, which
 * starts at 0. */
void bind_rl_add(struct brl *r, const char *name, const struct qty *q, int sub);

/* bind_rl_read adds every member of a resource map object (such as
 * status.allocatable) that parses as a quantity; others are skipped. */
void bind_rl_read(struct brl *r, const json_t *obj);

/* bind_rl_pod fills r (empty) with what pod requests. */
void bind_rl_pod(struct brl *r, const json_t *pod);

/* bind_rl_short returns the first resource of req with a positive quantity
 * that avail lacks or holds less of, or NULL when avail holds it all. */
const char *bind_rl_short(const struct brl *avail, const struct brl *req);

/* bind_rl_count returns the whole units of name in r (0 when absent, not
 * positive or not whole-numbered). */
long bind_rl_count(const struct brl *r, const char *name);

/* ---- devices and demands ---- */

/* A device of the inventory: from a Node's agentaflow.gpu/devices, named
 * by a ResourceSlice when dra is set. */
struct bdev {
	char *uuid;
	size_t node;
	long index;
	char *prof;             /* "" for a whole GPU */
	int alloc;              /* allocatable itself: not a GPU in MIG mode */
	const char *dra, *pool; /* its slice's device and pool, or NULL */
};

/* One way to meet a demand: k devices of profile prof, named req in the
 * claim's results. */
struct alt {
	char *req;
	char *prof;
	int k;
};

/* What a pod needs on one node: an extended resource, or one request of
 * one of its claims (claim set). */
struct demand {
	const json_t *claim;
	struct alt *alts;
	size_t nalts;
	size_t chosen;
	struct bdev *got[SP_MAX_GPUS];
	int ngot;
};

/* bind_alt_add adds an alternative of k devices of profile prof to d. */
void bind_alt_add(struct demand *d, const char *req, const char *prof, int k);

/* bind_demand_add appends a demand of claim (NULL: extended resources)
 * to *v and returns it. */
struct demand *bind_demand_add(struct demand **v, size_t *n,
	const json_t *claim);
void bind_demands_free(struct demand *d, size_t n);

/* bind_claim_demands adds the demands of the requests of claim c (named
 * ck in messages). Returns NULL, or why c cannot be allocated here
 * (malloc'd, naming c and the request). */
char *bind_claim_demands(struct demand **v, size_t *n, const json_t *c,
	const char *ck);

/* bind_reserved_for says whether claim c is reserved for the pod uid. */
int bind_reserved_for(const json_t *c, const char *uid);

/* bind_claim_write returns a copy of claim c with pod added to its
 * reservedFor and, when c is not allocated, allocated on node the
 * devices the demands d[0..nd) of c got. */
json_t *bind_claim_write(const json_t *c, const json_t *pod, const char *node,
	const struct demand *d, size_t nd);

/* ---- small readers of API objects ---- */

static inline const json_t *
at(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return b ? json_object_get(v, b) : v;
}

static inline const char *
str(const json_t *o, const char *a, const char *b)
{
	return json_string_value(at(o, a, b));
}

static inline char *
key_of(const json_t *o)
{
	return easprintf("%s/%s", str(o, "metadata", "namespace") ?: "",
		str(o, "metadata", "name") ?: "");
}

#endif
