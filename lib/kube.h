/* kube: a small Kubernetes REST client on libcurl.
 *
 * TLS peer and host verification are always on, against the kubeconfig's
 * certificate authority (or the system store when it names none), unless
 * the kubeconfig itself says insecure-skip-tls-verify: true. Client
 * certificates and keys are handed to libcurl from memory; bearer tokens
 * go in an Authorization header and are never printed.
 *
 * Every call makes one attempt; retrying is the caller's business, and
 * whether a failure is worth it is lib/http's verdict (KUBE_ETEMP): a
 * server certificate that fails verification is KUBE_EFAIL. A call
 * that fails fills a struct kube_error whose msg is one line, without the
 * program name, ready for err_warn("%s", e.msg):
 *   GET /api/v1/pods: 403 Forbidden: pods is forbidden: User "x" cannot ...
 *   GET https://127.0.0.1:1/api: Failed to connect to 127.0.0.1 port 1 ...
 *   GET https://127.0.0.1:6443/api/v1/pods: 503 Service Unavailable: ...
 * (temporary failures name the server, refusals only the path).
 *   no resource "podz" on https://127.0.0.1:6443
 * kube_exit_status maps it to the exit status a tool should use.
 *
 * Paths are absolute API paths, query included ("/api/v1/pods?limit=5");
 * build them with kube_path and kube_query. */
#ifndef HAZ_KUBE_H
#define HAZ_KUBE_H

#include <stddef.h>

#include <jansson.h>

#include "kubeconfig.h"

enum kube_errkind {
	KUBE_OK = 0,
	KUBE_ETEMP,     /* unreachable, timed out, dropped, 429 or 5xx */
	KUBE_EAPI,      /* the server refused the request (4xx) */
	KUBE_EGONE,     /* 410: resourceVersion or continue token too old */
	KUBE_ENORES,    /* no such resource type on this server */
	KUBE_EBADDATA,  /* unparsable response: not JSON, truncated line */
	KUBE_EFAIL,     /* local trouble: TLS material refused, curl setup */
	KUBE_EDEADLINE, /* the deadline of kube_set_deadline passed */
	KUBE_ESTOPPED,  /* a stream callback asked to stop */
};

struct kube_error {
	enum kube_errkind kind;
	long status;     /* HTTP status, 0 when no answer */
	char reason[64]; /* Status.reason ("NotFound", "Expired"), or "" */
	char msg[1024];  /* one line, no program name */
};

/* kube_exit_status returns HAZ_TEMP for KUBE_ETEMP, HAZ_OK for
 * KUBE_EDEADLINE and KUBE_OK, else HAZ_FAIL. */
int kube_exit_status(const struct kube_error *e);

struct kube;

/* kube_new returns a client for cfg, which it borrows (cfg must outlive
 * the client). It sets libcurl up through http_global_init (once per
 * process, from whichever thread comes first; cleaned up at exit), so
 * clients may be made and freed in several threads at once. A client is
 * used by one thread at a time. */
struct kube *kube_new(struct kc_config *cfg);
void kube_free(struct kube *k);

/* kube_server returns the server URL ("https://host:port"). */
const char *kube_server(const struct kube *k);

/* kube_set_timeout bounds each non-streaming request (default 30 s). */
void kube_set_timeout(struct kube *k, long ms);

/* kube_set_deadline makes every later call end by seconds from now,
 * failing with KUBE_EDEADLINE; seconds <= 0 removes the deadline. */
void kube_set_deadline(struct kube *k, double seconds);

/* kube_seconds_left returns the time to the deadline (huge without one). */
double kube_seconds_left(const struct kube *k);

/* kube_keep makes k's requests (not its streams) go over one connection
 * it keeps and speaks HTTP/1.1 on itself (lib/h1), opened by libcurl
 * (CONNECT_ONLY: the same TLS verification and client certificate) and
 * opened anew when the server closes it: a request costs its bytes and
 * TLS, not a libcurl transfer. A request that found the kept connection
 * closed before any byte of its answer came (the server's idle timeout)
 * is sent once more on a new one. Errors read as without it. For a
 * client that makes many small requests (sched-queue's writers). */
