/* sched: state and inventory records (node, gpu, allocation, release). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "mig.h"
#include "sched.h"

/* ---- state ---- */

static void
free_hold(void *p)
{
	free(p);
}

static void
free_dev(void *p)
{
	struct sp_dev *d = p;

	free(d->uuid);
	free(d);
}

static void
free_set(void *p)
{
	struct sp_nodeset *s = p;

	free(s->v);
	free(s);
}

int
sp_goal_from_env(char *why, size_t n)
{
	const char *s = getenv("GPU_UTILIZATION_GOAL");
	char *end;
	long v;

	if (!s)
		return SP_GOAL_DEFAULT;
	errno = 0;
	v = strtol(s, &end, 10);
	if (isdigit((unsigned char)*s) && !*end && !errno && v >= 1 && v <= 100)
		return (int)v;
	snprintf(why, n,
		"$GPU_UTILIZATION_GOAL: not a whole percentage from 1 to 100: "
		"\"%.64s\"",
		s);
	return -1;
}

void
sp_init(struct sp_state *st, const struct sp_ops *ops, int strategy,
	uint64_t seed)
{
	char why[160];

	memset(st, 0, sizeof *st);
	if ((st->goal = sp_goal_from_env(why, sizeof why)) < 0)
		err_die(HAZ_USAGE, "%s", why);
	st->node_by_name = hm_new(NULL);
	st->dev_by_uuid = hm_new(free_dev);
	st->holds = hm_new(free_hold);
	st->label_sets = hm_new(free_set);
	st->profs = emalloc(sizeof *st->profs);
	st->profs[0] = estrdup("");
	st->nprofs = 1;
	st->strategy = strategy;
	st->rng = seed;
	st->ops = ops;
	st->ctx = ops->open(st);
}

static void
free_node(struct sp_node *n)
{
	sp_labels_free(n->labels, n->nlabels);
	free(n->devs);
	free(n->name);
	free(n);
}

void
sp_free(struct sp_state *st)
{
	size_t i;
	int p;

	st->ops->close(st->ctx);
	for (i = 0; i < st->nbatch; i++)
		sp_req_free(st->batch[i]);
	free(st->batch);
	for (i = 0; i < st->nnodes; i++)
		free_node(st->nodes[i]);
	free(st->nodes);
	free(st->by_name);
	free(st->dirty);
	hm_free(st->node_by_name);
	hm_free(st->dev_by_uuid);
	hm_free(st->holds);
	hm_free(st->label_sets);
	hm_free(st->pending);
	for (p = 0; p < st->nprofs; p++)
		free(st->profs[p]);
	free(st->profs);
	free(st->rr_last);
	js_free(&st->doc);
	jb_free(&st->out);
}

int
sp_profile(struct sp_state *st, const char *canon)
{
	int p;

	for (p = 1; p < st->nprofs; p++)
		if (strcmp(st->profs[p], canon) == 0)
			return p;
	st->profs = erealloc(st->profs, (size_t)(p + 1) * sizeof *st->profs);
	st->profs[p] = estrdup(canon);
	return st->nprofs++;
}

void
sp_mark(struct sp_state *st, struct sp_node *n)
{
	if (!n || n->dirty)
		return;
	if (st->ndirty == st->capdirty) {
		st->capdirty = st->capdirty ? st->capdirty * 2 : 64;
		st->dirty = erealloc(st->dirty,
			st->capdirty * sizeof *st->dirty);
	}
	n->dirty = 1;
	st->dirty[st->ndirty++] = n;
}

