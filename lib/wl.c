/* wl: GPUWorkloads checked, turned into requests, Jobs and claim
 * templates (see wl.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "mig.h"
#include "wl.h"

/* ---- reading members ---- */

/* at returns the member of v at the path of keys (a NULL-terminated
 * list), or NULL when a step is missing or not an object. */
static const json_t *
at(const json_t *v, ...)
{
	va_list ap;
	const char *k;

	va_start(ap, v);
	while (v && (k = va_arg(ap, const char *)))
		v = json_object_get(v, k);
	va_end(ap);
	return v;
}

/* given: v is there and neither null nor false (jq's truth, which its
 * "//" tests). */
static int
given(const json_t *v)
{
	return v && !json_is_null(v) && !json_is_false(v);
}

/* there: v is there and not null. */
static int
there(const json_t *v)
{
	return v && !json_is_null(v);
}

/* text returns v's string, "" when v is no string. */
static const char *
text(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "";
}

/* or is jq's a // b. */
static const json_t * or (const json_t *a, const json_t *b)
{
	return given(a) ? a : b;
}

/* whole reads v, a whole number from lo to hi (an integer, or a real
 * with no fraction), into *out. Returns 0 or -1. */
static int
whole(const json_t *v, double lo, double hi, long long *out)
{
	double d;

	if (json_is_integer(v)) {
		if ((double)json_integer_value(v) < lo ||
			(double)json_integer_value(v) > hi)
			return -1;
		*out = json_integer_value(v);
		return 0;
	}
	if (!json_is_real(v))
		return -1;
	d = json_real_value(v);
	if (!(d >= lo && d <= hi) || d != floor(d))
		return -1;
	*out = (long long)d;
	return 0;
}

static const json_t *
spec(const json_t *w, const char *k)
{
	return at(w, "spec", k, NULL);
}

static const json_t *
req(const json_t *w, const char *k)
{
	return at(w, "spec", "gpuRequirements", k, NULL);
}

static const json_t *
pod(const json_t *w, const char *k)
{
	return at(w, "spec", "podTemplate", "spec", k, NULL);
}

/* count is the GPU count w states: gpuCount // gpuRequirements.gpuCount,
 * NULL when neither. */
static const json_t *
count(const json_t *w)
{
	const json_t *c = or (spec(w, "gpuCount"), req(w, "gpuCount"));

	return given(c) ? c : NULL;
}

static const json_t *
memory(const json_t *w)
{
	return or (req(w, "minGPUMemory"), spec(w, "gpuMemoryRequired"));
}

/* ---- checks ---- */

/* cut returns the length of s's first max bytes or fewer, ending where a
 * UTF-8 character starts, so that a message quoting s stays valid text. */
static int
cut(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return (int)n;
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return (int)n;
}

/* said returns a malloc'd prefix followed by v as compact JSON ("null"
 * when v is NULL), cut to WL_SHOW_MAX bytes plus "...". */
static char *
said(const char *prefix, const json_t *v)
{
	char *s = v ? jb_dumps(v) : estrdup("null"), *m;
	int n = cut(s, WL_SHOW_MAX);

	m = easprintf("%s%.*s%s", prefix, n, s, s[n] ? "..." : "");
	free(s);
	return m;
}

/* wrong returns "FIELD must be WHAT, got V". */
static char *
wrong(const char *field, const char *what, const json_t *v)
{
	char *prefix = easprintf("%s must be %s, got ", field, what), *m;

	m = said(prefix, v);
	free(prefix);
	return m;
}

static int
is_nonempty_string(const json_t *v)
{
	return json_is_string(v) && json_string_length(v) > 0;
}

static int
is_strings_object(const json_t *v)
{
	const char *k;
	json_t *m;

	if (!json_is_object(v))
		return 0;
	json_object_foreach((json_t *)v, k, m) {
		if (!json_is_string(m))
			return 0;
	}
	return 1;
}

static int
is_objects_array(const json_t *v)
{
	size_t i;
	json_t *m;

	if (!json_is_array(v))
		return 0;
	json_array_foreach(v, i, m) {
		if (!json_is_object(m))
			return 0;
	}
	return 1;
}

static int
is_strings_array(const json_t *v)
{
	size_t i;
	json_t *m;

	if (!json_is_array(v))
		return 0;
	json_array_foreach(v, i, m) {
		if (!json_is_string(m))
			return 0;
	}
	return 1;
}

static int
is_profile(const json_t *v)
{
	struct mig_profile p;

	return json_is_string(v) && mig_parse(json_string_value(v), &p) == 0;
}

/* prio reads a priority: a whole number, a string of one, or a word. */
static int
prio(const json_t *v, long long *out)
{
	static const struct {
		const char *word;
		int value;
	} words[] = {{"low", 1}, {"normal", 5}, {"medium", 5}, {"high", 10},
		{"critical", 100}};
	const char *s, *p;
	size_t i;

	if (!given(v)) {
		*out = 0;
		return 0;
	}
	if (json_is_number(v))
		return whole(v, -1e15, 1e15, out);
	if (!json_is_string(v))
		return -1;
	s = json_string_value(v);
	for (i = 0; i < sizeof words / sizeof *words; i++) {
		if (strcasecmp(s, words[i].word) == 0) {
			*out = words[i].value;
			return 0;
		}
	}
	p = s + (*s == '-');
	if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 15)
		return -1;
	*out = strtoll(s, NULL, 10);
	return 0;
}

