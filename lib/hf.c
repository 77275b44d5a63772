/* hf: models over the Hugging Face hub's protocol into huggingface_hub's
 * cache layout (see hf.h). Sections: names and paths; the HTTP client;
 * resolving a revision; fetching blobs; writing a snapshot; reading and
 * removing what the cache holds. */
#include "hf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "err.h"
#include "http.h"

#define DEFAULT_ENDPOINT "https://huggingface.co"
#define DEFAULT_TIMEOUT_S 300
#define API_MAX_BYTES (64L << 20) /* one page of a file list */
#define MAX_PAGES 100000
#define MAX_REDIRECTS 5
#define PATH_MAX_BYTES 4096
#define PART_MAX 96
#define PROGRESS_EVERY_NS 250000000L
#define BUFFER_BYTES (512 * 1024) /* curl's receive buffer */
#define HASH_QUEUE 16             /* buffers a hashing thread may lag */
#define WRITEBACK_EVERY (8 << 20)
#define HASH_THREAD_OVER (4 << 20) /* smaller blobs hash inline */

/* ---- names and paths ------------------------------------------------ */

static int
word_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '_';
}

/* part_ok: one part of a repo id, as the hub's validator takes it. */
static int
part_ok(const char *s, size_t n)
{
	if (n == 0 || n > PART_MAX || !word_char(s[0]) || !word_char(s[n - 1]))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!word_char(s[i]) && s[i] != '.' && s[i] != '-')
			return 0;
		if (i > 0 && (s[i] == '.' || s[i] == '-') && s[i - 1] == s[i])
			return 0;
	}
	return 1;
}

const char *
hf_repo_dir(const char *repo_id, char *buf, size_t n)
{
	const char *slash;
	int w;

	if (!repo_id)
		return NULL;
	slash = strchr(repo_id, '/');
	if (slash) {
		if (!part_ok(repo_id, (size_t)(slash - repo_id)) ||
			!part_ok(slash + 1, strlen(slash + 1)))
			return NULL;
		w = snprintf(buf, n, "models--%.*s--%s", (int)(slash - repo_id),
			repo_id, slash + 1);
	} else {
		if (!part_ok(repo_id, strlen(repo_id)))
			return NULL;
		w = snprintf(buf, n, "models--%s", repo_id);
	}
	return w < 0 || (size_t)w >= n ? NULL : buf;
}

/* path_unsafe says why a relative path could leave the directory it is
 * joined to, or be misread on the way (NULL when it is safe): len is
 * the length the JSON string had, so that a NUL inside shows. */
static const char *
path_unsafe(const char *p, size_t len)
{
	const char *c, *start = p;

	if (len == 0)
		return "it is empty";
	if (strlen(p) != len)
		return "a NUL";
	if (len > PATH_MAX_BYTES)
		return "over 4096 bytes";
	if (p[0] == '/')
		return "a leading /";
	for (c = p; *c; c++) {
		if (*c == '\\')
			return "a backslash";
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return "a control character";
	}
	for (c = p;; c++) {
		if (*c != '/' && *c)
			continue;
		size_t n = (size_t)(c - start);
		if (n == 0)
			return "an empty component";
		if ((n == 1 && start[0] == '.') ||
			(n == 2 && start[0] == '.' && start[1] == '.'))
			return "a . or .. component";
		if (n > 255)
			return "a component over 255 bytes";
		if (!*c)
			return NULL;
		start = c + 1;
	}
}

int
hf_revision_ok(const char *revision)
{
	size_t n = revision ? strlen(revision) : 0;

	return n > 0 && n <= 255 && !path_unsafe(revision, n);
}

static int
is_hex(const char *s, size_t n)
{
	if (!s || strlen(s) != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
			    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* shown: a copy of untrusted text safe to quote in a message (control
 * characters as '?'), cut to 120 bytes. Free it. */
static char *
shown(const char *s)
{
	char *c = easprintf("%.120s", s);

	return err_clean(c);
}

/* pct appends s to out percent-encoded, keeping the unreserved
 * characters, and '/' when keep_slash. */
static char *
pct(const char *s, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = emalloc(strlen(s) * 3 + 1), *o = out;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '-' || c == '.' ||
			c == '_' || c == '~' || (keep_slash && c == '/')) {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = 0;
	return out;
}

/* pathf formats a path into buf: 0, or -1 with ENAMETOOLONG when it
 * does not fit (then buf holds "" rather than a cut path). */
static int __attribute__((format(printf, 3, 4)))
pathf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= n) {
		buf[0] = 0;
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* jpath joins a and b with '/' into buf; -1 when it does not fit. */
static int
jpath(char *buf, size_t n, const char *a, const char *b)
{
	return pathf(buf, n, "%s/%s", a, b);
}

/* mkdirs_in makes rel's directories under base (which exists), refusing
 * to pass through a symlink or anything but a directory, so that nothing
 * placed in the cache can send a write elsewhere. 0 or -1 with errno. */
static int
mkdirs_in(const char *base, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;
	size_t b = strlen(base);
	if (jpath(path, sizeof path, base, rel) < 0)
		return -1;
	for (char *p = path + b + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char end = *p;
		*p = 0;
		if (mkdir(path, 0755) < 0) {
			if (errno != EEXIST || lstat(path, &st) < 0)
				return -1;
			if (!S_ISDIR(st.st_mode)) {
				errno = ENOTDIR;
				return -1;
			}
		}
		if (!end)
			return 0;
		*p = '/';
	}
}

/* parent_dir_of copies path up to its last '/' ("" when none). */
static void
parent_dir_of(const char *path, char *buf, size_t n)
{
	const char *slash = strrchr(path, '/');

	snprintf(buf, n, "%.*s", slash ? (int)(slash - path) : 0, path);
}

/* fsync_dir makes a rename in dir (base/rel) durable. */
static void
fsync_dir(const char *base, const char *rel)
{
	char p[PATH_MAX];
	int fd;

	if (jpath(p, sizeof p, base, rel) < 0 ||
		(fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	fsync(fd);
	close(fd);
}

/* The directories of one repository in the cache. */
struct repo {
	char dir[PATH_MAX];   /* HUB/models--ORG--NAME */
	char locks[PATH_MAX]; /* HUB/.locks/models--ORG--NAME */
};

static int
repo_paths(const char *hub, const char *repo_id, struct repo *r)
{
	char name[256];

	if (!hf_repo_dir(repo_id, name, sizeof name))
		return -1;
	if (snprintf(r->dir, sizeof r->dir, "%s/%s", hub, name) >=
			(int)sizeof r->dir ||
		snprintf(r->locks, sizeof r->locks, "%s/.locks/%s", hub,
			name) >= (int)sizeof r->locks)
		return -1;
	return 0;
}

/* blob_held: blobs/ETAG is a regular file of the expected size: only a
 * checked blob is ever given that name. */
static int
blob_held(const struct repo *r, const char *etag, uint64_t size)
{
	char p[PATH_MAX];
	struct stat st;

	return pathf(p, sizeof p, "%s/blobs/%s", r->dir, etag) == 0 &&
		lstat(p, &st) == 0 && S_ISREG(st.st_mode) &&
		(uint64_t)st.st_size == size;
}

/* ---- the HTTP client ------------------------------------------------ */

struct client {
	CURL *h;
	char err[CURL_ERROR_SIZE];
	char *endpoint; /* without trailing '/' */
	char *origin;   /* scheme://host:port of endpoint */
	const char *token;
	const char *repo;
	long timeout;
	struct http_headers hdr; /* the last answer's */
	char *url;               /* the last URL asked, after redirects */
};

static int
client_init(struct client *c, const struct hf_item *it)
{
	const char *e = it->endpoint && *it->endpoint ? it->endpoint
						      : DEFAULT_ENDPOINT;
	size_t n = strlen(e);

	memset(c, 0, sizeof *c);
	while (n > 0 && e[n - 1] == '/')
		n--;
	c->endpoint = easprintf("%.*s", (int)n, e);
	c->origin = http_origin(c->endpoint);
	c->token = it->token && *it->token ? it->token : NULL;
	c->repo = it->repo_id;
	c->timeout = it->timeout_s > 0 ? it->timeout_s : DEFAULT_TIMEOUT_S;
	http_global_init();
	if (!(c->h = curl_easy_init()))
		err_die(HAZ_FAIL, "curl_easy_init failed");
	return c->origin ? 0 : -1;
}

static void
client_free(struct client *c)
{
	if (c->h)
		curl_easy_cleanup(c->h);
	http_headers_clear(&c->hdr);
	free(c->endpoint);
	free(c->origin);
	free(c->url);
}

/* header returns the last answer's field name, or "". */
static const char *
header(const struct client *c, const char *name)
{
	const char *v = http_header(&c->hdr, name);

	return v ? v : "";
}

/* link_next finds the target of rel="next" in a Link header value. */
static char *
link_next(const char *v)
{
	while ((v = strchr(v, '<'))) {
		const char *end = strchr(v, '>');
		if (!end)
			return NULL;
		const char *params = end + 1, *stop = strchr(params, '<');
		size_t plen = stop ? (size_t)(stop - params) : strlen(params);
		char *p = easprintf("%.*s", (int)plen, params);
		int next = strstr(p, "rel=\"next\"") || strstr(p, "rel=next");
		free(p);
		if (next)
			return easprintf("%.*s", (int)(end - v - 1), v + 1);
		v = end + 1;
	}
	return NULL;
}

/* next_page: the last answer's rel="next" target (its Link fields in
 * order), malloc'd, or NULL. */
static char *
next_page(const struct client *c)
{
	char *links = http_header_list(&c->hdr, "Link");
	char *next = links ? link_next(links) : NULL;

	free(links);
	return next;
}

/* A body sink: write(arg, bytes, n) returns 0 or -1 to stop. */
typedef int sink_fn(void *arg, const char *p, size_t n);

struct xfer {
	struct client *c;
	sink_fn *sink;
	void *arg;
};

/* on_body passes 2xx bodies to the sink and drops the others' (an
 * error page, a redirect's note). */
static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;

	if (x->c->hdr.status < 200 || x->c->hdr.status > 299)
		return size * n;
	return x->sink(x->arg, p, size * n) < 0 ? 0 : size * n;
}

/* get sends GET url (and follows redirects, up to MAX_REDIRECTS, itself:
 * the token goes only to the endpoint's own origin). extra: a header
 * line or NULL. On return c->hdr holds the last answer's header and
 * c->url the last URL. xferinfo may be NULL. */
static CURLcode
get(struct client *c, const char *url, const char *extra, sink_fn *sink,
	void *arg, curl_xferinfo_callback xferinfo, void *xarg)
{
	struct xfer x = {c, sink, arg};
	struct http_opts o = {.agent = "k8shazgpu/" HAZ_VERSION,
		.errbuf = c->err,
		.connect_ms = c->timeout * 1000,
		.stall_s = c->timeout,
		.keepidle_s = 60,
		.keepintvl_s = 60,
		.headers = &c->hdr};
	CURLcode rc = CURLE_OK;

	free(c->url);
	c->url = estrdup(url);
	for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
		struct curl_slist *hdrs = NULL;
		char *auth = NULL, *origin = http_origin(c->url), *loc = NULL;

		http_setup(c->h, c->url, &o);
		/* fewer, larger writes: the blob is hashed as it is written */
		curl_easy_setopt(c->h, CURLOPT_BUFFERSIZE, (long)BUFFER_BYTES);
		curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &x);
		if (xferinfo) {
			curl_easy_setopt(c->h, CURLOPT_NOPROGRESS, 0L);
			curl_easy_setopt(c->h, CURLOPT_XFERINFOFUNCTION,
				xferinfo);
			curl_easy_setopt(c->h, CURLOPT_XFERINFODATA, xarg);
		}
		if (c->token && origin && !strcmp(origin, c->origin)) {
			auth = easprintf("Authorization: Bearer %s", c->token);
			hdrs = curl_slist_append(hdrs, auth);
		}
		if (extra)
			hdrs = curl_slist_append(hdrs, extra);
		curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hdrs);
		rc = curl_easy_perform(c->h);
		curl_slist_free_all(hdrs);
		if (auth) {
			memset(auth, 0, strlen(auth));
			free(auth);
		}
		free(origin);
		if (rc != CURLE_OK || c->hdr.status < 300 ||
			c->hdr.status > 399 || c->hdr.status == 304)
			return rc;
		curl_easy_getinfo(c->h, CURLINFO_REDIRECT_URL, &loc);
		if (!loc)
			return rc;
		free(c->url);
		c->url = estrdup(loc);
	}
	return rc;
}