double
sp_clock(int cpu)
{
	struct timespec ts;

	clock_gettime(cpu ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- ranks and label sets ---- */

static int
by_name(const void *a, const void *b)
{
	return strcmp((*(struct sp_node *const *)a)->name,
		(*(struct sp_node *const *)b)->name);
}

char *
sp_label_key(const char *key, const char *val, char *buf, size_t n)
{
	size_t kl = strlen(key), vl = strlen(val);

	if (kl + vl + 2 > n)
		buf = emalloc(kl + vl + 2);
	memcpy(buf, key, kl);
	buf[kl] = '\037';
	memcpy(buf + kl + 1, val, vl + 1);
	return buf;
}

/* set_add puts n into the set of key=val, making the set. */
static void
set_add(struct sp_state *st, struct sp_node *n, const char *key,
	const char *val)
{
	struct sp_nodeset *s;
	char buf[256], *k = sp_label_key(key, val, buf, sizeof buf);

	if (!(s = hm_get(st->label_sets, k))) {
		s = ecalloc(1, sizeof *s);
		hm_put(st->label_sets, k, s);
	}
	if (k != buf)
		free(k);
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = erealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = n;
}

/* set_drop takes n out of the set of key=val (its order is no one's:
 * searches order nodes by rank), dropping a set left empty. */
static void
set_drop(struct sp_state *st, struct sp_node *n, const char *key,
	const char *val)
{
	char buf[256], *k = sp_label_key(key, val, buf, sizeof buf);
	struct sp_nodeset *s = hm_get(st->label_sets, k);
	size_t i;

	for (i = 0; s && i < s->n && s->v[i] != n; i++)
		;
	if (!s || i == s->n)
		err_die(HAZ_FAIL, "internal error: %s is not in its label set",
			n->name);
	s->v[i] = s->v[--s->n];
	if (!s->n)
		hm_del(st->label_sets, k);
	if (k != buf)
		free(k);
}

static void
index_labels(struct sp_state *st, struct sp_node *n)
{
	size_t i;

	for (i = 0; i < n->nlabels; i++)
		set_add(st, n, n->labels[i].key, n->labels[i].val);
}

/* relayout sorts the nodes by name into ranks and rebuilds label sets. */
static void
relayout(struct sp_state *st)
{
	size_t i;

	free(st->by_name);
	st->by_name = emalloc((st->nnodes + 1) * sizeof *st->by_name);
	if (st->nnodes) { /* memcpy and qsort take no NULL, even for 0 */
		memcpy(st->by_name, st->nodes,
			st->nnodes * sizeof *st->by_name);
		qsort(st->by_name, st->nnodes, sizeof *st->by_name, by_name);
	}
	hm_free(st->label_sets);
	st->label_sets = hm_new(free_set);
	for (i = 0; i < st->nnodes; i++) {
		st->by_name[i]->rank = (int)i;
		index_labels(st, st->by_name[i]);
	}
}

void
sp_sync(struct sp_state *st)
{
	size_t i;

	if (st->relayout) {
		relayout(st);
		st->ops->rebuild(st->ctx);
		st->relayout = 0;
	} else {
		for (i = 0; i < st->ndirty; i++)
			st->ops->update(st->ctx, st->dirty[i]);
	}
	for (i = 0; i < st->ndirty; i++)
		st->dirty[i]->dirty = st->dirty[i]->rekey = 0;
	st->ndirty = 0;
}

const struct sp_nodeset *
sp_label_set(const struct sp_state *st, const char *key, const char *val)
{
	char buf[256], *k = sp_label_key(key, val, buf, sizeof buf);
	const struct sp_nodeset *s = hm_get(st->label_sets, k);

	if (k != buf)
		free(k);
	return s;
}

/* ---- labels ---- */

static int
by_key(const void *a, const void *b)
{
	return strcmp(((const struct sp_label *)a)->key,
		((const struct sp_label *)b)->key);
}

int
sp_labels_read(const struct js_doc *d, int tok, struct sp_label **out,
	size_t *n)
{
	const struct js_tok *t = &d->t[tok];
	struct sp_label *v;
	size_t m = 0, j;
	int i, k;

	*out = NULL;
	*n = 0;
	if (t->type != JS_OBJECT)
		return -1;
	for (i = 0, k = tok + 1; i < t->n; i++, k = d->t[k + 1].next)
		if (d->t[k + 1].type != JS_STRING)
			return -1;
	v = ecalloc((size_t)t->n + 1, sizeof *v);
	for (i = 0, k = tok + 1; i < t->n; i++, k = d->t[k + 1].next) {
		for (j = 0; j < m && strcmp(v[j].key, d->t[k].s) != 0; j++)
			; /* a repeated key: the last value wins */
		if (j == m)
			v[m++].key = estrdup(d->t[k].s);
		free(v[j].val);
		v[j].val = estrdup(d->t[k + 1].s);
	}
	if (m > 1)
		qsort(v, m, sizeof *v, by_key);
	*out = v;
	*n = m;
	return 0;
}

void
sp_labels_free(struct sp_label *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].val);
	}
	free(v);
}

