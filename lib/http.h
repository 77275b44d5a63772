/* http: what every HTTP client of the tools (kube, hf, registry,
 * alert_post) shares over libcurl: libcurl's one-time setup, an easy
 * handle's common options, the answer's header fields, Retry-After, the
 * origin a redirect may keep credentials for, and the one verdict on a
 * finished transfer: done, worth retrying, or not.
 *
 * The verdict (http_classify) from curl's code, else the HTTP status:
 *	ok          2xx
 *	retry       timed out; DNS, connect, TLS handshake or send failed;
 *	            the answer broke off or was not HTTP (any code not
 *	            named below); 408, 429 or 5xx
 *	permanent   the peer's certificate failed verification, or the
 *	            CA file, the client certificate, a pinned key or the
 *	            certificate status refused it; a bad URL, a protocol
 *	            not built in, a bad option, no memory, a cipher or
 *	            engine not there; the caller's callback stopped the
 *	            transfer; any other status (4xx, a final 1xx or 3xx)
 * A certificate that fails verification is never worth another try: the
 * same server presents the same certificate.
 *
 * Threads: http_global_init may be called from any thread, any number of
 * times: libcurl is set up once (pthread_once) and cleaned up at exit.
 * Every client calls it before its first handle, so that clients made in
 * several threads at once are safe. A curl handle and the struct
 * http_headers it fills are used by one thread at a time. The other
 * functions keep no state. */
#ifndef HAZ_HTTP_H
#define HAZ_HTTP_H

#include <stddef.h>

#include <curl/curl.h>

/* http_global_init runs curl_global_init once per process and registers
 * curl_global_cleanup with atexit; it dies (status 1) when libcurl
 * cannot start. */
void http_global_init(void);

/* ---- the answer's header fields ------------------------------------ */

/* The most fields, and bytes of names and values, kept of one answer;
 * the fields past them are dropped. */
#define HTTP_MAX_FIELDS 100
#define HTTP_MAX_BYTES 65536

struct http_field {
	char *name;  /* as sent; compare without case */
	char *value; /* without surrounding blanks, continuations joined */
};

/* The header of the last answer of a transfer: a status line starts a
 * new one (a redirect's, a 100 Continue's answer are forgotten). A line
 * whose name is empty, not a token or not followed at once by ':', or
 * that would pass HTTP_MAX_FIELDS or HTTP_MAX_BYTES, is dropped and
 * counted. In a value, CR, NUL and every other control character but
 * TAB become a space; bytes over 127 are kept. A line that starts with
 * a space or TAB continues the field before it, joined by one space
 * (nothing when the field before was dropped). Zero-initialise; free
 * with http_headers_clear. */
struct http_headers {
	long status; /* of the last status line, 0 before one */
	size_t n;    /* fields */
	struct http_field *f;
	size_t bytes;   /* of names and values kept */
	long dropped;   /* lines dropped since the status line */
	int can_extend; /* the last line added a field */
};

/* http_headers_clear frees every field and zeroes h. */
void http_headers_clear(struct http_headers *h);

/* http_headers_line takes one line as curl hands it to a header
 * callback (len bytes, "\r\n" or "\n" ended, or neither). */
void http_headers_line(struct http_headers *h, const char *line, size_t len);

/* http_headers_cb is a CURLOPT_HEADERFUNCTION whose data is a struct
 * http_headers. */
size_t http_headers_cb(char *p, size_t size, size_t n, void *arg);

/* http_header returns the value of the last field named name (any
 * case), or NULL: a field sent twice counts once, as its last. */
const char *http_header(const struct http_headers *h, const char *name);

/* http_header_list returns every value of the fields named name joined
 * by ", " (a list field sent as several lines), malloc'd, or NULL. */
char *http_header_list(const struct http_headers *h, const char *name);

/* ---- the easy handle ------------------------------------------------ */

/* What http_setup sets besides the URL. Zero means curl's default. */
struct http_opts {
	const char *agent; /* User-Agent: "tool/VERSION" */
	char *errbuf;      /* CURL_ERROR_SIZE bytes for curl's message */
	long connect_ms;   /* the connection, TLS included */
	long timeout_ms;   /* the whole transfer */
	long stall_s;      /* fail when under 1 byte/s for this long */
	long keepidle_s;   /* TCP keepalive after this idle time, */
	long keepintvl_s;  /* probes this far apart; 0: none */
	int follow;        /* follow up to 5 redirects, to https only */
	struct http_headers *headers; /* the answer's, or NULL */
};

/* http_setup resets h (no option of an earlier transfer stays, the
 * connection cache does) and sets url, http and https only, peer and
 * host verification on, no signals, no proxy for loopback (noproxy.h),
 * and o. The caller adds its own headers, body and callbacks; a client
 * that is told to skip verification turns it off after. */
void http_setup(CURL *h, const char *url, const struct http_opts *o);

/* ---- the verdict ---------------------------------------------------- */

enum http_class {
	HTTP_OK,
	HTTP_RETRY,
	HTTP_PERMANENT,
};

/* Why, in more detail, for a client's own words. */
enum http_verdict {
	HTTP_V_OK,
	HTTP_V_TIMEOUT,     /* retry: a time limit passed */
	HTTP_V_UNREACHABLE, /* retry: DNS, connect, TLS handshake, send */
	HTTP_V_BROKEN,      /* retry: the answer broke off, or was bad */
	HTTP_V_BUSY,        /* retry: 429, 5xx */
	HTTP_V_UNTRUSTED,   /* permanent: certificate verification failed */
	HTTP_V_LOCAL,       /* permanent: URL, protocol, option, memory */
	HTTP_V_STOPPED,     /* permanent: a callback stopped the transfer */
	HTTP_V_REFUSED,     /* permanent: any other status */
};

/* http_classify judges a finished transfer: curl's code rc, and when
 * that is CURLE_OK the HTTP status. */
enum http_verdict http_classify(CURLcode rc, long status);

/* http_class says what a verdict means for the caller. */
enum http_class http_class(enum http_verdict v);

/* http_verdict_name: "ok", "timeout", "unreachable", ... (for tests);
 * http_class_name: "ok", "retry", "permanent". */
const char *http_verdict_name(enum http_verdict v);
const char *http_class_name(enum http_class c);

/* ---- Retry-After and redirects -------------------------------------- */

/* http_retry_after parses a Retry-After value: delay-seconds (digits,
 * with a fraction allowed) or an HTTP-date, relative to now (Unix
 * seconds; a date past is 0). Blanks around are allowed. -1 when it is
 * neither. */
double http_retry_after(const char *value, double now);

/* http_origin returns "scheme://host:port" of url, malloc'd, with the
 * host in lowercase and the scheme's default port written out, or
 * NULL when url is not an absolute URL: credentials meant for one
 * origin go to no other. */
char *http_origin(const char *url);

/* http_url_join resolves ref (absolute or relative, a Location or a
 * Link target) against base: malloc'd, or NULL. */
char *http_url_join(const char *base, const char *ref);

#endif