/* strategies: the spellings the former controller accepted (sched-pick
 * reads more: any case, underscores anywhere). */
static const char *const strategies[] = {"least_utilized", "leastUtilized",
	"least_loaded", "leastLoaded", "best_fit", "bestFit", "binpack",
	"spread", "binpack_gpu", "spread_gpu", "priority", "round_robin",
	"roundRobin", "random", "cost_optimized", "costOptimized"};

static int
is_strategy(const json_t *v)
{
	size_t i;

	for (i = 0;
		json_is_string(v) && i < sizeof strategies / sizeof *strategies;
		i++)
		if (strcmp(json_string_value(v), strategies[i]) == 0)
			return 1;
	return 0;
}

static char *
check_metadata(const json_t *w)
{
	static const char *const keys[] = {"name", "namespace", "uid"};
	char field[32];
	size_t i;

	for (i = 0; i < 3; i++) {
		if (!is_nonempty_string(at(w, "metadata", keys[i], NULL))) {
			snprintf(field, sizeof field, "metadata.%s", keys[i]);
			return wrong(field, "a non-empty string",
				at(w, "metadata", keys[i], NULL));
		}
	}
	return NULL;
}

/* check_objects: the members whose members are read must be objects. */
static char *
check_objects(const json_t *w)
{
	static const char *const paths[][6] = {
		{"spec"},
		{"spec", "gpuRequirements"},
		{"spec", "retryPolicy"},
		{"spec", "podTemplate"},
		{"spec", "podTemplate", "metadata"},
		{"spec", "podTemplate", "spec"},
		{"spec", "podTemplate", "spec", "affinity"},
		{"spec", "podTemplate", "spec", "affinity", "nodeAffinity"},
		{"spec", "podTemplate", "spec", "affinity", "nodeAffinity",
			"requiredDuringSchedulingIgnoredDuringExecution"},
	};
	char field[160];
	const json_t *v;
	size_t i, j;

	for (i = 0; i < sizeof paths / sizeof *paths; i++) {
		v = w;
		field[0] = '\0';
		for (j = 0; j < 6 && paths[i][j]; j++) {
			v = json_object_get(v, paths[i][j]);
			snprintf(field + strlen(field),
				sizeof field - strlen(field), "%s%s",
				j ? "." : "", paths[i][j]);
		}
		if (there(v) && !json_is_object(v))
			return wrong(field, "an object", v);
	}
	return NULL;
}

/* check_plan: the former controller's checks, in its order and words. */
static char *
check_plan(const json_t *w)
{
	const json_t *g = count(w), *m = memory(w), *v;
	long long n;

	if (g && whole(g, 1, WL_MAX_GPUS, &n) < 0)
		return said(
			"spec.gpuCount must be a whole number from 1 to 64, "
			"got ",
			g);
	if (given(m) && whole(m, 0, (double)(1LL << 40), &n) < 0)
		return said("spec.gpuMemoryRequired must be a number of MiB, "
			    "0 or more, got ",
			m);
	if (prio(spec(w, "priority"), &n) < 0)
		return said("spec.priority must be a number or low, medium, "
			    "high, critical, got ",
			spec(w, "priority"));
	v = spec(w, "schedulingStrategy");
	if (there(v) && !is_strategy(v))
		return said("spec.schedulingStrategy: unknown strategy ", v);
	v = req(w, "migProfile");
	if (given(v) && !is_profile(v))
		return said("spec.gpuRequirements.migProfile: not a MIG "
			    "profile: ",
			v);
	return NULL;
}

static char *
check_ids(const json_t *w)
{
	const json_t *ids = req(w, "gpuIds"), *g = count(w);
	long long a, b;
	size_t i, j, n;

	if (!given(ids))
		return NULL;
	n = json_array_size(ids);
	for (i = 0; i < n; i++)
		if (whole(json_array_get(ids, i), 0, 1 << 20, &a) < 0)
			break;
	if (!json_is_array(ids) || n < 1 || n > WL_MAX_GPUS || i < n)
		return wrong("spec.gpuRequirements.gpuIds",
			"an array of 1 to 64 GPU indexes", ids);
	for (i = 0; !given(req(w, "migProfile")) && i < n; i++) {
		whole(json_array_get(ids, i), 0, 1 << 20, &a);
		for (j = 0; j < i; j++) {
			whole(json_array_get(ids, j), 0, 1 << 20, &b);
			if (a == b)
				return easprintf("spec.gpuRequirements.gpuIds "
						 "names GPU %lld twice",
					a);
		}
	}
	if (g && (size_t)wl_gpus(w) != n)
		return easprintf("spec.gpuRequirements.gpuIds names %zu GPU%s "
				 "but %s is %d",
			n, n == 1 ? "" : "s",
			given(spec(w, "gpuCount"))
				? "spec.gpuCount"
				: "spec.gpuRequirements.gpuCount",
			wl_gpus(w));
	return NULL;
}