/* relabel moves n, known to the search, from its labels to labels
 * (both sorted by key, one value each): the label sets and the search's
 * views change by what differs alone. */
static void
relabel(struct sp_state *st, struct sp_node *n, const struct sp_label *to,
	size_t nto)
{
	const struct sp_label *from = n->labels;
	size_t i = 0, j = 0, nfrom = n->nlabels;
	int c;

	while (i < nfrom || j < nto) {
		c = i == nfrom     ? 1
			: j == nto ? -1
				   : strcmp(from[i].key, to[j].key);
		if (!c && !strcmp(from[i].val, to[j].val)) {
			i++, j++;
			continue;
		}
		if (c <= 0) {
			set_drop(st, n, from[i].key, from[i].val);
			st->ops->relabel(st->ctx, n, from[i].key, from[i].val,
				0);
			i++;
		}
		if (c >= 0) {
			set_add(st, n, to[j].key, to[j].val);
			st->ops->relabel(st->ctx, n, to[j].key, to[j].val, 1);
			j++;
		}
	}
}

/* ---- nodes and devices ---- */

/* node_get returns the node called name, making a ready one without
 * labels (a relayout) when there is none. */
static struct sp_node *
node_get(struct sp_state *st, const char *name)
{
	struct sp_node *n = hm_get(st->node_by_name, name);

	if (n)
		return n;
	n = ecalloc(1, sizeof *n);
	n->name = estrdup(name);
	n->ready = 1;
	n->id = st->nnodes;
	if (st->nnodes == st->capnodes) {
		st->capnodes = st->capnodes ? st->capnodes * 2 : 64;
		st->nodes = erealloc(st->nodes,
			st->capnodes * sizeof *st->nodes);
	}
	st->nodes[st->nnodes++] = n;
	hm_put(st->node_by_name, name, n);
	st->relayout = 1;
	return n;
}

static int
dev_order(const struct sp_dev *a, const struct sp_dev *b)
{
	if (a->prof != b->prof)
		return a->prof < b->prof ? -1 : 1;
	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	if (a->migdev != b->migdev)
		return a->migdev < b->migdev ? -1 : 1;
	return strcmp(a->uuid, b->uuid);
}

/* attach puts d into n's device list, in order (see sp_node.devs). */
static void
attach(struct sp_node *n, struct sp_dev *d)
{
	size_t i;

	if (n->ndevs == n->capdevs) {
		n->capdevs = n->capdevs ? n->capdevs * 2 : 8;
		n->devs = erealloc(n->devs, n->capdevs * sizeof *n->devs);
	}
	for (i = n->ndevs; i > 0 && dev_order(n->devs[i - 1], d) > 0; i--)
		n->devs[i] = n->devs[i - 1];
	n->devs[i] = d;
	n->ndevs++;
	d->node = n;
}

static void
detach(struct sp_node *n, struct sp_dev *d)
{
	size_t i;

	for (i = 0; i < n->ndevs && n->devs[i] != d; i++)
		;
	if (i == n->ndevs)
		return;
	memmove(&n->devs[i], &n->devs[i + 1],
		(n->ndevs - i - 1) * sizeof *n->devs);
	n->ndevs--;
	d->node = NULL;
}

