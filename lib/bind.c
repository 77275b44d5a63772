/* bind: one pass of sched-bind's decisions (see bind.h).
 *
 * The engine is asked one demand at a time, in a state of its own that
 * holds only the nodes the pod may use, with every device in use fed as
 * an allocation: the node filter of a pod (taints, affinity, resources)
 * is no label the engine could select on, and a fresh state costs a few
 * records per device, which a secondary scheduler's pass can afford. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "bind_int.h"
#include "err.h"
#include "hmap.h"
#include "jbuf.h"
#include "jscan.h"
#include "nd.h"
#include "nodefit.h"
#include "sched.h"
#include "sched_index.h"

struct bnode {
	const char *name;
	const json_t *obj;
	char *inv;  /* nf_records */
	int usable; /* Ready and not unschedulable */
	struct brl avail;
	struct bdev **devs; /* by index, then annotation order */
	size_t ndevs, capdevs;
};

struct pass {
	const struct bind_opts *o;
	struct bnode *nodes;
	size_t nnodes;
	struct hm *node_ix; /* name -> index + 1 */
	struct hm *devs;    /* uuid -> struct bdev */
	struct hm *dra;     /* "pool\037device" -> struct bdev */
	struct hm *used;    /* uuid -> non-NULL */
	struct hm *claims;  /* "ns/name" -> json_t (borrowed) */
	struct hm *touched; /* claims written this pass */
	struct jb rec, ans;
	json_t *out;
};

/* A pending pod and what its annotations say. */
struct pend {
	const json_t *pod;
	char *key;
	const char *created;
	long long prio;
	int strat; /* -1: the default */
	json_t *events;
};

/* ---- small readers ---- */

static const char *
annotation(const json_t *o, const char *key)
{
	return str(at(o, "metadata", "annotations"), key, NULL);
}

static void
event(json_t *events, const char *type, const char *msg)
{
	json_array_append_new(events,
		json_pack("{s:s,s:s,s:s}", "type", type, "reason",
			"FailedScheduling", "message", msg));
}

int
bind_priority(const char *s, long long *out, const char **why)
{
	char *end;
	long long v;

	*why = "is not an integer";
	if (!((*s >= '0' && *s <= '9') ||
		    ((*s == '-' || *s == '+') && s[1] >= '0' && s[1] <= '9')))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end)
		return -1;
	if (errno || v < INT_MIN || v > INT_MAX) {
		*why = "is not an integer in -2147483648..2147483647";
		return -1;
	}
	*out = v;
	return 0;
}

/* ---- inventory ---- */

static void
dev_free(void *p)
{
	struct bdev *d = p;

	free(d->uuid);
	free(d->prof);
	free(d);
}

static struct bnode *
node_named(struct pass *P, const char *name)
{
	size_t i = name ? (size_t)(uintptr_t)hm_get(P->node_ix, name) : 0;

	return i ? &P->nodes[i - 1] : NULL;
}

static void
add_dev(struct pass *P, size_t ni, const json_t *d)
{
	struct bnode *n = &P->nodes[ni];
	const char *uuid = str(d, "uuid", NULL), *mig = str(d, "mig", NULL);
	struct bdev *v;
	size_t j;

	if (!uuid || !*uuid || hm_get(P->devs, uuid))
		return;
	v = ecalloc(1, sizeof *v);
	v->uuid = estrdup(uuid);
	v->node = ni;
	v->index = json_integer_value(json_object_get(d, "index"));
	v->prof = estrdup(mig ? mig : "");
	v->alloc = mig || !json_is_true(json_object_get(d, "mig_enabled"));
	hm_put(P->devs, uuid, v);
	if (n->ndevs == n->capdevs) {
		n->capdevs = n->capdevs ? 2 * n->capdevs : 8;
		n->devs = erealloc(n->devs, n->capdevs * sizeof *n->devs);
	}
	for (j = n->ndevs; j > 0 && n->devs[j - 1]->index > v->index; j--)
		n->devs[j] = n->devs[j - 1];
	n->devs[j] = v;
	n->ndevs++;
}

