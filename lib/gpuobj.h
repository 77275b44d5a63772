/* gpuobj (gobj_): what a node's `gpu` records (gpu-probe(1)) become in
 * Kubernetes.
 *
 * A device is offered to Kubernetes when it is not unhealthy and its GPU
 * is not held on the host: a record carrying a `held` object (added by
 * gpu-reserve(1) mark) holds its GPU, and every record of that index
 * with it (a MIG device carries its parent's index). One node's records
 * give:
 * - labels compatible with NVIDIA GPU feature discovery (nvidia.com/gpu.*,
 *   nvidia.com/cuda.*, nvidia.com/mig.*, nvidia.com/mig-<profile>.*) and
 *   the AgentaFlow ones (agentaflow.gpu/enabled and others), plus the
 *   annotations agentaflow.gpu/devices, /status and /last-update, and
 *   canhazgpu.dev/host-holds while the host holds a GPU; the physical
 *   labels (nvidia.com/gpu.count, gpu.present, agentaflow.gpu/enabled)
 *   count every GPU, those saying what is usable (nvidia.com/mig-<p>.count,
 *   agentaflow.gpu/count and /schedulable) only what is offered;
 * - extended resources: nvidia.com/gpu for whole GPUs without MIG, and
 *   nvidia.com/mig-<profile> per MIG profile; capacity counts every device,
 *   allocatable only those offered;
 * - DRA devices: one per whole GPU without MIG and one per MIG device,
 *   offered, with attributes named as NVIDIA's DRA driver names them.
 * Label values and the profile part of keys built from input go through
 * kn_label_value (kname.h), so every object is one the API server takes.
 *
 * Every record given must have passed gobj_check. Every function takes
 * an array of one node's gpu records and returns a new JSON value; the
 * caller owns it.
 *
 * Threads: gobj_set_goal is called once, before threads start; every other
 * function keeps no state: any thread, on records of its own. */
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
	/* the longest string member of a record's held object */
	GOBJ_HOLD_TEXT_MAX = 1024,
};

/* gobj_check says whether rec is a gpu record claim-make can publish:
 * every field of the documented type and range (see claim-make(1)), node
 * a node name that leaves room for the ResourceSlice names of driver,
 * held null or an object whose type is "run", "manual", "unreserved" or
 * "error" and whose user, actual_user, since, expires and note are null
 * or strings of at most GOBJ_HOLD_TEXT_MAX bytes, no string holding
 * "\u0000". Returns 0, or -1 with why filled (n bytes) as
 * `field "memory_mib" must be an integer from 0 to ..., not "abc"`. */
int gobj_check(const json_t *rec, const char *driver, char *why, size_t n);

/* gobj_bound_held makes the hold of rec one gobj_check takes where only
 * its length stood in the way: each of held's user, actual_user, since,
 * expires and note that is a string of more than GOBJ_HOLD_TEXT_MAX
 * bytes (and holds no "\u0000") is cut, in place, to at most that many,
 * at a UTF-8 character boundary; a member of another type is left for
 * gobj_check to refuse. An earlier stage (gpu-reserve(1) mark) took the
 * text, so a later one keeps the GPU rather than fail it over a note.
 * Calls cut (when not NULL) per member cut with its name, its length
 * before and after; returns how many were cut. */
typedef void gobj_cut_fn(const char *member, size_t was, size_t now, void *arg);
int gobj_bound_held(json_t *rec, gobj_cut_fn *cut, void *arg);

/* gobj_shown writes v as compact JSON into buf (n bytes), in ASCII, cut
 * with "..." past 48 bytes: a bad value quoted in a message. */
void gobj_shown(const json_t *v, char *buf, size_t n);

/* gobj_device_name writes the DRA device name of a checked record into
 * buf (GOBJ_DEVICE_NAME_MAX bytes): "gpu-<minor>" for a whole GPU,
 * "gpu-<minor>-mig-<profile>-<device>" for a MIG device (the minor
 * number of the GPU's /dev/nvidia<minor>, a MIG device's parent's, as
 * NVIDIA's DRA driver names them; the index where the record has no
 * minor), the profile
 * lowercased with every other character a '-'. It is a DNS label. A MIG
 * enabled GPU, which is no device itself, gets its whole-GPU name too, so
 * two records of one node with one name describe one device twice. */
char *gobj_device_name(const json_t *rec, char *buf);

/* gobj_metadata returns {"labels":{...},"annotations":{...}} for the node;
 * now stamps agentaflow.gpu/last-update. Each entry of
 * agentaflow.gpu/devices says whether its GPU is held ("held": true or
 * false) and carries the record's temp_c, ecc_errors (null when the
 * record has none) and health_reasons ([] when none);
 * canhazgpu.dev/host-holds, present only when some GPU is held,
 * lists [{"gpu","user","type","since","expires","note"}] by index. */
json_t *gobj_metadata(const json_t *gpus, time_t now);

/* The utilization goal (GPU_UTILIZATION_GOAL, percent) by default. */
enum { GOBJ_GOAL_DEFAULT = 80 };

/* gobj_set_goal sets the utilization goal, 1 to 100, for the tiers of
 * agentaflow.gpu/utilization-tier (default GOBJ_GOAL_DEFAULT). */
void gobj_set_goal(int pct);

/* gobj_tier names the tier of a utilization in percent: "low" below 3/8
 * of the goal, "medium" below 7/8 of it, "high" from 7/8 (30 and 70 at
 * the default goal). */
const char *gobj_tier(double util);

/* gobj_offered returns one flag per record of gpus (one node's records),
 * malloc'd: 1 when the record is a device offered to Kubernetes, neither
 * unhealthy nor on a GPU that some record of gpus marks held. With held
 * not NULL, *held gets as many flags (malloc'd): 1 when some record of
 * gpus marks the record's GPU held. Time linear in the records. */
char *gobj_offered(const json_t *gpus, char **held);

/* gobj_is_device: rec is an allocatable device (a MIG device, or a whole
 * GPU with MIG off), not a MIG-enabled GPU. */
int gobj_is_device(const json_t *rec);

/* gobj_resource_name writes the extended resource that counts rec
 * ("nvidia.com/gpu", "nvidia.com/mig-1g.10gb") into buf (n bytes) and
 * returns buf, or NULL when rec is no device. */
char *gobj_resource_name(const json_t *rec, char *buf, size_t n);

/* gobj_resources returns {"capacity":{...},"allocatable":{...}} holding
 * only the nvidia.com/ extended resources; allocatable counts the devices
 * offered. */
json_t *gobj_resources(const json_t *gpus);

/* gobj_devices returns the array of DRA devices (resource.k8s.io/v1 shape:
 * name, attributes, capacity) for the node's devices offered. */
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
