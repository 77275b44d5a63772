/* sqe_int: what the files of the engine (lib/sqe*.c) share, not for
 * tools.
 *
 * A workload waits in one of the W_* states; its Job, once seen, in one
 * of the P_* phases. Two placement states are kept: live, with every
 * hold, and cap, an empty cluster of the same nodes, to tell a workload
 * that waits for capacity from one that no node can ever hold.
 *
 * Workloads whose pods carry the same tolerations and required node
 * affinity share an eligibility class (struct sqe_sig); a node their
 * pods may use carries its label (true) in both states, and their
 * requests select it, unless the class admits every node. */
#ifndef HAZ_SQE_INT_H
#define HAZ_SQE_INT_H

#include <stddef.h>

#include <jansson.h>

#include "clock.h"
#include "hmap.h"
#include "jbuf.h"
#include "sched.h"
#include "sqe.h"

#define SQE_ORPHAN_AFTER 120.0 /* s a hold waits for a Job it wrote */

enum {
	W_QUEUED, /* waiting for a pass */
	W_WAIT,   /* a retry is due at ->due */
	W_FLIGHT, /* placed; its Job is being written */
	W_PLACED, /* its Job was written, or seen */
	W_DONE,   /* Succeeded or Failed: nothing more to do */
	W_AGAIN,  /* its Job met a temporary failure: written again at ->due */
};

enum { P_SCHEDULED, P_RUNNING, P_SUCCEEDED, P_FAILED };

enum { SQE_APPLY, SQE_DELETE }; /* the verb of a write */

struct sqe_sig {
	char *label; /* "sig.canhazgpu.dev/N" */
	json_t *cons;
	size_t eligible; /* known nodes it admits */
};

struct sqe_wl {
	char *uid, *key; /* key: namespace/name */
	json_t *obj;
	long long gen;
	int state;
	double due;
	int retries;
	unsigned long long seq;
	long long prio;
	char *req;   /* request record for gen, or NULL */
	int req_all; /* req was made while its class admitted every node */
	struct sqe_sig *sig;
	int fits; /* -1 unknown; else whether an empty cluster could */
	unsigned long fgen; /* inventory generation fits is for */
	json_t *want;       /* the status last given to a write */
	char *job;  /* W_FLIGHT, W_AGAIN: the Job being written, as compact
		     * JSON (a tree would cost ten times its text while a
		     * burst of writes waits) */
	char *tmpl; /* and its claim template (dra), or NULL */
	int again;  /* temporary failures of its Job write in a row */
	double placed_at; /* W_PLACED by a write of ours: when */
	int counted;      /* G_* bits: where sqe_gauges counts it now */
};

/* the workload gauges a workload counts in (struct sqe, nwl) */
enum { G_PENDING = 1, G_RUNNING = 2, G_QUEUED = 4 };

struct sqe_job {
	struct sqe *e;
	char *owner; /* workload uid */
	char *js;    /* the Job as kept (sqe_load), as compact JSON: read
		      * again only by its workload's events and a delete, it
		      * costs a fifth of its tree */
	char *node;
	int phase; /* P_* */
	int deleting;
	int pod_done; /* its pod ended: it holds nothing any more */
	char *uid;    /* the Job's own */
};

struct sqe_node {
	json_t *obj;
	json_t *extra; /* the class labels it carries */
	uint64_t digest;
	json_t *uuids; /* devices fed last, to retire the ones that go */
};

/* A write given out and not answered. */
struct sqe_pending {
	char *uid;
	int verb;
	char *strategy; /* of the Job of an apply, or NULL */
};

struct sqe {
	struct sqe_opts o;
	double mono, wall;
	uint64_t rng;
	struct sp_state live, cap; /* with holds; inventory only */
	struct hm *wls;            /* uid -> struct sqe_wl */
	struct hm *queue;          /* uid -> struct sqe_wl, those W_QUEUED */
	struct hm *jobs;           /* owner uid -> struct sqe_job */
	struct hm *nodes;          /* name -> struct sqe_node */
	struct hm *sigs;           /* constraints dump -> struct sqe_sig */
	struct hm *job_owner;      /* Job uid -> its workload's uid */
	size_t nsigs;
	int synced; /* bit per feed */
	int dirty;  /* a pass may place something */
	unsigned long inv_gen;
	unsigned long long seq;
	char *cm_strategy;
	struct jb scratch;
	char *answers; /* a pass's answers, one per line */
	size_t alen, acap;
	int failed, temp; /* a write failed; the server was unreachable */
	struct sqe_counters c;
	double next_due;     /* no retry is due before this */
	long busy;           /* writes given out and not answered */
	long nwrites;        /* the number of the last write */
	struct hm *inflight; /* uid -> long *: its writes not answered */
	struct hm *pending;  /* write number -> struct sqe_pending */
	/* the workloads pending, running and queued, kept as each changes
	 * (sqe_wl_recount): a scrape costs nothing per workload */
	size_t nwl[3];
};

