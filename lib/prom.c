/* prom: the Prometheus text format 0.0.4: the exposition of counters,
 * gauges and histograms; escaped label values and spelled values for
 * writers of their own; a checker of whole expositions. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "hmap.h"
#include "prom.h"

enum { COUNTER, GAUGE, HISTOGRAM };

struct series {
	char *labels;        /* "" for none */
	int bad;             /* labels is no valid label set: never shown */
	double value;        /* counter, gauge; histogram sum */
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

static size_t name_len(const char *p, const char *end, int colon);
static const char *label_set_error(const char *set, char *why, size_t whylen);

/* ---- the registry ---- */

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
	struct family *f;

	if (!*name || name_len(name, name + strlen(name), 1) != strlen(name))
		err_die(HAZ_FAIL, "prom: %s: not a metric name", name);
	f = ecalloc(1, sizeof *f);
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
 * when no such family, or when labels is not a valid label set (told
 * once, when the series is made). Call with the lock held. */
static struct series *
series(struct prom *p, const char *name, const char *labels,
	struct family **fam)
{
	struct family *f;
	struct series *s;
	char why[128];

	for (f = p->first; f && strcmp(f->name, name); f = f->next)
		;
	if (!(*fam = f))
		return NULL;
	labels = labels ? labels : "";
	for (s = f->first; s; s = s->next)
		if (!strcmp(s->labels, labels))
			return s->bad ? NULL : s;
	s = ecalloc(1, sizeof *s);
	s->labels = estrdup(labels);
	if (label_set_error(labels, why, sizeof why)) {
		err_warn("%s{%s}: %s: series left out", name, labels, why);
		s->bad = 1;
	} else if (f->type == HISTOGRAM) {
		s->hits = ecalloc(f->n + 1, sizeof *s->hits);
	}
	*f->last = s;
	f->last = &s->next;
	return s->bad ? NULL : s;
}

static void
update(struct prom *p, const char *name, const char *labels, double v, int set)
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
		for (i = 0; i < f->n && !(v <= f->bounds[i]); i++)
			;
		s->hits[i]++;
		s->count++;
		s->value += v;
	}
	pthread_mutex_unlock(&p->mu);
}

/* sample_line writes `name[suffix]{labels[,extra]} value`, with no braces
 * when there are no labels. */
static void
sample_line(FILE *out, const char *name, const char *suffix, const char *labels,
	const char *extra, const char *value)
{
	const char *sep = *labels && *extra ? "," : "";

	if (*labels || *extra)
		fprintf(out, "%s%s{%s%s%s} %s\n", name, suffix, labels, sep,
			extra, value);
	else
		fprintf(out, "%s%s %s\n", name, suffix, value);
}

/* render_histogram writes the bucket, sum and count lines of s. */
static void
render_histogram(FILE *out, const struct family *f, const struct series *s)
{
	char le[PROM_VALUE_SIZE + 8], v[PROM_VALUE_SIZE];
	unsigned long cum = 0;
	size_t i;

	for (i = 0; i <= f->n; i++) {
		cum += s->hits[i];
		snprintf(le, sizeof le, "le=\"%s\"",
			i < f->n ? prom_value(f->bounds[i], v) : "+Inf");
		snprintf(v, sizeof v, "%lu", cum);
		sample_line(out, f->name, "_bucket", s->labels, le, v);
	}
	sample_line(out, f->name, "_sum", s->labels, "",
		prom_value(s->value, v));
	snprintf(v, sizeof v, "%lu", s->count);
	sample_line(out, f->name, "_count", s->labels, "", v);
}

/* help_text writes s with backslash and line feed escaped, as a HELP
 * line wants, and each byte that is no part of valid UTF-8 as '?'. */
static void
help_text(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + strlen(s);
	int n;

	for (; p < end; p += n) {
		if (!(n = *p < 0x80 ? 1 : err_utf8_len(p, end))) {
			putc('?', out);
			n = 1;
		} else if (*p == '\\') {
			fputs("\\\\", out);
		} else if (*p == '\n') {
			fputs("\\n", out);
		} else {
			fwrite(p, 1, (size_t)n, out);
		}
	}
}