static void
read_nodes(struct pass *P, const json_t *nodes)
{
	const json_t *obj, *c, *devs, *d;
	const char *name, *ann;
	struct jb b = {0};
	size_t i, j;

	P->nodes = ecalloc(json_array_size(nodes) + 1, sizeof *P->nodes);
	json_array_foreach(nodes, i, obj) {
		name = str(obj, "metadata", "name");
		if (!name || hm_get(P->node_ix, name))
			continue;
		struct bnode *n = &P->nodes[P->nnodes];
		n->name = name;
		n->obj = obj;
		jb_reset(&b);
		nf_records(obj, NULL, &b);
		n->inv = emalloc(b.len + 1);
		memcpy(n->inv, b.buf, b.len);
		n->inv[b.len] = '\0';
		json_array_foreach(at(obj, "status", "conditions"), j, c)
			if (!strcmp(str(c, "type", NULL) ?: "", "Ready") &&
				!strcmp(str(c, "status", NULL) ?: "", "True"))
				n->usable = 1;
		if (json_is_true(at(obj, "spec", "unschedulable")))
			n->usable = 0;
		bind_rl_read(&n->avail, at(obj, "status", "allocatable"));
		hm_put(P->node_ix, name, (void *)(uintptr_t)++P->nnodes);
		ann = annotation(obj, "agentaflow.gpu/devices");
		devs = ann ? json_loads(ann, 0, NULL) : NULL;
		json_array_foreach(devs, j, d)
			add_dev(P, P->nnodes - 1, d);
		json_decref((json_t *)devs);
	}
	jb_free(&b);
}

static void
read_slices(struct pass *P, const json_t *slices)
{
	const json_t *s, *d;
	const char *pool, *name, *uuid;
	struct bdev *v;
	size_t i, j;
	char *k;

	json_array_foreach(slices, i, s) {
		if (strcmp(str(s, "spec", "driver") ?: "", BIND_DRIVER))
			continue;
		pool = str(at(s, "spec", "pool"), "name", NULL);
		json_array_foreach(at(s, "spec", "devices"), j, d) {
			name = str(d, "name", NULL);
			uuid = str(at(d, "attributes", "uuid"), "string", NULL);
			if (!pool || !name || !uuid ||
				!(v = hm_get(P->devs, uuid)))
				continue;
			v->dra = name;
			v->pool = pool;
			k = easprintf("%s\037%s", pool, name);
			hm_put(P->dra, k, v);
			free(k);
		}
	}
}

static void
use(struct pass *P, const struct bdev *d)
{
	hm_put(P->used, d->uuid, (void *)1);
}

static void
read_claims(struct pass *P, const json_t *claims)
{
	const json_t *c, *r;
	struct bdev *d;
	size_t i, j;
	char *k;

	json_array_foreach(claims, i, c) {
		k = key_of(c);
		hm_put(P->claims, k, (void *)c);
		free(k);
		json_array_foreach(at(at(c, "status", "allocation"), "devices",
					   "results"),
			j, r) {
			if (strcmp(str(r, "driver", NULL) ?: "", BIND_DRIVER))
				continue;
			k = easprintf("%s\037%s", str(r, "pool", NULL) ?: "",
				str(r, "device", NULL) ?: "");
			if ((d = hm_get(P->dra, k)))
				use(P, d);
			free(k);
		}
	}
}

/* ext_prof says which profile extended resource name counts devices of:
 * "" for nvidia.com/gpu, P for nvidia.com/mig-P; NULL for others. */
static const char *
ext_prof(const char *name)
{
	if (!strcmp(name, "nvidia.com/gpu"))
		return "";
	if (!strncmp(name, "nvidia.com/mig-", 15) && name[15])
		return name + 15;
	return NULL;
}

