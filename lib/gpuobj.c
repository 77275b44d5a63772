/* gpuobj: gpu records to node labels, resources and DRA devices. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gpuobj.h"
#include "kname.h"
#include "mig.h"
#include "quantity.h"

/* ---- record checks ----------------------------------------------------- */

enum ftype {
	F_STRING,  /* a string */
	F_ATTR,    /* a string a DRA attribute takes: at most 64 bytes */
	F_INT,     /* an integer from 0 to max */
	F_PCT,     /* a number from 0 to 100 */
	F_BOOL,    /* true or false */
	F_HEALTH,  /* "ok", "warn" or "unhealthy" */
	F_REASONS, /* an array of strings */
	F_PROFILE, /* a MIG profile name */
	F_NODE,    /* a node name leaving room for slice names */
	F_MIG,     /* null or an object of mig_fields */
};

struct field {
	const char *key;
	enum ftype type;
	int required; /* absent is bad; null is always bad for these */
	long long max;
};

#define MEMORY_MAX ((1LL << GOBJ_MEMORY_MAX_MIB_SHIFT) - 1)

static const struct field gpu_fields[] = {
	{"node", F_NODE, 1, 0},
	{"index", F_INT, 1, INT_MAX},
	{"uuid", F_ATTR, 0, 0},
	{"name", F_ATTR, 0, 0},
	{"product", F_STRING, 0, 0},
	{"memory_mib", F_INT, 0, MEMORY_MAX},
	{"memory_used_mib", F_INT, 0, MEMORY_MAX},
	{"util_pct", F_PCT, 0, 0},
	{"temp_c", F_INT, 0, INT_MAX},
	{"power_w", F_INT, 0, INT_MAX},
	{"power_limit_w", F_INT, 0, INT_MAX},
	{"ecc_errors", F_INT, 0, LLONG_MAX},
	{"driver_version", F_STRING, 0, 0},
	{"cuda_version", F_STRING, 0, 0},
	{"compute_cap", F_STRING, 0, 0},
	{"pci_bus_id", F_STRING, 0, 0},
	{"mig_enabled", F_BOOL, 0, 0},
	{"mig", F_MIG, 0, 0},
	{"health", F_HEALTH, 1, 0},
	{"health_reasons", F_REASONS, 0, 0},
};

static const struct field mig_fields[] = {
	{"profile", F_PROFILE, 1, 0},
	{"parent_uuid", F_ATTR, 0, 0},
	{"device", F_INT, 1, INT_MAX},
	{"gi", F_INT, 0, INT_MAX},
	{"ci", F_INT, 0, INT_MAX},
};

enum { ATTR_MAX = 64 }; /* resource.k8s.io: a string attribute's bytes */

/* clean_string: v is a string that holds no "\u0000", so that
 * json_string_value gives all of it. */
static int
clean_string(const json_t *v)
{
	return json_is_string(v) &&
		strlen(json_string_value(v)) == json_string_length(v);
}

static int
is_health(const char *h)
{
	return !strcmp(h, "ok") || !strcmp(h, "warn") ||
		!strcmp(h, "unhealthy");
}

/* string_array: v is an array of clean strings. */
static int
string_array(const json_t *v)
{
	const json_t *s;
	size_t i;

	if (!json_is_array(v))
		return 0;
	json_array_foreach(v, i, s)
		if (!clean_string(s))
			return 0;
	return 1;
}

