/* nodefit: taints, node affinity and inventory records (see nodefit.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fnv.h"
#include "jscan.h"
#include "kname.h"
#include "nodefit.h"

/* text reads member key of o into *out: the string, or NULL when the
 * member is absent or null. Returns 0, or -1 when it holds another type
 * (*out NULL). */
static int
text(const json_t *o, const char *key, const char **out)
{
	const json_t *v = json_object_get(o, key);

	*out = json_string_value(v);
	return v && !json_is_null(v) && !*out ? -1 : 0;
}

/* empty says whether s is absent or "". */
static int
empty(const char *s)
{
	return !s || !*s;
}

static int
same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* ---- taints ---- */

/* tolerates says whether toleration t tolerates taint. A toleration or
 * taint with a member of the wrong type tolerates nothing; so does Equal
 * with an empty key, which the API server refuses. */
static int
tolerates(const json_t *t, const json_t *taint)
{
	const char *op, *key, *val, *eff, *tkey, *tval, *teff;

	if (!json_is_object(t) || !json_is_object(taint) ||
		text(t, "operator", &op) < 0 || text(t, "key", &key) < 0 ||
		text(t, "value", &val) < 0 || text(t, "effect", &eff) < 0 ||
		text(taint, "key", &tkey) < 0 ||
		text(taint, "value", &tval) < 0 ||
		text(taint, "effect", &teff) < 0)
		return 0;
	if (!empty(eff) && !same(eff, teff))
		return 0;
	if (!empty(key) && !same(key, tkey))
		return 0;
	if (op && !strcmp(op, "Exists"))
		return 1;
	if (!empty(op) && strcmp(op, "Equal"))
		return 0; /* an unknown operator */
	return !empty(key) && same(val, tval);
}

int
nf_tolerated(const json_t *tolerations, const json_t *taint)
{
	const json_t *t;
	size_t i;

	json_array_foreach(tolerations, i, t) {
		if (tolerates(t, taint))
			return 1;
	}
	return 0;
}

/* ---- node affinity ---- */

/* integer reads s as strconv.ParseInt(s, 10, 64) does (an optional sign,
 * then digits only, in range) into *v. Returns 0, or -1 when s is none. */
static int
integer(const char *s, long long *v)
{
	const char *p = s;
	char *end;

	if (!s)
		return -1;
	if (*p == '+' || *p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return *end || errno ? -1 : 0;
}

/* label_key says whether s is a label key: an optional DNS subdomain
 * and '/', then a name of 1 to 63 bytes of the label value alphabet. */
static int
label_key(const char *s)
{
	const char *name = strchr(s, '/');
	char prefix[KN_SUBDOMAIN_MAX + 1];
	size_t len;

	if (!name)
		return *s && kn_is_label_value(s);
	len = (size_t)(name - s);
	if (len > KN_SUBDOMAIN_MAX)
		return 0;
	memcpy(prefix, s, len);
	prefix[len] = '\0';
	return kn_is_dns_subdomain(prefix, KN_SUBDOMAIN_MAX) && name[1] &&
		kn_is_label_value(name + 1);
}

/* values reads r's values, an array of strings (absent or null: none),
 * counting them into *n; labels holds them to label values. Returns 0,
 * or -1 when malformed. */
static int
values(const json_t *r, int labels, size_t *n)
{
	const json_t *vals = json_object_get(r, "values"), *v;
	size_t i;

	*n = 0;
	if (!vals || json_is_null(vals))
		return 0;
	if (!json_is_array(vals))
		return -1;
	json_array_foreach(vals, i, v) {
		if (!json_is_string(v) ||
			(labels && !kn_is_label_value(json_string_value(v))))
			return -1;
	}
	*n = json_array_size(vals);
	return 0;
}

/* listed says whether value is one of r's values. */
static int
listed(const json_t *r, const char *value)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(r, "values"), i, v) {
		if (value && !strcmp(json_string_value(v), value))
			return 1;
	}
	return 0;
}

/* requirement says whether value (NULL: the key is absent) meets
 * NodeSelectorRequirement r, as Kubernetes' label selectors do: In and
 * NotIn need values, Exists and DoesNotExist none, Gt and Lt exactly one
 * integer, compared with the value read as an integer (none: no match);
 * every value a label value. fields limits the operators to In and NotIn
 * with one value, of any text, as a field selector does. A malformed
 * requirement matches nothing. */
