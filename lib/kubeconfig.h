/* kubeconfig (kc_): find the API server and credentials the way kubectl does.
 *
 * Sources, first that applies: the path given (--kubeconfig); the files
 * in $KUBECONFIG (colon-separated, missing ones skipped, merged: the first
 * file to name a context, cluster or user wins it, and the first to set
 * current-context wins that); ~/.kube/config; the in-cluster service
 * account ($KUBERNETES_SERVICE_HOST and _PORT, token, ca.crt and
 * namespace under /var/run/secrets/kubernetes.io/serviceaccount, a
 * directory $K8SHAZGPU_SERVICEACCOUNT_DIR overrides).
 *
 * Relative file names in a kubeconfig (certificate-authority,
 * client-certificate, client-key, tokenFile) are relative to the
 * directory of the file that holds them. Every file is read at load
 * time, so a bad one is reported before any request is made. Errors name
 * the file and the field:
 *   kubeconfig: /home/u/.kube/config: context "foo" not found
 *   kubeconfig: /k: users[0].user.client-certificate-data: invalid base64 at
 * offset 17 kubeconfig: /k: clusters[1].cluster.certificate-authority:
 * /k/ca.crt: No such file or directory
 *
 * Threads: no state of its own (the environment is only read): any
 * thread, on a struct of its own. */
#ifndef HAZ_KUBECONFIG_H
#define HAZ_KUBECONFIG_H

#include <stddef.h>
#include <time.h>

/* kc_blob holds PEM bytes read from a file or decoded from -data. */
struct kc_blob {
	unsigned char *data; /* NULL when not configured; NUL-terminated */
	size_t len;
	char *path; /* the file it was read from; NULL for -data */
};

struct kc_config {
	char *source;    /* the kubeconfig file holding the context, or
			    "in-cluster" */
	char *context;   /* NULL in-cluster */
	char *cluster;   /* NULL in-cluster */
	char *user;      /* NULL in-cluster */
	char *server;    /* e.g. https://127.0.0.1:6443, no trailing '/' */
	char *namespace; /* never NULL; "default" unless configured */
	int insecure;    /* insecure-skip-tls-verify: true was configured */
	struct kc_blob ca, cert, key;
	char *token;      /* bearer token or NULL; a secret: never print */
	char *token_file; /* where token came from, re-read when it changes */
	time_t token_mtime;
	int in_cluster;
};

/* kc_load fills c from kubeconfig (NULL: $KUBECONFIG, else the default
 * file, else in-cluster) using context (NULL: current-context). Returns 0,
 * or -1 after printing one `kubeconfig: ...` message; c is then empty. */
int kc_load(struct kc_config *c, const char *kubeconfig, const char *context);

/* kc_refresh_token re-reads c->token_file when its modification time
 * changed (service account tokens rotate). Keeps the old token if the
 * file cannot be read. */
void kc_refresh_token(struct kc_config *c);

/* kc_free releases everything kc_load allocated. */
void kc_free(struct kc_config *c);

#endif