static int
bound_live(const json_t *pod)
{
	const char *phase = str(pod, "status", "phase") ?: "";

	return str(pod, "spec", "nodeName") && strcmp(phase, "Succeeded") &&
		strcmp(phase, "Failed");
}

/* take_lowest marks k free devices of profile prof on n in use. */
static void
take_lowest(struct pass *P, const struct bnode *n, const char *prof, long k)
{
	for (size_t i = 0; i < n->ndevs && k > 0; i++) {
		struct bdev *d = n->devs[i];

		if (d->alloc && !strcmp(d->prof, prof) &&
			!hm_get(P->used, d->uuid)) {
			use(P, d);
			k--;
		}
	}
}

static void
read_bound(struct pass *P, const json_t *pods)
{
	const json_t *pod, *u, *uuids;
	struct bnode *n;
	struct bdev *d;
	const char *ann, *prof;
	struct brl req;
	size_t i, j;

	/* named devices first: the lowest free ones are what is left */
	json_array_foreach(pods, i, pod) {
		if (!bound_live(pod) ||
			!node_named(P, str(pod, "spec", "nodeName")))
			continue;
		ann = annotation(pod, BIND_ANN_DEVICES);
		uuids = ann ? json_loads(ann, 0, NULL) : NULL;
		json_array_foreach(uuids, j, u)
			if (json_is_string(u) &&
				(d = hm_get(P->devs, json_string_value(u))))
				use(P, d);
		json_decref((json_t *)uuids);
	}
	json_array_foreach(pods, i, pod) {
		if (!bound_live(pod) ||
			!(n = node_named(P, str(pod, "spec", "nodeName"))))
			continue;
		memset(&req, 0, sizeof req);
		bind_rl_pod(&req, pod);
		for (j = 0; j < req.n; j++)
			bind_rl_add(&n->avail, req.name[j], &req.q[j], 1);
		for (j = 0; j < req.n && !annotation(pod, BIND_ANN_DEVICES);
			j++)
			if ((prof = ext_prof(req.name[j])))
				take_lowest(P, n, prof,
					bind_rl_count(&req, req.name[j]));
		bind_rl_free(&req);
	}
}

/* ---- the engine ---- */

static void
collect(void *arg, const char *rec, size_t len)
{
	struct pass *P = arg;

	if (P->ans.cap < len) {
		P->ans.buf = erealloc(P->ans.buf, len);
		P->ans.cap = len;
	}
	memcpy(P->ans.buf, rec, len);
	P->ans.len = len;
}

static void
feed(struct sp_state *st, const char *text, size_t len, const char *what)
{
	struct nd_reader r = {0};
	const char *p = text, *end = text + len, *nl;
	char *copy;

	r.name = (char *)what;
	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (nl == p)
			continue;
		copy = emalloc((size_t)(nl - p) + 1);
		memcpy(copy, p, (size_t)(nl - p));
		copy[nl - p] = '\0';
		r.recno++;
		if (js_parse(&st->doc, copy, (size_t)(nl - p)) == 0)
			sp_feed(st, &r, &st->doc);
		free(copy);
	}
}

/* engine places alternative a on the nodes with ok set, for pod id with
 * strategy strat (-1: the default); with dra, only devices a slice
 * publishes count. Returns 1 with *node and got[*ngot] filled, else 0
 * with the engine's reason in *why (malloc'd). */
