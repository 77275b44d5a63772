/* sqe_pass: a placement pass of the engine: the waiting workloads fed to
 * the placement engine in queue order, and what each answer makes of
 * its workload: a Job, a wait for capacity, or a retry (see sqe.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jload.h"
#include "jscan.h"
#include "nodefit.h"
#include "sqe_int.h"
#include "wl.h"

static int
queue_cmp(const void *a, const void *b)
{
	const struct sqe_wl *x = *(struct sqe_wl *const *)a,
			    *y = *(struct sqe_wl *const *)b;
	const char *cx = sqe_str_at(x->obj, "metadata", "creationTimestamp"),
		   *cy = sqe_str_at(y->obj, "metadata", "creationTimestamp");
	int c;

	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if ((c = strcmp(cx ?: "", cy ?: "")))
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

#define REQ_HEAD "{\"kind\":\"request\",\"id\":"

/* make_request returns w's request record, known by w's uid, as its
 * hold and its Job's are: a workload made again under the same name is
 * another one. */
static char *
make_request(const struct sqe *e, const struct sqe_wl *w, int all)
{
	struct jb b = {0}, id = {0};
	size_t skip;
	char *req;

	jb_raw(&id, REQ_HEAD);
	jb_str(&id, w->key);
	if (e->o.dra)
		wl_request_dra(w->obj, all ? NULL : w->sig->label, e->o.chains,
			&b);
	else
		wl_request(w->obj, all ? NULL : w->sig->label, &b);
	if (b.len < id.len || memcmp(b.buf, id.buf, id.len))
		err_die(HAZ_FAIL, "internal error: request of %s", w->key);
	skip = id.len;
	jb_reset(&id);
	jb_raw(&id, REQ_HEAD);
	jb_str(&id, w->uid);
	req = easprintf("%.*s%.*s", (int)id.len, id.buf, (int)(b.len - skip),
		b.buf + skip);
	jb_free(&id);
	jb_free(&b);
	return req;
}

/* request_for returns w's request record, made once per generation and
 * inventory shape. */
static const char *
request_for(struct sqe *e, struct sqe_wl *w)
{
	int all;

	if (!w->sig) {
		w->sig = sqe_node_sig(e, w->obj);
		free(w->req);
		w->req = NULL;
	}
	all = w->sig->eligible == hm_len(e->nodes);
	if (w->req && w->req_all != all) {
		free(w->req);
		w->req = NULL;
	}
	if (!w->req) {
		w->req_all = all;
		w->req = make_request(e, w, all);
	}
	return w->req;
}

/* strip_sig takes the eligibility label out of a reason. */
static char *
strip_sig(const char *reason, const struct sqe_sig *g)
{
	char *s = estrdup(reason), *p, *lab = easprintf("%s=true", g->label);
	size_t n = strlen(lab);
	const char *phrase;

	if ((p = strstr(s, lab))) {
		if (p > s && p[-1] == ',') {
			memmove(p - 1, p + n, strlen(p + n) + 1);
		} else if (p[n] == ',') {
			memmove(p, p + n + 1, strlen(p + n + 1) + 1);
		} else {
			phrase = " matching node selector ";
			if (p - s >= (long)strlen(phrase) &&
				!strncmp(p - strlen(phrase), phrase,
					strlen(phrase)))
				p -= strlen(phrase);
			memmove(p, p + (strstr(p, lab) - p) + n,
				strlen(strstr(p, lab) + n) + 1);
		}
	}
	free(lab);
	return s;
}

/* selects says whether node's labels hold every pair of selector sel. */
static int
selects(const json_t *node, const json_t *sel)
{
	const json_t *labels = json_object_get(json_object_get(node,
						       "metadata"),
		"labels");
	const char *k, *have;
	const json_t *v;

	json_object_foreach((json_t *)sel, k, v) {
		have = json_string_value(json_object_get(labels, k));
		if (!have || !json_string_value(v) ||
			strcmp(have, json_string_value(v)))
			return 0;
	}
	return 1;
}

/* The nodes a workload's selector picks, and why its pods are not
 * admitted there. */
struct refusals {
	size_t taint, aff, matched, ok, nbest;
	char best[256]; /* the commonest taint */
	struct hm *counts;
};

/* count_taint counts one node refused for taint why. */
static void
count_taint(struct refusals *r, const char *why)
{
	size_t *c;

	r->taint++;
	if (!(c = hm_get(r->counts, why))) {
		c = ecalloc(1, sizeof *c);
		hm_put(r->counts, why, c);
	}
	if (++*c > r->nbest) {
		r->nbest = *c;
		snprintf(r->best, sizeof r->best, "%s", why);
	}
}

