/* sched_req: strategy names, request records, batch order. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mig.h"
#include "sched.h"

static const char *const names[SP_NSTRATEGIES] = {
	[SP_LEAST_UTILIZED] = "least_utilized",
	[SP_LEAST_LOADED] = "least_loaded",
	[SP_BEST_FIT] = "best_fit",
	[SP_BINPACK] = "binpack",
	[SP_SPREAD] = "spread",
	[SP_BINPACK_GPU] = "binpack_gpu",
	[SP_SPREAD_GPU] = "spread_gpu",
	[SP_PRIORITY] = "priority",
	[SP_ROUND_ROBIN] = "round_robin",
	[SP_RANDOM] = "random",
	[SP_COST_OPTIMIZED] = "cost_optimized",
};

const char *
sp_strategy_name(int s)
{
	return s >= 0 && s < SP_NSTRATEGIES ? names[s] : "?";
}

/* same_name compares a and b ignoring case and underscores, so that
 * least_utilized, leastUtilized and LeastUtilized are one name. */
static int
same_name(const char *a, const char *b)
{
	for (;;) {
		while (*a == '_')
			a++;
		while (*b == '_')
			b++;
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
		if (!*a)
			return 1;
		a++;
		b++;
	}
}

int
sp_strategy_parse(const char *s)
{
	int i;

	for (i = 0; i < SP_NSTRATEGIES; i++)
		if (same_name(s, names[i]))
			return i;
	return -1;
}

/* ---- RFC 3339 times ---- */

/* num reads exactly n digits at *p into *out, advancing *p. */
static int
num(const char **p, int n, int *out)
{
	int v = 0;

	while (n--) {
		if (**p < '0' || **p > '9')
			return -1;
		v = v * 10 + (*(*p)++ - '0');
	}
	*out = v;
	return 0;
}

/* days_from_civil counts days from 1970-01-01 to y-m-d (proleptic
 * Gregorian). */