void
sp_prof_range(const struct sp_node *n, int prof, size_t *lo, size_t *hi)
{
	size_t l = 0, h = n->ndevs, mid;

	while (l < h) {
		mid = (l + h) / 2;
		if (n->devs[mid]->prof < prof)
			l = mid + 1;
		else
			h = mid;
	}
	*lo = l;
	for (h = l; h < n->ndevs && n->devs[h]->prof == prof; h++)
		;
	*hi = h;
}

/* dev_get returns the device with uuid, making an unplaced one. */
static struct sp_dev *
dev_get(struct sp_state *st, const char *uuid)
{
	struct sp_dev *d = hm_get(st->dev_by_uuid, uuid);

	if (!d) {
		d = ecalloc(1, sizeof *d);
		d->uuid = estrdup(uuid);
		d->prof = SP_NO_PROFILE;
		d->migdev = -1;
		hm_put(st->dev_by_uuid, uuid, d);
	}
	return d;
}

/* ---- records ---- */

/* bad warns about the record last read on r; returns -1. */
static int __attribute__((format(printf, 2, 3)))
bad(struct nd_reader *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	nd_warn(r, "%s", msg);
	return -1;
}

static const char *const field_names[SPF_N] = {"kind", "id", "name", "labels",
	"ready", "unschedulable", "cost", "cheap", "node", "index", "uuid",
	"memory_mib", "util_pct", "mig_enabled", "mig", "health", "devices",
	"exclusive", "gpus", "gpu_ids", "mig_profile", "mig_fallback",
	"min_memory_mib", "priority", "strategy", "prefer_node",
	"node_selector", "created"};
static struct js_names fields = {field_names, SPF_N, 0, 0, {0}};

int
sp_field(const struct sp_state *st, enum sp_field f)
{
	int t = st->field[f];

	return t >= 0 && st->doc.t[t].type != JS_NULL ? t : -1;
}

/* flag reads boolean token t (-1: absent): def when absent. Returns 0,
 * or -1 for another type. */
static int
flag(const struct js_doc *d, int t, int def, int *out)
{
	*out = def;
	if (t < 0)
		return 0;
	if (d->t[t].type != JS_TRUE && d->t[t].type != JS_FALSE)
		return -1;
	*out = d->t[t].type == JS_TRUE;
	return 0;
}

/* whole reads integer token t (-1: absent) >= 0: def when absent.
 * Returns 0, or -1 for anything else. */
static int
whole(const struct js_doc *d, int t, long def, long *out)
{
	*out = def;
	if (t < 0)
		return 0;
	if (d->t[t].type != JS_INT || d->t[t].i < 0 || d->t[t].i > 1L << 40)
		return -1;
	*out = (long)d->t[t].i;
	return 0;
}

/* text reads field f as a string into *out (NULL when absent or null).
 * Returns 0, or -1 when it holds another type. */
static int
text(const struct sp_state *st, enum sp_field f, const char **out)
{
	int t = sp_field(st, f);

	*out = t >= 0 ? js_str(&st->doc, t) : NULL;
	return t >= 0 && !*out ? -1 : 0;
}

