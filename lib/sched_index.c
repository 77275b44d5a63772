/* sched_index: classes x count buckets x groups of ranks (see
 * sched_index.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "rset.h"
#include "sched_index.h"
#include "treap.h"

/* ORD_LUG is least_utilized's order over nodes bucketed by their
 * candidates under the goal rather than by all of them: its first
 * search (sched.h). */
enum { ORD_LU, ORD_LL, ORD_BF, ORD_RANK, ORD_COST, ORD_LUG, NORD };

/* The order kind of each strategy's trees. */
static const int ord_of[SP_NSTRATEGIES] = {
	[SP_LEAST_UTILIZED] = ORD_LU,
	[SP_PRIORITY] = ORD_LU,
	[SP_LEAST_LOADED] = ORD_LL,
	[SP_BEST_FIT] = ORD_BF,
	[SP_BINPACK] = ORD_RANK,
	[SP_SPREAD] = ORD_RANK,
	[SP_BINPACK_GPU] = ORD_RANK,
	[SP_SPREAD_GPU] = ORD_RANK,
	[SP_ROUND_ROBIN] = ORD_RANK,
	[SP_RANDOM] = ORD_RANK,
	[SP_COST_OPTIMIZED] = ORD_COST,
};

/* Nodes of one bucket whose keys agree but for the rank: a group. The
 * key is sp_cmp's order within a bucket (equal counts, no rotation)
 * packed into integers, rank aside; every order breaks its ties by rank,
 * so a group's members are walked in rank order. A bucket is a small
 * treap of groups, mostly cache-resident, and moving a node is mostly a
 * bit flip in an rset: with a treap of nodes, each comparison chased a
 * node through memory and updates cost several times more. */
struct grp {
	struct tp_node tn;
	uint64_t key[3];
	struct rset ranks;
};

/* One node's place in one class of one order. */
struct ent {
	struct grp *g; /* NULL: in no bucket */
	int bucket;    /* its count when filed */
};

/* A class: free devices of one profile with at least a threshold of
 * memory (a device size of the inventory), or shared devices of one
 * profile with at least some memory left (a size shared requests asked
 * for: such classes are made as requests come). */
struct cls {
	int prof, shared;
	long mem;             /* the threshold */
	int maxc;             /* most devices a node may have in this class */
	size_t tree0;         /* trees[tree0 + n - 1] holds count n */
	struct sp_load *load; /* [node id]: as filed; NULL until used */
};

/* One order kind's index over a view: made the first time a request
 * needs it, and then kept only in the classes that requests have
 * needed, since every class kept costs on every update. */
struct order {
	struct ent **ents;     /* [class][member]; NULL: class not kept */
	struct tp_tree *trees; /* ntrees; NULL: order not made */
};

/* The nodes an index covers: all of them (view 0), or those with one
 * label=value that selectors name, when it has too many nodes to look
 * at each. */
struct view {
	int *pos;         /* [node id]: member number, -1; NULL: all */
	size_t n;         /* member numbers given */
	int *free, nfree; /* member numbers given back, for new members */
	struct order ord[NORD];
};

/* The views other than 0 a node is in. */
struct vlist {
	int *v;
	int n;
};

struct spx {
	struct sp_state *st;
	int nprofs;       /* profiles known at the last rebuild */
	int *tfirst, *pn; /* per profile: first threshold, how many */
	long *thr;        /* thresholds, ascending per profile */
	struct cls *cls;  /* class t: threshold t, free; then shared */
	int ncls;
	int **shared, *nshared; /* per profile: its shared classes */
	int *used, nused;       /* the classes some order keeps */
	size_t ntrees;
	uint32_t universe;     /* ranks: nodes at the last rebuild */
	struct sp_load *loads; /* scratch: one node's loads, ncls */
	struct grp *spare;     /* unused groups, linked through tn.r */
	uint32_t *scratch;     /* direct's ranks: nnodes */
	struct view *views;    /* [0]: all nodes */
	int nviews;
	struct hm *view_of; /* "key\037value" -> view number + 1 */
	struct vlist *vl;   /* [node id] */
};

/* ---- groups ---- */

static struct grp *
grp_of(const struct tp_node *x)
{
	return (struct grp *)((char *)x - offsetof(struct grp, tn));
}