void kube_keep(struct kube *k);

/* --- paths -------------------------------------------------------------- */

struct kube_resource {
	char *group;    /* "" for the core group */
	char *version;  /* "v1" */
	char *resource; /* plural: "deployments" */
	char *kind;     /* "Deployment" */
	int namespaced;
};

/* kube_resolve finds the resource a user names as kubectl would accept
 * it: "pods", "po", "pod", "Pod", "deployments.apps", "deployments.v1.apps",
 * "apps/v1/deployments", "v1/pods", "gpuworkloads.canhazgpu.dev". Uses the
 * aggregated discovery of /api and /apis when the server offers it, else
 * the per-group documents. Fills r (free with kube_resource_free). Fails
 * with KUBE_ENORES when nothing matches. */
int kube_resolve(struct kube *k, const char *name, struct kube_resource *r,
	struct kube_error *e);
void kube_resource_free(struct kube_resource *r);

/* kube_path returns the malloc'd collection path of r, in namespace ns
 * when r is namespaced and ns is not NULL, with "/name" appended when
 * name is not NULL: "/apis/apps/v1/namespaces/ns/deployments/name". */
char *kube_path(const struct kube_resource *r, const char *ns,
	const char *name);

/* kube_query appends "?key=value" or "&key=value" to the malloc'd *path,
 * percent-escaping value; it may move *path. */
void kube_query(char **path, const char *key, const char *value);

/* kube_escape returns a malloc'd copy of s with every byte but the URI
 * unreserved ones percent-escaped. */
char *kube_escape(const char *s);

/* --- calls -------------------------------------------------------------- */

/* Each call returns the decoded JSON answer (caller owns it), or NULL with
 * e filled. */
json_t *kube_request(struct kube *k, const char *method, const char *path,
	const char *content_type, const json_t *body, struct kube_error *e);
json_t *kube_get(struct kube *k, const char *path, struct kube_error *e);
json_t *kube_create(struct kube *k, const char *path, const json_t *obj,
	struct kube_error *e);
json_t *kube_replace(struct kube *k, const char *path, const json_t *obj,
	struct kube_error *e);

enum kube_patch {
	KUBE_PATCH_MERGE,     /* application/merge-patch+json */
	KUBE_PATCH_JSON,      /* application/json-patch+json */
	KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
};
json_t *kube_patch(struct kube *k, const char *path, enum kube_patch type,
	const json_t *patch, struct kube_error *e);

/* kube_apply is server-side apply of obj (sent as JSON, which is YAML) to
 * the object path, as field_manager, with force=true when force. */
json_t *kube_apply(struct kube *k, const char *path, const json_t *obj,
	const char *field_manager, int force, struct kube_error *e);

/* kube_apply_meta is kube_apply returning of the answer only its
 * apiVersion, kind and metadata's name, namespace, uid, resourceVersion
 * and generation: what a writer that keeps nothing else of it needs, read
 * at a fraction of the cost of the whole object (its managedFields, a
 * Job's template). The server is asked for the metadata alone (then the
 * answer's kind is PartialObjectMetadata, of meta.k8s.io/v1), or else the
 * object; the answer is still checked whole as JSON. */
json_t *kube_apply_meta(struct kube *k, const char *path, const json_t *obj,
	const char *field_manager, int force, struct kube_error *e);

/* kube_delete deletes the object at path; uid and resource_version, when
 * not NULL, become preconditions (a mismatch fails with 409). */
json_t *kube_delete(struct kube *k, const char *path, const char *uid,
	const char *resource_version, struct kube_error *e);

/* kube_list gets every page of the collection at path (which may already
 * carry selectors), limit items per page (0: no paging); when a continue
 * token expires midway (410) it lists again from the start, up to three
 * times. Each item gets the apiVersion and kind the list names. Returns 0
 * with *items (a JSON array, caller owns) and *rv (malloc'd list
 * resourceVersion), or -1. */
int kube_list(struct kube *k, const char *path, long limit, json_t **items,
	char **rv, struct kube_error *e);

