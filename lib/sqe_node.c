/* sqe_node: the engine's nodes: their inventory fed to both placement
 * states, the eligibility classes they carry, and the Jobs a node takes
 * with it when it goes (see sqe_int.h). */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "nodefit.h"
#include "sqe_int.h"
#include "wl.h"

/* node_extra returns the class labels node carries: those of the classes
 * whose pods it admits. */
static json_t *
node_extra(const struct sqe *e, const json_t *node)
{
	json_t *extra = json_object();
	const json_t *tol, *terms;
	struct sqe_sig *g;
	const char *k;
	void *v;
	size_t pos = 0;

	while (hm_next(e->sigs, &pos, &k, &v)) {
		g = v;
		tol = json_object_get(g->cons, "tolerations");
		terms = json_object_get(g->cons, "terms");
		if (nf_eligible(node, tol, terms, NULL, 0) == NF_OK)
			json_object_set_new(extra, g->label,
				json_string("true"));
	}
	return extra;
}

/* recount moves the eligible counts of the classes from a node's old
 * labels to its new ones. */
static void
recount(const struct sqe *e, const json_t *old, const json_t *now)
{
	const char *k;
	void *v;
	size_t pos = 0;
	struct sqe_sig *g;

	while (hm_next(e->sigs, &pos, &k, &v)) {
		g = v;
		if (json_object_get(old, g->label))
			g->eligible--;
		if (json_object_get(now, g->label))
			g->eligible++;
	}
}

/* swap returns s (taken) with its first from made to, or s. */
static char *
swap(char *s, const char *from, const char *to)
{
	char *f = strstr(s, from), *r;

	if (!f)
		return s;
	r = easprintf("%.*s%s%s", (int)(f - s), s, to, f + strlen(from));
	free(s);
	return r;
}

/* feed_whole feeds node record rec to the state of an empty cluster as
 * ready and schedulable: a node that is there may come back, so a
 * workload that only it could hold waits for it instead of spending
 * retries. */
static void
feed_whole(struct sqe *e, const char *rec, size_t len, const char *what)
{
	char *r = easprintf("%.*s", (int)len, rec);

	r = swap(r, ",\"ready\":false", ",\"ready\":true");
	r = swap(r, ",\"unschedulable\":true", ",\"unschedulable\":false");
	sqe_feed(&e->cap, r, strlen(r), what);
	free(r);
}

/* feed_lines feeds every line of text to both states; with whole set,
 * its first (the node record) as feed_whole does. */
static void
feed_lines(struct sqe *e, const char *text, size_t len, const char *what,
	int whole)
{
	const char *p = text, *end = text + len, *nl;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (nl > p) {
			sqe_feed(&e->live, p, (size_t)(nl - p), what);
			if (whole && p == text)
				feed_whole(e, p, (size_t)(nl - p), what);
			else
				sqe_feed(&e->cap, p, (size_t)(nl - p), what);
		}
		p = nl + 1;
	}
}

/* node_uuids returns the UUIDs of the devices obj's annotation lists. */
static json_t *
node_uuids(const json_t *obj)
{
	const char *ann = sqe_annotation(obj, "agentaflow.gpu/devices");
	json_t *uuids = json_array(), *devs, *d;
	size_t i;

	devs = ann ? json_loads(ann, 0, NULL) : NULL;
	json_array_foreach(devs, i, d) {
		if (json_string_value(json_object_get(d, "uuid")))
			json_array_append(uuids, json_object_get(d, "uuid"));
	}
	json_decref(devs);
	return uuids;
}

/* retire writes, for each device of kn that is not in uuids, a record
 * of it unhealthy: the placement engine forgets no device, so it must
 * never be chosen again. */
static void
retire(struct jb *b, const char *name, const struct sqe_node *kn,
	const json_t *uuids)
{
	size_t i, j;
	json_t *d, *u;
	int kept;

	json_array_foreach(kn->uuids, i, d) {
		kept = 0;
		json_array_foreach(uuids, j, u)
			if (json_equal(u, d))
				kept = 1;
		if (kept)
			continue;
		jb_raw(b, "{\"kind\":\"gpu\",\"node\":");
		jb_str(b, name);
		jb_raw(b, ",\"index\":0,\"uuid\":");
		jb_str(b, json_string_value(d));
		jb_raw(b, ",\"health\":\"unhealthy\"}\n");
	}
}

/* node_feed feeds the inventory of node name (obj NULL: gone) to both
 * states, retiring devices it no longer has. */
