/* gpunode (gn_): the GPUNode objects of one node, as claim-make(1) writes them.
 *
 * A GPUNode (cluster-scoped, named after its node; kind GPUNode of both
 * canhazgpu.dev/v1alpha1 and agentaflow.io/v1, one schema:
 * manifests/crds/gpunodes.yaml) sums up a node's GPUs for kubectl and
 * k8shazgpu(1):
 *   spec:   {nodeName}
 *   status: {totalGPUs, devices, offeredDevices, freeDevices,
 *            utilizationTier, utilizationPct, health, product,
 *            migStrategy, gpus: [...], capacity, allocatable, lastUpdate}
 * totalGPUs counts physical GPUs; devices the allocatable ones (whole GPUs
 * with MIG off, MIG devices); offeredDevices those neither unhealthy nor
 * held on the host (gobj_offered); freeDevices those offered and not in
 * use. A device is in use when
 *   1. a ResourceClaim of claims has it among its allocation results
 *      (driver and pool = node), by device name;
 *   2. a pod of pods that is not terminal names its UUID in its
 *      canhazgpu.dev/devices annotation;
 *   3. a pod of pods that is not terminal asks for its extended resource
 *      (nvidia.com/gpu, nvidia.com/mig-<profile>) beyond the devices of
 *      that resource its annotation names: then the first offered devices
 *      of that resource not yet in use, in record order, are taken for it
 *      (a device plugin picks devices we cannot see), once every device
 *      named by 1 and 2 is counted.
 * A MIG-enabled GPU is in use when one of its MIG devices is. health is
 * the worst of the devices' (ok < warn < unhealthy); utilizationPct the
 * mean util_pct of the whole GPUs, rounded, and utilizationTier its
 * gobj_tier; product that of the first whole GPU; migStrategy "mixed"
 * when any MIG device is there, else "none". capacity is the Node's
 * status.capacity; allocatable its status.allocatable less the requests
 * of the pods (podreq_left). Every gpu record gives one entry of gpus:
 *   {index, uuid, product, memoryMiB, memoryUsedMiB, utilPct, tempC,
 *    eccErrors, health, healthReasons, mig: {profile, device, parentUUID}
 *    | null, held, inUse}
 * a field the record lacks being null (healthReasons []). */
#ifndef HAZ_GPUNODE_H
#define HAZ_GPUNODE_H

#include <time.h>

#include <jansson.h>

#include "kube.h"

/* gn_status returns the status of node's GPUNode. gpus: its gpu records
 * (checked by gobj_check), at least one; node_status: the Node's status
 * (capacity, allocatable), or NULL for none; pods: the node's pods, or
 * NULL when they are unknown (nothing in use then, allocatable the
 * Node's); claims: the ResourceClaims its pods name (NULL: none); driver:
 * the DRA driver; now stamps lastUpdate. *bad counts values that are no
 * quantity (podreq.h). Caller owns the result. */
json_t *gn_status(const json_t *gpus, const char *node, const char *driver,
	const json_t *node_status, const json_t *pods, const json_t *claims,
	time_t now, int *bad);

/* gn_objects returns the array of both GPUNode objects carrying status
 * (borrowed, copied in), owned by the Node of uid when uid is not NULL
 * (not as controller, so only the garbage collector acts on it). */
json_t *gn_objects(const char *node, const char *uid, const json_t *status);

/* gn_current says whether the GPUNode current, as the server holds it,
 * already says all that want would write (lastUpdate aside) and its
 * lastUpdate is less than heartbeat seconds before now: then it need not
 * be written. */
int gn_current(const json_t *current, const json_t *want, time_t now,
	long long heartbeat);

/* gn_pods lists the pods bound to node, in every namespace, into *pods
 * (a new array). Returns 0, or -1 with e filled. */
int gn_pods(struct kube *k, const char *node, json_t **pods,
	struct kube_error *e);

/* gn_claims gets the ResourceClaims the pods that are not terminal name
 * (spec.resourceClaims[].resourceClaimName, and for claims made from a
 * template status.resourceClaimStatuses[].resourceClaimName; each once,
 * one gone left out) into *claims (a new array). Returns 0, or -1 with e
 * filled. */
int gn_claims(struct kube *k, const json_t *pods, json_t **claims,
	struct kube_error *e);

#endif
