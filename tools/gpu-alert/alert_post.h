/* alert_post: one POST of a JSON message to a webhook, on libcurl.
 *
 * The URL is a secret (a chat webhook's URL is its credential): nothing
 * here prints it, and the reasons given name no host, port or path,
 * only what happened ("connection refused", "timed out after 10 s",
 * "answered 500"). */
#ifndef HAZ_ALERT_POST_H
#define HAZ_ALERT_POST_H

#include <stddef.h>

struct alert_post;

struct alert_post_result {
	long status;        /* HTTP status, 0 when no answer */
	int retry;          /* worth another try (http_classify): 429,
			       5xx, no answer but for a certificate that
			       fails verification or an unusable URL */
	double retry_after; /* seconds the server asked to wait, or -1 */
	char why[160];      /* "" when delivered */
};

/* alert_post_new returns a poster whose tries each last at most timeout
 * seconds (connection included); it keeps its connection between
 * posts, and sets libcurl up itself (http_global_init). A poster is
 * used by one thread at a time. */
struct alert_post *alert_post_new(double timeout);
void alert_post_free(struct alert_post *p);

/* alert_post_post POSTs body (application/json) to url. Returns 0 when the
 * server answered 2xx, else -1 with r saying why. */
int alert_post_post(struct alert_post *p, const char *url, const char *body,
	struct alert_post_result *r);

/* alert_post_retry_after parses a Retry-After value: delay-seconds or an
 * HTTP-date (then relative to now, a Unix time). -1 when it is
 * neither. It is http_retry_after. */
double alert_post_retry_after(const char *value, double now);

#endif
