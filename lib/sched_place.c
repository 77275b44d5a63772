/* sched_place: deciding one request: order, fit, devices, output. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "sched.h"

/* ---- candidates ---- */

int
sp_usable(const struct sp_node *n)
{
	return n->ready && !n->unsched;
}

int
sp_selects(const struct sp_node *n, const struct sp_label *sel, size_t nsel)
{
	size_t i = 0, j = 0;
	int c;

	while (j < nsel) {
		if (i == n->nlabels)
			return 0;
		c = strcmp(n->labels[i].key, sel[j].key);
		if (c > 0)
			return 0;
		if (c == 0 && strcmp(n->labels[i].val, sel[j].val) != 0)
			return 0;
		j += c == 0;
		i++;
	}
	return 1;
}

/* candidate says whether d is one of a node's candidate devices for q:
 * of the right profile, healthy, and free with at least q->mem MiB, or
 * when q looks for shared devices, shared (not held exclusively) with at
 * least q->mem MiB left. */
static inline int
candidate(const struct sp_dev *d, const struct sp_query *q)
{
	if (d->prof != q->prof || !d->healthy || d->excl)
		return 0;
	if (q->shared)
		return d->nshared > 0 && d->mem - d->shared_mem >= q->mem;
	return !d->nshared && d->mem >= q->mem;
}

void
sp_node_load(const struct sp_node *n, const struct sp_query *q,
	struct sp_load *out)
{
	const struct sp_dev *d;
	size_t i, lo, hi;

	memset(out, 0, sizeof *out);
	if (!sp_usable(n))
		return;
	sp_prof_range(n, q->prof, &lo, &hi);
	for (i = lo; i < hi; i++) {
		d = n->devs[i];
		if (!candidate(d, q))
			continue;
		out->count++;
		out->util += d->util;
		out->mem += q->shared ? d->mem - d->shared_mem : d->mem;
		out->cool += d->util < q->goal;
	}
}

/* ---- the order of nodes ---- */

static int
cmp_int(long long a, long long b)
{
	return a < b ? -1 : a > b;
}

/* rot is rank's place in a rotation of nnodes ranks starting at start. */
static long long
rot(int rank, int start, size_t nnodes)
{
	long long r = (long long)rank - start;

	return r < 0 ? r + (long long)nnodes : r;
}

int
sp_cmp(const struct sp_node *na, const struct sp_load *a,
	const struct sp_node *nb, const struct sp_load *b,
	const struct sp_query *q, size_t nnodes)
{
	int c = 0;

	switch (q->strat) {
	case SP_LEAST_UTILIZED:
	case SP_PRIORITY: /* lower mean utilization, more devices */
		if (!(c = cmp_int(a->util * b->count, b->util * a->count)))
			c = cmp_int(b->count, a->count);
		break;
	case SP_LEAST_LOADED: /* more devices, more memory */
		if (!(c = cmp_int(b->count, a->count)))
			c = cmp_int(b->mem, a->mem);
		break;
	case SP_BEST_FIT: /* less memory */ c = cmp_int(a->mem, b->mem); break;
	case SP_BINPACK:
	case SP_BINPACK_GPU: /* fewer devices */
		c = cmp_int(a->count, b->count);
		break;
	case SP_SPREAD:
	case SP_SPREAD_GPU: /* more devices */
		c = cmp_int(b->count, a->count);
		break;
	case SP_COST_OPTIMIZED: /* cheap, known cost, lower cost, loaded */
		if (!(c = cmp_int(nb->cheap, na->cheap)) &&
			!(c = cmp_int(nb->has_cost, na->has_cost)) &&
			!(c = na->cost < nb->cost ? -1 : na->cost > nb->cost) &&
			!(c = cmp_int(b->count, a->count)))
			c = cmp_int(b->mem, a->mem);
		break;
	}
	if (c)
		return c;
	return cmp_int(rot(na->rank, q->start, nnodes),
		rot(nb->rank, q->start, nnodes));
}

