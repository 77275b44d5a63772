/* http: the HTTP layer the clients share (see http.h). Sections: setup;
 * header fields; the verdict; Retry-After and URLs. */
#include "http.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "err.h"
#include "noproxy.h"

/* ---- setup ---------------------------------------------------------- */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void
global_cleanup(void)
{
	curl_global_cleanup();
}

static void
global_init(void)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		err_die(HAZ_FAIL, "curl_global_init failed");
	atexit(global_cleanup);
}

void
http_global_init(void)
{
	pthread_once(&global_once, global_init);
}

static void
set_timeouts(CURL *h, const struct http_opts *o)
{
	if (o->connect_ms)
		curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, o->connect_ms);
	if (o->timeout_ms)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, o->timeout_ms);
	if (o->stall_s) {
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, o->stall_s);
	}
	if (o->keepidle_s) {
		curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
		curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, o->keepidle_s);
		curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, o->keepintvl_s);
	}
}

void
http_setup(CURL *h, const char *url, const struct http_opts *o)
{
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	if (o->errbuf) {
		o->errbuf[0] = '\0';
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, o->errbuf);
	}
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, o->agent);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (o->follow) {
		curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
		curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
		curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "https");
	}
	set_timeouts(h, o);
	noproxy_loopback(h);
	if (o->headers) {
		http_headers_clear(o->headers);
		curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, http_headers_cb);
		curl_easy_setopt(h, CURLOPT_HEADERDATA, o->headers);
	}
}

/* ---- header fields -------------------------------------------------- */

void
http_headers_clear(struct http_headers *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->f[i].name);
		free(h->f[i].value);
	}
	free(h->f);
	memset(h, 0, sizeof *h);
}

static int
is_tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* status_line takes "HTTP/V NNN reason": a new answer begins. */
static void
status_line(struct http_headers *h, const char *p, size_t len)
{
	size_t i = 5;

	http_headers_clear(h);
	while (i < len && !is_blank(p[i]))
		i++;
	while (i < len && p[i] == ' ')
		i++;
	if (i + 3 <= len && isdigit((unsigned char)p[i]) &&
		isdigit((unsigned char)p[i + 1]) &&
		isdigit((unsigned char)p[i + 2]) &&
		(i + 3 == len || !isdigit((unsigned char)p[i + 3])))
		h->status = (p[i] - '0') * 100 + (p[i + 1] - '0') * 10 +
			(p[i + 2] - '0');
}

/* value_copy copies a value of len bytes, its control characters but
 * TAB made spaces first, then blanks around it left out. */
static char *
value_copy(const char *p, size_t len)
{
	char *v = emalloc(len + 1), *s = v;
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];
		v[i] = (c < ' ' && c != '\t') || c == 0x7f ? ' ' : (char)c;
	}
	while (len && is_blank(v[len - 1]))
		len--;
	v[len] = '\0';
	while (is_blank(*s))
		s++;
	if (s != v)
		memmove(v, s, strlen(s) + 1);
	return v;
}

/* drop_last forgets the last field (one whose continuation did not
 * fit). */
static void
drop_last(struct http_headers *h)
{
	struct http_field *f = &h->f[--h->n];

	h->bytes -= strlen(f->name) + strlen(f->value);
	free(f->name);
	free(f->value);
}

/* extend joins a continuation line to the last field. */
static void
extend(struct http_headers *h, const char *p, size_t len)
{
	struct http_field *f = &h->f[h->n - 1];
	char *more = value_copy(p, len), *v;
	size_t add = strlen(more) + (*more ? 1 : 0);

	if (h->bytes + add > HTTP_MAX_BYTES) {
		free(more);
		drop_last(h);
		h->dropped++;
		h->can_extend = 0;
		return;
	}
	if (*more) {
		v = easprintf("%s%s%s", f->value, *f->value ? " " : "", more);
		free(f->value);
		f->value = v;
		h->bytes += add;
	}
	free(more);
}

/* field adds "name: value"; 0, or -1 when the line is to be dropped. */
static int
field(struct http_headers *h, const char *p, size_t len)
{
	size_t n = 0;
	char *value;

	while (n < len && is_tchar((unsigned char)p[n]))
		n++;
	if (n == 0 || n == len || p[n] != ':' || h->n >= HTTP_MAX_FIELDS)
		return -1;
	value = value_copy(p + n + 1, len - n - 1);
	if (h->bytes + n + strlen(value) > HTTP_MAX_BYTES) {
		free(value);
		return -1;
	}
	h->f = erealloc(h->f, (h->n + 1) * sizeof *h->f);
	h->f[h->n].name = easprintf("%.*s", (int)n, p);
	h->f[h->n].value = value;
	h->n++;
	h->bytes += n + strlen(value);
	return 0;
}

void
http_headers_line(struct http_headers *h, const char *p, size_t len)
{
	if (len && p[len - 1] == '\n')
		len--;
	if (len && p[len - 1] == '\r')
		len--;
	if (len >= 5 && !memcmp(p, "HTTP/", 5)) {
		status_line(h, p, len);
	} else if (len == 0) {
		h->can_extend = 0; /* the end of the header */
	} else if (is_blank(*p)) {
		if (h->can_extend)
			extend(h, p, len);
		else
			h->dropped++;
	} else if (field(h, p, len) < 0) {
		h->dropped++;
		h->can_extend = 0;
	} else {
		h->can_extend = 1;
	}
}

