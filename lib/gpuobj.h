/* gpuobj: what a node's `gpu` records (gpu-probe(1)) become in Kubernetes.
 *
 * One node's records give:
 * - labels compatible with NVIDIA GPU feature discovery (nvidia.com/gpu.*,
 *   nvidia.com/cuda.*, nvidia.com/mig.*, nvidia.com/mig-<profile>.*) and
 *   the AgentaFlow ones (agentaflow.gpu/enabled and others), plus the annotations
 *   agentaflow.gpu/devices, /status and /last-update;
 * - extended resources: nvidia.com/gpu for whole GPUs without MIG, and
 *   nvidia.com/mig-<profile> per MIG profile; capacity counts every device,
 *   allocatable only those not unhealthy;
 * - DRA devices: one per whole GPU without MIG and one per MIG device, not
 *   unhealthy, with attributes named as NVIDIA's DRA driver names them.
 *
 * Every function takes the node name and an array of its gpu records and
 * returns a new JSON value; the caller owns it. */
#ifndef HAZ_GPUOBJ_H
#define HAZ_GPUOBJ_H

#include <time.h>

#include <jansson.h>

/* Label and resource name prefixes this module owns on a node: labels
 * under them that it does not produce are stale and may be removed. */
#define GOBJ_NVIDIA_PREFIX "nvidia.com/"
#define GOBJ_AGENTAFLOW_PREFIX "agentaflow.gpu/"

/* gobj_metadata returns {"labels":{...},"annotations":{...}} for the node;
 * now stamps agentaflow.gpu/last-update. */
json_t *gobj_metadata(const json_t *gpus, time_t now);

/* gobj_resources returns {"capacity":{...},"allocatable":{...}} holding
 * only the nvidia.com/ extended resources. */
json_t *gobj_resources(const json_t *gpus);

/* gobj_devices returns the array of DRA devices (resource.k8s.io/v1 shape:
 * name, attributes, capacity) for the node's allocatable devices. */
json_t *gobj_devices(const json_t *gpus);

/* gobj_slices cuts devices into ResourceSlice objects of at most 128
 * devices for driver on node, pool generation gen. Slice i is named
 * "<node>-<i>.<driver>" and the last one carries resourceSliceCount.
 * A node without devices gets no slice (an empty array). */
json_t *gobj_slices(const char *node, const char *driver, long long gen,
	const json_t *devices);

/* gobj_family returns the GPU family GFD names for a compute capability
 * "M.m" ("hopper", "ampere"...), or "undefined". */
const char *gobj_family(const char *compute_cap);

#endif
