/* alert_send: the sender thread, its queue, the rate limit and the
 * retries (see alert_send.h). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alert_post.h"
#include "alert_send.h"
#include "err.h"
#include "jbuf.h"
#include "nd.h"

/* The longest wait a Retry-After may impose: an alert an hour late is
 * no alert, and the queue behind it waits too. */
#define MAX_RETRY_AFTER 60.0
/* A summary of what was dropped is said this long after the first drop
 * it counts. */
#define SUMMARY_AFTER 60.0

struct alert_sender {
	struct as_opts o;
	struct alert_url *url;
	struct alert_post *post;
	pthread_t thread;
	pthread_mutex_t lock; /* everything below, and stdout */
	pthread_cond_t cond;
	struct alert **q; /* ring of o.queue */
	size_t head, len;
	int closed;
	double *accepted; /* ring of o.per_minute acceptance times */
	size_t acc_head, acc_len;
	long rate_dropped, full_dropped; /* not said yet */
	double summary_due;              /* 0: nothing to say */
	/* the sender thread's own */
	char missing[256]; /* what was said about the source, "" if fine */
	long missing_dropped;
	int failed, failed_temp;
};

/* record writes the alert's fate to stdout; the caller holds the lock. */
static void
record(const struct alert *a, int sent, int tries, const char *fmt,
	json_t *body)
{
	json_t *rec = json_pack("{s:s, s:s?, s:s?, s:s, s:b, s:i}", "kind",
		"alert", "node", a->node, "device", a->uuid, "event",
		alert_event_name(a->event), "sent", sent, "tries", tries);

	if (!rec)
		err_die(HAZ_FAIL, "json_pack: out of memory");
	if (fmt) {
		json_object_set_new(rec, "format", json_string(fmt));
		json_object_set(rec, "body", body);
	}
	nd_write(rec);
	json_decref(rec);
}

static void
locked_record(struct alert_sender *s, const struct alert *a, int sent,
	int tries, const char *fmt, json_t *body)
{
	pthread_mutex_lock(&s->lock);
	record(a, sent, tries, fmt, body);
	pthread_mutex_unlock(&s->lock);
}

/* summarize says what the rate limit and a full queue dropped since the
 * last summary; the caller holds the lock. */
static void
summarize(struct alert_sender *s)
{
	if (s->rate_dropped)
		err_warn("rate limit of %ld alerts a minute: %ld alert%s "
			 "dropped",
			s->o.per_minute, s->rate_dropped,
			s->rate_dropped == 1 ? "" : "s");
	if (s->full_dropped)
		err_warn("queue full (%zu alerts waiting for the webhook): "
			 "%ld alert%s dropped",
			s->o.queue, s->full_dropped,
			s->full_dropped == 1 ? "" : "s");
	s->rate_dropped = s->full_dropped = 0;
	s->summary_due = 0;
}

/* rate_ok says whether an alert raised at now fits the rate limit, and
 * if so counts it. */
static int
rate_ok(struct alert_sender *s, double now)
{
	size_t n = (size_t)s->o.per_minute;

	if (s->acc_len == n) {
		if (now - s->accepted[s->acc_head] < 60)
			return 0;
		s->acc_head = (s->acc_head + 1) % n;
		s->acc_len--;
	}
	s->accepted[(s->acc_head + s->acc_len++) % n] = now;
	return 1;
}

