/* alert_post: POST one webhook message (see alert_post.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "alert_post.h"
#include "err.h"
#include "noproxy.h"

struct alert_post {
	CURL *h;
	long timeout_ms;
	double timeout;
	char retry_after[64]; /* the last answer's header, "" if none */
};

struct alert_post *
wh_new(double timeout)
{
	struct alert_post *p = ecalloc(1, sizeof *p);

	p->h = curl_easy_init();
	if (!p->h)
		err_die(HAZ_FAIL, "curl_easy_init failed");
	p->timeout = timeout;
	p->timeout_ms = (long)(timeout * 1000 + 0.5);
	return p;
}

void
wh_free(struct alert_post *p)
{
	if (!p)
		return;
	curl_easy_cleanup(p->h);
	free(p);
}

double
wh_retry_after(const char *v, double now)
{
	char *end;
	double s;
	time_t t;

	while (*v == ' ' || *v == '\t')
		v++;
	if (isdigit((unsigned char)*v)) {
		s = strtod(v, &end);
		while (*end == ' ' || *end == '\t' || *end == '\r' ||
			*end == '\n')
			end++;
		return *end ? -1 : s;
	}
	if ((t = curl_getdate(v, NULL)) < 0)
		return -1;
	return (double)t > now ? (double)t - now : 0;
}

/* header keeps the Retry-After header of the answer. */
static size_t
header(char *buf, size_t size, size_t n, void *arg)
{
	struct alert_post *p = arg;
	size_t len = size * n, name = sizeof "Retry-After:" - 1;

	if (len > name && strncasecmp(buf, "Retry-After:", name) == 0) {
		len -= name;
		if (len >= sizeof p->retry_after)
			len = sizeof p->retry_after - 1;
		memcpy(p->retry_after, buf + name, len);
		p->retry_after[len] = '\0';
	}
	return size * n;
}

/* discard: the answer's body says nothing we act on. */
static size_t
discard(char *buf, size_t size, size_t n, void *arg)
{
	(void)buf;
	(void)arg;
	return size * n;
}

/* failure says why no answer came, in words that name no address. */
static void
failure(struct alert_post *p, CURLcode rc, struct wh_result *r)
{
	r->retry = 1;
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(r->why, sizeof r->why, "timed out after %g s",
			p->timeout);
		break;
	case CURLE_COULDNT_CONNECT:
		snprintf(r->why, sizeof r->why, "could not connect");
		break;
	case CURLE_COULDNT_RESOLVE_HOST:
		snprintf(r->why, sizeof r->why, "host name not resolved");
		break;
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
		r->retry = 0;
		snprintf(r->why, sizeof r->why, "not an http(s) URL");
		break;
	default:
		/* curl_easy_strerror's texts are generic, unlike the
		 * error buffer's, which names the host */
		snprintf(r->why, sizeof r->why, "%s", curl_easy_strerror(rc));
		break;
	}
}

int
wh_post(struct alert_post *p, const char *url, const char *body,
	struct wh_result *r)
{
	struct curl_slist *hdrs = NULL;
	CURLcode rc;

	*r = (struct wh_result){.retry_after = -1};
	p->retry_after[0] = '\0';
	curl_easy_reset(p->h);
	curl_easy_setopt(p->h, CURLOPT_URL, url);
	curl_easy_setopt(p->h, CURLOPT_PROTOCOLS_STR, "https,http");
	curl_easy_setopt(p->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->h, CURLOPT_USERAGENT, "gpu-alert/" HAZ_VERSION);
	curl_easy_setopt(p->h, CURLOPT_TIMEOUT_MS, p->timeout_ms);
	curl_easy_setopt(p->h, CURLOPT_CONNECTTIMEOUT_MS, p->timeout_ms);
	curl_easy_setopt(p->h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(p->h, CURLOPT_POSTFIELDSIZE_LARGE,
		(curl_off_t)strlen(body));
	curl_easy_setopt(p->h, CURLOPT_HEADERFUNCTION, header);
	curl_easy_setopt(p->h, CURLOPT_HEADERDATA, p);
	curl_easy_setopt(p->h, CURLOPT_WRITEFUNCTION, discard);
	noproxy_loopback(p->h);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	/* no 100-continue round trip: chat webhooks answer at once */
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (!hdrs)
		err_die(HAZ_FAIL, "curl_slist_append failed");
	curl_easy_setopt(p->h, CURLOPT_HTTPHEADER, hdrs);
	rc = curl_easy_perform(p->h);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		failure(p, rc, r);
		return -1;
	}
	curl_easy_getinfo(p->h, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->status >= 200 && r->status < 300)
		return 0;
	r->retry = r->status == 429 || r->status >= 500;
	if (p->retry_after[0])
		r->retry_after = wh_retry_after(p->retry_after,
			(double)time(NULL));
	snprintf(r->why, sizeof r->why, "answered %ld", r->status);
	return -1;
}