size_t
http_headers_cb(char *p, size_t size, size_t n, void *arg)
{
	http_headers_line(arg, p, size * n);
	return size * n;
}

const char *
http_header(const struct http_headers *h, const char *name)
{
	for (size_t i = h->n; i-- > 0;)
		if (!strcasecmp(h->f[i].name, name))
			return h->f[i].value;
	return NULL;
}

char *
http_header_list(const struct http_headers *h, const char *name)
{
	char *out = NULL, *s;

	for (size_t i = 0; i < h->n; i++) {
		if (strcasecmp(h->f[i].name, name))
			continue;
		s = out ? easprintf("%s, %s", out, h->f[i].value)
			: estrdup(h->f[i].value);
		free(out);
		out = s;
	}
	return out;
}

/* ---- the verdict ---------------------------------------------------- */

/* transport judges a transfer curl gave up on. */
static enum http_verdict
transport(CURLcode rc)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT: return HTTP_V_TIMEOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SEND_ERROR: return HTTP_V_UNREACHABLE;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CLIENTCERT: return HTTP_V_UNTRUSTED;
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_BAD_FUNCTION_ARGUMENT:
	case CURLE_UNKNOWN_OPTION:
	case CURLE_NOT_BUILT_IN:
	case CURLE_FAILED_INIT:
	case CURLE_OUT_OF_MEMORY:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_ENGINE_INITFAILED: return HTTP_V_LOCAL;
	case CURLE_ABORTED_BY_CALLBACK: return HTTP_V_STOPPED;
	default: return HTTP_V_BROKEN;
	}
}

enum http_verdict
http_classify(CURLcode rc, long status)
{
	if (rc != CURLE_OK)
		return transport(rc);
	if (status >= 200 && status <= 299)
		return HTTP_V_OK;
	/* too many requests, the server's own trouble, or its request
	 * timeout (408): the same request may pass later */
	if (status == 408 || status == 429 || status >= 500)
		return HTTP_V_BUSY;
	return HTTP_V_REFUSED;
}

enum http_class
http_class(enum http_verdict v)
{
	switch (v) {
	case HTTP_V_OK: return HTTP_OK;
	case HTTP_V_TIMEOUT:
	case HTTP_V_UNREACHABLE:
	case HTTP_V_BROKEN:
	case HTTP_V_BUSY: return HTTP_RETRY;
	default: return HTTP_PERMANENT;
	}
}

const char *
http_verdict_name(enum http_verdict v)
{
	static const char *const names[] = {
		[HTTP_V_OK] = "ok",
		[HTTP_V_TIMEOUT] = "timeout",
		[HTTP_V_UNREACHABLE] = "unreachable",
		[HTTP_V_BROKEN] = "broken",
		[HTTP_V_BUSY] = "busy",
		[HTTP_V_UNTRUSTED] = "untrusted",
		[HTTP_V_LOCAL] = "local",
		[HTTP_V_STOPPED] = "stopped",
		[HTTP_V_REFUSED] = "refused",
	};

	return v <= HTTP_V_REFUSED ? names[v] : "unknown";
}

const char *
http_class_name(enum http_class c)
{
	return c == HTTP_OK ? "ok" : c == HTTP_RETRY ? "retry" : "permanent";
}

/* ---- Retry-After and URLs ------------------------------------------- */

/* seconds parses DIGITS [. DIGITS] and blanks after; -1 otherwise. */
static double
seconds(const char *v)
{
	const char *p = v;

	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.' && isdigit((unsigned char)p[1]))
		for (p++; isdigit((unsigned char)*p);)
			p++;
	while (is_blank(*p) || *p == '\r' || *p == '\n')
		p++;
	return *p ? -1 : strtod(v, NULL);
}

double
http_retry_after(const char *v, double now)
{
	time_t t;

	while (is_blank(*v))
		v++;
	if (isdigit((unsigned char)*v))
		return seconds(v);
	if (!*v || (t = curl_getdate(v, NULL)) < 0)
		return -1;
	return (double)t > now ? (double)t - now : 0;
}

char *
http_origin(const char *url)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *out = NULL;

	if (!u)
		return NULL;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
		curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
		curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
		curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
			CURLUE_OK) {
		for (char *p = host; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
		out = easprintf("%s://%s:%s", scheme, host, port);
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return out;
}

char *
http_url_join(const char *base, const char *ref)
{
	CURLU *u = curl_url();
	char *s = NULL, *out = NULL;

	if (!u)
		return NULL;
	if (curl_url_set(u, CURLUPART_URL, base, 0) == CURLUE_OK &&
		curl_url_set(u, CURLUPART_URL, ref, 0) == CURLUE_OK &&
		curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK)
		out = estrdup(s);
	curl_free(s);
	curl_url_cleanup(u);
	return out;
}