static int
feed_node(struct sp_state *st, struct nd_reader *r, const struct js_doc *d)
{
	const char *name;
	int t, ready, unsched, cheap;
	struct sp_label *labels = NULL;
	size_t nlabels = 0, i;
	struct sp_node *n;

	if (text(st, SPF_NAME, &name) < 0 || !name || !*name)
		return bad(r, "node record needs a name, a non-empty string");
	t = sp_field(st, SPF_LABELS);
	if (t >= 0 && sp_labels_read(d, t, &labels, &nlabels) < 0)
		return bad(r, "node %s: labels must be an object of strings",
			name);
	t = sp_field(st, SPF_COST);
	if (flag(d, sp_field(st, SPF_READY), 1, &ready) < 0 ||
		flag(d, sp_field(st, SPF_UNSCHED), 0, &unsched) < 0 ||
		flag(d, sp_field(st, SPF_CHEAP), 0, &cheap) < 0 ||
		(t >= 0 && d->t[t].type != JS_INT && d->t[t].type != JS_REAL)) {
		sp_labels_free(labels, nlabels);
		return bad(r,
			"node %s: ready, unschedulable and cheap must "
			"be true or false, cost a number",
			name);
	}
	n = node_get(st, name);
	for (i = 0; i < nlabels; i++)
		if (!strcmp(labels[i].key, "gpu-orchestrator/cheap-node") &&
			!strcmp(labels[i].val, "true"))
			cheap = 1;
	/* a new node, or one fed since, is laid out whole at the next sync;
	 * a known one moves between sets */
	if (!st->relayout)
		relabel(st, n, labels, nlabels);
	if (n->cheap != cheap || n->has_cost != (t >= 0) ||
		(t >= 0 && n->cost != d->t[t].d))
		n->rekey = 1;
	sp_labels_free(n->labels, n->nlabels);
	n->labels = labels;
	n->nlabels = nlabels;
	n->ready = ready;
	n->unsched = unsched;
	n->cheap = cheap;
	n->has_cost = t >= 0;
	n->cost = n->has_cost && d->t[t].d != 0 ? d->t[t].d : 0; /* no -0 */
	sp_mark(st, n);
	return 0;
}

/* gpu_profile reads what kind of device gpu record d describes into
 * *prof and *migdev. Returns 0, or -1 with a reason in why. */
static int
gpu_profile(struct sp_state *st, const struct js_doc *d, int *prof, int *migdev,
	const char **why)
{
	int mig = sp_field(st, SPF_MIG), enabled, t;
	struct mig_profile p;
	long dev;
	char canon[32];

	*migdev = -1;
	*why = "mig_enabled must be true or false";
	if (flag(d, sp_field(st, SPF_MIG_ENABLED), 0, &enabled) < 0)
		return -1;
	if (mig < 0) {
		*prof = enabled ? SP_NO_PROFILE : SP_WHOLE;
		return 0;
	}
	*why = "mig must be null or an object with a MIG profile name";
	if (d->t[mig].type != JS_OBJECT ||
		!js_str(d, js_get(d, mig, "profile")) ||
		mig_parse(js_str(d, js_get(d, mig, "profile")), &p) < 0)
		return -1;
	*why = "mig.device must be a whole number >= 0";
	t = js_get(d, mig, "device");
	if (whole(d, t >= 0 && d->t[t].type != JS_NULL ? t : -1, 0, &dev) < 0 ||
		dev > 1 << 20)
		return -1;
	*prof = sp_profile(st, mig_format(&p, canon, sizeof canon));
	*migdev = (int)dev;
	return 0;
}

static int
feed_gpu(struct sp_state *st, struct nd_reader *r, const struct js_doc *d)
{
	const char *uuid, *node, *health;
	int ut = sp_field(st, SPF_UTIL), prof, migdev;
	long index, mem;
	const char *why;
	struct sp_dev *dv;

	if (text(st, SPF_UUID, &uuid) < 0 || text(st, SPF_NODE, &node) < 0 ||
		!uuid || !*uuid || !node || !*node)
		return bad(r,
			"gpu record needs a uuid and a node, each a "
			"non-empty string");
	if (text(st, SPF_HEALTH, &health) < 0 ||
		(health && strcmp(health, "ok") && strcmp(health, "warn") &&
			strcmp(health, "unhealthy")))
		return bad(r,
			"gpu %s: health must be \"ok\", \"warn\", "
			"\"unhealthy\" or null",
			uuid);
	if (ut >= 0 &&
		((d->t[ut].type != JS_INT && d->t[ut].type != JS_REAL) ||
			d->t[ut].d < 0 || d->t[ut].d > 100))
		return bad(r,
			"gpu %s: util_pct must be a number from 0 to 100 "
			"or null",
			uuid);
	if (whole(d, sp_field(st, SPF_INDEX), -1, &index) < 0 || index < 0 ||
		index > 1 << 20)
		return bad(r, "gpu %s: index must be a whole number >= 0",
			uuid);
	if (whole(d, sp_field(st, SPF_MEMORY), 0, &mem) < 0)
		return bad(r,
			"gpu %s: memory_mib must be a whole number "
			">= 0 or null",
			uuid);
	if (gpu_profile(st, d, &prof, &migdev, &why) < 0)
		return bad(r, "gpu %s: %s", uuid, why);
	dv = dev_get(st, uuid);
	if (!dv->node || strcmp(dv->node->name, node) != 0 ||
		dv->index != index || dv->migdev != migdev ||
		dv->prof != prof || dv->mem != mem) {
		if (dv->node)
			detach(dv->node, dv);
		dv->index = (int)index;
		dv->migdev = migdev;
		dv->prof = prof;
		dv->mem = mem;
		attach(node_get(st, node), dv);
		st->relayout = 1;
	}
	dv->util = ut >= 0 ? (int)d->t[ut].d : 0; /* unknown: 0 */
	dv->healthy = !health || strcmp(health, "unhealthy") != 0;
	sp_mark(st, dv->node);
	return 0;
}