static int
grp_cmp(const struct tp_node *a, const struct tp_node *b, const void *ctx)
{
	const uint64_t *ka = grp_of(a)->key, *kb = grp_of(b)->key;

	(void)ctx;
	if (ka[0] != kb[0])
		return ka[0] < kb[0] ? -1 : 1;
	if (ka[1] != kb[1])
		return ka[1] < kb[1] ? -1 : 1;
	return ka[2] < kb[2] ? -1 : ka[2] > kb[2];
}

/* cost_bits maps a cost to an integer of the same order (IEEE 754
 * doubles compare as sign-magnitude integers). */
static uint64_t
cost_bits(double cost)
{
	uint64_t b;

	memcpy(&b, &cost, sizeof b);
	return b >> 63 ? ~b : b | 1ULL << 63;
}

/* key_of packs what orders node n with load l in order kind k, but for
 * its rank, into key. */
static void
key_of(int k, const struct sp_node *n, const struct sp_load *l, uint64_t *key)
{
	uint64_t mem = (uint64_t)l->mem;

	key[0] = key[1] = key[2] = 0;
	switch (k) {
	case ORD_LU: key[2] = (uint64_t)l->util; break;
	case ORD_LUG:
		/* counts differ within a bucket: the mean, exact for up to
		 * 65536 devices a node (means differ by 1 / count^2 or more,
		 * scaled by 2^32), then more devices first */
		key[1] = l->count
			? ((uint64_t)l->util << 32) / (uint64_t)l->count
			: 0;
		key[2] = ~(uint64_t)l->count;
		break;
	case ORD_LL: key[2] = ~mem; break;
	case ORD_BF: key[2] = mem; break;
	case ORD_COST:
		key[0] = (uint64_t)!n->cheap << 1 | (uint64_t)!n->has_cost;
		key[1] = n->has_cost ? cost_bits(n->cost) : 0;
		key[2] = ~mem;
		break;
	}
}

static struct tp_tree *
bucket(const struct order *o, const struct spx *x, int c, int count)
{
	return &o->trees[x->cls[c].tree0 + (size_t)count - 1];
}

/* join files rank into the group of key in tree t, making the group. */
static struct grp *
join(struct spx *x, struct tp_tree *t, const uint64_t *key, int rank)
{
	struct grp probe, *g;
	struct tp_node *found;

	memcpy(probe.key, key, sizeof probe.key);
	if ((found = tp_find(t, &probe.tn))) {
		g = grp_of(found);
	} else {
		if ((g = x->spare))
			x->spare = g->tn.r ? grp_of(g->tn.r) : NULL;
		else
			g = ecalloc(1, sizeof *g);
		memcpy(g->key, key, sizeof g->key);
		tp_insert(t, &g->tn);
	}
	rs_add(&g->ranks, (uint32_t)rank, x->universe);
	return g;
}

/* leave takes rank out of group g of tree t; an emptied group goes to
 * the spare list, keeping its memory. */
static void
leave(struct spx *x, struct tp_tree *t, struct grp *g, int rank)
{
	rs_del(&g->ranks, (uint32_t)rank);
	if (g->ranks.n)
		return;
	tp_remove(t, &g->tn);
	g->tn.r = x->spare ? &x->spare->tn : NULL;
	x->spare = g;
}

/* ---- loads ---- */

/* shared_loads adds shared device d to the loads of the shared classes
 * of its profile whose threshold its memory left reaches. */
static void
shared_loads(struct spx *x, const struct sp_dev *d)
{
	long room = d->mem - d->shared_mem;
	struct sp_load *l;
	int i, c;

	for (i = 0; i < x->nshared[d->prof]; i++) {
		c = x->shared[d->prof][i];
		if (room < x->cls[c].mem)
			continue;
		l = &x->loads[c];
		l->count++;
		l->util += d->util;
		l->mem += room;
		l->cool += d->util < x->st->goal;
	}
}

