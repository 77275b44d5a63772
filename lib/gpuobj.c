/* gpuobj: gpu records to node labels, resources and DRA devices. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gpuobj.h"
#include "mig.h"
#include "quantity.h"

/* ---- small accessors ------------------------------------------------- */

static const char *
sget(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static long long
iget(const json_t *o, const char *key, long long dflt)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) ? (long long)json_number_value(v) : dflt;
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
	return mig_of(gpu) || !json_is_true(json_object_get(gpu, "mig_enabled"));
}

static int
is_unhealthy(const json_t *gpu)
{
	const char *h = sget(gpu, "health");

	return h && strcmp(h, "unhealthy") == 0;
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

/* label_value copies s into buf as a valid label value: at most 63
 * characters of [A-Za-z0-9._-], others turned into '-'. */
static const char *
label_value(const char *s, char *buf, size_t n)
{
	size_t i;

	for (i = 0; s && s[i] && i + 1 < n && i < 63; i++)
		buf[i] = isalnum((unsigned char)s[i]) || strchr("._-", s[i])
			? s[i] : '-';
	buf[i] = '\0';
	return buf;
}

/* semver writes a dotted version with three numeric parts and no leading
 * zeros ("550.90.07" -> "550.90.7", "9.0" -> "9.0.0") into buf; returns
 * NULL when v is not made of 1 to 3 dot-separated numbers. */
static const char *
semver(const char *v, char *buf, size_t n)
{
	long part[3] = {0, 0, 0};
	int i = 0;
	char *end;

	if (!v || !*v)
		return NULL;
	for (;;) {
		if (!isdigit((unsigned char)*v) || i == 3)
			return NULL;
		part[i++] = strtol(v, &end, 10);
		if (*end == '\0')
			break;
		if (*end != '.')
			return NULL;
		v = end + 1;
	}
	snprintf(buf, n, "%ld.%ld.%ld", part[0], part[1], part[2]);
	return buf;
}

/* ---- families ---------------------------------------------------------- */

static const struct family {
	const char *cap;  /* "M.m" prefix matched against compute_cap */
	const char *name; /* GFD label value */
	const char *arch; /* DRA architecture attribute */
} families[] = {
	{"3.", "kepler", "Kepler"},	{"5.", "maxwell", "Maxwell"},
	{"6.", "pascal", "Pascal"},	{"7.0", "volta", "Volta"},
	{"7.2", "volta", "Volta"},	{"7.5", "turing", "Turing"},
	{"8.9", "ada-lovelace", "Ada Lovelace"},
	{"8.", "ampere", "Ampere"},	{"9.", "hopper", "Hopper"},
	{"10.", "blackwell", "Blackwell"}, {"12.", "blackwell", "Blackwell"},
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
			if (sget(g, "product") && strstr(sget(g, "product"), models[j]))
				return 1;
	}
	return 0;
}

/* version_labels adds PREFIX.major/.minor[/.revision]/.full for v. */
static void
version_labels(json_t *labels, const char *prefix, const char *v, int rev)
{
	char key[128], sv[64], buf[64];
	int a, b, c;

	if (!semver(v, sv, sizeof sv) || sscanf(sv, "%d.%d.%d", &a, &b, &c) != 3)
		return;
	snprintf(key, sizeof key, "%s.major", prefix);
	setfmt(labels, key, a);
	snprintf(key, sizeof key, "%s.minor", prefix);
	setfmt(labels, key, b);
	if (rev) {
		snprintf(key, sizeof key, "%s.revision", prefix);
		setfmt(labels, key, c);
	}
	snprintf(key, sizeof key, "%s.full", prefix);
	setstr(labels, key, label_value(v, buf, sizeof buf));
}

/* whole_gpu_labels describes the node's physical GPUs (the first one
 * stands for all, as GPU feature discovery does). */
