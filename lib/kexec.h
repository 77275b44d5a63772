/* kexec: a command run in a pod's container through the API server's
 * pods/exec subresource, as kubectl exec runs it: a WebSocket (lib/ws)
 * on the client's own verified TLS connection (kube_connect), speaking
 * the v5.channel.k8s.io subprotocol: every binary message starts with
 * its stream (0 stdin, 1 stdout, 2 stderr, 3 the command's end as a
 * Status object, 255 a stream closed). Nothing is listened on anywhere:
 * the API server authenticates and authorises the caller (the create
 * verb on pods/exec).
 *
 * Threads: one call at a time per struct kube. */
#ifndef HAZ_KEXEC_H
#define HAZ_KEXEC_H

#include <stddef.h>
#include <stdio.h>

#include "kube.h"

/* What to run, and where its output goes. */
struct kexec_req {
	const char *ns, *pod, *container; /* container NULL: the only one */
	char *const *argv;                /* the command, NULL-ended */
	const void *in;                   /* its standard input, closed after */
	size_t inlen;
	FILE *out, *err; /* its stdout and stderr, copied as they come */
};

/* kexec_run runs r's command and returns its exit status (0-255), or -1
 * with e filled: the API server unreachable (KUBE_ETEMP), the upgrade
 * refused (KUBE_EAPI, the server's words in e->msg: no such pod, pod
 * not running, container not found, forbidden), or the stream broken
 * (KUBE_EBADDATA). */
int kexec_run(struct kube *k, const struct kexec_req *r, struct kube_error *e);

#endif