/* shown_url: c->url without its query, for messages. */
static const char *
shown_url(const struct client *c, char *buf, size_t n)
{
	snprintf(buf, n, "%.*s", (int)strcspn(c->url, "?"), c->url);
	return buf;
}

/* transport_fail fills res after curl gave up, its reason transient or
 * not as http_classify says (a refused certificate is not). what names
 * the request for the message ("org/name@main", "org/name: file"). */
static int
transport_fail(struct client *c, CURLcode rc, const char *what,
	struct ck_result *res)
{
	char u[512];
	const char *why = c->err[0] ? c->err : curl_easy_strerror(rc);

	shown_url(c, u, sizeof u);
	switch (http_classify(rc, 0)) {
	case HTTP_V_TIMEOUT:
		return ck_fail(res, CK_TIMEOUT,
			"%s: no progress for %ld s (%s)", what, c->timeout, u);
	case HTTP_V_UNREACHABLE:
		return ck_fail(res, CK_UNREACHABLE, "%s: %s unreachable: %s",
			what, u, why);
	case HTTP_V_UNTRUSTED:
		return ck_fail(res, CK_UNTRUSTED,
			"%s: %s: the server's certificate failed verification: "
			"%s",
			what, u, why);
	case HTTP_V_LOCAL:
		return ck_fail(res, CK_INVALID, "%s: %s: %s", what, u, why);
	case HTTP_V_STOPPED:
		return ck_fail(res, CK_CANCELLED, "%s: stopped", what);
	default: return ck_fail(res, CK_SERVER, "%s: %s: %s", what, u, why);
	}
}

/* reset_seconds: the seconds until a rate limit resets, from the hub's
 * RateLimit header ("api";r=0;t=55) or Retry-After; -1 when neither. */
static long
reset_seconds(const struct client *c)
{
	const char *t = strstr(header(c, "RateLimit"), "t=");
	char *end;
	double secs;
	long v;

	if (t) {
		v = strtol(t + 2, &end, 10);
		if (end != t + 2 && v >= 0)
			return v;
	}
	secs = http_retry_after(header(c, "Retry-After"), (double)time(NULL));
	return secs < 0 ? -1 : secs < (double)LONG_MAX ? (long)secs : LONG_MAX;
}

/* http_fail fills res for a response that is not what was asked for.
 * not_found is the message for a plain 404 (the hub's X-Error-Code
 * names what was not found when it says). */
static int
http_fail(struct client *c, const char *what, const char *not_found,
	struct ck_result *res)
{
	long code = c->hdr.status, secs;
	char u[512], emsg[200], msg[240] = "";

	shown_url(c, u, sizeof u);
	snprintf(emsg, sizeof emsg, "%s", header(c, "X-Error-Message"));
	if (emsg[0])
		snprintf(msg, sizeof msg, ": %s", err_clean(emsg));
	if (!strcmp(header(c, "X-Error-Code"), "RepoNotFound"))
		return ck_fail(res, CK_NOT_FOUND,
			"%s: repository not found at %s%s", c->repo,
			c->endpoint,
			c->token ? ""
				 : " (if it is private or gated: set "
				   "HF_TOKEN)");
	if (code == 401 || code == 403)
		return ck_fail(res, CK_UNAUTHORIZED,
			"%s: HTTP %ld from %s%s: %s", what, code, u, msg,
			c->token ? "the token (HF_TOKEN) was refused"
				 : "set HF_TOKEN");
	if (code == 404)
		return ck_fail(res, CK_NOT_FOUND, "%s", not_found);
	if (code == 429) {
		char wait[64] = "";
		if ((secs = reset_seconds(c)) >= 0)
			snprintf(wait, sizeof wait,
				"; the limit resets in %ld s", secs);
		return ck_fail(res, CK_SERVER,
			"%s: rate limited (HTTP 429)%s%s", what, wait,
			c->token ? "" : "; HF_TOKEN raises it");
	}
	/* as every client judges an answer (lib/http): a refusal that the
	 * same request would meet again is no server trouble to retry */
	if (code == 410)
		return ck_fail(res, CK_NOT_FOUND, "%s: HTTP 410 from %s%s",
			what, u, msg);
	if (http_class(http_classify(CURLE_OK, code)) == HTTP_PERMANENT)
		return ck_fail(res, CK_INVALID, "%s: HTTP %ld from %s%s", what,
			code, u, msg);
	return ck_fail(res, CK_SERVER, "%s: HTTP %ld from %s%s", what, code, u,
		msg);
}

struct buf {
	char *p;
	size_t len, cap;
	int over;
};

static int
collect(void *arg, const char *p, size_t n)
{
	struct buf *b = arg;

	if (b->len + n > (size_t)API_MAX_BYTES) {
		b->over = 1;
		return -1;
	}
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = erealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = 0;
	return 0;
}

/* api_get: GET url's JSON answer, or NULL with res filled. */
static json_t *
api_get(struct client *c, const char *url, const char *what,
	const char *not_found, struct ck_result *res)
{
	struct buf b = {0};
	json_error_t je;
	json_t *j = NULL;
	char u[512];
	CURLcode rc = get(c, url, "Accept: application/json", collect, &b, NULL,
		NULL);

	if (b.over)
		ck_fail(res, CK_SERVER, "%s: %s: answer over %ld bytes", what,
			shown_url(c, u, sizeof u), API_MAX_BYTES);
	else if (rc != CURLE_OK)
		transport_fail(c, rc, what, res);
	else if (c->hdr.status < 200 || c->hdr.status > 299)
		http_fail(c, what, not_found, res);
	else if (!(j = json_loadb(b.p ? b.p : "", b.len, JSON_ALLOW_NUL, &je)))
		ck_fail(res, CK_SERVER, "%s: %s: not JSON: %s", what,
			shown_url(c, u, sizeof u), je.text);
	free(b.p);
	return j;
}

/* ---- resolving a revision ------------------------------------------- */

static int
by_path(const void *a, const void *b)
{
	return strcmp(((const struct hf_file *)a)->path,
		((const struct hf_file *)b)->path);
}

