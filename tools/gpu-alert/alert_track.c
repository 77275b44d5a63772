/* alert_track: device state, transitions and deduplication for
 * gpu-alert (see alert_track.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alert_track.h"
#include "err.h"
#include "health.h"
#include "hmap.h"

/* Below threshold by this much re-arms a temperature alert, so a
 * device hovering around the threshold does not alert at every reading. */
#define TEMP_HYSTERESIS 5.0

struct dev {
	int health;    /* -1 not read yet */
	int hot;       /* at or above the threshold, not re-armed */
	long long ecc; /* -1 not read yet */
	unsigned long gen;
};

struct alert_tracker {
	double threshold, window;
	struct hm *devs; /* node -> struct hm: uuid -> struct dev */
	size_t ndevs;
	struct hm *sent;  /* "node\nuuid\nevent" -> double (when raised) */
	struct hm *prior; /* "node\nuuid" -> int (health), until first seen */
	double last_prune;
};

static void
free_node(void *p)
{
	hm_free(p);
}

struct alert_tracker *
at_new(double threshold, double window)
{
	struct alert_tracker *t = ecalloc(1, sizeof *t);

	t->threshold = threshold;
	t->window = window;
	t->devs = hm_new(free_node);
	t->sent = hm_new(free);
	t->prior = hm_new(free);
	return t;
}

void
at_free(struct alert_tracker *t)
{
	if (!t)
		return;
	hm_free(t->devs);
	hm_free(t->sent);
	hm_free(t->prior);
	free(t);
}

void
at_prior(struct alert_tracker *t, const char *node, const char *uuid,
	int health)
{
	char *key = easprintf("%s\n%s", node, uuid);
	int *h = emalloc(sizeof *h);

	*h = health;
	hm_put(t->prior, key, h);
	free(key);
}

size_t
at_devices(const struct alert_tracker *t)
{
	return t->ndevs;
}

static char *
sent_key(const struct alert_dev *d, enum alert_event e)
{
	return easprintf("%s\n%s\n%s", d->node, d->uuid, alert_event_name(e));
}

/* rearm forgets that event e was raised for d: the device recovered
 * from it, so the next one is news. */
static void
rearm(struct alert_tracker *t, const struct alert_dev *d, enum alert_event e)
{
	char *key = sent_key(d, e);

	hm_del(t->sent, key);
	free(key);
}

/* prune drops the raised-alert times older than the window, at most
 * once a minute, so the table holds one window's worth. */
static void
prune(struct alert_tracker *t, double now)
{
	const char *key;
	void *val;
	size_t pos = 0, n = 0, i;
	char **old;

	if (now - t->last_prune < 60)
		return;
	t->last_prune = now;
	old = emalloc(hm_len(t->sent) * sizeof *old);
	while (hm_next(t->sent, &pos, &key, &val))
		if (now - *(double *)val >= t->window)
			old[n++] = estrdup(key);
	for (i = 0; i < n; i++) {
		hm_del(t->sent, old[i]);
		free(old[i]);
	}
	free(old);
}

/* raise hands an alert of event e about d to emit, suppressed when the
 * same one was raised within the window. */
static void
raise_alert(struct alert_tracker *t, const struct alert_dev *d,
	enum alert_event e, double now, struct alert *a, at_emit_fn *emit,
	void *arg)
{
	char *key = sent_key(d, e);
	double *when = hm_get(t->sent, key);
	int suppressed = when && now - *when < t->window;

	if (!suppressed) {
		when = emalloc(sizeof *when);
		*when = now;
		hm_put(t->sent, key, when);
	}
	free(key);
	if (!a)
		a = alert_new(e, d, now);
	emit(a, suppressed, arg);
}

static void
judge_health(struct alert_tracker *t, struct dev *v, const struct alert_dev *d,
	int first, double now, at_emit_fn *emit, void *arg)
{
	if (d->health < 0)
		return;
	if (d->health == HEALTH_UNHEALTHY) {
		rearm(t, d, ALERT_RECOVERED);
		if (v->health != HEALTH_UNHEALTHY)
			raise_alert(t, d, ALERT_UNHEALTHY, now, NULL, emit,
				arg);
	} else {
		rearm(t, d, ALERT_UNHEALTHY);
		if (v->health == HEALTH_UNHEALTHY && !first)
			raise_alert(t, d, ALERT_RECOVERED, now, NULL, emit,
				arg);
	}
	v->health = d->health;
}

static void
judge_temp(struct alert_tracker *t, struct dev *v, const struct alert_dev *d,
	int first, double now, at_emit_fn *emit, void *arg)
{
	struct alert *a;

	if (isnan(d->temp_c))
		return;
	if (d->temp_c <= t->threshold - TEMP_HYSTERESIS) {
		v->hot = 0;
		rearm(t, d, ALERT_TEMP);
	} else if (d->temp_c >= t->threshold && !v->hot) {
		v->hot = 1;
		if (!first) {
			a = alert_new(ALERT_TEMP, d, now);
			a->threshold = t->threshold;
			raise_alert(t, d, ALERT_TEMP, now, a, emit, arg);
		}
	}
}

static void
judge_ecc(struct alert_tracker *t, struct dev *v, const struct alert_dev *d,
	double now, at_emit_fn *emit, void *arg)
{
	struct alert *a;

	if (d->ecc < 0)
		return;
	if (v->ecc >= 0 && d->ecc > v->ecc) {
		a = alert_new(ALERT_ECC, d, now);
		a->ecc_from = v->ecc;
		raise_alert(t, d, ALERT_ECC, now, a, emit, arg);
	} else if (v->ecc >= 0 && d->ecc < v->ecc)
		rearm(t, d, ALERT_ECC);
	v->ecc = d->ecc;
}

void
at_observe(struct alert_tracker *t, const struct alert_dev *d,
	unsigned long gen, double now, at_emit_fn *emit, void *arg)
{
	struct hm *node = hm_get(t->devs, d->node);
	struct dev *v = node ? hm_get(node, d->uuid) : NULL;
	int first = v == NULL, *prior = NULL;
	char *key;

	prune(t, now);
	if (first) {
		if (!node) {
			node = hm_new(free);
			hm_put(t->devs, d->node, node);
		}
		v = ecalloc(1, sizeof *v);
		*v = (struct dev){.health = -1, .ecc = -1};
		hm_put(node, d->uuid, v);
		t->ndevs++;
		key = easprintf("%s\n%s", d->node, d->uuid);
		prior = hm_take(t->prior, key);
		free(key);
	}
	if (prior)
		v->health = *prior;
	v->gen = gen;
	judge_health(t, v, d, first && !prior, now, emit, arg);
	free(prior);
	judge_temp(t, v, d, first, now, emit, arg);
	judge_ecc(t, v, d, now, emit, arg);
}

void
at_sweep(struct alert_tracker *t, const char *node, unsigned long gen)
{
	struct hm *devs = hm_get(t->devs, node);
	size_t pos = 0, n = 0, i;
	const char *key;
	void *val;
	char **gone;

	if (!devs)
		return;
	if (gen == 0) {
		t->ndevs -= hm_len(devs);
		hm_del(t->devs, node);
		return;
	}
	gone = emalloc((hm_len(devs) + 1) * sizeof *gone);
	while (hm_next(devs, &pos, &key, &val))
		if (((struct dev *)val)->gen != gen)
			gone[n++] = estrdup(key);
	for (i = 0; i < n; i++) {
		hm_del(devs, gone[i]);
		free(gone[i]);
	}
	t->ndevs -= n;
	free(gone);
	if (!hm_len(devs))
		hm_del(t->devs, node);
}
