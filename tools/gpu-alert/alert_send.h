/* alert_send (as_): deliver alerts to the webhook without ever holding up the
 * reader.
 *
 * as_submit (the reader's thread) applies the rate limit (per_minute
 * alerts in any 60 s; the rest dropped and counted) and puts the alert
 * in a bounded queue (full: dropped and counted); one sender thread
 * takes them in order, finds the URL (alert_url), formats (alert_fmt)
 * and posts (alert_post), trying again on no answer, 429 and 5xx, after
 * 1, 2, 4... s or what a Retry-After asks (at most 60 s), tries times in
 * all; another answer ends the alert at once. An alert that is not
 * delivered is said on stderr naming the device, the tries, the URL's
 * source and why (never the URL). A missing Secret, key or file is
 * said once, then counted, until it is back. Summaries of what the rate
 * limit and a full queue dropped are said a minute after the first
 * drop, and at the end.
 *
 * Each alert's fate is one stdout record, written when it is known
 * (dropped ones at once, by the reader's thread):
 *   {"kind":"alert","node":N,"device":UUID,"event":E,"sent":B,"tries":T}
 * with dry_run also "format" and "body" (nothing is posted). */
#ifndef HAZ_ALERT_SEND_H
#define HAZ_ALERT_SEND_H

#include <stddef.h>

#include "alert.h"
#include "alert_fmt.h"
#include "alert_url.h"

struct as_opts {
	int tries;      /* posts of one alert at most, >= 1 */
	double timeout; /* seconds one post may take */
	enum alert_format format;
	long per_minute; /* alerts accepted in any 60 s */
	size_t queue;    /* alerts waiting at most */
	int dry_run;     /* format, print, post nothing */
	int verbose;     /* say each try on stderr */
	/* done, when not NULL, is told of each alert the sender tried to
	 * post, sent or dropped after its tries, in the sender's thread;
	 * not of one dropped untried (rate limit, full queue, no URL) nor
	 * with dry_run */
	void (*done)(const struct alert *a, int sent, void *arg);
	void *done_arg;
};

struct alert_sender;

/* as_start starts the sender thread, posting to the URL u names (u is
 * borrowed and used by that thread only until as_finish). */
struct alert_sender *as_start(struct alert_url *u, const struct as_opts *o);

/* as_submit hands a (owned from now on) to the sender. */
void as_submit(struct alert_sender *s, struct alert *a);

/* as_finish waits until every queued alert is delivered or dropped,
 * says what summaries are due, stops the thread and frees s. Returns 0
 * when every alert was delivered or held back by the rate limit, 75
 * when the last one that was not failed for want of an answer (no
 * connection, time out, 429, 5xx, API server unreachable), else 1. */
int as_finish(struct alert_sender *s);

#endif
