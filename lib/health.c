/* health: thresholds and the per-record judgement (see health.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "health.h"

static const char *const warn_names[HEALTH_NCHECKS] = {
	"temp_warn",
	"power_warn_pct",
	"ecc_warn",
	"mem_warn_pct",
	"util_warn_pct",
};
static const char *const bad_names[HEALTH_NCHECKS] = {
	"temp_unhealthy",
	"power_unhealthy_pct",
	"ecc_unhealthy",
	"mem_unhealthy_pct",
	"util_unhealthy_pct",
};

void
health_defaults(struct health_limits *l)
{
	static const struct health_limits d = {
		.warn = {85, 100, -1, -1, -1},
		.unhealthy = {90, 110, 0, -1, -1},
	};

	*l = d;
}

int
health_set(struct health_limits *l, const char *name, double v)
{
	int i;

	if (!isfinite(v)) /* NaN passes no comparison: the check would be off */
		return -1;
	for (i = 0; i < HEALTH_NCHECKS; i++) {
		if (strcmp(name, warn_names[i]) == 0) {
			l->warn[i] = v < 0 ? -1 : v;
			return 0;
		}
		if (strcmp(name, bad_names[i]) == 0) {
			l->unhealthy[i] = v < 0 ? -1 : v;
			return 0;
		}
	}
	return -1;
}

int
health_set_text(struct health_limits *l, const char *name, const char *text,
	const char **why)
{
	size_t whole = strspn(text, "0123456789"), frac = 0;
	double v = -1;

	/* plain decimals only: strtod would also take "nan", "inf", hex,
	 * exponents and leading blanks */
	if (text[whole] == '.')
		frac = strspn(text + whole + 1, "0123456789") + 1;
	if (strcmp(text, "off") != 0) {
		if (!whole || text[whole + frac] != '\0' ||
			(v = strtod(text, NULL)) > 1e9) {
			*why = "not a number from 0 to 1e9, or \"off\"";
			return -1;
		}
	}
	if (health_set(l, name, v) < 0) {
		*why = "no such threshold";
		return -1;
	}
	return 0;
}

int
health_load_json(struct health_limits *l, const json_t *obj, const char *src)
{
	const char *key, *why = "not a number from 0 to 1e9, null or \"off\"";
	json_t *v;
	double d;

	if (!json_is_object(obj)) {
		err_warn("%s: health thresholds: not an object", src);
		return -1;
	}
	json_object_foreach((json_t *)obj, key, v) {
		d = json_is_number(v) ? json_number_value(v) : -1;
		if ((json_is_number(v) && (d < 0 || d > 1e9)) ||
			(!json_is_number(v) && !json_is_null(v) &&
				!(json_is_string(v) &&
					strcmp(json_string_value(v), "off") ==
						0))) {
			err_warn("%s: %s: %s", src, key, why);
			return -1;
		}
		if (health_set(l, key, d) < 0) {
			err_warn("%s: %s: no such threshold", src, key);
			return -1;
		}
	}
	return 0;
}

/* ---- judging ---- */

/* reading stores rec[key] in *v; 0 when it is a number, -1 otherwise. */
static int
reading(const json_t *rec, const char *key, double *v)
{
	json_t *j = json_object_get(rec, key);

	if (!json_is_number(j))
		return -1;
	*v = json_number_value(j);
	return 0;
}

/* ratio is 100 * rec[num] / rec[den], or -1 when either is unknown or the
 * denominator is not positive. */
static double
ratio(const json_t *rec, const char *num, const char *den)
{
	double n, d;

	if (reading(rec, num, &n) < 0 || reading(rec, den, &d) < 0 || d <= 0)
		return -1;
	return 100 * n / d;
}

/* measure returns the value that check i compares, or -1 when unknown. */
static double
measure(const json_t *rec, int i)
{
	static const char *const keys[] = {"temp_c", NULL, "ecc_errors", NULL,
		"util_pct"};
	double v;

	if (i == HEALTH_POWER)
		return ratio(rec, "power_w", "power_limit_w");
	if (i == HEALTH_MEM)
		return ratio(rec, "memory_used_mib", "memory_mib");
	return reading(rec, keys[i], &v) < 0 ? -1 : v;
}

/* tripped tells whether value v crosses threshold t for check i. */
static int
tripped(int i, double v, double t)
{
	if (t < 0 || v < 0)
		return 0;
	return i == HEALTH_ECC ? v > t : v >= t;
}

/* sentence describes check i of rec with value v crossing t. */
static json_t *
sentence(const json_t *rec, int i, double v, double t)
{
	double a = 0, b = 0;

	switch (i) {
	case HEALTH_TEMP: return json_sprintf("temperature %gC >= %gC", v, t);
	case HEALTH_POWER:
		reading(rec, "power_w", &a);
		reading(rec, "power_limit_w", &b);
		return json_sprintf(
			"power %gW is %.4g%% of the %gW limit >= %g%%", a, v, b,
			t);
	case HEALTH_ECC:
		return json_sprintf("uncorrected ECC errors %g > %g", v, t);
	case HEALTH_MEM:
		reading(rec, "memory_used_mib", &a);
		reading(rec, "memory_mib", &b);
		return json_sprintf(
			"memory used %gMiB is %.4g%% of %gMiB >= %g%%", a, v, b,
			t);
	default: return json_sprintf("utilization %g%% >= %g%%", v, t);
	}
}

enum health_level
health_apply(json_t *rec, const struct health_limits *l, const json_t *faults)
{
	static const char *const names[] = {"ok", "warn", "unhealthy"};
	enum health_level level = HEALTH_OK;
	json_t *reasons = json_array();
	double v;
	int i;

	if (faults && json_array_size(faults)) {
		json_array_extend(reasons, (json_t *)faults);
		level = HEALTH_UNHEALTHY;
	}
	for (i = 0; i < HEALTH_NCHECKS; i++) {
		v = measure(rec, i);
		if (tripped(i, v, l->unhealthy[i])) {
			json_array_append_new(reasons,
				sentence(rec, i, v, l->unhealthy[i]));
			level = HEALTH_UNHEALTHY;
		} else if (tripped(i, v, l->warn[i])) {
			json_array_append_new(reasons,
				sentence(rec, i, v, l->warn[i]));
			if (level < HEALTH_WARN)
				level = HEALTH_WARN;
		}
	}
	json_object_set_new(rec, "health", json_string(names[level]));
	json_object_set_new(rec, "health_reasons", reasons);
	return level;
}