/* field_ok says whether v, not null, is of f's type and range. */
static int
field_ok(const struct field *f, const json_t *v, size_t node_max)
{
	struct mig_profile p;
	double d;

	switch (f->type) {
	case F_STRING: return clean_string(v);
	case F_ATTR:
		return clean_string(v) && json_string_length(v) <= ATTR_MAX;
	case F_INT:
		return json_is_integer(v) && json_integer_value(v) >= 0 &&
			json_integer_value(v) <= f->max;
	case F_PCT:
		d = json_number_value(v);
		return json_is_number(v) && isfinite(d) && d >= 0 && d <= 100;
	case F_BOOL: return json_is_boolean(v);
	case F_HEALTH:
		return clean_string(v) && is_health(json_string_value(v));
	case F_REASONS: return string_array(v);
	case F_PROFILE:
		return clean_string(v) &&
			mig_parse(json_string_value(v), &p) == 0;
	case F_NODE:
		return clean_string(v) &&
			kn_is_dns_subdomain(json_string_value(v), node_max);
	case F_MIG: return json_is_object(v);
	}
	return 0;
}

/* what_it_must_be says in words what f must hold. */
static void
what_it_must_be(const struct field *f, const json_t *v, size_t node_max,
	char *buf, size_t n)
{
	switch (f->type) {
	case F_STRING:
		snprintf(buf, n,
			json_is_string(v) ? "a string without \\u0000"
					  : "a string");
		break;
	case F_ATTR:
		snprintf(buf, n, "a string of at most %d bytes without \\u0000",
			ATTR_MAX);
		break;
	case F_INT:
		if (f->max == LLONG_MAX)
			snprintf(buf, n, "a non-negative integer");
		else
			snprintf(buf, n, "an integer from 0 to %lld", f->max);
		break;
	case F_PCT: snprintf(buf, n, "a number from 0 to 100"); break;
	case F_BOOL: snprintf(buf, n, "true or false"); break;
	case F_HEALTH:
		snprintf(buf, n, "\"ok\", \"warn\" or \"unhealthy\"");
		break;
	case F_REASONS:
		snprintf(buf, n, "an array of strings without \\u0000");
		break;
	case F_PROFILE:
		snprintf(buf, n, "a MIG profile name such as \"1g.10gb\"");
		break;
	case F_NODE:
		snprintf(buf, n,
			"a node name: a DNS subdomain of at most %zu bytes",
			node_max);
		break;
	case F_MIG: snprintf(buf, n, "null or an object"); break;
	}
}

void
gobj_shown(const json_t *v, char *buf, size_t n)
{
	char *s = json_dumps(v,
		JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII);

	if (!s)
		err_die(HAZ_FAIL, "json_dumps: out of memory");
	if (strlen(s) > 48)
		snprintf(buf, n, "%.45s...", s);
	else
		snprintf(buf, n, "%s", s);
	free(s);
}

/* check_fields checks the fields of obj (prefix names its place, "" or
 * "mig.") against fields[0..nf). Returns 0, or -1 with why. */
static int
check_fields(const json_t *obj, const char *prefix, const struct field *fields,
	size_t nf, size_t node_max, char *why, size_t n)
{
	char must[96], val[64];
	const json_t *v;
	size_t i;

	for (i = 0; i < nf; i++) {
		v = json_object_get(obj, fields[i].key);
		if (!v && fields[i].required) {
			snprintf(why, n, "field \"%s%s\" is missing", prefix,
				fields[i].key);
			return -1;
		}
		if (!v || (json_is_null(v) && !fields[i].required))
			continue;
		if (json_is_null(v) || !field_ok(&fields[i], v, node_max)) {
			what_it_must_be(&fields[i], v, node_max, must,
				sizeof must);
			gobj_shown(v, val, sizeof val);
			snprintf(why, n, "field \"%s%s\" must be %s, not %s",
				prefix, fields[i].key, must, val);
			return -1;
		}
	}
	return 0;
}

int
gobj_check(const json_t *rec, const char *driver, char *why, size_t n)
{
	size_t room = strlen(driver) + GOBJ_SLICE_NAME_EXTRA;
	size_t node_max = room < KN_SUBDOMAIN_MAX ? KN_SUBDOMAIN_MAX - room : 0;
	const json_t *m = json_object_get(rec, "mig");

	if (check_fields(rec, "", gpu_fields,
		    sizeof gpu_fields / sizeof *gpu_fields, node_max, why,
		    n) < 0)
		return -1;
	if (json_is_object(m) &&
		check_fields(m, "mig.", mig_fields,
			sizeof mig_fields / sizeof *mig_fields, node_max, why,
			n) < 0)
		return -1;
	return 0;
}