/* ---- devices ---- */

struct cand {
	struct sp_dev *d;
	long free; /* MiB left when shared */
	int pc;    /* candidates on its GPU */
	int round; /* its place among them */
};

/* dev_cmp orders the candidates of one node for q (see sched-pick(1),
 * STRATEGIES): shared ones by memory left, else by the strategy, then by
 * index. */
static int
dev_cmp(const struct cand *a, const struct cand *b, const struct sp_query *q)
{
	int c = 0;

	if (q->shared)
		c = cmp_int(a->free, b->free);
	else if (q->strat == SP_LEAST_UTILIZED || q->strat == SP_PRIORITY)
		c = cmp_int(a->d->util, b->d->util);
	else if (q->strat == SP_BEST_FIT)
		c = cmp_int(a->d->mem, b->d->mem);
	else if (q->strat == SP_BINPACK_GPU && !(c = cmp_int(a->pc, b->pc)))
		c = cmp_int(b->d->util, a->d->util);
	else if (q->strat == SP_SPREAD_GPU &&
		!(c = cmp_int(a->round, b->round)) &&
		!(c = cmp_int(b->pc, a->pc)))
		c = cmp_int(a->d->util, b->d->util);
	if (c)
		return c;
	if ((c = cmp_int(a->d->index, b->d->index)))
		return c;
	return cmp_int(a->d->migdev, b->d->migdev);
}

/* gather fills v with n's devices that fit q (under the goal alone
 * when q->cool), in index order, with their per-GPU counts. Returns how
 * many. */
static size_t
gather(const struct sp_node *n, const struct sp_query *q, struct cand *v)
{
	size_t i, m = 0, run, lo, hi;

	sp_prof_range(n, q->prof, &lo, &hi);
	for (i = lo; i < hi; i++) {
		if (!candidate(n->devs[i], q) ||
			(q->cool && n->devs[i]->util >= q->goal))
			continue;
		v[m].d = n->devs[i];
		v[m].free = n->devs[i]->mem - n->devs[i]->shared_mem;
		v[m].round = m && v[m - 1].d->index == v[m].d->index
			? v[m - 1].round + 1
			: 0;
		m++;
	}
	for (i = 0; i < m; i += run) {
		for (run = 1;
			i + run < m && v[i + run].d->index == v[i].d->index;
			run++)
			;
		for (size_t j = i; j < i + run; j++)
			v[j].pc = (int)run;
	}
	return m;
}

/* take_ids moves, for each explicit index of q in turn, the first unused
 * candidate on that GPU to the front of v. Returns 0 or -1. */
static int
take_ids(struct cand *v, size_t m, const struct sp_query *q)
{
	struct cand t;
	size_t j;
	int i;

	for (i = 0; i < q->nids; i++) {
		for (j = (size_t)i; j < m && v[j].d->index != q->ids[i]; j++)
			;
		if (j == m)
			return -1;
		t = v[j];
		memmove(&v[i + 1], &v[i], (j - (size_t)i) * sizeof *v);
		v[i] = t;
	}
	return 0;
}

/* take_best moves the q->k best candidates to the front of v, in order. */
static void
take_best(struct cand *v, size_t m, const struct sp_query *q)
{
	size_t i, j, best;
	struct cand t;

	for (i = 0; i < (size_t)q->k; i++) {
		for (best = i, j = i + 1; j < m; j++)
			if (dev_cmp(&v[j], &v[best], q) < 0)
				best = j;
		t = v[i];
		v[i] = v[best];
		v[best] = t;
	}
}

static int
dev_before(const struct sp_dev *a, const struct sp_dev *b)
{
	if (a->index != b->index)
		return a->index < b->index;
	return a->migdev < b->migdev;
}

/* pick chooses q->k devices of n for q into out (when not NULL), in
 * index order. Returns 0, or -1 when n has not enough. */