static int
requirement(const json_t *r, const char *value, int fields)
{
	const char *op, *first;
	size_t n;
	long long a, b;

	if (text(r, "operator", &op) < 0 || !op || values(r, !fields, &n) < 0)
		return 0;
	if (fields && (n != 1 || (strcmp(op, "In") && strcmp(op, "NotIn"))))
		return 0;
	if (!strcmp(op, "In"))
		return n > 0 && listed(r, value);
	if (!strcmp(op, "NotIn"))
		return n > 0 && !listed(r, value);
	if (!strcmp(op, "Exists"))
		return n == 0 && value;
	if (!strcmp(op, "DoesNotExist"))
		return n == 0 && !value;
	if (strcmp(op, "Gt") && strcmp(op, "Lt"))
		return 0;
	first = json_string_value(
		json_array_get(json_object_get(r, "values"), 0));
	if (n != 1 || integer(first, &b) < 0 || integer(value, &a) < 0)
		return 0;
	return !strcmp(op, "Gt") ? a > b : a < b;
}

/* list returns member key of term t as an array (absent or null: an
 * empty one, *ok untouched), or NULL with *ok 0 when it is no array. */
static const json_t *
list(const json_t *t, const char *key, int *ok)
{
	const json_t *v = json_object_get(t, key);

	if (json_is_array(v))
		return v;
	if (v && !json_is_null(v))
		*ok = 0;
	return NULL;
}

/* term says whether node matches NodeSelectorTerm t: every requirement of
 * matchExpressions (over labels) and matchFields (metadata.name only)
 * holds, and there is at least one. */
static int
term(const json_t *node, const json_t *t)
{
	const json_t *md = json_object_get(node, "metadata"),
		     *labels = json_object_get(md, "labels"), *ex, *fi, *r;
	const char *key, *name;
	size_t i;
	int ok = 1;

	ex = list(t, "matchExpressions", &ok);
	fi = list(t, "matchFields", &ok);
	if (!json_is_object(t) || !ok ||
		json_array_size(ex) + json_array_size(fi) == 0)
		return 0;
	json_array_foreach(ex, i, r) {
		if (text(r, "key", &key) < 0 || !key || !label_key(key) ||
			!requirement(r,
				json_string_value(json_object_get(labels, key)),
				0))
			return 0;
	}
	json_array_foreach(fi, i, r) {
		if (text(r, "key", &key) < 0 || !same(key, "metadata.name") ||
			text(md, "name", &name) < 0 || !requirement(r, name, 1))
			return 0;
	}
	return 1;
}

int
nf_eligible(const json_t *node, const json_t *tolerations, const json_t *terms,
	char *why, size_t n)
{
	const json_t *t;
	const char *eff, *key, *val;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(node, "spec"),
				   "taints"),
		i, t) {
		eff = json_string_value(json_object_get(t, "effect"));
		if (!eff ||
			(strcmp(eff, "NoSchedule") && strcmp(eff, "NoExecute")))
			continue;
		if (nf_tolerated(tolerations, t))
			continue;
		if (why && n) {
			key = json_string_value(json_object_get(t, "key"));
			val = json_string_value(json_object_get(t, "value"));
			snprintf(why, n, "%s%s%s:%s", key ? key : "",
				empty(val) ? "" : "=", empty(val) ? "" : val,
				eff);
			err_clean(why);
		}
		return NF_TAINT;
	}
	if (!json_is_array(terms) || json_array_size(terms) == 0)
		return NF_OK;
	json_array_foreach(terms, i, t) {
		if (term(node, t))
			return NF_OK;
	}
	if (why && n)
		snprintf(why, n, "node affinity");
	return NF_AFFINITY;
}

/* ---- inventory records ---- */

/* ready says whether node has a condition Ready that is True. */
static int
ready(const json_t *node)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(node, "status"),
				   "conditions"),
		i, c) {
		if (same(json_string_value(json_object_get(c, "type")),
			    "Ready") &&
			same(json_string_value(json_object_get(c, "status")),
				"True"))
			return 1;
	}
	return 0;
}

/* number reads s as a JSON number into *v. Returns 0, or -1 when s is
 * none or its value is not finite. */
static int
number(const char *s, double *v)
{
	const char *p = s;

	if (!s)
		return -1;
	p += *p == '-';
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		p += strspn(p, "0123456789");
	else
		return -1;
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -1;
		p += 1 + strspn(p + 1, "0123456789");
	}
	if (*p == 'e' || *p == 'E') {
		p += 1 + (p[1] == '+' || p[1] == '-');
		if (*p < '0' || *p > '9')
			return -1;
		p += strspn(p, "0123456789");
	}
	if (*p)
		return -1;
	*v = strtod(s, NULL);
	return isfinite(*v) ? 0 : -1;
}