static int
bsearch_path(const struct hf_plan *p, const char *path, size_t len)
{
	size_t lo = 0, hi = p->nfiles;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strncmp(p->files[mid].path, path, len);
		if (c == 0 && p->files[mid].path[len])
			c = 1;
		if (c == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* add_entry takes one element of a tree listing page. */
static int
add_entry(const char *what, json_t *e, struct hf_plan *p, size_t *cap,
	struct ck_result *res)
{
	json_t *jp = json_object_get(e, "path"), *lfs;
	const char *type = json_string_value(json_object_get(e, "type"));
	const char *path = json_string_value(jp), *why, *oid;
	json_int_t size;
	struct hf_file *f;
	char *s;

	if (!type || strcmp(type, "file"))
		return 0; /* directories: made for the files in them */
	if (!path)
		return ck_fail(res, CK_SERVER, "%s: a file entry has no path",
			what);
	if ((why = path_unsafe(path, json_string_length(jp)))) {
		s = shown(path);
		ck_fail(res, CK_INVALID,
			"%s: unsafe path \"%s\" in the file list (%s)", what, s,
			why);
		free(s);
		return -1;
	}
	size = json_integer_value(json_object_get(e, "size"));
	oid = json_string_value(json_object_get(e, "oid"));
	lfs = json_object_get(e, "lfs");
	if (!json_is_integer(json_object_get(e, "size")) || size < 0 ||
		!is_hex(oid, 40)) {
		s = shown(path);
		ck_fail(res, CK_SERVER,
			"%s: the file list has no size or oid for \"%s\"", what,
			s);
		free(s);
		return -1;
	}
	if (p->nfiles == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		p->files = erealloc(p->files, *cap * sizeof *p->files);
	}
	f = &p->files[p->nfiles++];
	memset(f, 0, sizeof *f);
	f->path = estrdup(path);
	f->size = (uint64_t)size;
	memcpy(f->blob_id, oid, 41);
	memcpy(f->etag, oid, 41);
	if (json_is_object(lfs)) {
		const char *sha = json_string_value(
			json_object_get(lfs, "oid"));
		json_t *ls = json_object_get(lfs, "size");
		if (!is_hex(sha, 64) ||
			(ls && json_integer_value(ls) != size)) {
			s = shown(path);
			ck_fail(res, CK_SERVER,
				"%s: the file list has a bad lfs entry for "
				"\"%s\"",
				what, s);
			free(s);
			return -1;
		}
		memcpy(f->etag, sha, 65);
		f->lfs = 1;
	}
	return 0;
}

/* check_files sorts the plan and refuses a path listed twice, or one
 * that is a file and a directory at once. */
static int
check_files(const char *what, struct hf_plan *p, struct ck_result *res)
{
	char *s;

	qsort(p->files, p->nfiles, sizeof *p->files, by_path);
	for (size_t i = 0; i < p->nfiles; i++) {
		const char *path = p->files[i].path, *slash;
		int clash = i > 0 && !strcmp(path, p->files[i - 1].path);
		for (slash = strchr(path, '/'); slash && !clash;
			slash = strchr(slash + 1, '/'))
			clash = bsearch_path(p, path, (size_t)(slash - path));
		if (clash) {
			s = shown(path);
			ck_fail(res, CK_SERVER,
				"%s: the file list names \"%s\" twice, or as a "
				"file and a directory",
				what, s);
			free(s);
			return -1;
		}
	}
	return 0;
}

/* sum_blobs: total and missing bytes, each distinct blob once. */
static const struct hf_file **distinct(const struct hf_plan *p);

static void
sum_blobs(const struct repo *r, struct hf_plan *p)
{
	const struct hf_file **v = distinct(p);

	p->total = p->missing = 0;
	for (size_t i = 0; v[i]; i++) {
		p->total += v[i]->size;
		if (!blob_held(r, v[i]->etag, v[i]->size))
			p->missing += v[i]->size;
	}
	free(v);
}

/* check_item validates what hf_resolve and hf_fetch are given. */
static int
check_item(const struct hf_item *it, const char **rev, struct repo *r,
	struct ck_result *res)
{
	char *s;

	*rev = it->revision && *it->revision ? it->revision : "main";
	if (!it->repo_id || !it->hub ||
		repo_paths(it->hub, it->repo_id, r) < 0) {
		s = shown(it->repo_id ? it->repo_id : "");
		ck_fail(res, CK_INVALID,
			"repo id \"%s\" is not ORG/NAME or NAME (1 to 96 of "
			"A-Z a-z 0-9 . _ -, no -- or ..)",
			s);
		free(s);
		return -1;
	}
	if (!hf_revision_ok(*rev)) {
		s = shown(*rev);
		ck_fail(res, CK_INVALID,
			"%s: revision \"%s\" cannot name a ref file (empty, "
			"leading /, . or .. component, backslash or control "
			"character)",
			it->repo_id, s);
		free(s);
		return -1;
	}
	return 0;
}

int
hf_resolve(const struct hf_item *it, struct hf_plan *plan,
	struct ck_result *res)
{
	struct client c;
	struct repo r;
	const char *rev, *sha;
	char what[400], nf[600], *url = NULL, *erev, *s, *next;
	struct hf_plan p = {0};
	size_t cap = 0;
	json_t *j;
	int rc = -1, pages = 0;

	memset(res, 0, sizeof *res);
	if (check_item(it, &rev, &r, res) < 0)
		return -1;
	if (client_init(&c, it) < 0) {
		client_free(&c);
		s = shown(it->endpoint ? it->endpoint : "");
		ck_fail(res, CK_INVALID, "endpoint \"%s\" is not a URL", s);
		free(s);
		return -1;
	}
	s = shown(rev);
	snprintf(what, sizeof what, "%s@%s", it->repo_id, s);
	snprintf(nf, sizeof nf, "%s: revision \"%s\" not found at %s",
		it->repo_id, s, c.endpoint);
	free(s);
	erev = pct(rev, 0);
	url = easprintf("%s/api/models/%s/revision/%s", c.endpoint, it->repo_id,
		erev);
	free(erev);
	if (!(j = api_get(&c, url, what, nf, res)))
		goto out;
	sha = json_string_value(json_object_get(j, "sha"));
	if (!is_hex(sha, 40)) {
		json_decref(j);
		ck_fail(res, CK_SERVER,
			"%s: the hub's answer has no commit sha", what);
		goto out;
	}
	memcpy(p.commit, sha, 41);
	json_decref(j);
	free(url);
	url = easprintf("%s/api/models/%s/tree/%s?recursive=true", c.endpoint,
		it->repo_id, p.commit);
	snprintf(nf, sizeof nf, "%s: commit %s not found at %s", it->repo_id,
		p.commit, c.endpoint);
	while (url) {
		size_t i;
		json_t *e;
		if (++pages > MAX_PAGES) {
			ck_fail(res, CK_SERVER, "%s: over %d pages of files",
				what, MAX_PAGES);
			goto out;
		}
		if (!(j = api_get(&c, url, what, nf, res)))
			goto out;
		if (!json_is_array(j)) {
			json_decref(j);
			ck_fail(res, CK_SERVER,
				"%s: the file list is not a JSON array", what);
			goto out;
		}
		json_array_foreach(j, i, e) {
			if (add_entry(what, e, &p, &cap, res) < 0) {
				json_decref(j);
				goto out;
			}
		}
		json_decref(j);
		free(url);
		url = NULL;
		if ((next = next_page(&c))) {
			url = http_url_join(c.url, next);
			free(next);
			if (!url || !strcmp(url, c.url)) {
				ck_fail(res, CK_SERVER,
					"%s: a bad next page link", what);
				goto out;
			}
		}
	}
	if (check_files(what, &p, res) < 0)
		goto out;
	sum_blobs(&r, &p);
	*plan = p;
	memset(&p, 0, sizeof p);
	rc = 0;
out:
	free(url);
	hf_plan_free(&p);
	client_free(&c);
	return rc;
}

void
hf_plan_free(struct hf_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->nfiles; i++)
		free(plan->files[i].path);
	free(plan->files);
	memset(plan, 0, sizeof *plan);
}

/* ---- fetching blobs ------------------------------------------------- */

/* One hf_fetch. */
struct fetch {
	const struct hf_item *it;
	const struct hf_plan *plan;
	struct client c;
	struct repo r;
	ck_progress_fn *progress;
	void *arg;
	uint64_t done;    /* bytes of blobs complete on disk */
	uint64_t fetched; /* bytes received */
	struct timespec last;
	int cancelled;
};

/* One blob's download into blobs/ETAG.incomplete. */
struct blob {
	struct fetch *fx;
	const struct hf_file *f;
	int fd;
	EVP_MD_CTX *md;
	uint64_t have;    /* bytes in the partial file, all given to the hash */
	uint64_t flushed; /* bytes whose writeback has been started */
	int started;      /* the current answer's body has begun */
	enum ck_reason why;
	char why_msg[300];
	struct hasher *hs; /* NULL: hashed inline */
};

/* ---- hashing beside the transfer ----------------------------------- */

/* A hashing thread for a large blob: the transfer hands it copies of
 * what it wrote, so that the sha256 of a big file costs no time on the
 * receiving thread (it is as slow as the loopback transfer itself). md
 * is the thread's while anything is queued: hasher_drain gives it
 * back. */
struct hasher {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t more, room;
	EVP_MD_CTX *md;
	struct {
		char *p;
		size_t n, cap;
	} q[HASH_QUEUE];
	size_t head, count; /* count: queued, the one hashed now included */
	int stop;
};

static void *
hasher_main(void *arg)
{
	struct hasher *h = arg;

	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (h->count == 0 && !h->stop)
			pthread_cond_wait(&h->more, &h->mu);
		if (h->count == 0)
			break;
		pthread_mutex_unlock(&h->mu);
		EVP_DigestUpdate(h->md, h->q[h->head].p, h->q[h->head].n);
		pthread_mutex_lock(&h->mu);
		h->head = (h->head + 1) % HASH_QUEUE;
		h->count--;
		pthread_cond_signal(&h->room);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* hasher_start: a thread hashing into md, or NULL (then hash inline). */
static struct hasher *
hasher_start(EVP_MD_CTX *md)
{
	struct hasher *h = ecalloc(1, sizeof *h);

	h->md = md;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->more, NULL);
	pthread_cond_init(&h->room, NULL);
	if (pthread_create(&h->th, NULL, hasher_main, h) != 0) {
		pthread_mutex_destroy(&h->mu);
		pthread_cond_destroy(&h->more);
		pthread_cond_destroy(&h->room);
		free(h);
		return NULL;
	}
	return h;
}

static void
hasher_put(struct hasher *h, const char *p, size_t n)
{
	size_t slot;

	pthread_mutex_lock(&h->mu);
	while (h->count == HASH_QUEUE)
		pthread_cond_wait(&h->room, &h->mu);
	slot = (h->head + h->count) % HASH_QUEUE;
	pthread_mutex_unlock(&h->mu);
	/* the slot is free until count says otherwise */
	if (h->q[slot].cap < n) {
		h->q[slot].cap = n > BUFFER_BYTES ? n : BUFFER_BYTES;
		h->q[slot].p = erealloc(h->q[slot].p, h->q[slot].cap);
	}
	memcpy(h->q[slot].p, p, n);
	h->q[slot].n = n;
	pthread_mutex_lock(&h->mu);
	h->count++;
	pthread_cond_signal(&h->more);
	pthread_mutex_unlock(&h->mu);
}

/* hasher_drain waits until every queued buffer is hashed. */
static void
hasher_drain(struct hasher *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	while (h->count > 0)
		pthread_cond_wait(&h->room, &h->mu);
	pthread_mutex_unlock(&h->mu);
}

static void
hasher_stop(struct hasher *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	h->stop = 1;
	pthread_cond_signal(&h->more);
	pthread_mutex_unlock(&h->mu);
	pthread_join(h->th, NULL);
	for (size_t i = 0; i < HASH_QUEUE; i++)
		free(h->q[i].p);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->more);
	pthread_cond_destroy(&h->room);
	free(h);
}

/* hash gives n bytes just written to the blob's hash. */
static void
hash(struct blob *b, const char *p, size_t n)
{
	if (b->hs)
		hasher_put(b->hs, p, n);
	else
		EVP_DigestUpdate(b->md, p, n);
}

static int
md_start(struct blob *b)
{
	char head[48];
	int n;

	hasher_drain(b->hs);
	if (EVP_DigestInit_ex(b->md, b->f->lfs ? EVP_sha256() : EVP_sha1(),
		    NULL) != 1)
		return -1;
	if (b->f->lfs)
		return 0;
	/* a git blob's id covers its header */
	n = snprintf(head, sizeof head, "blob %llu",
		(unsigned long long)b->f->size);
	return EVP_DigestUpdate(b->md, head, (size_t)n + 1) == 1 ? 0 : -1;
}