static char *
check_request(const json_t *w)
{
	const json_t *v;
	size_t i;

	v = req(w, "migFallback");
	if (given(v) &&
		(!json_is_array(v) || json_array_size(v) > WL_MAX_FALLBACK))
		return wrong("spec.gpuRequirements.migFallback",
			"an array of up to 8 MIG profiles", v);
	for (i = 0; given(v) && i < json_array_size(v); i++)
		if (!is_profile(json_array_get(v, i)))
			return said("spec.gpuRequirements.migFallback: not a "
				    "MIG profile: ",
				json_array_get(v, i));
	v = req(w, "exclusiveAccess");
	if (there(v) && !json_is_boolean(v))
		return wrong("spec.gpuRequirements.exclusiveAccess",
			"true or false", v);
	v = spec(w, "preferredNode");
	if (given(v) && !json_is_string(v))
		return wrong("spec.preferredNode", "a node name", v);
	v = spec(w, "image");
	if (given(v) && !json_is_string(v))
		return wrong("spec.image", "a string", v);
	v = spec(w, "modelName");
	if (given(v) && !json_is_string(v))
		return wrong("spec.modelName", "a string", v);
	v = spec(w, "command");
	if (given(v) && !is_strings_array(v))
		return wrong("spec.command", "an array of strings", v);
	return NULL;
}

static char *
check_selectors(const json_t *w)
{
	const json_t *a = spec(w, "nodeSelector"), *b = pod(w, "nodeSelector");
	const json_t *va;
	const char *k;
	json_t *vb;

	if (there(a) && !is_strings_object(a))
		return wrong("spec.nodeSelector", "an object of strings", a);
	if (there(b) && !is_strings_object(b))
		return wrong("spec.podTemplate.spec.nodeSelector",
			"an object of strings", b);
	if (!there(a) || !there(b))
		return NULL;
	json_object_foreach((json_t *)b, k, vb) {
		va = json_object_get(a, k);
		if (va &&
			strcmp(json_string_value(va), json_string_value(vb)) !=
				0)
			return easprintf("spec.nodeSelector %.*s=%.*s and "
					 "spec.podTemplate.spec.nodeSelector "
					 "%.*s=%.*s disagree",
				cut(k, WL_SHOW_MAX), k,
				cut(json_string_value(va), WL_SHOW_MAX),
				json_string_value(va), cut(k, WL_SHOW_MAX), k,
				cut(json_string_value(vb), WL_SHOW_MAX),
				json_string_value(vb));
	}
	return NULL;
}

static char *
check_template(const json_t *w)
{
	static const char *const arrays[] = {"containers", "initContainers",
		"tolerations"};
	char field[80];
	const json_t *v, *c;
	size_t i;

	v = at(w, "spec", "podTemplate", "metadata", "labels", NULL);
	if (there(v) && !is_strings_object(v))
		return wrong("spec.podTemplate.metadata.labels",
			"an object of strings", v);
	v = at(w, "spec", "podTemplate", "metadata", "annotations", NULL);
	if (there(v) && !is_strings_object(v))
		return wrong("spec.podTemplate.metadata.annotations",
			"an object of strings", v);
	for (i = 0; i < sizeof arrays / sizeof *arrays; i++) {
		v = pod(w, arrays[i]);
		snprintf(field, sizeof field, "spec.podTemplate.spec.%s",
			arrays[i]);
		if (there(v) && !is_objects_array(v))
			return wrong(field, "an array of objects", v);
	}
	v = at(w, "spec", "podTemplate", "spec", "affinity", "nodeAffinity",
		"requiredDuringSchedulingIgnoredDuringExecution",
		"nodeSelectorTerms", NULL);
	if (there(v) && !is_objects_array(v))
		return wrong("spec.podTemplate.spec.affinity.nodeAffinity."
			     "requiredDuringSchedulingIgnoredDuringExecution."
			     "nodeSelectorTerms",
			"an array of objects", v);
	c = json_array_get(pod(w, "containers"), 0);
	v = json_object_get(c, "env");
	if (there(v) && !is_objects_array(v))
		return wrong("spec.podTemplate.spec.containers[0].env",
			"an array of objects", v);
	v = json_object_get(c, "resources");
	if (there(v) && !json_is_object(v))
		return wrong("spec.podTemplate.spec.containers[0].resources",
			"an object", v);
	v = json_object_get(json_object_get(c, "resources"), "limits");
	if (there(v) && !json_is_object(v))
		return wrong("spec.podTemplate.spec.containers[0].resources."
			     "limits",
			"an object", v);
	v = json_object_get(json_object_get(c, "resources"), "requests");
	if (there(v) && !json_is_object(v))
		return wrong("spec.podTemplate.spec.containers[0].resources."
			     "requests",
			"an object", v);
	return NULL;
}