/* ---- small accessors ------------------------------------------------- */

/* Records are checked: a string field is a clean string or absent. */
static const char *
sget(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* iget is the integer field key of o, or dflt when it is null or absent. */
static long long
iget(const json_t *o, const char *key, long long dflt)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

static const json_t *
mig_of(const json_t *gpu)
{
	const json_t *m = json_object_get(gpu, "mig");

	return json_is_object(m) ? m : NULL;
}

/* allocatable devices: MIG devices, and whole GPUs with MIG off */
static int
is_device(const json_t *gpu)
{
	return mig_of(gpu) ||
		!json_is_true(json_object_get(gpu, "mig_enabled"));
}

static int
is_unhealthy(const json_t *gpu)
{
	return strcmp(sget(gpu, "health"), "unhealthy") == 0;
}

static void
setstr(json_t *o, const char *key, const char *val)
{
	json_object_set_new(o, key, json_string(val));
}

static void
setfmt(json_t *o, const char *key, long long val)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%lld", val);
	setstr(o, key, buf);
}

/* add is a + b, or the largest long long when that overflows. */
static long long
add(long long a, long long b)
{
	long long sum;

	return __builtin_add_overflow(a, b, &sum) ? LLONG_MAX : sum;
}

/* version reads 1 to 3 dot-separated decimal numbers, each at most
 * 999999999, from v into part (missing ones 0). Returns how many there
 * were, or 0 when v is not such a version. */
static int
version(const char *v, long part[3])
{
	int i = 0, digits;

	part[0] = part[1] = part[2] = 0;
	if (!v)
		return 0;
	for (;;) {
		if (i == 3 || !isdigit((unsigned char)*v))
			return 0;
		for (digits = 0; isdigit((unsigned char)*v); v++, digits++) {
			if (digits == 9)
				return 0;
			part[i] = part[i] * 10 + (*v - '0');
		}
		i++;
		if (*v == '\0')
			return i;
		if (*v++ != '.')
			return 0;
	}
}

/* semver writes a dotted version with three numeric parts and no leading
 * zeros ("550.90.07" -> "550.90.7", "9.0" -> "9.0.0") into buf; returns
 * NULL when v is not made of 1 to 3 dot-separated numbers. */
static const char *
semver(const char *v, char *buf, size_t n)
{
	long part[3];

	if (!version(v, part))
		return NULL;
	snprintf(buf, n, "%ld.%ld.%ld", part[0], part[1], part[2]);
	return buf;
}

/* profile_key writes the label-key form of a MIG profile into buf
 * (KN_LABEL_MAX + 1 bytes): its canonical name through kn_label_value,
 * so "1g.10gb+me" gives "1g.10gbme". NULL when it is no profile. */
static const char *
profile_key(const char *profile, char *buf)
{
	struct mig_profile p;
	char name[32];

	if (mig_parse(profile, &p) < 0)
		return NULL;
	return kn_label_value(mig_format(&p, name, sizeof name), buf);
}

/* ---- families ---------------------------------------------------------- */

static const struct family {
	const char *cap;  /* "M.m" prefix matched against compute_cap */
	const char *name; /* GFD label value */
	const char *arch; /* DRA architecture attribute */
} families[] = {
	{"3.", "kepler", "Kepler"},
	{"5.", "maxwell", "Maxwell"},
	{"6.", "pascal", "Pascal"},
	{"7.0", "volta", "Volta"},
	{"7.2", "volta", "Volta"},
	{"7.5", "turing", "Turing"},
	{"8.9", "ada-lovelace", "Ada Lovelace"},
	{"8.", "ampere", "Ampere"},
	{"9.", "hopper", "Hopper"},
	{"10.", "blackwell", "Blackwell"},
	{"12.", "blackwell", "Blackwell"},
};