static int
engine(struct pass *P, const unsigned char *ok, const struct alt *a, int dra,
	const char *id, int strat, size_t *node, struct bdev **got, int *ngot,
	char **why)
{
	struct sp_state st;
	struct jb *b = &P->rec;
	json_t *ans, *u;
	size_t i, j;
	int placed = 0;

	sp_init(&st, &spx_ops, P->o->strategy, 1);
	st.emit = collect;
	st.emit_arg = P;
	if (P->o->rr_last && *P->o->rr_last)
		st.rr_last = estrdup(*P->o->rr_last);
	jb_reset(b);
	for (i = 0; i < P->nnodes; i++) {
		if (!ok[i])
			continue;
		jb_raw(b, P->nodes[i].inv);
		for (j = 0; j < P->nodes[i].ndevs; j++) {
			struct bdev *d = P->nodes[i].devs[j];

			if (!hm_get(P->used, d->uuid) && (!dra || d->dra))
				continue;
			jb_raw(b, "{\"kind\":\"allocation\",\"id\":");
			jb_str(b, d->uuid);
			jb_raw(b, ",\"devices\":[");
			jb_str(b, d->uuid);
			jb_raw(b, "]}\n");
		}
	}
	jb_raw(b, "{\"kind\":\"request\",\"id\":");
	jb_str(b, id);
	jb_raw(b, ",\"gpus\":");
	jb_int(b, a->k);
	if (*a->prof) {
		jb_raw(b, ",\"mig_profile\":");
		jb_str(b, a->prof);
	}
	if (strat >= 0) {
		jb_raw(b, ",\"strategy\":");
		jb_str(b, sp_strategy_name(strat));
	}
	jb_raw(b, "}\n{\"kind\":\"flush\"}\n");
	P->ans.len = 0;
	feed(&st, b->buf, b->len, "sched-bind");
	ans = P->ans.len ? json_loadb(P->ans.buf, P->ans.len, 0, NULL) : NULL;
	if (!strcmp(str(ans, "kind", NULL) ?: "", "placement")) {
		struct bnode *n = node_named(P, str(ans, "node", NULL));

		*ngot = 0;
		json_array_foreach(json_object_get(ans, "devices"), i, u) {
			struct bdev *d = hm_get(P->devs, json_string_value(u));

			if (d && *ngot < SP_MAX_GPUS)
				got[(*ngot)++] = d;
		}
		if (n && *ngot == a->k) {
			*node = (size_t)(n - P->nodes);
			placed = 1;
		}
	}
	if (!placed)
		*why = estrdup(str(ans, "reason", NULL) ?: "no answer");
	json_decref(ans);
	if (P->o->rr_last && st.rr_last) {
		free(*P->o->rr_last);
		*P->o->rr_last = estrdup(st.rr_last);
	}
	sp_free(&st);
	return placed;
}

/* ---- claims ---- */

/* claim_of returns the ResourceClaim a pod.spec.resourceClaims entry
 * names (*none set when it needs none), or NULL with *why. */
static const json_t *
claim_of(struct pass *P, const json_t *pod, const json_t *e, int *none,
	char **why)
{
	const char *ns = str(pod, "metadata", "namespace") ?: "";
	const char *en = str(e, "name", NULL) ?: "", *cn = NULL;
	const json_t *s, *c;
	size_t i;
	int found = 0;
	char *k;

	*none = 0;
	if ((cn = str(e, "resourceClaimName", NULL))) {
		found = 1;
	} else {
		json_array_foreach(at(pod, "status", "resourceClaimStatuses"),
			i, s) {
			if (!strcmp(str(s, "name", NULL) ?: "", en)) {
				found = 1;
				cn = str(s, "resourceClaimName", NULL);
			}
		}
		if (found && !cn) {
			*none = 1;
			return NULL;
		}
	}
	if (!found) {
		*why = easprintf("waiting for the ResourceClaim of "
				 "pod.spec.resourceClaims \"%s\"",
			en);
		return NULL;
	}
	k = easprintf("%s/%s", ns, cn);
	c = hm_get(P->claims, k);
	if (!c)
		*why = easprintf("ResourceClaim %s not found", k);
	else if (at(c, "metadata", "deletionTimestamp"))
		*why = easprintf("ResourceClaim %s is being deleted", k);
	else if (hm_get(P->touched, k))
		*why = easprintf("ResourceClaim %s was written in this pass",
			k);
	free(k);
	return *why ? NULL : c;
}

