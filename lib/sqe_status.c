/* sqe_status: the status the engine writes to a GPUWorkload: given out
 * only when it changes; Failed; a retry on the backoff schedule (see
 * sqe_int.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "sqe_int.h"
#include "wl.h"

char *
sqe_status_now(const struct sqe *e, double offset, char *buf)
{
	return clock_rfc3339((long long)e->wall + (long long)offset, buf);
}

json_t *
sqe_status_obj(const struct sqe_wl *w, json_t *s)
{
	const json_t *md = json_object_get(w->obj, "metadata");

	return json_pack("{s:s,s:s,s:{s:O,s:O},s:o}", "apiVersion",
		"canhazgpu.dev/v1alpha1", "kind", "GPUWorkload", "metadata",
		"name", json_object_get(md, "name"), "namespace",
		json_object_get(md, "namespace"), "status", s);
}

/* same_status says whether a and b agree but for lastTransitionTime:
 * compared member by member, copying nothing. */
static int
same_status(const json_t *a, const json_t *b)
{
	const char *k;
	const json_t *v;
	size_t n = 0, m = 0;

	if (!json_is_object(a) || !json_is_object(b))
		return 0;
	json_object_foreach((json_t *)a, k, v) {
		if (!strcmp(k, "lastTransitionTime"))
			continue;
		if (!json_equal(v, json_object_get(b, k)))
			return 0;
		n++;
	}
	json_object_foreach((json_t *)b, k, v)
		if (strcmp(k, "lastTransitionTime"))
			m++;
	return n == m;
}

void
sqe_status_seen(struct sqe_wl *w)
{
	if (w->want &&
		same_status(w->want, json_object_get(w->obj, "status"))) {
		json_decref(w->want);
		w->want = NULL;
	}
}

void
sqe_status_set(struct sqe *e, struct sqe_wl *w, json_t *s, json_t *tmpl,
	json_t *job)
{
	const json_t *cur = json_object_get(w->obj, "status");

	if (!job &&
		(same_status(s, w->want) ||
			(!w->want && same_status(s, cur)))) {
		json_decref(s);
		return;
	}
	json_decref(w->want);
	w->want = json_incref(s);
	sqe_write_apply(e, w->uid, tmpl, job, sqe_status_obj(w, s));
	e->c.changed = 1;
}

json_t *
sqe_status_requested(const struct sqe_wl *w)
{
	char n[24];

	snprintf(n, sizeof n, "%d", wl_gpus(w->obj));
	return json_string(n);
}

void
sqe_status_fail(struct sqe *e, struct sqe_wl *w, const char *msg, long *counter)
{
	char now[CLOCK_RFC3339_SIZE];
	json_t *s = json_pack("{s:s,s:o,s:i,s:s,s:s}", "phase", "Failed",
		"requestedGPUs", sqe_status_requested(w), "retries", w->retries,
		"message", msg, "lastTransitionTime",
		sqe_status_now(e, 0, now));

	sqe_set_state(e, w, W_DONE);
	(*counter)++;
	sqe_status_set(e, w, s, NULL, NULL);
}

/* jitter_hash is the hash the delays were drawn with before: a string's
 * characters folded as h = (h * 31 + c) mod 1000003 from 7. */
static long
jitter_hash(const char *s)
{
	long h = 7;

	for (; *s; s++)
		h = (h * 31 + (unsigned char)*s) % 1000003;
	return h;
}

/* retry_delay is the wait before retry n of w: backoffSeconds *
 * 2^(n-1), at most max, times a jitter of 0.5 to 1.5 drawn from its uid
 * and n; whole seconds, at least 1. */
static long
retry_delay(const struct sqe_wl *w, int n, double max)
{
	double d = wl_backoff(w->obj) * pow(2, n - 1);
	char key[300];
	long delay;

	if (d > max)
		d = max;
	snprintf(key, sizeof key, "%s/%d", w->uid, n);
	delay = (long)floor(
		d * (0.5 + (double)(jitter_hash(key) % 1000) / 1000));
	return delay < 1 ? 1 : delay;
}

void
sqe_status_retry(struct sqe *e, struct sqe_wl *w, const char *why,
	const char *unsched_prefix)
{
	int n = w->retries + 1, max = wl_max_retries(w->obj);
	char *msg, when[CLOCK_RFC3339_SIZE];
	long delay;
	json_t *s;

	if (n > max) {
		msg = easprintf("%s after %d %s: %s", unsched_prefix, max,
			max == 1 ? "retry" : "retries", why);
		sqe_status_fail(e, w, msg,
			strcmp(unsched_prefix, "unschedulable") == 0
				? &e->c.failed_unsched
				: &e->c.failed_job);
		free(msg);
		return;
	}
	delay = retry_delay(w, n, e->o.max_backoff);
	w->retries = n;
	sqe_set_state(e, w, W_WAIT);
	sqe_wait_until(e, w, e->mono + (double)delay);
	e->c.retries++;
	msg = easprintf("%s; retry %d of %d in %lds", why, n, max, delay);
	s = json_pack("{s:s,s:i,s:o,s:s,s:s}", "phase", "Pending", "retries", n,
		"requestedGPUs", sqe_status_requested(w), "nextRetryTime",
		sqe_status_now(e, (double)delay, when), "message", msg);
	free(msg);
	sqe_status_set(e, w, s, NULL, NULL);
}
