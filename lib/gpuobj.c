/* gpuobj: gpu records to node labels, resources and DRA devices; the
 * checks of a record are in gpuobj_check.c. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gpuobj.h"
#include "kname.h"
#include "mig.h"
#include "nvproc.h"
#include "quantity.h"

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

/* ---- holds on the host ------------------------------------------------- */

/* holds_by_index returns an object mapping the index (in decimal) of
 * every GPU some record of gpus marks held to the first such record's
 * hold (borrowed from it). A MIG device carries its parent's index, so
 * one held record withholds every device of that GPU. */
static json_t *
holds_by_index(const json_t *gpus)
{
	json_t *holds = json_object(), *h;
	const json_t *g;
	char key[24];
	size_t i;

	json_array_foreach(gpus, i, g) {
		h = json_object_get(g, "held");
		snprintf(key, sizeof key, "%lld", iget(g, "index", 0));
		if (json_is_object(h) && !json_object_get(holds, key))
			json_object_set(holds, key, h);
	}
	return holds;
}

/* hold_of is the hold on g's GPU in holds (see holds_by_index), or NULL
 * when the host holds none. */
static const json_t *
hold_of(const json_t *holds, const json_t *g)
{
	char key[24];

	snprintf(key, sizeof key, "%lld", iget(g, "index", 0));
	return json_object_get(holds, key);
}

/* offered: g is a device Kubernetes may have, neither unhealthy nor on a
 * GPU the host holds. */
static int
offered(const json_t *holds, const json_t *g)
{
	return is_device(g) && !is_unhealthy(g) && !hold_of(holds, g);
}

char *
gobj_offered(const json_t *gpus, char **held)
{
	json_t *holds = holds_by_index(gpus);
	size_t n = json_array_size(gpus), i;
	char *yes = ecalloc(n ? n : 1, 1);
	const json_t *g;

	if (held)
		*held = ecalloc(n ? n : 1, 1);
	json_array_foreach(gpus, i, g) {
		yes[i] = (char)offered(holds, g);
		if (held)
			(*held)[i] = hold_of(holds, g) != NULL;
	}
	json_decref(holds);
	return yes;
}

int
gobj_is_device(const json_t *rec)
{
	return is_device(rec);
}

static int
by_gpu(const void *a, const void *b)
{
	long long x = json_integer_value(json_object_get(*(json_t **)a, "gpu"));
	long long y = json_integer_value(json_object_get(*(json_t **)b, "gpu"));

	return (x > y) - (x < y);
}

/* host_holds returns the canhazgpu.dev/host-holds document: one entry
 * per held GPU, by index, naming the holder; NULL when none is held. */
