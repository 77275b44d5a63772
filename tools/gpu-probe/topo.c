/* topo: topology loading, validation and expansion (see topo.h). */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hmap.h"
#include "mig.h"
#include "topo.h"
#include "y2j.h"

enum {
	MAX_GPUS = 64,
	MAX_COUNT = 10000,
	MAX_MIG = 64,
	MAX_NODES = TOPO_MAX_NODES,
	MAX_ALL_GPUS = TOPO_MAX_GPUS,
};

/* Where a problem is: the file, and the node entry and GPU when known. */
struct at {
	const char *src;
	const char *node; /* NULL: the file as a whole */
	int gpu;          /* -1: the node as a whole */
};

/* complain prints `src: node "x" gpu N: message` and returns 1, one
 * problem. */
static int __attribute__((format(printf, 2, 3)))
complain(const struct at *at, const char *fmt, ...)
{
	char *msg, gpu[32] = "";
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		err_die(HAZ_FAIL, "vasprintf:");
	va_end(ap);
	if (at->gpu >= 0)
		snprintf(gpu, sizeof gpu, " gpu %d", at->gpu);
	if (at->node)
		err_warn("%s: node \"%s\"%s: %s", at->src, at->node, gpu, msg);
	else
		err_warn("%s: %s", at->src, msg);
	free(msg);
	return 1;
}

/* ---- checks of one node entry (defaults merged in) ---- */

/* digits reads t, a string of 1..9 decimal digits, into *out. Returns 0
 * or -1. */
static int
digits(const char *t, long *out)
{
	size_t n = t ? strlen(t) : 0;

	if (n < 1 || n > 9 || strspn(t, "0123456789") != n)
		return -1;
	*out = strtol(t, NULL, 10);
	return 0;
}

/* whole reads v, an integer or a string of digits, into *out. Returns 0,
 * or -1 when v is neither or out of lo..hi. */
