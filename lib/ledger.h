/* ledger (lg_): the GPU ledger canhazgpu keeps in Redis, read and written
 * byte for byte as canhazgpu does (see gpu-reserve(1)).
 *
 * Every write goes through one Lua script per operation (lib/lua/NAME.lua,
 * run by lg_run); those that allocate take canhazgpu:allocation_lock
 * with a token of ours first and delete it after only while it is still
 * ours. Reading (status, mark, queue, report) is done here, in C, by the
 * same rules the scripts follow. */
#ifndef HAZ_LEDGER_H
#define HAZ_LEDGER_H

#include <jansson.h>

#include "redis.h"

#define LG_PREFIX "canhazgpu:"
#define LG_RUN_TIMEOUT 300   /* seconds a run reservation lives unbeaten */
#define LG_QUEUE_TIMEOUT 120 /* seconds a queue entry lives unbeaten */

/* The bounds of every field, one definition for the C side and the Lua
 * scripts (lg_lua_bounds writes them into each script): what a request
 * may carry, what a key read may hold. k8shazgpu(7) lists them. */
#define LG_MAX_GPUS 1024           /* canhazgpu:gpu_count, GPUs asked for */
#define LG_MAX_GPU_ID 65535        /* a GPU id in a request */
#define LG_MAX_NAME 512            /* bytes of user, actual_user */
#define LG_MAX_NOTE 1024           /* bytes of a note */
#define LG_MAX_ID 256              /* bytes of claim_uid, MIG uuids, ids */
#define LG_MAX_KEY 16384           /* bytes of a GPU key's or entry's value */
#define LG_MAX_DEPTH 32            /* nesting of such a value */
#define LG_MAX_VALUES 256          /* its JSON values, member names counted */
#define LG_TIME_MAX 253402300799LL /* 9999-12-31T23:59:59Z; times >= 0 */
#define LG_MAX_DURATION 315360000  /* seconds (3650 days) */
#define LG_MAX_QUEUE 1024          /* entries in canhazgpu:queue */
#define LG_MAX_HOLDS 8192          /* hold records of one k8s-sync batch */
/* A heartbeat more than this many seconds ahead of the clock cannot be
 * judged: the reservation or queue entry counts as stale. */
#define LG_MAX_AHEAD 300

/* A time as canhazgpu stores it, read: set is 0 when absent or null;
 * off is the offset from UTC it was written with (seconds east), unless
 * it was written as a number (local: it has none of its own). */
struct lg_time {
	int set;
	long long sec;
	long nsec;
	int off, local;
};

enum lg_kind {
	LG_FREE, /* no holder */
	LG_HELD, /* a reservation (active or not) */
	LG_BAD,  /* a value we cannot read: held, never written over */
};

/* The state of one GPU, from its canhazgpu:gpu:<id> value. */
struct lg_state {
	int gpu;
	enum lg_kind kind;
	int active; /* LG_HELD: not stale, not expired */
	char *user, *actual_user, *type, *note, *claim_uid, *queue_id;
	struct lg_time start, heartbeat, expiry, released;
	char *why; /* LG_BAD: what is wrong ("not JSON") */
};

/* The clock, as the scripts get it: unix seconds, nanoseconds, and the
 * local offset from UTC in seconds. */
struct lg_clock {
	long long sec;
	long nsec;
	int off;
};

struct lg {
	struct rd *rd;
	double lockwait_s; /* how long to wait for a lock held by another */
	char token[33];    /* our allocation-lock value */
};

enum lg_script {
	LG_RESERVE,
	LG_RELEASE,
	LG_HEARTBEAT,
	LG_CLEANUP,
	LG_K8S_SYNC,
	LG_K8S_PREPARE,
	LG_QUEUE_ADD,
	LG_QUEUE_HEARTBEAT,
	LG_QUEUE_TRY,
	LG_QUEUE_CANCEL,
};

/* ---- lib/ledger_time.c ---- */

/* lg_clock reads the clock: the real one, or the one K8SHAZGPU_NOW sets
 * ("SECONDS[.FRACTION]", for tests); the offset is TZ's. */
void lg_clock(struct lg_clock *c);

