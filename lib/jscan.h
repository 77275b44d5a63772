/* jscan: a fast, strict JSON reader for one NDJSON line.
 *
 * jansson builds a hash table per object, which costs more than the
 * whole scheduling decision; this reads a line into a flat array of
 * tokens instead. It accepts exactly RFC 8259 JSON (any value at the top,
 * UTF-8 checked, surrogate pairs joined, duplicate keys: the last wins)
 * and decodes strings in place: the line buffer is modified, and string
 * tokens point into it, NUL-terminated, until the buffer is reused.
 *
 * Token i is followed by its children: an object's members are key,
 * value pairs; an array's elements follow in order; t[i].next skips the
 * whole subtree. */
#ifndef HAZ_JSCAN_H
#define HAZ_JSCAN_H

#include <stddef.h>

enum js_type {
	JS_NULL,
	JS_FALSE,
	JS_TRUE,
	JS_INT,    /* a number without fraction or exponent that fits */
	JS_REAL,   /* any other number */
	JS_STRING,
	JS_ARRAY,
	JS_OBJECT,
};

struct js_tok {
	enum js_type type;
	int next;      /* index of the token after this value's subtree */
	int n;         /* object members or array elements */
	const char *s; /* JS_STRING: decoded text, NUL-terminated */
	size_t len;    /* JS_STRING: decoded length */
	long long i;   /* JS_INT: the value */
	double d;      /* JS_INT, JS_REAL: the value */
};

struct js_doc {
	struct js_tok *t; /* tokens, t[0] the top value */
	int n, cap;
	int errcol;       /* on error: 1-based byte column */
	char err[64];     /* on error: what was wrong */
};

/* js_parse reads buf[0..len) (modified in place) into d, reusing d's
 * token array. Returns 0, or -1 with d->errcol and d->err set. */
int js_parse(struct js_doc *d, char *buf, size_t len);

/* js_free releases the token array. */
void js_free(struct js_doc *d);

/* js_get returns the index of the value of key in object token obj (the
 * last one when repeated), or -1 when absent or obj is no object. */
int js_get(const struct js_doc *d, int obj, const char *key);

/* A set of member names to look up together: js_fields finds all of
 * them in one pass over an object, through a small hash of the names
 * made on first use (a name list whose hashes collide is still looked
 * up correctly, comparing every name). */
struct js_names {
	const char *const *names;
	int n;
	int ready, linear;
	unsigned char slot[256]; /* hash -> name number + 1 */
};

/* js_fields stores in out[i] the value token of names->names[i] in
 * object obj (the last one when repeated), or -1 when absent; all -1
 * when obj is no object. */
void js_fields(const struct js_doc *d, int obj, struct js_names *names,
	int *out);

/* js_str returns the text of a string token, or NULL for another type or
 * a missing token (i < 0). */
const char *js_str(const struct js_doc *d, int i);

/* js_repr writes a short human form of token i into buf (size n): the
 * number, a quoted string, true/false/null, "an array" or "an object";
 * returns buf. */
char *js_repr(const struct js_doc *d, int i, char *buf, size_t n);

#endif
