/* sqe: the engine of sched-queue(1), the controller: what it knows of the
 * cluster, its queue of GPUWorkloads, and the writes it decides on, with
 * no thread, socket or file of its own.
 *
 * The caller applies events to it (watch events of GPUWorkloads, Nodes,
 * Jobs, the strategy ConfigMap and ended pods; the results of the
 * writes it asked for; that a watch has listed once) and runs passes,
 * which place the waiting workloads with sched-pick's engine (sched.h).
 * What the engine wants written comes out as records, through the emit
 * callback of its options, one per write, numbered from 1:
 *
 *   {"write":N,"verb":"apply","uid":UID[,"template":T][,"job":J]
 *    [,"status":S]}
 *       apply T (a ResourceClaimTemplate), then J (a Job), then S (a
 *       GPUWorkload with only its status) by server-side apply, each
 *       that is there, in that order; the first that fails ends the
 *       write. A template the server refuses as invalid (422: its spec
 *       is immutable) is deleted and applied again.
 *   {"write":N,"verb":"delete","uid":UID,"job":{"apiVersion":"batch/v1",
 *    "kind":"Job","metadata":{"namespace":NS,"name":NAME}},
 *    "propagationPolicy":"Foreground"}
 *       delete the Job in the foreground; one already gone counts as
 *       deleted.
 *
 * UID is the workload's whose write it is. The writes of one workload
 * must be done in the order emitted; each is answered by sqe_result.
 *
 * Passes. Nothing is placed until every feed has listed once
 * (sqe_synced): a restarted controller first learns every Job, so it
 * never places a workload twice or gives a held device away. Then,
 * whenever something changed (a new workload, a finished Job, a node,
 * the strategy, a retry due), a pass feeds the waiting workloads to the
 * placement engine in priority, then creation, then arrival order:
 *
 *  - placed: the Job (wl.h) is applied, then the status Scheduled; the
 *    devices stay held until the Job finishes or goes. With opts.dra
 *    the Job's pod claims its devices: a ResourceClaimTemplate named
 *    after the workload is applied before the Job (pinning the whole
 *    GPUs placed, or a MIG profile with its fallback chain as
 *    firstAvailable subrequests, lib/migchain's built-in chains where
 *    the workload names none), and placement is asked for that chain
 *    and for exclusive devices, as a claim gets them;
 *  - unschedulable although an empty cluster could hold it: it waits,
 *    Pending, and is tried again as soon as capacity frees (no retry
 *    spent);
 *  - unschedulable even on an empty cluster (too many GPUs, a profile no
 *    node has, no node its tolerations and affinity admit): a retry of
 *    retryPolicy (backoffSeconds * 2^(n-1), at most opts.max_backoff,
 *    times a jitter of 0.5 to 1.5 drawn from its uid); Failed when they
 *    are spent;
 *  - a Job that cannot be written: the same retries, with the API's
 *    message.
 *
 * A Job left on a node that is gone is deleted and its workload placed
 * again.
 *
 * Time is the caller's: the engine reads no clock, only what
 * sqe_set_time gave it (a monotonic clock for retries and waits, the
 * wall clock for the times it writes), and draws the jitter of a Job
 * written again after a temporary failure from a generator seeded by
 * its options. The same events, times and seed give the same writes.
 *
 * Single-threaded: a struct sqe and everything it hands out may be used
 * by one thread at a time only; nothing here locks. */
#ifndef HAZ_SQE_H
#define HAZ_SQE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct hm;
struct migchain;
struct sqe;

/* The resources the engine learns from: one watch each. */
enum sqe_feed {
	SQE_WORKLOADS,
	SQE_NODES,
	SQE_JOBS,
	SQE_CONFIGMAPS,
	SQE_PODS,
	SQE_NFEEDS
};

/* sqe_feed_name: "gpuworkloads", "nodes", "jobs", "configmaps", "pods". */
extern const char *const sqe_feed_name[SQE_NFEEDS];

/* sqe_load reads the object of an event of feed (js[0..len), compact
 * JSON) keeping only what the engine reads: the names, uid, generation,
 * times, owners and labels of its metadata, its annotations and (but a
 * Node's) labels under canhazgpu.dev/, agentaflow.gpu/ and
 * k8shazgpu.dev/, of each owner its kind and uid, no Job's spec and of
 * its status whether it is ready and its conditions' type, status and
 * message, and of a Node's status its conditions alone. A workload's
 * cost is what is kept, not the size of what came.
 * Returns NULL with je filled when js is no JSON. Any thread. */
json_t *sqe_load(int feed, const char *js, size_t len, json_error_t *je);

struct sqe_opts {
	int strategy;       /* the default (sched.h), until the ConfigMap's */
	const json_t *tol;  /* tolerations every Job's pods get (borrowed) */
	const char *image;  /* of a workload that names none */
	double max_backoff; /* longest wait before a retry, seconds */
	int dra;            /* devices by ResourceClaimTemplates */
	const struct migchain *chains; /* dra: the fallback chains */
	const char *cm_ns, *cm_name; /* the strategy ConfigMap, for messages */
	int verbose;                 /* say how many wait, each pass */
	uint64_t seed;               /* of the jitter of Jobs written again */
	/* emit gets each write record; it takes the record */
	void (*emit)(void *arg, json_t *write);
	void *arg;
};

/* The upper bounds of the histogram of pass times, seconds. */
#define SQE_BUCKETS 11
extern const double sqe_buckets[SQE_BUCKETS];