/* sqe_wl_recount moves w's counts in e->nwl to where its phase and state
 * put it now; sign -1 takes it out of them all (it is going). */
void sqe_wl_recount(struct sqe *e, struct sqe_wl *w, int sign);
/* sqe_wl_gauges returns the G_* bits w's phase and state put it in. */
int sqe_wl_gauges(const struct sqe_wl *w);

/* ---- sqe.c ---- */

const char *sqe_str_at(const json_t *o, const char *a, const char *b);
const char *sqe_annotation(const json_t *o, const char *key);

/* sqe_feed hands one record (text, any length) to st; what names it in a
 * warning. */
void sqe_feed(struct sp_state *st, const char *rec, size_t len,
	const char *what);

/* sqe_release frees what uid holds in the live state. */
void sqe_release(struct sqe *e, const char *uid);

/* sqe_write_apply emits an apply for uid; it takes tmpl, job and status,
 * each may be NULL. sqe_write_delete emits the deletion of Job job. */
void sqe_write_apply(struct sqe *e, const char *uid, json_t *tmpl, json_t *job,
	json_t *status);
void sqe_write_delete(struct sqe *e, const char *uid, const json_t *job);

/* sqe_set_state puts w in state s (W_*), in the queue or out of it. */
void sqe_set_state(struct sqe *e, struct sqe_wl *w, int s);

/* sqe_wait_until makes w wait until due. */
void sqe_wait_until(struct sqe *e, struct sqe_wl *w, double due);

/* ---- sqe_node.c ---- */

void sqe_node_event(struct sqe *e, char type, json_t *obj);
void sqe_node_free(void *p);

/* sqe_node_sig returns the class of w's constraints, making it (and
 * labelling every node) when new. */
struct sqe_sig *sqe_node_sig(struct sqe *e, const json_t *w);

/* ---- sqe_job.c ---- */

void sqe_job_event(struct sqe *e, char type, json_t *obj);
void sqe_job_pod_ended(struct sqe *e, const char *job);
void sqe_job_free(void *p);

/* sqe_job_delete deletes Job j, saying why, so that its workload is
 * placed again. */
void sqe_job_delete(struct sqe_job *j, const char *why);

/* ---- sqe_status.c ---- */

/* sqe_status_obj wraps status s (taken) for w, to be applied. */
json_t *sqe_status_obj(const struct sqe_wl *w, json_t *s);

/* sqe_status_set writes s (taken) as w's status unless it is what w has
 * or was last given; tmpl and job (taken, may be NULL) go first. */
void sqe_status_set(struct sqe *e, struct sqe_wl *w, json_t *s, json_t *tmpl,
	json_t *job);

/* sqe_status_seen forgets the status last given to a write once w's own
 * status (the watch's echo of that write) says the same: from then on
 * later statuses are compared with w's, and the two copies are not both
 * kept (a status tree is about a tenth of what a workload costs). */
void sqe_status_seen(struct sqe_wl *w);

/* sqe_status_fail ends w Failed with msg, counting it in *counter. */
void sqe_status_fail(struct sqe *e, struct sqe_wl *w, const char *msg,
	long *counter);

/* sqe_status_retry spends one of w's retries on why, or fails it when
 * they are spent. */
void sqe_status_retry(struct sqe *e, struct sqe_wl *w, const char *why,
	const char *unsched_prefix);

/* sqe_status_from_job writes w's status as its Job j says; job is j as
 * last seen, or NULL to read it from j. */
void sqe_status_from_job(struct sqe *e, struct sqe_wl *w,
	const struct sqe_job *j, const json_t *job);

/* sqe_status_requested: w's GPU count as the status spells it. */
json_t *sqe_status_requested(const struct sqe_wl *w);

/* sqe_status_now returns the wall clock plus offset seconds, as RFC 3339
 * text in buf (CLOCK_RFC3339_SIZE bytes). */
char *sqe_status_now(const struct sqe *e, double offset, char *buf);

#endif