static void
node_feed(struct sqe *e, const char *name, struct sqe_node *kn,
	const json_t *obj)
{
	json_t *extra, *uuids;
	struct jb *b = &e->scratch;
	char *what = easprintf("node %s", name);

	jb_reset(b);
	extra = obj ? node_extra(e, obj) : json_object();
	recount(e, kn->extra, extra);
	json_decref(kn->extra);
	kn->extra = extra;
	if (obj) {
		if (nf_records(obj, extra, b) < 0)
			err_warn(
				"node %s: agentaflow.gpu/devices is not a JSON "
				"array; no devices taken from it",
				name);
		uuids = node_uuids(obj);
	} else {
		jb_raw(b, "{\"kind\":\"node\",\"name\":");
		jb_str(b, name);
		jb_raw(b, ",\"ready\":false,\"unschedulable\":true}\n");
		uuids = json_array();
	}
	retire(b, name, kn, uuids);
	json_decref(kn->uuids);
	kn->uuids = uuids;
	feed_lines(e, b->buf, b->len, what, obj != NULL);
	free(what);
	e->inv_gen++;
	e->dirty = 1;
}

/* refeed_nodes feeds every node again, in the order first seen. */
static void
refeed_nodes(struct sqe *e)
{
	struct sqe_node *kn;
	char *name;
	size_t i;

	for (i = 0; i < e->live.nnodes; i++) {
		/* node_feed may add no node: the live nodes stay put */
		name = e->live.nodes[i]->name;
		if ((kn = hm_get(e->nodes, name)))
			node_feed(e, name, kn, kn->obj);
	}
}

struct sqe_sig *
sqe_node_sig(struct sqe *e, const json_t *w)
{
	json_t *cons = wl_constraints(w, e->o.tol);
	char *dump = json_dumps(cons, JSON_SORT_KEYS | JSON_COMPACT);
	struct sqe_sig *g = hm_get(e->sigs, dump);

	if (g) {
		json_decref(cons);
		free(dump);
		return g;
	}
	g = ecalloc(1, sizeof *g);
	g->label = easprintf("sig.canhazgpu.dev/%zu", ++e->nsigs);
	g->cons = cons;
	hm_put(e->sigs, dump, g);
	free(dump);
	refeed_nodes(e); /* counts g->eligible too */
	return g;
}

void
sqe_node_free(void *p)
{
	struct sqe_node *kn = p;

	if (!kn)
		return;
	json_decref(kn->obj);
	json_decref(kn->extra);
	json_decref(kn->uuids);
	free(kn);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* delete_jobs_on deletes the unfinished Jobs on node name, in the order
 * of their workloads' uids. */
static void
delete_jobs_on(struct sqe *e, const char *name)
{
	const char *k;
	void *v;
	size_t pos = 0, n = 0, i;
	const char **owners = NULL;
	struct sqe_job *j;

	while (hm_next(e->jobs, &pos, &k, &v)) {
		j = v;
		if (j->phase < P_SUCCEEDED && j->node &&
			!strcmp(j->node, name)) {
			owners = erealloc(owners, (n + 1) * sizeof *owners);
			owners[n++] = k;
		}
	}
	if (n)
		qsort(owners, n, sizeof *owners, cmp_str);
	for (i = 0; i < n; i++)
		sqe_job_delete(hm_get(e->jobs, owners[i]), "its node is gone");
	free(owners);
}

void
sqe_node_event(struct sqe *e, char type, json_t *obj)
{
	const char *name = sqe_str_at(obj, "metadata", "name");
	struct sqe_node *kn;
	uint64_t dg;

	if (!name)
		return;
	kn = hm_get(e->nodes, name);
	if (type == 'D') {
		if (!kn)
			return;
		node_feed(e, name, kn, NULL);
		hm_del(e->nodes, name);
		if (sqe_all_synced(e))
			delete_jobs_on(e, name);
		e->c.changed = 1;
		return;
	}
	dg = nf_digest(obj);
	if (kn && kn->digest == dg) {
		json_decref(kn->obj);
		kn->obj = json_incref(obj);
		return;
	}
	if (!kn) {
		kn = ecalloc(1, sizeof *kn);
		kn->uuids = json_array();
		hm_put(e->nodes, name, kn);
	}
	json_decref(kn->obj);
	kn->obj = json_incref(obj);
	kn->digest = dg;
	node_feed(e, name, kn, obj);
	e->c.changed = 1;
}
