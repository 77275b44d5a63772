/* watch: list then watch one collection, emitting every change once.
 *
 * The watcher keeps, per object uid, its namespace/name, resourceVersion
 * and last state (not the state with o.no_last), and lists page by page,
 * holding one page at a time. It watches from the resourceVersion of
 * what it last saw (events and bookmarks), so a dropped connection or an
 * API server restart loses and repeats nothing. When the server no
 * longer has that version (410 Gone, as an HTTP status or a watch ERROR
 * event), it lists again and emits the difference: ADDED for new
 * objects, MODIFIED for a changed resourceVersion, DELETED (with the
 * last state seen) for objects gone. A line of the stream that is not a
 * watch event is reported with its URL, line number and byte offset, and
 * the watch resumes.
 *
 * watch_replay reads a captured stream instead, through the same line
 * handler, so it emits and reports exactly what a live watch would. */
#ifndef HAZ_WATCH_H
#define HAZ_WATCH_H

#include <jansson.h>

#include "kube.h"

struct watch_opts {
	const char *path;           /* collection path, no query */
	const char *label_selector; /* or NULL */
	const char *field_selector; /* or NULL */
	long page_limit;            /* list page size; 0: no paging */
	double give_up;             /* seconds of failed reconnects tolerated */
	int verbose;                /* say on stderr when (re)connecting */
	int no_last; /* keep no object's last state: a DELETED after a
		      * relist carries only its metadata's namespace,
		      * name, uid and resourceVersion */
};

/* watch_emit_fn gets each event; obj is borrowed. Nonzero stops. */
typedef int watch_emit_fn(const char *type, json_t *obj, void *arg);

/* watch_raw_fn gets each event with its object as compact JSON: js[0..len)
 * (borrowed, not NUL-terminated), the very bytes the server sent when
 * they were compact. Nonzero stops. */
typedef int watch_raw_fn(const char *type, const char *js, size_t len,
	void *arg);

struct watch;

/* watch_new returns a watcher of o->path through k (borrowed; NULL for a
 * watcher that only replays), handing events to fn with arg. */
struct watch *watch_new(struct kube *k, const struct watch_opts *o,
	watch_emit_fn *fn, void *arg);

/* watch_new_raw is watch_new for a consumer of JSON text: no event of
 * the stream is parsed into jansson objects. */
struct watch *watch_new_raw(struct kube *k, const struct watch_opts *o,
	watch_raw_fn *fn, void *arg);
void watch_free(struct watch *w);

/* watch_list lists the collection once and emits the difference from
 * what was emitted before (at first: ADDED for every item). Returns 0,
 * or -1 with e filled (one attempt, no retry). */
int watch_list(struct watch *w, struct kube_error *e);

/* watch_run watches from the last list or event, retrying with backoff.
 * Returns 0 when the emit function stopped it, else -1 with e filled:
 * KUBE_EDEADLINE when the kube deadline passed, KUBE_ETEMP when the
 * server stayed unreachable longer than give_up, or a permanent error. */
int watch_run(struct watch *w, struct kube_error *e);

/* watch_replay reads the raw lines a "GET ...?watch=1" returned from fd
 * until its end or until fn stops it, and handles each as a live stream
 * line. name stands for the URL in messages. A line that is no watch
 * event, an ERROR event (nothing can be listed again) and a truncated
 * last line are warned about, counted in watch_bad, and skipped. With
 * o->verbose it says at the end which resourceVersion a watch would
 * resume from. Returns 0, or -1 on a read error with e filled. */
int watch_replay(struct watch *w, int fd, const char *name,
	struct kube_error *e);

/* watch_bad returns how many unusable stream lines were met. */
long watch_bad(const struct watch *w);

/* watch_lists returns how many lists went through: the first, each one
 * after 410 Gone, and each the caller asked for; safe to read from
 * another thread. */
long watch_lists(const struct watch *w);

/* watch_kube returns the client w was made with. */
struct kube *watch_kube(const struct watch *w);

/* How watch_loop runs (watch_loop.c). */
struct watch_loop {
	const char *name; /* for "NAME: watching again" */
	double turn;      /* seconds a watch runs before it is opened again,
			   * at least three times what the first list took
			   * (a list after 410 Gone then fits one turn); 0:
			   * for ever */
	int relist;       /* list again after each turn: a resync */
	int once;         /* a first list's failure that will not get
			   * better (unreachable, refused, unreadable)
			   * ends the loop */
	int verbose;      /* say every failure, not the first of a run */
	/* stop: nonzero ends the loop, asked before each turn (NULL: never) */
	int (*stop)(void *arg);
	/* listed: after each list that went through (NULL: nothing) */
	void (*listed)(void *arg, int first);
	/* nap sleeps the backoff; it may return early (NULL: nanosleep) */
	void (*nap)(void *arg, double seconds);
	void *arg;
};

/* watch_loop lists, then watches in turns, for ever: each failure is
 * said on stderr and tried again after a backoff of 0.5 s doubling to
 * 30 s, and the recovery is said too. Returns 0 when stop said so or the
 * emit function stopped the watch, or -1 with e filled when a first list
 * failed with l->once. */
int watch_loop(struct watch *w, const struct watch_loop *l,
	struct kube_error *e);

#endif
