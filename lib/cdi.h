/* cdi: the Container Device Interface specs the kubelet plugin writes,
 * one file per ResourceClaim, so that the container runtime gives each
 * container exactly the devices of the claim requests it names.
 *
 * A spec is JSON (cdiVersion 0.6.0, kind k8s.canhazgpu.dev/claim) named
 * <dir>/k8s.canhazgpu.dev-claim_<claim uid>.json. It holds one CDI device
 * per request of the claim, named <claim uid>-<request>, whose edits set
 *   CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES  the request's devices
 *       by UUID (GPU-... for a whole GPU, MIG-... for a MIG device), in
 *       the order of the allocation,
 *   CANHAZGPU_CLAIM, CANHAZGPU_CLAIM_UID, CANHAZGPU_DEVICES  the claim
 *       (namespace/name), its uid, and the DRA device names,
 * and passes the device nodes the node has (/dev/nvidiaN of each GPU, a
 * MIG device's parent's, /dev/nvidiactl, /dev/nvidia-uvm); where the node
 * has none, no node is passed (never one made up) and the spec says so in
 * its canhazgpu.dev/device-nodes annotation.
 *
 * One device per request, not per GPU: a container's environment can
 * carry only one CUDA_VISIBLE_DEVICES, so the devices of a request are
 * named together. The claim uid in every name keeps a runtime's cached
 * spec of an earlier claim from ever being used for a new one. */
#ifndef HAZ_CDI_H
#define HAZ_CDI_H

#include <stddef.h>

#include <jansson.h>

#define CDI_VENDOR "k8s.canhazgpu.dev"
#define CDI_CLASS "claim"
#define CDI_VERSION "0.6.0"

/* cdi_spec_path returns "<dir>/k8s.canhazgpu.dev-claim_<uid>.json"
 * (malloc'd). */
char *cdi_spec_path(const char *dir, const char *uid);

/* cdi_device_id returns the fully qualified CDI device name of a claim's
 * request, "k8s.canhazgpu.dev/claim=<uid>-<request>" (malloc'd). */
char *cdi_device_id(const char *uid, const char *request);

/* cdi_spec returns the spec for claim uid (namespace ns, name) whose
 * requests is an object {request: [{"name","uuid","gpu"}...]}: the
 * DRA device name, the UUID to name it by and the index of its GPU (a MIG
 * device's parent). devdir is where device nodes are looked for ("/dev"
 * on a real node). */
json_t *cdi_spec(const char *uid, const char *ns, const char *name,
	const json_t *requests, const char *devdir);

/* cdi_write writes spec to path as a new file beside it, synced, then
 * renamed over path: a runtime never reads half a spec. Returns 0, or -1
 * with why ("<path>: <strerror>") in n bytes, nothing left behind. */
int cdi_write(const char *path, const json_t *spec, char *why, size_t n);

/* cdi_remove removes path; one already gone is no error. Returns 0, or
 * -1 with why. */
int cdi_remove(const char *path, char *why, size_t n);

/* cdi_claim_of returns the claim uid a spec file name in dir names
 * ("k8s.canhazgpu.dev-claim_<uid>.json"), malloc'd, or NULL for any
 * other name. */
char *cdi_claim_of(const char *filename);

#endif
