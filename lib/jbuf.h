/* jbuf: build one JSON record as text, then write it as an NDJSON line.
 *
 * For records written often, where building a jansson object and dumping
 * it costs more than the work that produced it. The output matches
 * nd_write's: compact, UTF-8 as is, control characters, quote and
 * backslash escaped, reals with up to 15 significant digits and a ".0"
 * when they look whole. The caller writes the punctuation. */
#ifndef HAZ_JBUF_H
#define HAZ_JBUF_H

#include <stddef.h>

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
void jb_int(struct jb *b, long long v);
void jb_real(struct jb *b, double v);

/* jb_milli appends v / 1000 with up to three decimals, at least one:
 * 15000 is 15.0, 26667 is 26.667 (no printf: it costs more than the
 * decision the number describes). */
void jb_milli(struct jb *b, long long v);

/* jb_write writes b plus "\n" to stdout and flushes; a write error ends
 * the tool with status 1. */
void jb_write(const struct jb *b);

#endif