/* node_loads fills x->loads with node n's load in every class. */
static void
node_loads(struct spx *x, const struct sp_node *n)
{
	const struct sp_dev *d;
	struct sp_load *l;
	size_t i;
	int j, end;

	memset(x->loads, 0, (size_t)x->ncls * sizeof *x->loads);
	if (!sp_usable(n))
		return;
	for (i = 0; i < n->ndevs; i++) {
		d = n->devs[i];
		if (d->prof < 0 || d->prof >= x->nprofs || !d->healthy ||
			d->excl)
			continue;
		if (d->nshared) {
			shared_loads(x, d);
			continue;
		}
		end = x->tfirst[d->prof] + x->pn[d->prof];
		for (j = x->tfirst[d->prof]; j < end && x->thr[j] <= d->mem;
			j++) {
			l = &x->loads[j];
			l->count++;
			l->util += d->util;
			l->mem += d->mem;
			l->cool += d->util < x->st->goal;
		}
	}
}

static int
same_load(const struct sp_load *a, const struct sp_load *b)
{
	return a->count == b->count && a->util == b->util && a->mem == b->mem &&
		a->cool == b->cool;
}

/* member returns n's number in view v. */
static size_t
member(const struct view *v, const struct sp_node *n)
{
	return v->pos ? (size_t)v->pos[n->id] : n->id;
}

/* refile moves node n's entry in class c of order o (kind k) of view v
 * to where load l puts it; an entry whose bucket and key stay is not
 * touched. */
static void
refile(struct spx *x, struct view *v, int k, const struct sp_node *n, int c,
	const struct sp_load *l)
{
	struct order *o = &v->ord[k];
	struct ent *e = &o->ents[c][member(v, n)];
	int count = k == ORD_LUG ? l->cool : l->count;
	uint64_t key[3];

	if (!e->g && !count)
		return;
	if (count > x->cls[c].maxc)
		err_die(HAZ_FAIL, "internal error: %s outgrew its index",
			n->name);
	key_of(k, n, l, key);
	if (e->g && e->bucket == count && !memcmp(e->g->key, key, sizeof key))
		return;
	if (e->g)
		leave(x, bucket(o, x, c, e->bucket), e->g, n->rank);
	e->g = NULL;
	e->bucket = count;
	if (count)
		e->g = join(x, bucket(o, x, c, count), key, n->rank);
}

/* ---- orders and classes ---- */

/* free_groups drops every group of tree t. */
static void
free_groups(struct tp_tree *t)
{
	struct tp_node *x;
	struct grp *g;

	while ((x = t->root)) {
		tp_remove(t, x);
		g = grp_of(x);
		rs_free(&g->ranks);
		free(g);
	}
}

static void
free_order(struct spx *x, struct order *o)
{
	size_t i;
	int c;

	for (i = 0; o->trees && i < x->ntrees; i++)
		free_groups(&o->trees[i]);
	for (c = 0; o->ents && c < x->ncls; c++)
		free(o->ents[c]);
	free(o->ents);
	free(o->trees);
	memset(o, 0, sizeof *o);
}

/* class_load returns node n's load in class c alone, as node_loads
 * would. */
static struct sp_load
class_load(const struct spx *x, const struct sp_node *n, int c)
{
	const struct cls *k = &x->cls[c];
	struct sp_load l = {0, 0, 0, 0};
	const struct sp_dev *d;
	size_t i, lo, hi;
	long room;

	if (!sp_usable(n))
		return l;
	sp_prof_range(n, k->prof, &lo, &hi);
	for (i = lo; i < hi; i++) {
		d = n->devs[i];
		room = k->shared ? d->mem - d->shared_mem : d->mem;
		if (!d->healthy || d->excl || !d->nshared != !k->shared ||
			room < k->mem)
			continue;
		l.count++;
		l.util += d->util;
		l.mem += room;
		l.cool += d->util < x->st->goal;
	}
	return l;
}

/* use_class starts keeping the loads of class c, for every node. */
static void
use_class(struct spx *x, int c)
{
	size_t i;

	if (x->cls[c].load)
		return;
	x->used[x->nused++] = c;
	x->cls[c].load = ecalloc(x->st->nnodes + 1, sizeof *x->cls[c].load);
	for (i = 0; i < x->st->nnodes; i++)
		x->cls[c].load[i] = class_load(x, x->st->nodes[i], c);
}

/* keep makes class c of order k of view v kept from now on, filing
 * every member. */
