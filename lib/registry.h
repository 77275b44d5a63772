/* registry: does an image tag exist in an OCI registry? Asked without
 * credentials, as a user without a login would pull it.
 *
 * An image repository REPO is HOST/NAME when its first component has a
 * '.' or a ':' or is "localhost", else NAME on Docker Hub (docker.io,
 * spoken to as registry-1.docker.io; a one-component NAME gets
 * "library/"). The registry is https with its certificate verified,
 * except a loopback host (localhost, 127.*, [::1]: http).
 *
 * One probe is HEAD /v2/NAME/manifests/TAG accepting the OCI index and
 * manifest and Docker's manifest list and v2 manifest. A 401 carrying
 * `WWW-Authenticate: Bearer realm=R,service=S,scope=C` is answered by an
 * anonymous GET R?service=S&scope=C, whose {"token"} or
 * {"access_token"} is sent as a Bearer on the retry and kept for later
 * probes of the same handle. 200: present, with the
 * Docker-Content-Digest header; 404: absent; 5xx, 429, connect, DNS,
 * TLS handshake failures and timeouts: unreachable (worth retrying, as
 * http_classify says); a certificate that fails verification, and any
 * other answer (a 401 the token did not cure, 403, ...): refused. */
#ifndef HAZ_REGISTRY_H
#define HAZ_REGISTRY_H

enum {
	REG_PRESENT = 0,
	REG_ABSENT = 1,
	REG_UNREACHABLE = 2,
	REG_REFUSED = 3,
};

struct registry;

/* registry_open parses REPO (no tag) and returns a handle, or NULL with
 * a message in *why (malloc'd) when REPO is not a repository name. It
 * sets libcurl up itself (http_global_init); a handle is used by one
 * thread at a time. */
struct registry *registry_open(const char *repo, char **why);
void registry_close(struct registry *r);

/* registry_probe asks whether tag exists: one of REG_*. On REG_PRESENT
 * *digest is the manifest's digest, malloc'd, or NULL when the registry
 * sent none; otherwise *why (malloc'd) says what answered, naming the
 * registry (REG_ABSENT too: "HOST/NAME:TAG: not found"). */
int registry_probe(struct registry *r, const char *tag, char **digest,
	char **why);

/* registry_url_base: "http://HOST" or "https://HOST" for r's registry,
 * for messages. */
const char *registry_where(const struct registry *r);

#endif
