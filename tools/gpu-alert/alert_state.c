/* alert_state: gpu-alert's told health per device in a ConfigMap (see
 * alert_state.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alert_state.h"
#include "err.h"
#include "health.h"
#include "hmap.h"

/* Writes that cross another's are made again this often at most. */
#define WRITE_TRIES 3
/* The longest ConfigMap data key. */
#define KEY_MAX 253

struct alert_state {
	struct kube *k;
	char *name; /* "ns/name", for messages */
	char *path; /* the object's API path */
	char *ns, *cm;
	char *rv;        /* resourceVersion last seen; NULL: not known */
	int exists;      /* the ConfigMap was there when last seen */
	struct hm *devs; /* "NODE_UUID" -> unused value, devices stored */
};

/* key_ok: only the characters of a ConfigMap key, and no "_". */
static int
key_part_ok(const char *s)
{
	return *s &&
		strspn(s,
			"abcdefghijklmnopqrstuvwxyz"
			"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") == strlen(s);
}

/* dev_key returns the data key of node + uuid, or NULL when they do not
 * make one. */
static char *
dev_key(const char *node, const char *uuid)
{
	if (!node || !uuid || !key_part_ok(node) || !key_part_ok(uuid) ||
		strlen(node) + strlen(uuid) + 1 > KEY_MAX)
		return NULL;
	return easprintf("%s_%s", node, uuid);
}

static void
set_rv(struct alert_state *s, const json_t *obj)
{
	const char *rv = json_string_value(
		json_object_get(json_object_get(obj, "metadata"),
			"resourceVersion"));

	free(s->rv);
	s->rv = rv ? estrdup(rv) : NULL;
	s->exists = 1;
}

/* entry_ok says whether key = val is one of ours. */
static int
entry_ok(const char *key, const json_t *val)
{
	const char *sep = strchr(key, '_');
	json_t *v;
	int ok;

	if (!sep || strchr(sep + 1, '_') || !json_is_string(val))
		return 0;
	v = json_loads(json_string_value(val), 0, NULL);
	ok = json_is_object(v) && json_object_size(v) == 2 &&
		json_is_string(json_object_get(v, "since")) &&
		json_string_value(json_object_get(v, "state")) &&
		strcmp(json_string_value(json_object_get(v, "state")),
			"unhealthy") == 0;
	json_decref(v);
	if (ok) {
		char *node = strndup(key, (size_t)(sep - key));
		char *k2 = node ? dev_key(node, sep + 1) : NULL;

		ok = k2 != NULL;
		free(node);
		free(k2);
	}
	return ok;
}

/* load takes the devices of ConfigMap obj, or none if anything in it is
 * not ours. */
static void
load(struct alert_state *s, const json_t *obj)
{
	const json_t *data = json_object_get(obj, "data"), *val;
	const char *key;

	if (json_object_get(obj, "binaryData")) {
		err_warn("configmap %s: binaryData: not gpu-alert's state; "
			 "starting without it",
			s->name);
		return;
	}
	if (data && !json_is_object(data)) {
		err_warn("configmap %s: data: not an object; starting "
			 "without it",
			s->name);
		return;
	}
	json_object_foreach((json_t *)data, key, val) {
		if (!entry_ok(key, val)) {
			err_warn("configmap %s: key %s: not gpu-alert's state "
				 "of a device; starting without it",
				s->name, key);
			hm_free(s->devs);
			s->devs = hm_new(free);
			return;
		}
		hm_put(s->devs, key, estrdup(""));
	}
}

/* refresh reads the ConfigMap anew: 0 (s->exists, s->rv set), or -1 with
 * e filled. */
static int
refresh(struct alert_state *s, json_t **obj, struct kube_error *e)
{
	json_t *o = kube_get(s->k, s->path, e);

	if (obj)
		*obj = o;
	if (o) {
		set_rv(s, o);
		if (!obj)
			json_decref(o);
		return 0;
	}
	if (e->status == 404) {
		s->exists = 0;
		free(s->rv);
		s->rv = NULL;
		return 0;
	}
	return -1;
}