static int
pick(const struct sp_node *n, const struct sp_query *q, struct sp_dev **out)
{
	struct cand local[64], *v = local;
	size_t m;
	int i, j, rc = -1;
	struct sp_dev *t;

	if (n->ndevs > 64)
		v = emalloc(n->ndevs * sizeof *v);
	m = gather(n, q, v);

	if (m < (size_t)q->k)
		goto done;
	if (q->nids ? take_ids(v, m, q) < 0 : (take_best(v, m, q), 0))
		goto done;
	rc = 0;
	for (i = 0; out && i < q->k; i++) {
		for (t = v[i].d, j = i; j > 0 && dev_before(t, out[j - 1]); j--)
			out[j] = out[j - 1];
		out[j] = t;
	}
done:
	if (v != local)
		free(v);
	return rc;
}

int
sp_fits(const struct sp_node *n, const struct sp_query *q, struct sp_dev **out)
{
	return sp_usable(n) && sp_selects(n, q->sel, q->nsel) &&
		pick(n, q, out) == 0;
}

/* ---- one decision ---- */

/* splitmix64 steps random's generator. */
static uint64_t
splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* start_rank is where the rotation of round_robin (just after the node
 * chosen last) or random (a fresh draw) starts; 0 for the others. */
static int
start_rank(struct sp_state *st, int strat)
{
	size_t lo = 0, hi = st->nnodes, mid;

	if (!st->nnodes)
		return 0;
	if (strat == SP_RANDOM)
		return (int)(splitmix64(&st->rng) % st->nnodes);
	if (strat != SP_ROUND_ROBIN || !st->rr_last)
		return 0;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (strcmp(st->by_name[mid]->name, st->rr_last) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int)(lo % st->nnodes);
}

/* score is the strategy's measure of node n for q (see sched-pick(1)),
 * written into the output. */
static void
score(struct jb *o, const struct sp_node *n, const struct sp_query *q)
{
	struct sp_load l;

	sp_node_load(n, q, &l);
	switch (q->strat) {
	case SP_LEAST_UTILIZED:
	case SP_PRIORITY:
		/* the mean, rounded to thousandths */
		jb_milli(o,
			l.count ? (l.util * 2000 + l.count) / (2 * l.count)
				: 0);
		break;
	case SP_BEST_FIT:
	case SP_LEAST_LOADED:
		jb_int(o, q->strat == SP_BEST_FIT ? l.mem : l.count);
		break;
	case SP_ROUND_ROBIN:
	case SP_RANDOM: jb_int(o, n->rank); break;
	case SP_COST_OPTIMIZED:
		if (n->has_cost)
			jb_real(o, n->cost);
		else
			jb_raw(o, "null");
		break;
	default: jb_int(o, l.count);
	}
}

/* placement writes the record of r placed on n with devs for q, after
 * chain step step. */
static void
placement(struct sp_state *st, const struct sp_req *r, const struct sp_node *n,
	struct sp_dev **devs, const struct sp_query *q, int step)
{
	struct jb *o = &st->out;
	int i;

	jb_reset(o);
	jb_raw(o, "{\"kind\":\"placement\",\"id\":");
	jb_str(o, r->id);
	jb_raw(o, ",\"node\":");
	jb_str(o, n->name);
	jb_raw(o, ",\"devices\":[");
	for (i = 0; i < q->k; i++) {
		jb_raw(o, i ? "," : "");
		jb_str(o, devs[i]->uuid);
	}
	jb_raw(o, "],\"indexes\":[");
	for (i = 0; i < q->k; i++) {
		jb_raw(o, i ? "," : "");
		jb_int(o, devs[i]->index);
	}
	jb_raw(o, "],\"strategy\":");
	jb_str(o, sp_strategy_name(q->strat));
	jb_raw(o, ",\"score\":");
	score(o, n, q);
	if (q->prof != SP_WHOLE) {
		jb_raw(o, ",\"mig_profile\":");
		jb_str(o, st->profs[q->prof]);
	}
	if (step) {
		jb_raw(o, ",\"fallback_from\":");
		jb_str(o, st->profs[r->chain[0]]);
	}
	jb_raw(o, "}");
}

