/* informer: keep an avail(3) table current from the API server.
 *
 * Three background threads list and then watch (watch(3)) nodes, pods
 * and node.k8s.io/v1 runtimeclasses, each with its own client, and feed
 * every event to the table. A collection counts as synced (avail_synced)
 * once its first list went through. Failures are retried with backoff
 * for ever, with a message on stderr.
 *
 * libcurl cannot be interrupted from outside a transfer, so each watch
 * runs in turns of a few seconds (a deadline), resuming from the last
 * resourceVersion seen: nothing is lost between turns, and informer_stop
 * returns within one turn (2 s, or three times what the first list
 * took when that is longer). */
#ifndef HAZ_INFORMER_H
#define HAZ_INFORMER_H

#include "avail.h"

struct informer;

/* informer_start loads the kubeconfig (NULL: the usual search, see
 * kubeconfig(3)) and context (NULL: current), and starts the threads.
 * Returns NULL after printing why when the kubeconfig cannot be used. */
struct informer *informer_start(const char *kubeconfig, const char *context,
	struct avail *a, int verbose);

/* informer_wait waits up to seconds for every collection to sync.
 * Returns 1 when all did. */
int informer_wait(struct informer *in, double seconds);

/* informer_stop stops the threads, waits for them and frees in. */
void informer_stop(struct informer *in);

#endif
