/* ledger_report: GPU-hours per user from canhazgpu's usage history and
 * the reservations in progress. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "ledger.h"
#include "nd.h"

struct usage {
	char *user;
	double secs;  /* the seconds of its reservations, added in order */
	double hours; /* each reservation's seconds / 3600, added in order */
	long run, manual, k8s;
};

struct tally {
	struct usage *u;
	size_t n;
	long reservations;
	double secs;
};

/* add counts secs of GPU time of one reservation of type for user, as
 * canhazgpu's report adds them: hours reservation by reservation, every
 * type but run counted as manual (k8s counted apart as well). */
static void
add(struct tally *t, const char *user, const char *type, double secs)
{
	struct usage *u = NULL;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->u[i].user, user) == 0)
			u = &t->u[i];
	if (!u) {
		t->u = erealloc(t->u, (t->n + 1) * sizeof *t->u);
		u = &t->u[t->n++];
		memset(u, 0, sizeof *u);
		u->user = estrdup(user);
	}
	u->secs += secs;
	u->hours += secs / 3600.0;
	t->secs += secs;
	t->reservations++;
	if (type && strcmp(type, "run") == 0)
		u->run++;
	else if (type && strcmp(type, "k8s") == 0)
		u->k8s++;
	else
		u->manual++;
}

static int
by_hours(const void *a, const void *b)
{
	const struct usage *x = a, *y = b;

	if (x->secs != y->secs)
		return x->secs < y->secs ? 1 : -1;
	return strcmp(x->user, y->user);
}

/* record_secs reads one usage record into *user, *type and *secs: its
 * duration_seconds, whole (none or null: 0), as canhazgpu counts it.
 * Returns NULL, or why it is left out: unreadable, a member of the wrong
 * type, a time that is none, a duration out of the ledger's range. */
static const char *
record_secs(const char *raw, size_t len, const char **user, const char **type,
	double *secs, json_t **rec)
{
	struct lg_time t;
	json_error_t jerr;
	const json_t *d, *v;
	double x;

	*rec = json_loadb(raw, len, 0, &jerr);
	if (!json_is_object(*rec))
		return "not a JSON object";
	*user = json_string_value(json_object_get(*rec, "user"));
	if (!*user)
		return "user: not a string";
	v = json_object_get(*rec, "reservation_type");
	*type = json_string_value(v);
	if (v && !json_is_null(v) && !*type)
		return "reservation_type: not a string";
	v = json_object_get(*rec, "gpu_id");
	if (v && !json_is_null(v) && !json_is_integer(v))
		return "gpu_id: not a whole number";
	if (lg_time_parse(json_object_get(*rec, "start_time"), &t))
		return "start_time: not a time of the ledger";
	if (lg_time_parse(json_object_get(*rec, "end_time"), &t))
		return "end_time: not a time of the ledger";
	d = json_object_get(*rec, "duration_seconds");
	x = json_number_value(d);
	if ((d && !json_is_null(d) && !json_is_number(d)) || !isfinite(x) ||
		x < 0 || x > LG_MAX_DURATION)
		return "duration_seconds: not a number of seconds from 0 to "
		       "315360000";
	*secs = x;
	return NULL;
}

/* history counts the usage records that ended in [from, to], each whole;
 * one it cannot count is left out and named. Returns HAZ_OK, or HAZ_FAIL
 * when one was left out. */
static int
history(struct lg *l, struct tally *t, long long from, long long to)
{
	redisReply *y = rd_cmd(l->rd,
		"ZRANGEBYSCORE " LG_PREFIX "usage_history_sorted %lld %lld",
		from, to);
	const char *user, *type, *why;
	int status = HAZ_OK;
	json_t *rec;
	double secs;
	size_t i;

	if (y->type != REDIS_REPLY_ARRAY)
		rd_fail(l->rd, y, HAZ_FAIL, "zrangebyscore");
	for (i = 0; i < y->elements; i++) {
		why = record_secs(y->element[i]->str, y->element[i]->len, &user,
			&type, &secs, &rec);
		if (why) {
			err_warn(LG_PREFIX "usage_history_sorted: record %zu "
					   "of the window: %s; left out",
				i + 1, why);
			status = HAZ_FAIL;
		} else {
			add(t, user, type, secs);
		}
		json_decref(rec);
	}
	freeReplyObject(y);
	return status;
}