static void
md_hex(struct blob *b, char out[65])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	hasher_drain(b->hs);
	EVP_DigestFinal_ex(b->md, d, &n);
	for (unsigned i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
	out[2 * n] = 0;
}

/* md_peek: the hex digest so far, the hash left running. */
static int
md_peek(struct blob *b, char out[65])
{
	struct blob copy = *b;
	int rc = -1;

	hasher_drain(b->hs);
	copy.hs = NULL;
	if ((copy.md = EVP_MD_CTX_new()) &&
		EVP_MD_CTX_copy_ex(copy.md, b->md) == 1) {
		md_hex(&copy, out);
		rc = 0;
	}
	EVP_MD_CTX_free(copy.md);
	return rc;
}

/* restart empties the partial file and the hash. */
static int
restart(struct blob *b)
{
	if (ftruncate(b->fd, 0) < 0 || lseek(b->fd, 0, SEEK_SET) < 0)
		return -1;
	b->have = b->flushed = 0;
	return md_start(b);
}

static int
fail_io(struct blob *b, const char *doing)
{
	b->why = errno == ENOSPC || errno == EDQUOT ? CK_DISK_FULL : CK_IO;
	snprintf(b->why_msg, sizeof b->why_msg, "%s: %s: %s blobs/%s: %s",
		b->fx->it->repo_id, b->f->path, doing, b->f->etag,
		strerror(errno));
	return -1;
}

/* body_start checks the answer before its first byte is written: a 200
 * to a range request starts over, a 206 must start where we stopped. */
static int
body_start(struct blob *b)
{
	const struct client *c = &b->fx->c;
	const char *range = header(c, "Content-Range");
	unsigned long long from;

	b->started = 1;
	if (c->hdr.status == 200 && b->have > 0)
		return restart(b) < 0 ? fail_io(b, "restart") : 0;
	if (c->hdr.status != 206)
		return 0;
	if (sscanf(range, "bytes %llu-", &from) != 1 || from != b->have) {
		b->why = CK_SERVER;
		snprintf(b->why_msg, sizeof b->why_msg,
			"%s: %s: Content-Range \"%.40s\" for a request from byte "
			"%llu",
			b->fx->it->repo_id, b->f->path, range,
			(unsigned long long)b->have);
		return -1;
	}
	return 0;
}

static int
write_blob(void *arg, const char *p, size_t n)
{
	struct blob *b = arg;

	if (!b->started && body_start(b) < 0)
		return -1;
	if (b->have + n > b->f->size) {
		b->why = CK_CHECKSUM;
		snprintf(b->why_msg, sizeof b->why_msg,
			"%s: %s: the server sent more than the %llu bytes the "
			"file list names",
			b->fx->it->repo_id, b->f->path,
			(unsigned long long)b->f->size);
		return -1;
	}
	for (size_t off = 0; off < n;) {
		ssize_t w = write(b->fd, p + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return fail_io(b, "write");
		off += (size_t)w;
	}
	hash(b, p, n);
	b->have += n;
	if (b->have - b->flushed >= WRITEBACK_EVERY) {
		/* start the disk writes now, so the fsync before the rename
		 * has little left to wait for */
		sync_file_range(b->fd, (off_t)b->flushed,
			(off_t)(b->have - b->flushed), SYNC_FILE_RANGE_WRITE);
		b->flushed = b->have;
	}
	b->fx->fetched += n;
	return 0;
}

static long
ns_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000000000L +
		(now.tv_nsec - t->tv_nsec);
}

/* report calls the caller's progress function, at most every 250 ms
 * unless forced; nonzero means stop. */
static int
report(struct fetch *fx, uint64_t extra, int force)
{
	if (!fx->progress || fx->cancelled)
		return fx->cancelled;
	if (!force && ns_since(&fx->last) < PROGRESS_EVERY_NS)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &fx->last);
	if (fx->progress(fx->arg, fx->done + extra, fx->plan->total))
		fx->cancelled = 1;
	return fx->cancelled;
}

static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
	curl_off_t ulnow)
{
	struct blob *b = arg;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return report(b->fx, b->have, 0);
}

/* hash_partial feeds the partial file's bytes to the hash, so that a
 * resumed download is checked whole. */
