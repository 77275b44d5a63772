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

/* history counts the usage records that ended in [from, to], each from
 * its start or from, whichever is later. */
static void
history(struct lg *l, struct tally *t, long long from, long long to)
{
	redisReply *y = rd_cmd(l->rd,
		"ZRANGEBYSCORE " LG_PREFIX "usage_history_sorted %lld %lld",
		from, to);
	struct lg_time st, en;
	json_error_t jerr;
	const char *user;
	json_t *rec;
	double secs;
	size_t i;

	if (y->type != REDIS_REPLY_ARRAY)
		rd_fail(l->rd, y, HAZ_FAIL, "zrangebyscore");
	for (i = 0; i < y->elements; i++) {
		rec = json_loadb(y->element[i]->str, y->element[i]->len, 0,
			&jerr);
		user = json_string_value(json_object_get(rec, "user"));
		if (!user ||
			lg_time_parse(json_object_get(rec, "start_time"),
				&st) ||
			lg_time_parse(json_object_get(rec, "end_time"), &en)) {
			json_decref(rec);
			continue;
		}
		if (st.set && en.set)
			secs = (double)(en.sec -
				(st.sec > from ? st.sec : from));
		else
			secs = json_number_value(
				json_object_get(rec, "duration_seconds"));
		add(t, user,
			json_string_value(
				json_object_get(rec, "reservation_type")),
			secs);
		json_decref(rec);
	}
	freeReplyObject(y);
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
	int n, i;
	size_t k;

	lg_clock(&now);
	from = now.sec - (long long)(days * 86400);
	history(l, &t, from, now.sec);
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
	return HAZ_OK;
}
