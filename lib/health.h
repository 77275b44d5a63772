/* health: judge a gpu record by its current readings.
 *
 * Each check compares one reading with a warn and an unhealthy threshold;
 * a threshold below zero is off. A reading that is null is not judged.
 *
 *   temp_c                          >= temp_warn / temp_unhealthy (C)
 *   power_w as % of power_limit_w   >= power_warn_pct / power_unhealthy_pct
 *   ecc_errors                      >  ecc_warn / ecc_unhealthy (count)
 *   memory_used_mib % of memory_mib >= mem_warn_pct / mem_unhealthy_pct
 *   util_pct                        >= util_warn_pct / util_unhealthy_pct
 *
 * Nothing is remembered between calls: a device recovers as soon as its
 * readings do. */
#ifndef HAZ_HEALTH_H
#define HAZ_HEALTH_H

#include <jansson.h>

enum health_level { HEALTH_OK, HEALTH_WARN, HEALTH_UNHEALTHY };

enum health_check {
	HEALTH_TEMP,
	HEALTH_POWER,
	HEALTH_ECC,
	HEALTH_MEM,
	HEALTH_UTIL,
	HEALTH_NCHECKS,
};

struct health_limits {
	double warn[HEALTH_NCHECKS];      /* < 0: off */
	double unhealthy[HEALTH_NCHECKS]; /* < 0: off */
};

/* health_defaults fills l: temperature 85/90 C, power 100/110 % of the
 * limit, ECC warn off / unhealthy > 0, memory and utilization off. */
void health_defaults(struct health_limits *l);

/* health_set sets the threshold called name (temp_warn, temp_unhealthy,
 * power_warn_pct, power_unhealthy_pct, ecc_warn, ecc_unhealthy,
 * mem_warn_pct, mem_unhealthy_pct, util_warn_pct, util_unhealthy_pct) to
 * v (< 0 turns it off). Returns 0, or -1 for an unknown name or a v that
 * is NaN or infinite (a NaN threshold would silently never trip). */
int health_set(struct health_limits *l, const char *name, double v);

/* health_set_text is health_set with the value as text: a plain decimal
 * number from 0 to 1e9 (digits, an optional fraction) or "off"; "nan",
 * "inf", "-1", "1e3", "0x10" and " 5" are refused. Returns 0, or -1 with
 * a message in *why (static). */
int health_set_text(struct health_limits *l, const char *name, const char *text,
	const char **why);

/* health_load_json applies every member of obj (name: a number from 0 to
 * 1e9, or null or "off") to l. Returns 0, or -1 with a message printed
 * naming src. */
int health_load_json(struct health_limits *l, const json_t *obj,
	const char *src);

/* health_apply judges rec's readings against l and sets rec's "health"
 * ("ok", "warn", "unhealthy") and "health_reasons" (human sentences such
 * as "temperature 91C >= 90C"). faults (may be NULL; borrowed) are reasons
 * from error states that make the record unhealthy; they come first.
 * Returns the level. */
enum health_level health_apply(json_t *rec, const struct health_limits *l,
	const json_t *faults);

#endif
