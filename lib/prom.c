/* prom: Prometheus text exposition of counters, gauges, histograms. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "prom.h"

enum { COUNTER, GAUGE, HISTOGRAM };

struct series {
	char *labels;       /* "" for none */
	double value;       /* counter, gauge; histogram sum */
	unsigned long *hits; /* per bucket, not cumulative; n + 1 */
	unsigned long count;
	struct series *next;
};

struct family {
	char *name, *help;
	int type;
	double *bounds;
	size_t n;
	struct series *first, **last;
	struct family *next;
};

struct prom {
	pthread_mutex_t mu;
	struct family *first, **last;
};

struct prom *
prom_new(void)
{
	struct prom *p = ecalloc(1, sizeof *p);

	pthread_mutex_init(&p->mu, NULL);
	p->last = &p->first;
	return p;
}

void
prom_free(struct prom *p)
{
	struct family *f, *fn;
	struct series *s, *sn;

	if (!p)
		return;
	for (f = p->first; f; f = fn) {
		fn = f->next;
		for (s = f->first; s; s = sn) {
			sn = s->next;
			free(s->labels);
			free(s->hits);
			free(s);
		}
		free(f->name);
		free(f->help);
		free(f->bounds);
		free(f);
	}
	pthread_mutex_destroy(&p->mu);
	free(p);
}

static void
declare(struct prom *p, const char *name, const char *help, int type,
	const double *bounds, size_t n)
{
	struct family *f = ecalloc(1, sizeof *f);

	f->name = estrdup(name);
	f->help = estrdup(help);
	f->type = type;
	f->n = n;
	f->bounds = emalloc((n ? n : 1) * sizeof *bounds);
	if (n)
		memcpy(f->bounds, bounds, n * sizeof *bounds);
	f->last = &f->first;
	pthread_mutex_lock(&p->mu);
	*p->last = f;
	p->last = &f->next;
	pthread_mutex_unlock(&p->mu);
}

void
prom_counter(struct prom *p, const char *name, const char *help)
{
	declare(p, name, help, COUNTER, NULL, 0);
}

void
prom_gauge(struct prom *p, const char *name, const char *help)
{
	declare(p, name, help, GAUGE, NULL, 0);
}

void
prom_histogram(struct prom *p, const char *name, const char *help,
	const double *bounds, size_t n)
{
	declare(p, name, help, HISTOGRAM, bounds, n);
}

/* series finds or makes the series of family name with labels; NULL
 * when no such family. Call with the lock held. */
static struct series *
series(struct prom *p, const char *name, const char *labels,
	struct family **fam)
{
	struct family *f;
	struct series *s;

	for (f = p->first; f && strcmp(f->name, name); f = f->next)
		;
	if (!(*fam = f))
		return NULL;
	labels = labels ? labels : "";
	for (s = f->first; s; s = s->next)
		if (!strcmp(s->labels, labels))
			return s;
	s = ecalloc(1, sizeof *s);
	s->labels = estrdup(labels);
	if (f->type == HISTOGRAM)
		s->hits = ecalloc(f->n + 1, sizeof *s->hits);
	*f->last = s;
	f->last = &s->next;
	return s;
}

static void
update(struct prom *p, const char *name, const char *labels, double v,
	int set)
{
	struct family *f;
	struct series *s;

	pthread_mutex_lock(&p->mu);
	if ((s = series(p, name, labels, &f)) && f->type != HISTOGRAM)
		s->value = set ? v : s->value + v;
	pthread_mutex_unlock(&p->mu);
}

void
prom_add(struct prom *p, const char *name, const char *labels, double v)
{
	update(p, name, labels, v, 0);
}

void
prom_set(struct prom *p, const char *name, const char *labels, double v)
{
	update(p, name, labels, v, 1);
}

void
prom_observe(struct prom *p, const char *name, const char *labels, double v)
{
	struct family *f;
	struct series *s;
	size_t i;

	pthread_mutex_lock(&p->mu);
	if ((s = series(p, name, labels, &f)) && f->type == HISTOGRAM) {
		for (i = 0; i < f->n && v > f->bounds[i]; i++)
			;
		s->hits[i]++;
		s->count++;
		s->value += v;
	}
	pthread_mutex_unlock(&p->mu);
}

/* render_histogram writes the bucket, sum and count lines of s. */
static void
render_histogram(FILE *out, const struct family *f, const struct series *s)
{
	const char *sep = *s->labels ? "," : "";
	unsigned long cum = 0;
	size_t i;

	for (i = 0; i <= f->n; i++) {
		cum += s->hits[i];
		if (i < f->n)
			fprintf(out, "%s_bucket{%s%sle=\"%g\"} %lu\n", f->name, s->labels,
				sep, f->bounds[i], cum);
		else
			fprintf(out, "%s_bucket{%s%sle=\"+Inf\"} %lu\n", f->name,
				s->labels, sep, cum);
	}
	fprintf(out, "%s_sum%s%s%s %.9g\n", f->name, *s->labels ? "{" : "",
		s->labels, *s->labels ? "}" : "", s->value);
	fprintf(out, "%s_count%s%s%s %lu\n", f->name, *s->labels ? "{" : "",
		s->labels, *s->labels ? "}" : "", s->count);
}

char *
prom_render(struct prom *p, size_t *len)
{
	static const char *const types[] = {"counter", "gauge", "histogram"};
	const struct family *f;
	const struct series *s;
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);

	if (!out)
		err_die(HAZ_FAIL, "open_memstream:");
	pthread_mutex_lock(&p->mu);
	for (f = p->first; f; f = f->next) {
		fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help,
			f->name, types[f->type]);
		for (s = f->first; s; s = s->next) {
			if (f->type == HISTOGRAM)
				render_histogram(out, f, s);
			else
				fprintf(out, "%s%s%s%s %.15g\n", f->name, *s->labels ? "{" : "",
					s->labels, *s->labels ? "}" : "", s->value);
		}
	}
	pthread_mutex_unlock(&p->mu);
	if (fclose(out) != 0)
		err_die(HAZ_FAIL, "open_memstream:");
	*len = n;
	return buf;
}
