/* prom: the Prometheus text format (version 0.0.4): counters, gauges and
 * histograms kept in memory and rendered; the pieces a writer of its own
 * needs (escaped label values, values spelled as the format wants); and
 * a checker of whole expositions.
 *
 * Series are made on first use: a family (name, help, type) is declared
 * once, then prom_add and prom_observe name a family and an optional
 * label set, written as Prometheus writes it: `outcome="patched"` or
 * `from="2g.20gb",to="1g.10gb"`. Build label sets with prom_labels, which
 * escapes the values; a label set that is not valid (an unescaped quote,
 * a bad label name, a name twice) makes no series: it is reported once
 * on stderr and its updates are dropped, so the exposition stays valid.
 * All calls on a struct prom are safe from any thread. */
#ifndef HAZ_PROM_H
#define HAZ_PROM_H

#include <stddef.h>
#include <stdio.h>

struct prom;

struct prom *prom_new(void);
void prom_free(struct prom *p);

/* prom_counter and prom_gauge declare a family. A name that is not a
 * metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) ends the tool (status 1): names
 * are the program's own. help may hold anything; it is escaped. */
void prom_counter(struct prom *p, const char *name, const char *help);
void prom_gauge(struct prom *p, const char *name, const char *help);

/* prom_histogram declares a histogram with n upper bounds, ascending
 * (+Inf is added). */
void prom_histogram(struct prom *p, const char *name, const char *help,
	const double *bounds, size_t n);

/* prom_add adds v to a counter; prom_set sets a gauge (or counter) to v.
 * labels is NULL or a label set from prom_labels. */
void prom_add(struct prom *p, const char *name, const char *labels, double v);
void prom_set(struct prom *p, const char *name, const char *labels, double v);

/* prom_observe records v in a histogram. */
void prom_observe(struct prom *p, const char *name, const char *labels,
	double v);

/* prom_render returns the whole exposition, malloc'd; *len its length. */
char *prom_render(struct prom *p, size_t *len);

/* prom_labels returns the label set of the name, value pairs given, up
 * to a NULL name: `name="value",...` with each value escaped as
 * prom_escape does; a NULL value is empty, and bytes of a value that are
 * not valid UTF-8 are written as '?'. malloc'd; the caller frees it. A
 * bad label name shows when the set is used (see above). */
char *prom_labels(const char *name, ...) __attribute__((sentinel));

/* ---- writing the format without a struct prom ---- */

/* prom_escape writes the label value s[0..len) to out without its
 * quotes: backslash, double quote and line feed as \\, \" and \n, every
 * other character as it is. Returns 0, or -1 with nothing written when s
 * holds a NUL byte or is not valid UTF-8, which no label value may be. */
int prom_escape(FILE *out, const char *s, size_t len);

/* prom_value writes v into buf (PROM_VALUE_SIZE bytes) as the format
 * spells it: NaN, +Inf, -Inf, else the first of %.15g, %.16g and %.17g
 * that reads back as v exactly (42, 0.1, 0.30000000000000004, 1e+20).
 * Returns buf. */
#define PROM_VALUE_SIZE 32
const char *prom_value(double v, char *buf);

struct prom_label {
	const char *name;
	const char *value; /* NULL: empty */
	size_t len;        /* of value */
};

/* prom_sample writes the sample line `name{l="v",...} value` (no braces
 * when n is 0) to out, the values escaped, value written as given (a
 * prom_value or an integer's digits). Returns 0, or -1 with nothing
 * written when a label value cannot be escaped (see prom_escape). The
 * names are the caller's own and not checked. */
int prom_sample(FILE *out, const char *name, const struct prom_label *l,
	size_t n, const char *value);

/* ---- checking an exposition ---- */

/* prom_check tells whether buf[0..len) is an exposition every line of
 * which is valid in the text format 0.0.4, as Prometheus and
 * node-exporter read it: UTF-8, each line ending in a line feed; blank
 * lines; comments; `# HELP name text` (text escaping only \\ and \n) and
 * `# TYPE name type` (counter, gauge, histogram, summary or untyped),
 * at most one of each per family, the TYPE before the family's samples;
 * samples `name{label="value",...} value [timestamp]` with label values
 * escaping only \\, \" and \n, no label given twice or named __name__,
 * a value that Go's ParseFloat reads without a range error, a timestamp
 * in int64 milliseconds; a histogram's samples are NAME_bucket with a
 * numeric le, NAME_sum and NAME_count, a summary's NAME with a numeric
 * quantile, NAME_sum and NAME_count; no series twice. Stricter than the
 * format in two ways: a NUL byte is refused anywhere, and so are the
 * hexadecimal and digit-separated numbers ParseFloat also takes (0x1p3,
 * 1_000). Time and memory are linear in len. Returns 0, or the number
 * (from 1) of the first bad line with why it is bad in why (whylen bytes;
 * a name in it is printable ASCII). */
size_t prom_check(const char *buf, size_t len, char *why, size_t whylen);

#endif