/* refuse counts, over the nodes in the order first seen, those that sel
 * picks and class g's pods are refused on. */
static void
refuse(const struct sqe *e, const struct sqe_sig *g, const json_t *sel,
	struct refusals *r)
{
	const struct sqe_node *kn;
	char why[256];
	size_t i;

	for (i = 0; i < e->live.nnodes; i++) {
		kn = hm_get(e->nodes, e->live.nodes[i]->name);
		if (!kn || !selects(kn->obj, sel))
			continue;
		r->matched++;
		switch (nf_eligible(kn->obj,
			json_object_get(g->cons, "tolerations"),
			json_object_get(g->cons, "terms"), why, sizeof why)) {
		case NF_TAINT: count_taint(r, why); break;
		case NF_AFFINITY: r->aff++; break;
		default: r->ok++;
		}
	}
}

/* selector_text returns " matching node selector k=v,..." for sel, or
 * "" when it is empty. */
static char *
selector_text(const json_t *sel)
{
	struct jb b = {0};
	const char *k;
	const json_t *sv;
	char *on;

	json_object_foreach((json_t *)sel, k, sv) {
		jb_raw(&b, b.len ? "," : "");
		jb_raw(&b, k);
		jb_raw(&b, "=");
		jb_raw(&b, json_string_value(sv) ?: "");
	}
	on = b.len
		? easprintf(" matching node selector %.*s", (int)b.len, b.buf)
		: estrdup("");
	jb_free(&b);
	return on;
}

/* cause_text says why no node admits a workload's pods, from r. */
static char *
cause_text(const struct refusals *r, const char *on)
{
	if (r->taint && r->aff)
		return easprintf("no node%s admits its pods: %zu have a taint "
				 "it does not tolerate (%zu %s), %zu do not "
				 "match its required node affinity",
			on, r->taint, r->nbest, r->best, r->aff);
	if (r->taint)
		return easprintf("no node%s admits its pods: %zu %s a taint it "
				 "does not tolerate (%zu %s)",
			on, r->taint, r->taint == 1 ? "has" : "have", r->nbest,
			r->best);
	return easprintf("no node%s admits its pods: %zu %s not match its "
			 "required node affinity",
		on, r->aff, r->aff == 1 ? "does" : "do");
}

/* cause says why no node that w's node selector picks admits its pods,
 * when none does: how many have a taint it does not tolerate (naming the
 * commonest), how many do not match its required node affinity. NULL
 * when no node matches the selector (sched-pick's reason says so) or
 * some node admits it. */
static char *
cause(const struct sqe *e, const struct sqe_wl *w)
{
	const json_t *spec = json_object_get(w->obj, "spec");
	json_t *sel = json_object();
	struct refusals r = {0};
	char *on, *text = NULL;

	json_object_update(sel, json_object_get(spec, "nodeSelector"));
	json_object_update(sel,
		json_object_get(json_object_get(json_object_get(spec,
							"podTemplate"),
					"spec"),
			"nodeSelector"));
	r.counts = hm_new(free);
	if (w->sig)
		refuse(e, w->sig, sel, &r);
	hm_free(r.counts);
	if (r.matched && !r.ok) {
		on = selector_text(sel);
		text = cause_text(&r, on);
		free(on);
	}
	json_decref(sel);
	return text;
}

/* could_fit says whether w fits the cluster with nothing held. */
static int
could_fit(struct sqe *e, struct sqe_wl *w, const char *req)
{
	size_t mark = e->alen;
	int fits;

	if (w->fits >= 0 && w->fgen == e->inv_gen)
		return w->fits;
	sqe_feed(&e->cap, req, strlen(req), w->key);
	sqe_feed(&e->cap, "{\"kind\":\"flush\"}", 16, w->key);
	fits = e->alen > mark && strstr(e->answers + mark, "\"placement\"");
	e->alen = mark;
	sp_release(&e->cap, w->uid);
	w->fits = fits;
	w->fgen = e->inv_gen;
	return fits;
}

static const json_t *
gpu_req(const struct sqe_wl *w)
{
	return json_object_get(json_object_get(w->obj, "spec"),
		"gpuRequirements");
}

/* mark_shared notes on a Job of w's that it holds its devices shared,
 * so that a restarted controller holds them shared too. */
static void
mark_shared(const struct sqe_wl *w, json_t *job)
{
	json_t *ann = json_object_get(json_object_get(job, "metadata"),
		"annotations");
	const json_t *m = json_object_get(gpu_req(w), "minGPUMemory");
	char mem[24];

	if (!m)
		m = json_object_get(json_object_get(w->obj, "spec"),
			"gpuMemoryRequired");
	snprintf(mem, sizeof mem, "%lld", (long long)json_number_value(m));
	json_object_set_new(ann, "canhazgpu.dev/exclusive",
		json_string("false"));
	json_object_set_new(ann, "canhazgpu.dev/memory-mib", json_string(mem));
}

