/* apply: server-side apply of JSON objects, with discovery cached. */
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "err.h"
#include "hmap.h"

struct applier {
	struct kube *k;
	char *manager, *ns;
	struct hm *resources; /* "apiVersion Kind" -> struct kube_resource */
};

static void
free_resource(void *p)
{
	kube_resource_free(p);
	free(p);
}

struct applier *
ap_new(struct kube *k, const char *manager, const char *ns)
{
	struct applier *a = ecalloc(1, sizeof *a);

	a->k = k;
	a->manager = estrdup(manager);
	a->ns = estrdup(ns ? ns : "default");
	a->resources = hm_new(free_resource);
	return a;
}

void
ap_free(struct applier *a)
{
	if (!a)
		return;
	hm_free(a->resources);
	free(a->manager);
	free(a->ns);
	free(a);
}

static const char *
sget(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static const char *
meta(const json_t *obj, const char *key)
{
	return sget(json_object_get(obj, "metadata"), key);
}

char *
ap_ref(const json_t *obj)
{
	const char *ns = meta(obj, "namespace");

	return easprintf("%s/%s/%s%s%s", sget(obj, "apiVersion"),
		sget(obj, "kind"), ns ? ns : "", ns ? "/" : "",
		meta(obj, "name") ? meta(obj, "name") : "");
}

/* resource finds (and caches) what obj's apiVersion and kind name. */
static struct kube_resource *
resource(struct applier *a, const json_t *obj, struct kube_error *e)
{
	const char *av = sget(obj, "apiVersion"), *kind = sget(obj, "kind");
	struct kube_resource *r;
	char *key;

	if (!av || !kind) {
		memset(e, 0, sizeof *e);
		e->kind = KUBE_EFAIL;
		snprintf(e->msg, sizeof e->msg,
			"object has no apiVersion or kind");
		return NULL;
	}
	key = easprintf("%s/%s", av, kind);
	if (!(r = hm_get(a->resources, key))) {
		r = ecalloc(1, sizeof *r);
		if (kube_resolve(a->k, key, r, e) < 0) {
			free(r);
			free(key);
			return NULL;
		}
		hm_put(a->resources, key, r);
	}
	free(key);
	return r;
}

char *
ap_path(struct applier *a, const json_t *obj, int with_name,
	struct kube_error *e)
{
	struct kube_resource *r = resource(a, obj, e);
	const char *ns = meta(obj, "namespace"), *name = meta(obj, "name");

	if (!r)
		return NULL;
	if (with_name && !name) {
		e->kind = KUBE_EFAIL;
		snprintf(e->msg, sizeof e->msg,
			"%s %s: object has no metadata.name",
			sget(obj, "apiVersion"), sget(obj, "kind"));
		return NULL;
	}
	return kube_path(r, r->namespaced ? (ns ? ns : a->ns) : NULL,
		with_name ? name : NULL);
}

static json_t *
result(const char *op, const json_t *obj, const json_t *answer)
{
	char *ref = ap_ref(obj);
	json_t *rv = json_object_get(json_object_get(answer, "metadata"),
		"resourceVersion");
	json_t *res = json_pack("{s:s, s:s, s:s, s:O?}", "kind", "result", "op",
		op, "ref", ref, "resourceVersion", rv);

	free(ref);
	return res;
}

/* ---- what this field manager owns ------------------------------------ */

/* owned_keys adds to out (as key: null) every key of the map top.map
 * ("metadata" "labels") that manager applied to obj, as its managedFields
 * record it: entries of operation Apply on subresource sub ("" for the
 * object itself). */
static void
owned_keys(const json_t *obj, const char *manager, const char *sub,
	const char *top, const char *map, json_t *out)
{
	const json_t *mf = json_object_get(json_object_get(obj, "metadata"),
		"managedFields");
	const json_t *m, *fields;
	const char *key, *msub;
	char ftop[32], fmap[32];
	json_t *v;
	size_t i;

	snprintf(ftop, sizeof ftop, "f:%s", top);
	snprintf(fmap, sizeof fmap, "f:%s", map);
	json_array_foreach(mf, i, m) {
		msub = sget(m, "subresource");
		if (!sget(m, "manager") ||
			strcmp(sget(m, "manager"), manager) ||
			!sget(m, "operation") ||
			strcmp(sget(m, "operation"), "Apply") ||
			strcmp(msub ? msub : "", sub))
			continue;
		fields = json_object_get(json_object_get(json_object_get(m,
								 "fieldsV1"),
						 ftop),
			fmap);
		json_object_foreach((json_t *)fields, key, v)
			if (strncmp(key, "f:", 2) == 0)
				json_object_set_new(out, key + 2, json_null());
	}
}

/* stale_keys returns {"top":{"map":{key:null...}}, ...} for the maps
 * top.map[i] of current: every key manager applied (on subresource sub)
 * that current still has and obj does not; NULL when there is none. */
static json_t *
stale_keys(const json_t *current, const json_t *obj, const char *manager,
	const char *sub, const char *top, const char *const map[2])
{
	json_t *part = json_object(), *owned, *gone, *v;
	const json_t *have, *want;
	const char *key;
	size_t i;

	for (i = 0; i < 2; i++) {
		owned = json_object();
		gone = json_object();
		owned_keys(current, manager, sub, top, map[i], owned);
		have = json_object_get(json_object_get(current, top), map[i]);
		want = json_object_get(json_object_get(obj, top), map[i]);
		json_object_foreach(owned, key, v)
			if (json_object_get(have, key) &&
				!json_object_get(want, key))
				json_object_set_new(gone, key, json_null());
		if (json_object_size(gone))
			json_object_set(part, map[i], gone);
		json_decref(gone);
		json_decref(owned);
	}
	if (!json_object_size(part)) {
		json_decref(part);
		return NULL;
	}
	return json_pack("{s:o}", top, part);
}

/* owns_map: manager's Apply entries (subresource sub) in current hold
 * every key of obj's map top.map. */
static int
owns_map(const json_t *current, const json_t *obj, const char *manager,
	const char *sub, const char *top, const char *map)
{
	json_t *owned = json_object(), *v;
	const char *key;
	int all = 1;

	owned_keys(current, manager, sub, top, map, owned);
	json_object_foreach(json_object_get(json_object_get(obj, top), map),
		key, v)
		all &= json_object_get(owned, key) != NULL;
	json_decref(owned);
	return all;
}

int
ap_owns(const struct applier *a, const json_t *current, const json_t *obj)
{
	return owns_map(current, obj, a->manager, "", "metadata", "labels") &&
		owns_map(current, obj, a->manager, "", "metadata",
			"annotations") &&
		owns_map(current, obj, a->manager, "status", "status",
			"capacity") &&
		owns_map(current, obj, a->manager, "status", "status",
			"allocatable");
}

/* release merge-patches away the stale keys of one part (sub "" for
 * metadata, "status" for a Node's resources); appends a result record
 * op to out. Returns 0 or -1 with e filled. */
static int
release(struct applier *a, const char *path, const json_t *current,
	const json_t *obj, const char *sub, const char *top,
	const char *const map[2], const char *op, json_t *out,
	struct kube_error *e)
{
	json_t *patch = stale_keys(current, obj, a->manager, sub, top, map);
	char *p;
	json_t *ans;

	if (!patch)
		return 0;
	p = *sub ? easprintf("%s/%s", path, sub) : estrdup(path);
	ans = kube_patch(a->k, p, KUBE_PATCH_MERGE, patch, e);
	free(p);
	json_decref(patch);
	if (!ans)
		return -1;
	json_array_append_new(out, result(op, obj, ans));
	json_decref(ans);
	return 0;
}

json_t *
ap_release(struct applier *a, const json_t *current, const json_t *obj,
	struct kube_error *e)
{
	static const char *const meta[2] = {"labels", "annotations"};
	static const char *const res[2] = {"capacity", "allocatable"};
	char *path = ap_path(a, obj, 1, e);
	json_t *out = json_array();
	int rc;

	if (!path) {
		json_decref(out);
		return NULL;
	}
	rc = release(a, path, current, obj, "", "metadata", meta, "unlabel",
		out, e);
	if (rc == 0 && strcmp(sget(obj, "kind"), "Node") == 0)
		rc = release(a, path, current, obj, "status", "status", res,
			"unresource", out, e);
	free(path);
	if (rc < 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* apply_status applies obj's status to the status subresource with
 * server-side apply: only the fields given change. */
static json_t *
apply_status(struct applier *a, const char *path, const json_t *obj,
	struct kube_error *e)
{
	char *spath = easprintf("%s/status", path);
	json_t *body = json_pack("{s:O, s:O, s:{s:O, s:O*}, s:O}", "apiVersion",
		json_object_get(obj, "apiVersion"), "kind",
		json_object_get(obj, "kind"), "metadata", "name",
		json_object_get(json_object_get(obj, "metadata"), "name"),
		"namespace",
		json_object_get(json_object_get(obj, "metadata"), "namespace"),
		"status", json_object_get(obj, "status"));
	json_t *ans = kube_apply_meta(a->k, spath, body, a->manager, 1, e);

	json_decref(body);
	free(spath);
	return ans;
}

/* only_status: obj carries nothing to apply but its status (metadata
 * holds no more than names). */
static int
only_status(const json_t *obj)
{
	const json_t *m = json_object_get(obj, "metadata");
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v)
		if (strcmp(key, "apiVersion") && strcmp(key, "kind") &&
			strcmp(key, "metadata") && strcmp(key, "status"))
			return 0;
	json_object_foreach((json_t *)m, key, v)
		if (strcmp(key, "name") && strcmp(key, "namespace"))
			return 0;
	return 1;
}

static json_t *apply_named(struct applier *a, const json_t *obj,
	struct kube_error *e);

/* with_namespace returns obj naming its namespace (a new reference):
 * a copy given the applier's default when obj is namespaced and names
 * none, else obj itself. */
static json_t *
with_namespace(struct applier *a, const json_t *obj, struct kube_error *e)
{
	struct kube_resource *r = resource(a, obj, e);
	json_t *copy, *m;

	if (!r)
		return NULL;
	m = json_object_get(obj, "metadata");
	if (!r->namespaced || !json_is_object(m) ||
		json_object_get(m, "namespace"))
		return json_incref((json_t *)obj); /* as it is: no copy */
	copy = json_deep_copy(obj);
	json_object_set_new(json_object_get(copy, "metadata"), "namespace",
		json_string(a->ns));
	return copy;
}

json_t *
ap_apply(struct applier *a, const json_t *given, struct kube_error *e)
{
	json_t *obj = with_namespace(a, given, e);
	json_t *res;

	if (!obj)
		return NULL;
	res = apply_named(a, obj, e);
	json_decref(obj);
	return res;
}

/* apply_named applies obj, whose namespace is settled. */
static json_t *
apply_named(struct applier *a, const json_t *obj, struct kube_error *e)
{
	char *path = ap_path(a, obj, 1, e);
	const json_t *status = json_object_get(obj, "status");
	json_t *body, *ans = NULL, *res, *st;
	const char *op = "apply";

	if (!path)
		return NULL;
	if (!status || !only_status(obj)) {
		/* all but the status, which goes to its subresource: a
		 * shallow copy shares the rest */
		body = status ? json_copy((json_t *)obj)
			      : json_incref((json_t *)obj);
		json_object_del(body, "status");
		ans = kube_apply_meta(a->k, path, body, a->manager, 1, e);
		json_decref(body);
		if (!ans)
			goto out;
	}
	if (status) {
		op = ans ? "apply+status" : "status";
		st = apply_status(a, path, obj, e);
		json_decref(ans);
		ans = st;
	}
out:
	free(path);
	if (!ans)
		return NULL;
	res = result(op, obj, ans);
	json_decref(ans);
	return res;
}

json_t *
ap_delete(struct applier *a, const json_t *obj, struct kube_error *e)
{
	char *path = ap_path(a, obj, 1, e);
	json_t *ans, *res;

	if (!path)
		return NULL;
	ans = kube_delete(a->k, path, meta(obj, "uid"), NULL, e);
	free(path);
	if (!ans && e->status == 404)
		return result("absent", obj, NULL);
	if (!ans)
		return NULL;
	res = result("delete", obj, NULL);
	json_decref(ans);
	return res;
}