/* claim_node returns the node an allocated claim is on, or NULL. */
static const char *
claim_node(struct pass *P, const json_t *c)
{
	const json_t *a = at(c, "status", "allocation"), *t, *f;
	struct bdev *d;
	size_t i, j;
	char *k;

	json_array_foreach(at(at(a, "nodeSelector", NULL), "nodeSelectorTerms",
				   NULL),
		i, t) {
		json_array_foreach(json_object_get(t, "matchFields"), j, f)
			if (!strcmp(str(f, "key", NULL) ?: "", "metadata.name"))
				return json_string_value(
					json_array_get(json_object_get(f,
							       "values"),
						0));
	}
	json_array_foreach(at(a, "devices", "results"), i, t) {
		k = easprintf("%s\037%s", str(t, "pool", NULL) ?: "",
			str(t, "device", NULL) ?: "");
		d = hm_get(P->dra, k);
		free(k);
		if (d)
			return P->nodes[d->node].name;
	}
	return NULL;
}

/* ---- one pod ---- */

/* Why nodes were passed over, counted for the FailedScheduling message. */
enum { W_READY, W_TAINT, W_AFFINITY, W_SELECTOR, W_PINNED, W_NWHY };
static const char *const whys[W_NWHY] = {"not ready or unschedulable",
	"untolerated taint", "node affinity mismatch", "node selector mismatch",
	"not the node of an allocated claim"};

struct tally {
	int n[W_NWHY];
	char **res; /* insufficient resources, by name */
	int *nres;
	size_t nr;
	int nodev; /* passed the filter, no devices */
	char *devwhy;
};

static void
tally_res(struct tally *t, const char *r)
{
	for (size_t i = 0; i < t->nr; i++)
		if (!strcmp(t->res[i], r)) {
			t->nres[i]++;
			return;
		}
	t->res = erealloc(t->res, (t->nr + 1) * sizeof *t->res);
	t->nres = erealloc(t->nres, (t->nr + 1) * sizeof *t->nres);
	t->res[t->nr] = estrdup(r);
	t->nres[t->nr++] = 1;
}

static char *
tally_msg(struct tally *t, size_t nnodes)
{
	struct jb b = {0};
	char buf[64], *m;
	const char *sep = "";
	size_t i;

	snprintf(buf, sizeof buf, "0/%zu nodes fit: ", nnodes);
	jb_raw(&b, buf);
	for (i = 0; i < W_NWHY; i++) {
		if (!t->n[i])
			continue;
		snprintf(buf, sizeof buf, "%s%d ", sep, t->n[i]);
		jb_raw(&b, buf);
		jb_raw(&b, whys[i]);
		sep = ", ";
	}
	for (i = 0; i < t->nr; i++) {
		snprintf(buf, sizeof buf, "%s%d insufficient ", sep,
			t->nres[i]);
		jb_raw(&b, buf);
		jb_raw(&b, t->res[i]);
		sep = ", ";
	}
	if (t->nodev) {
		snprintf(buf, sizeof buf, "%s%d without the devices (", sep,
			t->nodev);
		jb_raw(&b, buf);
		jb_raw(&b, t->devwhy ? t->devwhy : "");
		jb_raw(&b, ")");
		sep = ", ";
	}
	if (!*sep)
		jb_raw(&b, "no nodes");
	m = emalloc(b.len + 1);
	memcpy(m, b.buf, b.len);
	m[b.len] = '\0';
	jb_free(&b);
	return m;
}

static void
tally_free(struct tally *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->res[i]);
	free(t->res);
	free(t->nres);
	free(t->devwhy);
}

