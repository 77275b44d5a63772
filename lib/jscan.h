/* jscan (js_): a fast, strict JSON reader for one NDJSON line.
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
 * whole subtree.
 *
 * js_scan checks a line the same way but leaves it as it is, so that a
 * value can be passed on as the very bytes that came in: its tokens
 * point at the raw text, and only the strings a caller asks for are
 * decoded (js_raw_get, js_raw_eq, js_raw_str).
 *
 * Threads: no state of its own but a js_names' slots, which are built once,
 * by the first thread to use it, and then shared: a js_names may be used
 * by any number of threads at once. A js_doc belongs to one thread. */
#ifndef HAZ_JSCAN_H
#define HAZ_JSCAN_H

#include <stddef.h>

enum js_type {
	JS_NULL,
	JS_FALSE,
	JS_TRUE,
	JS_INT,  /* a number without fraction or exponent that fits */
	JS_REAL, /* any other number */
	JS_STRING,
	JS_ARRAY,
	JS_OBJECT,
};

struct js_tok {
	enum js_type type;
	int next;      /* index of the token after this value's subtree */
	int n;         /* object members or array elements */
	int esc;       /* js_scan, JS_STRING: the raw text has escapes */
	const char *s; /* JS_STRING: decoded text, NUL-terminated */
	size_t len;    /* JS_STRING: decoded length */
	long long i;   /* JS_INT: the value */
	double d;      /* JS_INT, JS_REAL: the value */
};

/* After js_scan, s and len of a JS_STRING are its raw text between the
 * quotes, and those of a JS_OBJECT or JS_ARRAY its whole raw text. */

struct js_doc {
	struct js_tok *t; /* tokens, t[0] the top value */
	int n, cap;
	int errcol;   /* on error: 1-based byte column */
	char err[64]; /* on error: what was wrong */
	int spaced;   /* after js_scan: whitespace outside strings */
	int bignum;   /* an integer out of long long's range was read
			 (as JS_REAL), or a real overflowed to infinity */
	int nul;      /* a string or key holds \u0000 */
};

/* js_parse reads buf[0..len) (modified in place) into d, reusing d's
 * token array. Returns 0, or -1 with d->errcol and d->err set. */
int js_parse(struct js_doc *d, char *buf, size_t len);

/* js_scan reads buf[0..len) into d as js_parse does, with the same
 * checks and messages, but without changing or decoding it: string,
 * object and array tokens get their raw text in s and len (see struct
 * js_tok), and d->spaced says whether any whitespace lies outside
 * strings. js_get, js_fields, js_str and js_repr do not apply to its
 * tokens; js_raw_* do. Returns 0, or -1 with d->errcol and d->err set. */
int js_scan(struct js_doc *d, const char *buf, size_t len);

/* js_raw_eq says whether string token i (of js_scan) decodes to s. */
int js_raw_eq(const struct js_doc *d, int i, const char *s);

/* js_raw_get is js_get for the tokens of js_scan. */
int js_raw_get(const struct js_doc *d, int obj, const char *key);

/* js_raw_str returns string token i (of js_scan) decoded, malloc'd and
 * NUL-terminated, or NULL for another type or a missing token (i < 0). */
char *js_raw_str(const struct js_doc *d, int i);

/* js_compact copies the n bytes of JSON at p, which js_scan accepted, to
 * out (room for n bytes) without the whitespace outside strings; returns
 * the length copied. */
size_t js_compact(const char *p, size_t n, char *out);

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