/* cost appends the cost of node annotations ann: canhazgpu.dev/cost as a
 * number, 1 when absent or no number. A whole number within 2^53 is
 * written as one, as jq writes it. */
static void
cost(struct jb *out, const json_t *ann)
{
	double c;

	if (number(json_string_value(
			   json_object_get(ann, "canhazgpu.dev/cost")),
		    &c) < 0)
		c = 1;
	if (c == floor(c) && fabs(c) <= 9007199254740992.0)
		jb_int(out, (long long)c);
	else
		jb_real(out, c);
}

/* labels appends the string members of node labels nl, then those of
 * extra (which win), as one object. */
static void
labels(struct jb *out, const json_t *nl, const json_t *extra)
{
	json_t *all = json_object();
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)nl, k, v) {
		if (json_is_string(v))
			json_object_set(all, k, v);
	}
	json_object_foreach((json_t *)extra, k, v) {
		if (json_is_string(v))
			json_object_set(all, k, v);
	}
	jb_json(out, all);
	json_decref(all);
}

/* field appends ,"key": and member key of d, or def when it is absent or
 * null (NULL: null). Any other value is copied as it is, for sched-pick
 * to judge: a device with a bad field is then refused, never guessed. */
static void
field(struct jb *out, const json_t *d, const char *key, const char *def)
{
	const json_t *v = json_object_get(d, key);

	jb_raw(out, ",\"");
	jb_raw(out, key);
	jb_raw(out, "\":");
	if (v && !json_is_null(v))
		jb_json(out, v);
	else
		jb_raw(out, def ? def : "null");
}

/* gpu appends the gpu record of device d of node name. A device whose
 * GPU the host holds is written unhealthy: sched-pick places nothing on
 * it, as on an unhealthy one, until the hold goes. */
static void
gpu(struct jb *out, const char *name, const json_t *d)
{
	const json_t *mig = json_object_get(d, "mig");
	const json_t *held = json_object_get(d, "held");

	jb_raw(out, "{\"kind\":\"gpu\",\"node\":");
	jb_str(out, name);
	field(out, d, "index", NULL);
	field(out, d, "uuid", NULL);
	field(out, d, "product", NULL);
	field(out, d, "memory_mib", NULL);
	field(out, d, "memory_used_mib", NULL);
	field(out, d, "util_pct", NULL);
	field(out, d, "mig_enabled", "false");
	if (held && !json_is_null(held) && !json_is_false(held))
		jb_raw(out, ",\"health\":\"unhealthy\"");
	else
		field(out, d, "health", "\"ok\"");
	jb_raw(out, ",\"mig\":");
	if (mig && !json_is_null(mig) && !json_is_false(mig)) {
		jb_raw(out, "{\"profile\":");
		jb_json(out, mig);
		field(out, d, "parent_uuid", NULL);
		jb_raw(out, "}");
	} else {
		jb_raw(out, "null");
	}
	jb_raw(out, "}\n");
}

int
nf_records(const json_t *node, const json_t *extra_labels, struct jb *out)
{
	const json_t *md = json_object_get(node, "metadata"),
		     *ann = json_object_get(md, "annotations"), *d, *dv;
	const char *name = json_string_value(json_object_get(md, "name")), *s;
	json_t *devs;
	size_t i;
	int n = 0;

	if (!name)
		name = "";
	jb_raw(out, "{\"kind\":\"node\",\"name\":");
	jb_str(out, name);
	jb_raw(out, ",\"labels\":");
	labels(out, json_object_get(md, "labels"), extra_labels);
	jb_raw(out, ",\"ready\":");
	jb_raw(out, ready(node) ? "true" : "false");
	jb_raw(out, ",\"unschedulable\":");
	jb_raw(out,
		json_is_true(json_object_get(json_object_get(node, "spec"),
			"unschedulable"))
			? "true"
			: "false");
	s = json_string_value(json_object_get(json_object_get(md, "labels"),
		"gpu-orchestrator/cheap-node"));
	jb_raw(out, ",\"cheap\":");
	jb_raw(out, same(s, "true") ? "true" : "false");
	jb_raw(out, ",\"cost\":");
	cost(out, ann);
	jb_raw(out, "}\n");

	if (!(dv = json_object_get(ann, "agentaflow.gpu/devices")))
		return 0;
	s = json_string_value(dv);
	devs = s ? json_loads(s, 0, NULL) : NULL;
	if (!json_is_array(devs)) {
		json_decref(devs);
		return -1;
	}
	json_array_foreach(devs, i, d) {
		if (!json_is_object(d) ||
			empty(json_string_value(json_object_get(d, "uuid"))))
			continue;
		gpu(out, name, d);
		n++;
	}
	json_decref(devs);
	return n;
}

