/* alert_post: POST one webhook message (see alert_post.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "alert_post.h"
#include "err.h"
#include "http.h"

struct alert_post {
	CURL *h;
	long timeout_ms;
	double timeout;
	struct http_headers hdr; /* the last answer's */
};

struct alert_post *
alert_post_new(double timeout)
{
	struct alert_post *p = ecalloc(1, sizeof *p);

	http_global_init();
	p->h = curl_easy_init();
	if (!p->h)
		err_die(HAZ_FAIL, "curl_easy_init failed");
	p->timeout = timeout;
	p->timeout_ms = (long)(timeout * 1000 + 0.5);
	return p;
}

void
alert_post_free(struct alert_post *p)
{
	if (!p)
		return;
	curl_easy_cleanup(p->h);
	http_headers_clear(&p->hdr);
	free(p);
}

double
alert_post_retry_after(const char *v, double now)
{
	return http_retry_after(v, now);
}

/* discard: the answer's body says nothing we act on. */
static size_t
discard(char *buf, size_t size, size_t n, void *arg)
{
	(void)buf;
	(void)arg;
	return size * n;
}

/* failure says why no answer came, in words that name no address;
 * worth another try as http_classify says (a certificate that fails
 * verification is not). */
static void
failure(struct alert_post *p, CURLcode rc, struct alert_post_result *r)
{
	enum http_verdict v = http_classify(rc, 0);

	r->retry = http_class(v) == HTTP_RETRY;
	if (v == HTTP_V_UNTRUSTED) {
		snprintf(r->why, sizeof r->why,
			"certificate failed verification: %s",
			curl_easy_strerror(rc));
		return;
	}
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
alert_post_post(struct alert_post *p, const char *url, const char *body,
	struct alert_post_result *r)
{
	struct http_opts o = {.agent = "gpu-alert/" HAZ_VERSION,
		.connect_ms = p->timeout_ms,
		.timeout_ms = p->timeout_ms,
		.headers = &p->hdr};
	struct curl_slist *hdrs = NULL;
	const char *retry_after;
	CURLcode rc;

	*r = (struct alert_post_result){.retry_after = -1};
	/* no error buffer: curl's words there would name the host */
	http_setup(p->h, url, &o);
	curl_easy_setopt(p->h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(p->h, CURLOPT_POSTFIELDSIZE_LARGE,
		(curl_off_t)strlen(body));
	curl_easy_setopt(p->h, CURLOPT_WRITEFUNCTION, discard);
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
	r->retry = http_class(http_classify(CURLE_OK, r->status)) == HTTP_RETRY;
	if ((retry_after = http_header(&p->hdr, "Retry-After")))
		r->retry_after = http_retry_after(retry_after,
			(double)time(NULL));
	snprintf(r->why, sizeof r->why, "answered %ld", r->status);
	return -1;
}
