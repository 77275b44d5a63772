/* kube: Kubernetes REST calls over libcurl, one attempt each, but for
 * the answers that say when to come back: a 429, or a 5xx with a
 * Retry-After (a new resource's storage still starting, API priority and
 * fairness shedding load) is sent again after the time it names, as
 * kubectl does, up to RETRY_TRIES tries, RETRY_MAX_S seconds a wait, and
 * never past the client's deadline.
 *
 * One curl easy handle per client, reset before every request so that no
 * option leaks from one call to the next while its connection cache stays
 * warm. A client told to keep its connection (kube_keep) has libcurl open
 * it and then speaks HTTP/1.1 on it itself (lib/h1): its section ends the
 * file, after discovery's. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/ssl.h>

#include "clock.h"
#include "err.h"
#include "h1.h"
#include "http.h"
#include "jbuf.h"
#include "jitems.h"
#include "jload.h"
#include "kube.h"

#define LINE_MAX_BYTES (64L << 20)   /* a longer watch line is refused */
#define BODY_MAX_BYTES (1024L << 20) /* a larger answer is refused */
#define ERRBODY_MAX 65536            /* bytes of an error answer kept */
#define CONNECT_MS 10000L
#define RETRY_TRIES 10   /* tries of one request the server may ask for */
#define RETRY_MAX_S 10.0 /* a longer Retry-After is not waited for */
#define RETRY_NONE_S 1.0 /* the wait a 429 without Retry-After gets */

static const char json_accept[] = "Accept: application/json";
/* The object's metadata alone, where the server can (any API server since
 * 1.15, for any resource), else the object: kube_apply_meta keeps no
 * more. */
static const char meta_accept[] =
	"Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
	" application/json";
static const char
	disc_accept[] = "Accept: application/json;g=apidiscovery.k8s.io;v=v2;"
			"as=APIGroupDiscoveryList,"
			"application/json;g=apidiscovery.k8s.io;v=v2beta1;"
			"as=APIGroupDiscoveryList,application/json";

struct kube {
	struct kc_config *cfg;
	CURL *h;
	long timeout_ms;
	double deadline; /* monotonic seconds; 0: none */
	double after;    /* the last answer's Retry-After, seconds; -1: none */
	json_t *resources; /* flattened discovery, NULL until needed */
	char errbuf[CURL_ERROR_SIZE];
	/* the kept connection (kube_keep) */
	int kept, kopen;
	int kfd;          /* its socket */
	char *khost;      /* the Host header's value */
	char *kprefix;    /* the server URL's path */
	struct h1_in kin; /* bytes read from it */
	double kdeadline; /* of the request under way; 0: none */
	int ktimedout;    /* the last wait on it timed out */
	CURLcode kerr;    /* the last send or receive's failure */
};

static void kept_close(struct kube *k);

/* ---- errors ---------------------------------------------------------- */