static char *
check_retry(const json_t *w)
{
	const json_t *v;
	long long n;

	v = at(w, "spec", "retryPolicy", "maxRetries", NULL);
	if (given(v) && whole(v, 0, WL_MAX_RETRIES, &n) < 0)
		return wrong("spec.retryPolicy.maxRetries",
			"a whole number from 0 to 1000", v);
	v = at(w, "spec", "retryPolicy", "backoffSeconds", NULL);
	if (given(v) &&
		(!json_is_number(v) || json_number_value(v) < 0 ||
			json_number_value(v) > WL_MAX_BACKOFF))
		return wrong("spec.retryPolicy.backoffSeconds",
			"a number of seconds from 0 to 86400", v);
	return NULL;
}

char *
wl_problem(const json_t *w)
{
	char *(*const checks[])(const json_t *) = {check_metadata,
		check_objects, check_plan, check_ids, check_request,
		check_selectors, check_template, check_retry};
	char *m;
	size_t i;

	if (!json_is_object(w))
		return wrong("a GPUWorkload", "an object", w);
	for (i = 0; i < sizeof checks / sizeof *checks; i++)
		if ((m = checks[i](w)))
			return m;
	return NULL;
}

/* ---- numbers ---- */

long long
wl_priority(const json_t *w)
{
	long long n;

	return prio(spec(w, "priority"), &n) < 0 ? 0 : n;
}

int
wl_gpus(const json_t *w)
{
	const json_t *ids = req(w, "gpuIds");
	long long n;

	if (count(w))
		return whole(count(w), 1, WL_MAX_GPUS, &n) < 0 ? 1 : (int)n;
	if (given(ids) && json_array_size(ids) > 0 &&
		json_array_size(ids) <= WL_MAX_GPUS)
		return (int)json_array_size(ids);
	return 1;
}

int
wl_max_retries(const json_t *w)
{
	const json_t *v = at(w, "spec", "retryPolicy", "maxRetries", NULL);
	long long n;

	if (!given(v) || whole(v, 0, WL_MAX_RETRIES, &n) < 0)
		return 3;
	return (int)n;
}

double
wl_backoff(const json_t *w)
{
	const json_t *v = at(w, "spec", "retryPolicy", "backoffSeconds", NULL);

	if (!given(v) || !json_is_number(v) || json_number_value(v) < 0 ||
		json_number_value(v) > WL_MAX_BACKOFF)
		return 10;
	return json_number_value(v);
}

/* ---- the request ---- */

/* selector appends the members of sel that are strings and not in
 * skip (may be NULL), nor named but; *first says none was written yet. */
static void
selector(struct jb *out, const json_t *sel, const json_t *skip, const char *but,
	int *first)
{
	const char *k;
	json_t *v;

	if (!json_is_object(sel))
		return;
	json_object_foreach((json_t *)sel, k, v) {
		if (!json_is_string(v) || json_object_get(skip, k) ||
			(but && strcmp(k, but) == 0))
			continue;
		jb_raw(out, *first ? "" : ",");
		jb_str(out, k);
		jb_raw(out, ":");
		jb_json(out, v);
		*first = 0;
	}
}

static void
member(struct jb *out, const char *k)
{
	jb_raw(out, ",");
	jb_str(out, k);
	jb_raw(out, ":");
}

/* canon appends the canonical name of profile v to list unless it is
 * no profile, is there already, or the list is full. */
static void
canon(json_t *list, const json_t *v)
{
	struct mig_profile p;
	char name[32];
	size_t i;

	if (!json_is_string(v) || mig_parse(json_string_value(v), &p) < 0 ||
		json_array_size(list) >= WL_MAX_SUBREQUESTS)
		return;
	mig_format(&p, name, sizeof name);
	for (i = 0; i < json_array_size(list); i++)
		if (!strcmp(json_string_value(json_array_get(list, i)), name))
			return;
	json_array_append_new(list, json_string(name));
}

json_t *
wl_chain(const json_t *w, const struct migchain *chains)
{
	const json_t *ask = req(w, "migProfile"), *fb = req(w, "migFallback");
	const char *const *next;
	json_t *list = json_array(), *v;
	size_t i, n;

	canon(list, ask);
	if (!json_array_size(list))
		return list;
	if (json_is_array(fb)) {
		json_array_foreach(fb, i, v)
			canon(list, v);
		return list;
	}
	n = chains ? migchain_after(chains,
			     json_string_value(json_array_get(list, 0)), &next)
		   : 0;
	for (i = 0; i < n; i++) {
		v = json_string(next[i]);
		canon(list, v);
		json_decref(v);
	}
	return list;
}

/* fallbacks writes the profiles of w's chain after the first. */
static void
fallbacks(struct jb *out, const json_t *w, const struct migchain *chains)
{
	json_t *list = wl_chain(w, chains);

	if (json_array_size(list))
		json_array_remove(list, 0);
	jb_json(out, list);
	json_decref(list);
}

