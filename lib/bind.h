/* bind: the decisions of sched-bind, the secondary scheduler, for one
 * pass over a snapshot of the cluster, without any I/O.
 *
 * A pass takes the four lists sched-bind reads (Nodes, Pods,
 * ResourceSlices, ResourceClaims: arrays of API objects, borrowed) and
 * decides, for every pending pod of ours (spec.schedulerName is ours, no
 * spec.nodeName, not being deleted, no scheduling gates), a node and
 * devices, or why none. The inventory is the sched engine's (lib/sched.h):
 * one node record and the gpu records of each Node's agentaflow.gpu/devices
 * annotation (nf_records); DRA device names come from the ResourceSlices of
 * driver gpu.canhazgpu.dev. In use, never given: devices of allocated
 * claims (anyone's), devices named by the canhazgpu.dev/devices annotation
 * of bound pods that are not Succeeded or Failed, and for such a pod
 * asking extended resources without that annotation, the lowest-index free
 * devices of each profile it asks. Devices given earlier in the pass are
 * in use for the pods after it.
 *
 * Pods are placed in order: agentaflow.gpu/priority descending, then
 * creationTimestamp, then namespace/name; one that does not fit never
 * stops a smaller one behind it. A pod's demands are its extended
 * resources (nvidia.com/gpu: N whole GPUs, nvidia.com/mig-P: N devices of
 * profile P) and the requests of its unallocated ResourceClaims (exactly:
 * ExactCount of class gpu.canhazgpu.dev without selectors, or of
 * mig.canhazgpu.dev with the one selector
 * device.attributes["gpu.canhazgpu.dev"].profile == "P"; firstAvailable:
 * such subrequests, tried in order). The first demand picks the node by
 * the pod's strategy (agentaflow.gpu/scheduling-strategy, else the
 * default); the others must fit on that node, else the next node is
 * tried. The nodes are those Ready, not unschedulable, whose taints the
 * pod tolerates, that match its nodeSelector and required node affinity,
 * and whose allocatable minus the requests of their bound pods holds the
 * pod's requests (cpu, memory, pods and every extended resource).
 *
 * Threads: no state of its own: a pass and its snapshot belong to one
 * thread. */
#ifndef HAZ_BIND_H
#define HAZ_BIND_H

#include <jansson.h>

#define BIND_DRIVER "gpu.canhazgpu.dev"
#define BIND_CLASS_GPU "gpu.canhazgpu.dev"
#define BIND_CLASS_MIG "mig.canhazgpu.dev"
#define BIND_ANN_DEVICES "canhazgpu.dev/devices"
#define BIND_ANN_STRATEGY "agentaflow.gpu/scheduling-strategy"
#define BIND_ANN_PRIORITY "agentaflow.gpu/priority"

struct bind_opts {
	const char *scheduler; /* spec.schedulerName of our pods */
	int strategy;          /* sp_strategy of pods that name none */
	char **rr_last;        /* round_robin's last node, kept across passes
				  (malloc'd), or NULL */
};

/* bind_pass decides one pass. It returns a new array with one action
 * per pending pod of ours, in the order decided:
 *
 *   {"decision": {"kind":"bind","pod":"ns/name","node","devices":[uuid..],
 *                 "strategy","priority"}
 *               | {"kind":"unschedulable","pod","reason"},
 *    "namespace", "name", "uid",
 *    "claims": [ResourceClaim...],   (bind: each with the status to write:
 *                                    allocation and reservedFor added,
 *                                    metadata.resourceVersion as listed)
 *    "events": [{"type","reason","message"}...]}
 *
 * events hold the Warnings of the pass (bad annotations, unsupported
 * claim requests, FailedScheduling); the caller adds Scheduled after
 * binding. A malformed list or object counts as empty or is skipped. */
json_t *bind_pass(const json_t *nodes, const json_t *pods, const json_t *slices,
	const json_t *claims, const struct bind_opts *o);

/* bind_priority reads an agentaflow.gpu/priority value: 0 with *out
 * set, or -1 with why (a phrase: "is not an integer") set. */
int bind_priority(const char *s, long long *out, const char **why);

#endif