static void seterr(struct kube_error *e, enum kube_errkind kind, long status,
	const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
seterr(struct kube_error *e, enum kube_errkind kind, long status,
	const char *fmt, ...)
{
	va_list ap;
	char *p;

	e->kind = kind;
	e->status = status;
	e->reason[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	for (p = e->msg; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
}

int
kube_exit_status(const struct kube_error *e)
{
	switch (e->kind) {
	case KUBE_OK:
	case KUBE_EDEADLINE: return HAZ_OK;
	case KUBE_ETEMP: return HAZ_TEMP;
	default: return HAZ_FAIL;
	}
}

static const char *
status_text(long code)
{
	static const struct {
		long code;
		const char *text;
	} t[] = {
		{400, "Bad Request"},
		{401, "Unauthorized"},
		{403, "Forbidden"},
		{404, "Not Found"},
		{405, "Method Not Allowed"},
		{406, "Not Acceptable"},
		{409, "Conflict"},
		{410, "Gone"},
		{413, "Request Entity Too Large"},
		{415, "Unsupported Media Type"},
		{422, "Unprocessable Entity"},
		{429, "Too Many Requests"},
		{500, "Internal Server Error"},
		{502, "Bad Gateway"},
		{503, "Service Unavailable"},
		{504, "Gateway Timeout"},
	};
	size_t i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++)
		if (t[i].code == code)
			return t[i].text;
	return code >= 500 ? "Server Error" : "Error";
}

/* pathonly returns the length of path before its query. */
static int
pathonly(const char *path)
{
	return (int)strcspn(path, "?");
}

/* status_error fills e from a non-2xx answer, using its Status object
 * when the body is one. A temporary failure names the server too. */
static void
status_error(struct kube_error *e, const struct kube *k, long code,
	const char *method, const char *path, const char *body, size_t len)
{
	enum kube_errkind kind = KUBE_EAPI;
	json_t *st = json_loadb(body ? body : "", len, 0, NULL);
	const char *msg = json_string_value(json_object_get(st, "message"));
	const char *reason = json_string_value(json_object_get(st, "reason"));
	const char *server = "";

	if (http_class(http_classify(CURLE_OK, code)) == HTTP_RETRY) {
		kind = KUBE_ETEMP;
		server = k->cfg->server;
	} else if (code == 410) {
		kind = KUBE_EGONE;
	}
	if (!msg && body && len)
		seterr(e, kind, code, "%s %s%.*s: %ld %s: %.*s", method, server,
			pathonly(path), path, code, status_text(code),
			(int)(len > 200 ? 200 : len), body);
	else if (msg && *msg)
		seterr(e, kind, code, "%s %s%.*s: %ld %s: %s", method, server,
			pathonly(path), path, code, status_text(code), msg);
	else
		seterr(e, kind, code, "%s %s%.*s: %ld %s", method, server,
			pathonly(path), path, code, status_text(code));
	if (reason)
		snprintf(e->reason, sizeof e->reason, "%s", reason);
	json_decref(st);
}

/* transport_error fills e after curl gave up on a request: temporary
 * or not as http_classify says (a refused certificate is not), a time
 * out at the deadline KUBE_EDEADLINE. */
static void
transport_error(struct kube *k, CURLcode rc, const char *method,
	const char *path, struct kube_error *e)
{
	enum http_verdict v = http_classify(rc, 0);
	enum kube_errkind kind = http_class(v) == HTTP_RETRY ? KUBE_ETEMP
							     : KUBE_EFAIL;
	const char *why = k->errbuf[0] ? k->errbuf : curl_easy_strerror(rc);

	if (v == HTTP_V_TIMEOUT && k->deadline &&
		clock_mono() >= k->deadline - 0.001)
		kind = KUBE_EDEADLINE;
	seterr(e, kind, 0, "%s %s%.*s: %s", method, k->cfg->server,
		pathonly(path), path, why);
}

/* ---- client ---------------------------------------------------------- */

struct kube *
kube_new(struct kc_config *cfg)
{
	struct kube *k = ecalloc(1, sizeof *k);

	http_global_init();
	k->cfg = cfg;
	k->timeout_ms = 30000;
	k->h = curl_easy_init();
	if (!k->h)
		err_die(HAZ_FAIL, "curl_easy_init failed");
	return k;
}

void
kube_free(struct kube *k)
{
	if (!k)
		return;
	curl_easy_cleanup(k->h);
	json_decref(k->resources);
	h1_in_free(&k->kin);
	free(k->khost);
	free(k->kprefix);
	free(k);
}

const char *
kube_server(const struct kube *k)
{
	return k->cfg->server;
}

void
kube_set_timeout(struct kube *k, long ms)
{
	k->timeout_ms = ms;
}

void
kube_set_deadline(struct kube *k, double seconds)
{
	k->deadline = seconds > 0 ? clock_mono() + seconds : 0;
}

double
kube_seconds_left(const struct kube *k)
{
	return k->deadline ? k->deadline - clock_mono() : 1e18;
}

char *
kube_url(const struct kube *k, const char *path)
{
	return easprintf("%s%s", k->cfg->server, path);
}

static void
setblob(CURL *h, CURLoption opt, const struct kc_blob *b)
{
	struct curl_blob blob;

	if (!b->data)
		return;
	blob.data = b->data;
	blob.len = b->len;
	blob.flags = CURL_BLOB_NOCOPY;
	curl_easy_setopt(h, opt, &blob);
}

/* set_tls makes curl verify the server against the configured authority
 * only (or the system store without one) and present the client
 * certificate. */
static void
set_tls(struct kube *k)
{
	struct kc_config *c = k->cfg;
	long verify = c->insecure ? 0L : 1L;

	curl_easy_setopt(k->h, CURLOPT_SSL_VERIFYPEER, verify);
	curl_easy_setopt(k->h, CURLOPT_SSL_VERIFYHOST, verify ? 2L : 0L);
	if (c->ca.data) {
		curl_easy_setopt(k->h, CURLOPT_CAINFO, NULL);
		curl_easy_setopt(k->h, CURLOPT_CAPATH, NULL);
		setblob(k->h, CURLOPT_CAINFO_BLOB, &c->ca);
	}
	if (c->cert.data) {
		curl_easy_setopt(k->h, CURLOPT_SSLCERTTYPE, "PEM");
		setblob(k->h, CURLOPT_SSLCERT_BLOB, &c->cert);
	}
	if (c->key.data) {
		curl_easy_setopt(k->h, CURLOPT_SSLKEYTYPE, "PEM");
		setblob(k->h, CURLOPT_SSLKEY_BLOB, &c->key);
	}
}

/* prepare resets the handle and sets what every request needs. timeout_ms
 * 0 means no limit but the deadline. Returns the header list to free
 * after the transfer, or NULL with e filled when the deadline passed. */
static struct curl_slist *
prepare(struct kube *k, const char *method, const char *path,
	const char *accept, long timeout_ms, struct kube_error *e)
{
	struct curl_slist *hdrs = NULL;
	double left = kube_seconds_left(k);
	struct http_opts o = {.agent = "k8shazgpu/" HAZ_VERSION,
		.errbuf = k->errbuf,
		.connect_ms = CONNECT_MS,
		.keepidle_s = 30,
		.keepintvl_s = 10};
	char *url, *auth;

	if (k->kopen)
		kept_close(k);
	if (left <= 0) {
		seterr(e, KUBE_EDEADLINE, 0, "%s %s%.*s: deadline reached",
			method, k->cfg->server, pathonly(path), path);
		return NULL;
	}
	if (k->deadline && (timeout_ms == 0 || left * 1000 < timeout_ms))
		timeout_ms = (long)(left * 1000) + 1;
	o.timeout_ms = timeout_ms;
	url = kube_url(k, path);
	http_setup(k->h, url, &o);
	free(url);
	set_tls(k);
	/* a request body is an object of a few KiB: curl's 64 KiB upload
	 * buffer, kept per handle, would be most of a writer's memory */
	curl_easy_setopt(k->h, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
	hdrs = curl_slist_append(hdrs, accept);
	kc_refresh_token(k->cfg);
	if (k->cfg->token) {
		auth = easprintf("Authorization: Bearer %s", k->cfg->token);
		hdrs = curl_slist_append(hdrs, auth);
		memset(auth, 0, strlen(auth));
		free(auth);
	}
	if (!hdrs)
		err_die(HAZ_FAIL, "curl_slist_append failed");
	curl_easy_setopt(k->h, CURLOPT_HTTPHEADER, hdrs);
	if (strcmp(method, "GET") == 0)
		curl_easy_setopt(k->h, CURLOPT_HTTPGET, 1L);
	else if (strcmp(method, "POST") != 0)
		curl_easy_setopt(k->h, CURLOPT_CUSTOMREQUEST, method);
	return hdrs;
}

/* ---- plain requests -------------------------------------------------- */

struct buf {
	char *p;
	size_t len, cap, max;
	int over; /* more than max bytes were offered */
};

static void
buf_add(struct buf *b, const char *p, size_t n)
{
	if (b->len + n > b->max) {
		b->over = 1;
		n = b->max - b->len;
	}
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = erealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static size_t
collect(char *p, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;

	buf_add(b, p, size * n);
	return b->over ? 0 : size * n;
}

/* come_back returns how many seconds to wait before sending again a
 * request the server answered with code, or -1 when it is not to be sent
 * again: not a 429 or a 5xx with a Retry-After, the tries used up, a wait
 * longer than RETRY_MAX_S or past the deadline. */
static double
come_back(struct kube *k, long code, int tries)
{
	double wait;

	if ((code != 429 && code < 500) || (k->after < 0 && code != 429))
		return -1;
	wait = k->after < 0 ? RETRY_NONE_S : k->after;
	if (tries >= RETRY_TRIES || wait > RETRY_MAX_S ||
		(k->deadline && wait >= kube_seconds_left(k)))
		return -1;
	/* a Retry-After of 0 is a try at once; none spins */
	return wait > 0 ? wait : 0.05;
}

/* retry_after is the request's CURLOPT_HEADERFUNCTION: it keeps the
 * answer's Retry-After in k->after and passes over every other field (a
 * status line, a redirect's or a 100 Continue's answer, starts again). */
static size_t
retry_after(char *p, size_t size, size_t n, void *arg)
{
	static const char name[] = "Retry-After:";
	struct kube *k = arg;
	size_t len = size * n, nl = sizeof name - 1;
	char v[64];

	if (len >= 5 && !strncmp(p, "HTTP/", 5)) {
		k->after = -1;
	} else if (len > nl && !strncasecmp(p, name, nl)) {
		len -= nl;
		if (len >= sizeof v)
			len = sizeof v - 1;
		memcpy(v, p + nl, len);
		v[len] = '\0';
		v[strcspn(v, "\r\n")] = '\0';
		k->after = http_retry_after(v, (double)time(NULL));
	}
	return size * n;
}

static char *kept_once(struct kube *k, const char *method, const char *path,
	const char *accept, const char *ctype, const json_t *body, size_t *len,
	struct kube_error *e);

/* request_once sends one request with an optional JSON body and returns
 * the text of a 2xx answer (malloc'd, NUL-terminated, its length in
 * *len), or NULL with e filled. */
static char *
request_once(struct kube *k, const char *method, const char *path,
	const char *accept, const char *ctype, const json_t *body, size_t *len,
	struct kube_error *e)
{
	struct buf b = {.max = BODY_MAX_BYTES};
	struct curl_slist *hdrs;
	char *payload = NULL, *ct = NULL;
	CURLcode rc;
	long code = 0;

	memset(e, 0, sizeof *e);
	if (k->kept)
		return kept_once(k, method, path, accept, ctype, body, len, e);
	if (!(hdrs = prepare(k, method, path, accept, k->timeout_ms, e)))
		return NULL;
	if (body) {
		payload = jb_dumps(body);
		ct = easprintf("Content-Type: %s", ctype);
		hdrs = curl_slist_append(hdrs, ct);
		curl_easy_setopt(k->h, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(k->h, CURLOPT_POSTFIELDS, payload);
		curl_easy_setopt(k->h, CURLOPT_POSTFIELDSIZE_LARGE,
			(curl_off_t)strlen(payload));
	}
	curl_easy_setopt(k->h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(k->h, CURLOPT_WRITEDATA, &b);
	k->after = -1;
	curl_easy_setopt(k->h, CURLOPT_HEADERFUNCTION, retry_after);
	curl_easy_setopt(k->h, CURLOPT_HEADERDATA, k);
	rc = curl_easy_perform(k->h);
	curl_easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, &code);
	if (b.over)
		seterr(e, KUBE_EBADDATA, code,
			"%s %.*s: answer larger than %ld bytes", method,
			pathonly(path), path, BODY_MAX_BYTES);
	else if (rc != CURLE_OK)
		transport_error(k, rc, method, path, e);
	else if (code < 200 || code > 299)
		status_error(e, k, code, method, path, b.p, b.len);
	curl_slist_free_all(hdrs);
	free(payload);
	free(ct);
	if (e->kind != KUBE_OK) {
		free(b.p);
		return NULL;
	}
	e->status = code;
	*len = b.len;
	return b.p ? b.p : estrdup("");
}

/* request_text is request_once, the answers that ask to come back waited
 * out (come_back); the error of the last try says how many there were. */
static char *
request_text(struct kube *k, const char *method, const char *path,
	const char *accept, const char *ctype, const json_t *body, size_t *len,
	struct kube_error *e)
{
	struct timespec ts;
	char *text;
	double wait;
	size_t n;
	int tries = 1;

	while (!(text = request_once(k, method, path, accept, ctype, body, len,
			 e)) &&
		e->kind == KUBE_ETEMP &&
		(wait = come_back(k, e->status, tries)) >= 0) {
		ts.tv_sec = (time_t)wait;
		ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		tries++;
	}
	if (!text && tries > 1 && (n = strlen(e->msg)) < sizeof e->msg)
		snprintf(e->msg + n, sizeof e->msg - n, " (%d tries)", tries);
	return text;
}

/* bad_json fills e: the answer to method path is not JSON. */
static void
bad_json(struct kube_error *e, const char *method, const char *path,
	const char *what, const json_error_t *je)
{
	long code = e->status;

	seterr(e, KUBE_EBADDATA, code, "%s %.*s: invalid JSON answer: %s%s",
		method, pathonly(path), path, what, je->text);
}

/* request_skip sends one request with an optional JSON body and decodes
 * the JSON answer, leaving out what skip names (NULL: nothing). */
static json_t *
request_skip(struct kube *k, const char *method, const char *path,
	const char *accept, const char *ctype, const json_t *body,
	jl_skip_fn *skip, struct kube_error *e)
{
	json_error_t jerr;
	json_t *out;
	size_t len;
	char *text = request_text(k, method, path, accept, ctype, body, &len,
		e);

	if (!text)
		return NULL;
	out = skip ? jl_loadb_skip(text, len, 0, &jerr, skip, NULL)
		   : jl_loadb(text, len, 0, &jerr);
	if (!out)
		bad_json(e, method, path, "", &jerr);
	else
		e->status = 0;
	free(text);
	return out;
}

static json_t *
request(struct kube *k, const char *method, const char *path,
	const char *accept, const char *ctype, const json_t *body,
	struct kube_error *e)
{
	return request_skip(k, method, path, accept, ctype, body, NULL, e);
}

json_t *
kube_request(struct kube *k, const char *method, const char *path,
	const char *content_type, const json_t *body, struct kube_error *e)
{
	return request(k, method, path, json_accept,
		content_type ? content_type : "application/json", body, e);
}

json_t *
kube_get(struct kube *k, const char *path, struct kube_error *e)
{
	return kube_request(k, "GET", path, NULL, NULL, e);
}

json_t *
kube_create(struct kube *k, const char *path, const json_t *obj,
	struct kube_error *e)
{
	return kube_request(k, "POST", path, NULL, obj, e);
}

json_t *
kube_replace(struct kube *k, const char *path, const json_t *obj,
	struct kube_error *e)
{
	return kube_request(k, "PUT", path, NULL, obj, e);
}

json_t *
kube_patch(struct kube *k, const char *path, enum kube_patch type,
	const json_t *patch, struct kube_error *e)
{
	static const char *const ctype[] = {
		[KUBE_PATCH_MERGE] = "application/merge-patch+json",
		[KUBE_PATCH_JSON] = "application/json-patch+json",
		[KUBE_PATCH_STRATEGIC] =
			"application/strategic-merge-patch+json",
	};

	return kube_request(k, "PATCH", path, ctype[type], patch, e);
}

/* meta_only keeps of an answer its apiVersion, kind and metadata's names
 * and versions (kube_apply_meta). */
static const char *const *
meta_only(const char *const *path, int depth, int *keep, void *arg)
{
	static const char *const top[] = {"apiVersion", "kind", "metadata",
		NULL};
	static const char *const md[] = {"name", "namespace", "uid",
		"resourceVersion", "generation", NULL};

	(void)arg;
	*keep = depth <= 1;
	if (depth == 0)
		return top;
	if (depth == 1 && path[1] && !strcmp(path[1], "metadata"))
		return md;
	return NULL;
}

static json_t *
apply(struct kube *k, const char *path, const json_t *obj,
	const char *field_manager, int force, jl_skip_fn *skip,
	struct kube_error *e)
{
	char *p = estrdup(path);
	json_t *out;

	kube_query(&p, "fieldManager", field_manager);
	if (force)
		kube_query(&p, "force", "true");
	out = request_skip(k, "PATCH", p, skip ? meta_accept : json_accept,
		"application/apply-patch+yaml", obj, skip, e);
	free(p);
	return out;
}

json_t *
kube_apply(struct kube *k, const char *path, const json_t *obj,
	const char *field_manager, int force, struct kube_error *e)
{
	return apply(k, path, obj, field_manager, force, NULL, e);
}

json_t *
kube_apply_meta(struct kube *k, const char *path, const json_t *obj,
	const char *field_manager, int force, struct kube_error *e)
{
	return apply(k, path, obj, field_manager, force, meta_only, e);
}

json_t *
kube_delete(struct kube *k, const char *path, const char *uid,
	const char *resource_version, struct kube_error *e)
{
	json_t *opts = json_pack("{s:s, s:s}", "apiVersion", "v1", "kind",
		"DeleteOptions");
	json_t *pre = json_object(), *out;

	if (uid)
		json_object_set_new(pre, "uid", json_string(uid));
	if (resource_version)
		json_object_set_new(pre, "resourceVersion",
			json_string(resource_version));
	if (json_object_size(pre))
		json_object_set(opts, "preconditions", pre);
	json_decref(pre);
	out = kube_request(k, "DELETE", path, NULL, opts, e);
	json_decref(opts);
	return out;
}

/* ---- lists ----------------------------------------------------------- */

/* typed returns item with apiVersion and kind first, as a watch event
 * carries them; list items lack them. */
static json_t *
typed(json_t *item, const char *api_version, const char *kind)
{
	json_t *out;

	if (!json_is_object(item) || json_object_get(item, "kind") ||
		!api_version || !kind)
		return json_incref(item);
	out = json_pack("{s:s, s:s}", "apiVersion", api_version, "kind", kind);
	json_object_update(out, item);
	return out;
}

/* struct page: one page of a list, read item by item where its text
 * allows (jitems.h), else whole. */
struct page {
	char *text;
	size_t len, a, b; /* [a, b): the items array; b == 0: none split */
	json_t *top;      /* the page with its items taken out, or whole */
	char *kind;       /* of each item: the list's kind less "List" */
	const char *api;
};

static void
page_free(struct page *pg)
{
	free(pg->text);
	json_decref(pg->top);
	free(pg->kind);
	memset(pg, 0, sizeof *pg);
}

/* page_read reads pg->text: its top level with the items array emptied
 * when ji_split finds it, else whole. Returns 0, or -1 with e filled. */
static int
page_read(struct page *pg, const char *path, struct kube_error *e)
{
	json_error_t je;
	const char *lkind;
	char *top;
	size_t n;

	if (ji_split(pg->text, pg->len, &pg->a, &pg->b) == 0) {
		n = pg->len - (pg->b - pg->a) + 2;
		top = emalloc(n + 1);
		memcpy(top, pg->text, pg->a);
		memcpy(top + pg->a, "[]", 2);
		memcpy(top + pg->a + 2, pg->text + pg->b, pg->len - pg->b + 1);
		pg->top = jl_loadb(top, n, 0, &je);
		free(top);
	} else {
		pg->b = 0;
		pg->top = jl_loadb(pg->text, pg->len, 0, &je);
	}
	if (!pg->top) {
		bad_json(e, "GET", path, "", &je);
		return -1;
	}
	lkind = json_string_value(json_object_get(pg->top, "kind"));
	pg->api = json_string_value(json_object_get(pg->top, "apiVersion"));
	if (lkind && (n = strlen(lkind)) > 4 &&
		strcmp(lkind + n - 4, "List") == 0)
		pg->kind = easprintf("%.*s", (int)(n - 4), lkind);
	return 0;
}

/* page_item hands item (taken) to fn, typed; returns what fn said. */
static int
page_item(const struct page *pg, json_t *item, kube_item_fn *fn, void *arg)
{
	json_t *t = typed(item, pg->api, pg->kind);
	int stop;

	json_decref(item);
	stop = fn(t, arg);
	json_decref(t);
	return stop;
}

/* page_items hands the items of pg to fn, one read at a time from the
 * text when it was split; returns 0, or -1 with e filled (*stop set when
 * fn said stop). */
static int
page_items(const struct page *pg, const char *path, kube_item_fn *fn, void *arg,
	int *stop, struct kube_error *e)
{
	json_error_t je;
	json_t *item;
	size_t i, pos = 0, s, end;
	char what[64];
	int r;

	if (!pg->b) {
		json_array_foreach(json_object_get(pg->top, "items"), i, item)
			if ((*stop = page_item(pg, json_incref(item), fn, arg)))
				return 0;
		return 0;
	}
	for (i = 0; (r = ji_next(pg->text, pg->a, pg->b, &pos, &s, &end));
		i++) {
		if (r < 0) {
			snprintf(je.text, sizeof je.text,
				"items: a value or ',' expected at byte %zu",
				pos + 1);
			bad_json(e, "GET", path, "", &je);
			return -1;
		}
		if (!(item = jl_loadb(pg->text + s, end - s, 0, &je))) {
			snprintf(what, sizeof what,
				"items[%zu] (byte %zu): ", i, s + 1);
			bad_json(e, "GET", path, what, &je);
			return -1;
		}
		if ((*stop = page_item(pg, item, fn, arg)))
			return 0;
	}
	return 0;
}

/* page_next takes the resourceVersion of pg into *rv and returns its
 * continue token (borrowed from pg) or NULL. */
static const char *
page_next(const struct page *pg, char **rv)
{
	json_t *meta = json_object_get(pg->top, "metadata");
	const char *cont, *v;

	if ((v = json_string_value(json_object_get(meta, "resourceVersion")))) {
		free(*rv);
		*rv = estrdup(v);
	}
	cont = json_string_value(json_object_get(meta, "continue"));
	return cont && *cont ? cont : NULL;
}

/* list_once gets every page; a continue token that expired midway
 * (410) is reported as KUBE_EGONE with *expired set. Only one page is
 * held at a time, as text, with one item read from it. */
static int
list_once(struct kube *k, const char *path, long limit, kube_item_fn *fn,
	void *arg, char **rv, int *expired, struct kube_error *e)
{
	struct page pg = {0};
	const char *cont = NULL;
	char *p, num[32];
	int stop = 0, ret = 0;

	do {
		p = estrdup(path);
		if (limit > 0) {
			snprintf(num, sizeof num, "%ld", limit);
			kube_query(&p, "limit", num);
		}
		if (cont)
			kube_query(&p, "continue", cont);
		*expired = cont != NULL;
		page_free(&pg);
		pg.text = request_text(k, "GET", p, json_accept,
			"application/json", NULL, &pg.len, e);
		ret = !pg.text || page_read(&pg, p, e) < 0 ||
				page_items(&pg, p, fn, arg, &stop, e) < 0
			? -1
			: 0;
		free(p);
		if (ret < 0)
			break;
		cont = page_next(&pg, rv);
	} while (cont && !stop);
	page_free(&pg);
	if (ret < 0)
		return -1;
	e->status = 0;
	if (stop) {
		seterr(e, KUBE_ESTOPPED, 0, "GET %s: stopped", path);
		return -1;
	}
	return 0;
}

int
kube_list_each(struct kube *k, const char *path, long limit, kube_item_fn *fn,
	void (*restart)(void *arg), void *arg, char **rv, struct kube_error *e)
{
	int expired, tries = 0, ret;

	*rv = NULL;
	do { /* as client-go's pager: an expired continue token lists anew */
		if (tries && restart)
			restart(arg);
		free(*rv);
		*rv = NULL;
		ret = list_once(k, path, limit, fn, arg, rv, &expired, e);
	} while (ret < 0 && e->kind == KUBE_EGONE && expired && ++tries < 3);
	if (ret < 0) {
		free(*rv);
		*rv = NULL;
		return -1;
	}
	if (!*rv)
		*rv = estrdup("");
	return 0;
}

static int
append(json_t *item, void *arg)
{
	json_array_append(arg, item);
	return 0;
}

static void
clear(void *arg)
{
	json_array_clear(arg);
}

int
kube_list(struct kube *k, const char *path, long limit, json_t **items,
	char **rv, struct kube_error *e)
{
	json_t *all = json_array();

	*items = NULL;
	if (kube_list_each(k, path, limit, append, clear, all, rv, e) < 0) {
		json_decref(all);
		return -1;
	}
	*items = all;
	return 0;
}

/* ---- streams --------------------------------------------------------- */

struct kube_lines {
	kube_line_fn *fn;
	void *arg;
	char *source;      /* "GET https://...", a file name */
	struct buf line;   /* the line being gathered */
	long long offset;  /* stream offset of the line being gathered */
	long long skipped; /* bytes of a too long line met so far */
	long lineno;       /* lines handed on or skipped */
	int skipping;      /* dropping the rest of a too long line */
};

struct kube_lines *
kube_lines_new(const char *source, kube_line_fn *fn, void *arg)
{
	struct kube_lines *l = ecalloc(1, sizeof *l);

	l->fn = fn;
	l->arg = arg;
	l->source = estrdup(source);
	l->line.max = LINE_MAX_BYTES;
	return l;
}

void
kube_lines_free(struct kube_lines *l)
{
	if (!l)
		return;
	free(l->source);
	free(l->line.p);
	free(l);
}

/* next_line steps past a line of len bytes and its newline. */
static void
next_line(struct kube_lines *l, long long len)
{
	l->offset += len + 1;
	l->lineno++;
	l->line.len = 0;
	if (l->line.p)
		l->line.p[0] = '\0';
}

/* deliver passes the gathered line to fn, without a trailing "\r", and
 * returns fn's answer. */
static int
deliver(struct kube_lines *l, struct kube_error *e)
{
	size_t len = l->line.len, n = len;
	int stop;

	if (!l->line.p)
		buf_add(&l->line, "", 0);
	if (n && l->line.p[n - 1] == '\r')
		l->line.p[--n] = '\0';
	stop = l->fn(l->line.p, n, l->offset, l->lineno + 1, l->arg, e);
	next_line(l, (long long)len);
	return stop;
}

/* too_long reports the line being gathered, of which seen bytes came, and
 * drops it; the rest of it is skipped as it comes. */
static void
too_long(struct kube_lines *l, size_t seen, struct kube_error *e)
{
	seterr(e, KUBE_EBADDATA, 0,
		"%s: line %ld at byte %lld longer than %ld bytes", l->source,
		l->lineno + 1, l->offset, LINE_MAX_BYTES);
	l->skipping = 1;
	l->skipped = (long long)seen;
	free(l->line.p);
	l->line = (struct buf){.max = LINE_MAX_BYTES};
}

int
kube_lines_feed(struct kube_lines *l, const char *p, size_t n, size_t *used,
	struct kube_error *e)
{
	size_t left = n, chunk, before;
	const char *nl;

	for (; left; p += chunk + 1, left -= chunk + 1) {
		nl = memchr(p, '\n', left);
		chunk = nl ? (size_t)(nl - p) : left;
		if (l->skipping) {
			l->skipped += (long long)chunk;
			if (nl) {
				l->skipping = 0;
				next_line(l, l->skipped);
			}
		} else {
			before = l->line.len;
			buf_add(&l->line, p, chunk);
			if (l->line.over) {
				too_long(l, before + chunk, e);
				*used = n - left + chunk;
				return -1;
			}
			if (nl && deliver(l, e) != 0) {
				if (e->kind == KUBE_OK)
					seterr(e, KUBE_ESTOPPED, 0, "stopped");
				*used = n - left + chunk + 1;
				return -1;
			}
		}
		if (!nl)
			break;
	}
	*used = n;
	return 0;
}

int
kube_lines_end(struct kube_lines *l, struct kube_error *e)
{
	if (l->skipping || !l->line.len)
		return 0;
	seterr(e, KUBE_EBADDATA, 0, "%s: truncated line %ld at byte %lld",
		l->source, l->lineno + 1, l->offset);
	return -1;
}

struct stream {
	struct kube *k;
	struct kube_lines *lines; /* or, with kube_stream_bytes: */
	kube_bytes_fn *bytes;
	void *arg;
	struct kube_error *e;
	const char *path;
	struct buf errbody; /* the body of a non-2xx answer */
	long code;
	int stopped; /* stopped by fn, or by a too long line */
};

static size_t
stream_write(char *p, size_t size, size_t n, void *arg)
{
	struct stream *s = arg;
	size_t total = size * n, used;

	if (!s->code)
		curl_easy_getinfo(s->k->h, CURLINFO_RESPONSE_CODE, &s->code);
	if (s->code < 200 || s->code > 299) {
		buf_add(&s->errbody, p, total);
		return total;
	}
	if (s->bytes) {
		if (total && s->bytes(p, total, s->arg, s->e) != 0) {
			if (s->e->kind == KUBE_OK)
				seterr(s->e, KUBE_ESTOPPED, 0, "stopped");
			s->stopped = 1;
			return 0;
		}
		return total;
	}
	if (kube_lines_feed(s->lines, p, total, &used, s->e) < 0) {
		s->stopped = 1;
		return 0;
	}
	return total;
}

/* stream_end fills e for how the stream ended; returns 0 for a clean end. */
static int
stream_end(struct stream *s, CURLcode rc)
{
	if (s->stopped)
		return -1;
	if (rc != CURLE_OK) {
		transport_error(s->k, rc, "GET", s->path, s->e);
		return -1;
	}
	if (!s->code)
		curl_easy_getinfo(s->k->h, CURLINFO_RESPONSE_CODE, &s->code);
	if (s->code < 200 || s->code > 299) {
		status_error(s->e, s->k, s->code, "GET", s->path, s->errbody.p,
			s->errbody.len);
		return -1;
	}
	return s->lines ? kube_lines_end(s->lines, s->e) : 0;
}

int
kube_stream(struct kube *k, const char *path, kube_line_fn *fn, void *arg,
	struct kube_error *e)
{
	struct stream s = {.k = k, .e = e, .path = path};
	struct curl_slist *hdrs;
	char *source;
	CURLcode rc;
	int ret;

	memset(e, 0, sizeof *e);
	s.errbody.max = ERRBODY_MAX;
	if (!(hdrs = prepare(k, "GET", path, json_accept, 0, e)))
		return -1;
	source = easprintf("GET %s%s", k->cfg->server, path);
	s.lines = kube_lines_new(source, fn, arg);
	free(source);
	curl_easy_setopt(k->h, CURLOPT_WRITEFUNCTION, stream_write);
	curl_easy_setopt(k->h, CURLOPT_WRITEDATA, &s);
	rc = curl_easy_perform(k->h);
	curl_slist_free_all(hdrs);
	ret = stream_end(&s, rc);
	kube_lines_free(s.lines);
	free(s.errbody.p);
	return ret;
}

int
kube_stream_bytes(struct kube *k, const char *path, kube_bytes_fn *fn,
	void *arg, struct kube_error *e)
{
	struct stream s = {.k = k,
		.e = e,
		.path = path,
		.bytes = fn,
		.arg = arg};
	struct curl_slist *hdrs;
	CURLcode rc;
	int ret;

	memset(e, 0, sizeof *e);
	s.errbody.max = ERRBODY_MAX;
	if (!(hdrs = prepare(k, "GET", path, json_accept, 0, e)))
		return -1;
	curl_easy_setopt(k->h, CURLOPT_WRITEFUNCTION, stream_write);
	curl_easy_setopt(k->h, CURLOPT_WRITEDATA, &s);
	rc = curl_easy_perform(k->h);
	curl_slist_free_all(hdrs);
	ret = stream_end(&s, rc);
	free(s.errbody.p);
	return ret;
}

/* ---- paths ----------------------------------------------------------- */

char *
kube_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = emalloc(strlen(s) * 3 + 1), *o = out;
	unsigned char c;

	for (; (c = (unsigned char)*s); s++) {
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			(c >= '0' && c <= '9') || strchr("-._~", c)) {
			*o++ = (char)c;
			continue;
		}
		*o++ = '%';
		*o++ = hex[c >> 4];
		*o++ = hex[c & 15];
	}
	*o = '\0';
	return out;
}

void
kube_query(char **path, const char *key, const char *value)
{
	char *v = kube_escape(value), *k = kube_escape(key);
	char *p = easprintf("%s%c%s=%s", *path, strchr(*path, '?') ? '&' : '?',
		k, v);

	free(v);
	free(k);
	free(*path);
	*path = p;
}

char *
kube_path(const struct kube_resource *r, const char *ns, const char *name)
{
	char *gv, *nsp = NULL, *np = NULL, *out, *e;

	gv = *r->group ? easprintf("/apis/%s/%s", r->group, r->version)
		       : easprintf("/api/%s", r->version);
	if (r->namespaced && ns) {
		e = kube_escape(ns);
		nsp = easprintf("/namespaces/%s", e);
		free(e);
	}
	if (name) {
		e = kube_escape(name);
		np = easprintf("/%s", e);
		free(e);
	}
	out = easprintf("%s%s/%s%s", gv, nsp ? nsp : "", r->resource,
		np ? np : "");
	free(gv);
	free(nsp);
	free(np);
	return out;
}

/* ---- discovery ------------------------------------------------------- */

/* Discovery is flattened into k->resources, an array in preference order
 * (core first, then groups as /apis lists them, preferred version first)
 * of {group, version, resource, singular, kind, namespaced, short[]}. */

static const char *
str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void
add_resource(json_t *list, const char *group, const char *version,
	const json_t *r, const char *resource, const char *singular,
	const char *kind, int namespaced)
{
	json_t *shorts = json_object_get(r, "shortNames");

	if (!resource || strchr(resource, '/'))
		return;
	shorts = json_is_array(shorts) ? json_incref(shorts) : json_array();
	json_array_append_new(list,
		json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:o}", "group", group,
			"version", version, "resource", resource, "singular",
			singular ? singular : "", "kind", kind ? kind : "",
			"namespaced", namespaced, "short", shorts));
}

/* add_plain adds the resources of an APIResourceList. */
static void
add_plain(json_t *list, const char *group, const char *version,
	const json_t *doc)
{
	json_t *r;
	size_t i;

	json_array_foreach(json_object_get(doc, "resources"), i, r)
		add_resource(list, group, version, r, str(r, "name"),
			str(r, "singularName"), str(r, "kind"),
			json_is_true(json_object_get(r, "namespaced")));
}

/* add_aggregated adds every resource of an APIGroupDiscoveryList. */
static void
add_aggregated(json_t *list, const json_t *doc)
{
	json_t *g, *v, *r;
	const char *group, *version;
	size_t i, j, l;

	json_array_foreach(json_object_get(doc, "items"), i, g) {
		group = str(json_object_get(g, "metadata"), "name");
		json_array_foreach(json_object_get(g, "versions"), j, v) {
			if (!(version = str(v, "version")))
				continue;
			json_array_foreach(json_object_get(v, "resources"), l,
				r)
				add_resource(list, group ? group : "", version,
					r, str(r, "resource"),
					str(r, "singularResource"),
					str(json_object_get(r, "responseKind"),
						"kind"),
					!strcmp(str(r, "scope")
							? str(r, "scope")
							: "",
						"Namespaced"));
		}
	}
}

static int
is_aggregated(const json_t *doc)
{
	const char *kind = str(doc, "kind");

	return kind && strcmp(kind, "APIGroupDiscoveryList") == 0;
}

/* add_groupversion adds the resources of /api/VERSION or
 * /apis/GROUP/VERSION. */
static int
add_groupversion(struct kube *k, json_t *list, const char *group,
	const char *version, struct kube_error *e)
{
	char *g = kube_escape(group), *v = kube_escape(version), *path;
	json_t *doc;

	path = *group ? easprintf("/apis/%s/%s", g, v)
		      : easprintf("/api/%s", v);
	doc = request(k, "GET", path, json_accept, NULL, NULL, e);
	free(path);
	free(g);
	free(v);
	if (!doc)
		return -1;
	add_plain(list, group, version, doc);
	json_decref(doc);
	return 0;
}

/* add_root adds what /api or /apis lists: all of it in one document when
 * the server aggregates discovery, else the preferred version of each
 * group, one request each (a group that fails to answer is left out). */
static int
add_root(struct kube *k, json_t *list, const char *root, struct kube_error *e)
{
	json_t *doc = request(k, "GET", root, disc_accept, NULL, NULL, e), *x;
	struct kube_error ge;
	const char *name, *pv;
	size_t i;
	int ret = 0;

	if (!doc)
		return -1;
	if (is_aggregated(doc))
		add_aggregated(list, doc);
	json_array_foreach(json_object_get(doc, "versions"), i, x)
		if ((pv = json_string_value(x)) &&
			(ret = add_groupversion(k, list, "", pv, e)) < 0)
			break;
	json_array_foreach(json_object_get(doc, "groups"), i, x) {
		name = str(x, "name");
		pv = str(json_object_get(x, "preferredVersion"), "version");
		if (name && pv &&
			add_groupversion(k, list, name, pv, &ge) < 0 &&
			ge.kind == KUBE_ETEMP && ge.status == 0) {
			*e = ge;
			ret = -1;
			break;
		}
	}
	json_decref(doc);
	return ret;
}

static int
load_discovery(struct kube *k, struct kube_error *e)
{
	json_t *list = json_array();

	if (add_root(k, list, "/api", e) < 0 ||
		add_root(k, list, "/apis", e) < 0) {
		json_decref(list);
		return -1;
	}
	k->resources = list;
	return 0;
}

/* base_matches says whether name is one of r's names: plural, singular,
 * kind or a short name. */
static int
base_matches(const json_t *r, const char *name, size_t len)
{
	const char *keys[] = {"resource", "singular", "kind"}, *v;
	json_t *s;
	size_t i;

	for (i = 0; i < 3; i++)
		if ((v = str(r, keys[i])) && *v && strlen(v) == len &&
			strncasecmp(v, name, len) == 0)
			return 1;
	json_array_foreach(json_object_get(r, "short"), i, s)
		if ((v = json_string_value(s)) && strlen(v) == len &&
			strncasecmp(v, name, len) == 0)
			return 1;
	return 0;
}

/* matches accepts NAME, NAME.GROUP and NAME.VERSION.GROUP. */
static int
matches(const json_t *r, const char *name)
{
	const char *dot = strchr(name, '.'), *group = str(r, "group");
	const char *version = str(r, "version");
	size_t vl = strlen(version);

	if (!dot)
		return base_matches(r, name, strlen(name));
	if (!base_matches(r, name, (size_t)(dot - name)) || !*group)
		return 0;
	dot++;
	if (strcmp(dot, group) == 0)
		return 1;
	return strncmp(dot, version, vl) == 0 && dot[vl] == '.' &&
		strcmp(dot + vl + 1, group) == 0;
}

static void
fill(struct kube_resource *r, const json_t *d)
{
	r->group = estrdup(str(d, "group"));
	r->version = estrdup(str(d, "version"));
	r->resource = estrdup(str(d, "resource"));
	r->kind = estrdup(str(d, "kind"));
	r->namespaced = json_is_true(json_object_get(d, "namespaced"));
}

/* resolve_explicit handles "GROUP/VERSION/RESOURCE" and
 * "VERSION/RESOURCE" (core) by asking that group version alone. */
static int
resolve_explicit(struct kube *k, const char *name, struct kube_resource *r,
	struct kube_error *e)
{
	const char *s1 = strchr(name, '/'), *s2 = strchr(s1 + 1, '/');
	char *group, *version;
	const char *res;
	json_t *list = json_array(), *d;
	size_t i;
	int ret = -1;

	group = s2 ? easprintf("%.*s", (int)(s1 - name), name) : estrdup("");
	version = s2 ? easprintf("%.*s", (int)(s2 - s1 - 1), s1 + 1)
		     : easprintf("%.*s", (int)(s1 - name), name);
	res = s2 ? s2 + 1 : s1 + 1;
	if (add_groupversion(k, list, group, version, e) == 0) {
		json_array_foreach(list, i, d) {
			if (base_matches(d, res, strlen(res))) {
				fill(r, d);
				ret = 0;
				break;
			}
		}
	} else if (e->status != 404) {
		ret = -2;
	}
	json_decref(list);
	free(group);
	free(version);
	return ret;
}

static int
slashes(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '/';
	return n;
}

int
kube_resolve(struct kube *k, const char *name, struct kube_resource *r,
	struct kube_error *e)
{
	const char *s1 = strchr(name, '/');
	json_t *d;
	size_t i;
	int ret;

	memset(r, 0, sizeof *r);
	memset(e, 0, sizeof *e);
	if (s1 && slashes(name) <= 2) {
		if ((ret = resolve_explicit(k, name, r, e)) == 0)
			return 0;
		if (ret == -2)
			return -1;
	} else if (!s1) {
		if (!k->resources && load_discovery(k, e) < 0)
			return -1;
		json_array_foreach(k->resources, i, d) {
			if (matches(d, name)) {
				fill(r, d);
				return 0;
			}
		}
	}
	seterr(e, KUBE_ENORES, 404, "no resource \"%s\" on %s", name,
		k->cfg->server);
	return -1;
}

void
kube_resource_free(struct kube_resource *r)
{
	free(r->group);
	free(r->version);
	free(r->resource);
	free(r->kind);
	memset(r, 0, sizeof *r);
}

/* ---- raw connections ------------------------------------------------- */

/* split_server cuts the server URL "https://host:port/prefix" into its
 * host part and its path prefix, both malloc'd. */
static void
split_server(const char *server, char **host, char **prefix)
{
	const char *h = strstr(server, "://"), *slash;
	size_t n;

	h = h ? h + 3 : server;
	slash = strchr(h, '/');
	n = slash ? (size_t)(slash - h) : strlen(h);
	*host = easprintf("%.*s", (int)n, h);
	*prefix = estrdup(slash ? slash : "");
	n = strlen(*prefix);
	if (n && (*prefix)[n - 1] == '/')
		(*prefix)[n - 1] = '\0';
}

void *
kube_connect(struct kube *k, const char *path, char **auth, char **host,
	char **prefix, struct kube_error *e)
{
	struct curl_slist *hdrs = prepare(k, "GET", path, "Accept: */*",
		CONNECT_MS, e);
	CURLcode rc;

	*auth = *host = *prefix = NULL;
	if (!hdrs)
		return NULL;
	curl_easy_setopt(k->h, CURLOPT_CONNECT_ONLY, 1L);
	rc = curl_easy_perform(k->h);
	curl_easy_setopt(k->h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		seterr(e,
			http_class(http_classify(rc, 0)) == HTTP_RETRY
				? KUBE_ETEMP
				: KUBE_EFAIL,
			0, "GET %s%s: %s", k->cfg->server, path,
			k->errbuf[0] ? k->errbuf : curl_easy_strerror(rc));
		return NULL;
	}
	if (k->cfg->token)
		*auth = easprintf("Authorization: Bearer %s", k->cfg->token);
	split_server(k->cfg->server, host, prefix);
	return k->h;
}

/* ---- the kept connection (kube_keep) --------------------------------- */

static ssize_t kept_recv(void *arg, char *buf, size_t cap);

void
kube_keep(struct kube *k)
{
	k->kept = 1;
	k->kin.read = kept_recv;
	k->kin.arg = k;
}

/* kept_close drops the kept connection: a fresh handle is the one way
 * libcurl closes a CONNECT_ONLY connection at once. */
static void
kept_close(struct kube *k)
{
	curl_easy_cleanup(k->h);
	if (!(k->h = curl_easy_init()))
		err_die(HAZ_FAIL, "curl_easy_init failed");
	k->kopen = 0;
	h1_in_reset(&k->kin);
}

/* keep_buffers: libcurl has OpenSSL free a connection's 17 KiB read
 * buffer each time it is drained (SSL_MODE_RELEASE_BUFFERS), so every
 * answer read allocates it anew, large enough to make glibc sweep its
 * fast bins each time; a connection kept for many requests keeps it. */
static void
keep_buffers(CURL *h)
{
	struct curl_tlssessioninfo *ti = NULL;

	if (curl_easy_getinfo(h, CURLINFO_TLS_SSL_PTR, &ti) == CURLE_OK && ti &&
		ti->backend == CURLSSLBACKEND_OPENSSL && ti->internals)
		SSL_clear_mode((SSL *)ti->internals, SSL_MODE_RELEASE_BUFFERS);
}

/* kept_open connects as a request of method path would, HTTP/1.1 only:
 * 0, or -1 with e filled. */
static int
kept_open(struct kube *k, const char *method, const char *path,
	struct kube_error *e)
{
	struct curl_slist *hdrs = prepare(k, method, path, "Accept: */*",
		CONNECT_MS, e);
	curl_socket_t s;
	CURLcode rc;

	if (!hdrs)
		return -1;
	curl_easy_setopt(k->h, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(k->h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
	rc = curl_easy_perform(k->h);
	curl_easy_setopt(k->h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	if (rc == CURLE_OK &&
		curl_easy_getinfo(k->h, CURLINFO_ACTIVESOCKET, &s) != CURLE_OK)
		rc = CURLE_COULDNT_CONNECT;
	if (rc != CURLE_OK) {
		transport_error(k, rc, method, path, e);
		kept_close(k);
		return -1;
	}
	if (!k->khost)
		split_server(k->cfg->server, &k->khost, &k->kprefix);
	keep_buffers(k->h);
	k->kfd = (int)s;
	k->kopen = 1;
	h1_in_reset(&k->kin);
	return 0;
}

/* kept_wait waits for the kept connection to be readable or writable
 * (events), until the request's deadline: 0, or -1 when it passed. */
static int
kept_wait(struct kube *k, short events)
{
	struct pollfd p = {.fd = k->kfd, .events = events};
	double left;
	int r;

	do {
		left = k->kdeadline ? k->kdeadline - clock_mono() : -1;
		if (k->kdeadline && left <= 0)
			break;
		r = poll(&p, 1, left < 0 ? -1 : (int)(left * 1000) + 1);
		if (r > 0)
			return 0;
	} while (r < 0 ? errno == EINTR : !k->kdeadline);
	k->ktimedout = 1;
	return -1;
}

static ssize_t
kept_recv(void *arg, char *buf, size_t cap)
{
	struct kube *k = arg;
	CURLcode rc;
	size_t n;

	for (;;) {
		rc = curl_easy_recv(k->h, buf, cap, &n);
		if (rc == CURLE_OK)
			return (ssize_t)n;
		if (rc != CURLE_AGAIN) {
			k->kerr = rc;
			return -1;
		}
		if (kept_wait(k, POLLIN) < 0)
			return -1;
	}
}

static int
kept_send(struct kube *k, const char *p, size_t len)
{
	CURLcode rc;
	size_t n;

	while (len) {
		rc = curl_easy_send(k->h, p, len, &n);
		if (rc == CURLE_AGAIN) {
			if (kept_wait(k, POLLOUT) < 0)
				return -1;
			continue;
		}
		if (rc != CURLE_OK) {
			k->kerr = rc;
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* kept_request writes the request, its body after the head, in one
 * buffer: one TLS record where it fits. */
static char *
kept_request(struct kube *k, const char *method, const char *path,
	const char *accept, const char *ctype, const char *payload, size_t *len)
{
	char *target = easprintf("%s%s", k->kprefix, path), *ct = NULL,
	     *auth = NULL, *req;
	const char *lines[4] = {accept, "User-Agent: k8shazgpu/" HAZ_VERSION};
	size_t plen = payload ? strlen(payload) : 0;

	kc_refresh_token(k->cfg);
	if (k->cfg->token)
		lines[2] = auth = easprintf("Authorization: Bearer %s",
			k->cfg->token);
	if (payload)
		lines[3] = ct = easprintf("Content-Type: %s", ctype);
	req = h1_head(method, target, k->khost, lines, 4,
		payload ? (long long)plen : -1, len);
	if (plen) {
		req = erealloc(req, *len + plen + 1);
		memcpy(req + *len, payload, plen + 1);
		*len += plen;
	}
	if (auth) {
		memset(auth, 0, strlen(auth));
		free(auth);
	}
	free(ct);
	free(target);
	return req;
}

/* kept_failed fills e after the exchange, allowed ms, failed with st
 * (why). */
static void
kept_failed(struct kube *k, enum h1_status st, const char *why, long ms,
	const char *method, const char *path, struct kube_error *e)
{
	enum kube_errkind kind = KUBE_ETEMP;
	char what[512];

	if (k->ktimedout) {
		snprintf(what, sizeof what, "no answer within %ld ms", ms);
		if (k->deadline && clock_mono() >= k->deadline - 0.001)
			kind = KUBE_EDEADLINE;
	} else if (st == H1_EBIG) {
		seterr(e, KUBE_EBADDATA, 0,
			"%s %.*s: answer larger than %ld bytes", method,
			pathonly(path), path, BODY_MAX_BYTES);
		return;
	} else if (st == H1_EBAD) {
		snprintf(what, sizeof what, "invalid HTTP answer: %s", why);
	} else if (*why) {
		snprintf(what, sizeof what, "%s", why);
	} else {
		snprintf(what, sizeof what, "the connection broke: %s",
			curl_easy_strerror(k->kerr));
	}
	seterr(e, kind, 0, "%s %s%.*s: %s", method, k->cfg->server,
		pathonly(path), path, what);
}

/* kept_once is request_once on the kept connection. */
static char *
kept_once(struct kube *k, const char *method, const char *path,
	const char *accept, const char *ctype, const json_t *body, size_t *len,
	struct kube_error *e)
{
	char *payload = body ? jb_dumps(body) : NULL, *req, why[256];
	double left = kube_seconds_left(k);
	long ms;
	struct h1_answer a = {0};
	enum h1_status st;
	size_t rlen, got;
	int reused;

	k->after = -1;
	if (left <= 0) {
		seterr(e, KUBE_EDEADLINE, 0, "%s %s%.*s: deadline reached",
			method, k->cfg->server, pathonly(path), path);
		free(payload);
		return NULL;
	}
	for (int tries = 0;; tries++) {
		reused = k->kopen;
		if (!k->kopen && kept_open(k, method, path, e) < 0) {
			free(payload);
			return NULL;
		}
		/* the wait, never past the deadline, which connecting used */
		ms = k->timeout_ms;
		left = kube_seconds_left(k);
		if (k->deadline && (ms == 0 || left * 1000 < ms))
			ms = left > 0 ? (long)(left * 1000) + 1 : 1;
		k->kdeadline = ms ? clock_mono() + (double)ms / 1000 : 0;
		k->ktimedout = 0;
		k->kerr = CURLE_OK;
		why[0] = '\0';
		req = kept_request(k, method, path, accept, ctype, payload,
			&rlen);
		st = kept_send(k, req, rlen) < 0
			? H1_EREAD
			: h1_read(&k->kin, method, BODY_MAX_BYTES,
				  (double)time(NULL), &a, why, sizeof why);
		free(req);
		if (st == H1_OK)
			break;
		got = k->kin.got;
		h1_answer_free(&a);
		kept_close(k);
		/* the server closed it while it was idle: once more, anew */
		if (reused && tries == 0 && got == 0 && !k->ktimedout)
			continue;
		kept_failed(k, st, why, ms, method, path, e);
		free(payload);
		return NULL;
	}
	free(payload);
	if (!a.keep)
		kept_close(k);
	k->after = a.after;
	if (a.code < 200 || a.code > 299) {
		status_error(e, k, a.code, method, path, a.body, a.len);
		h1_answer_free(&a);
		return NULL;
	}
	e->status = a.code;
	*len = a.len;
	return a.body ? a.body : estrdup("");
}
