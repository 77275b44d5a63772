/* sched (sp_): the model behind sched-pick: nodes, devices, who holds them,
 * requests, and the placement of a batch by a strategy.
 *
 * The search for a node is pluggable (struct sp_ops): sched-pick uses the
 * indexes of sched_index.h, bench/linear-pick a plain scan; everything
 * else (records, validation, ordering, preferred nodes, fallback chains,
 * device choice, scores, reasons, output) is shared, so both give the
 * same placements by construction wherever their searches agree.
 *
 * Definitions every search must follow (see sched-pick(1)):
 *
 * - A node is usable when it is ready and not unschedulable.
 * - For a query (profile p, memory m, free or shared devices), a node's
 *   candidate devices are its healthy devices of profile p that nobody
 *   holds with at least m MiB (free), or that are shared, not held
 *   exclusively, with at least m MiB left (shared). struct sp_load sums
 *   them: count, util_pct, and MiB (the whole device when free; what is
 *   left when shared). A shared request looks among shared devices
 *   first, then among free ones.
 * - A node fits when it is usable, matches the selector, and has the
 *   candidates asked for: enough of them, at the explicit indexes if
 *   any (sp_fits).
 * - The search returns the fitting node that sorts first by sp_cmp.
 * - Least_utilized (and priority) first asks only for candidates under
 *   the goal (util_pct below sp_state.goal: sp_query.cool), then, when
 *   no node has enough of them, for any. The order of nodes stays that
 *   of all their candidates, so a goal changes nothing where the choice
 *   without one takes no device at or above it.
 *
 * Threads: a struct sp_state belongs to one thread at a time; the record
 * reader's name table is shared by all safely (jscan.h). */
#ifndef HAZ_SCHED_H
#define HAZ_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "hmap.h"
#include "jbuf.h"
#include "jscan.h"
#include "nd.h"

enum sp_strategy {
	SP_LEAST_UTILIZED,
	SP_LEAST_LOADED,
	SP_BEST_FIT,
	SP_BINPACK,
	SP_SPREAD,
	SP_BINPACK_GPU,
	SP_SPREAD_GPU,
	SP_PRIORITY,
	SP_ROUND_ROBIN,
	SP_RANDOM,
	SP_COST_OPTIMIZED,
	SP_NSTRATEGIES
};

enum {
	SP_MAX_GPUS = 64,     /* devices one request may ask for */
	SP_MAX_FALLBACK = 8,  /* profiles in mig_fallback */
	SP_WHOLE = 0,         /* profile id of a whole GPU */
	SP_NO_PROFILE = -1,   /* not allocatable: a GPU in MIG mode */
	SP_FLUSHED = 1,       /* sp_feed: a flush record placed a batch */
	SP_GOAL_DEFAULT = 80, /* GPU_UTILIZATION_GOAL when unset, percent */
};

struct sp_node;

struct sp_dev {
	char *uuid;
	struct sp_node *node; /* NULL while only an allocation names it */
	int index;            /* the GPU's index; a MIG device has its GPU's */
	int migdev;           /* MIG device number, -1 for a whole GPU */
	int prof;             /* profile id, SP_WHOLE or SP_NO_PROFILE */
	long mem;             /* memory_mib */
	int util;             /* util_pct, 0 when unknown */
	int healthy;          /* health is not "unhealthy" */
	int excl;             /* held exclusively */
	int nshared;          /* shared holders */
	long shared_mem;      /* MiB the shared holders take */
};

struct sp_label {
	char *key, *val;
};

struct sp_node {
	char *name;
	struct sp_label *labels; /* sorted by key */
	size_t nlabels;
	int ready, unsched, cheap, has_cost;
	double cost;
	struct sp_dev **devs; /* sorted by profile, index, MIG device */
	size_t ndevs, capdevs;
	size_t id; /* position in sp_state.nodes, for indexes */
	int rank;  /* position in name order */
	int dirty; /* in sp_state.dirty */
	int rekey; /* its cost or cheapness changed since the last sync */
};

/* A request or allocation that holds devices (its id is its key in
 * sp_state.holds). One allocation: devs points at dev. */
struct sp_hold {
	struct sp_dev **devs;
	size_t ndevs;
	long mem; /* MiB taken on each device when shared */
	int excl;
	struct sp_dev *dev[];
};

struct sp_req {
	char *err; /* why it cannot be placed, found when read; or NULL */
	int k;     /* devices */
	int chain[1 + SP_MAX_FALLBACK]; /* profile, then fallbacks */
	int nchain;
	long mem; /* min_memory_mib */
	int excl;
	long long prio;
	int strat; /* -1: the default */
	char *prefer;
	struct sp_label *sel; /* node_selector, sorted by key */
	size_t nsel;
	int *ids; /* gpu_ids, or NULL */
	int nids;
	int has_created;
	double created;
	size_t seq;          /* input order */
	int withdrawn;       /* released before its batch was placed */
	struct sp_req *same; /* an earlier pending request with this id */
	char id[];
};

