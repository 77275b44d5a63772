/* gpuobj_check: is a gpu record one claim-make can publish (see gpuobj.h). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gpuobj.h"
#include "kname.h"
#include "mig.h"

/* ---- fields ------------------------------------------------------------- */

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
	F_HELD,    /* null or an object of held_fields */
	F_TEXT,    /* a string of at most max bytes */
	F_HOLD,    /* "run", "manual", "unreserved" or "error" */
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
	{"minor", F_INT, 0, INT_MAX},
	{"uuid", F_ATTR, 0, 0},
	{"name", F_ATTR, 0, 0},
	{"product", F_STRING, 0, 0},
	{"brand", F_ATTR, 0, 0},
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
	{"pcie_root", F_ATTR, 0, 0},
	{"numa_node", F_INT, 0, INT_MAX},
	{"pci_class", F_ATTR, 0, 0},
	{"addressing_mode", F_ATTR, 0, 0},
	{"machine", F_STRING, 0, 0},
	{"mig_enabled", F_BOOL, 0, 0},
	{"mig", F_MIG, 0, 0},
	{"health", F_HEALTH, 1, 0},
	{"health_reasons", F_REASONS, 0, 0},
	{"held", F_HELD, 0, 0},
};

static const struct field mig_fields[] = {
	{"profile", F_PROFILE, 1, 0},
	{"parent_uuid", F_ATTR, 0, 0},
	{"device", F_INT, 1, INT_MAX},
	{"gi", F_INT, 0, INT_MAX},
	{"ci", F_INT, 0, INT_MAX},
};

/* the hold gpu-reserve(1) mark puts on a GPU held on the host; other
 * members are left alone, as other fields of a record are */
static const struct field held_fields[] = {
	{"user", F_TEXT, 0, GOBJ_HOLD_TEXT_MAX},
	{"actual_user", F_TEXT, 0, GOBJ_HOLD_TEXT_MAX},
	{"type", F_HOLD, 1, 0},
	{"since", F_TEXT, 0, GOBJ_HOLD_TEXT_MAX},
	{"expires", F_TEXT, 0, GOBJ_HOLD_TEXT_MAX},
	{"note", F_TEXT, 0, GOBJ_HOLD_TEXT_MAX},
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

static int
is_hold_type(const char *t)
{
	return !strcmp(t, "run") || !strcmp(t, "manual") ||
		!strcmp(t, "unreserved") || !strcmp(t, "error");
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
	case F_MIG:
	case F_HELD: return json_is_object(v);
	case F_TEXT:
		return clean_string(v) &&
			(long long)json_string_length(v) <= f->max;
	case F_HOLD:
		return clean_string(v) && is_hold_type(json_string_value(v));
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
	case F_MIG:
	case F_HELD: snprintf(buf, n, "null or an object"); break;
	case F_TEXT:
		snprintf(buf, n,
			"a string of at most %lld bytes without \\u0000",
			f->max);
		break;
	case F_HOLD:
		snprintf(buf, n,
			"\"run\", \"manual\", \"unreserved\" or \"error\"");
		break;
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
	const json_t *h = json_object_get(rec, "held");

	if (check_fields(rec, "", gpu_fields,
		    sizeof gpu_fields / sizeof *gpu_fields, node_max, why,
		    n) < 0)
		return -1;
	if (json_is_object(m) &&
		check_fields(m, "mig.", mig_fields,
			sizeof mig_fields / sizeof *mig_fields, node_max, why,
			n) < 0)
		return -1;
	if (json_is_object(h) &&
		check_fields(h, "held.", held_fields,
			sizeof held_fields / sizeof *held_fields, node_max, why,
			n) < 0)
		return -1;
	return 0;
}

int
gobj_bound_held(json_t *rec, gobj_cut_fn *cut, void *arg)
{
	json_t *h = json_object_get(rec, "held");
	const json_t *v;
	const char *text;
	size_t i, len, keep;
	int n = 0;

	if (!json_is_object(h))
		return 0;
	for (i = 0; i < sizeof held_fields / sizeof *held_fields; i++) {
		v = json_object_get(h, held_fields[i].key);
		if (held_fields[i].type != F_TEXT || !clean_string(v) ||
			(long long)(len = json_string_length(v)) <=
				held_fields[i].max)
			continue;
		/* back to the first byte of the character that would be
		 * split: the text is UTF-8, as jansson took it */
		text = json_string_value(v);
		keep = (size_t)held_fields[i].max;
		while (keep > 0 && ((unsigned char)text[keep] & 0xc0) == 0x80)
			keep--;
		json_object_set_new(h, held_fields[i].key,
			json_stringn(text, keep));
		if (cut)
			cut(held_fields[i].key, len, keep, arg);
		n++;
	}
	return n;
}