static json_t *
host_holds(const json_t *holds)
{
	static const char *const keys[] = {"user", "type", "since", "expires",
		"note"};
	size_t n = json_object_size(holds), i = 0, k;
	json_t **entry, *list, *h, *v;
	const char *idx;

	if (!n)
		return NULL;
	entry = ecalloc(n, sizeof *entry);
	json_object_foreach((json_t *)holds, idx, h) {
		entry[i] = json_pack("{s:I}", "gpu", (json_int_t)atoll(idx));
		for (k = 0; k < sizeof keys / sizeof *keys; k++) {
			v = json_object_get(h, keys[k]);
			json_object_set(entry[i], keys[k],
				json_is_string(v) ? v : json_null());
		}
		i++;
	}
	qsort(entry, n, sizeof *entry, by_gpu);
	list = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(list, entry[i]);
	free(entry);
	return list;
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

/* version_parts splits v, a version of 2 or 3 dot-separated decimal
 * numbers of at most 9 digits, into part[] as printed (leading zeros
 * kept: "04" stays "04", as GPU feature discovery writes it); the third is
 * "" when v has two. Returns how many there were, or 0 when v is not
 * such a version. */
static int
version_parts(const char *v, char part[3][10])
{
	long num[3];
	int n = version(v, num), i;
	size_t len;

	if (n < 2)
		return 0;
	part[2][0] = '\0';
	for (i = 0; i < n; i++) {
		len = strspn(v, "0123456789");
		memcpy(part[i], v, len);
		part[i][len] = '\0';
		v += len + 1;
	}
	return n;
}

/* part_labels adds PREFIX.major, .minor and, with rev, PREFIX.<rev> from
 * part. */
static void
part_labels(json_t *labels, const char *prefix, const char *rev,
	char part[3][10])
{
	char key[128];

	snprintf(key, sizeof key, "%s.major", prefix);
	setstr(labels, key, part[0]);
	snprintf(key, sizeof key, "%s.minor", prefix);
	setstr(labels, key, part[1]);
	if (rev) {
		snprintf(key, sizeof key, "%s.%s", prefix, rev);
		setstr(labels, key, part[2]);
	}
}

/* version_labels adds PREFIX.major/.minor[/.revision]/.full for v, and
 * the deprecated OLD.major/.minor[/.rev] GPU feature discovery still
 * writes beside them (when old is not NULL), every part as printed. */
static void
version_labels(json_t *labels, const char *prefix, const char *old,
	const char *v, int rev)
{
	char key[128], part[3][10];

	if (!version_parts(v, part))
		return;
	part_labels(labels, prefix, rev ? "revision" : NULL, part);
	snprintf(key, sizeof key, "%s.full", prefix);
	label_from(labels, key, v);
	if (old)
		part_labels(labels, old, rev ? "rev" : NULL, part);
}

/* gpu_mode names what the PCI class of a GPU says it is, as GPU feature
 * discovery does: a VGA controller (0x030000) is "graphics", a 3D
 * controller (0x030200) "compute", anything else or unknown "unknown". */
static const char *
gpu_mode(const char *pci_class)
{
	if (!pci_class)
		return "unknown";
	if (!strcmp(pci_class, "0x030000"))
		return "graphics";
	if (!strcmp(pci_class, "0x030200"))
		return "compute";
	return "unknown";
}

/* machine_label sets nvidia.com/gpu.machine from the node's DMI product
 * name, spaces made dashes as GPU feature discovery does (then cut to a
 * label value), or "unknown" when the name is not known. */
static void
machine_label(json_t *labels, const char *machine)
{
	char buf[KN_LABEL_MAX + 1], *dash, *p;

	if (!machine || !*machine) {
		setstr(labels, "nvidia.com/gpu.machine", "unknown");
		return;
	}
	dash = estrdup(machine);
	for (p = dash; *p; p++)
		if (*p == ' ')
			*p = '-';
	setstr(labels, "nvidia.com/gpu.machine",
		*kn_label_value(dash, buf) ? buf : "unknown");
	free(dash);
}

/* whole_gpu_labels describes the node's physical GPUs (the first one
 * stands for all, as GPU feature discovery does). Nothing here is shared
 * (no time-slicing or MPS replicas): replicas 1, strategy none. */
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
	setstr(labels, "nvidia.com/gpu.replicas", "1");
	setstr(labels, "nvidia.com/gpu.sharing-strategy", "none");
	setstr(labels, "nvidia.com/gpu.mode",
		gpu_mode(sget(first, "pci_class")));
	machine_label(labels, sget(first, "machine"));
	setstr(labels, "nvidia.com/mps.capable", "false");
	version_labels(labels, "nvidia.com/cuda.driver-version",
		"nvidia.com/cuda.driver", sget(first, "driver_version"), 1);
	version_labels(labels, "nvidia.com/cuda.runtime-version",
		"nvidia.com/cuda.runtime", sget(first, "cuda_version"), 0);
}

/* mig_labels adds nvidia.com/mig-<profile>.count (the devices of the
 * profile offered: "0" when none is), .memory, .slices.gi, .slices.ci,
 * .replicas (1: no sharing) and .product ("<product>-MIG-<profile>", as
 * GPU feature discovery's mixed strategy writes it) for every profile
 * present. */