void
sp_hold_devs(struct sp_state *st, const char *id, struct sp_dev **devs,
	size_t n, long mem, int excl)
{
	struct sp_hold *h = emalloc(sizeof *h + (n + 1) * sizeof *h->dev);
	size_t i;

	h->devs = h->dev;
	memcpy(h->devs, devs, n * sizeof *devs);
	h->ndevs = n;
	h->mem = mem;
	h->excl = excl;
	for (i = 0; i < n; i++) {
		if (excl) {
			devs[i]->excl = 1;
		} else {
			devs[i]->nshared++;
			devs[i]->shared_mem += mem;
		}
		sp_mark(st, devs[i]->node);
	}
	hm_put(st->holds, id, h);
}

int
sp_release(struct sp_state *st, const char *id)
{
	struct sp_hold *h = hm_take(st->holds, id);
	struct sp_dev *dv;
	size_t i;

	if (!h)
		return -1;
	for (i = 0; i < h->ndevs; i++) {
		dv = h->devs[i];
		if (h->excl) {
			dv->excl = 0;
		} else {
			dv->nshared--;
			dv->shared_mem -= h->mem;
		}
		sp_mark(st, dv->node);
	}
	free_hold(h);
	return 0;
}

/* alloc_devs looks up the devices of allocation record d into v (room
 * for n). Returns 0, or -1 with the problem warned. */
static int
alloc_devs(struct sp_state *st, struct nd_reader *r, const struct js_doc *d,
	int arr, const char *id, int excl, struct sp_dev **v)
{
	int i, j, t;

	for (i = 0, t = arr + 1; i < d->t[arr].n; i++, t = d->t[t].next) {
		if (d->t[t].type != JS_STRING || !*d->t[t].s)
			return bad(r, "allocation %s: devices must be UUIDs",
				id);
		v[i] = dev_get(st, d->t[t].s);
		for (j = 0; j < i; j++)
			if (v[j] == v[i])
				return bad(r,
					"allocation %s: device %s "
					"listed twice",
					id, v[i]->uuid);
		if (v[i]->excl || (excl && v[i]->nshared))
			return bad(r,
				"allocation %s: device %s is already "
				"in use",
				id, v[i]->uuid);
	}
	return 0;
}

/* feed_alloc records devices held from outside; an id that holds
 * devices already is replaced. */