static void
keep(struct spx *x, struct view *v, int k, int c)
{
	struct order *o = &v->ord[k];
	struct sp_node *n;
	size_t i;

	if (!o->trees) {
		o->trees = emalloc((x->ntrees + 1) * sizeof *o->trees);
		for (i = 0; i < x->ntrees; i++)
			tp_init(&o->trees[i], grp_cmp, NULL);
		o->ents = ecalloc((size_t)x->ncls + 1, sizeof *o->ents);
	}
	if (o->ents[c])
		return;
	o->ents[c] = ecalloc(v->n + 1, sizeof *o->ents[c]);
	use_class(x, c);
	for (i = 0; i < x->st->nnodes; i++) {
		n = x->st->nodes[i];
		if (!v->pos || v->pos[n->id] >= 0)
			refile(x, v, k, n, c, &x->cls[c].load[n->id]);
	}
}

/* refile_views files node n in class c of every view it is in. */
static void
refile_views(struct spx *x, const struct sp_node *n, int c,
	const struct sp_load *l)
{
	struct view *v;
	int i, k;

	for (i = -1; i < x->vl[n->id].n; i++) {
		v = &x->views[i < 0 ? 0 : x->vl[n->id].v[i]];
		for (k = 0; k < NORD; k++)
			if (v->ord[k].ents && v->ord[k].ents[c])
				refile(x, v, k, n, c, l);
	}
}

/* update files node n anew in every class kept, where its load
 * changed, or in all when its cost did (refile leaves what stays). */
static void
update(void *ctx, struct sp_node *n)
{
	struct spx *x = ctx;
	struct sp_load *old;
	int i, c;

	if (!x->nused)
		return;
	node_loads(x, n);
	for (i = 0; i < x->nused; i++) {
		c = x->used[i];
		old = &x->cls[c].load[n->id];
		if (same_load(old, &x->loads[c]) && !n->rekey)
			continue;
		*old = x->loads[c];
		refile_views(x, n, c, old);
	}
}

/* view_for returns the view of the nodes in set s (labelled key=val),
 * making it. */
static struct view *
view_for(struct spx *x, const char *key, const char *val,
	const struct sp_nodeset *s)
{
	char *name = easprintf("%s\037%s", key, val);
	uintptr_t got = (uintptr_t)hm_get(x->view_of, name);
	struct view *v;
	struct vlist *l;
	size_t i;

	if (got) {
		free(name);
		return &x->views[got - 1];
	}
	x->views = erealloc(x->views,
		(size_t)(x->nviews + 1) * sizeof *x->views);
	v = &x->views[x->nviews];
	memset(v, 0, sizeof *v);
	v->pos = emalloc((x->st->nnodes + 1) * sizeof *v->pos);
	memset(v->pos, 0xff, (x->st->nnodes + 1) * sizeof *v->pos);
	for (i = 0; i < s->n; i++) {
		v->pos[s->v[i]->id] = (int)v->n++;
		l = &x->vl[s->v[i]->id];
		l->v = erealloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);
		l->v[l->n++] = x->nviews;
	}
	hm_put(x->view_of, name, (void *)(uintptr_t)++x->nviews);
	free(name);
	return v;
}

/* view_drop takes node n out of view v (number i): out of every order's
 * trees, its member number given back. */
static void
view_drop(struct spx *x, struct view *v, int i, const struct sp_node *n)
{
	struct vlist *l = &x->vl[n->id];
	int m = v->pos[n->id], k, c, j;
	struct ent *e;

	for (k = 0; k < NORD; k++) {
		for (c = 0; v->ord[k].ents && c < x->ncls; c++) {
			if (!v->ord[k].ents[c])
				continue;
			e = &v->ord[k].ents[c][m];
			if (e->g)
				leave(x, bucket(&v->ord[k], x, c, e->bucket),
					e->g, n->rank);
			e->g = NULL;
			e->bucket = 0;
		}
	}
	v->pos[n->id] = -1;
	v->free = erealloc(v->free, (size_t)(v->nfree + 1) * sizeof *v->free);
	v->free[v->nfree++] = m;
	for (j = 0; j < l->n && l->v[j] != i; j++)
		;
	l->v[j] = l->v[--l->n];
}

/* view_add puts node n into view v (number i), filed in every kept
 * class as its load stands; the update that follows refiles it. */