static int
whole(const json_t *v, long lo, long hi, long *out)
{
	long n;

	if (json_is_integer(v))
		n = (long)json_integer_value(v);
	else if (digits(json_string_value(v), &n) < 0)
		return -1;
	if (n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

/* numbers reads count, gpus and memoryMiB of spec into the out values
 * (defaults 1, 0, 0). Returns the number of problems (complained). */
static int
numbers(const struct at *at, const json_t *spec, long *count, long *gpus,
	long *mem)
{
	json_t *v;
	int bad = 0;

	*count = 1;
	*gpus = *mem = 0;
	if ((v = json_object_get(spec, "count")) &&
		whole(v, 1, MAX_COUNT, count) < 0)
		bad += complain(at, "count must be a whole number above 0");
	if ((v = json_object_get(spec, "gpus")) &&
		whole(v, 0, MAX_GPUS, gpus) < 0)
		bad += complain(at, "gpus must be a whole number from 0 to %d",
			MAX_GPUS);
	if ((v = json_object_get(spec, "memoryMiB")) &&
		whole(v, 1, 1L << 30, mem) < 0)
		bad += complain(at, "memoryMiB must be a whole number above 0");
	return bad;
}

/* has_control tells whether the UTF-8 string s holds a control
 * character (C0, DEL or C1), which no record may carry. */
static int
has_control(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	for (; *u; u++)
		if (*u < 0x20 || *u == 0x7f ||
			(u[0] == 0xc2 && u[1] >= 0x80 && u[1] < 0xa0))
			return 1;
	return 0;
}

/* strings checks that the text members of spec, when present, are
 * strings of text. Returns the number of problems. */
static int
strings(const struct at *at, const json_t *spec)
{
	static const char *const keys[] = {"product", "family", "driverVersion",
		"cudaVersion", "computeCapability"};
	json_t *v;
	size_t i;
	int bad = 0;

	for (i = 0; i < sizeof keys / sizeof *keys; i++) {
		v = json_object_get(spec, keys[i]);
		if (v && !json_is_string(v))
			bad += complain(at, "%s must be a string (quote it)",
				keys[i]);
		else if (v && has_control(json_string_value(v)))
			bad += complain(at, "%s holds a control character",
				keys[i]);
	}
	return bad;
}

/* layout checks one GPU's MIG device list (borrowed, may be NULL): known
 * profiles, at most 7 slices, at most the GPU's memory (memory_mib, 0 when
 * unknown). Returns the number of problems. */
static int
layout(const struct at *at, const json_t *mig, long memory_mib)
{
	struct mig_profile p[MAX_MIG];
	size_t i, n = json_array_size(mig);
	int slices, gib, have = (int)((memory_mib + 1023) / 1024), bad = 0;
	char *text;

	if (n > MAX_MIG)
		return complain(at, "MIG layout has %zu devices, at most %d", n,
			MAX_MIG);
	for (i = 0; i < n; i++) {
		if (mig_parse(json_string_value(json_array_get(mig, i)),
			    &p[i]) == 0)
			continue;
		text = json_dumps(json_array_get(mig, i), JSON_ENCODE_ANY);
		bad += complain(at, "unknown MIG profile %s", text);
		free(text);
	}
	if (bad)
		return bad;
	mig_usage(p, n, &slices, &gib);
	if (slices > MIG_MAX_SLICES)
		bad += complain(at, "MIG slices %d > %d", slices,
			MIG_MAX_SLICES);
	if (memory_mib && gib > have)
		bad += complain(at, "MIG memory %dgb > %dgb", gib, have);
	return bad;
}

/* gpu_mig returns the MIG list of GPU i of spec (borrowed, or NULL). */
static json_t *
gpu_mig(const json_t *spec, int i)
{
	json_t *by = json_object_get(spec, "migByGPU");
	char key[16];

	snprintf(key, sizeof key, "%d", i);
	if (json_object_get(by, key))
		return json_object_get(by, key);
	return json_object_get(spec, "mig");
}

/* by_gpu checks that mig is a list and migByGPU maps only GPUs
 * 0..gpus-1. Returns the number of problems. */
static int
by_gpu(const struct at *at, const json_t *spec, long gpus)
{
	json_t *by = json_object_get(spec, "migByGPU"), *v;
	json_t *mig = json_object_get(spec, "mig");
	const char *key;
	int bad = 0;
	long i;

	if (mig && !json_is_array(mig) && !json_is_null(mig))
		return complain(at, "mig must be a list of MIG profiles");
	if (by && !json_is_object(by))
		return complain(at, "migByGPU must map GPU indexes to lists");
	json_object_foreach(by, key, v) {
		if (!json_is_array(v) && !json_is_null(v))
			bad += complain(at,
				"migByGPU \"%s\": MIG layout must be a "
				"list",
				key);
		else if (digits(key, &i) < 0 || i >= gpus ||
			(key[0] == '0' && key[1])) /* "00" would be ignored */
			bad += complain(at,
				"migByGPU \"%s\": no such GPU (the "
				"node has %ld)",
				key, gpus);
	}
	return bad;
}

/* minors checks that minors, when present, lists a distinct minor number
 * (0..2147483647) for each of the gpus GPUs. Returns the number of
 * problems. */
static int
minors(const struct at *at, const json_t *spec, long gpus)
{
	const json_t *m = json_object_get(spec, "minors"), *v, *w;
	size_t i, j;

	if (!m || json_is_null(m))
		return 0;
	if (!json_is_array(m) || (long)json_array_size(m) != gpus)
		return complain(at,
			"minors must list one minor number per GPU (%ld)",
			gpus);
	json_array_foreach(m, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			json_integer_value(v) > INT_MAX)
			return complain(at,
				"minors: %zu: not a whole number from 0 to "
				"2147483647",
				i);
		for (j = 0; j < i; j++) {
			w = json_array_get(m, j);
			if (json_integer_value(w) == json_integer_value(v))
				return complain(at, "minors: %zu: %lld twice",
					i, (long long)json_integer_value(v));
		}
	}
	return 0;
}

/* valid_name tells whether s is a lowercase DNS label, or such labels
 * joined by dots (a node may be named "k8s.gpu", as seeds/003's virtual
 * node is), short enough to take a count suffix and to name ResourceSlices. */
static int
valid_name(const char *s)
{
	size_t n = s ? strlen(s) : 0, len;

	if (n == 0 || n > 200)
		return 0;
	for (; *s; s += len + (s[len] == '.')) {
		len = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-");
		if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-' ||
			(s[len] && s[len] != '.') ||
			(s[len] == '.' && !s[len + 1]))
			return 0;
	}
	return 1;
}