struct alert_state *
ast_open(struct kube *k, const char *ns, const char *name)
{
	struct alert_state *s = ecalloc(1, sizeof *s);
	struct kube_error e;
	json_t *obj = NULL;

	s->k = k;
	s->ns = estrdup(ns);
	s->cm = estrdup(name);
	s->name = easprintf("%s/%s", ns, name);
	s->path = easprintf("/api/v1/namespaces/%s/configmaps/%s", ns, name);
	s->devs = hm_new(free);
	if (refresh(s, &obj, &e) < 0)
		err_warn("configmap %s: %s; starting without it", s->name,
			e.msg);
	else if (obj)
		load(s, obj);
	json_decref(obj);
	return s;
}

void
ast_free(struct alert_state *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->path);
	free(s->ns);
	free(s->cm);
	free(s->rv);
	hm_free(s->devs);
	free(s);
}

void
ast_seed(const struct alert_state *s, struct alert_tracker *t)
{
	const char *key, *sep;
	size_t pos = 0;
	void *val;
	char *node;

	while (hm_next(s->devs, &pos, &key, &val)) {
		sep = strchr(key, '_');
		node = strndup(key, (size_t)(sep - key));
		if (!node)
			err_die(HAZ_FAIL, "out of memory");
		at_prior(t, node, sep + 1, HEALTH_UNHEALTHY);
		free(node);
	}
}

/* write sets data key to val (NULL: removes it) in one request: a merge
 * patch on the resourceVersion last seen, or a create when the
 * ConfigMap is missing. Returns the answer (owned), or NULL with e. */
static json_t *
write_once(struct alert_state *s, const char *key, json_t *val,
	struct kube_error *e)
{
	json_t *body, *ans;
	char *coll;

	if (!s->exists) {
		body = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:O}}",
			"apiVersion", "v1", "kind", "ConfigMap", "metadata",
			"name", s->cm, "namespace", s->ns, "data", key, val);
		coll = easprintf("/api/v1/namespaces/%s/configmaps", s->ns);
		ans = kube_create(s->k, coll, body, e);
		free(coll);
	} else {
		body = json_pack("{s:{s:s?}, s:{s:O}}", "metadata",
			"resourceVersion", s->rv, "data", key, val);
		ans = kube_patch(s->k, s->path, KUBE_PATCH_MERGE, body, e);
	}
	json_decref(body);
	return ans;
}

/* save makes data key val (NULL: removed), reading the ConfigMap again
 * when the write crossed another's. */
static void
save(struct alert_state *s, const char *key, const char *val)
{
	json_t *v = val ? json_string(val) : json_null(), *ans = NULL;
	struct kube_error e = {0};
	int try;

	for (try = 1; try <= WRITE_TRIES; try++) {
		if (!val && !s->exists)
			break;
		if ((ans = write_once(s, key, v, &e)))
			break;
		/* 409: written since we read it (or created meanwhile);
		 * 404: deleted since */
		if ((e.status != 409 && e.status != 404) ||
			refresh(s, NULL, &e) < 0)
			break;
	}
	if (ans)
		set_rv(s, ans);
	else if (val || s->exists)
		err_warn("configmap %s: key %s not %s: %s", s->name, key,
			val ? "saved" : "removed", e.msg);
	json_decref(ans);
	json_decref(v);
}

void
ast_note(struct alert_state *s, const struct alert *a)
{
	char *key, *val, since[32];
	time_t now = time(NULL);
	struct tm tm;

	if (a->event != ALERT_UNHEALTHY && a->event != ALERT_RECOVERED)
		return;
	if (!(key = dev_key(a->node, a->uuid))) {
		err_warn("configmap %s: node %s device %s: not kept: the names "
			 "make no ConfigMap key",
			s->name, a->node, a->uuid);
		return;
	}
	if (a->event == ALERT_RECOVERED) {
		if (hm_del(s->devs, key))
			save(s, key, NULL);
	} else {
		gmtime_r(&now, &tm);
		strftime(since, sizeof since, "%Y-%m-%dT%H:%M:%SZ", &tm);
		val = easprintf("{\"state\":\"unhealthy\",\"since\":\"%s\"}",
			since);
		hm_put(s->devs, key, estrdup(""));
		save(s, key, val);
		free(val);
	}
	free(key);
}
