/* alert: what gpu-alert(1) says about one device, from the moment a
 * transition is seen until the webhook took it or it was dropped.
 *
 * An alert_dev is one reading of one device, borrowed from the input
 * record it came from; an alert owns copies of what its message needs,
 * so it can wait in the sender's queue after the record is gone. */
#ifndef HAZ_ALERT_H
#define HAZ_ALERT_H

#include <jansson.h>

enum alert_event {
	ALERT_UNHEALTHY, /* ok/warn (or first sight) -> unhealthy */
	ALERT_RECOVERED, /* unhealthy -> ok/warn */
	ALERT_TEMP,      /* temp_c crossed the threshold upward */
	ALERT_ECC,       /* ecc_errors increased */
	ALERT_TEST,      /* gpu-alert -1: is the webhook there? */
};

/* alert_event_name: "unhealthy", "recovered", "temperature", "ecc",
 * "test": the event as stdout records and messages name it. */
const char *alert_event_name(enum alert_event e);

/* One reading of one device; every pointer borrowed. Health is a
 * health_level (health.h) or -1 when the record has none; temp_c is NaN
 * and ecc -1 when not read; index -1 when not known. */
struct alert_dev {
	const char *node, *uuid, *product, *mig;
	long long index;
	int health;
	double temp_c;
	long long ecc;
	const json_t *reasons; /* array of strings, or NULL */
};

struct alert {
	enum alert_event event;
	char *node, *uuid;   /* NULL only for ALERT_TEST */
	char *product, *mig; /* NULL when not known / a whole GPU */
	long long index;     /* -1 when not known */
	int health;          /* the device's health now, -1 unknown */
	json_t *reasons;     /* array of strings (never NULL) */
	double temp_c;       /* reading; NaN when not known */
	double threshold;    /* ALERT_TEMP: the threshold crossed */
	long long ecc_from;  /* ALERT_ECC: previous count */
	long long ecc_to;    /* the count now, -1 when not known */
	double born;         /* monotonic seconds when raised */
};

/* alert_new returns an alert of event e about d (copied), raised at
 * now; alert_free releases it (NULL is fine). */
struct alert *alert_new(enum alert_event e, const struct alert_dev *d,
	double now);
void alert_free(struct alert *a);

/* alert_now: monotonic seconds, the clock of every alert window. */
double alert_now(void);

/* alert_health_name: "ok", "warn", "unhealthy", or "unknown". */
const char *alert_health_name(int health);

#endif