/* check_entry validates one merged node entry; *count, *gpus and *mem
 * get its expansion. Returns the number of problems (each complained). */
static int
check_entry(struct at *at, const json_t *spec, long *count, long *gpus,
	long *mem)
{
	int bad;

	bad = numbers(at, spec, count, gpus, mem) + strings(at, spec);
	if (bad)
		return bad;
	bad = by_gpu(at, spec, *gpus) + minors(at, spec, *gpus);
	for (at->gpu = 0; at->gpu < *gpus; at->gpu++)
		bad += layout(at, gpu_mig(spec, at->gpu), *mem);
	at->gpu = -1;
	return bad;
}

/* ---- expansion ---- */

static const char *
str(const json_t *spec, const char *key)
{
	return json_string_value(json_object_get(spec, key));
}

/* add_node appends node name (taken) built from spec to t, and indexes
 * it by name. */
static void
add_node(struct topo *t, char *name, json_t *spec, int gpus, long mem)
{
	struct topo_node *n;
	int i;

	if (t->nnodes == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 8;
		t->nodes = erealloc(t->nodes, t->cap * sizeof *t->nodes);
	}
	if (!t->by_name)
		t->by_name = hm_new(NULL);
	hm_put(t->by_name, name, (void *)(uintptr_t)(t->nnodes + 1));
	t->ngpus += (size_t)gpus;
	n = &t->nodes[t->nnodes++];
	memset(n, 0, sizeof *n);
	n->name = name;
	n->spec = json_incref(spec);
	n->product = str(spec, "product");
	n->family = str(spec, "family");
	n->driver_version = str(spec, "driverVersion");
	n->cuda_version = str(spec, "cudaVersion");
	n->compute_cap = str(spec, "computeCapability");
	n->memory_mib = mem;
	n->ngpus = gpus;
	n->gpus = ecalloc((size_t)gpus, sizeof *n->gpus);
	for (i = 0; i < gpus; i++) {
		n->gpus[i].index = i;
		n->gpus[i].minor = json_is_array(
					   json_object_get(spec, "minors"))
			? (int)json_integer_value(
				  json_array_get(json_object_get(spec,
							 "minors"),
					  (size_t)i))
			: i;
		n->gpus[i].mig = gpu_mig(spec, i);
		if (json_array_size(n->gpus[i].mig) == 0)
			n->gpus[i].mig = NULL;
	}
}

/* expand adds the count nodes of one entry to t, refusing a name that is
 * already there. Returns the number of problems. */
static int
expand(struct topo *t, struct at *at, json_t *spec, long count, long gpus,
	long mem)
{
	const char *base = str(spec, "name");
	char *name;
	long i;

	if ((size_t)count > MAX_NODES - t->nnodes ||
		(size_t)(count * gpus) > MAX_ALL_GPUS - t->ngpus)
		return complain(at,
			"the topology would have more than %d "
			"nodes or %d GPUs",
			MAX_NODES, MAX_ALL_GPUS);
	for (i = 0; i < count; i++) {
		name = json_object_get(spec, "count")
			? easprintf("%s-%ld", base, i)
			: estrdup(base);
		if (topo_find(t, name)) {
			complain(at, "node name \"%s\" used twice", name);
			free(name);
			return 1;
		}
		add_node(t, name, spec, (int)gpus, mem);
	}
	return 0;
}

