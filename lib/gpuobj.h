/* gpuobj: what a node's `gpu` records (gpu-probe(1)) become in Kubernetes.
 *
 * One node's records give:
 * - labels compatible with NVIDIA GPU feature discovery (nvidia.com/gpu.*,
 *   nvidia.com/cuda.*, nvidia.com/mig.*, nvidia.com/mig-<profile>.*) and
 *   the AgentaFlow ones (agentaflow.gpu/enabled and others), plus the
 * annotations agentaflow.gpu/devices, /status and /last-update;
 * - extended resources: nvidia.com/gpu for whole GPUs without MIG, and
 *   nvidia.com/mig-<profile> per MIG profile; capacity counts every device,
 *   allocatable only those not unhealthy;
 * - DRA devices: one per whole GPU without MIG and one per MIG device, not
 *   unhealthy, with attributes named as NVIDIA's DRA driver names them.
 * Label values and the profile part of keys built from input go through
 * kn_label_value (kname.h), so every object is one the API server takes.
 *
 * Every record given must have passed gobj_check. Every function takes
 * an array of one node's gpu records and returns a new JSON value; the
 * caller owns it. */
#ifndef HAZ_GPUOBJ_H
#define HAZ_GPUOBJ_H

#include <stddef.h>
#include <time.h>

#include <jansson.h>

enum {
	/* the most MiB a memory field may hold: its bytes fit 63 bits */
	GOBJ_MEMORY_MAX_MIB_SHIFT = 63 - 20,
	/* the longest device name: "gpu-<index>-mig-<profile>-<device>" */
	GOBJ_DEVICE_NAME_MAX = 64,
	/* the room a ResourceSlice name takes beyond the node name and the
	 * driver: "-<i>." with up to 10 digits of i */
	GOBJ_SLICE_NAME_EXTRA = 12,
};

/* gobj_check says whether rec is a gpu record claim-make can publish:
 * every field of the documented type and range (see claim-make(1)), node
 * a node name that leaves room for the ResourceSlice names of driver, no
 * string holding "\u0000". Returns 0, or -1 with why filled (n bytes) as
 * `field "memory_mib" must be an integer from 0 to ..., not "abc"`. */
int gobj_check(const json_t *rec, const char *driver, char *why, size_t n);

/* gobj_shown writes v as compact JSON into buf (n bytes), in ASCII, cut
 * with "..." past 48 bytes: a bad value quoted in a message. */
void gobj_shown(const json_t *v, char *buf, size_t n);

/* gobj_device_name writes the DRA device name of a checked record into
 * buf (GOBJ_DEVICE_NAME_MAX bytes): "gpu-<index>" for a whole GPU,
 * "gpu-<index>-mig-<profile>-<device>" for a MIG device, the profile
 * lowercased with every other character a '-'. It is a DNS label. A MIG
 * enabled GPU, which is no device itself, gets its whole-GPU name too, so
 * two records of one node with one name describe one device twice. */
char *gobj_device_name(const json_t *rec, char *buf);

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