/* One search: what the request needs of one node. */
struct sp_query {
	int prof;
	long mem;
	int k;
	int shared; /* look among shared devices, not free ones */
	int strat;
	const int *ids;
	int nids;
	const struct sp_label *sel;
	size_t nsel;
	int start; /* round_robin, random: the rank the rotation starts at */
	int goal;  /* util_pct at which a device is over the goal */
	int cool;  /* take only candidates under the goal */
};

struct sp_load {
	int count;
	long util;
	long mem;
	int cool; /* of count, those under the goal */
};

/* The members of every record kind, found in one pass over a record. */
/* clang-format off */
enum sp_field {
	SPF_KIND, SPF_ID, SPF_NAME, SPF_LABELS, SPF_READY, SPF_UNSCHED,
	SPF_COST, SPF_CHEAP, SPF_NODE, SPF_INDEX, SPF_UUID, SPF_MEMORY,
	SPF_UTIL, SPF_MIG_ENABLED, SPF_MIG, SPF_HEALTH, SPF_DEVICES,
	SPF_EXCLUSIVE, SPF_GPUS, SPF_GPU_IDS, SPF_MIG_PROFILE,
	SPF_MIG_FALLBACK, SPF_MIN_MEMORY, SPF_PRIORITY, SPF_STRATEGY,
	SPF_PREFER, SPF_SELECTOR, SPF_CREATED, SPF_N
};
/* clang-format on */

struct sp_state;

struct sp_ops {
	/* open returns the search's context for st. */
	void *(*open)(struct sp_state *st);
	/* rebuild: nodes, devices or profiles were added or changed shape;
	 * ranks are new. */
	void (*rebuild)(void *ctx);
	/* update: what node n holds, or its readiness, health or cost,
	 * changed (n->rekey: its cost or cheapness). */
	void (*update)(void *ctx, struct sp_node *n);
	/* relabel: node n, known at the last rebuild, now carries (in) or
	 * no longer carries (!in) the label key=val; called as its labels
	 * are read, before the update that follows. */
	void (*relabel)(void *ctx, struct sp_node *n, const char *key,
		const char *val, int in);
	/* find returns the fitting node that sorts first, or NULL. */
	struct sp_node *(*find)(void *ctx, const struct sp_query *q);
	void (*close)(void *ctx);
};

/* A label's nodes, for selectors. */
struct sp_nodeset {
	struct sp_node **v;
	size_t n, cap;
};

struct sp_state {
	struct hm *node_by_name; /* name -> struct sp_node */
	struct sp_node **nodes;  /* in the order first seen */
	size_t nnodes, capnodes;
	struct sp_node **by_name; /* in name order (rank) */
	struct hm *dev_by_uuid;   /* uuid -> struct sp_dev */
	struct hm *holds;         /* id -> struct sp_hold */
	struct hm *label_sets;    /* "key\037value" -> struct sp_nodeset */
	char **profs;             /* profile names by id; [0] is "" */
	int nprofs;
	int relayout;           /* ranks, label sets, indexes are stale */
	struct sp_node **dirty; /* nodes whose index entries are stale */
	size_t ndirty, capdirty;

	struct sp_req **batch; /* requests waiting for a flush */
	size_t nbatch, capbatch;
	struct hm *pending; /* id -> its last struct sp_req in batch */
	int pending_live;   /* pending is filled for this batch */
	size_t seq;

	int strategy;  /* -S */
	int goal;      /* GPU_UTILIZATION_GOAL, percent: see sp_goal_from_env */
	uint64_t rng;  /* random's splitmix64 state */
	char *rr_last; /* round_robin: the node chosen last */
	const struct sp_ops *ops;
	void *ctx;

	/* each answer of a flush goes to emit (rec is not NUL-terminated)
	 * when it is set, else to stdout as a line */
	void (*emit)(void *arg, const char *rec, size_t len);
	void *emit_arg;

	struct js_doc doc; /* scratch */
	int field[SPF_N];  /* tokens of the record fed: sp_field */
	struct jb out;

	/* statistics */
	size_t nplaced, nunsched;
	double decide_sec;            /* in decisions, wall clock */
	double first_wall, first_cpu; /* when the first request came */
};

/* ---- sched.c: state and inventory ---- */