static const struct family *
family_of(const char *cap)
{
	size_t i;

	for (i = 0; cap && i < sizeof families / sizeof *families; i++)
		if (strncmp(cap, families[i].cap, strlen(families[i].cap)) == 0)
			return &families[i];
	return NULL;
}

const char *
gobj_family(const char *compute_cap)
{
	const struct family *f = family_of(compute_cap);

	return f ? f->name : "undefined";
}

/* ---- labels and annotations ------------------------------------------ */

/* mig_capable: MIG is on somewhere, or the product is one that has it. */
static int
mig_capable(const json_t *gpus)
{
	static const char *const models[] = {"A100", "A30", "A800", "H100",
		"H200", "H800", "H20", "B100", "B200", "GB200", "B300", NULL};
	const json_t *g;
	size_t i, j;

	json_array_foreach(gpus, i, g) {
		if (json_is_true(json_object_get(g, "mig_enabled")))
			return 1;
		for (j = 0; models[j]; j++)
			if (sget(g, "product") &&
				strstr(sget(g, "product"), models[j]))
				return 1;
	}
	return 0;
}

/* label_from sets label key to the label value s gives, unless that is
 * empty. */
static void
label_from(json_t *labels, const char *key, const char *s)
{
	char buf[KN_LABEL_MAX + 1];

	if (*kn_label_value(s, buf))
		setstr(labels, key, buf);
}

/* version_labels adds PREFIX.major/.minor[/.revision]/.full for v. */
static void
version_labels(json_t *labels, const char *prefix, const char *v, int rev)
{
	char key[128];
	long part[3];

	if (!version(v, part))
		return;
	snprintf(key, sizeof key, "%s.major", prefix);
	setfmt(labels, key, part[0]);
	snprintf(key, sizeof key, "%s.minor", prefix);
	setfmt(labels, key, part[1]);
	if (rev) {
		snprintf(key, sizeof key, "%s.revision", prefix);
		setfmt(labels, key, part[2]);
	}
	snprintf(key, sizeof key, "%s.full", prefix);
	label_from(labels, key, v);
}

/* whole_gpu_labels describes the node's physical GPUs (the first one
 * stands for all, as GPU feature discovery does). */
static void
whole_gpu_labels(json_t *labels, const json_t *first, size_t count)
{
	const char *cap = sget(first, "compute_cap");
	long part[3];

	setstr(labels, "nvidia.com/gpu.present", "true");
	setfmt(labels, "nvidia.com/gpu.count", (long long)count);
	if (sget(first, "product"))
		label_from(labels, "nvidia.com/gpu.product",
			sget(first, "product"));
	if (iget(first, "memory_mib", -1) >= 0)
		setfmt(labels, "nvidia.com/gpu.memory",
			iget(first, "memory_mib", 0));
	setstr(labels, "nvidia.com/gpu.family", gobj_family(cap));
	if (version(cap, part) >= 2) {
		setfmt(labels, "nvidia.com/gpu.compute.major", part[0]);
		setfmt(labels, "nvidia.com/gpu.compute.minor", part[1]);
	}
	version_labels(labels, "nvidia.com/cuda.driver-version",
		sget(first, "driver_version"), 1);
	version_labels(labels, "nvidia.com/cuda.runtime-version",
		sget(first, "cuda_version"), 0);
}

/* mig_labels adds nvidia.com/mig-<profile>.count, .memory, .slices.gi and
 * .slices.ci for every profile present. */