void
as_submit(struct alert_sender *s, struct alert *a)
{
	long *count = NULL;

	pthread_mutex_lock(&s->lock);
	if (!rate_ok(s, a->born))
		count = &s->rate_dropped;
	else if (s->len == s->o.queue)
		count = &s->full_dropped;
	if (count) {
		record(a, 0, 0, NULL, NULL);
		++*count;
		if (!s->summary_due)
			s->summary_due = a->born + SUMMARY_AFTER;
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
		alert_free(a);
		return;
	}
	s->q[(s->head + s->len++) % s->o.queue] = a;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* what names the alert in messages: "node n1 device GPU-1: unhealthy
 * alert". */
static char *
what(const struct alert *a)
{
	if (a->event == ALERT_TEST)
		return estrdup("test alert");
	return easprintf("node %s device %s: %s alert", a->node, a->uuid,
		alert_event_name(a->event));
}

static void
pause_for(double seconds)
{
	struct timespec ts = {(time_t)seconds,
		(long)((seconds - floor(seconds)) * 1e9)};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* source_url returns the URL, or NULL: *gone when the source is missing
 * or unusable (said once until it is back; the alert is dropped), else
 * a temporary failure in why. */
static char *
source_url(struct alert_sender *s, int *gone, char *why, size_t n)
{
	int temporary;
	char *url = au_get(s->url, alert_now(), &temporary, why, n);

	*gone = !url && !temporary;
	if (url && s->missing[0]) {
		err_warn("%s: found again; %ld alert%s dropped without it",
			au_name(s->url), s->missing_dropped,
			s->missing_dropped == 1 ? "" : "s");
		s->missing[0] = '\0';
		s->missing_dropped = 0;
	}
	if (*gone) {
		if (strcmp(s->missing, why) != 0)
			err_warn("%s: alerts are dropped until it is there",
				why);
		snprintf(s->missing, sizeof s->missing, "%s", why);
		s->missing_dropped++;
	}
	return url;
}

/* wait_before says how long to wait before try+1 after r. */
static double
wait_before(int try, const struct alert_post_result *r)
{
	if (r && r->retry_after >= 0)
		return r->retry_after < MAX_RETRY_AFTER ? r->retry_after
							: MAX_RETRY_AFTER;
	return (double)(1L << (try - 1 < 20 ? try - 1 : 20));
}

/* deliver posts a, trying again as the options say, and writes its
 * record. */
static void
deliver(struct alert_sender *s, struct alert *a)
{
	char why[512] = "", *url = NULL, *name = what(a), *text;
	struct alert_post_result r = {.retry_after = -1};
	int try, gone, sent = 0, temp = 0;
	enum alert_format fmt;
	json_t *body = NULL;
	double wait;

	for (try = 1; try <= s->o.tries; try++) {
		if (!url && !(url = source_url(s, &gone, why, sizeof why))) {
			if (gone) {
				s->failed = 1;
				s->failed_temp = 0;
				locked_record(s, a, 0, try - 1, NULL, NULL);
				goto out;
			}
			temp = 1;
			r = (struct alert_post_result){.retry_after = -1};
		} else {
			fmt = s->o.format == AF_AUTO ? af_for_url(url)
						     : s->o.format;
			if (!body)
				body = af_body(a, fmt);
			if (s->o.dry_run) {
				locked_record(s, a, 0, 0, af_name(fmt), body);
				goto out;
			}
			text = jb_dumps(body);
			sent = alert_post_post(s->post, url, text, &r) == 0;
			free(text);
			if (sent)
				break;
			temp = r.retry;
			snprintf(why, sizeof why, "webhook of %s: %s",
				au_name(s->url), r.why);
			if (!r.retry)
				break;
		}
		if (try == s->o.tries)
			break;
		wait = wait_before(try, &r);
		if (s->o.verbose)
			err_warn("%s: try %d: %s; next in %g s%s", name, try,
				why, wait,
				r.retry_after >= 0 ? " (Retry-After)" : "");
		pause_for(wait);
	}
	if (try > s->o.tries)
		try = s->o.tries;
	if (sent && s->o.verbose)
		err_warn("%s: sent (try %d)", name, try);
	if (!sent) {
		err_warn("%s dropped after %d tr%s: %s", name, try,
			try == 1 ? "y" : "ies", why);
		s->failed = 1;
		s->failed_temp = temp;
	}
	locked_record(s, a, sent, try, NULL, NULL);
	if (s->o.done)
		s->o.done(a, sent, s->o.done_arg);
out:
	if (url) {
		memset(url, 0, strlen(url));
		free(url);
	}
	json_decref(body);
	free(name);
	alert_free(a);
}

/* next waits for the next alert, saying summaries when due; NULL once
 * the queue is closed and empty. */
static struct alert *
next(struct alert_sender *s)
{
	struct alert *a = NULL;
	struct timespec ts;
	double due, now;

	pthread_mutex_lock(&s->lock);
	while (!s->len && !s->closed) {
		if (!s->summary_due) {
			pthread_cond_wait(&s->cond, &s->lock);
			continue;
		}
		/* summary_due is monotonic time; the condition variable
		 * waits on CLOCK_MONOTONIC too (see as_start) */
		now = alert_now();
		if (now >= s->summary_due) {
			summarize(s);
			continue;
		}
		due = s->summary_due;
		ts.tv_sec = (time_t)due;
		ts.tv_nsec = (long)((due - floor(due)) * 1e9);
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	}
	if (s->len) {
		a = s->q[s->head];
		s->head = (s->head + 1) % s->o.queue;
		s->len--;
	}
	pthread_mutex_unlock(&s->lock);
	return a;
}

static void *
run(void *arg)
{
	struct alert_sender *s = arg;
	struct alert *a;

	while ((a = next(s)))
		deliver(s, a);
	return NULL;
}

struct alert_sender *
as_start(struct alert_url *u, const struct as_opts *o)
{
	struct alert_sender *s = ecalloc(1, sizeof *s);
	pthread_condattr_t ca;
	int rc;

	s->o = *o;
	s->url = u;
	s->q = ecalloc(o->queue, sizeof *s->q);
	s->accepted = ecalloc((size_t)o->per_minute, sizeof *s->accepted);
	s->post = alert_post_new(o->timeout);
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	if ((rc = pthread_create(&s->thread, NULL, run, s)) != 0)
		err_die(HAZ_FAIL, "pthread_create: %s", strerror(rc));
	return s;
}

int
as_finish(struct alert_sender *s)
{
	int status;

	pthread_mutex_lock(&s->lock);
	s->closed = 1;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	summarize(s);
	if (s->missing[0] && s->missing_dropped)
		err_warn("%s: %ld alert%s dropped", s->missing,
			s->missing_dropped, s->missing_dropped == 1 ? "" : "s");
	status = !s->failed ? HAZ_OK : s->failed_temp ? HAZ_TEMP : HAZ_FAIL;
	alert_post_free(s->post);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s->q);
	free(s->accepted);
	free(s);
	return status;
}