/* lg_time_parse reads v (NULL or null: unset) as canhazgpu's FlexibleTime:
 * a number of seconds (fraction dropped), a numeric string, or RFC 3339
 * with any offset and fraction. Returns 0, or -1 when v is none of them. */
int lg_time_parse(const json_t *v, struct lg_time *t);

/* lg_rfc3339 writes unix seconds as "2026-11-24T01:02:03Z" into buf
 * (at least 32 bytes) and returns buf. */
char *lg_rfc3339(long long sec, char *buf);

/* lg_time_json returns t as an RFC 3339 UTC string, or null when unset.
 * lg_time_shown_json returns it as canhazgpu's status --json shows it
 * (Go's RFC 3339 with nanoseconds): with its fraction, trailing zeros
 * cut, and the offset it was written with ("Z" for none); a number at
 * the local offset of that instant (TZ's), without a fraction. */
json_t *lg_time_json(const struct lg_time *t);
json_t *lg_time_shown_json(const struct lg_time *t);

/* lg_secs_json returns a JSON number of unix seconds (as the scripts
 * answer them) as an RFC 3339 UTC string; anything else as null. */
json_t *lg_secs_json(const json_t *secs);

/* lg_str_or_null returns s as a JSON string, or null for NULL;
 * lg_copy_or_null a deep copy of v, or null for NULL: the members of
 * the records written. */
json_t *lg_str_or_null(const char *s);
json_t *lg_copy_or_null(const json_t *v);

/* lg_duration reads a canhazgpu duration ("90m", "1.5h", "2d", "45s")
 * into seconds. Returns 0, or -1 for anything else. */
int lg_duration(const char *s, double *secs);

/* lg_random_hex fills out with 2n hex digits from the system's random
 * source, and a NUL. */
void lg_random_hex(char *out, size_t n);

/* ---- lib/ledger_state.c ---- */

/* lg_state_parse reads the value raw (len bytes; NULL: no key) of GPU
 * gpu's key at time now into st (free it with lg_state_free). */
void lg_state_parse(struct lg_state *st, int gpu, const char *raw, size_t len,
	long long now);
void lg_state_free(struct lg_state *st);

/* lg_holds says whether st keeps its GPU from others now: an active
 * reservation, or a value that cannot be read. */
int lg_holds(const struct lg_state *st);

/* lg_read_states reads the states of GPUs 0..count-1 with one MGET into
 * a new array (free with lg_states_free). */
struct lg_state *lg_read_states(struct lg *l, int count, long long now);
void lg_states_free(struct lg_state *sts, int count);

/* lg_gpu_count returns canhazgpu:gpu_count; ends the tool (status 1)
 * saying how to initialise the pool when it is not set. */
int lg_gpu_count(struct lg *l);

/* lg_state_record returns st as a gpu-state record; mem is the GPU's
 * memory_used_mib (< 0: unknown), unreserved whether it is in use
 * without a reservation; its times written by time_json (lg_time_json or
 * lg_time_shown_json). */
json_t *lg_state_record(const struct lg_state *st, long long mem,
	int unreserved, json_t *(*time_json)(const struct lg_time *));

/* lg_reservation returns a reservation record with op for a reservation
 * as the scripts describe it ({gpu, mig, user, actual_user, type,
 * claim_uid, since, expires, note}; mig, a MIG device's uuid, only in
 * the record when the info has it). */
json_t *lg_reservation(const char *op, const json_t *info);

/* lg_bad_warning warns, once per key and process, that a key cannot be
 * read: `canhazgpu:gpu:3: not JSON (treated as held; left as it is)`. */
void lg_bad_warning(int gpu, const char *why);

/* lg_delete_states deletes every canhazgpu:gpu:* key (init -f). */
void lg_delete_states(struct lg *l);

/* ---- lib/ledger_bound.c ---- */

/* lg_text_check says what is wrong with s as a text of at most max bytes
 * (NULL: nothing): too long, not UTF-8, or holding a control character
 * (C0, DEL, C1), each with its byte offset, written into why (n bytes). */
const char *lg_text_check(const char *s, size_t max, char *why, size_t n);