static void
unschedulable(struct sp_state *st, const struct sp_req *r, const char *why)
{
	struct jb *o = &st->out;

	jb_reset(o);
	jb_raw(o, "{\"kind\":\"unschedulable\",\"id\":");
	jb_str(o, r->id);
	jb_raw(o, ",\"reason\":");
	jb_str(o, why);
	jb_raw(o, "}");
}

/* search asks the search for q: under least_utilized (and priority,
 * which places as it does) first for candidates under the goal alone,
 * then for any; with shared set, devices already shared that have room
 * (q->shared set on return) before free ones, each time. */
static struct sp_node *
search(struct sp_state *st, struct sp_query *q, int shared)
{
	struct sp_node *n;
	int cool, phase;

	for (cool = q->strat == SP_LEAST_UTILIZED || q->strat == SP_PRIORITY;
		cool >= 0; cool--) {
		for (phase = shared; phase >= 0; phase--) {
			q->cool = cool;
			q->shared = phase;
			if ((n = st->ops->find(st->ctx, q)))
				return n;
		}
	}
	return NULL;
}

/* try_profile looks for a node for q: the preferred one when it fits
 * (the goal aside: a fitting prefer_node wins over the strategy), else
 * the search's; for shared request r, as search orders it. Stores the
 * devices in devs. */
static struct sp_node *
try_profile(struct sp_state *st, const struct sp_req *r, struct sp_query *q,
	struct sp_dev **devs)
{
	struct sp_node *n = r->prefer ? hm_get(st->node_by_name, r->prefer)
				      : NULL;
	int phase;

	for (phase = !r->excl; n && phase >= 0; phase--) {
		q->shared = phase;
		if (sp_fits(n, q, devs))
			return n;
	}
	n = search(st, q, !r->excl);
	if (n && !sp_fits(n, q, devs))
		err_die(HAZ_FAIL, "internal error: %s does not fit %s", n->name,
			r->id);
	return n;
}

/* place tries r's profiles in turn; on success it records the holding,
 * fills the output and returns 1; else 0. */
static int
place(struct sp_state *st, const struct sp_req *r, int strat)
{
	struct sp_dev *devs[SP_MAX_GPUS];
	struct sp_query q = {0};
	struct sp_node *n;
	int step;

	q.mem = r->mem;
	q.k = r->k;
	q.strat = strat;
	q.goal = st->goal;
	q.ids = r->ids;
	q.nids = r->nids;
	q.sel = r->sel;
	q.nsel = r->nsel;
	for (step = 0; step < r->nchain; step++) {
		q.prof = r->chain[step];
		q.start = start_rank(st, strat);
		q.cool = 0;
		n = try_profile(st, r, &q, devs);
		if (!n)
			continue;
		placement(st, r, n, devs, &q, step);
		sp_hold_devs(st, r->id, devs, (size_t)q.k, r->excl ? 0 : q.mem,
			r->excl);
		if (strat == SP_ROUND_ROBIN) {
			free(st->rr_last);
			st->rr_last = estrdup(n->name);
		}
		return 1;
	}
	return 0;
}

/* ---- reasons ---- */

/* selector_text writes sel as k=v,k=v into buf (size n). */
static char *
selector_text(const struct sp_req *r, char *buf, size_t n)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < r->nsel && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s=%s",
			i ? "," : "", r->sel[i].key, r->sel[i].val);
	return buf;
}

/* any_selected says whether some usable node matches r's selector. */
static int
any_selected(const struct sp_state *st, const struct sp_req *r)
{
	const struct sp_nodeset *s = sp_label_set(st, r->sel[0].key,
		r->sel[0].val);
	size_t i;

	for (i = 0; s && i < s->n; i++)
		if (sp_usable(s->v[i]) && sp_selects(s->v[i], r->sel, r->nsel))
			return 1;
	return 0;
}