/* entry merges defaults (may be NULL) into node entry i, e, validates it
 * and, when it is sound, expands it into t. Returns the number of
 * problems. */
static int
entry(struct topo *t, const json_t *defaults, const json_t *e, size_t i)
{
	struct at at = {t->src, NULL, -1};
	long count, gpus, mem;
	json_t *spec;
	int bad;

	if (!json_is_object(e) || !valid_name(str(e, "name"))) {
		err_warn("%s: node %zu: name must be a lowercase DNS label",
			t->src, i);
		return 1;
	}
	at.node = str(e, "name");
	spec = defaults ? json_deep_copy(defaults) : json_object();
	json_object_update_recursive(spec, (json_t *)e);
	bad = check_entry(&at, spec, &count, &gpus, &mem);
	if (!bad)
		bad = expand(t, &at, spec, count, gpus, mem);
	json_decref(spec);
	return bad;
}

int
topo_from_json(const json_t *doc, const char *src, struct topo *t)
{
	struct at at = {src, NULL, -1};
	json_t *nodes = json_object_get(doc, "nodes");
	json_t *defaults = json_object_get(doc, "defaults");
	size_t i;
	int bad = 0;

	memset(t, 0, sizeof *t);
	t->src = estrdup(src);
	if (!json_is_object(doc))
		bad = complain(&at, "not a map with defaults and nodes");
	else if (!json_is_array(nodes) || !json_array_size(nodes))
		bad = complain(&at, "nodes must be a list of nodes");
	else if (defaults && !json_is_object(defaults))
		bad = complain(&at, "defaults must be a map");
	else {
		for (i = 0; i < json_array_size(nodes); i++)
			bad += entry(t, defaults, json_array_get(nodes, i), i);
	}
	if (!bad)
		return 0;
	topo_free(t);
	return -1;
}

int
topo_load(const char *path, struct topo *t)
{
	struct y2j_error e;
	json_t *doc;
	int rc;

	memset(t, 0, sizeof *t);
	if (!(doc = y2j_load(path, Y2J_SKIP_NULL, &e))) {
		err_warn("%s", e.text);
		return -1;
	}
	rc = topo_from_json(doc, path, t);
	json_decref(doc);
	return rc;
}

const struct topo_node *
topo_find(const struct topo *t, const char *name)
{
	size_t at = t->by_name ? (size_t)(uintptr_t)hm_get(t->by_name, name)
			       : 0;

	return at ? &t->nodes[at - 1] : NULL;
}

void
topo_free(struct topo *t)
{
	size_t i;

	for (i = 0; i < t->nnodes; i++) {
		free(t->nodes[i].name);
		free(t->nodes[i].gpus);
		json_decref(t->nodes[i].spec);
	}
	free(t->nodes);
	free(t->src);
	hm_free(t->by_name);
	memset(t, 0, sizeof *t);
}

/* fnv1a hashes s into a 64-bit value starting from seed. */
static uint64_t
fnv1a(const char *s, uint64_t seed)
{
	uint64_t h = seed;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* mix scrambles every bit of h into every other (a 64-bit finalizer), so
 * keys that differ in one character give unrelated UUIDs. */
static uint64_t
mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

char *
topo_uuid(char *buf, const char *prefix, const char *node, int index,
	int device)
{
	char *key = easprintf("k8shazgpu-sim/%s/%d/%d", node, index, device);
	uint64_t a = mix(fnv1a(key, 0xcbf29ce484222325ULL));
	uint64_t b = mix(fnv1a(key, a ^ 0x9e3779b97f4a7c15ULL));

	snprintf(buf, 48, "%s-%08x-%04x-%04x-%04x-%012llx", prefix,
		(unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
		(unsigned)a & 0xffff, (unsigned)(b >> 48),
		(unsigned long long)(b & 0xffffffffffffULL));
	free(key);
	return buf;
}
