/* prom: counters and histograms, written in the Prometheus text format
 * (version 0.0.4).
 *
 * Series are made on first use: a family (name, help, type) is declared
 * once, then prom_add and prom_observe name a family and an optional
 * label set, written as Prometheus writes it: `outcome="patched"` or
 * `from="2g.20gb",to="1g.10gb"` (label values must need no escaping).
 * All calls are safe from any thread. */
#ifndef HAZ_PROM_H
#define HAZ_PROM_H

#include <stddef.h>

struct prom;

struct prom *prom_new(void);
void prom_free(struct prom *p);

/* prom_counter and prom_gauge declare a family. */
void prom_counter(struct prom *p, const char *name, const char *help);
void prom_gauge(struct prom *p, const char *name, const char *help);

/* prom_histogram declares a histogram with n upper bounds, ascending
 * (+Inf is added). */
void prom_histogram(struct prom *p, const char *name, const char *help,
	const double *bounds, size_t n);

/* prom_add adds v to a counter (or sets a gauge when set is 1). labels
 * may be NULL. */
void prom_add(struct prom *p, const char *name, const char *labels,
	double v);
void prom_set(struct prom *p, const char *name, const char *labels,
	double v);

/* prom_observe records v in a histogram. */
void prom_observe(struct prom *p, const char *name, const char *labels,
	double v);

/* prom_render returns the whole exposition, malloc'd; *len its length. */
char *prom_render(struct prom *p, size_t *len);

#endif