static void
mig_labels(json_t *labels, const json_t *gpus)
{
	char key[160], name[KN_LABEL_MAX + 1];
	struct mig_profile p;
	const json_t *g;
	size_t i;

	json_array_foreach(gpus, i, g) {
		const json_t *m = mig_of(g);
		json_t *cur;

		if (!m || mig_parse(sget(m, "profile"), &p) < 0)
			continue;
		profile_key(sget(m, "profile"), name);
		snprintf(key, sizeof key, "nvidia.com/mig-%s.count", name);
		cur = json_object_get(labels, key);
		setfmt(labels, key,
			cur ? atoll(json_string_value(cur)) + 1 : 1);
		snprintf(key, sizeof key, "nvidia.com/mig-%s.memory", name);
		setfmt(labels, key, mig_memory_mib(&p));
		snprintf(key, sizeof key, "nvidia.com/mig-%s.slices.gi", name);
		setfmt(labels, key, p.slices);
		snprintf(key, sizeof key, "nvidia.com/mig-%s.slices.ci", name);
		setfmt(labels, key, p.compute);
	}
}

static const char *
tier(double util)
{
	return util < 30 ? "low" : util < 70 ? "medium" : "high";
}

/* summary returns the agentaflow.gpu/status document. */
static json_t *
summary(const json_t *gpus, double *util_avg)
{
	long long n[3] = {0, 0, 0}, used = 0, total = 0, tmax = -1;
	double util = 0;
	int nutil = 0;
	const json_t *g;
	const char *h;
	size_t i;

	json_array_foreach(gpus, i, g) {
		h = sget(g, "health");
		n[!strcmp(h, "ok") ? 0 : !strcmp(h, "warn") ? 1 : 2]++;
		if (mig_of(g))
			continue;
		used = add(used, iget(g, "memory_used_mib", 0));
		total = add(total, iget(g, "memory_mib", 0));
		tmax = iget(g, "temp_c", -1) > tmax ? iget(g, "temp_c", -1)
						    : tmax;
		if (json_is_number(json_object_get(g, "util_pct"))) {
			util += json_number_value(
				json_object_get(g, "util_pct"));
			nutil++;
		}
	}
	*util_avg = nutil ? util / nutil : 0;
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
		"health",
		n[2]           ? (n[0] + n[1] ? "degraded" : "unhealthy")
			: n[1] ? "warn"
			       : "ok",
		"devices", (json_int_t)json_array_size(gpus), "ok",
		(json_int_t)n[0], "warn", (json_int_t)n[1], "unhealthy",
		(json_int_t)n[2], "utilization_pct",
		(json_int_t)(*util_avg + 0.5), "memory_used_mib",
		(json_int_t)used, "memory_total_mib", (json_int_t)total,
		"temperature_max_c",
		tmax >= 0 ? json_integer(tmax) : json_null());
}

/* device_list returns the agentaflow.gpu/devices document. */
static json_t *
device_list(const json_t *gpus)
{
	json_t *list = json_array();
	const json_t *g;
	size_t i;

	json_array_foreach(gpus, i, g) {
		const json_t *m = mig_of(g);

		json_array_append_new(list,
			json_pack(
				"{s:I, s:s?, s:s?, s:I, s:O?, s:O?, s:b, s:s?, s:s?, s:s?, s:O*}",
				"index", (json_int_t)iget(g, "index", 0),
				"uuid", sget(g, "uuid"), "product",
				sget(g, "product"), "memory_mib",
				(json_int_t)iget(g, "memory_mib", 0),
				"memory_used_mib",
				json_object_get(g, "memory_used_mib"),
				"util_pct", json_object_get(g, "util_pct"),
				"mig_enabled",
				json_is_true(json_object_get(g, "mig_enabled")),
				"mig", m ? sget(m, "profile") : NULL,
				"parent_uuid",
				m ? sget(m, "parent_uuid") : NULL, "health",
				sget(g, "health"), "reasons",
				json_array_size(
					json_object_get(g, "health_reasons"))
					? json_object_get(g, "health_reasons")
					: NULL));
	}
	return list;
}