/* lg_time_ok says whether sec lies in the ledger's time range. */
int lg_time_ok(long long sec);

/* lg_value_check says what keeps raw (len bytes), a value read from a
 * key, from being read at all (NULL: nothing): over LG_MAX_KEY bytes,
 * nested deeper than LG_MAX_DEPTH, or over LG_MAX_VALUES values counted
 * in the text as written (member names, and each of a duplicated
 * member's values, counted). The Lua scripts' jcheck applies these rules
 * and the rest of strict JSON. */
const char *lg_value_check(const char *raw, size_t len);

/* lg_lua_bounds returns the Lua line that defines the bounds above for
 * the scripts (static). */
const char *lg_lua_bounds(void);

/* ---- lib/ledger_lua.c ---- */

/* lg_init sets up l on the connection rd. The first call builds the
 * scripts, shared by every struct lg after: make it before threads
 * start. */
void lg_init(struct lg *l, struct rd *rd, double lockwait_s);

/* lg_try_run runs script s with params (taken; now, ns, off and token
 * are added), retrying while another holds the allocation lock, up to
 * l->lockwait_s. Returns the script's answer (caller frees), or NULL
 * with *status and *why (malloc'd, the message): HAZ_TEMP when Redis
 * cannot be reached (on a soft connection; else the tool ends) or the
 * lock stayed held; HAZ_FAIL when the pool has no gpu_count or the
 * script failed or answered something unreadable. Never ends the tool
 * on a soft connection; touches no static state. */
json_t *lg_try_run(struct lg *l, enum lg_script s, json_t *params, int *status,
	char **why);

/* lg_run is lg_try_run that ends the tool with the status and message
 * where lg_try_run would return NULL. */
json_t *lg_run(struct lg *l, enum lg_script s, json_t *params);

/* ---- lib/ledger_req.c ---- */

/* A reserve request, from options or a request record. */
struct lg_req {
	int count; /* 0: not given */
	int *ids, nids;
	const char *type, *user, *actual_user, *claim_uid, *note;
	double duration; /* seconds; 0: not given */
	int force, nonblock;
	double wait; /* seconds; < 0: for ever */
};

/* lg_default_user is canhazgpu's user: $USER, $USERNAME or "unknown";
 * lg_login_name the login name ($USER, else the password file's). */
const char *lg_default_user(void);
const char *lg_login_name(void);

/* lg_parse_ids reads "0,2,5" into *ids (malloc'd) and *n. Returns NULL,
 * or what is wrong. */
const char *lg_parse_ids(const char *s, int **ids, int *n);
json_t *lg_ids_json(const int *ids, int n);

/* lg_req_check fills in q's defaults and checks it whole; cli says
 * whether it came from options (messages name them) or a record (its
 * members). Returns NULL, or what is wrong (static or in why). */
const char *lg_req_check(struct lg_req *q, int cli, char *why, size_t n);

/* lg_reserve_params is the reserve script's parameters for q, with the
 * ids to skip (unreserved, taken). */
json_t *lg_reserve_params(const struct lg_req *q, json_t *unreserved);

/* lg_reserve_refusal says why the reserve script refused (res), in *msg
 * (malloc'd). Returns 1 when waiting in the queue may help. */
int lg_reserve_refusal(const json_t *res, const struct lg_req *q, char **msg);

/* lg_queue_entry is the queue entry of q, for lg_queue_wait. */
json_t *lg_queue_entry(const struct lg_req *q);

/* lg_write_reservations writes a reservation record with op for each of
 * infos (as the scripts answer them). */
void lg_write_reservations(const char *op, const json_t *infos);

/* lg_release_params is the release script's parameters: the GPUs of
 * claim, else ids held by user, else all of user's; type NULL: manual
 * ones (and run ones with ids); since (NULL: any), a start time per id:
 * only the reservations made then, the others reported as lost. */
json_t *lg_release_params(const int *ids, int nids, const char *user,
	const char *claim, const char *type, const long long *since);

/* lg_release_report writes a release answer's records with op and says
 * on stderr what was not released. Returns HAZ_OK or HAZ_FAIL. */