/* request writes w's request; with dra set, as wl_request_dra says. */
static void
request(const json_t *w, const char *extra_key, int dra,
	const struct migchain *chains, struct jb *out)
{
	const json_t *v, *a = spec(w, "nodeSelector"),
			 *b = pod(w, "nodeSelector");
	long long n;
	size_t i;
	int first = 1;
	char *id;

	jb_raw(out, "{\"kind\":\"request\",\"id\":");
	id = easprintf("%s/%s", text(at(w, "metadata", "namespace", NULL)),
		text(at(w, "metadata", "name", NULL)));
	jb_str(out, id);
	free(id);
	member(out, "gpus");
	jb_int(out, wl_gpus(w));
	member(out, "min_memory_mib");
	v = memory(w);
	jb_int(out,
		given(v) && whole(v, 0, (double)(1LL << 40), &n) == 0 ? n : 0);
	member(out, "exclusive");
	v = req(w, "exclusiveAccess");
	jb_raw(out, json_is_false(v) && !dra ? "false" : "true");
	member(out, "priority");
	jb_int(out, wl_priority(w));
	v = at(w, "metadata", "creationTimestamp", NULL);
	if (json_is_string(v)) {
		member(out, "created");
		jb_json(out, v);
	}
	v = spec(w, "schedulingStrategy");
	if (json_is_string(v)) {
		member(out, "strategy");
		jb_json(out, v);
	}
	v = req(w, "gpuIds");
	if (given(v) && json_is_array(v)) {
		member(out, "gpu_ids");
		jb_raw(out, "[");
		for (i = 0; i < json_array_size(v); i++) {
			jb_raw(out, i ? "," : "");
			if (whole(json_array_get(v, i), 0, 1 << 20, &n) < 0)
				n = -1;
			jb_int(out, n);
		}
		jb_raw(out, "]");
	}
	v = req(w, "migProfile");
	if (json_is_string(v)) {
		member(out, "mig_profile");
		jb_json(out, v);
		member(out, "mig_fallback");
		v = req(w, "migFallback");
		if (dra)
			fallbacks(out, w, chains);
		else if (json_is_array(v))
			jb_json(out, v);
		else
			jb_raw(out, "[]");
	}
	v = spec(w, "preferredNode");
	if (json_is_string(v)) {
		member(out, "prefer_node");
		jb_json(out, v);
	}
	if (json_object_size(a) + json_object_size(b) > 0 || extra_key) {
		member(out, "node_selector");
		jb_raw(out, "{");
		selector(out, a, NULL, extra_key, &first);
		selector(out, b, json_is_object(a) ? a : NULL, extra_key,
			&first);
		if (extra_key) {
			jb_raw(out, first ? "" : ",");
			jb_str(out, extra_key);
			jb_raw(out, ":\"true\"");
		}
		jb_raw(out, "}");
	}
	jb_raw(out, "}");
}

void
wl_request(const json_t *w, const char *extra_key, struct jb *out)
{
	request(w, extra_key, 0, NULL, out);
}

void
wl_request_dra(const json_t *w, const char *extra_key,
	const struct migchain *chains, struct jb *out)
{
	request(w, extra_key, 1, chains, out);
}

/* ---- which nodes ---- */

/* add_missing appends to list a copy of each member of more not already
 * in it. */
static void
add_missing(json_t *list, const json_t *more)
{
	size_t i, j, n;
	json_t *m;
	int seen;

	if (!json_is_array(more))
		return;
	json_array_foreach(more, i, m) {
		n = json_array_size(list);
		for (j = 0, seen = 0; j < n && !seen; j++)
			seen = json_equal(json_array_get(list, j), m);
		if (!seen)
			json_array_append_new(list, json_deep_copy(m));
	}
}

/* tolerations returns the template's tolerations, then the controller's
 * not already there. */
static json_t *
tolerations(const json_t *w, const json_t *ctl)
{
	const json_t *own = pod(w, "tolerations");
	json_t *list = json_is_array(own) ? json_deep_copy(own) : json_array();

	add_missing(list, ctl);
	return list;
}

static const json_t *
required_terms(const json_t *w)
{
	return at(w, "spec", "podTemplate", "spec", "affinity", "nodeAffinity",
		"requiredDuringSchedulingIgnoredDuringExecution",
		"nodeSelectorTerms", NULL);
}

json_t *
wl_constraints(const json_t *w, const json_t *ctl_tolerations)
{
	const json_t *terms = required_terms(w);

	return json_pack("{s:o, s:o}", "tolerations",
		tolerations(w, ctl_tolerations), "terms",
		json_is_array(terms) ? json_deep_copy(terms) : json_array());
}

/* ---- the Job ---- */

/* set_copy sets o[k] to a copy of v when v is an object, else to {};
 * returns the member set, NULL (nothing set) when o is no object. */
static json_t *
set_copy(json_t *o, const char *k, const json_t *v)
{
	json_t *c;

	if (!json_is_object(o))
		return NULL;
	c = json_is_object(v) ? json_deep_copy(v) : json_object();
	json_object_set_new(o, k, c);
	return c;
}