/* filter sets ok[i] for the nodes pod may use, counting the others. */
static void
filter(struct pass *P, const json_t *pod, const struct brl *req,
	const char *pinned, unsigned char *ok, struct tally *t)
{
	const json_t *spec = json_object_get(pod, "spec"), *sel, *v;
	const json_t *terms = at(
		at(at(json_object_get(spec, "affinity"), "nodeAffinity", NULL),
			"requiredDuringSchedulingIgnoredDuringExecution", NULL),
		"nodeSelectorTerms", NULL);
	const char *k, *r;
	size_t i;
	int e, bad;

	sel = json_object_get(spec, "nodeSelector");
	for (i = 0; i < P->nnodes; i++) {
		struct bnode *n = &P->nodes[i];

		ok[i] = 0;
		if (!n->usable) {
			t->n[W_READY]++;
			continue;
		}
		e = nf_eligible(n->obj, json_object_get(spec, "tolerations"),
			terms, NULL, 0);
		if (e != NF_OK) {
			t->n[e == NF_TAINT ? W_TAINT : W_AFFINITY]++;
			continue;
		}
		bad = 0;
		json_object_foreach((json_t *)sel, k, v)
			if (!json_is_string(v) ||
				strcmp(str(at(n->obj, "metadata", "labels"), k,
					       NULL)
						?: "\1",
					json_string_value(v)))
				bad = 1;
		if (bad) {
			t->n[W_SELECTOR]++;
			continue;
		}
		if ((r = bind_rl_short(&n->avail, req))) {
			tally_res(t, r);
			continue;
		}
		if (pinned && strcmp(pinned, n->name)) {
			t->n[W_PINNED]++;
			continue;
		}
		ok[i] = 1;
	}
}

/* try places the demands on the ok nodes: the first picks the node, the
 * rest must fit on it, else the next node is tried. Returns the node's
 * index + 1 (devices marked in use), or 0 with the reasons of the first
 * demand in t. */
static size_t
try(struct pass *P, struct pend *p, struct demand *d, size_t nd,
	unsigned char *ok, struct tally *t)
{
	unsigned char *one = ecalloc(P->nnodes + 1, 1);
	size_t i, j, x = 0, a, first = 1;
	char *why;
	int placed = 0, k;

	for (;;) {
		for (i = 0; i < P->nnodes && !ok[i]; i++)
			;
		if (i == P->nnodes)
			break;
		if (!nd) {
			x = i;
			placed = 1;
			break;
		}
		for (a = 0; a < d[0].nalts; a++) {
			why = NULL;
			if (engine(P, ok, &d[0].alts[a], d[0].claim != NULL,
				    p->key, p->strat, &x, d[0].got, &d[0].ngot,
				    &why))
				break;
			if (first) {
				char *m = t->devwhy
					? easprintf("%s; %s", t->devwhy, why)
					: estrdup(why);
				free(t->devwhy);
				t->devwhy = m;
			}
			free(why);
		}
		if (a == d[0].nalts)
			break;
		d[0].chosen = a;
		for (k = 0; k < d[0].ngot; k++)
			use(P, d[0].got[k]);
		one[x] = 1;
		for (j = 1; j < nd; j++) {
			for (a = 0; a < d[j].nalts; a++) {
				size_t y;

				why = NULL;
				if (engine(P, one, &d[j].alts[a],
					    d[j].claim != NULL, p->key,
					    p->strat, &y, d[j].got, &d[j].ngot,
					    &why))
					break;
				free(why);
			}
			if (a == d[j].nalts)
				break;
			d[j].chosen = a;
			for (k = 0; k < d[j].ngot; k++)
				use(P, d[j].got[k]);
		}
		one[x] = 0;
		if (j == nd) {
			placed = 1;
			break;
		}
		/* the node cannot hold them all: give back, try another */
		for (size_t q = 0; q < j; q++)
			for (k = 0; k < d[q].ngot; k++)
				hm_del(P->used, d[q].got[k]->uuid);
		ok[x] = 0;
		first = 0;
		free(t->devwhy);
		t->devwhy = estrdup("no node holds all the devices together");
	}
	free(one);
	return placed ? x + 1 : 0;
}

/* pod_demands reads the demands of p; returns NULL or why it cannot be
 * placed (malloc'd); *pinned is the node of an allocated claim. */