/* held counts each reservation held now (expired and stale ones not yet
 * released included, as canhazgpu's report does not release them) from
 * its start to now, whole, under the name canhazgpu's status shows:
 * "account (user)" when the account differs, a k8s hold's user alone. */
static void
held(struct lg *l, struct tally *t, const struct lg_clock *now)
{
	struct lg_state *sts;
	const struct lg_state *s;
	double secs;
	char *name;
	int n, i;

	n = lg_gpu_count(l);
	sts = lg_read_states(l, n, now->sec);
	for (i = 0; i < n; i++) {
		s = &sts[i];
		if (s->kind != LG_HELD || !s->user)
			continue;
		secs = s->start.set ? (double)(now->sec - s->start.sec) +
				(double)(now->nsec - s->start.nsec) / 1e9
				    : 0;
		if (s->actual_user && *s->actual_user &&
			strcmp(s->actual_user, s->user) != 0 &&
			!(s->type && strcmp(s->type, "k8s") == 0))
			name = easprintf("%s (%s)", s->actual_user, s->user);
		else
			name = estrdup(s->user);
		add(t, name, s->type, secs > 0 ? secs : 0);
		free(name);
	}
	lg_states_free(sts, n);
}

/* window_start is the start of a window of days days ending at now:
 * whole days back on the calendar (local time, as canhazgpu's), else
 * days * 86400 s. */
static long long
window_start(long long now, double days)
{
	struct tm tm;
	time_t t = (time_t)now;

	if (days != floor(days) || !localtime_r(&t, &tm))
		return now - (long long)(days * 86400);
	tm.tm_mday -= (int)days;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	return t == (time_t)-1 ? now - (long long)(days * 86400) : (long long)t;
}

int
lg_report(struct lg *l, double days)
{
	struct tally t = {0};
	struct lg_clock now;
	long long from;
	char buf[32];
	json_t *r;
	int status;
	size_t k;

	lg_clock(&now);
	from = window_start(now.sec, days);
	status = history(l, &t, from, now.sec);
	held(l, &t, &now);
	if (t.n)
		qsort(t.u, t.n, sizeof *t.u, by_hours);
	for (k = 0; k < t.n; k++) {
		r = json_object();
		json_object_set_new(r, "kind", json_string("usage"));
		json_object_set_new(r, "user", json_string(t.u[k].user));
		json_object_set_new(r, "gpu_hours", json_real(t.u[k].hours));
		json_object_set_new(r, "percentage",
			json_real(t.secs > 0 ? t.u[k].secs / t.secs * 100 : 0));
		json_object_set_new(r, "run_count", json_integer(t.u[k].run));
		json_object_set_new(r, "manual_count",
			json_integer(t.u[k].manual));
		json_object_set_new(r, "k8s_count", json_integer(t.u[k].k8s));
		nd_write(r);
		json_decref(r);
		free(t.u[k].user);
	}
	r = json_object();
	json_object_set_new(r, "kind", json_string("usage-total"));
	json_object_set_new(r, "gpu_hours", json_real(t.secs / 3600.0));
	json_object_set_new(r, "reservations", json_integer(t.reservations));
	json_object_set_new(r, "users", json_integer((json_int_t)t.n));
	json_object_set_new(r, "start", json_string(lg_rfc3339(from, buf)));
	json_object_set_new(r, "end", json_string(lg_rfc3339(now.sec, buf)));
	json_object_set_new(r, "days", json_real(days));
	nd_write(r);
	json_decref(r);
	free(t.u);
	return status;
}
