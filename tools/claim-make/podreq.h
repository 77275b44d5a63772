/* podreq: what a node's pods take from its allocatable, counted as
 * kube-scheduler counts it (NodeResourcesFit).
 *
 * A container's request of a resource is its resources.requests entry,
 * else its resources.limits entry (the API server defaults a missing
 * request to the limit; objects read back from it already carry both).
 * A pod's request of a resource is
 *   max(sum over containers and sidecars,
 *       max over init containers of (that init container + the sidecars
 *       started before it))
 * (a sidecar is an init container with restartPolicy Always; it runs
 * beside the containers and the init containers after it), replaced for
 * cpu, memory and hugepages-* by the pod-level spec.resources request
 * (else limit) when the pod names one, plus spec.overhead; "pods" is 1
 * for every pod. Pods in phase Succeeded or Failed take nothing. In-place
 * resizes in progress are not looked at (spec values count).
 *
 * Values may be JSON strings ("16Gi") or numbers (2); one that is no
 * quantity counts as zero and is counted in *bad. */
#ifndef HAZ_PODREQ_H
#define HAZ_PODREQ_H

#include <jansson.h>

#include "quantity.h"

/* podreq_terminal says whether pod is in phase Succeeded or Failed. */
int podreq_terminal(const json_t *pod);

/* podreq_request stores in *q what pod asks of resource res (zero when
 * nothing), adding to *bad one per value that is no quantity. Returns 1
 * when the pod names res (or res is "pods"), else 0. */
int podreq_request(const json_t *pod, const char *res, struct qty *q, int *bad);

/* podreq_left returns a new object: every entry of allocatable (resource
 * name -> quantity string, as node.status.allocatable) less what the pods
 * of the array pods that are not terminal ask of it, written canonically
 * (qty_format: "61", "1500m", "246789840Ki"); a result below zero (pods
 * bound past what the node offers) is written "0". An entry that is no
 * quantity is copied as it is and counted in *bad. */
json_t *podreq_left(const json_t *allocatable, const json_t *pods, int *bad);

#endif
