/* rcache (rc_): the cluster's ResourceClaims as a list and watch keep
 * them (lib/watch.c), in a thread of its own, so that a prepare takes its
 * claim from memory instead of a GET to the API server.
 *
 * A claim is given only when it is safe to use without a GET: the cache
 * has listed once, holds the claim by namespace/name with the uid the
 * kubelet asked for (a claim deleted and made again under the same name
 * has another uid), allocated and reserved for a pod (the kubelet asks
 * only then). A claim once unprepared (rc_forget) is never given again:
 * it may have been deallocated and allocated anew under the same uid, and
 * a watch behind the server could still show the old allocation. The
 * caller reads the API server on a miss, and when the claim given fails
 * its checks.
 *
 * Threads: rc_start and rc_stop from one thread; rc_get and rc_forget
 * from any, at once (one mutex guards the table). */
#ifndef HAZ_RCACHE_H
#define HAZ_RCACHE_H

#include <jansson.h>

#include "kubeconfig.h"

struct rcache;

/* rc_start starts watching every namespace's ResourceClaims with a client
 * of its own made from the kubeconfig file and context (NULL: the
 * defaults, as kc_load takes them). Returns the cache, or NULL when the
 * kubeconfig cannot be loaded (said on stderr). A list or watch refused
 * (401, 403: the plugin's role may only get claims, as the shipped one)
 * is said on stderr and ends the watch: every rc_get misses. Any other
 * failure is said once and retried with backoff; meanwhile every rc_get
 * misses. */
struct rcache *rc_start(const char *kubeconfig, const char *context,
	int verbose);

/* rc_get returns claim ns/name (a new reference) when the cache may give
 * it for uid (see above), else NULL. */
json_t *rc_get(struct rcache *c, const char *ns, const char *name,
	const char *uid);

/* rc_forget marks uid as unprepared: never given again. */
void rc_forget(struct rcache *c, const char *uid);

/* rc_hits and rc_misses count rc_get's answers. */
long rc_hits(struct rcache *c);
long rc_misses(struct rcache *c);

/* rc_stop stops the thread (within RC_SLICE seconds: each watch request
 * ends at that deadline and the next goes on from where it was; a list
 * in progress is waited for) and frees c. */
void rc_stop(struct rcache *c);

#define RC_SLICE 2 /* seconds of one watch request */

#endif