static char *
pod_demands(struct pass *P, const json_t *pod, const struct brl *req,
	struct demand **d, size_t *nd, const json_t ***reserve, size_t *nres,
	const char **pinned)
{
	const json_t *e, *c;
	const char *prof, *cn;
	char *why = NULL, *ck;
	size_t i;
	long k;
	int none;

	for (i = 0; i < req->n; i++) {
		if (!(prof = ext_prof(req->name[i])))
			continue;
		k = bind_rl_count(req, req->name[i]);
		if (k < 1)
			continue;
		if (k > SP_MAX_GPUS)
			return easprintf("%s: %ld is more than %d devices",
				req->name[i], k, SP_MAX_GPUS);
		bind_alt_add(bind_demand_add(d, nd, NULL), "", prof, (int)k);
	}
	json_array_foreach(at(pod, "spec", "resourceClaims"), i, e) {
		why = NULL;
		c = claim_of(P, pod, e, &none, &why);
		if (none)
			continue;
		if (!c)
			return why;
		ck = key_of(c);
		if (at(c, "status", "allocation")) {
			cn = claim_node(P, c);
			if (!cn || (*pinned && strcmp(*pinned, cn)))
				why = easprintf("ResourceClaim %s is allocated "
						"on no node it can share",
					ck);
			*pinned = cn;
		} else {
			why = bind_claim_demands(d, nd, c, ck);
		}
		*reserve = erealloc(*reserve, (*nres + 1) * sizeof **reserve);
		(*reserve)[(*nres)++] = c;
		free(ck);
		if (why)
			return why;
	}
	return NULL;
}

static void
unschedulable(struct pass *P, struct pend *p, json_t *act, const char *why)
{
	json_object_set_new(act, "decision",
		json_pack("{s:s,s:s,s:s}", "kind", "unschedulable", "pod",
			p->key, "reason", why));
	event(p->events, "Warning", why);
	(void)P;
}

static void
place(struct pass *P, struct pend *p)
{
	const json_t *pod = p->pod, **reserve = NULL;
	struct demand *d = NULL;
	struct tally t = {0};
	struct brl req = {0};
	size_t nd = 0, nres = 0, x, i;
	const char *pinned = NULL;
	unsigned char *ok = ecalloc(P->nnodes + 1, 1);
	json_t *act, *devs, *cl;
	char *why, *ck;
	int j;

	act = json_pack("{s:s,s:s,s:s}", "namespace",
		str(pod, "metadata", "namespace") ?: "", "name",
		str(pod, "metadata", "name") ?: "", "uid",
		str(pod, "metadata", "uid") ?: "");
	bind_rl_pod(&req, pod);
	why = pod_demands(P, pod, &req, &d, &nd, &reserve, &nres, &pinned);
	if (!why) {
		filter(P, pod, &req, pinned, ok, &t);
		for (i = 0; i < P->nnodes; i++)
			t.nodev += ok[i];
		if (!(x = try(P, p, d, nd, ok, &t)))
			why = tally_msg(&t, P->nnodes);
	}
	if (why) {
		unschedulable(P, p, act, why);
		free(why);
		goto out;
	}
	x--;
	devs = json_array();
	for (i = 0; i < nd; i++)
		for (j = 0; j < d[i].ngot; j++)
			json_array_append_new(devs,
				json_string(d[i].got[j]->uuid));
	json_object_set_new(act, "decision",
		json_pack("{s:s,s:s,s:s,s:o,s:s,s:I}", "kind", "bind", "pod",
			p->key, "node", P->nodes[x].name, "devices", devs,
			"strategy",
			sp_strategy_name(
				p->strat >= 0 ? p->strat : P->o->strategy),
			"priority", (json_int_t)p->prio));
	cl = json_array();
	for (i = 0; i < nres; i++) {
		if (at(reserve[i], "status", "allocation") &&
			bind_reserved_for(reserve[i],
				str(pod, "metadata", "uid") ?: ""))
			continue;
		json_array_append_new(cl,
			bind_claim_write(reserve[i], pod, P->nodes[x].name, d,
				nd));
		ck = key_of(reserve[i]);
		hm_put(P->touched, ck, (void *)1);
		free(ck);
	}
	json_object_set_new(act, "claims", cl);
	for (i = 0; i < req.n; i++)
		bind_rl_add(&P->nodes[x].avail, req.name[i], &req.q[i], 1);
out:
	json_object_set(act, "events", p->events);
	json_array_append_new(P->out, act);
	tally_free(&t);
	bind_rl_free(&req);
	bind_demands_free(d, nd);
	free(reserve);
	free(ok);
}