static void
mig_labels(json_t *labels, const json_t *gpus, const json_t *holds)
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
			(cur ? atoll(json_string_value(cur)) : 0) +
				offered(holds, g));
		snprintf(key, sizeof key, "nvidia.com/mig-%s.memory", name);
		setfmt(labels, key, mig_memory_mib(&p));
		snprintf(key, sizeof key, "nvidia.com/mig-%s.slices.gi", name);
		setfmt(labels, key, p.slices);
		snprintf(key, sizeof key, "nvidia.com/mig-%s.slices.ci", name);
		setfmt(labels, key, p.compute);
		snprintf(key, sizeof key, "nvidia.com/mig-%s.replicas", name);
		setstr(labels, key, "1");
		if (sget(g, "product")) {
			char *prod = easprintf("%s-MIG-%s", sget(g, "product"),
				name);

			snprintf(key, sizeof key, "nvidia.com/mig-%s.product",
				name);
			label_from(labels, key, prod);
			free(prod);
		}
	}
}

/* the GPU_UTILIZATION_GOAL in force (gobj_set_goal) */
static int utilization_goal = GOBJ_GOAL_DEFAULT;

void
gobj_set_goal(int pct)
{
	utilization_goal = pct;
}

const char *
gobj_tier(double util)
{
	/* low below 3/8 of the goal, medium below 7/8: 30 and 70 at 80 */
	return util * 8 < 3.0 * utilization_goal    ? "low"
		: util * 8 < 7.0 * utilization_goal ? "medium"
						    : "high";
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

/* or_null returns a new reference to v, or JSON null when v is absent. */
static json_t *
or_null(json_t *v)
{
	return v ? json_incref(v) : json_null();
}

/* device_list returns the agentaflow.gpu/devices document. */
static json_t *
device_list(const json_t *gpus, const json_t *holds)
{
	json_t *list = json_array();
	const json_t *g;
	size_t i;

	json_array_foreach(gpus, i, g) {
		const json_t *m = mig_of(g);

		json_array_append_new(list,
			json_pack(
				"{s:I, s:s?, s:s?, s:I, s:O?, s:O?, s:b, s:s?, s:s?, s:s?, s:b, s:O*, s:o, s:o, s:o}",
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
				sget(g, "health"), "held",
				hold_of(holds, g) != NULL, "reasons",
				json_array_size(
					json_object_get(g, "health_reasons"))
					? json_object_get(g, "health_reasons")
					: NULL,
				"temp_c", or_null(json_object_get(g, "temp_c")),
				"ecc_errors",
				or_null(json_object_get(g, "ecc_errors")),
				"health_reasons",
				json_is_array(
					json_object_get(g, "health_reasons"))
					? json_deep_copy(json_object_get(g,
						  "health_reasons"))
					: json_array()));
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
	json_t *holds = holds_by_index(gpus), *held = host_holds(holds);
	const json_t *g, *first = NULL;
	size_t i, whole = 0, free_gpus = 0, usable = 0;
	char stamp[32];
	struct tm tm;
	double util;

	json_array_foreach(gpus, i, g) {
		if (!mig_of(g) && !whole++)
			first = g;
		free_gpus += !mig_of(g) && !is_unhealthy(g) &&
			!hold_of(holds, g);
		usable += offered(holds, g);
	}
	if (first)
		whole_gpu_labels(labels, first, whole);
	if (json_array_size(gpus)) {
		setstr(labels, "nvidia.com/mig.capable",
			mig_capable(gpus) ? "true" : "false");
		setstr(labels, "nvidia.com/mig.strategy",
			has_mig(gpus) ? "mixed" : "none");
		mig_labels(labels, gpus, holds);
	}
	json_object_set_new(ann, "agentaflow.gpu/status",
		as_string(summary(gpus, &util)));
	setstr(labels, "agentaflow.gpu/enabled", whole ? "true" : "false");
	setstr(labels, "agentaflow.gpu/schedulable", usable ? "true" : "false");
	setfmt(labels, "agentaflow.gpu/count", (long long)free_gpus);
	setstr(labels, "agentaflow.gpu/utilization-tier", gobj_tier(util));
	json_object_set_new(ann, "agentaflow.gpu/devices",
		as_string(device_list(gpus, holds)));
	if (held)
		json_object_set_new(ann, "canhazgpu.dev/host-holds",
			as_string(held));
	json_decref(holds);
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
	json_t *holds = holds_by_index(gpus);
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
		if (offered(holds, g))
			bump(alloc, key);
	}
	json_decref(holds);
	return json_pack("{s:o, s:o}", "capacity", cap, "allocatable", alloc);
}

char *
gobj_resource_name(const json_t *rec, char *buf, size_t n)
{
	char name[KN_LABEL_MAX + 1];
	const json_t *m = mig_of(rec);

	if (!is_device(rec))
		return NULL;
	if (!m)
		snprintf(buf, n, "nvidia.com/gpu");
	else if (profile_key(sget(m, "profile"), name))
		snprintf(buf, n, "nvidia.com/mig-%s", name);
	else
		return NULL;
	return buf;
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

/* node_number is the number of rec's GPU in names: its minor number (that
 * of /dev/nvidia<minor>, a MIG device's parent's) when the record has
 * it, else its index. */
static long long
node_number(const json_t *rec)
{
	return iget(rec, "minor", iget(rec, "index", 0));
}

char *
gobj_device_name(const json_t *g, char *buf)
{
	const json_t *m = mig_of(g);
	char prof[32];
	size_t i;

	if (!m) {
		snprintf(buf, GOBJ_DEVICE_NAME_MAX, "gpu-%lld", node_number(g));
		return buf;
	}
	snprintf(prof, sizeof prof, "%s", sget(m, "profile"));
	for (i = 0; prof[i]; i++)
		prof[i] = isalnum((unsigned char)prof[i])
			? (char)tolower((unsigned char)prof[i])
			: '-';
	snprintf(buf, GOBJ_DEVICE_NAME_MAX, "gpu-%lld-mig-%s-%lld",
		node_number(g), prof, iget(m, "device", 0));
	return buf;
}

/* pci_bus_id is nvidia-smi's bus id ("00000000:00:06.0") in the form of
 * the standard resource.kubernetes.io/pciBusID attribute, the Linux one
 * (np_bus_id: "0000:00:06.0"); NULL when id is no PCI address. */
static json_t *
pci_bus_id(const char *id)
{
	char buf[NP_BUS_SIZE];

	return id && np_bus_id(id, buf) == 0 ? json_string(buf) : NULL;
}

/* opt_int is a new integer for the integer field key of o, or NULL. */
static json_t *
opt_int(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? json_integer(json_integer_value(v)) : NULL;
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
	attr(attrs, "brand", "string", opt_string(sget(g, "brand")));
	attr(attrs, "architecture", "string", opt_string(f ? f->arch : NULL));
	attr(attrs, "cudaComputeCapability", "version",
		opt_version(sget(g, "compute_cap")));
	attr(attrs, "driverVersion", "version",
		opt_version(sget(g, "driver_version")));
	attr(attrs, "cudaDriverVersion", "version",
		opt_version(sget(g, "cuda_version")));
	attr(attrs, "addressingMode", "string",
		opt_string(sget(g, "addressing_mode")));
	attr(attrs, "index", "int", json_integer(iget(g, "index", 0)));
	attr(attrs, m ? "parentMinor" : "minor", "int", opt_int(g, "minor"));
	attr(attrs, "numaNode", "int", opt_int(g, "numa_node"));
	attr(attrs, "resource.kubernetes.io/pcieRoot", "string",
		opt_string(sget(g, "pcie_root")));
	if (m) {
		attr(attrs, "profile", "string",
			opt_string(sget(m, "profile")));
		attr(attrs, "parentUUID", "string",
			opt_string(sget(m, "parent_uuid")));
		attr(attrs, "parentIndex", "int",
			json_integer(iget(g, "index", 0)));
	} else {
		attr(attrs, "resource.kubernetes.io/pciBusID", "string",
			pci_bus_id(sget(g, "pci_bus_id")));
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
	json_t *devs = json_array(), *holds = holds_by_index(gpus);
	const json_t *g;
	size_t i;

	json_array_foreach(gpus, i, g)
		if (offered(holds, g))
			json_array_append_new(devs, device(g));
	json_decref(holds);
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
