/* alert: the alert record shared by gpu-alert's tracker, formatter and
 * sender (see alert.h). */
#include <math.h>
#include <stdlib.h>

#include "alert.h"
#include "clock.h"
#include "err.h"

const char *
alert_event_name(enum alert_event e)
{
	switch (e) {
	case ALERT_UNHEALTHY: return "unhealthy";
	case ALERT_RECOVERED: return "recovered";
	case ALERT_TEMP: return "temperature";
	case ALERT_ECC: return "ecc";
	case ALERT_TEST: return "test";
	}
	return "?";
}

const char *
alert_health_name(int health)
{
	static const char *const names[] = {"ok", "warn", "unhealthy"};

	return health >= 0 && health <= 2 ? names[health] : "unknown";
}

static char *
dup_or_null(const char *s)
{
	return s ? estrdup(s) : NULL;
}

struct alert *
alert_new(enum alert_event e, const struct alert_dev *d, double now)
{
	struct alert *a = ecalloc(1, sizeof *a);

	a->event = e;
	a->index = -1;
	a->health = -1;
	a->temp_c = NAN;
	a->ecc_to = -1;
	a->born = now;
	if (d) {
		a->node = dup_or_null(d->node);
		a->uuid = dup_or_null(d->uuid);
		a->product = dup_or_null(d->product);
		a->mig = dup_or_null(d->mig);
		a->index = d->index;
		a->health = d->health;
		a->temp_c = d->temp_c;
		a->ecc_to = d->ecc;
	}
	a->reasons = json_is_array(d ? d->reasons : NULL)
		? json_deep_copy(d->reasons)
		: json_array();
	if (!a->reasons)
		err_die(HAZ_FAIL, "out of memory");
	return a;
}

void
alert_free(struct alert *a)
{
	if (!a)
		return;
	free(a->node);
	free(a->uuid);
	free(a->product);
	free(a->mig);
	json_decref(a->reasons);
	free(a);
}

double
alert_now(void)
{
	return clock_mono();
}