static void
view_add(struct spx *x, struct view *v, int i, const struct sp_node *n)
{
	struct vlist *l = &x->vl[n->id];
	int m, k, c;

	if (v->nfree) {
		m = v->free[--v->nfree];
	} else {
		m = (int)v->n++;
		for (k = 0; k < NORD; k++)
			for (c = 0; v->ord[k].ents && c < x->ncls; c++)
				if (v->ord[k].ents[c]) {
					v->ord[k].ents
						[c] = erealloc(v->ord[k]
								       .ents[c],
						(v->n + 1) *
							sizeof *v->ord[k]
								.ents[c]);
					memset(&v->ord[k].ents[c][m], 0,
						sizeof *v->ord[k].ents[c]);
				}
	}
	v->pos[n->id] = m;
	l->v = erealloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);
	l->v[l->n++] = i;
	for (k = 0; k < NORD; k++)
		for (c = 0; v->ord[k].ents && c < x->ncls; c++)
			if (v->ord[k].ents[c])
				refile(x, v, k, n, c, &x->cls[c].load[n->id]);
}

/* relabel moves node n into or out of the view of key=val, if there is
 * one; views exist only for the label sets selectors have walked. */
static void
relabel(void *ctx, struct sp_node *n, const char *key, const char *val, int in)
{
	struct spx *x = ctx;
	char buf[256], *name;
	uintptr_t got;
	struct view *v;

	if (!x->view_of || x->nviews < 2)
		return;
	name = sp_label_key(key, val, buf, sizeof buf);
	got = (uintptr_t)hm_get(x->view_of, name);
	if (name != buf)
		free(name);
	if (!got)
		return;
	v = &x->views[got - 1];
	if ((v->pos[n->id] >= 0) == in)
		err_die(HAZ_FAIL, "internal error: %s is%s in the view of %s",
			n->name, in ? " already" : " not", key);
	if (in)
		view_add(x, v, (int)got - 1, n);
	else
		view_drop(x, v, (int)got - 1, n);
}

/* ---- layout ---- */

struct size {
	int prof;
	long mem;
};

static int
by_size(const void *pa, const void *pb)
{
	const struct size *a = pa, *b = pb;

	if (a->prof != b->prof)
		return a->prof < b->prof ? -1 : 1;
	return a->mem < b->mem ? -1 : a->mem > b->mem;
}

static void
free_layout(struct spx *x)
{
	struct grp *g;
	int k, c, i;
	size_t n;

	for (i = 0; i < x->nviews; i++) {
		for (k = 0; k < NORD; k++)
			free_order(x, &x->views[i].ord[k]);
		free(x->views[i].pos);
		free(x->views[i].free);
	}
	free(x->views);
	x->views = NULL;
	x->nviews = 0;
	hm_free(x->view_of);
	x->view_of = NULL;
	for (n = 0; x->vl && n < x->universe; n++)
		free(x->vl[n].v);
	free(x->vl);
	x->vl = NULL;
	free(x->scratch);
	x->scratch = NULL;
	while ((g = x->spare)) {
		x->spare = g->tn.r ? grp_of(g->tn.r) : NULL;
		rs_free(&g->ranks);
		free(g);
	}
	for (c = 0; c < x->ncls; c++)
		free(x->cls[c].load);
	for (i = 0; x->shared && i < x->nprofs; i++)
		free(x->shared[i]);
	free(x->shared);
	free(x->nshared);
	x->shared = NULL;
	x->nshared = NULL;
	free(x->tfirst);
	free(x->pn);
	free(x->thr);
	free(x->cls);
	free(x->used);
	free(x->loads);
	x->tfirst = x->pn = x->used = NULL;
	x->thr = NULL;
	x->cls = NULL;
	x->loads = NULL;
	x->ncls = x->nused = 0;
}