char *
prom_render(struct prom *p, size_t *len)
{
	static const char *const types[] = {"counter", "gauge", "histogram"};
	const struct family *f;
	const struct series *s;
	char *buf = NULL, v[PROM_VALUE_SIZE];
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);

	if (!out)
		err_die(HAZ_FAIL, "open_memstream:");
	pthread_mutex_lock(&p->mu);
	for (f = p->first; f; f = f->next) {
		fprintf(out, "# HELP %s ", f->name);
		help_text(out, f->help);
		fprintf(out, "\n# TYPE %s %s\n", f->name, types[f->type]);
		for (s = f->first; s; s = s->next) {
			if (s->bad)
				continue;
			if (f->type == HISTOGRAM)
				render_histogram(out, f, s);
			else
				sample_line(out, f->name, "", s->labels, "",
					prom_value(s->value, v));
		}
	}
	pthread_mutex_unlock(&p->mu);
	if (fclose(out) != 0)
		err_die(HAZ_FAIL, "open_memstream:");
	*len = n;
	return buf;
}

/* ---- writing label values and values ---- */

/* valid_value tells whether s[0..len) may be a label value: UTF-8, no
 * NUL byte. */
static int
valid_value(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	int n;

	while (p < end) {
		if (*p == 0)
			return 0;
		if (*p < 0x80) {
			p++;
			continue;
		}
		if (!(n = err_utf8_len(p, end)))
			return 0;
		p += n;
	}
	return 1;
}

/* escape writes s[0..len) escaped, without checking it. */
static void
escape(FILE *out, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] == '\\')
			fputs("\\\\", out);
		else if (s[i] == '"')
			fputs("\\\"", out);
		else if (s[i] == '\n')
			fputs("\\n", out);
		else
			putc(s[i], out);
}

int
prom_escape(FILE *out, const char *s, size_t len)
{
	if (!valid_value(s, len))
		return -1;
	escape(out, s, len);
	return 0;
}

const char *
prom_value(double v, char *buf)
{
	int prec;

	if (isnan(v))
		return strcpy(buf, "NaN");
	if (isinf(v))
		return strcpy(buf, v > 0 ? "+Inf" : "-Inf");
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, PROM_VALUE_SIZE, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return buf;
	}
	snprintf(buf, PROM_VALUE_SIZE, "%.17g", v);
	return buf;
}

int
prom_sample(FILE *out, const char *name, const struct prom_label *l, size_t n,
	const char *value)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (l[i].value && !valid_value(l[i].value, l[i].len))
			return -1;
	fputs(name, out);
	for (i = 0; i < n; i++) {
		fprintf(out, "%s%s=\"", i ? "," : "{", l[i].name);
		if (l[i].value)
			escape(out, l[i].value, l[i].len);
		putc('"', out);
	}
	fprintf(out, "%s %s\n", n ? "}" : "", value);
	return 0;
}

char *
prom_labels(const char *name, ...)
{
	const char *v, *end;
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);
	va_list ap;
	int len, first = 1;

	if (!out)
		err_die(HAZ_FAIL, "open_memstream:");
	va_start(ap, name);
	for (; name; name = va_arg(ap, const char *), first = 0) {
		if (!(v = va_arg(ap, const char *)))
			v = "";
		fprintf(out, "%s%s=\"", first ? "" : ",", name);
		for (end = v + strlen(v); v < end; v += len) {
			len = (unsigned char)*v < 0x80
				? 1
				: err_utf8_len((const unsigned char *)v,
					  (const unsigned char *)end);
			if (!len) {
				putc('?', out);
				len = 1;
			} else {
				escape(out, v, (size_t)len);
			}
		}
		putc('"', out);
	}
	va_end(ap);
	if (fclose(out) != 0)
		err_die(HAZ_FAIL, "open_memstream:");
	return buf;
}

/* ---- checking an exposition ---- */

enum { T_NONE, T_COUNTER, T_GAUGE, T_HISTOGRAM, T_SUMMARY, T_UNTYPED };
enum { S_EXACT, S_BUCKET, S_SUM, S_COUNT };

static const char *const type_names[] = {"", "counter", "gauge", "histogram",
	"summary", "untyped"};

struct fam {
	int type, help, sampled;
};

/* One label of the line being checked; value as written, escapes and
 * all (one spelling per value, so it names the value). */
struct lab {
	const char *name, *value;
	size_t nlen, vlen;
};

struct chk {
	struct hm *fams;   /* family name -> struct fam */
	struct hm *series; /* name{labels, sorted} -> line number */
	struct lab *labs;
	size_t nlabs, cap;
	char *key;
	size_t keylen, keycap;
	char *why;
	size_t whylen;
};

static int
is_blank(int c)
{
	return c == ' ' || c == '\t';
}