/* drop_gpu_keys removes the nvidia.com/ members of object o. */
static void
drop_gpu_keys(json_t *o)
{
	const char *k;
	json_t *v;
	void *tmp;

	if (!json_is_object(o))
		return;
	json_object_foreach_safe(o, tmp, k, v) {
		if (strncmp(k, "nvidia.com/", 11) == 0)
			json_object_del(o, k);
	}
}

/* drop_env removes the entries of env (an array) named name. */
static void
drop_env(json_t *env, const char *name)
{
	size_t i;
	const char *n;

	for (i = json_array_size(env); i-- > 0;) {
		n = json_string_value(
			json_object_get(json_array_get(env, i), "name"));
		if (n && strcmp(n, name) == 0)
			json_array_remove(env, i);
	}
}

/* disarm takes from container c what would reach GPUs not placed. */
static void
disarm(json_t *c)
{
	json_t *r = json_object_get(c, "resources");

	drop_gpu_keys(json_object_get(r, "limits"));
	drop_gpu_keys(json_object_get(r, "requests"));
	drop_env(json_object_get(c, "env"), "NVIDIA_VISIBLE_DEVICES");
}

/* arm gives container c the devices of p: n of resource res in its
 * limits and requests, and their list in NVIDIA_VISIBLE_DEVICES. */
static void
arm(json_t *c, const char *res, size_t n, const char *list, const json_t *model)
{
	json_t *r, *env, *l;
	char num[24];

	if (!json_is_object(c))
		return;
	r = set_copy(c, "resources", json_object_get(c, "resources"));
	env = json_object_get(c, "env");
	snprintf(num, sizeof num, "%zu", n);
	l = set_copy(r, "limits", json_object_get(r, "limits"));
	drop_gpu_keys(l);
	json_object_set_new(l, res, json_string(num));
	l = set_copy(r, "requests", json_object_get(r, "requests"));
	drop_gpu_keys(l);
	json_object_set_new(l, res, json_string(num));
	if (!json_is_array(env)) {
		env = json_array();
		json_object_set_new(c, "env", env);
	}
	drop_env(env, "NVIDIA_VISIBLE_DEVICES");
	json_array_append_new(env,
		json_pack("{s:s, s:s}", "name", "NVIDIA_VISIBLE_DEVICES",
			"value", list));
	if (json_is_string(model)) {
		drop_env(env, "MODEL_NAME");
		json_array_append_new(env,
			json_pack("{s:s, s:O}", "name", "MODEL_NAME", "value",
				model));
	}
}

/* named returns a copy of list (an array of objects, or anything: none)
 * without its entries named as entry, then entry (taken). */
static json_t *
named(const json_t *list, json_t *entry)
{
	const char *name = text(json_object_get(entry, "name"));
	json_t *out = json_array(), *e;
	size_t i;

	json_array_foreach(list, i, e) {
		if (strcmp(text(json_object_get(e, "name")), name) != 0)
			json_array_append_new(out, json_deep_copy(e));
	}
	json_array_append_new(out, entry);
	return out;
}

/* claim gives container c the pod's claim instead of devices: it loses
 * what disarm takes, and gets the claim and MODEL_NAME. */
static void
claim(json_t *c, const json_t *model)
{
	json_t *r, *env;

	if (!json_is_object(c))
		return;
	disarm(c);
	r = set_copy(c, "resources", json_object_get(c, "resources"));
	json_object_set_new(r, "claims",
		named(json_object_get(r, "claims"),
			json_pack("{s:s}", "name", WL_CLAIM_REQUEST)));
	if (!json_is_string(model))
		return;
	env = json_object_get(c, "env");
	if (!json_is_array(env)) {
		env = json_array();
		json_object_set_new(c, "env", env);
	}
	drop_env(env, "MODEL_NAME");
	json_array_append_new(env,
		json_pack("{s:s, s:O}", "name", "MODEL_NAME", "value", model));
}

/* containers returns the Job's containers for w, all copies. */
static json_t *
containers(const json_t *w, const char *image)
{
	const json_t *cs = pod(w, "containers"), *v;
	json_t *c;

	if (json_array_size(cs) > 0)
		return json_deep_copy(cs);
	v = spec(w, "image");
	c = json_pack("{s:s, s:s}", "name", "main", "image",
		json_is_string(v) ? json_string_value(v)
			: image   ? image
				  : WL_DEFAULT_IMAGE);
	v = spec(w, "command");
	if (json_is_array(v))
		json_object_set_new(c, "command", json_deep_copy(v));
	return json_pack("[o]", c);
}

/* pin returns the match on the node's name that pins a pod to node. */
static json_t *
pin(const char *node)
{
	return json_pack("{s:s, s:s, s:[s]}", "key", "metadata.name",
		"operator", "In", "values", node);
}

/* affinity returns the template's affinity with the term pinning the pod
 * to node ANDed into each required node selector term. */