/* thresholds sets, per profile, the distinct device sizes in use. */
static void
thresholds(struct spx *x)
{
	struct sp_state *st = x->st;
	const struct sp_dev *d;
	struct size *v = NULL;
	size_t i, j, n = 0, cap = 0;
	int t = 0;

	for (i = 0; i < st->nnodes; i++) {
		for (j = 0; j < st->nodes[i]->ndevs; j++) {
			d = st->nodes[i]->devs[j];
			if (d->prof < 0 ||
				(n && v[n - 1].prof == d->prof &&
					v[n - 1].mem == d->mem))
				continue; /* most neighbours are alike */
			if (n == cap) {
				cap = cap ? cap * 2 : 256;
				v = erealloc(v, cap * sizeof *v);
			}
			v[n].prof = d->prof;
			v[n++].mem = d->mem;
		}
	}
	if (n) /* qsort(NULL, 0) is undefined */
		qsort(v, n, sizeof *v, by_size);
	x->nprofs = st->nprofs;
	x->tfirst = ecalloc((size_t)x->nprofs, sizeof *x->tfirst);
	x->pn = ecalloc((size_t)x->nprofs, sizeof *x->pn);
	x->thr = emalloc((n + 1) * sizeof *x->thr);
	for (i = 0; i < n; i++) {
		if (i && v[i].prof == v[i - 1].prof && v[i].mem == v[i - 1].mem)
			continue;
		if (!x->pn[v[i].prof])
			x->tfirst[v[i].prof] = t;
		x->pn[v[i].prof]++;
		x->thr[t++] = v[i].mem;
	}
	x->ncls = t;
	free(v);
}

/* capacities sets each class's largest bucket: the most devices of
 * that size or more any node has, whoever holds them. */
static void
capacities(struct spx *x)
{
	struct sp_state *st = x->st;
	const struct sp_dev *d;
	size_t i, k;
	int c, j, end, *cnt = emalloc(((size_t)x->ncls + 1) * sizeof *cnt);

	x->cls = ecalloc((size_t)x->ncls + 1, sizeof *x->cls);
	for (i = 0; i < (size_t)x->nprofs; i++) {
		for (j = 0; j < x->pn[i]; j++) {
			x->cls[x->tfirst[i] + j].prof = (int)i;
			x->cls[x->tfirst[i] + j].mem = x->thr[x->tfirst[i] + j];
		}
	}
	for (i = 0; i < st->nnodes; i++) {
		memset(cnt, 0, (size_t)x->ncls * sizeof *cnt);
		for (k = 0; k < st->nodes[i]->ndevs; k++) {
			d = st->nodes[i]->devs[k];
			if (d->prof < 0)
				continue;
			end = x->tfirst[d->prof] + x->pn[d->prof];
			for (j = x->tfirst[d->prof];
				j < end && x->thr[j] <= d->mem; j++)
				cnt[j]++;
		}
		for (c = 0; c < x->ncls; c++)
			if (cnt[c] > x->cls[c].maxc)
				x->cls[c].maxc = cnt[c];
	}
	free(cnt);
	x->ntrees = 0;
	for (c = 0; c < x->ncls; c++) {
		x->cls[c].tree0 = x->ntrees;
		x->ntrees += (size_t)x->cls[c].maxc;
	}
}

/* rebuild lays the classes out anew; what was kept is filed again when
 * next needed. */
static void
rebuild(void *ctx)
{
	struct spx *x = ctx;

	free_layout(x);
	x->universe = (uint32_t)x->st->nnodes;
	thresholds(x);
	capacities(x);
	x->loads = ecalloc((size_t)x->ncls + 1, sizeof *x->loads);
	x->used = emalloc(((size_t)x->ncls + 1) * sizeof *x->used);
	x->shared = ecalloc((size_t)x->nprofs + 1, sizeof *x->shared);
	x->nshared = ecalloc((size_t)x->nprofs + 1, sizeof *x->nshared);
	x->views = ecalloc(1, sizeof *x->views);
	x->views[0].n = x->st->nnodes;
	x->nviews = 1;
	x->view_of = hm_new(NULL);
	x->vl = ecalloc(x->st->nnodes + 1, sizeof *x->vl);
	x->scratch = emalloc((x->st->nnodes + 1) * sizeof *x->scratch);
}

/* ---- search ---- */

/* A bucket being walked: a group and a rank in it. */
struct head {
	const struct tp_tree *t;
	struct grp *g; /* NULL: done */
	uint32_t r;
	int wrapped;
};

/* head_set moves h to the next group when rank r ran off its group, and
 * ends it when a rotation comes back to its start. */
static void
head_set(struct head *h, const struct sp_query *q)
{
	struct tp_node *next;

	while (h->g && h->r == RS_NONE) {
		if (q->start && !h->wrapped) { /* rotating: one group */
			h->wrapped = 1;
			h->r = rs_next(&h->g->ranks, 0);
		} else if ((next = tp_next(&h->g->tn))) {
			h->g = grp_of(next);
			h->r = rs_next(&h->g->ranks, 0);
		} else {
			h->g = NULL;
		}
	}
	if (h->g && h->wrapped && h->r >= (uint32_t)q->start)
		h->g = NULL;
}

