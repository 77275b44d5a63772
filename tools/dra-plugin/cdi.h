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
 * and passes the request's device nodes: /dev/nvidia<minor> of each GPU
 * (a MIG device: its parent's), and for a MIG device the capability nodes
 * of its GPU instance and compute instance,
 * /dev/nvidia-caps/nvidia-cap<N>, N read from the driver's access files
 * <procroot>/driver/nvidia/capabilities/gpu<minor>/mig/gi<gi>[/ci<ci>]/
 * access. The spec's own edits, used with any of its devices, pass the
 * common nodes nvidiactl, nvidia-uvm, nvidia-uvm-tools and nvidia-modeset
 * and, in full mode, mount the driver's files and add the toolkit's hooks
 * (tools/dra-plugin/nvdrv.h). A node or file the node lacks is never named;
 * what was left out, and why, is in the spec's annotations:
 *   canhazgpu.dev/cdi-mode        full or env
 *   canhazgpu.dev/device-nodes    a GPU's /dev/nvidia<minor> missing
 *   canhazgpu.dev/minor-numbers   a minor unknown: the index taken for it
 *   canhazgpu.dev/mig-caps        a MIG capability not passed, and why
 *   canhazgpu.dev/driver          driver files skipped, no version, no hook
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

/* What a spec is built from on a node. */
enum cdi_mode {
	CDI_FULL, /* nodes, driver mounts and hooks: any runtime */
	CDI_ENV,  /* nodes and env only: the node's runtime is NVIDIA's */
};

struct cdi_conf {
	const char *devdir;   /* where device nodes are ("/dev") */
	const char *procroot; /* the driver's /proc ("/proc") */
	const char *root;     /* the driver root ("/") */
	const char *hook;     /* nvidia-cdi-hook; NULL: looked for */
	/* where the plugin sees the host's / (a container's mount of it);
	 * every host path of a spec is written without it, as the host
	 * names it. NULL or "/": the plugin runs on the host. */
	const char *hostroot;
	enum cdi_mode mode;
	json_t *driver; /* the last nvd_scan, reused for its version */
};

/* cdi_conf_free frees c's cached scan. */
void cdi_conf_free(struct cdi_conf *c);

/* cdi_mode_of parses "full" or "env"; -1 for anything else. */
int cdi_mode_of(const char *s);

/* cdi_spec returns the spec for claim uid (namespace ns, name) whose
 * requests is an object {request: [{"name","uuid","gpu","minor","gi",
 * "ci"}...]}: the DRA device name, the UUID to name it by, the index of
 * its GPU (a MIG device's parent), that GPU's minor number (null or
 * absent: unknown, the index is taken) and a MIG device's GPU and compute
 * instance ids (-1 or absent: unknown). version is the driver version of
 * the gpu records, NULL to read it from the procroot. Problems are warned
 * about and put in the annotations. A full-mode scan of the driver files
 * is cached in c for the next spec of the same version. */
json_t *cdi_spec(const char *uid, const char *ns, const char *name,
	const json_t *requests, const char *version, struct cdi_conf *c);

/* cdi_write writes spec to path as a new file beside it ("<path>.tmp"),
 * then renamed over path: a runtime never reads half a spec. Nothing is
 * synced: a spec is made from the checkpoint, which is, and is made
 * again from it when the plugin starts and finds it missing or unreadable
 * (a crash of the machine, or a tmpfs such as /var/run). Returns 0, or -1
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