/* as_string returns v serialized compactly as a JSON string value, and
 * releases v. */
static json_t *
as_string(json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT);
	json_t *str;

	json_decref(v);
	if (!s)
		err_die(HAZ_FAIL, "json_dumps: out of memory");
	str = json_string(s);
	free(s);
	return str;
}

/* has_mig says whether any record is a MIG device. */
static int
has_mig(const json_t *gpus)
{
	const json_t *g;
	size_t i;

	json_array_foreach(gpus, i, g)
		if (mig_of(g))
			return 1;
	return 0;
}

json_t *
gobj_metadata(const json_t *gpus, time_t now)
{
	json_t *labels = json_object(), *ann = json_object();
	const json_t *g, *first = NULL;
	size_t i, whole = 0, usable = 0;
	char stamp[32];
	struct tm tm;
	double util;

	json_array_foreach(gpus, i, g) {
		if (!mig_of(g) && !whole++)
			first = g;
		usable += is_device(g) && !is_unhealthy(g);
	}
	if (first)
		whole_gpu_labels(labels, first, whole);
	if (json_array_size(gpus)) {
		setstr(labels, "nvidia.com/mig.capable",
			mig_capable(gpus) ? "true" : "false");
		setstr(labels, "nvidia.com/mig.strategy",
			has_mig(gpus) ? "mixed" : "none");
		mig_labels(labels, gpus);
	}
	json_object_set_new(ann, "agentaflow.gpu/status",
		as_string(summary(gpus, &util)));
	setstr(labels, "agentaflow.gpu/enabled", whole ? "true" : "false");
	setstr(labels, "agentaflow.gpu/schedulable", usable ? "true" : "false");
	setfmt(labels, "agentaflow.gpu/count", (long long)whole);
	setstr(labels, "agentaflow.gpu/utilization-tier", tier(util));
	json_object_set_new(ann, "agentaflow.gpu/devices",
		as_string(device_list(gpus)));
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
	setstr(ann, "agentaflow.gpu/last-update", stamp);
	return json_pack("{s:o, s:o}", "labels", labels, "annotations", ann);
}

/* ---- extended resources ---------------------------------------------- */

static void
bump(json_t *o, const char *key)
{
	json_t *cur = json_object_get(o, key);

	setfmt(o, key, cur ? atoll(json_string_value(cur)) + 1 : 1);
}

json_t *
gobj_resources(const json_t *gpus)
{
	json_t *cap = json_object(), *alloc = json_object();
	char key[96], name[KN_LABEL_MAX + 1];
	const json_t *g, *m;
	size_t i;

	json_array_foreach(gpus, i, g) {
		if (!is_device(g))
			continue;
		if (!(m = mig_of(g)))
			snprintf(key, sizeof key, "nvidia.com/gpu");
		else if (profile_key(sget(m, "profile"), name))
			snprintf(key, sizeof key, "nvidia.com/mig-%s", name);
		else
			continue;
		bump(cap, key);
		if (!json_object_get(alloc, key))
			setstr(alloc, key, "0");
		if (!is_unhealthy(g))
			bump(alloc, key);
	}
	return json_pack("{s:o, s:o}", "capacity", cap, "allocatable", alloc);
}

/* ---- DRA devices ------------------------------------------------------- */

static void
attr(json_t *attrs, const char *name, const char *type, json_t *val)
{
	if (!val)
		return;
	json_object_set_new(attrs, name, json_pack("{s:o}", type, val));
}

static json_t *
opt_string(const char *s)
{
	return s ? json_string(s) : NULL;
}

static json_t *
opt_version(const char *v)
{
	char buf[64];

	return semver(v, buf, sizeof buf) ? json_string(buf) : NULL;
}