/* rank_cmp orders the nodes of ranks ra and rb, in class c, by q. */
static int
rank_cmp(const struct spx *x, int c, uint32_t ra, uint32_t rb,
	const struct sp_query *q)
{
	const struct sp_node *a = x->st->by_name[ra], *b = x->st->by_name[rb];

	return sp_cmp(a, &x->cls[c].load[a->id], b, &x->cls[c].load[b->id], q,
		x->st->nnodes);
}

/* walk merges the buckets k..max of class c of order o by q's order and
 * returns the first node that fits. Only name order rotates, and its
 * buckets hold one group each. A query without selector or explicit
 * indexes fits any node of those buckets: their counts are of exactly
 * the devices it may take. */
static struct sp_node *
walk(struct spx *x, const struct order *o, int c, const struct sp_query *q)
{
	struct head hs[64], *h = hs;
	struct sp_node *found = NULL, *n;
	int b, nh = 0, i, best, plain = !q->nsel && !q->nids;
	const struct tp_tree *t;

	if (x->cls[c].maxc > 64)
		h = emalloc((size_t)x->cls[c].maxc * sizeof *h);
	for (b = q->k; b <= x->cls[c].maxc; b++) {
		t = bucket(o, x, c, b);
		if (!t->n)
			continue;
		h[nh] = (struct head){t, grp_of(tp_first(t)), 0, 0};
		h[nh].r = rs_next(&h[nh].g->ranks, (uint32_t)q->start);
		head_set(&h[nh++], q);
	}
	for (;;) {
		for (best = -1, i = 0; i < nh; i++)
			if (h[i].g &&
				(best < 0 ||
					rank_cmp(x, c, h[i].r, h[best].r, q) <
						0))
				best = i;
		if (best < 0)
			break;
		n = x->st->by_name[h[best].r];
		if (plain || sp_fits(n, q, NULL)) {
			found = n;
			break;
		}
		h[best].r = rs_next(&h[best].g->ranks, h[best].r + 1);
		head_set(&h[best], q);
	}
	if (h != hs)
		free(h);
	return found;
}

/* rarest returns the smallest node set among q's selector labels, with
 * its label number in *which, or NULL when one of them labels no node
 * at all. */
static const struct sp_nodeset *
rarest(const struct spx *x, const struct sp_query *q, size_t *which)
{
	const struct sp_nodeset *s, *min = NULL;
	size_t i;

	for (i = 0; i < q->nsel; i++) {
		if (!(s = sp_label_set(x->st, q->sel[i].key, q->sel[i].val)))
			return NULL;
		if (!min || s->n < min->n) {
			min = s;
			*which = i;
		}
	}
	return min;
}

/* direct looks at the nodes of set s alone: the first that fits in q's
 * order. One pass finds the first by the order; only when it does not
 * fit (another selector label, explicit indexes) are the rest sorted
 * out one by one. */
static struct sp_node *
direct(struct spx *x, int c, const struct sp_query *q,
	const struct sp_nodeset *s)
{
	uint32_t *v = x->scratch;
	const struct sp_load *l;
	struct sp_node *found = NULL;
	size_t i, m = 0, best = 0;

	for (i = 0; i < s->n; i++) {
		l = &x->cls[c].load[s->v[i]->id];
		if ((q->cool ? l->cool : l->count) < q->k)
			continue;
		v[m] = (uint32_t)s->v[i]->rank;
		if (m && rank_cmp(x, c, v[m], v[best], q) < 0)
			best = m;
		m++;
	}
	while (m) {
		if (sp_fits(x->st->by_name[v[best]], q, NULL)) {
			found = x->st->by_name[v[best]];
			break;
		}
		v[best] = v[--m];
		for (best = 0, i = 1; i < m; i++)
			if (rank_cmp(x, c, v[i], v[best], q) < 0)
				best = i;
	}
	return found;
}

/* most_devices returns the most devices of profile prof with at least
 * mem MiB that any node has. */