static void
whole_gpu_labels(json_t *labels, const json_t *first, size_t count)
{
	char buf[64];
	const char *cap = sget(first, "compute_cap");
	int major, minor;

	setstr(labels, "nvidia.com/gpu.present", "true");
	setfmt(labels, "nvidia.com/gpu.count", (long long)count);
	if (sget(first, "product"))
		setstr(labels, "nvidia.com/gpu.product",
			label_value(sget(first, "product"), buf, sizeof buf));
	if (iget(first, "memory_mib", -1) >= 0)
		setfmt(labels, "nvidia.com/gpu.memory", iget(first, "memory_mib", 0));
	setstr(labels, "nvidia.com/gpu.family", gobj_family(cap));
	if (cap && sscanf(cap, "%d.%d", &major, &minor) == 2) {
		setfmt(labels, "nvidia.com/gpu.compute.major", major);
		setfmt(labels, "nvidia.com/gpu.compute.minor", minor);
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
	char key[160], name[32];
	struct mig_profile p;
	const json_t *g;
	size_t i;

	json_array_foreach(gpus, i, g) {
		const json_t *m = mig_of(g);
		json_t *cur;

		if (!m || mig_parse(sget(m, "profile"), &p) < 0)
			continue;
		mig_format(&p, name, sizeof name);
		snprintf(key, sizeof key, "nvidia.com/mig-%s.count", name);
		cur = json_object_get(labels, key);
		setfmt(labels, key, cur ? atoll(json_string_value(cur)) + 1 : 1);
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
		n[!h || !strcmp(h, "ok") ? 0 : !strcmp(h, "warn") ? 1 : 2]++;
		if (mig_of(g))
			continue;
		used += iget(g, "memory_used_mib", 0);
		total += iget(g, "memory_mib", 0);
		tmax = iget(g, "temp_c", -1) > tmax ? iget(g, "temp_c", -1) : tmax;
		if (json_is_number(json_object_get(g, "util_pct"))) {
			util += json_number_value(json_object_get(g, "util_pct"));
			nutil++;
		}
	}
	*util_avg = nutil ? util / nutil : 0;
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
		"health", n[2] ? (n[0] + n[1] ? "degraded" : "unhealthy")
			       : n[1] ? "warn" : "ok",
		"devices", (json_int_t)json_array_size(gpus),
		"ok", (json_int_t)n[0], "warn", (json_int_t)n[1],
		"unhealthy", (json_int_t)n[2],
		"utilization_pct", (json_int_t)(*util_avg + 0.5),
		"memory_used_mib", (json_int_t)used,
		"memory_total_mib", (json_int_t)total,
		"temperature_max_c", tmax >= 0 ? json_integer(tmax) : json_null());
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

		json_array_append_new(list, json_pack(
			"{s:I, s:s?, s:s?, s:I, s:O?, s:O?, s:b, s:s?, s:s?, s:s?, s:O*}",
			"index", (json_int_t)iget(g, "index", 0),
			"uuid", sget(g, "uuid"), "product", sget(g, "product"),
			"memory_mib", (json_int_t)iget(g, "memory_mib", 0),
			"memory_used_mib", json_object_get(g, "memory_used_mib"),
			"util_pct", json_object_get(g, "util_pct"),
			"mig_enabled", json_is_true(json_object_get(g, "mig_enabled")),
			"mig", m ? sget(m, "profile") : NULL,
			"parent_uuid", m ? sget(m, "parent_uuid") : NULL,
			"health", sget(g, "health"),
			"reasons", json_array_size(json_object_get(g, "health_reasons")) ?
				json_object_get(g, "health_reasons") : NULL));
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
	char key[96], name[32];
	struct mig_profile p;
	const json_t *g, *m;
	size_t i;

	json_array_foreach(gpus, i, g) {
		if (!is_device(g))
			continue;
		if (!(m = mig_of(g)))
			snprintf(key, sizeof key, "nvidia.com/gpu");
		else if (mig_parse(sget(m, "profile"), &p) == 0)
			snprintf(key, sizeof key, "nvidia.com/mig-%s",
				mig_format(&p, name, sizeof name));
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

/* device_name: "gpu-<index>", or for MIG "gpu-<index>-mig-<profile>-<n>"
 * with the profile's dots turned into dashes (a DNS label). */
static void
device_name(const json_t *g, char *buf, size_t n, long long seq)
{
	const json_t *m = mig_of(g);
	char prof[32];
	size_t i;

	if (!m) {
		snprintf(buf, n, "gpu-%lld", iget(g, "index", 0));
		return;
	}
	snprintf(prof, sizeof prof, "%s", sget(m, "profile") ? sget(m, "profile") : "x");
	for (i = 0; prof[i]; i++)
		prof[i] = isalnum((unsigned char)prof[i]) ? (char)tolower((unsigned char)prof[i]) : '-';
	snprintf(buf, n, "gpu-%lld-mig-%s-%lld", iget(g, "index", 0), prof,
		iget(m, "device", seq));
}

static json_t *
device(const json_t *g, long long seq)
{
	const json_t *m = mig_of(g);
	const struct family *f = family_of(sget(g, "compute_cap"));
	json_t *attrs = json_object();
	char name[96], mem[QTY_BUFSIZE];
	struct qty q;

	device_name(g, name, sizeof name, seq);
	attr(attrs, "type", "string", json_string(m ? "mig" : "gpu"));
	attr(attrs, "uuid", "string", opt_string(sget(g, "uuid")));
	attr(attrs, "productName", "string", opt_string(sget(g, "name")));
	attr(attrs, "architecture", "string", opt_string(f ? f->arch : NULL));
	attr(attrs, "cudaComputeCapability", "version",
		opt_version(sget(g, "compute_cap")));
	attr(attrs, "driverVersion", "version", opt_version(sget(g, "driver_version")));
	attr(attrs, "cudaDriverVersion", "version", opt_version(sget(g, "cuda_version")));
	attr(attrs, "index", "int", json_integer(iget(g, "index", 0)));
	if (m) {
		attr(attrs, "profile", "string", opt_string(sget(m, "profile")));
		attr(attrs, "parentUUID", "string", opt_string(sget(m, "parent_uuid")));
		attr(attrs, "parentIndex", "int", json_integer(iget(g, "index", 0)));
	}
	/* the canonical form, as the API server stores it ("20Gi") */
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
	long long seq = 0;
	size_t i;

	json_array_foreach(gpus, i, g)
		if (is_device(g) && !is_unhealthy(g))
			json_array_append_new(devs, device(g, seq++));
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
		for (j = i * SLICE_MAX_DEVICES; j < n && j < (i + 1) * SLICE_MAX_DEVICES; j++)
			json_array_append(chunk, json_array_get(devices, j));
		name = easprintf("%s-%zu.%s", node, i, driver);
		json_array_append_new(slices, json_pack(
			"{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:I, s:I}, s:o}}",
			"apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice",
			"metadata", "name", name, "spec", "driver", driver,
			"nodeName", node, "pool", "name", node, "generation",
			(json_int_t)gen, "resourceSliceCount", (json_int_t)count,
			"devices", chunk));
		free(name);
	}
	return slices;
}