static int
feed_alloc(struct sp_state *st, struct nd_reader *r, const struct js_doc *d)
{
	const char *id;
	int arr = sp_field(st, SPF_DEVICES), excl, rc;
	struct sp_dev **v;
	long mem;

	if (text(st, SPF_ID, &id) < 0 || !id || !*id)
		return bad(r,
			"allocation record needs an id, a non-empty "
			"string");
	if (arr < 0 || d->t[arr].type != JS_ARRAY || d->t[arr].n == 0)
		return bad(r,
			"allocation %s: devices must be a non-empty "
			"array of UUIDs",
			id);
	if (flag(d, sp_field(st, SPF_EXCLUSIVE), 1, &excl) < 0 ||
		whole(d, sp_field(st, SPF_MEMORY), 0, &mem) < 0)
		return bad(r,
			"allocation %s: exclusive must be true or "
			"false, memory_mib a whole number >= 0",
			id);
	sp_release(st, id);
	v = emalloc((size_t)d->t[arr].n * sizeof *v);
	rc = alloc_devs(st, r, d, arr, id, excl, v);
	if (rc == 0)
		sp_hold_devs(st, id, v, (size_t)d->t[arr].n, excl ? 0 : mem,
			excl);
	free(v);
	return rc;
}

/* pend files q under its id in the map of waiting requests. */
static void
pend(struct sp_state *st, struct sp_req *q)
{
	q->same = hm_get(st->pending, q->id);
	hm_put(st->pending, q->id, q);
}

/* feed_release frees what id holds, or withdraws its waiting requests;
 * an id that has neither is no error. The map of waiting requests is
 * made the first time a batch needs it. */
static int
feed_release(struct sp_state *st, struct nd_reader *r, const struct js_doc *d)
{
	const char *id;
	struct sp_req *q;
	size_t i;

	(void)d;
	if (text(st, SPF_ID, &id) < 0 || !id || !*id)
		return bad(r, "release record needs an id, a non-empty string");
	if (sp_release(st, id) == 0)
		return 0;
	if (!st->pending_live) {
		if (!st->pending)
			st->pending = hm_new(NULL);
		for (i = 0; i < st->nbatch; i++)
			pend(st, st->batch[i]);
		st->pending_live = 1;
	}
	for (q = hm_take(st->pending, id); q; q = q->same)
		q->withdrawn = 1;
	return 0;
}

static int
feed_request(struct sp_state *st, struct nd_reader *r, const struct js_doc *d)
{
	struct sp_req *q = sp_req_read(st, r, d);

	if (!q)
		return -1;
	if (!st->seq) {
		st->first_wall = sp_clock(0);
		st->first_cpu = sp_clock(1);
	}
	q->seq = st->seq++;
	if (st->pending_live)
		pend(st, q);
	if (st->nbatch == st->capbatch) {
		st->capbatch = st->capbatch ? st->capbatch * 2 : 256;
		st->batch = erealloc(st->batch,
			st->capbatch * sizeof *st->batch);
	}
	st->batch[st->nbatch++] = q;
	return 0;
}

int
sp_feed(struct sp_state *st, struct nd_reader *r, const struct js_doc *d)
{
	const char *kind;

	if (d->t[0].type != JS_OBJECT)
		return bad(r, "record is not a JSON object");
	/* ids, uuids and names are C strings here: one cut at a NUL would
	 * name another record's devices */
	if (d->nul)
		return bad(r,
			"a string holds \\u0000, which no record may "
			"carry");
	if (d->bignum)
		return bad(r,
			"a number out of range (integers fit in 64 bits, "
			"reals are finite doubles)");
	js_fields(d, 0, &fields, st->field);
	if (!(kind = js_str(d, sp_field(st, SPF_KIND))))
		return bad(r, "record has no kind");
	if (strcmp(kind, "request") == 0)
		return feed_request(st, r, d);
	if (strcmp(kind, "release") == 0)
		return feed_release(st, r, d);
	if (strcmp(kind, "gpu") == 0)
		return feed_gpu(st, r, d);
	if (strcmp(kind, "node") == 0)
		return feed_node(st, r, d);
	if (strcmp(kind, "allocation") == 0)
		return feed_alloc(st, r, d);
	if (strcmp(kind, "flush") == 0) {
		sp_flush(st);
		return SP_FLUSHED;
	}
	return bad(r, "unknown kind \"%s\"", kind);
}