static const char *
skip_blank(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

/* name_len returns the length of the metric name (colon: 1) or label
 * name (colon: 0) at p, 0 when there is none. */
static size_t
name_len(const char *p, const char *end, int colon)
{
	const char *q = p;

	for (; q < end; q++) {
		int c = (unsigned char)*q;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    c == '_' || (colon && c == ':') ||
			    (q > p && c >= '0' && c <= '9')))
			break;
	}
	return (size_t)(q - p);
}

static size_t
digits(const char *p, const char *end)
{
	const char *q = p;

	while (q < end && *q >= '0' && *q <= '9')
		q++;
	return (size_t)(q - p);
}

/* float_error tells why s[0..n) is not a value Go's ParseFloat reads
 * without error (hexadecimal and digit separators refused too), or
 * NULL. s is followed in memory by a character that ends a number. */
static const char *
float_error(const char *s, size_t n)
{
	const char *p = s, *end = s + n;
	size_t d;
	char *stop;
	double v;

	if (p < end && (*p == '+' || *p == '-'))
		p++;
	if ((end - p == 3 && !strncasecmp(p, "inf", 3)) ||
		(end - p == 8 && !strncasecmp(p, "infinity", 8)) ||
		(p == s && n == 3 && !strncasecmp(p, "nan", 3)))
		return NULL;
	d = digits(p, end);
	p += d;
	if (p < end && *p == '.') {
		p++;
		d += digits(p, end);
		p += digits(p, end);
	}
	if (!d)
		return "not a number";
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!(d = digits(p, end)))
			return "not a number";
		p += d;
	}
	if (p != end)
		return "not a number";
	errno = 0;
	v = strtod(s, &stop);
	if (stop != end)
		return "not a number";
	if (isinf(v))
		return "a number out of range";
	return NULL;
}

/* timestamp_ok tells whether s[0..n) is a timestamp: decimal digits of
 * an int64. */
static int
timestamp_ok(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i] == '0')
		i++;
	if (!n || digits(s, s + n) != n || n - i > 19)
		return 0;
	return n - i < 19 || memcmp(s + i, "9223372036854775807", 19) <= 0;
}

static const char *
fail(struct chk *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, c->whylen, fmt, ap);
	va_end(ap);
	return c->why;
}

static int
lab_cmp(const void *a, const void *b)
{
	const struct lab *x = a, *y = b;
	size_t n = x->nlen < y->nlen ? x->nlen : y->nlen;
	int d = memcmp(x->name, y->name, n);

	return d ? d : (x->nlen > y->nlen) - (x->nlen < y->nlen);
}

/* read_labels reads the label set at *pp, just past its '{', up to and past
 * its '}', into c->labs, sorted by name. Returns why it is bad, or NULL. */
static const char *
read_labels(struct chk *c, const char **pp, const char *end)
{
	const char *p = *pp;
	struct lab *l;
	size_t i;

	c->nlabs = 0;
	for (;;) {
		p = skip_blank(p, end);
		if (p < end && *p == '}')
			break;
		if (c->nlabs == c->cap)
			c->labs = erealloc(c->labs,
				(c->cap = c->cap ? 2 * c->cap : 8) *
					sizeof *c->labs);
		l = &c->labs[c->nlabs++];
		l->name = p;
		if (!(l->nlen = name_len(p, end, 0)))
			return "bad label name";
		p = skip_blank(p + l->nlen, end);
		if (p == end || *p != '=')
			return "no = after a label name";
		p = skip_blank(p + 1, end);
		if (p == end || *p != '"')
			return "a label value not in double quotes";
		for (l->value = ++p; p < end && *p != '"'; p++)
			if (*p == '\\' && (++p == end || !strchr("\\\"n", *p)))
				return "a bad escape in a label value (only \\\\, \\\" and \\n)";
		if (p == end)
			return "a label value without its closing quote";
		l->vlen = (size_t)(p - l->value);
		p = skip_blank(p + 1, end);
		if (p < end && *p == ',')
			p++;
		else if (p == end || *p != '}')
			return "no , or } after a label value";
	}
	*pp = p + 1;
	if (c->nlabs) /* labs is NULL until a first label */
		qsort(c->labs, c->nlabs, sizeof *c->labs, lab_cmp);
	for (i = 0; i < c->nlabs; i++) {
		l = &c->labs[i];
		if (l->nlen == 8 && !memcmp(l->name, "__name__", 8))
			return "the label name __name__ is reserved";
		if (i && !lab_cmp(l - 1, l))
			return fail(c, "label %.*s given twice", (int)l->nlen,
				l->name);
	}
	return NULL;
}