static int
hash_partial(struct blob *b)
{
	char buf[1 << 16];
	ssize_t n;

	if (lseek(b->fd, 0, SEEK_SET) < 0)
		return -1;
	b->have = 0;
	while ((n = read(b->fd, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		EVP_DigestUpdate(b->md, buf, (size_t)n);
		b->have += (uint64_t)n;
	}
	b->flushed = b->have;
	return 0;
}

/* finish checks a complete partial file and gives it the blob's name;
 * a wrong one is deleted. */
static int
finish(struct blob *b, const char *part, const char *final,
	struct ck_result *res)
{
	char got[65];

	md_hex(b, got);
	if (strcmp(got, b->f->etag)) {
		unlink(part);
		return ck_fail(res, CK_CHECKSUM,
			"%s: %s: checksum mismatch: expected %s %s, got %s",
			b->fx->it->repo_id, b->f->path,
			b->f->lfs ? "sha256" : "git blob sha1", b->f->etag,
			got);
	}
	if (fsync(b->fd) < 0 || rename(part, final) < 0) {
		fail_io(b, "rename");
		return ck_fail(res, b->why, "%s", b->why_msg);
	}
	fsync_dir(b->fx->r.dir, "blobs");
	return 0;
}

/* download one blob from the first byte not held; -1 with res filled
 * (partial kept for Truncated and Timeout, deleted otherwise). */
static int
download(struct blob *b, const char *part, const char *final,
	struct ck_result *res)
{
	struct fetch *fx = b->fx;
	struct client *c = &fx->c;
	const char *repo = fx->it->repo_id;
	char *epath = pct(b->f->path, 1), range[64], *s;
	char *url = easprintf("%s/%s/resolve/%s/%s", c->endpoint, repo,
		fx->plan->commit, epath);
	char nf[300];
	int tries = 0, rc = -1;
	CURLcode cc;

	free(epath);
	s = shown(b->f->path);
	snprintf(nf, sizeof nf, "%s: file \"%s\" not found at commit %s", repo,
		s, fx->plan->commit);
	free(s);
again:
	b->started = 0;
	b->why = CK_OK;
	snprintf(range, sizeof range, "Range: bytes=%llu-",
		(unsigned long long)b->have);
	cc = get(c, url, b->have ? range : NULL, write_blob, b, on_progress, b);
	if (b->why != CK_OK) {
		ck_fail(res, b->why, "%s", b->why_msg);
		unlink(part);
		goto out;
	}
	if (cc == CURLE_ABORTED_BY_CALLBACK || fx->cancelled) {
		unlink(part);
		ck_fail(res, CK_CANCELLED,
			"%s: %s: stopped after %llu of %llu "
			"bytes",
			repo, b->f->path, (unsigned long long)b->have,
			(unsigned long long)b->f->size);
		goto out;
	}
	if (c->hdr.status == 416 && b->have > 0 && tries++ == 0) {
		/* the server cannot resume this: start over once */
		if (restart(b) < 0) {
			fail_io(b, "restart");
			ck_fail(res, b->why, "%s", b->why_msg);
			goto out;
		}
		goto again;
	}
	if (c->hdr.status >= 200 && c->hdr.status <= 299 &&
		(cc == CURLE_OK || cc == CURLE_PARTIAL_FILE ||
			cc == CURLE_RECV_ERROR || cc == CURLE_GOT_NOTHING ||
			cc == CURLE_OPERATION_TIMEDOUT)) {
		if (b->have < b->f->size) {
			if (cc == CURLE_OPERATION_TIMEDOUT)
				ck_fail(res, CK_TIMEOUT,
					"%s: %s: no progress for %ld s, got "
					"%llu of %llu bytes",
					repo, b->f->path, c->timeout,
					(unsigned long long)b->have,
					(unsigned long long)b->f->size);
			else
				ck_fail(res, CK_TRUNCATED,
					"%s: %s: got %llu of %llu bytes", repo,
					b->f->path, (unsigned long long)b->have,
					(unsigned long long)b->f->size);
			goto out;
		}
		rc = finish(b, part, final, res);
		goto out;
	}
	if (cc != CURLE_OK) {
		char what[300];
		snprintf(what, sizeof what, "%s: %s", repo, b->f->path);
		transport_fail(c, cc, what, res);
	} else if (c->hdr.status >= 300 && c->hdr.status <= 399) {
		ck_fail(res, CK_SERVER, "%s: %s: over %d redirects", repo,
			b->f->path, MAX_REDIRECTS);
	} else {
		char what[300];
		snprintf(what, sizeof what, "%s: %s", repo, b->f->path);
		http_fail(c, what, nf, res);
	}
out:
	free(url);
	return rc;
}

/* fetch_blob makes blobs/ETAG of one file, under the blob's lock. */
static int
fetch_blob(struct fetch *fx, const struct hf_file *f, struct ck_result *res)
{
	char part[PATH_MAX], final[PATH_MAX], lock[PATH_MAX];
	struct blob b = {.fx = fx, .f = f, .fd = -1};
	struct stat st;
	int lfd, rc = -1;

	if (pathf(final, sizeof final, "%s/blobs/%s", fx->r.dir, f->etag) < 0 ||
		pathf(part, sizeof part, "%s.incomplete", final) < 0 ||
		pathf(lock, sizeof lock, "%s/%s.lock", fx->r.locks, f->etag) <
			0 ||
		ck_mkdirs(fx->r.locks, 0755) < 0 ||
		(lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			 0644)) < 0)
		return ck_fail(res, CK_IO, "%s: %s: %s", fx->it->repo_id, lock,
			strerror(errno));
	while (flock(lfd, LOCK_EX) < 0 && errno == EINTR)
		;
	if (blob_held(&fx->r, f->etag, f->size)) {
		rc = 0; /* another fetch made it meanwhile */
		goto out;
	}
	/* a file under the blob's name that is not the blob goes */
	if (lstat(final, &st) == 0 && unlink(final) < 0) {
		ck_fail(res, CK_IO, "%s: %s: %s", fx->it->repo_id, final,
			strerror(errno));
		goto out;
	}
	b.fd = open(part, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (b.fd < 0 || !(b.md = EVP_MD_CTX_new()) || md_start(&b) < 0 ||
		fstat(b.fd, &st) < 0) {
		ck_fail(res, errno == ENOSPC ? CK_DISK_FULL : CK_IO,
			"%s: %s: %s", fx->it->repo_id, part, strerror(errno));
		goto out;
	}
	if ((uint64_t)st.st_size > f->size && restart(&b) < 0) {
		ck_fail(res, CK_IO, "%s: %s: %s", fx->it->repo_id, part,
			strerror(errno));
		goto out;
	}
	if (hash_partial(&b) < 0) {
		ck_fail(res, CK_IO, "%s: %s: %s", fx->it->repo_id, part,
			strerror(errno));
		goto out;
	}
	if (b.have == f->size) {
		char got[65];
		/* a whole partial from a run that stopped before its rename */
		if (md_peek(&b, got) == 0 && !strcmp(got, f->etag)) {
			rc = finish(&b, part, final, res);
			goto out;
		}
		if (restart(&b) < 0) {
			ck_fail(res, CK_IO, "%s: %s: %s", fx->it->repo_id, part,
				strerror(errno));
			goto out;
		}
	}
	if (f->size - b.have >= HASH_THREAD_OVER)
		b.hs = hasher_start(b.md);
	rc = download(&b, part, final, res);
out:
	hasher_stop(b.hs);
	if (b.fd >= 0)
		close(b.fd);
	EVP_MD_CTX_free(b.md);
	close(lfd); /* and with it the lock */
	return rc;
}

/* distinct: the plan's files whose blob no earlier file (in path order)
 * has; a NULL-ended array to free. */
static int
by_etag_then_index(const void *a, const void *b)
{
	const struct hf_file *const *x = a, *const *y = b;
	int c = strcmp((*x)->etag, (*y)->etag);

	return c ? c : (*x < *y ? -1 : *x > *y);
}

static const struct hf_file **
distinct(const struct hf_plan *p)
{
	const struct hf_file **v = emalloc((p->nfiles + 1) * sizeof *v);
	char *keep = ecalloc(p->nfiles + 1, 1);
	size_t n = 0;

	for (size_t i = 0; i < p->nfiles; i++)
		v[i] = &p->files[i];
	qsort(v, p->nfiles, sizeof *v, by_etag_then_index);
	for (size_t i = 0; i < p->nfiles; i++)
		if (i == 0 || strcmp(v[i]->etag, v[i - 1]->etag))
			keep[v[i] - p->files] = 1;
	for (size_t i = 0; i < p->nfiles; i++)
		if (keep[i])
			v[n++] = &p->files[i];
	v[n] = NULL;
	free(keep);
	return v;
}

/* ---- fetching in parallel ------------------------------------------- */

/* The pool of hf_fetch with workers > 1 (see hf.h). One mutex guards it
 * all: the ranges handed out, what each has written, the hash's place;
 * a worker takes it once per write of curl's, never while it reads,
 * hashes or waits on the network. */

enum { R_QUEUED, R_RUNNING, R_DONE };
enum { F_WAIT, F_OPENING, F_OPEN, F_DONE };

struct prange {
	uint64_t start, len, have; /* have: written from start, no gap */
	int state;
	int flushed_mib; /* writeback started up to here (8 MiB) */
};

/* One blob of the pool. */
struct pfile {
	const struct hf_file *f;
	char part[PATH_MAX], final[PATH_MAX];
	int fd, lfd;
	int state;
	int ranges; /* -1 asking (range 0 only), 0 one stream, 1 yes */
	size_t nranges, next, left; /* ranges; the next to hand out; not done */
	struct prange *r;
	char *url; /* where range 0 was answered from */
	EVP_MD_CTX *md;
	uint64_t hashed; /* bytes given to md, from byte 0 */
	size_t hk;       /* the range holding byte hashed */
	int hashing;     /* a worker feeds md now */
	int finishing;   /* a worker checks and renames it */
};

struct pool {
	struct fetch *fx;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pfile *pf;
	size_t n;
	int stop, running;
	uint64_t written;     /* bytes of the blobs on disk now, this call's */
	struct ck_result res; /* the first failure */
};

/* A worker and the range it works on. */
struct worker {
	struct pool *p;
	struct client c;
	pthread_t th;
	struct pfile *pf;
	struct prange *r;
	int started;
	enum ck_reason why;
	char why_msg[300];
	char buf[1 << 18]; /* what it reads back to hash */
};

/* pool_fail records the first failure and stops every worker. Under
 * mu. */
static void
pool_fail(struct pool *p, enum ck_reason why, const char *msg)
{
	if (p->res.reason == CK_OK)
		ck_fail(&p->res, why, "%s", msg);
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
}

static void worker_fail(struct worker *w, enum ck_reason why, const char *fmt,
	...) __attribute__((format(printf, 3, 4)));

static void
worker_fail(struct worker *w, enum ck_reason why, const char *fmt, ...)
{
	va_list ap;

	if (w->why != CK_OK)
		return;
	w->why = why;
	va_start(ap, fmt);
	vsnprintf(w->why_msg, sizeof w->why_msg, fmt, ap);
	va_end(ap);
}

/* pf_md_start (re)starts a file's hash. */
static int
pf_md_start(struct pfile *pf)
{
	struct blob b = {.f = pf->f, .md = pf->md};

	pf->hashed = 0;
	pf->hk = 0;
	return md_start(&b);
}

/* pf_split divides a file into ranges of rb bytes, or one when it is
 * not over twice that. */
static void
pf_split(struct pfile *pf, uint64_t rb)
{
	uint64_t size = pf->f->size;
	size_t n = size > 2 * rb ? (size_t)((size + rb - 1) / rb) : 1;

	pf->r = ecalloc(n, sizeof *pf->r);
	for (size_t i = 0; i < n; i++) {
		pf->r[i].start = i * rb;
		pf->r[i].len = n == 1 ? size : i == n - 1 ? size - i * rb : rb;
	}
	pf->nranges = pf->left = n;
	pf->ranges = n == 1 ? 0 : -1;
}

/* take hands out work: the next range of the first file that has one
 * (a file not opened yet: its range 0, and the opening); NULL when
 * none is left. Waits while a file asks whether ranges are honoured.
 * Under mu. */
static struct pfile *
take(struct pool *p, struct prange **r)
{
	for (;;) {
		int asking = 0;
		if (p->stop)
			return NULL;
		for (size_t i = 0; i < p->n; i++) {
			struct pfile *pf = &p->pf[i];
			if (pf->state == F_WAIT) {
				pf->state = F_OPENING;
				pf->next = 1;
				*r = &pf->r[0];
				pf->r[0].state = R_RUNNING;
				return pf;
			}
			if (pf->state == F_OPENING || pf->ranges < 0) {
				asking |= pf->state != F_DONE;
				continue;
			}
			if (pf->state == F_OPEN && pf->ranges == 1 &&
				pf->next < pf->nranges) {
				*r = &pf->r[pf->next++];
				(*r)->state = R_RUNNING;
				return pf;
			}
		}
		if (!asking)
			return NULL;
		pthread_cond_wait(&p->cv, &p->mu);
	}
}

/* pf_open takes the blob's lock and makes its partial file, of the
 * listed size. 1: another fetch made the blob meanwhile; 0; -1 with w
 * failed. */
static int
pf_open(struct worker *w, struct pfile *pf)
{
	struct fetch *fx = w->p->fx;
	const char *repo = fx->it->repo_id;
	char lock[PATH_MAX];
	struct stat st;

	if (pathf(pf->final, sizeof pf->final, "%s/blobs/%s", fx->r.dir,
		    pf->f->etag) < 0 ||
		pathf(pf->part, sizeof pf->part, "%s.incomplete", pf->final) <
			0 ||
		pathf(lock, sizeof lock, "%s/%s.lock", fx->r.locks,
			pf->f->etag) < 0 ||
		(pf->lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			 0644)) < 0) {
		worker_fail(w, CK_IO, "%s: %s: %s", repo, lock,
			strerror(errno));
		return -1;
	}
	while (flock(pf->lfd, LOCK_EX) < 0 && errno == EINTR)
		;
	if (blob_held(&fx->r, pf->f->etag, pf->f->size))
		return 1;
	if (lstat(pf->final, &st) == 0 && unlink(pf->final) < 0) {
		worker_fail(w, CK_IO, "%s: %s: %s", repo, pf->final,
			strerror(errno));
		return -1;
	}
	/* a partial an earlier call left is started over: its bytes are
	 * not known to be the file's */
	pf->fd = open(pf->part,
		O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (pf->fd < 0 || !(pf->md = EVP_MD_CTX_new()) || pf_md_start(pf) < 0 ||
		(pf->f->size > 0 &&
			fallocate(pf->fd, 0, 0, (off_t)pf->f->size) < 0 &&
			errno != EOPNOTSUPP)) {
		worker_fail(w,
			errno == ENOSPC || errno == EDQUOT ? CK_DISK_FULL
							   : CK_IO,
			"%s: %s: %s", repo, pf->part, strerror(errno));
		return -1;
	}
	return 0;
}

/* pf_finish checks a whole, hashed file, fsyncs it once and gives it
 * the blob's name; fd and lock closed either way. */
static int
pf_finish(struct worker *w, struct pfile *pf)
{
	struct blob b = {.f = pf->f, .md = pf->md};
	const char *repo = w->p->fx->it->repo_id;
	char got[65];
	int rc = 0;

	md_hex(&b, got);
	if (strcmp(got, pf->f->etag)) {
		worker_fail(w, CK_CHECKSUM,
			"%s: %s: checksum mismatch: expected %s %s, got %s",
			repo, pf->f->path,
			pf->f->lfs ? "sha256" : "git blob sha1", pf->f->etag,
			got);
		return -1;
	}
	if (fsync(pf->fd) < 0 || rename(pf->part, pf->final) < 0) {
		worker_fail(w,
			errno == ENOSPC || errno == EDQUOT ? CK_DISK_FULL
							   : CK_IO,
			"%s: %s: rename blobs/%s: %s", repo, pf->f->path,
			pf->f->etag, strerror(errno));
		return -1;
	}
	fsync_dir(w->p->fx->r.dir, "blobs");
	close(pf->fd);
	close(pf->lfd);
	pf->fd = pf->lfd = -1;
	return rc;
}

/* hash_on feeds the file's hash what is written without a gap past
 * what it has, unless another worker does it now; the worker that
 * hashes the last byte of a file whose ranges are all done finishes it.
 * Called with mu held, returns with it held. */
static void
hash_on(struct worker *w, struct pfile *pf)
{
	struct pool *p = w->p;

	while (!pf->hashing && !pf->finishing && !p->stop) {
		uint64_t limit;
		while (pf->hk < pf->nranges &&
			pf->r[pf->hk].have == pf->r[pf->hk].len)
			pf->hk++;
		limit = pf->hk < pf->nranges
			? pf->r[pf->hk].start + pf->r[pf->hk].have
			: pf->f->size;
		if (limit == pf->hashed) {
			if (pf->left > 0 || pf->hashed < pf->f->size)
				return;
			pf->finishing = 1;
			pthread_mutex_unlock(&p->mu);
			int rc = pf_finish(w, pf);
			pthread_mutex_lock(&p->mu);
			if (rc == 0) {
				pf->state = F_DONE;
				pthread_cond_broadcast(&p->cv);
			}
			return;
		}
		pf->hashing = 1;
		uint64_t at = pf->hashed;
		pthread_mutex_unlock(&p->mu);
		while (at < limit) {
			size_t want = limit - at < sizeof w->buf
				? (size_t)(limit - at)
				: sizeof w->buf;
			ssize_t n = pread(pf->fd, w->buf, want, (off_t)at);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				if (n == 0)
					errno = EIO;
				worker_fail(w, CK_IO,
					"%s: %s: read blobs/%s: %s",
					p->fx->it->repo_id, pf->f->path,
					pf->f->etag, strerror(errno));
				break;
			}
			EVP_DigestUpdate(pf->md, w->buf, (size_t)n);
			at += (uint64_t)n;
		}
		pthread_mutex_lock(&p->mu);
		pf->hashed = at;
		pf->hashing = 0;
		if (w->why != CK_OK)
			return;
	}
}

/* range_start checks the answer before its first byte: a range asked
 * must come back as itself (206, Content-Range "bytes A-B/SIZE"); a 200
 * to range 0 makes it the whole file, to another fails. Under mu. */
static int
range_start(struct worker *w)
{
	struct pool *p = w->p;
	struct pfile *pf = w->pf;
	struct prange *r = w->r;
	const char *repo = p->fx->it->repo_id;
	const char *cr = header(&w->c, "Content-Range");
	unsigned long long a, b, size;
	int whole = pf->ranges == 0 && r->have == 0;

	w->started = 1;
	if (w->c.hdr.status == 200) {
		if (whole)
			return 0;
		if (pf->ranges < 0) {
			/* ranges not honoured: one stream of the whole */
			pf->ranges = 0;
			pf->nranges = pf->left = 1;
			r->len = pf->f->size;
			pthread_cond_broadcast(&p->cv);
			return 0;
		}
		if (pf->nranges == 1) {
			/* one stream, asked again from where it stopped and
			 * sent whole: start over */
			p->written -= r->have;
			r->have = 0;
			r->flushed_mib = 0;
			if (pf_md_start(pf) < 0) {
				worker_fail(w, CK_IO, "%s: %s: hash", repo,
					pf->f->path);
				return -1;
			}
			return 0;
		}
		worker_fail(w, CK_SERVER,
			"%s: %s: the server sent the whole file for a range "
			"of it",
			repo, pf->f->path);
		return -1;
	}
	if (w->c.hdr.status != 206)
		return 0;
	if (sscanf(cr, "bytes %llu-%llu/%llu", &a, &b, &size) != 3 ||
		a != r->start + r->have || b != r->start + r->len - 1 ||
		size != pf->f->size) {
		worker_fail(w, CK_SERVER,
			"%s: %s: Content-Range \"%.60s\" for bytes %llu-%llu "
			"of %llu",
			repo, pf->f->path, cr,
			(unsigned long long)(r->start + r->have),
			(unsigned long long)(r->start + r->len - 1),
			(unsigned long long)pf->f->size);
		return -1;
	}
	if (pf->ranges < 0) {
		pf->ranges = 1;
		pf->url = estrdup(w->c.url);
		pthread_cond_broadcast(&p->cv);
	}
	return 0;
}

static int
write_range(void *arg, const char *buf, size_t n)
{
	struct worker *w = arg;
	struct pool *p = w->p;
	struct pfile *pf = w->pf;
	struct prange *r = w->r;
	int rc = 0;

	pthread_mutex_lock(&p->mu);
	if (p->stop || (!w->started && range_start(w) < 0))
		rc = -1;
	else if (r->have + n > r->len) {
		worker_fail(w, CK_CHECKSUM,
			"%s: %s: the server sent more than the %llu bytes the "
			"file list names",
			p->fx->it->repo_id, pf->f->path,
			(unsigned long long)pf->f->size);
		rc = -1;
	}
	pthread_mutex_unlock(&p->mu);
	if (rc < 0)
		return -1;
	for (size_t off = 0; off < n;) {
		ssize_t k = pwrite(pf->fd, buf + off, n - off,
			(off_t)(r->start + r->have + off));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			worker_fail(w,
				errno == ENOSPC || errno == EDQUOT
					? CK_DISK_FULL
					: CK_IO,
				"%s: %s: write blobs/%s: %s",
				p->fx->it->repo_id, pf->f->path, pf->f->etag,
				strerror(errno));
			return -1;
		}
		off += (size_t)k;
	}
	pthread_mutex_lock(&p->mu);
	if (!pf->hashing && !p->stop && pf->hashed == r->start + r->have) {
		/* what extends the hash's place is hashed from here, not
		 * read back */
		pf->hashing = 1;
		pthread_mutex_unlock(&p->mu);
		EVP_DigestUpdate(pf->md, buf, n);
		pthread_mutex_lock(&p->mu);
		pf->hashed += n;
		pf->hashing = 0;
	}
	r->have += n;
	p->written += n;
	p->fx->fetched += n;
	if (r->have >> 23 > (uint64_t)r->flushed_mib) {
		/* the disk writes start now, so that the one fsync at the
		 * end has little left to wait for */
		uint64_t from = (uint64_t)r->flushed_mib << 23;
		r->flushed_mib = (int)(r->have >> 23);
		sync_file_range(pf->fd, (off_t)(r->start + from),
			(off_t)(r->have - from), SYNC_FILE_RANGE_WRITE);
	}
	hash_on(w, pf);
	rc = w->why != CK_OK || p->stop ? -1 : 0;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

static int
on_range_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
	curl_off_t ultotal, curl_off_t ulnow)
{
	struct worker *w = arg;
	int stop;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	pthread_mutex_lock(&w->p->mu);
	stop = w->p->stop;
	pthread_mutex_unlock(&w->p->mu);
	return stop;
}

