/* dra: the decisions of the DRA kubelet plugin for one node, apart from
 * any socket (tools/dra-plugin.c serves them over gRPC, lib/grpc.c):
 * requests and answers are JSON, in the shapes lib/drapb.c converts.
 *
 * Prepare, for each claim {namespace, uid, name} the kubelet names:
 *   1. a claim already prepared (in the checkpoint) gets the same answer
 *      again, its CDI spec written anew if it went missing;
 *   2. otherwise the ResourceClaim is taken from the watch cache (rcache.h)
 *      when it holds the claim with the uid asked for, allocated and
 *      reserved, else read from the API server; it must exist, have the
 *      uid asked for, be allocated, and each result of our driver must
 *      name this node's pool and a device this node has; results of other
 *      drivers are left to them (a claim the cache gave that fails any of
 *      this is read from the API server and checked again);
 *   3. the claim is checkpointed as "preparing" (staged: not synced); with
 *      a ledger, its GPUs are held in one Lua script under canhazgpu's
 *      allocation lock, all or none: a GPU or MIG device a host user or
 *      another claim holds fails the claim, its error naming who holds
 *      what;
 *   4. the CDI spec is written (tools/dra-plugin/cdi.c, not synced), the
 *      claim checkpointed as "prepared", durably: the one synced write of
 *      a prepare, and its devices answered, each request's CDI device on
 *      the request's first device.
 * Any failure answers the claim's error, undoing what this prepare did,
 * and the kubelet retries later. Unprepare releases the claim's holds,
 * removes its spec, then forgets it (one synced write); a claim never
 * prepared succeeds. Why a crash at any point leaves a state the next
 * start makes consistent is said in dra.c, above prepare_one.
 *
 * Every call takes the one mutex of struct dra: calls are served one at
 * a time (the kubelet sends them so), while GetInfo, which needs none of
 * this, is answered by another thread. */
#ifndef HAZ_DRA_H
#define HAZ_DRA_H

#include <pthread.h>

#include <jansson.h>

#include "cdi.h"
#include "kube.h"
#include "ledger.h"
#include "rcache.h"

/* What one call spent where, in milliseconds of the monotonic clock,
 * summed over its claims. */
struct dra_times {
	double claim_ms;  /* reading ResourceClaims: the cache, else a GET */
	double ledger_ms; /* the ledger's scripts (holds, releases) */
	double cdi_ms;    /* CDI specs built and written, or removed */
	double ckpt_ms;   /* the checkpoint written */
	int cached;       /* claims the watch cache gave */
	int fetched;      /* claims read from the API server */
};

struct dra {
	const char *driver;    /* "gpu.canhazgpu.dev" */
	const char *node;      /* this node: the pool name */
	const char *cdi_dir;   /* where CDI specs go */
	struct cdi_conf cdi;   /* how CDI specs are built; its scan cache */
	const char *ckpt_path; /* the checkpoint file */
	struct kc_config *cfg; /* for token refresh */
	struct kube *k;
	struct lg *lg;        /* NULL: no ledger, nothing held */
	struct rcache *cache; /* NULL: a GET for every claim */
	struct dra_times *t;  /* the running call's (under mu) */
	pthread_mutex_t mu;
	json_t *devices; /* name -> {"gpu", "uuid", "type", "minor", and a MIG
			  * device's "gi", "ci"}: NULL until set */
	char *driver_version; /* the gpu records', or NULL */
	json_t *claims;       /* the checkpoint's claims */
};

/* dra_init sets up d's mutex and empty tables; the caller fills the
 * configuration members. dra_free frees the tables and the CDI scan. */
void dra_init(struct dra *d);
void dra_free(struct dra *d);

/* dra_set_gpus replaces the node's device table from gpu records (as
 * gpu-probe writes them; marks of host holds are ignored: a held device
 * is still this node's, and preparing it names its holder). A device's
 * minor number (its GPU's /dev/nvidia<minor>), GPU and compute instance
 * ids and the driver version come from the record of its UUID. */
void dra_set_gpus(struct dra *d, const json_t *gpus);

/* dra_spec returns the CDI spec of claim uid (ns/name) with one
 * request of the devices named (an array of DRA device names), as a
 * prepare would write it, without the API server or the ledger; NULL with
 * *why (malloc'd) when the device table lacks one. */
json_t *dra_spec(struct dra *d, const char *uid, const char *ns,
	const char *name, const char *request, const json_t *names, char **why);

/* dra_load reads the checkpoint. A checkpoint that cannot be read is set
 * aside (see ckpt_set_aside), warned about naming the file and what is
 * wrong, and the claims are then found again from the CDI specs by
 * dra_reconcile. The CDI spec of a claim prepared that is not JSON (cut
 * short by a crash of the machine: specs are not synced) is removed, for
 * dra_reconcile to write again. Returns 0, or -1 with why when even
 * setting the checkpoint aside failed. */
int dra_load(struct dra *d, char *why, size_t n);

/* dra_prepare answers {"claims":[{namespace, uid, name}...]} with
 * {"claims":{"<uid>":{"devices":[{"requestNames","poolName","deviceName",
 * "cdiDeviceIDs"}]} or {"error":"..."}}}: one entry per claim asked. */
json_t *dra_prepare(struct dra *d, const json_t *req, struct dra_times *t);

/* dra_unprepare answers {"claims":[...]} with {"claims":{"<uid>":{}} or
 * {"error":"..."}}}.
 * Both fill t (when not NULL) with the time the call spent in each phase. */
json_t *dra_unprepare(struct dra *d, const json_t *req, struct dra_times *t);

/* dra_reconcile brings checkpoint, API claims, ledger and CDI specs
 * together (at start and every while): a checkpointed claim that is gone,
 * replaced, no longer allocated here or left half prepared is unprepared;
 * one still allocated gets its holds and its spec back if they went
 * missing; a spec of ours the checkpoint does not know is adopted when
 * its claim is still allocated here, else removed. Returns a report
 * {"kind":"reconcile","kept":[uids],"unprepared":[uids],"adopted":[uids],
 * "errors":["..."]}. */
json_t *dra_reconcile(struct dra *d);

#endif
