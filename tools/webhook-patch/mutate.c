/* mutate: find the pod a review is about, run the policy steps on a copy
 * of the object, and answer with the difference as a JSON Patch. */
#include <stdint.h>
#include <string.h>

#include "err.h"
#include "jsonpatch.h"
#include "mutate_int.h"

json_t *
mut_child(json_t *o, const char *key)
{
	json_t *c = json_object_get(o, key);

	if (!json_is_object(c)) {
		c = json_object();
		json_object_set_new(o, key, c);
	}
	return c;
}

const char *
mut_annotation(const json_t *pod, const char *key)
{
	return json_string_value(
		json_object_get(json_object_get(json_object_get(pod,
							"metadata"),
					"annotations"),
			key));
}

void
mut_set_annotation(json_t *pod, const char *key, const char *value)
{
	json_object_set_new(mut_child(mut_child(pod, "metadata"),
				    "annotations"),
		key, json_string(value));
}

void
mut_set_resource(json_t *c, const char *which, const char *res,
	const char *value)
{
	json_object_set_new(mut_child(mut_child(c, "resources"), which), res,
		json_string(value));
}

/* count reads a replica count: missing is 1, anything odd is 0 or 1,
 * and one beyond INT32_MAX (which the API server refuses: replicas and
 * parallelism are 32-bit) counts as INT32_MAX. */
static long
count(const json_t *spec, const char *key)
{
	json_t *v = json_object_get(spec, key);
	json_int_t n;

	if (!v || !json_is_integer(v))
		return 1;
	n = json_integer_value(v);
	return n <= 0 ? 0 : n > INT32_MAX ? INT32_MAX : (long)n;
}

/* controlled says whether obj has a controlling owner. */
static int
controlled(const json_t *obj)
{
	json_t *refs = json_object_get(json_object_get(obj, "metadata"),
		       "ownerReferences"),
	       *ref;
	size_t i;

	json_array_foreach(refs, i, ref) {
		if (json_is_true(json_object_get(ref, "controller")))
			return 1;
	}
	return 0;
}

/* own replaces o[key], when it is an object or an array, by a copy one
 * level deep (its members shared), and returns it: the policy may then
 * change that level without touching the review's object. */
static json_t *
own(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (json_is_object(v) || json_is_array(v)) {
		v = json_copy(v);
		json_object_set_new(o, key, v);
	}
	return v;
}

/* own_containers owns what the policy edits in a list of containers:
 * the list, each container, its resources, requests and limits. */
static void
own_containers(json_t *spec, const char *key)
{
	json_t *list = own(spec, key), *c, *res;
	size_t i;

	json_array_foreach(list, i, c) {
		if (!json_is_object(c))
			continue;
		json_array_set_new(list, i, c = json_copy(c));
		if (json_is_object(res = own(c, "resources"))) {
			own(res, "requests");
			own(res, "limits");
		}
	}
}

/* find_target locates the pod of copy (the working copy of the review's
 * object) by group and kind, owning each level on the way down and then
 * what the policy changes in the pod: its annotations, runtimeClassName,
 * schedulerName, schedulingGates and the resources of its containers.
 * All else stays shared with the review's object, and jp_diff passes
 * over shared members at once, so a large object costs little more than
 * a small one. Returns 0, or -1 for an object left alone. */
static int
find_target(json_t *copy, const char *group, const char *kind, struct target *t)
{
	json_t *spec;

	memset(t, 0, sizeof *t);
	t->replicas = 1;
	if (!strcmp(group, "") && !strcmp(kind, "Pod")) {
		t->pod = copy;
		t->is_pod = 1;
	} else if (controlled(copy)) {
		return -1;
	} else if ((!strcmp(group, "apps") &&
			   (!strcmp(kind, "Deployment") ||
				   !strcmp(kind, "StatefulSet") ||
				   !strcmp(kind, "ReplicaSet"))) ||
		(!strcmp(group, "") &&
			!strcmp(kind, "ReplicationController"))) {
		spec = own(copy, "spec");
		t->pod = own(spec, "template");
		t->replicas = count(spec, "replicas");
	} else if (!strcmp(group, "apps") && !strcmp(kind, "DaemonSet")) {
		t->pod = own(own(copy, "spec"), "template");
	} else if (!strcmp(group, "batch") && !strcmp(kind, "Job")) {
		spec = own(copy, "spec");
		t->pod = own(spec, "template");
		t->replicas = count(spec, "parallelism");
	} else if (!strcmp(group, "batch") && !strcmp(kind, "CronJob")) {
		spec = own(own(own(copy, "spec"), "jobTemplate"), "spec");
		t->pod = own(spec, "template");
		t->replicas = count(spec, "parallelism");
	}
	if (!json_is_object(t->pod) ||
		!json_is_object(t->spec = own(t->pod, "spec")))
		return -1;
	own(own(t->pod, "metadata"), "annotations");
	own(t->spec, "schedulingGates");
	own_containers(t->spec, "containers");
	own_containers(t->spec, "initContainers");
	return 0;
}

void
mutate_decide(const struct mutate_opts *o, struct avail *a,
	const struct adm_request *r, struct adm_verdict *v,
	struct mutate_note *note)
{
	struct mutate_note scratch;
	struct target t;
	json_t *copy;
	int create = !strcmp(r->operation, "CREATE");

	if (!note)
		note = &scratch;
	memset(note, 0, sizeof *note);
	if (*r->subresource || !r->object ||
		(!create && strcmp(r->operation, "UPDATE")))
		return;
	copy = json_copy(r->object);
	if (find_target(copy, r->group, r->kind, &t) < 0 ||
		(t.is_pod && !create)) {
		json_decref(copy);
		return;
	}
	t.r = r;
	if (!mutate_rc(o, a, &t, v, note) && create)
		mutate_mig(o, a, &t, v, note);
	if (v->allowed && create)
		mutate_sched(o, &t, v, note);
	if (v->allowed) {
		v->patch = jp_diff(r->object, copy);
		if (!json_array_size(v->patch)) {
			json_decref(v->patch);
			v->patch = NULL;
		}
	}
	json_decref(copy);
}