/* fetch_range gets one range (the whole file when it is one), asked
 * again from where it stopped when cut short. 0, or -1 with w failed
 * (nothing when the pool stopped it). */
static int
fetch_range(struct worker *w)
{
	struct pool *p = w->p;
	struct pfile *pf = w->pf;
	struct prange *r = w->r;
	const char *repo = p->fx->it->repo_id;
	char range[80], nf[300], what[300], *s, *url;
	int tries = 0, whole;
	CURLcode cc;

	s = shown(pf->f->path);
	snprintf(nf, sizeof nf, "%s: file \"%s\" not found at commit %s", repo,
		s, p->fx->plan->commit);
	free(s);
	snprintf(what, sizeof what, "%s: %s", repo, pf->f->path);
	pthread_mutex_lock(&p->mu);
	if (pf->url) {
		url = estrdup(pf->url);
	} else {
		char *epath = pct(pf->f->path, 1);
		url = easprintf("%s/%s/resolve/%s/%s", w->c.endpoint, repo,
			p->fx->plan->commit, epath);
		free(epath);
	}
	pthread_mutex_unlock(&p->mu);
	for (;;) {
		pthread_mutex_lock(&p->mu);
		if (pf->url && strcmp(url, pf->url)) {
			/* asked again: where the first range was answered */
			free(url);
			url = estrdup(pf->url);
		}
		whole = pf->nranges == 1 && r->have == 0;
		snprintf(range, sizeof range, "Range: bytes=%llu-%llu",
			(unsigned long long)(r->start + r->have),
			(unsigned long long)(r->start + r->len - 1));
		pthread_mutex_unlock(&p->mu);
		w->started = 0;
		cc = get(&w->c, url, whole ? NULL : range, write_range, w,
			on_range_progress, w);
		pthread_mutex_lock(&p->mu);
		int stopped = p->stop, done = r->have == r->len;
		pthread_mutex_unlock(&p->mu);
		if (w->why != CK_OK || stopped)
			break;
		long st = w->c.hdr.status;
		if (st >= 200 && st <= 299 && done &&
			(cc == CURLE_OK || cc == CURLE_PARTIAL_FILE))
			break;
		if (st >= 200 && st <= 299 &&
			(cc == CURLE_OK || cc == CURLE_PARTIAL_FILE ||
				cc == CURLE_RECV_ERROR ||
				cc == CURLE_GOT_NOTHING) &&
			++tries <= 2)
			continue; /* cut short: the rest */
		if ((st >= 200 && st <= 299 &&
			    (cc == CURLE_OK || cc == CURLE_PARTIAL_FILE ||
				    cc == CURLE_RECV_ERROR ||
				    cc == CURLE_GOT_NOTHING)) ||
			(st == 416 && tries > 0))
			/* a 416 to the rest: the file ends before its size */
			worker_fail(w, CK_TRUNCATED,
				"%s: %s: got %llu of %llu bytes", repo,
				pf->f->path,
				(unsigned long long)(r->start + r->have),
				(unsigned long long)pf->f->size);
		else if (st >= 200 && st <= 299 &&
			cc == CURLE_OPERATION_TIMEDOUT)
			worker_fail(w, CK_TIMEOUT,
				"%s: %s: no progress for %ld s, got %llu of "
				"%llu bytes",
				repo, pf->f->path, w->c.timeout,
				(unsigned long long)(r->start + r->have),
				(unsigned long long)pf->f->size);
		else if (cc != CURLE_OK) {
			struct ck_result res = {0};
			transport_fail(&w->c, cc, what, &res);
			worker_fail(w, res.reason, "%s", res.message);
		} else if (st >= 300 && st <= 399) {
			worker_fail(w, CK_SERVER, "%s: over %d redirects", what,
				MAX_REDIRECTS);
		} else {
			struct ck_result res = {0};
			http_fail(&w->c, what, nf, &res);
			worker_fail(w, res.reason, "%s", res.message);
		}
		break;
	}
	free(url);
	return w->why == CK_OK ? 0 : -1;
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->p;
	struct pfile *pf;

	pthread_mutex_lock(&p->mu);
	while ((pf = take(p, &w->r))) {
		int rc = 0;
		w->pf = pf;
		pthread_mutex_unlock(&p->mu);
		if (w->r == &pf->r[0] && (rc = pf_open(w, pf)) == 1) {
			pthread_mutex_lock(&p->mu);
			/* another fetch made it: as if this one had */
			p->written += pf->f->size;
			pf->state = F_DONE;
			pthread_cond_broadcast(&p->cv);
			continue;
		}
		if (rc == 0) {
			pthread_mutex_lock(&p->mu);
			if (pf->state == F_OPENING)
				pf->state = F_OPEN;
			pthread_mutex_unlock(&p->mu);
			rc = fetch_range(w);
		}
		pthread_mutex_lock(&p->mu);
		if (rc == 0 && !p->stop) {
			w->r->state = R_DONE;
			pf->left--;
			hash_on(w, pf);
		}
		if (w->why != CK_OK)
			pool_fail(p, w->why, w->why_msg);
	}
	p->running--;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* pool_fetch fetches the blobs todo names that are not held, with
 * fx->it->workers threads; the caller's progress from this thread. */
static int
pool_fetch(struct fetch *fx, const struct hf_file **todo, struct ck_result *res)
{
	struct pool p = {.fx = fx};
	struct worker *ws;
	uint64_t rb = fx->it->range_bytes ? fx->it->range_bytes : 32 << 20;
	rb = rb < 65536 ? 65536 : rb;
	uint64_t need = 0, avail, total;
	size_t nw = (size_t)fx->it->workers, chunks = 0, started = 0;
	char blobs[PATH_MAX];
	struct timespec until;

	for (size_t i = 0; todo[i]; i++)
		if (!blob_held(&fx->r, todo[i]->etag, todo[i]->size))
			p.n++;
	p.pf = ecalloc(p.n ? p.n : 1, sizeof *p.pf);
	p.n = 0;
	for (size_t i = 0; todo[i]; i++) {
		if (blob_held(&fx->r, todo[i]->etag, todo[i]->size))
			continue;
		struct pfile *pf = &p.pf[p.n++];
		pf->f = todo[i];
		pf->fd = pf->lfd = -1;
		pf_split(pf, rb);
		chunks += pf->nranges;
		need += todo[i]->size;
	}
	if (jpath(blobs, sizeof blobs, fx->r.dir, "blobs") == 0 &&
		ck_fs_space(blobs, &avail, &total) == 0 && avail < need) {
		char a[16], b[16];
		ck_fail(res, CK_DISK_FULL, "%s: %s to download, %s free in %s",
			fx->it->repo_id, ck_bytes(need, a), ck_bytes(avail, b),
			blobs);
		goto out;
	}
	if (nw > chunks)
		nw = chunks;
	ws = ecalloc(nw ? nw : 1, sizeof *ws);
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	for (; started < nw; started++) {
		ws[started].p = &p;
		if (client_init(&ws[started].c, fx->it) < 0 ||
			pthread_create(&ws[started].th, NULL, worker_main,
				&ws[started]) != 0) {
			client_free(&ws[started].c);
			break;
		}
		pthread_mutex_lock(&p.mu);
		p.running++;
		pthread_mutex_unlock(&p.mu);
	}
	if (started == 0 && nw > 0) {
		pthread_mutex_lock(&p.mu);
		pool_fail(&p, CK_IO, "no thread for the download");
		pthread_mutex_unlock(&p.mu);
	}
	pthread_mutex_lock(&p.mu);
	while (p.running > 0) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += PROGRESS_EVERY_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p.cv, &p.mu, &until);
		uint64_t extra = p.written;
		pthread_mutex_unlock(&p.mu);
		int stop = report(fx, extra, 0);
		pthread_mutex_lock(&p.mu);
		if (stop && !p.stop) {
			char m[300];
			snprintf(m, sizeof m, "%s: stopped", fx->it->repo_id);
			pool_fail(&p, CK_CANCELLED, m);
		}
	}
	pthread_mutex_unlock(&p.mu);
	for (size_t i = 0; i < started; i++) {
		pthread_join(ws[i].th, NULL);
		client_free(&ws[i].c);
	}
	free(ws);
	pthread_mutex_destroy(&p.mu);
	pthread_cond_destroy(&p.cv);
	if (p.res.reason != CK_OK)
		*res = p.res;
	else
		fx->done += p.written;