/* find returns the label named name of the line, or NULL. */
static const struct lab *
find(const struct chk *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nlabs; i++)
		if (c->labs[i].nlen == strlen(name) &&
			!memcmp(c->labs[i].name, name, c->labs[i].nlen))
			return &c->labs[i];
	return NULL;
}

static void
key_add(struct chk *c, const char *s, size_t n)
{
	if (c->keylen + n + 1 > c->keycap)
		c->key = erealloc(c->key, c->keycap = 2 * (c->keylen + n + 1));
	memcpy(c->key + c->keylen, s, n);
	c->key[c->keylen += n] = '\0';
}

/* family returns the family that name[0..n) belongs to, as node-exporter
 * assigns it: the family of that very name, else the summary or
 * histogram it is the _sum, _count (or _bucket) of, else a new family of
 * its own; *suffix tells which. */
static struct fam *
family(struct chk *c, const char *name, size_t n, int *suffix)
{
	static const struct {
		const char *s;
		int kind;
	} sfx[] = {{"_bucket", S_BUCKET}, {"_sum", S_SUM}, {"_count", S_COUNT}};
	struct fam *f;
	size_t i, l;

	c->keylen = 0;
	key_add(c, name, n);
	*suffix = S_EXACT;
	if ((f = hm_get(c->fams, c->key)))
		return f;
	for (i = 0; i < 3; i++) {
		l = strlen(sfx[i].s);
		if (n <= l || memcmp(name + n - l, sfx[i].s, l))
			continue;
		c->key[n - l] = '\0';
		f = hm_get(c->fams, c->key);
		if (f &&
			(f->type == T_HISTOGRAM ||
				(f->type == T_SUMMARY &&
					sfx[i].kind != S_BUCKET))) {
			*suffix = sfx[i].kind;
			return f;
		}
		c->key[n - l] = sfx[i].s[0];
	}
	f = ecalloc(1, sizeof *f);
	hm_put(c->fams, c->key, f);
	return f;
}

/* number_label tells why label name of the line, which the family's type
 * wants numeric, is not (need: it must be there too), or NULL. */
static const char *
number_label(struct chk *c, const char *name, int need)
{
	const struct lab *l = find(c, name);

	if (!l)
		return need ? fail(c, "no %s label", name) : NULL;
	if (memchr(l->value, '\\', l->vlen) || float_error(l->value, l->vlen))
		return fail(c, "the %s label is not a number", name);
	return NULL;
}

/* sample checks the sample line p..end (no line feed, blanks skipped). */
static const char *
sample(struct chk *c, const char *p, const char *end, size_t line)
{
	const char *name = p, *v, *why;
	size_t n = name_len(p, end, 1), i;
	struct fam *f;
	int suffix;

	if (!n)
		return "not a sample, comment or blank line";
	p += n;
	c->nlabs = 0;
	if ((v = skip_blank(p, end)) < end && *v == '{') {
		p = v + 1;
		if ((why = read_labels(c, &p, end)))
			return why;
	} else if (v == p && p < end) {
		return fail(c, "a bad character after the metric name %.*s",
			(int)n, name);
	}
	p = skip_blank(p, end);
	for (v = p; p < end && !is_blank(*p); p++)
		;
	if (v == p)
		return "no value";
	if ((why = float_error(v, (size_t)(p - v))))
		return fail(c, "the value is %s", why);
	p = skip_blank(p, end);
	for (v = p; p < end && !is_blank(*p); p++)
		;
	if (v < p && !timestamp_ok(v, (size_t)(p - v)))
		return "the timestamp is not milliseconds as an int64";
	if (skip_blank(p, end) < end)
		return "text after the timestamp";

	f = family(c, name, n, &suffix);
	f->sampled = 1;
	if (f->type == T_HISTOGRAM) {
		if (suffix == S_EXACT)
			return fail(c,
				"histogram %.*s: a sample not _bucket, _sum or _count",
				(int)n, name);
		if ((why = number_label(c, "le", suffix == S_BUCKET)))
			return why;
	} else if (f->type == T_SUMMARY) {
		if ((why = number_label(c, "quantile", suffix == S_EXACT)))
			return why;
	}
	c->keylen = 0;
	key_add(c, name, n);
	for (i = 0; i < c->nlabs; i++) {
		key_add(c, i ? "\"," : "{", i ? 2 : 1);
		key_add(c, c->labs[i].name, c->labs[i].nlen);
		key_add(c, "=\"", 2);
		key_add(c, c->labs[i].value, c->labs[i].vlen);
	}
	if ((v = hm_get(c->series, c->key)))
		return fail(c, "series %.*s given twice (first on line %zu)",
			(int)n, name, (size_t)(uintptr_t)v);
	hm_put(c->series, c->key, (void *)(uintptr_t)line);
	return NULL;
}