static int
most_devices(const struct spx *x, int prof, long mem)
{
	const struct sp_node *n;
	size_t i, j, lo, hi;
	int most = 0, cnt;

	for (i = 0; i < x->st->nnodes; i++) {
		n = x->st->nodes[i];
		sp_prof_range(n, prof, &lo, &hi);
		for (cnt = 0, j = lo; j < hi; j++)
			cnt += n->devs[j]->mem >= mem;
		if (cnt > most)
			most = cnt;
	}
	return most;
}

/* grow_orders makes room in every order of every view for a new class
 * c, its trees empty and no node filed. */
static void
grow_orders(struct spx *x, int c)
{
	struct order *o;
	size_t t;
	int v, k;

	for (v = 0; v < x->nviews; v++) {
		for (k = 0; k < NORD; k++) {
			o = &x->views[v].ord[k];
			if (!o->trees)
				continue;
			o->trees = erealloc(o->trees,
				(x->ntrees + 1) * sizeof *o->trees);
			for (t = x->cls[c].tree0; t < x->ntrees; t++)
				tp_init(&o->trees[t], grp_cmp, NULL);
			o->ents = erealloc(o->ents,
				((size_t)x->ncls + 1) * sizeof *o->ents);
			o->ents[c] = NULL;
		}
	}
}

/* shared_class returns the class of shared devices of profile prof with
 * mem MiB left, making it the first time it is asked for. */
static int
shared_class(struct spx *x, int prof, long mem)
{
	int i, c;

	for (i = 0; i < x->nshared[prof]; i++)
		if (x->cls[x->shared[prof][i]].mem == mem)
			return x->shared[prof][i];
	c = x->ncls++;
	x->cls = erealloc(x->cls, ((size_t)x->ncls + 1) * sizeof *x->cls);
	memset(&x->cls[c], 0, sizeof x->cls[c]);
	x->cls[c].prof = prof;
	x->cls[c].shared = 1;
	x->cls[c].mem = mem;
	x->cls[c].maxc = most_devices(x, prof, mem);
	x->cls[c].tree0 = x->ntrees;
	x->ntrees += (size_t)x->cls[c].maxc;
	x->loads = erealloc(x->loads, ((size_t)x->ncls + 1) * sizeof *x->loads);
	x->used = erealloc(x->used, ((size_t)x->ncls + 1) * sizeof *x->used);
	x->shared[prof] = erealloc(x->shared[prof],
		(size_t)(x->nshared[prof] + 1) * sizeof *x->shared[prof]);
	x->shared[prof][x->nshared[prof]++] = c;
	grow_orders(x, c);
	return c;
}

/* class_of returns the class of q, or -1 when no device is big enough. */
static int
class_of(struct spx *x, const struct sp_query *q)
{
	int lo, hi, mid, end;

	if (q->prof < 0 || q->prof >= x->nprofs || !x->pn[q->prof])
		return -1;
	if (q->shared)
		return shared_class(x, q->prof, q->mem);
	lo = x->tfirst[q->prof];
	hi = end = lo + x->pn[q->prof];
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (x->thr[mid] < q->mem)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < end ? lo : -1;
}

/* find walks the index of all nodes; with a selector, that of its
 * rarest label=value instead, or looks at that label's nodes one by one
 * when they are few: s nodes with s * s <= 4 * nodes, where a walk of
 * all nodes would expect to pass nodes / s others per match. */
static struct sp_node *
find(void *ctx, const struct sp_query *q)
{
	struct spx *x = ctx;
	const struct sp_nodeset *s;
	struct view *v = &x->views[0];
	int c = class_of(x, q), k = q->cool ? ORD_LUG : ord_of[q->strat];
	size_t which = 0;

	if (c < 0 || q->k > x->cls[c].maxc)
		return NULL;
	use_class(x, c);
	if (q->nsel) {
		if (!(s = rarest(x, q, &which)))
			return NULL;
		if (s->n * s->n <= 4 * x->st->nnodes)
			return direct(x, c, q, s);
		v = view_for(x, q->sel[which].key, q->sel[which].val, s);
	}
	keep(x, v, k, c);
	return walk(x, &v->ord[k], c, q);
}

static void *
open_index(struct sp_state *st)
{
	struct spx *x = ecalloc(1, sizeof *x);

	x->st = st;
	return x;
}

static void
close_index(void *ctx)
{
	struct spx *x = ctx;

	free_layout(x);
	free(x);
}

const struct sp_ops spx_ops = {open_index, rebuild, update, relabel, find,
	close_index};