/* placed_status is the status of w placed as p (MIG from from). */
static json_t *
placed_status(const struct sqe *e, const struct sqe_wl *w,
	const struct wl_place *p, const char *from)
{
	char *msg, now[CLOCK_RFC3339_SIZE];
	json_t *s;

	msg = easprintf("placed on node %s by %s%s%s%s%s", p->node, p->strategy,
		from ? ", MIG " : "", from ? from : "",
		from ? " fell back to " : "", from ? p->mig_profile : "");
	s = json_pack("{s:s,s:s,s:O,s:s,s:o,s:s,s:i,s:s,s:s}", "phase",
		"Scheduled", "assignedNode", p->node, "devices", p->devices,
		"strategy", p->strategy, "requestedGPUs",
		sqe_status_requested(w), "jobName",
		sqe_str_at(w->obj, "metadata", "name"), "retries", w->retries,
		"lastTransitionTime", sqe_status_now(e, 0, now), "message",
		msg);
	if (p->mig_profile)
		json_object_set_new(s, "migProfile",
			json_string(p->mig_profile));
	if (from)
		json_object_set_new(s, "fallbackFrom", json_string(from));
	free(msg);
	return s;
}

/* placed writes w's Job (and claim template) for placement d. */
static void
placed(struct sqe *e, struct sqe_wl *w, const struct js_doc *d)
{
	struct wl_place p = {0};
	json_t *devs = json_array(), *job, *s, *tmpl = NULL;
	int t = js_get(d, 0, "devices"), i, k;
	const char *from = js_str(d, js_get(d, 0, "fallback_from"));

	for (i = 0, k = t + 1; t >= 0 && i < d->t[t].n; i++, k = d->t[k].next)
		json_array_append_new(devs, json_string(d->t[k].s));
	p.node = js_str(d, js_get(d, 0, "node"));
	p.devices = devs;
	p.strategy = js_str(d, js_get(d, 0, "strategy"));
	p.mig_profile = js_str(d, js_get(d, 0, "mig_profile"));
	if (e->o.dra) {
		p.claim_template = sqe_str_at(w->obj, "metadata", "name");
		tmpl = wl_claim_template(w->obj, &p, e->o.chains);
	}
	job = wl_job(w->obj, &p, e->o.image, e->o.tol);
	if (!e->o.dra &&
		json_is_false(json_object_get(gpu_req(w), "exclusiveAccess")))
		mark_shared(w, job);
	s = placed_status(e, w, &p, from);
	json_decref(devs);
	sqe_set_state(e, w, W_FLIGHT);
	free(w->job);
	w->job = jb_dumps(job);
	free(w->tmpl);
	w->tmpl = tmpl ? jb_dumps(tmpl) : NULL;
	w->again = 0;
	sqe_status_set(e, w, s, tmpl, job);
}

/* waiting keeps w queued: it fits the cluster, just not now. */
static void
waiting(struct sqe *e, struct sqe_wl *w, const char *reason)
{
	char *msg = easprintf("waiting for capacity: %s", reason);
	json_t *s = json_pack("{s:s,s:i,s:o,s:s}", "phase", "Pending",
		"retries", w->retries, "requestedGPUs", sqe_status_requested(w),
		"message", msg);

	free(msg);
	sqe_status_set(e, w, s, NULL, NULL);
}

/* queued returns the queued workloads in queue order (*n of them). */
static struct sqe_wl **
queued(const struct sqe *e, size_t *n)
{
	struct sqe_wl **q = NULL, *w;
	size_t cap = 0;
	const char *k;
	void *v;
	size_t pos = 0;

	*n = 0;
	while (hm_next(e->queue, &pos, &k, &v)) {
		w = v;
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			q = erealloc(q, cap * sizeof *q);
		}
		q[(*n)++] = w;
	}
	if (*n)
		qsort(q, *n, sizeof *q, queue_cmp);
	return q;
}

struct tally {
	size_t placed, wait, unsched;
};

/* unplaced handles an answer that did not place w: it waits for
 * capacity when an empty cluster could hold it, else retries. */
static void
unplaced(struct sqe *e, struct sqe_wl *w, const char *why, struct tally *t)
{
	char *r = strip_sig(why, w->sig), *c;

	if (could_fit(e, w, w->req)) {
		t->wait++;
		waiting(e, w, r);
	} else {
		if ((c = cause(e, w))) {
			free(r);
			r = c;
		}
		t->unsched++;
		sqe_status_retry(e, w, r, "unschedulable");
	}
	free(r);
}