/* comment checks the comment line p..end (p just past its '#'): HELP and
 * TYPE lines, the others being free. */
static const char *
comment(struct chk *c, const char *p, const char *end)
{
	const char *kw, *name;
	size_t n, t;
	struct fam *f;
	int help, suffix;

	p = skip_blank(p, end);
	for (kw = p; p < end && !is_blank(*p); p++)
		;
	help = p - kw == 4 && !memcmp(kw, "HELP", 4);
	if ((!help && !(p - kw == 4 && !memcmp(kw, "TYPE", 4))) || p == end)
		return NULL;
	name = p = skip_blank(p, end);
	if (!(n = name_len(p, end, 1)) || ((p += n) < end && !is_blank(*p)))
		return help ? "HELP without a metric name"
			    : "TYPE without a metric name";
	p = skip_blank(p, end);
	if (help) {
		for (; p < end; p++)
			if (*p == '\\' &&
				(++p == end || (*p != '\\' && *p != 'n')))
				return "a bad escape in HELP text (only \\\\ and \\n)";
	} else {
		for (kw = p; p < end && !is_blank(*p); p++)
			;
		for (t = T_COUNTER; t <= T_UNTYPED; t++)
			if ((size_t)(p - kw) == strlen(type_names[t]) &&
				!memcmp(kw, type_names[t], (size_t)(p - kw)))
				break;
		if (t > T_UNTYPED)
			return "TYPE not counter, gauge, histogram, summary or untyped";
		if (p < end)
			return "text after the TYPE";
	}
	f = family(c, name, n, &suffix);
	if (help && f->help)
		return fail(c, "a second HELP line for %.*s", (int)n, name);
	if (help)
		f->help = 1;
	else if (f->type || f->sampled)
		return fail(c,
			"a second TYPE line for %.*s, or one after its samples",
			(int)n, name);
	else
		f->type = (int)t;
	return NULL;
}

/* text_error tells why p..end is no text of the format (a NUL byte, not
 * UTF-8), or NULL. */
static const char *
text_error(const char *p, const char *end)
{
	const unsigned char *u = (const unsigned char *)p;
	const unsigned char *uend = (const unsigned char *)end;
	int n;

	for (; u < uend; u += n) {
		if (!*u)
			return "a NUL byte";
		if ((n = *u < 0x80 ? 1 : err_utf8_len(u, uend)) == 0)
			return "not valid UTF-8";
	}
	return NULL;
}

/* check_line checks the line p..end, without its line feed. */
static const char *
check_line(struct chk *c, const char *p, const char *end, size_t line)
{
	const char *why;

	if ((why = text_error(p, end)))
		return why;
	p = skip_blank(p, end);
	if (p == end)
		return NULL;
	if (*p == '#')
		return comment(c, p + 1, end);
	return sample(c, p, end, line);
}

size_t
prom_check(const char *buf, size_t len, char *why, size_t whylen)
{
	struct chk c = {0};
	const char *p = buf, *end = buf + len, *nl, *bad = NULL;
	size_t line = 0;

	c.fams = hm_new(free);
	c.series = hm_new(NULL);
	c.why = why;
	c.whylen = whylen;
	while (p < end && !bad) {
		line++;
		if (!(nl = memchr(p, '\n', (size_t)(end - p)))) {
			if (!(bad = text_error(p, end)))
				bad = "no line feed at its end";
		} else if (!(bad = check_line(&c, p, nl, line))) {
			p = nl + 1;
		}
	}
	if (bad && bad != why)
		snprintf(why, whylen, "%s", bad);
	hm_free(c.fams);
	hm_free(c.series);
	free(c.labs);
	free(c.key);
	return bad ? line : 0;
}

/* label_set_error tells why set (a label set without its braces) is not
 * a valid one, in why, or returns NULL. */
static const char *
label_set_error(const char *set, char *why, size_t whylen)
{
	struct chk c = {0};
	char *text = easprintf("{%s}", set);
	const char *p = text + 1, *end = text + strlen(text), *bad;

	c.why = why;
	c.whylen = whylen;
	if (!(bad = valid_value(set, strlen(set)) ? NULL : "not valid UTF-8"))
		bad = read_labels(&c, &p, end);
	if (!bad && p != end)
		bad = "text after the label set";
	if (bad && bad != why)
		snprintf(why, whylen, "%s", bad);
	free(c.labs);
	free(text);
	return bad ? why : NULL;
}