static json_t *
affinity(const json_t *w, const char *node)
{
	const json_t *old = required_terms(w), *v;
	json_t *a, *na, *rq, *terms, *t, *mf;
	size_t i;

	v = pod(w, "affinity");
	a = json_is_object(v) ? json_deep_copy(v) : json_object();
	na = set_copy(a, "nodeAffinity", json_object_get(a, "nodeAffinity"));
	rq = set_copy(na, "requiredDuringSchedulingIgnoredDuringExecution",
		json_object_get(na,
			"requiredDuringSchedulingIgnoredDuringExecution"));
	terms = json_array();
	for (i = 0; i < json_array_size(old); i++) {
		if (!json_is_object(json_array_get(old, i)))
			continue;
		t = json_deep_copy(json_array_get(old, i));
		mf = json_object_get(t, "matchFields");
		if (!json_is_array(mf)) {
			mf = json_array();
			json_object_set_new(t, "matchFields", mf);
		}
		json_array_append_new(mf, pin(node));
		json_array_append_new(terms, t);
	}
	if (json_array_size(terms) == 0)
		json_array_append_new(terms,
			json_pack("{s:[o]}", "matchFields", pin(node)));
	json_object_set_new(rq, "nodeSelectorTerms", terms);
	return a;
}

/* joined returns the strings of devices joined by commas, malloc'd. */
static char *
joined(const json_t *devices)
{
	struct jb b = {0};
	size_t i;
	json_t *d;

	jb_raw(&b, "");
	json_array_foreach(devices, i, d) {
		if (!json_is_string(d))
			continue;
		jb_raw(&b, b.len ? "," : "");
		jb_raw(&b, json_string_value(d));
	}
	b.buf[b.len] = '\0';
	return b.buf;
}

/* pod_spec returns the Job's pod spec: the template's with the devices of
 * p given to its first container and the pod pinned to p->node. */
static json_t *
pod_spec(const json_t *w, const struct wl_place *p, const char *image,
	const json_t *ctl, const char *list)
{
	const json_t *t = at(w, "spec", "podTemplate", "spec", NULL), *rp;
	json_t *ps = json_is_object(t) ? json_deep_copy(t) : json_object();
	json_t *cs = containers(w, image), *c;
	char *res;
	size_t i;

	res = p->mig_profile ? easprintf("nvidia.com/mig-%s", p->mig_profile)
			     : estrdup("nvidia.com/gpu");
	json_array_foreach(cs, i, c) {
		if (i == 0 && p->claim_template)
			claim(c, spec(w, "modelName"));
		else if (i == 0)
			arm(c, res, json_array_size(p->devices), list,
				spec(w, "modelName"));
		else
			disarm(c);
	}
	free(res);
	if (p->claim_template)
		json_object_set_new(ps, "resourceClaims",
			named(json_object_get(ps, "resourceClaims"),
				json_pack("{s:s, s:s}", "name",
					WL_CLAIM_REQUEST,
					"resourceClaimTemplateName",
					p->claim_template)));
	json_array_foreach(json_object_get(ps, "initContainers"), i, c)
		disarm(c);
	rp = json_object_get(ps, "restartPolicy");
	json_object_set_new(ps, "restartPolicy",
		json_string(strcmp(text(rp), "OnFailure") == 0 ? "OnFailure"
							       : "Never"));
	json_object_set_new(ps, "affinity", affinity(w, p->node));
	json_object_set_new(ps, "tolerations", tolerations(w, ctl));
	json_object_set_new(ps, "containers", cs);
	return ps;
}

json_t *
wl_job(const json_t *w, const struct wl_place *p, const char *image,
	const json_t *ctl_tolerations)
{
	const char *name = text(at(w, "metadata", "name", NULL));
	const char *node = p->node ? p->node : "";
	struct wl_place q = *p;
	json_t *none = json_array(), *job, *meta, *tmeta, *l;
	char *list, *devs;

	if (!json_is_array(q.devices))
		q.devices = none;
	q.node = node;
	list = joined(q.devices);
	devs = jb_dumps(q.devices);
	meta = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s}, "
			 "s:[{s:s, s:s, s:s, s:s, s:b, s:b}]}",
		"name", name, "namespace",
		text(at(w, "metadata", "namespace", NULL)), "labels",
		"canhazgpu.dev/workload", name, "app.kubernetes.io/managed-by",
		"k8shazgpu", "annotations", "canhazgpu.dev/node", node,
		"canhazgpu.dev/devices", devs, "ownerReferences", "apiVersion",
		"canhazgpu.dev/v1alpha1", "kind", "GPUWorkload", "name", name,
		"uid", text(at(w, "metadata", "uid", NULL)), "controller", 1,
		"blockOwnerDeletion", 1);
	if (p->strategy)
		json_object_set_new(json_object_get(meta, "annotations"),
			"canhazgpu.dev/strategy", json_string(p->strategy));
	tmeta = json_object();
	l = set_copy(tmeta, "labels",
		at(w, "spec", "podTemplate", "metadata", "labels", NULL));
	json_object_set_new(l, "canhazgpu.dev/workload", json_string(name));
	l = set_copy(tmeta, "annotations",
		at(w, "spec", "podTemplate", "metadata", "annotations", NULL));
	/* with a claim the devices are the claim's, which may differ; else
	 * the JSON array sched-bind writes, so one parser reads both */
	if (p->claim_template)
		json_object_del(l, "canhazgpu.dev/devices");
	else
		json_object_set_new(l, "canhazgpu.dev/devices",
			json_string(devs));
	job = json_pack("{s:s, s:s, s:o, s:{s:i, s:{s:o, s:o}}}", "apiVersion",
		"batch/v1", "kind", "Job", "metadata", meta, "spec",
		"backoffLimit", 0, "template", "metadata", tmeta, "spec",
		pod_spec(w, &q, image, ctl_tolerations, list));
	free(list);
	free(devs);
	json_decref(none);
	return job;
}