out:
	/* whatever is not renamed goes: no partial stays */
	for (size_t i = 0; i < p.n; i++) {
		struct pfile *pf = &p.pf[i];
		if (pf->fd >= 0) {
			unlink(pf->part);
			close(pf->fd);
		}
		if (pf->lfd >= 0)
			close(pf->lfd);
		EVP_MD_CTX_free(pf->md);
		free(pf->r);
		free(pf->url);
	}
	free(p.pf);
	return res->reason == CK_OK ? 0 : -1;
}

/* ---- writing a snapshot --------------------------------------------- */

/* swap_link points the symlink at path to target, as ck_swap_symlink
 * does, and leaves a link that already points there untouched. */
static int
swap_link(const char *path, const char *target)
{
	char cur[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		n = readlink(path, cur, sizeof cur - 1);
		if (n >= 0 && (size_t)n == strlen(target) &&
			!memcmp(cur, target, (size_t)n))
			return 0;
	}
	return ck_swap_symlink(path, target);
}

static int
io_fail(struct ck_result *res, const char *repo_id, const char *path)
{
	return ck_fail(res,
		errno == ENOSPC || errno == EDQUOT ? CK_DISK_FULL : CK_IO,
		"%s: %s: %s", repo_id, path, strerror(errno));
}

/* write_links makes snapshots/COMMIT/PATH -> ../../blobs/ETAG for every
 * file (one more ../ per directory in PATH). */
static int
write_links(struct fetch *fx, struct ck_result *res)
{
	const struct hf_plan *p = fx->plan;
	char rel[PATH_MAX], snap[PATH_MAX], link[PATH_MAX], dir[PATH_MAX];
	char target[PATH_MAX];

	snprintf(rel, sizeof rel, "snapshots/%s", p->commit);
	if (jpath(snap, sizeof snap, fx->r.dir, rel) < 0 ||
		mkdirs_in(fx->r.dir, rel) < 0)
		return io_fail(res, fx->it->repo_id, snap);
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct hf_file *f = &p->files[i];
		size_t len = 0;
		len += (size_t)snprintf(target, sizeof target, "../../");
		for (const char *c = f->path; *c; c++)
			if (*c == '/' && len + 3 < sizeof target)
				len += (size_t)snprintf(target + len,
					sizeof target - len, "../");
		snprintf(target + len, sizeof target - len, "blobs/%s",
			f->etag);
		parent_dir_of(f->path, dir, sizeof dir);
		if (jpath(link, sizeof link, snap, f->path) < 0) {
			errno = ENAMETOOLONG;
			return io_fail(res, fx->it->repo_id, f->path);
		}
		if ((*dir && mkdirs_in(snap, dir) < 0) ||
			swap_link(link, target) < 0)
			return io_fail(res, fx->it->repo_id, link);
	}
	fsync_dir(fx->r.dir, rel);
	return 0;
}

/* trees_json: huggingface_hub's trees/COMMIT.json (format_version 1),
 * laid out as it writes it (json.dump, indent 1, files sorted). */
static char *
trees_json(const struct hf_plan *p)
{
	json_t *files = json_object(), *top;
	char *s;

	for (size_t i = 0; i < p->nfiles; i++) {
		const struct hf_file *f = &p->files[i];
		json_t *e = json_pack("{s:I,s:s}", "size", (json_int_t)f->size,
			"blob_id", f->blob_id);
		if (f->lfs) {
			json_object_set_new(e, "lfs_sha256",
				json_string(f->etag));
			json_object_set_new(e, "lfs_size",
				json_integer((json_int_t)f->size));
		}
		json_object_set_new(files, f->path, e);
	}
	top = json_pack("{s:i,s:o}", "format_version", 1, "files", files);
	s = json_dumps(top,
		JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	json_decref(top);
	if (!s)
		err_die(HAZ_FAIL, "json_dumps failed");
	return s;
}

/* write_snapshot: the links, then the trees file, then the ref, so that
 * a reader following the ref finds everything; under the repository's
 * snapshot lock, since two revisions may name one commit. */
static int
write_snapshot(struct fetch *fx, const char *rev, struct ck_result *res)
{
	const struct hf_plan *p = fx->plan;
	const char *repo = fx->it->repo_id;
	char path[PATH_MAX], dir[PATH_MAX], rel[PATH_MAX], *trees;
	int lfd, rc = -1;

	if (pathf(path, sizeof path, "%s/.snapshots.lock", fx->r.locks) < 0 ||
		(lfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			 0644)) < 0)
		return io_fail(res, repo, path);
	while (flock(lfd, LOCK_EX) < 0 && errno == EINTR)
		;
	if (write_links(fx, res) < 0)
		goto out;
	trees = trees_json(p);
	if (pathf(path, sizeof path, "%s/trees/%s.json", fx->r.dir, p->commit) <
			0 ||
		mkdirs_in(fx->r.dir, "trees") < 0 ||
		ck_write_atomic(path, trees, strlen(trees)) < 0) {
		free(trees);
		io_fail(res, repo, path);
		goto out;
	}
	free(trees);
	parent_dir_of(rev, dir, sizeof dir);
	if (pathf(rel, sizeof rel, "refs%s%s", *dir ? "/" : "", dir) < 0 ||
		pathf(path, sizeof path, "%s/refs/%s", fx->r.dir, rev) < 0 ||
		mkdirs_in(fx->r.dir, rel) < 0 ||
		ck_write_atomic(path, p->commit, 40) < 0) {
		io_fail(res, repo, path);
		goto out;
	}
	rc = 0;
out:
	close(lfd);
	return rc;
}

