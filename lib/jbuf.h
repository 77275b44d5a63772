/* jbuf (jb_): build one JSON record as text, then write it as an NDJSON line.
 *
 * For records written often, where building a jansson object and dumping
 * it costs more than the work that produced it. The output matches
 * nd_write's (which uses jb_json): compact, UTF-8 as is, control
 * characters, quote and backslash escaped, reals in the fewest digits that
 * read back as the same double (0.1 is "0.1", 0.1+0.2 is
 * "0.30000000000000004") with a ".0" when they look whole and exponents
 * as "1e20". No infinity or NaN is ever written: JSON has none. The
 * caller writes the punctuation.
 *
 * Threads: no state of its own: a buffer belongs to one thread at a time. */
#ifndef HAZ_JBUF_H
#define HAZ_JBUF_H

#include <stddef.h>

#include <jansson.h>

struct jb {
	char *buf; /* len bytes, not NUL-terminated */
	size_t len, cap;
};

/* jb_reset empties b, keeping its memory. */
void jb_reset(struct jb *b);
void jb_free(struct jb *b);

/* jb_raw appends s as it is; jb_str appends s as a quoted JSON string. */
void jb_raw(struct jb *b, const char *s);
void jb_str(struct jb *b, const char *s);
/* jb_strn appends s[0..len) as a JSON string, a NUL byte as \u0000;
 * s[len] must be NUL (as in jansson's strings). */
void jb_strn(struct jb *b, const char *s, size_t len);
void jb_int(struct jb *b, long long v);
/* jb_real appends a finite v; infinity or NaN ends the tool (status 1)
 * naming it: callers refuse such values where they come in. */
void jb_real(struct jb *b, double v);

/* jb_dtoa writes v as jb_real does into buf (JB_DTOA_SIZE bytes) and
 * returns its length, or -1 (buf untouched) when v is not finite. */
#define JB_DTOA_SIZE 40
int jb_dtoa(double v, char *buf);

/* jb_json appends v as compact JSON: members in their order, the text
 * jansson's JSON_COMPACT dump makes except for reals, which are written
 * as jb_real writes them (jansson writes a fixed number of digits). */
void jb_json(struct jb *b, const json_t *v);

/* jb_dumps returns v as compact JSON text, malloc'd, NUL-terminated. */
char *jb_dumps(const json_t *v);

/* jb_milli appends v / 1000 with up to three decimals, at least one:
 * 15000 is 15.0, 26667 is 26.667 (no printf: it costs more than the
 * decision the number describes). */
void jb_milli(struct jb *b, long long v);

/* jb_write writes b plus "\n" to stdout and flushes; a write error ends
 * the tool with status 1. */
void jb_write(const struct jb *b);

#endif