/* sp_goal_from_env returns GPU_UTILIZATION_GOAL, a whole percentage
 * from 1 to 100 (SP_GOAL_DEFAULT when unset), or -1 with the reason,
 * naming the variable, in why (size n). */
int sp_goal_from_env(char *why, size_t n);

/* sp_init readies st to search with ops; strategy is the default, seed
 * random's. The goal is read from the environment; a bad value ends the
 * program with status 2 (a tool that wants to refuse it before any work
 * calls sp_goal_from_env first). */
void sp_init(struct sp_state *st, const struct sp_ops *ops, int strategy,
	uint64_t seed);
void sp_free(struct sp_state *st);

/* sp_feed applies the record in d (its top value). Returns 0,
 * SP_FLUSHED after a flush record placed the batch, or -1 for a bad
 * record (warned on r). */
int sp_feed(struct sp_state *st, struct nd_reader *r, const struct js_doc *d);

/* sp_field returns the token of member f of the record being fed, or -1
 * when it is absent or null. */
int sp_field(const struct sp_state *st, enum sp_field f);

/* sp_clock returns the monotonic clock, or with cpu set the process's
 * CPU time, in seconds. */
double sp_clock(int cpu);

/* sp_sync brings ranks, label sets and the search's indexes up to date;
 * called before each search. */
void sp_sync(struct sp_state *st);

/* sp_mark notes that n's index entries are stale. */
void sp_mark(struct sp_state *st, struct sp_node *n);

/* sp_prof_range sets [*lo, *hi) to the positions of n's devices of
 * profile prof. */
void sp_prof_range(const struct sp_node *n, int prof, size_t *lo, size_t *hi);

/* sp_profile returns the id of a canonical profile name, adding it. */
int sp_profile(struct sp_state *st, const char *canon);

/* sp_label_set returns the usable and unusable nodes labelled key=val,
 * or NULL when none is. Valid until the next sp_sync. */
const struct sp_nodeset *sp_label_set(const struct sp_state *st,
	const char *key, const char *val);

/* sp_label_key writes "key\037val", the name of a label set, into buf
 * (size n), or into a new string when it does not fit; returns it. */
char *sp_label_key(const char *key, const char *val, char *buf, size_t n);

/* sp_labels_read reads object token tok of d, whose values must all be
 * strings, into a new array sorted by key. Returns 0, or -1 (nothing
 * stored) when it is not such an object. */
int sp_labels_read(const struct js_doc *d, int tok, struct sp_label **out,
	size_t *n);
void sp_labels_free(struct sp_label *v, size_t n);

/* sp_release frees what id holds; returns 0, or -1 when it holds
 * nothing. */
int sp_release(struct sp_state *st, const char *id);

/* sp_hold_devs records that id holds devs (mem MiB each when shared). */
void sp_hold_devs(struct sp_state *st, const char *id, struct sp_dev **devs,
	size_t n, long mem, int excl);

/* ---- sched_req.c: requests ---- */

const char *sp_strategy_name(int s);

/* sp_strategy_parse maps a name, in either spelling, to a strategy; -1
 * when unknown. */
int sp_strategy_parse(const char *s);

/* sp_req_read turns the request record d being fed into a new request.
 * Returns NULL (warned on r) when it has no id; field errors go to
 * ->err. */
struct sp_req *sp_req_read(struct sp_state *st, struct nd_reader *r,
	const struct js_doc *d);
void sp_req_free(struct sp_req *q);

/* sp_req_order sorts a batch for placement under strategy s. */
void sp_req_order(struct sp_req **v, size_t n, int s);

/* ---- sched_place.c: decisions ---- */

/* sp_usable says whether n may be chosen at all. */
int sp_usable(const struct sp_node *n);

/* sp_selects says whether n carries every label of sel. */
int sp_selects(const struct sp_node *n, const struct sp_label *sel,
	size_t nsel);

/* sp_node_load sums n's candidate devices for q (see above). */
void sp_node_load(const struct sp_node *n, const struct sp_query *q,
	struct sp_load *out);

/* sp_fits says whether n fits q, storing the devices it would get in
 * out (SP_MAX_GPUS room) when out is not NULL. */
int sp_fits(const struct sp_node *n, const struct sp_query *q,
	struct sp_dev **out);

/* sp_cmp orders nodes with loads a and b for q's strategy: <0 when a
 * comes first. nnodes is the size of the rank rotation. */
int sp_cmp(const struct sp_node *na, const struct sp_load *a,
	const struct sp_node *nb, const struct sp_load *b,
	const struct sp_query *q, size_t nnodes);

/* sp_flush places every request of the batch in order, writing one
 * record each, and empties the batch. */
void sp_flush(struct sp_state *st);

#endif