char *
gobj_device_name(const json_t *g, char *buf)
{
	const json_t *m = mig_of(g);
	char prof[32];
	size_t i;

	if (!m) {
		snprintf(buf, GOBJ_DEVICE_NAME_MAX, "gpu-%lld",
			iget(g, "index", 0));
		return buf;
	}
	snprintf(prof, sizeof prof, "%s", sget(m, "profile"));
	for (i = 0; prof[i]; i++)
		prof[i] = isalnum((unsigned char)prof[i])
			? (char)tolower((unsigned char)prof[i])
			: '-';
	snprintf(buf, GOBJ_DEVICE_NAME_MAX, "gpu-%lld-mig-%s-%lld",
		iget(g, "index", 0), prof, iget(m, "device", 0));
	return buf;
}

static json_t *
device(const json_t *g)
{
	const json_t *m = mig_of(g);
	const struct family *f = family_of(sget(g, "compute_cap"));
	json_t *attrs = json_object();
	char name[GOBJ_DEVICE_NAME_MAX], mem[QTY_BUFSIZE];
	struct qty q;

	gobj_device_name(g, name);
	attr(attrs, "type", "string", json_string(m ? "mig" : "gpu"));
	attr(attrs, "uuid", "string", opt_string(sget(g, "uuid")));
	attr(attrs, "productName", "string", opt_string(sget(g, "name")));
	attr(attrs, "architecture", "string", opt_string(f ? f->arch : NULL));
	attr(attrs, "cudaComputeCapability", "version",
		opt_version(sget(g, "compute_cap")));
	attr(attrs, "driverVersion", "version",
		opt_version(sget(g, "driver_version")));
	attr(attrs, "cudaDriverVersion", "version",
		opt_version(sget(g, "cuda_version")));
	attr(attrs, "index", "int", json_integer(iget(g, "index", 0)));
	if (m) {
		attr(attrs, "profile", "string",
			opt_string(sget(m, "profile")));
		attr(attrs, "parentUUID", "string",
			opt_string(sget(m, "parent_uuid")));
		attr(attrs, "parentIndex", "int",
			json_integer(iget(g, "index", 0)));
	}
	/* the canonical form, as the API server stores it ("20Gi"); checked
	 * records keep the bytes within 63 bits */
	qty_from_int(&q, iget(g, "memory_mib", 0) * 1024 * 1024, QTY_BINARY_SI);
	qty_format(&q, mem);
	return json_pack("{s:s, s:o, s:{s:{s:s}}}", "name", name, "attributes",
		attrs, "capacity", "memory", "value", mem);
}

json_t *
gobj_devices(const json_t *gpus)
{
	json_t *devs = json_array();
	const json_t *g;
	size_t i;

	json_array_foreach(gpus, i, g)
		if (is_device(g) && !is_unhealthy(g))
			json_array_append_new(devs, device(g));
	return devs;
}

enum { SLICE_MAX_DEVICES = 128 };

json_t *
gobj_slices(const char *node, const char *driver, long long gen,
	const json_t *devices)
{
	size_t n = json_array_size(devices), count, i, j;
	json_t *slices = json_array(), *chunk;
	char *name;

	count = (n + SLICE_MAX_DEVICES - 1) / SLICE_MAX_DEVICES;
	for (i = 0; i < count; i++) {
		chunk = json_array();
		for (j = i * SLICE_MAX_DEVICES;
			j < n && j < (i + 1) * SLICE_MAX_DEVICES; j++)
			json_array_append(chunk, json_array_get(devices, j));
		name = easprintf("%s-%zu.%s", node, i, driver);
		json_array_append_new(slices,
			json_pack(
				"{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:I, s:I}, s:o}}",
				"apiVersion", "resource.k8s.io/v1", "kind",
				"ResourceSlice", "metadata", "name", name,
				"spec", "driver", driver, "nodeName", node,
				"pool", "name", node, "generation",
				(json_int_t)gen, "resourceSliceCount",
				(json_int_t)count, "devices", chunk));
		free(name);
	}
	return slices;
}