/* kube_item_fn gets one listed item (borrowed; typed as kube_list types
 * it); nonzero stops the list, which then fails with KUBE_ESTOPPED. */
typedef int kube_item_fn(json_t *item, void *arg);

/* kube_list_each is kube_list handing the items to fn page by page, as
 * they arrive, so that no more than a page's text and one item's tree are
 * held (lib/jitems: a page is read item by item); restart (or NULL) is
 * called before the list starts over after an expired continue token,
 * whose items come again. */
int kube_list_each(struct kube *k, const char *path, long limit,
	kube_item_fn *fn, void (*restart)(void *arg), void *arg, char **rv,
	struct kube_error *e);

/* kube_stream GETs path and hands every complete line of a 2xx answer to
 * fn, without its "\n" (or "\r\n"), NUL-terminated, with its byte offset
 * in the body and its number from 1. A line longer than 64 MiB fails with
 * KUBE_EBADDATA. fn returns 0 to go on; nonzero stops the stream
 * (KUBE_ESTOPPED; fn may have filled e itself first). Returns 0 when the
 * server ended the stream at a line boundary, else -1 (KUBE_EBADDATA
 * "truncated line" when it ended midway). The stream has no timeout of
 * its own but the deadline. */
typedef int kube_line_fn(char *line, size_t len, long long offset, long lineno,
	void *arg, struct kube_error *e);
int kube_stream(struct kube *k, const char *path, kube_line_fn *fn, void *arg,
	struct kube_error *e);

/* kube_stream_bytes GETs path and hands the body of a 2xx answer to fn
 * as it comes, n > 0 bytes at a time, uncut: a pod's log, say, whose
 * last line may lack its newline. fn returns 0 to go on; nonzero stops
 * the stream (KUBE_ESTOPPED; fn may have filled e itself first). Returns
 * 0 when the server ended the stream, else -1. No timeout but the
 * deadline. */
typedef int kube_bytes_fn(const char *p, size_t n, void *arg,
	struct kube_error *e);
int kube_stream_bytes(struct kube *k, const char *path, kube_bytes_fn *fn,
	void *arg, struct kube_error *e);

/* A kube_lines cuts bytes into lines for a kube_line_fn exactly as
 * kube_stream cuts what the server sends, so that a stream captured in a
 * file reads the same. source names the stream in messages
 * ("GET https://...", a file name); it is copied. */
struct kube_lines;
struct kube_lines *kube_lines_new(const char *source, kube_line_fn *fn,
	void *arg);
void kube_lines_free(struct kube_lines *l);

/* kube_lines_feed hands fn every line the n bytes at p complete. Returns
 * 0 with *used = n, or -1 with *used the bytes taken when fn stopped
 * (KUBE_ESTOPPED, unless fn filled e) or a line passed 64 MiB
 * (KUBE_EBADDATA naming its number and offset). Feeding may go on after
 * -1 from p + *used: the rest of a too long line is then skipped. */
int kube_lines_feed(struct kube_lines *l, const char *p, size_t n, size_t *used,
	struct kube_error *e);

/* kube_lines_end returns 0 when the bytes fed ended at a line boundary,
 * else -1 with KUBE_EBADDATA "SOURCE: truncated line N at byte B". */
int kube_lines_end(struct kube_lines *l, struct kube_error *e);

/* kube_url returns the malloc'd absolute URL of path. */
char *kube_url(const struct kube *k, const char *path);

/* --- raw connections (lib/kexec) -------------------------------------- */

/* kube_connect opens the connection a request of path would use, TLS
 * verified and the client certificate presented as for any call, and
 * stops there (CURLOPT_CONNECT_ONLY): the caller speaks on the handle,
 * the client's own (valid until the next call on k), with
 * curl_easy_send and curl_easy_recv. *auth is the Authorization header
 * line to send, malloc'd, or NULL without a token; *host the Host
 * header's value and *prefix the server URL's path ("" or "/x"), both
 * malloc'd. NULL with e filled on failure. */
void *kube_connect(struct kube *k, const char *path, char **auth, char **host,
	char **prefix, struct kube_error *e);

#endif