int lg_release_report(const json_t *res, const char *op, const char *user,
	const char *claim, const char *type, int nids);

json_t *lg_heartbeat_params(const int *ids, int nids, const char *user,
	const long long *since);

/* lg_heartbeat_report writes a heartbeat answer's records and says which
 * reservations are lost. Returns HAZ_OK or HAZ_FAIL. */
int lg_heartbeat_report(const json_t *res);

/* lg_field_ids reads member k of a request record, an array of GPU ids
 * (or null, or absent: none; an empty array is refused, never "all"),
 * into *ids (malloc'd, also on failure). Returns NULL or what is wrong. */
const char *lg_field_ids(const json_t *rec, const char *k, int **ids, int *n);

/* lg_field_str points *s at member k of rec, a string (NULL when null or
 * absent). Returns 0, or -1 when it is something else. */
int lg_field_str(const json_t *rec, const char *k, const char **s);

/* lg_jint returns member k of o as an integer (0 when absent). */
long long lg_jint(const json_t *o, const char *k);

/* ---- lib/ledger_run.c ---- */

/* How lg_supervise runs the command: limit_s, when >= 0, the seconds
 * after which it is sent SIGINT (and SIGKILL 30 s later if still
 * there); canhazgpu, a command that cannot be started ends with 1 and
 * "command not found", as canhazgpu's run (else 127 or 126). */
struct lg_run_opts {
	double limit_s;
	int canhazgpu;
};

/* lg_supervise runs argv with CUDA_VISIBLE_DEVICES set to ids (n of
 * them, in order) while user's run reservations of ids, made at since
 * (unix seconds, one per id: they are told from a later reservation of
 * the same user by that), are kept alive:
 * SIGHUP ignored, SIGINT and SIGTERM passed on to the command, a
 * heartbeat every 60 s (a lost Redis connection is warned about and
 * tried again, reconnect called first), the time limit of o, the
 * release when it ends: of those still its own, each on its own if the
 * release of all is refused, those another took named and left.
 * Returns its exit status, or 128 + the signal that ended it. */
int lg_supervise(struct lg *l, char **argv, const int *ids,
	const long long *since, int n, const char *user,
	const struct lg_run_opts *o, void (*reconnect)(struct lg *));

/* lg_hms writes seconds as canhazgpu shows a duration, "1h 2m 3s"
 * (whole seconds, down), into buf; returns buf. */
char *lg_hms(double secs, char buf[32]);

/* ---- lib/ledger_queue.c ---- */

/* lg_queue_wait puts a request in canhazgpu's queue (entry: the
 * QueueEntry members but id and times) and waits, its heartbeat kept,
 * until it heads the queue and holds all it asked for; unreserved: the
 * ids to skip (taken). Wakes every 2 s, and on keyspace events when sub
 * is not NULL. SIGINT and SIGTERM take the request out of the queue, its
 * GPUs freed, then end the tool by the signal. Returns the reservations
 * (as the reserve script answers them), or NULL when wait_s (>= 0)
 * seconds passed first, the request taken out. */
json_t *lg_queue_wait(struct lg *l, json_t *entry, json_t *unreserved,
	double wait_s, struct rd *sub);

/* lg_queue_list writes a queue-entry record per queued request, in
 * order, each with the entry as stored (member entry) when raw. An entry
 * missing or not a JSON object is named on stderr and left out; members
 * it lacks, and a time in it that cannot be read (null then), are named.
 * Returns HAZ_OK, or
 * HAZ_FAIL when something was named. Nothing is written to Redis. */
int lg_queue_list(struct lg *l, int raw);

/* ---- lib/ledger_watch.c ---- */

/* lg_keyspace_open connects sub to l's server and subscribes it to the
 * keyspace events of canhazgpu:gpu:* when the server's
 * notify-keyspace-events has K and g, $ or A. Returns 0, or -1 (sub
 * unused) after saying once on stderr that it polls instead and how to
 * turn them on. */
int lg_keyspace_open(struct lg *l, struct rd *sub);

/* lg_drain reads the events sub has ready; returns how many there were.
 * With keys, each event's key is appended to it. */
int lg_drain(struct rd *sub, json_t *keys);