/* ---- the claim template ---- */

/* cel_str appends s to b as a CEL string literal. */
static void
cel_str(struct jb *b, const char *s)
{
	char c[2] = {0, 0};

	jb_raw(b, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			jb_raw(b, "\\");
		c[0] = *s;
		jb_raw(b, c);
	}
	jb_raw(b, "\"");
}

/* cel returns the selector list of one CEL expression: the attribute of
 * the driver named attr, compared by op to the strings of vals (one
 * string, or an array written as a CEL list). */
static json_t *
cel(const char *attr, const char *op, const json_t *vals)
{
	struct jb b = {0};
	json_t *v, *sel;
	size_t i;

	jb_raw(&b, "device.attributes[");
	cel_str(&b, WL_DRIVER);
	jb_raw(&b, "].");
	jb_raw(&b, attr);
	jb_raw(&b, " ");
	jb_raw(&b, op);
	jb_raw(&b, " ");
	if (json_is_string(vals)) {
		cel_str(&b, json_string_value(vals));
	} else {
		jb_raw(&b, "[");
		json_array_foreach(vals, i, v) {
			jb_raw(&b, i ? ", " : "");
			cel_str(&b, text(v));
		}
		jb_raw(&b, "]");
	}
	b.buf[b.len] = '\0';
	sel = json_pack("[{s:{s:s}}]", "cel", "expression", b.buf);
	jb_free(&b);
	return sel;
}

/* device_request returns one request (or subrequest) of count devices
 * of class, narrowed by selectors (taken); name NULL: none. */
static json_t *
device_request(const char *name, const char *class, size_t count,
	json_t *selectors)
{
	json_t *r = json_pack("{s:s, s:s, s:I, s:o}", "deviceClassName", class,
		"allocationMode", "ExactCount", "count", (json_int_t)count,
		"selectors", selectors);

	if (name)
		json_object_set_new(r, "name", json_string(name));
	return r;
}

json_t *
wl_claim_template(const json_t *w, const struct wl_place *p,
	const struct migchain *chains)
{
	const char *name = text(at(w, "metadata", "name", NULL));
	const json_t *devs = json_is_array(p->devices) ? p->devices : NULL;
	size_t n = json_array_size(devs), i;
	json_t *rq, *chain, *subs, *v, *none = json_array();
	char sub[24];

	if (!p->mig_profile) {
		rq = json_pack("{s:s, s:o}", "name", WL_CLAIM_REQUEST,
			"exactly",
			device_request(NULL, WL_CLASS_GPU, n,
				cel("uuid", "in", devs ? devs : none)));
	} else {
		chain = wl_chain(w, chains);
		if (!json_array_size(chain))
			json_array_append_new(chain,
				json_string(p->mig_profile));
		subs = json_array();
		json_array_foreach(chain, i, v) {
			snprintf(sub, sizeof sub, "p%zu", i);
			json_array_append_new(subs,
				device_request(sub, WL_CLASS_MIG, n,
					cel("profile", "==", v)));
		}
		json_decref(chain);
		rq = json_pack("{s:s, s:o}", "name", WL_CLAIM_REQUEST,
			"firstAvailable", subs);
	}
	json_decref(none);
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}, "
			 "s:[{s:s, s:s, s:s, s:s, s:b, s:b}]}, "
			 "s:{s:{s:{s:s}}, s:{s:{s:[o]}}}}",
		"apiVersion", "resource.k8s.io/v1", "kind",
		"ResourceClaimTemplate", "metadata", "name", name, "namespace",
		text(at(w, "metadata", "namespace", NULL)), "labels",
		"canhazgpu.dev/workload", name, "app.kubernetes.io/managed-by",
		"k8shazgpu", "ownerReferences", "apiVersion",
		"canhazgpu.dev/v1alpha1", "kind", "GPUWorkload", "name", name,
		"uid", text(at(w, "metadata", "uid", NULL)), "controller", 1,
		"blockOwnerDeletion", 1, "spec", "metadata", "labels",
		"canhazgpu.dev/workload", name, "spec", "devices", "requests",
		rq);
}