static long
days_from_civil(long y, int m, int d)
{
	long era, yoe, doy;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/* rfc3339 reads s into seconds since the epoch. Returns 0 or -1. */
static int
rfc3339(const char *s, double *out)
{
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	double frac = 0, scale = 0.1;

	if (num(&s, 4, &y) || *s++ != '-' || num(&s, 2, &mo) || *s++ != '-' ||
		num(&s, 2, &d) || (*s != 'T' && *s != 't' && *s != ' '))
		return -1;
	s++;
	if (num(&s, 2, &h) || *s++ != ':' || num(&s, 2, &mi) || *s++ != ':' ||
		num(&s, 2, &sec))
		return -1;
	if (*s == '.') {
		if (*++s < '0' || *s > '9')
			return -1;
		for (; *s >= '0' && *s <= '9'; s++, scale /= 10)
			frac += (*s - '0') * scale;
	}
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else {
		sign = *s == '+' ? 1 : *s == '-' ? -1 : 0;
		if (!sign)
			return -1;
		s++;
		if (num(&s, 2, &oh) || *s++ != ':' || num(&s, 2, &om))
			return -1;
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
		sec > 60 || oh > 23 || om > 59)
		return -1;
	*out = (double)days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 +
		sec + frac - sign * (oh * 3600 + om * 60);
	return 0;
}

/* ---- request fields ---- */

/* reject stores the first reason a request cannot be placed. */
static void __attribute__((format(printf, 2, 3)))
reject(struct sp_req *q, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (q->err)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	q->err = estrdup(msg);
}

static void
read_order(const struct sp_state *st, struct sp_req *q, const struct js_doc *d)
{
	int t = sp_field(st, SPF_PRIORITY);
	char v[80];

	if (t >= 0 && d->t[t].type != JS_INT)
		reject(q, "priority must be a whole number, got %s",
			js_repr(d, t, v, sizeof v));
	else if (t >= 0)
		q->prio = d->t[t].i;
	t = sp_field(st, SPF_CREATED);
	if (t >= 0 && (!js_str(d, t) || rfc3339(d->t[t].s, &q->created) < 0))
		reject(q, "created must be an RFC3339 time, got %s",
			js_repr(d, t, v, sizeof v));
	else
		q->has_created = t >= 0;
}

static void
read_strategy(const struct sp_state *st, struct sp_req *q,
	const struct js_doc *d)
{
	int t = sp_field(st, SPF_STRATEGY);
	char v[80];

	q->strat = -1;
	if (t < 0)
		return;
	if (!js_str(d, t))
		reject(q, "strategy must be a name, got %s",
			js_repr(d, t, v, sizeof v));
	else if ((q->strat = sp_strategy_parse(d->t[t].s)) < 0)
		reject(q, "unknown strategy \"%s\"", d->t[t].s);
}

/* read_ids reads gpu_ids, an array of GPU indexes, into q. */
static void
read_ids(struct sp_req *q, const struct js_doc *d, int t)
{
	char v[80];
	int i, e;

	if (d->t[t].type != JS_ARRAY || d->t[t].n < 1 ||
		d->t[t].n > SP_MAX_GPUS) {
		reject(q,
			"gpu_ids must be an array of 1 to %d GPU indexes, "
			"got %s",
			SP_MAX_GPUS, js_repr(d, t, v, sizeof v));
		return;
	}
	q->ids = emalloc((size_t)d->t[t].n * sizeof *q->ids);
	for (i = 0, e = t + 1; i < d->t[t].n; i++, e = d->t[e].next) {
		if (d->t[e].type != JS_INT || d->t[e].i < 0 ||
			d->t[e].i > 1 << 20) {
			reject(q, "gpu_ids must hold GPU indexes, got %s",
				js_repr(d, e, v, sizeof v));
			return;
		}
		q->ids[q->nids++] = (int)d->t[e].i;
	}
}

static void
read_count(const struct sp_state *st, struct sp_req *q, const struct js_doc *d)
{
	int t = sp_field(st, SPF_GPUS), ids = sp_field(st, SPF_GPU_IDS);
	char v[80];

	if (ids >= 0)
		read_ids(q, d, ids);
	q->k = q->nids ? q->nids : 1;
	if (t < 0)
		return;
	if (d->t[t].type != JS_INT || d->t[t].i < 1 ||
		d->t[t].i > SP_MAX_GPUS) {
		reject(q, "gpus must be a whole number from 1 to %d, got %s",
			SP_MAX_GPUS, js_repr(d, t, v, sizeof v));
		return;
	}
	if (q->nids && d->t[t].i != q->nids)
		reject(q, "gpu_ids names %d GPU%s but gpus is %lld", q->nids,
			q->nids == 1 ? "" : "s", d->t[t].i);
	q->k = (int)d->t[t].i;
}

/* profile_of interns the MIG profile named by token t; -1 when it is no
 * profile name. */
static int
profile_of(struct sp_state *st, const struct js_doc *d, int t)
{
	struct mig_profile p;
	char canon[32];

	if (!js_str(d, t) || mig_parse(d->t[t].s, &p) < 0)
		return -1;
	return sp_profile(st, mig_format(&p, canon, sizeof canon));
}

static void
read_profiles(struct sp_state *st, struct sp_req *q, const struct js_doc *d)
{
	int t = sp_field(st, SPF_MIG_PROFILE);
	int f = sp_field(st, SPF_MIG_FALLBACK);
	int i, e;
	char v[80];

	q->chain[0] = SP_WHOLE;
	q->nchain = 1;
	if (t >= 0 && (q->chain[0] = profile_of(st, d, t)) < 0)
		reject(q, "mig_profile %s is not a MIG profile name",
			js_repr(d, t, v, sizeof v));
	if (f < 0)
		return;
	if (t < 0)
		reject(q, "mig_fallback needs a mig_profile");
	else if (d->t[f].type != JS_ARRAY)
		reject(q,
			"mig_fallback must be an array of MIG profile names, "
			"got %s",
			js_repr(d, f, v, sizeof v));
	else if (d->t[f].n > SP_MAX_FALLBACK)
		reject(q, "mig_fallback lists more than %d profiles",
			SP_MAX_FALLBACK);
	if (q->err)
		return;
	for (i = 0, e = f + 1; i < d->t[f].n; i++, e = d->t[e].next) {
		if ((q->chain[q->nchain++] = profile_of(st, d, e)) < 0) {
			reject(q, "mig_fallback %s is not a MIG profile name",
				js_repr(d, e, v, sizeof v));
			return;
		}
	}
}

/* read_ids_unique rejects a whole-GPU request naming one GPU twice (a
 * MIG request may take several devices of one GPU). */
static void
read_ids_unique(struct sp_req *q)
{
	int i, j;

	if (q->chain[0] != SP_WHOLE)
		return;
	for (i = 0; i < q->nids; i++) {
		for (j = 0; j < i; j++) {
			if (q->ids[i] == q->ids[j]) {
				reject(q, "gpu_ids names GPU %d twice",
					q->ids[i]);
				return;
			}
		}
	}
}

static void
read_rest(const struct sp_state *st, struct sp_req *q, const struct js_doc *d)
{
	int t;
	char v[80];

	t = sp_field(st, SPF_MIN_MEMORY);
	if (t >= 0 &&
		(d->t[t].type != JS_INT || d->t[t].i < 0 ||
			d->t[t].i > 1L << 40))
		reject(q,
			"min_memory_mib must be a whole number of MiB, "
			"got %s",
			js_repr(d, t, v, sizeof v));
	else if (t >= 0)
		q->mem = (long)d->t[t].i;
	q->excl = 1;
	t = sp_field(st, SPF_EXCLUSIVE);
	if (t >= 0 && d->t[t].type != JS_TRUE && d->t[t].type != JS_FALSE)
		reject(q, "exclusive must be true or false, got %s",
			js_repr(d, t, v, sizeof v));
	else if (t >= 0)
		q->excl = d->t[t].type == JS_TRUE;
	t = sp_field(st, SPF_PREFER);
	if (t >= 0 && !js_str(d, t))
		reject(q, "prefer_node must be a node name, got %s",
			js_repr(d, t, v, sizeof v));
	else if (t >= 0)
		q->prefer = estrdup(d->t[t].s);
	t = sp_field(st, SPF_SELECTOR);
	if (t < 0 || sp_labels_read(d, t, &q->sel, &q->nsel) == 0)
		return;
	if (d->t[t].type == JS_OBJECT)
		reject(q, "node_selector values must be strings");
	else
		reject(q, "node_selector must be an object of strings, got %s",
			js_repr(d, t, v, sizeof v));
}

struct sp_req *
sp_req_read(struct sp_state *st, struct nd_reader *r, const struct js_doc *d)
{
	const char *id = js_str(d, sp_field(st, SPF_ID));
	struct sp_req *q;

	if (!id || !*id) {
		nd_warn(r, "request record has no id");
		return NULL;
	}
	q = ecalloc(1, sizeof *q + strlen(id) + 1);
	strcpy(q->id, id);
	read_order(st, q, d);
	read_strategy(st, q, d);
	read_count(st, q, d);
	read_profiles(st, q, d);
	read_ids_unique(q);
	read_rest(st, q, d);
	return q;
}

void
sp_req_free(struct sp_req *q)
{
	if (!q)
		return;
	free(q->err);
	free(q->ids);
	free(q->prefer);
	sp_labels_free(q->sel, q->nsel);
	free(q);
}

/* ---- batch order ---- */

/* by_priority: higher priority first, then those with a creation time,
 * earlier first, then input order. */
static int
by_priority(const void *pa, const void *pb)
{
	const struct sp_req *a = *(struct sp_req *const *)pa;
	const struct sp_req *b = *(struct sp_req *const *)pb;

	if (a->prio != b->prio)
		return a->prio > b->prio ? -1 : 1;
	if (a->has_created != b->has_created)
		return a->has_created ? -1 : 1;
	if (a->has_created && a->created != b->created)
		return a->created < b->created ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void
sp_req_order(struct sp_req **v, size_t n, int s)
{
	if (s == SP_PRIORITY && n > 1)
		qsort(v, n, sizeof *v, by_priority);
}