/* lg_watch writes {"kind":"changed","key":...} per change of a GPU key:
 * by sub's events, else by comparing the values every 2 s. Returns
 * HAZ_OK after secs seconds (< 0: never). */
int lg_watch(struct lg *l, struct rd *sub, double secs);

/* ---- lib/ledger_mark.c ---- */

/* lg_mark copies gpu records from stdin to stdout, batch by batch (a
 * batch ends with a flush record, or the input), adding "held" to those
 * whose GPU is held on the host: an active reservation not of type k8s,
 * a value that cannot be read, or memory_used_mib over threshold without
 * a reservation. With watch, the last batch is written again, marked
 * anew and ended with a flush record, whenever its marks change (checked
 * on sub's events, or every 2 s without sub, and when a reservation
 * turns stale). Returns HAZ_OK or HAZ_FAIL (a bad record). */
int lg_mark(struct lg *l, struct rd *sub, int watch, long long threshold);

/* ---- lib/ledger_sync.c ---- */

/* lg_k8s_sync reads batches of hold records from stdin (each the whole
 * desired set of Kubernetes holds, ended by a flush record or the input)
 * and makes the ledger's k8s holds match each in one script; writes the
 * changes (reservation records, op hold or release), a conflict record
 * per wanted GPU someone else holds, and a flush record per batch.
 * Returns HAZ_OK or HAZ_FAIL (a bad record). */
int lg_k8s_sync(struct lg *l);

/* lg_write_conflict writes the conflict record of c (a conflict the
 * k8s-sync or prepare script answered: holder, holder_type, since) for
 * rec, a hold record ({gpu, mig, claim_uid, namespace, name, pods}). */
void lg_write_conflict(const json_t *rec, const json_t *c);

/* ---- lib/ledger_claim.c ---- */

/* A Kubernetes claim's holds (the kubelet plugin's prepare) and their
 * MIG model: a whole GPU is held by the claim (user "k8s:<ns>/<name>",
 * its claim_uid); a MIG device holds its parent GPU with the shared hold
 * (user "k8s:mig", no claim_uid), its claims in
 * canhazgpu:k8s:gpu:<g>:claims, the device's claim in
 * canhazgpu:k8s:mig:<uuid>. gpu-reserve(1) and k8shazgpu(7) have the
 * keys. */

/* lg_claim_prepare takes the holds of claim ({claim_uid, namespace, name,
 * user (default "k8s:<namespace>/<name>"), pod (or null), gpus: [whole
 * GPU ids], mig: [{gpu, uuid}]}) all or nothing, under the allocation
 * lock; never queued. Returns the answer: {ok: [a reservation info per
 * whole GPU, then per MIG device with member mig]} (nothing written
 * again when the claim holds them already), or {conflicts: [{gpu, mig,
 * holder, holder_type, claim_uid, since, bad}]} with nothing written;
 * each with released: the stale host reservations freed on the way. NULL
 * with *status and *why as lg_try_run's, and HAZ_FAIL for a claim that
 * is not of that shape or names a GPU out of range. A connection that
 * fails is tried once more, connected anew (the script is idempotent).
 * Safe from threads that each have their own l, or share one under a
 * lock. */
json_t *lg_claim_prepare(struct lg *l, const json_t *claim, int *status,
	char **why);

/* lg_claim_release frees every hold of claim uid: its whole GPUs, its MIG
 * devices, and each shared parent it was the last claim of (with its
 * usage record). Returns {released: [infos]} ([] for a claim that holds
 * nothing), or NULL as lg_claim_prepare. */
json_t *lg_claim_release(struct lg *l, const char *uid, int *status,
	char **why);

/* lg_conflict_text is one sentence for a conflict of lg_claim_prepare's
 * answer (malloc'd), e.g. "GPU 1 is held by alice (manual reservation
 * since 2026-11-24T03:00:00Z)". */
char *lg_conflict_text(const json_t *conflict);

/* ---- lib/ledger_report.c ---- */

/* lg_report writes a usage record per user for the last days days, from
 * the usage history and the reservations in progress, then a usage-total
 * record. */
int lg_report(struct lg *l, double days);

#endif