/* ---- the pass ---- */

static int
pend_cmp(const void *a, const void *b)
{
	const struct pend *x = a, *y = b;
	int c;

	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if ((c = strcmp(x->created, y->created)))
		return c;
	return strcmp(x->key, y->key);
}

static int
pending_ours(const json_t *pod, const char *sched)
{
	const char *phase = str(pod, "status", "phase");

	return !strcmp(str(pod, "spec", "schedulerName") ?: "", sched) &&
		!str(pod, "spec", "nodeName") &&
		!at(pod, "metadata", "deletionTimestamp") &&
		!json_array_size(at(pod, "spec", "schedulingGates")) &&
		(!phase || !strcmp(phase, "Pending"));
}

static void
annotations(struct pend *p)
{
	const char *v, *why;
	char *m;

	p->strat = -1;
	if ((v = annotation(p->pod, BIND_ANN_PRIORITY)) &&
		bind_priority(v, &p->prio, &why) < 0) {
		m = easprintf("annotation %s: \"%s\" %s", BIND_ANN_PRIORITY, v,
			why);
		event(p->events, "Warning", m);
		free(m);
		p->prio = 0;
	}
	if ((v = annotation(p->pod, BIND_ANN_STRATEGY)) &&
		(p->strat = sp_strategy_parse(v)) < 0) {
		m = easprintf("annotation %s: \"%s\" is not a known strategy",
			BIND_ANN_STRATEGY, v);
		event(p->events, "Warning", m);
		free(m);
	}
}

json_t *
bind_pass(const json_t *nodes, const json_t *pods, const json_t *slices,
	const json_t *claims, const struct bind_opts *o)
{
	struct pass P = {0};
	struct pend *pv;
	const json_t *pod;
	size_t i, n = 0;

	P.o = o;
	P.node_ix = hm_new(NULL);
	P.devs = hm_new(dev_free);
	P.dra = hm_new(NULL);
	P.used = hm_new(NULL);
	P.claims = hm_new(NULL);
	P.touched = hm_new(NULL);
	P.out = json_array();
	read_nodes(&P, nodes);
	read_slices(&P, slices);
	read_claims(&P, claims);
	read_bound(&P, pods);

	pv = ecalloc(json_array_size(pods) + 1, sizeof *pv);
	json_array_foreach(pods, i, pod) {
		if (!pending_ours(pod, o->scheduler))
			continue;
		pv[n].pod = pod;
		pv[n].key = key_of(pod);
		pv[n].created = str(pod, "metadata", "creationTimestamp") ?: "";
		pv[n].events = json_array();
		annotations(&pv[n]);
		n++;
	}
	qsort(pv, n, sizeof *pv, pend_cmp);
	for (i = 0; i < n; i++) {
		place(&P, &pv[i]);
		free(pv[i].key);
		json_decref(pv[i].events);
	}
	free(pv);

	for (i = 0; i < P.nnodes; i++) {
		free(P.nodes[i].inv);
		free(P.nodes[i].devs);
		bind_rl_free(&P.nodes[i].avail);
	}
	free(P.nodes);
	hm_free(P.node_ix);
	hm_free(P.devs);
	hm_free(P.dra);
	hm_free(P.used);
	hm_free(P.claims);
	hm_free(P.touched);
	jb_free(&P.rec);
	jb_free(&P.ans);
	return P.out;
}