int
hf_fetch(const struct hf_item *it, const struct hf_plan *plan,
	ck_progress_fn *progress, void *arg, struct ck_result *res)
{
	struct fetch fx = {.it = it,
		.plan = plan,
		.progress = progress,
		.arg = arg};
	const struct hf_file **todo = NULL;
	const char *rev;
	char blobs[PATH_MAX];
	int rc = -1;

	memset(res, 0, sizeof *res);
	if (check_item(it, &rev, &fx.r, res) < 0)
		return -1;
	if (!is_hex(plan->commit, 40))
		return ck_fail(res, CK_INVALID, "%s: the plan has no commit",
			it->repo_id);
	if (client_init(&fx.c, it) < 0) {
		ck_fail(res, CK_INVALID, "%s: the endpoint is not a URL",
			it->repo_id);
		goto out;
	}
	if (jpath(blobs, sizeof blobs, fx.r.dir, "blobs") < 0 ||
		ck_mkdirs(blobs, 0755) < 0 || ck_mkdirs(fx.r.locks, 0755) < 0) {
		io_fail(res, it->repo_id, blobs);
		goto out;
	}
	todo = distinct(plan);
	for (size_t i = 0; todo[i]; i++)
		if (blob_held(&fx.r, todo[i]->etag, todo[i]->size))
			fx.done += todo[i]->size;
	report(&fx, 0, 1);
	if (it->workers > 1) {
		if (pool_fetch(&fx, todo, res) < 0)
			goto out;
		report(&fx, 0, 1);
	}
	for (size_t i = 0; todo[i] && !fx.cancelled && it->workers <= 1; i++) {
		if (blob_held(&fx.r, todo[i]->etag, todo[i]->size))
			continue;
		if (fetch_blob(&fx, todo[i], res) < 0)
			goto out;
		fx.done += todo[i]->size;
		report(&fx, 0, 1);
	}
	if (fx.cancelled) {
		ck_fail(res, CK_CANCELLED, "%s: stopped", it->repo_id);
		goto out;
	}
	if (write_snapshot(&fx, rev, res) < 0)
		goto out;
	snprintf(res->resolved, sizeof res->resolved, "%s", plan->commit);
	res->bytes = plan->total;
	rc = 0;
out:
	res->fetched = fx.fetched;
	free(todo);
	client_free(&fx.c);
	return rc;
}

/* ---- reading and removing what the cache holds ----------------------- */

/* read_ref reads a ref file: exactly 40 hex digits, as huggingface_hub
 * writes one (and reads it, newline and all). */
static int
read_ref(int dfd, const char *name, char commit[41])
{
	char buf[64];
	ssize_t n;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n != 40)
		return -1;
	buf[40] = 0;
	if (!is_hex(buf, 40))
		return -1;
	memcpy(commit, buf, 41);
	return 0;
}

int
hf_present(const char *hub, const char *repo_id, const char *revision,
	char commit[41])
{
	struct repo r;
	char path[PATH_MAX], c[41];
	json_t *j, *files, *v;
	const char *k;
	int ok;

	if (!revision)
		revision = "main";
	if (!hub || repo_paths(hub, repo_id, &r) < 0 ||
		!hf_revision_ok(revision) ||
		pathf(path, sizeof path, "%s/refs/%s", r.dir, revision) < 0 ||
		read_ref(AT_FDCWD, path, c) < 0)
		return -1;
	if (pathf(path, sizeof path, "%s/trees/%s.json", r.dir, c) < 0 ||
		!(j = json_load_file(path, 0, NULL)))
		return -1;
	files = json_object_get(j, "files");
	ok = json_integer_value(json_object_get(j, "format_version")) == 1 &&
		json_is_object(files);
	json_object_foreach(files, k, v) {
		struct stat st;
		json_t *size = json_object_get(v, "size");
		if (!ok)
			break;
		ok = !path_unsafe(k, strlen(k)) && json_is_integer(size) &&
			pathf(path, sizeof path, "%s/snapshots/%s/%s", r.dir, c,
				k) == 0 &&
			stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
			st.st_size == json_integer_value(size);
	}
	json_decref(j);
	if (!ok)
		return -1;
	memcpy(commit, c, 41);
	return 0;
}

/* A sorted set of names. */
struct names {
	char **v;
	size_t n, cap;
};

static void
names_add(struct names *s, const char *x)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = erealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = estrdup(x);
}

static int
by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
names_sort(struct names *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof *s->v, by_str);
}

static int
names_has(const struct names *s, const char *x)
{
	return s->n && bsearch(&x, s->v, s->n, sizeof *s->v, by_str);
}

static void
names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

/* walk calls fn for every entry under dfd/name, depth first, never
 * following a symlink; a directory comes after what it holds. */
typedef int walk_fn(int dfd, const char *name, const struct stat *st,
	void *arg);

static int
walk(int dfd, const char *name, walk_fn *fn, void *arg)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (S_ISDIR(st.st_mode)) {
		fd = openat(dfd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || !(d = fdopendir(fd))) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
		while (rc == 0 && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				rc = walk(dirfd(d), de->d_name, fn, arg);
		closedir(d);
		if (rc < 0)
			return rc;
	}
	return fn(dfd, name, &st, arg);
}

static int
add_ref(int dfd, const char *name, const struct stat *st, void *arg)
{
	char c[41];

	if (S_ISREG(st->st_mode) && read_ref(dfd, name, c) == 0)
		names_add(arg, c);
	return 0;
}

static int
add_blob(int dfd, const char *name, const struct stat *st, void *arg)
{
	char target[PATH_MAX];
	const char *b;
	ssize_t n;

	if (!S_ISLNK(st->st_mode))
		return 0;
	n = readlinkat(dfd, name, target, sizeof target - 1);
	if (n < 0)
		return 0;
	target[n] = 0;
	if ((b = strstr(target, "blobs/")))
		names_add(arg, b + strlen("blobs/"));
	return 0;
}

/* rmdir_empty drops empty directories (a ref's parents) bottom up. */
static int
rmdir_empty(int dfd, const char *name, const struct stat *st, void *arg)
{
	(void)arg;
	if (S_ISDIR(st->st_mode))
		unlinkat(dfd, name, AT_REMOVEDIR); /* fails when not empty */
	return 0;
}

/* list_dir gives the names in dir (none when it does not exist). */
static int
list_dir(const char *dir, struct names *out)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			names_add(out, de->d_name);
	closedir(d);
	names_sort(out);
	return 0;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* prune: see hf_prune. */
static int
prune(const char *hub, const struct repo *r, const char *repo_id,
	struct ck_result *res)
{
	struct names refs = {0}, used = {0}, snaps = {0}, trees = {0},
		     blobs = {0};
	char dir[PATH_MAX], p[PATH_MAX];
	int rc = -1;

	jpath(dir, sizeof dir, r->dir, "refs");
	if (walk(AT_FDCWD, dir, add_ref, &refs) < 0) {
		io_fail(res, repo_id, dir);
		goto out;
	}
	names_sort(&refs);
	jpath(dir, sizeof dir, r->dir, "snapshots");
	if (list_dir(dir, &snaps) < 0) {
		io_fail(res, repo_id, dir);
		goto out;
	}
	for (size_t i = 0; i < snaps.n; i++) {
		jpath(p, sizeof p, dir, snaps.v[i]);
		if (names_has(&refs, snaps.v[i]))
			walk(AT_FDCWD, p, add_blob, &used);
		else if (ck_rmtree(p) < 0) {
			io_fail(res, repo_id, p);
			goto out;
		}
	}
	names_sort(&used);
	jpath(dir, sizeof dir, r->dir, "trees");
	if (list_dir(dir, &trees) < 0) {
		io_fail(res, repo_id, dir);
		goto out;
	}
	for (size_t i = 0; i < trees.n; i++) {
		char c[41];
		snprintf(c, sizeof c, "%s", trees.v[i]);
		if (strlen(trees.v[i]) == 45 &&
			ends_with(trees.v[i], ".json") && names_has(&refs, c))
			continue;
		jpath(p, sizeof p, dir, trees.v[i]);
		if (unlink(p) < 0 && errno != ENOENT) {
			io_fail(res, repo_id, p);
			goto out;
		}
	}
	jpath(dir, sizeof dir, r->dir, "blobs");
	if (list_dir(dir, &blobs) < 0) {
		io_fail(res, repo_id, dir);
		goto out;
	}
	for (size_t i = 0; i < blobs.n; i++) {
		/* partial downloads stay for the next fetch to resume */
		if (ends_with(blobs.v[i], ".incomplete") ||
			names_has(&used, blobs.v[i]))
			continue;
		jpath(p, sizeof p, dir, blobs.v[i]);
		if (unlink(p) < 0 && errno != ENOENT) {
			io_fail(res, repo_id, p);
			goto out;
		}
		/* no fetch runs now (hf.h): its lock can go with it */
		if (pathf(p, sizeof p, "%s/%s.lock", r->locks, blobs.v[i]) == 0)
			unlink(p);
	}
	if (refs.n == 0) {
		if (ck_rmtree(r->dir) < 0) {
			io_fail(res, repo_id, r->dir);
			goto out;
		}
		ck_rmtree(r->locks);
		if (jpath(p, sizeof p, hub, ".locks") == 0)
			rmdir(p); /* when no other repository has locks there */
	}
	rc = 0;
out:
	names_free(&refs);
	names_free(&used);
	names_free(&snaps);
	names_free(&trees);
	names_free(&blobs);
	return rc;
}

static int
check_repo(const char *hub, const char *repo_id, struct repo *r,
	struct ck_result *res)
{
	char *s;

	memset(res, 0, sizeof *res);
	if (hub && repo_paths(hub, repo_id, r) == 0)
		return 0;
	s = shown(repo_id ? repo_id : "");
	ck_fail(res, CK_INVALID, "repo id \"%s\" is not ORG/NAME or NAME", s);
	free(s);
	return -1;
}

int
hf_prune(const char *hub, const char *repo_id, struct ck_result *res)
{
	struct repo r;
	struct stat st;

	if (check_repo(hub, repo_id, &r, res) < 0)
		return -1;
	if (lstat(r.dir, &st) < 0 && errno == ENOENT)
		return 0;
	return prune(hub, &r, repo_id, res);
}

int
hf_remove(const char *hub, const char *repo_id, const char *revision,
	struct ck_result *res)
{
	struct repo r;
	struct stat st;
	char p[PATH_MAX], *s;

	if (check_repo(hub, repo_id, &r, res) < 0)
		return -1;
	if (!revision)
		revision = "main";
	if (!hf_revision_ok(revision)) {
		s = shown(revision);
		ck_fail(res, CK_INVALID,
			"%s: revision \"%s\" cannot name a ref", repo_id, s);
		free(s);
		return -1;
	}
	if (lstat(r.dir, &st) < 0 && errno == ENOENT)
		return 0;
	if (pathf(p, sizeof p, "%s/refs/%s", r.dir, revision) < 0 ||
		(unlink(p) < 0 && errno != ENOENT))
		return io_fail(res, repo_id, p);
	/* refs/refs/pr/1 leaves refs/refs/pr behind */
	if (jpath(p, sizeof p, r.dir, "refs") == 0)
		walk(AT_FDCWD, p, rmdir_empty, NULL);
	return prune(hub, &r, repo_id, res);
}
