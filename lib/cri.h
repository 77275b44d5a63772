/* cri: the node cache's images, through the container runtime's CRI
 * ImageService (proto/cri.proto) and, for what CRI lacks, containerd's
 * own images and content services (proto/containerd.proto), over
 * lib/grpcc on the runtime's unix socket.
 *
 * Pulling through CRI rather than through a pod keeps the image in the
 * kubelet's sight (the runtime's k8s.io namespace) with no pod slot
 * taken, and lets the kubelet treat it as preloaded (KEP-2535).
 *
 * Failures fill a struct ck_result: the reason from the runtime's
 * grpc-message (containerd's wording, checked against containerd 2.x):
 *	unauthorized (401), forbidden (403), authorization failed,
 *	require authorization, access denied    CK_UNAUTHORIZED
 *	not found, manifest unknown, name unknown, grpc-status 5
 *	                                        CK_NOT_FOUND
 *	connection refused, no such host, dial tcp, i/o timeout,
 *	no route to host, network is unreachable
 *	                                        CK_UNREACHABLE
 *	deadline, grpc-status 4, or no answer in time   CK_TIMEOUT
 *	anything else                           CK_RUNTIME
 * and a socket nothing serves is CK_RUNTIME "no container runtime at
 * SOCK: why". Messages name the operation and the ref ("pull REF:
 * what the runtime said"); credentials never appear in them.
 *
 * Every call opens its own connection, so a thread may call cri_progress
 * while another waits in cri_pull on the same socket. */
#ifndef HAZ_CRI_H
#define HAZ_CRI_H

#include <stdint.h>

#include <jansson.h>

#include "ck.h"

/* What containerd's CRI plugin reads as a pin (kubelet's image GC then
 * leaves the image alone). */
#define CRI_PIN_LABEL "io.cri-containerd.pinned"
#define CRI_PIN_VALUE "pinned"

/* Registry credentials for one pull, from a dockerconfigjson (see
 * cri_auth_for). message says what is wrong with a malformed one. */
struct cri_auth {
	char *username, *password; /* malloc'd; NULL when not found */
	char server[256];          /* the registry host they are for */
	char message[256];
};

/* What the runtime holds for a ref. pinned: 1 when the runtime says so.
 * proto3 leaves a false bool off the wire, so 0 is also what a runtime
 * that knows nothing of pins answers: cri_pin tells the two apart. */
struct cri_image {
	int present;
	char id[160];     /* the config digest, "sha256:..." */
	char digest[160]; /* the repo digest of the ref's repository,
			     "sha256:...", else id */
	uint64_t size;    /* bytes, as the runtime counts them */
	int pinned;
};

/* cri_default_socket returns the first of containerd's and CRI-O's
 * usual sockets that exists (/run/containerd/containerd.sock,
 * /var/run/crio/crio.sock), else containerd's. */
const char *cri_default_socket(void);

/* cri_version asks the runtime its name and version (each at most 63
 * bytes kept): 0, or -1 with *err a malloc'd sentence. */
int cri_version(const char *sock, char *runtime, char *version, char **err);

/* cri_pull pulls ref (with auth when not NULL), giving up after
 * timeout_s seconds (0: never), then asks the runtime for the image:
 * res->resolved is its repo digest ("sha256:..." of the manifest the
 * ref names; the image id when the runtime lists none for the ref's
 * repository), res->bytes its size. 0, or -1 with res's reason and
 * message. */
int cri_pull(const char *sock, const char *ref, const struct cri_auth *auth,
	int timeout_s, struct ck_result *res);

/* cri_image fills out for ref (out->present 0 when the runtime does not
 * hold it; res->resolved and res->bytes as cri_pull sets them when it
 * does): 0, or -1 with res's reason and message. */
int cri_image(const char *sock, const char *ref, struct cri_image *out,
	struct ck_result *res);

/* cri_remove removes ref and every other name of its image from the
 * runtime; an image not there is no error. 0, or -1 with res set. */
int cri_remove(const char *sock, const char *ref, struct ck_result *res);

/* cri_pin pins (pin 1) or unpins (0) the image ref names. On containerd
 * it sets or removes the label CRI_PIN_LABEL on each of the image's
 * names in the k8s.io namespace, then reads the pin back through CRI:
 * res->pinned 1 or 0. A runtime that cannot be asked to pin (CRI-O: its
 * pinned_images setting), or whose CRI does not report the pin
 * (containerd before 1.7), is not a failure: res->pinned is -1 and
 * res->message says why, with reason CK_OK. An image not present fails
 * CK_NOT_FOUND. 0, or -1 with res set. */
int cri_pin(const char *sock, const char *ref, int pin, struct ck_result *res);

/* cri_progress sums the runtime's ingests in flight in the k8s.io
 * namespace (containerd's content store: each layer being fetched):
 * bytes done and expected (0 and 0 when nothing is in flight). 0, or -1
 * when the runtime cannot say (not containerd, or no answer in 5 s). */
int cri_progress(const char *sock, uint64_t *done, uint64_t *total);

/* cri_auth_for finds ref's registry in a kubernetes.io/dockerconfigjson
 * object, {"auths":{KEY:{"username","password","auth"}}}. KEY is a host
 * ("127.0.0.1:5000"), maybe with a scheme and a path, which are ignored
 * ("https://index.docker.io/v1/"), or a wildcard ("*.example.com", one
 * label per '*'); hosts compare without case; docker.io is also
 * index.docker.io and registry-1.docker.io. An exact host wins over a
 * wildcard. "auth", base64 of "user:pass", overrides username and
 * password. Returns 0 with out filled (free it with cri_auth_free), 1
 * when no entry matches, -1 when the object is not of that shape
 * (out->message says where; no secret is quoted). */
int cri_auth_for(const json_t *dockerconfigjson, const char *ref,
	struct cri_auth *out);

/* cri_auth_free frees a's strings (the struct itself is the caller's). */
void cri_auth_free(struct cri_auth *a);

/* cri_registry writes ref's registry host into buf (n bytes): its first
 * component when that has a '.' or ':' or is "localhost", else
 * "docker.io". */
void cri_registry(const char *ref, char *buf, size_t n);

/* cri_repository writes ref's repository, as runtimes list it in repo
 * digests, into buf (n bytes): no tag or digest, docker.io's registry
 * and library/ added where ref leaves them out. */
void cri_repository(const char *ref, char *buf, size_t n);

#endif
