/* wl: a GPUWorkload (canhazgpu.dev/v1alpha1) read as the controller reads
 * it: is it valid, what sched-pick request it makes, which nodes its pod
 * template admits, and the Job that runs it once placed, with, when its
 * devices come by DRA, the ResourceClaimTemplate its pod claims them by.
 *
 * As in the controller's former jq, a member that is null or false counts
 * as absent where a default applies ("gpuCount // 1"); exclusiveAccess is
 * the exception, where false means false. Every function but wl_problem
 * expects a workload wl_problem accepted: on others they do not crash but
 * their answer is unspecified. Nothing here changes w.
 *
 * Threads: no state of its own: any thread, on objects of its own. */
#ifndef HAZ_WL_H
#define HAZ_WL_H

#include <jansson.h>

#include "jbuf.h"
#include "migchain.h"

/* The image of a workload that names none (K8SHAZGPU_DEFAULT_IMAGE's
 * default); wl_job uses it when given NULL. */
#define WL_DEFAULT_IMAGE "nvidia/cuda:12.4.1-base-ubuntu22.04"

enum {
	WL_MAX_GPUS = 64,       /* spec.gpuCount's bound, sched-pick's */
	WL_MAX_FALLBACK = 8,    /* profiles in migFallback, sched-pick's */
	WL_MAX_RETRIES = 1000,  /* spec.retryPolicy.maxRetries' bound */
	WL_MAX_BACKOFF = 86400, /* spec.retryPolicy.backoffSeconds' bound */
	WL_SHOW_MAX = 200,      /* bytes of a bad value a message quotes */
	WL_MAX_SUBREQUESTS = 8, /* firstAvailable entries the API takes */
};

/* The DRA names of a claim template: the request, the device classes of
 * manifests/deviceclasses.yaml and the attribute domain of the driver. */
#define WL_CLAIM_REQUEST "gpus"
#define WL_CLASS_GPU "gpu.canhazgpu.dev"
#define WL_CLASS_MIG "mig.canhazgpu.dev"
#define WL_DRIVER "gpu.canhazgpu.dev"

/* wl_problem returns NULL when workload w can be turned into a request,
 * else a malloc'd message (the caller frees it) naming the first field
 * found wrong, the value shown as compact JSON (cut to WL_SHOW_MAX bytes
 * plus "..."). The controller's former checks, in their order and words:
 *
 *   spec.gpuCount must be a whole number from 1 to 64, got 0
 *   spec.gpuMemoryRequired must be a number of MiB, 0 or more, got -1
 *   spec.priority must be a number or low, medium, high, critical, got "x"
 *   spec.schedulingStrategy: unknown strategy "fastest"
 *   spec.gpuRequirements.migProfile: not a MIG profile: "7x"
 *
 * (gpuCount is spec.gpuCount // spec.gpuRequirements.gpuCount, memory
 * spec.gpuRequirements.minGPUMemory // spec.gpuMemoryRequired; numbers
 * must be whole, as sched-pick reads them, and MIG profiles are what
 * lib/mig reads), then: metadata.name, namespace and uid non-empty
 * strings; spec.gpuRequirements.migFallback up to 8 MIG profiles;
 * gpuIds 1 to 64 GPU indexes, distinct for whole GPUs, as many as
 * gpuCount when both are given; exclusiveAccess a boolean;
 * preferredNode, image and modelName strings, command an array of
 * strings; spec.nodeSelector and spec.podTemplate.spec.nodeSelector
 * objects of strings agreeing on each key they share
 *
 *   spec.nodeSelector pool=a and spec.podTemplate.spec.nodeSelector
 *   pool=b disagree   (one line)
 *
 * spec.podTemplate, its metadata and spec objects, labels and annotations
 * objects of strings, containers and tolerations arrays of objects, the
 * first container's env an array and resources an object, affinity's
 * required nodeSelectorTerms an array of objects; retryPolicy.maxRetries
 * a whole number 0..1000 and backoffSeconds a number 0..86400. */
char *wl_problem(const json_t *w);

/* wl_priority returns spec.priority as a number: low 1, normal and medium
 * 5, high 10, critical 100 (any case), a number or a string of a whole
 * number as it is, 0 when absent. */
long long wl_priority(const json_t *w);

/* wl_gpus returns the devices w asks for: spec.gpuCount //
 * spec.gpuRequirements.gpuCount // the number of gpuIds // 1. */
int wl_gpus(const json_t *w);

/* wl_max_retries returns spec.retryPolicy.maxRetries, 3 when absent. */
int wl_max_retries(const json_t *w);

/* wl_backoff returns spec.retryPolicy.backoffSeconds, 10 when absent. */
double wl_backoff(const json_t *w);

/* wl_request appends to out one sched-pick request record, no newline:
 *
 *   {"kind":"request","id":"NS/NAME","gpus":G,"min_memory_mib":M,
 *    "exclusive":B,"priority":P,"created":"<creationTimestamp>"
 *    [,"strategy"][,"gpu_ids"][,"mig_profile","mig_fallback"]
 *    [,"prefer_node"][,"node_selector":{...}]}
 *
 * from spec.schedulingStrategy, gpuRequirements.gpuIds, migProfile and
 * migFallback (default []), spec.preferredNode; created is left out when
 * the workload has no creationTimestamp. node_selector is spec.nodeSelector,
 * then the keys of spec.podTemplate.spec.nodeSelector it lacks, then
 * extra_key: "true" when extra_key is not NULL (replacing a value a
 * selector gave that key); left out when empty. */
