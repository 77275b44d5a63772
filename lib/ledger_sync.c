/* ledger_sync: the ledger's k8s holds made to match what the cluster
 * allocated, batch by batch. A hold record with "mig" (a MIG device's
 * uuid, gpu its parent) is held with the parent's shared hold (the MIG
 * model of lib/ledger.h). */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ledger.h"
#include "nd.h"

/* A batch of hold records: the script's holds, the records they came
 * from (for conflicts and messages), and the claims to leave as they are
 * (named by records that were bad). */
struct holds {
	json_t *holds, *recs, *keep;
	int keep_all; /* a line was not JSON: release nothing */
	long *recnos;
	size_t n;
};

static const char *
str_member(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* take_hold checks a hold record and adds it to h. Returns 0, or -1
 * after warning. */
static int
take_hold(struct nd_reader *r, json_t *rec, struct holds *h)
{
	const json_t *gpu = json_object_get(rec, "gpu"), *pods, *p, *mig;
	const char *uid = str_member(rec, "claim_uid");
	const char *ns = str_member(rec, "namespace");
	const char *name = str_member(rec, "name"), *user;
	json_t *hold;
	char *u = NULL;
	size_t i;

	char why[96];
	const char *e;

	if (!uid || !*uid) {
		nd_warn(r, "claim_uid: not a string");
		return -1;
	}
	/* a claim uid the ledger cannot hold is no claim of it: not kept */
	if ((e = lg_text_check(uid, LG_MAX_ID, why, sizeof why))) {
		nd_warn(r, "claim_uid: %s", e);
		return -1;
	}
	if (h->n >= LG_MAX_HOLDS) {
		/* the rest of the batch is unknown: release nothing */
		nd_warn(r, "more than %d holds in one batch", LG_MAX_HOLDS);
		h->keep_all = 1;
		return -1;
	}
	if (!gpu || !json_is_integer(gpu) || json_integer_value(gpu) < 0 ||
		json_integer_value(gpu) > LG_MAX_GPU_ID)
		json_array_append_new(h->keep, json_string(uid));
	if (!json_is_integer(gpu) || json_integer_value(gpu) < 0 ||
		json_integer_value(gpu) > LG_MAX_GPU_ID) {
		nd_warn(r, "gpu: not a GPU index");
		return -1;
	}
	if (!ns || !*ns || !name || !*name) {
		json_array_append_new(h->keep, json_string(uid));
		nd_warn(r, "%s: not a string",
			!ns || !*ns ? "namespace" : "name");
		return -1;
	}
	mig = json_object_get(rec, "mig");
	if (mig && !json_is_null(mig) &&
		(!json_is_string(mig) || !*json_string_value(mig))) {
		json_array_append_new(h->keep, json_string(uid));
		nd_warn(r, "mig: not a string");
		return -1;
	}
	user = str_member(rec, "user");
	if (!user)
		user = u = easprintf("k8s:%s/%s", ns, name);
	e = lg_text_check(ns, LG_MAX_NAME, why, sizeof why) ? "namespace"
		: lg_text_check(user, LG_MAX_NAME, why, sizeof why) ? "user"
		: json_is_string(mig) &&
			lg_text_check(json_string_value(mig), LG_MAX_ID, why,
				sizeof why)
		? "mig"
		: NULL;
	if (e) {
		json_array_append_new(h->keep, json_string(uid));
		nd_warn(r, "%s: %s", e, why);
		free(u);
		return -1;
	}
	pods = json_object_get(rec, "pods");
	hold = json_object();
	json_object_set_new(hold, "gpu", json_copy((json_t *)gpu));
	json_object_set_new(hold, "claim_uid", json_string(uid));
	json_object_set_new(hold, "user", json_string(user));
	json_object_set_new(hold, "namespace", json_string(ns));
	if (json_is_string(mig))
		json_object_set_new(hold, "mig", json_copy((json_t *)mig));
	json_array_foreach(pods, i, p)
		if (json_is_string(p) &&
			!lg_text_check(json_string_value(p), LG_MAX_NAME, why,
				sizeof why)) {
			json_object_set_new(hold, "pod",
				json_copy((json_t *)p));
			break;
		}
	free(u);
	json_array_append_new(h->holds, hold);
	json_array_append(h->recs, rec);
	h->recnos = erealloc(h->recnos, (h->n + 1) * sizeof *h->recnos);
	h->recnos[h->n++] = r->recno;
	return 0;
}

void
lg_write_conflict(const json_t *rec, const json_t *c)
{
	json_t *o = json_object(), *pods = json_object_get(rec, "pods");

	json_object_set_new(o, "kind", json_string("conflict"));
	json_object_set_new(o, "gpu",
		json_deep_copy(json_object_get(rec, "gpu")));
	if (json_is_string(json_object_get(rec, "mig")))
		json_object_set_new(o, "mig",
			json_deep_copy(json_object_get(rec, "mig")));
	json_object_set_new(o, "claim_uid",
		lg_copy_or_null(json_object_get(rec, "claim_uid")));
	json_object_set_new(o, "namespace",
		lg_copy_or_null(json_object_get(rec, "namespace")));
	json_object_set_new(o, "name",
		lg_copy_or_null(json_object_get(rec, "name")));
	json_object_set_new(o, "pods",
		json_is_array(pods) ? json_deep_copy(pods) : json_array());
	json_object_set_new(o, "holder",
		lg_copy_or_null(json_object_get(c, "holder")));
	json_object_set_new(o, "holder_type",
		lg_copy_or_null(json_object_get(c, "holder_type")));
	json_object_set_new(o, "since",
		lg_secs_json(json_object_get(c, "since")));
	nd_write(o);
	json_decref(o);
}

/* apply runs one batch; returns HAZ_OK or HAZ_FAIL. */
static int
apply(struct lg *l, struct nd_reader *r, struct holds *h)
{
	json_t *p = json_object(), *res, *v;
	const json_t *rel;
	int status = HAZ_OK;
	size_t i, k;

	json_object_set(p, "holds", h->holds);
	json_object_set(p, "keep", h->keep);
	json_object_set_new(p, "keep_all", json_boolean(h->keep_all));
	res = lg_run(l, LG_K8S_SYNC, p);
	rel = json_object_get(res, "released");
	json_array_foreach(rel, i, v) {
		const char *t = str_member(v, "type");

		if (t && strcmp(t, "k8s") == 0) {
			json_t *o = lg_reservation("release", v);

			nd_write(o);
			json_decref(o);
		}
	}
	/* holds and conflicts in the order of their records */
	for (k = 0; k < h->n; k++) {
		json_array_foreach(json_object_get(res, "held"), i, v) {
			if ((size_t)lg_jint(v, "i") == k) {
				json_t *o = lg_reservation("hold", v);

				nd_write(o);
				json_decref(o);
			}
		}
		json_array_foreach(json_object_get(res, "conflicts"), i, v) {
			if ((size_t)lg_jint(v, "i") == k)
				lg_write_conflict(json_array_get(h->recs, k),
					v);
		}
	}
	json_array_foreach(json_object_get(res, "range"), i, v) {
		k = (size_t)json_number_value(json_object_get(v, "i"));
		if (k < h->n) {
			err_warn("%s:%ld: GPU %lld is out of range (0-%lld)",
				r->name, h->recnos[k],
				(long long)json_integer_value(
					json_object_get(json_array_get(h->holds,
								k),
						"gpu")),
				(long long)json_number_value(
					json_object_get(v, "count")) -
					1);
			status = HAZ_FAIL;
		}
	}
	json_decref(res);
	v = json_pack("{s:s}", "kind", "flush");
	nd_write(v);
	json_decref(v);
	return status;
}

static void
holds_reset(struct holds *h)
{
	json_decref(h->holds);
	json_decref(h->recs);
	json_decref(h->keep);
	free(h->recnos);
	memset(h, 0, sizeof *h);
	h->holds = json_array();
	h->recs = json_array();
	h->keep = json_array();
}

int
lg_k8s_sync(struct lg *l)
{
	struct nd_reader r;
	struct holds h = {0};
	int got, status = HAZ_OK, pending = 0;
	const char *kind;
	json_t *rec;

	if (nd_open(&r, "-", 0) < 0)
		return HAZ_FAIL;
	holds_reset(&h);
	while ((got = nd_read(&r, &rec)) != 0) {
		if (got < 0) {
			status = HAZ_FAIL;
			pending = 1;
			h.keep_all = 1;
			continue;
		}
		kind = str_member(rec, "kind");
		if (kind && strcmp(kind, "flush") == 0) {
			if (apply(l, &r, &h) != HAZ_OK)
				status = HAZ_FAIL;
			holds_reset(&h);
			pending = 0;
		} else if (kind && strcmp(kind, "hold") == 0) {
			pending = 1;
			if (take_hold(&r, rec, &h) < 0)
				status = HAZ_FAIL;
		}
		json_decref(rec);
	}
	if (pending && apply(l, &r, &h) != HAZ_OK)
		status = HAZ_FAIL;
	holds_reset(&h);
	json_decref(h.holds);
	json_decref(h.recs);
	json_decref(h.keep);
	nd_close(&r);
	return status;
}