/* answer applies one answer of the placement engine, text[0..len). */
static void
answer(struct sqe *e, struct js_doc *d, char *text, size_t len, struct tally *t)
{
	const char *id, *kind;
	struct sqe_wl *w;

	if (js_parse(d, text, len) < 0)
		return;
	id = js_str(d, js_get(d, 0, "id"));
	if (!id || !(w = hm_get(e->wls, id)))
		return;
	kind = js_str(d, js_get(d, 0, "kind"));
	if (kind && !strcmp(kind, "placement")) {
		placed(e, w, d);
		t->placed++;
		return;
	}
	unplaced(e, w, js_str(d, js_get(d, 0, "reason")) ?: "unschedulable", t);
}

/* answers applies the answers of a pass, parsed from a copy: could_fit
 * appends to them. */
static void
answers(struct sqe *e, struct tally *t)
{
	char *line, *rec, *end, *nl;
	struct js_doc d = {0};

	if (!e->alen)
		return;
	line = emalloc(e->alen + 1);
	memcpy(line, e->answers, e->alen + 1);
	end = line + e->alen;
	for (rec = line; rec < end; rec = nl + 1) {
		nl = memchr(rec, '\n', (size_t)(end - rec));
		answer(e, &d, rec, (size_t)(nl - rec), t);
	}
	free(line);
	free(d.t);
}

int
sqe_pass(struct sqe *e)
{
	struct sqe_wl **q;
	struct tally t = {0};
	const char *req;
	size_t n, i;
	int strat;

	if (!e->dirty || !sqe_all_synced(e))
		return -1;
	e->dirty = 0;
	q = queued(e, &n);
	if (e->o.verbose)
		err_warn("pass: %zu waiting", n);
	if (!n) {
		free(q);
		return 0;
	}
	strat = e->cm_strategy ? sp_strategy_parse(e->cm_strategy)
			       : e->o.strategy;
	e->live.strategy = e->cap.strategy = strat;
	e->alen = 0;
	for (i = 0; i < n; i++) {
		req = request_for(e, q[i]);
		sqe_feed(&e->live, req, strlen(req), q[i]->key);
	}
	sqe_feed(&e->live, "{\"kind\":\"flush\"}", 16, "pass");
	answers(e, &t);
	free(q);
	e->alen = 0;
	e->c.changed = 1;
	if (t.placed || t.unsched)
		err_warn("strategy %s: %zu placed, %zu waiting for capacity, "
			 "%zu unschedulable",
			sp_strategy_name(strat), t.placed, t.wait, t.unsched);
	return (int)n;
}

static int
cmp_seq(const void *a, const void *b)
{
	const struct sqe_wl *x = *(struct sqe_wl *const *)a,
			    *y = *(struct sqe_wl *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* tree reads back the JSON text js that the engine wrote itself. */
static json_t *
tree(const char *js)
{
	json_t *v = jl_loadb(js, strlen(js), 0, NULL);

	if (!v)
		err_die(HAZ_FAIL, "sqe: a Job kept as text does not read back");
	return v;
}

/* rewrite gives w's Job, its template and its status to a write again. */
static void
rewrite(struct sqe *e, struct sqe_wl *w)
{
	sqe_set_state(e, w, W_FLIGHT);
	sqe_write_apply(e, w->uid, w->tmpl ? tree(w->tmpl) : NULL, tree(w->job),
		w->want ? sqe_status_obj(w, json_incref(w->want)) : NULL);
}

void
sqe_pass_due(struct sqe *e)
{
	const char *k;
	void *v;
	size_t pos = 0, n = 0, i;
	struct sqe_wl *w, **again = NULL;

	if (e->mono < e->next_due)
		return;
	e->next_due = HUGE_VAL;
	while (hm_next(e->wls, &pos, &k, &v)) {
		w = v;
		if (w->state != W_WAIT && w->state != W_AGAIN)
			continue;
		if (w->due <= e->mono && w->state == W_AGAIN) {
			again = erealloc(again, (n + 1) * sizeof *again);
			again[n++] = w;
		} else if (w->due <= e->mono) {
			sqe_set_state(e, w, W_QUEUED);
			e->dirty = 1;
		} else if (w->due < e->next_due) {
			e->next_due = w->due;
		}
	}
	if (n)
		qsort(again, n, sizeof *again, cmp_seq);
	for (i = 0; i < n; i++)
		rewrite(e, again[i]);
	free(again);
}