void wl_request(const json_t *w, const char *extra_key, struct jb *out);

/* wl_chain returns a new array (the caller owns it) of the MIG profiles a
 * claim of w may take, canonical names, in order: spec.gpuRequirements.
 * migProfile, then migFallback when it is an array (even empty), else
 * the profiles chains (may be NULL: none) lists after it; a profile
 * named twice is kept once and the list is cut to WL_MAX_SUBREQUESTS.
 * [] for whole GPUs. */
json_t *wl_chain(const json_t *w, const struct migchain *chains);

/* wl_request_dra is wl_request for a workload whose devices a DRA claim
 * gives: mig_fallback is wl_chain's list after the asked profile (so the
 * engine falls back as kube-scheduler may), and exclusive is true, a
 * device going to one claim only. */
void wl_request_dra(const json_t *w, const char *extra_key,
	const struct migchain *chains, struct jb *out);

/* wl_constraints returns a new object (the caller owns it) describing
 * which nodes w's pods may use beyond their labels:
 *
 *   {"tolerations":[...],"terms":[...]}
 *
 * tolerations: spec.podTemplate.spec.tolerations followed by those of
 * ctl_tolerations (the controller-wide array, may be NULL) not already
 * listed (equal objects); terms: the template's affinity.nodeAffinity.
 * requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, []
 * when absent. Both copies. Workloads with equal constraints give objects
 * that json_dumps(..., JSON_SORT_KEYS | JSON_COMPACT) writes alike
 * whatever the order of their members. */
json_t *wl_constraints(const json_t *w, const json_t *ctl_tolerations);

/* A placement sched-pick answered: the node, the devices (an array of
 * UUID strings), the strategy that chose them, and the MIG profile of the
 * devices, or NULL for whole GPUs. */
struct wl_place {
	const char *node;
	const json_t *devices;
	const char *strategy;
	const char *mig_profile;
	const char *claim_template; /* DRA: the pod's claim's template */
};

/* wl_job returns a new Job (the caller owns it) that runs w on the
 * devices of p: batch/v1 Job named as w in its namespace, labelled
 * canhazgpu.dev/workload=NAME and app.kubernetes.io/managed-by=k8shazgpu,
 * annotated canhazgpu.dev/node, devices (JSON) and strategy, owned by w
 * (controller, blockOwnerDeletion), backoffLimit 0. Its pod template is
 * spec.podTemplate (copied) with the workload label and a devices
 * annotation (comma-separated) added; restartPolicy OnFailure when the
 * template says so, else Never; containers the template's, or, when it
 * has none, one "main" of spec.image // image (WL_DEFAULT_IMAGE when
 * NULL) running spec.command.
 *
 * The first container gets limits and requests of one resource,
 * nvidia.com/gpu or nvidia.com/mig-PROFILE, the count of devices
 * (replacing every nvidia.com/ key), and env NVIDIA_VISIBLE_DEVICES (the
 * devices, comma-separated) and MODEL_NAME (spec.modelName, when given),
 * replacing entries of those names. The other containers and the init
 * containers lose their nvidia.com/ limits, requests and their
 * NVIDIA_VISIBLE_DEVICES: only the devices placed are used.
 *
 * The template's affinity is kept and the pinning term (matchFields
 * metadata.name In [p->node]) is ANDed into each of its required
 * nodeSelectorTerms; a template with none gets the pinning term alone.
 * Tolerations are the template's followed by the ctl_tolerations not
 * already there.
 *
 * With p->claim_template set (DRA), no container keeps nvidia.com/
 * limits or requests nor NVIDIA_VISIBLE_DEVICES, and the pod template
 * has no devices annotation: the pod claims its devices instead. Its
 * spec.resourceClaims gets {"name":"gpus","resourceClaimTemplateName":
 * p->claim_template} and the first container's resources.claims
 * {"name":"gpus"} (each replacing an entry of that name; MODEL_NAME is
 * still set). The Job's own annotations are the same in both modes. */
json_t *wl_job(const json_t *w, const struct wl_place *p, const char *image,
	const json_t *ctl_tolerations);

/* wl_claim_template returns a new resource.k8s.io/v1
 * ResourceClaimTemplate (the caller owns it) for w placed as p: named as
 * w in its namespace, labelled and owned as wl_job's Job, its claims
 * labelled canhazgpu.dev/workload=NAME. One request, "gpus":
 *
 *  - whole GPUs (p->mig_profile NULL): exactly {deviceClassName
 *    gpu.canhazgpu.dev, allocationMode ExactCount, count (the devices of
 *    p), selectors [{cel: {expression: 'device.attributes["gpu.canhazgpu.
 *    dev"].uuid in ["GPU-a", "GPU-b"]'}}]}: the devices placed;
 *  - MIG: firstAvailable, one subrequest per profile of wl_chain(w,
 *    chains), named p0, p1...: {name, deviceClassName mig.canhazgpu.dev,
 *    allocationMode ExactCount, count, selectors [{cel: {expression:
 *    'device.attributes["gpu.canhazgpu.dev"].profile == "2g.20gb"'}}]},
 *    so that kube-scheduler itself falls back along the chain, on the
 *    node the Job's pod is pinned to.
 *
 * Strings in CEL are quoted with \ before " and \. */
json_t *wl_claim_template(const json_t *w, const struct wl_place *p,
	const struct migchain *chains);

#endif