/* what_text names the devices r asks for: "GPUs", "2g.20gb device",
 * "2g.20gb or 1g.10gb devices". */
static char *
what_text(const struct sp_state *st, const struct sp_req *r, char *buf,
	size_t n)
{
	size_t len = 0;
	int i;

	if (r->chain[0] == SP_WHOLE) {
		snprintf(buf, n, "%sGPU%s", r->excl ? "healthy " : "",
			r->k == 1 ? "" : "s");
		return buf;
	}
	for (i = 0; i < r->nchain && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s",
			!i                           ? ""
				: i == r->nchain - 1 ? " or "
						     : ", ",
			st->profs[r->chain[i]]);
	if (len < n)
		snprintf(buf + len, n - len, " device%s", r->k == 1 ? "" : "s");
	return buf;
}

/* reason writes why r found no node, naming every constraint it has. */
static void
reason(struct sp_state *st, const struct sp_req *r)
{
	char sel[256], what[256], ids[400], msg[1200];
	size_t len = 0;
	int i;

	if (r->nsel && !any_selected(st, r)) {
		snprintf(msg, sizeof msg,
			"no ready node matches node selector %s",
			selector_text(r, sel, sizeof sel));
		unschedulable(st, r, msg);
		return;
	}
	ids[0] = '\0';
	for (i = 0; i < r->nids && len < sizeof ids; i++)
		len += (size_t)snprintf(ids + len, sizeof ids - len, "%s%d",
			i                      ? ","
				: r->nids == 1 ? " at index "
					       : " at indexes ",
			r->ids[i]);
	snprintf(msg, sizeof msg, "no node%s%s has %d %s%s%s",
		r->nsel ? " matching node selector " : "",
		r->nsel ? selector_text(r, sel, sizeof sel) : "", r->k,
		r->excl ? "free " : "", what_text(st, r, what, sizeof what),
		ids);
	len = strlen(msg);
	if (r->excl && r->mem)
		snprintf(msg + len, sizeof msg - len, " with %ld MiB%s", r->mem,
			r->k == 1 ? "" : " each");
	else if (!r->excl)
		snprintf(msg + len, sizeof msg - len,
			" with %ld MiB free to share", r->mem);
	unschedulable(st, r, msg);
}

/* decide places r or says why not, filling st->out. */
static void
decide(struct sp_state *st, const struct sp_req *r)
{
	int strat = r->strat >= 0 ? r->strat : st->strategy;
	const struct sp_hold *h;
	char msg[600];

	sp_sync(st);
	if (r->err) {
		unschedulable(st, r, r->err);
	} else if ((h = hm_get(st->holds, r->id))) {
		snprintf(msg, sizeof msg, "%s already holds devices%s%s", r->id,
			h->devs[0]->node ? " on " : "",
			h->devs[0]->node ? h->devs[0]->node->name : "");
		unschedulable(st, r, msg);
	} else if (place(st, r, strat)) {
		st->nplaced++;
		return;
	} else {
		reason(st, r);
	}
	st->nunsched++;
}

void
sp_flush(struct sp_state *st)
{
	double t;
	size_t i;

	/* the map of waiting requests is emptied, but kept for the next
	 * batch that needs one */
	for (i = 0; st->pending_live && i < st->nbatch; i++)
		hm_take(st->pending, st->batch[i]->id);
	st->pending_live = 0;
	sp_req_order(st->batch, st->nbatch, st->strategy);
	for (i = 0; i < st->nbatch; i++) {
		if (!st->batch[i]->withdrawn) {
			t = sp_clock(0);
			decide(st, st->batch[i]);
			st->decide_sec += sp_clock(0) - t;
			if (st->emit)
				st->emit(st->emit_arg, st->out.buf,
					st->out.len);
			else
				jb_write(&st->out);
		}
		sp_req_free(st->batch[i]);
		st->batch[i] = NULL;
	}
	st->nbatch = 0;
}
