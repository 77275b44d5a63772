/* podres: the resources a pod spec asks for.
 *
 * A container asks for a resource by naming it in resources.requests or
 * resources.limits; what it asks is the larger of the two (the API
 * server makes a missing request equal to the limit, and refuses a
 * request above its limit). A pod asks for the larger of
 *   - the sum over its containers and its sidecars (init containers with
 *     restartPolicy Always), which run together, and
 *   - the largest init container with the sidecars started before it,
 *     which run beside it (a sidecar counts with those before it too),
 * as the scheduler counts it. Values may be JSON strings ("16Gi") or
 * numbers (2), as YAML turned into JSON gives them. */
#ifndef HAZ_PODRES_H
#define HAZ_PODRES_H

#include <jansson.h>

#include "quantity.h"

/* podres_qty reads a quantity from a JSON string or number. Returns
 * QTY_OK or a quantity error (QTY_EEMPTY for other JSON types). */
int podres_qty(const json_t *v, struct qty *q);

/* podres_entry reads holder.<which>[res] (which: "requests", "limits",
 * "overhead") into *q. Returns 1 when named, 0 when not (*q zero), -1
 * when the value is no quantity (*q zero). */
int podres_entry(const json_t *holder, const char *which, const char *res,
	struct qty *q);

/* podres_container reads what container c asks for res into *q. Returns
 * 1 when c names res, 0 when not (*q zero), -1 when a value is no
 * quantity (*q zero). */
int podres_container(const json_t *c, const char *res, struct qty *q);

/* podres_amount_fn reads what container c asks of res into *q (zero
 * when nothing): 1 when c names res, 0 when not, -1 when a value is no
 * quantity. arg is the caller's. */
typedef int podres_amount_fn(const json_t *c, const char *res, struct qty *q,
	void *arg);

/* podres_combine stores in *q what pod spec asks for res, the containers
 * and init containers combined as above, each one's part read by amount.
 * Callers that read a container differently (podres_container here,
 * kube-scheduler's request-else-limit in podreq) share this walk. Returns
 * -1 when amount returned -1 for some container, else 1 when it returned
 * 1 for some, else 0. */
int podres_combine(const json_t *spec, const char *res,
	podres_amount_fn *amount, void *arg, struct qty *q);

/* podres_total stores in *q what pod spec asks for res. Returns 1 when
 * some container names res, 0 when none does, -1 when a value is no
 * quantity (that container then counts as zero). */
int podres_total(const json_t *spec, const char *res, struct qty *q);

/* podres_demand returns a new object of every resource whose name begins
 * with prefix that spec asks for, as whole counts ({"nvidia.com/mig-
 * 2g.20gb": 2}); resources whose values are no quantities, or zero, are
 * left out. */
json_t *podres_demand(const json_t *spec, const char *prefix);

/* podres_mentions returns 1 when some container of spec names a resource
 * beginning with prefix. */
int podres_mentions(const json_t *spec, const char *prefix);

/* podres_foreach calls fn on every container object of spec: containers,
 * then initContainers. */
void podres_foreach(json_t *spec, void (*fn)(json_t *c, void *arg), void *arg);

#endif