/* What the metrics count; kept by the engine, saved and restored by the
 * caller. changed is set whenever a count or anything sqe_gauges reports
 * changes; the caller clears it. */
struct sqe_counters {
	struct hm *scheduled; /* strategy -> long *: Jobs written */
	long failed_invalid, failed_unsched, failed_job;
	long retries, writes_ok, writes_err;
	double hist[SQE_BUCKETS];   /* passes by time, cumulative */
	long passes;                /* passes that had workloads to place */
	double pass_sum, pass_last; /* their seconds; the last one's */
	int changed;
};

/* The answer to write number write. With ok 0: code is the API's HTTP
 * status (0 when there was none), temporary says the server could not be
 * reached or was overloaded, message says what failed, and job_written
 * that the Job of an apply was written before the failure. */
struct sqe_result {
	long write;
	int ok;
	int job_written;
	int code;
	int temporary;
	const char *message;
};

struct sqe_gauges {
	size_t total, avail;    /* devices the nodes publish; free of them */
	double util;            /* their mean utilization, percent */
	size_t pending;         /* workloads Pending or with no phase */
	size_t running, queued; /* Running; waiting for capacity or a retry */
};

/* sqe_new returns an engine with the options o (copied; what they point
 * to must outlive it); sqe_free frees it and all it holds. */
struct sqe *sqe_new(const struct sqe_opts *o);
void sqe_free(struct sqe *e);

/* sqe_set_time sets the engine's clocks: mono (seconds, never going
 * back) and wall (unix seconds). */
void sqe_set_time(struct sqe *e, double mono, double wall);

/* sqe_event applies a watch event of feed (not SQE_PODS): type 'A'dded,
 * 'M'odified or 'D'eleted, obj the object (borrowed: the engine keeps a
 * reference of its own where it needs one). */
void sqe_event(struct sqe *e, int feed, char type, json_t *obj);

/* sqe_pod_ended says that the pod of the Job whose uid is job ended: its
 * devices are free from then on. */
void sqe_pod_ended(struct sqe *e, const char *job);

/* sqe_synced says that feed has listed once; nothing is placed until
 * every feed has. sqe_all_synced says whether every one has. */
void sqe_synced(struct sqe *e, int feed);
int sqe_all_synced(const struct sqe *e);

/* sqe_result applies the answer to a write. */
void sqe_result(struct sqe *e, const struct sqe_result *r);

/* sqe_dirty says whether a pass may place something; sqe_next_due when
 * the next retry falls due (HUGE_VAL when none waits), on the monotonic
 * clock; sqe_busy how many writes are unanswered. */
int sqe_dirty(const struct sqe *e);
double sqe_next_due(const struct sqe *e);
long sqe_busy(const struct sqe *e);

/* sqe_exit_status: 0 while every write went through, 75 once one met a
 * server that could not be reached, else 1 once one failed. */
int sqe_exit_status(const struct sqe *e);

/* sqe_counters returns the engine's counters, to read or restore. */
struct sqe_counters *sqe_counters(struct sqe *e);

/* sqe_gauges fills g with what the cluster and the queue hold now. */
void sqe_gauges(const struct sqe *e, struct sqe_gauges *g);

/* sqe_rr_last returns the node round_robin chose last (NULL: none;
 * valid until the next call on e); sqe_set_rr_last restores it. */
const char *sqe_rr_last(const struct sqe *e);
void sqe_set_rr_last(struct sqe *e, const char *node);

/* ---- sqe_pass.c ---- */

/* sqe_pass_due queues the workloads whose retry fell due, and writes
 * again the Jobs whose rewrite fell due. */
void sqe_pass_due(struct sqe *e);

/* sqe_pass places the waiting workloads, in priority, then creation,
 * then arrival order, when every feed has listed and something changed
 * since the last pass. Returns how many waited (0: none), or -1 when it
 * did not run. */
int sqe_pass(struct sqe *e);

/* ---- sqe_job.c ---- */

/* sqe_job_orphans frees the devices that no Job and no write in flight
 * explains (a Job written but never seen holds them 120 s at most). */
void sqe_job_orphans(struct sqe *e);

/* ---- sqe_metrics.c ---- */

/* What the caller's watches did, for the metrics. */
struct sqe_watches {
	long events[SQE_NFEEDS]; /* events received */
	long lists[SQE_NFEEDS];  /* lists made */
};

/* sqe_metrics_pass counts a pass that took seconds (measured by the
 * caller: the engine reads no clock). */
void sqe_metrics_pass(struct sqe *e, double seconds);

/* sqe_metrics returns the engine's metrics in the Prometheus text
 * format, with the watches' of w, malloc'd (the caller frees it); *len
 * its length. */
char *sqe_metrics(const struct sqe *e, const struct sqe_watches *w,
	size_t *len);

/* sqe_metrics_save returns the counters as one JSON object, a line,
 * malloc'd (the caller frees it; *len its length); sqe_metrics_load
 * restores them from such an object (NULL: none, nothing done). */
char *sqe_metrics_save(const struct sqe *e, size_t *len);
void sqe_metrics_load(struct sqe *e, const json_t *saved);

/* ---- sqe_rec.c ---- */

/* sqe_rec_apply applies one replay record rec (sched-queue(1), Replay):
 * a watch event, a listing, a result, a clock or seed setting, a pass or
 * an orphan check. Returns 0, or -1 with why it is no such record in why
 * (n bytes). */
int sqe_rec_apply(struct sqe *e, const json_t *rec, char *why, size_t n);

#endif