/* ---- digest ---- */

#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME 1099511628211ULL

static uint64_t
fnv_byte(uint64_t h, unsigned char c)
{
	return (h ^ c) * FNV_PRIME;
}

/* fnv hashes part s (NULL: absent, told from ""), then an end mark.
 * The marks are bytes that UTF-8 text never holds, so parts cannot run
 * into each other. */
static uint64_t
fnv(uint64_t h, const char *s)
{
	if (!s)
		return fnv_byte(fnv_byte(h, 0xfd), 0xff);
	h = fnv_byte(h, 0xfe);
	for (; *s; s++)
		h = fnv_byte(h, (unsigned char)*s);
	return fnv_byte(h, 0xff);
}

/* fnv_json hashes v (NULL: absent) as compact JSON with sorted keys. */
static uint64_t
fnv_json(uint64_t h, const json_t *v)
{
	char *s = v
		? json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY)
		: NULL;

	if (v && !s)
		err_die(HAZ_FAIL, "json_dumps: out of memory");
	h = fnv(h, s);
	free(s);
	return h;
}

uint64_t
nf_digest(const json_t *node)
{
	const json_t *md = json_object_get(node, "metadata"),
		     *ann = json_object_get(md, "annotations"),
		     *spec = json_object_get(node, "spec");
	uint64_t h = FNV_OFFSET;

	h = fnv_json(h, json_object_get(md, "name"));
	h = fnv_json(h, json_object_get(md, "labels"));
	h = fnv(h, ready(node) ? "ready" : "not ready");
	h = fnv_json(h, json_object_get(spec, "unschedulable"));
	h = fnv_json(h, json_object_get(spec, "taints"));
	h = fnv_json(h, json_object_get(ann, "agentaflow.gpu/devices"));
	h = fnv_json(h, json_object_get(ann, "canhazgpu.dev/cost"));
	return h;
}

/* raw_hash folds token t of d (its raw text, or its type; -1: absent)
 * into h, then a byte no JSON text holds, which ends the part. */
static uint64_t
raw_hash(uint64_t h, const struct js_doc *d, int t)
{
	if (t < 0)
		h = fnv_64(h, "-", 1);
	else if (d->t[t].type == JS_STRING || d->t[t].type == JS_OBJECT ||
		d->t[t].type == JS_ARRAY)
		h = fnv_64(h, d->t[t].s, d->t[t].len);
	else
		h = fnv_64(h, &d->t[t].type, sizeof d->t[t].type);
	return fnv_64(h, "\xff", 1);
}

/* raw_ready hashes the status of each Ready condition of d into h. */
static uint64_t
raw_ready(uint64_t h, const struct js_doc *d)
{
	int st = js_raw_get(d, 0, "status"), conds, c, i;

	conds = st < 0 ? -1 : js_raw_get(d, st, "conditions");
	if (conds < 0 || d->t[conds].type != JS_ARRAY)
		return h;
	for (i = 0, c = conds + 1; i < d->t[conds].n; i++, c = d->t[c].next)
		if (d->t[c].type == JS_OBJECT &&
			js_raw_eq(d, js_raw_get(d, c, "type"), "Ready"))
			h = raw_hash(h, d, js_raw_get(d, c, "status"));
	return h;
}

uint64_t
nf_digest_raw(const struct js_doc *d)
{
	int md = js_raw_get(d, 0, "metadata"), sp = js_raw_get(d, 0, "spec"),
	    ann = md < 0 ? -1 : js_raw_get(d, md, "annotations");
	uint64_t h = FNV64_BASIS;

	h = raw_hash(h, d, md < 0 ? -1 : js_raw_get(d, md, "name"));
	h = raw_hash(h, d, md < 0 ? -1 : js_raw_get(d, md, "labels"));
	h = raw_hash(h, d,
		ann < 0 ? -1 : js_raw_get(d, ann, "agentaflow.gpu/devices"));
	h = raw_hash(h, d,
		ann < 0 ? -1 : js_raw_get(d, ann, "canhazgpu.dev/cost"));
	h = raw_hash(h, d, sp < 0 ? -1 : js_raw_get(d, sp, "taints"));
	h = raw_hash(h, d, sp < 0 ? -1 : js_raw_get(d, sp, "unschedulable"));
	return raw_ready(h, d);
}
