/* ledger_report: GPU-hours per user from canhazgpu's usage history and
 * the reservations in progress. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ledger.h"
#include "nd.h"

struct usage {
	char *user;
	double secs;
	long run, manual, k8s;
};

struct tally {
	struct usage *u;
	size_t n;
	long reservations;
	double secs;
};

/* add counts secs of GPU time of one reservation of type for user. */
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
	if (secs < 0)
		secs = 0;
	u->secs += secs;
	t->secs += secs;
	t->reservations++;
	if (type && strcmp(type, "run") == 0)
		u->run++;
	else if (type && strcmp(type, "manual") == 0)
		u->manual++;
	else if (type && strcmp(type, "k8s") == 0)
		u->k8s++;
}

static int
by_hours(const void *a, const void *b)
{
	const struct usage *x = a, *y = b;

	if (x->secs != y->secs)
		return x->secs < y->secs ? 1 : -1;
	return strcmp(x->user, y->user);
}

/* hours rounds seconds to hours with two decimals. */
static double
hours(double secs)
{
	return round(secs / 36.0) / 100.0;
}

/* record_secs reads one usage record into *user, *type and *secs (the
 * seconds it counts from from on). Returns NULL, or why it is left out:
 * unreadable, or a number or time out of the ledger's range. */
static const char *
record_secs(const char *raw, size_t len, long long from, const char **user,
	const char **type, double *secs, json_t **rec)
{
	struct lg_time st, en;
	json_error_t jerr;
	const json_t *d;
	double v;

	*rec = json_loadb(raw, len, 0, &jerr);
	if (!json_is_object(*rec))
		return "not a JSON object";
	*user = json_string_value(json_object_get(*rec, "user"));
	*type = json_string_value(json_object_get(*rec, "reservation_type"));
	if (!*user)
		return "user: not a string";
	if (lg_time_parse(json_object_get(*rec, "start_time"), &st))
		return "start_time: not a time of the ledger";
	if (lg_time_parse(json_object_get(*rec, "end_time"), &en))
		return "end_time: not a time of the ledger";
	if (st.set && en.set) {
		*secs = (double)(en.sec - (st.sec > from ? st.sec : from));
		return NULL;
	}
	d = json_object_get(*rec, "duration_seconds");
	v = json_number_value(d);
	if (!json_is_number(d) || !isfinite(v) || v < 0 || v > LG_MAX_DURATION)
		return "duration_seconds: not a number of seconds from 0 to "
		       "315360000";
	*secs = v;
	return NULL;
}

/* history counts the usage records that ended in [from, to], each from
 * its start or from, whichever is later; one it cannot count is left out
 * and named. Returns HAZ_OK, or HAZ_FAIL when one was left out. */
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
		why = record_secs(y->element[i]->str, y->element[i]->len, from,
			&user, &type, &secs, &rec);
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

int
lg_report(struct lg *l, double days)
{
	struct tally t = {0};
	struct lg_clock now;
	struct lg_state *sts;
	long long from;
	char buf[32];
	json_t *r;
	int n, i, status;
	size_t k;

	lg_clock(&now);
	from = now.sec - (long long)(days * 86400);
	status = history(l, &t, from, now.sec);
	n = lg_gpu_count(l);
	sts = lg_read_states(l, n, now.sec);
	for (i = 0; i < n; i++)
		if (sts[i].kind == LG_HELD && sts[i].active && sts[i].start.set)
			add(&t, sts[i].user, sts[i].type,
				(double)(now.sec -
					(sts[i].start.sec > from
							? sts[i].start.sec
							: from)));
	lg_states_free(sts, n);
	qsort(t.u, t.n, sizeof *t.u, by_hours);
	for (k = 0; k < t.n; k++) {
		r = json_object();
		json_object_set_new(r, "kind", json_string("usage"));
		json_object_set_new(r, "user", json_string(t.u[k].user));
		json_object_set_new(r, "gpu_hours",
			json_real(hours(t.u[k].secs)));
		json_object_set_new(r, "percentage",
			json_real(t.secs > 0
					? round(t.u[k].secs / t.secs * 1000) /
						10
					: 0));
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
	json_object_set_new(r, "gpu_hours", json_real(hours(t.secs)));
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
