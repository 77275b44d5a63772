/* jscan: strict JSON into flat tokens, strings decoded in place (js_parse)
 * or left as they came (js_scan). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hex.h"
#include "jscan.h"

enum { MAX_DEPTH = 512 };

struct scan {
	struct js_doc *d;
	char *buf, *p, *end;
	int depth;
	int raw; /* js_scan: check, change nothing */
};

static int value(struct scan *s);

/* fail records what went wrong at p; returns -1. */
static int
fail(struct scan *s, const char *p, const char *what)
{
	s->d->errcol = (int)(p - s->buf) + 1;
	snprintf(s->d->err, sizeof s->d->err, "%s", what);
	return -1;
}

/* skip_ws skips whitespace; most often there is none. */
static inline void
skip_ws(struct scan *s)
{
	const char *p = s->p;

	if (p < s->end && (unsigned char)*p > ' ')
		return;
	while (s->p < s->end &&
		(*s->p == ' ' || *s->p == '\t' || *s->p == '\n' ||
			*s->p == '\r'))
		s->p++;
	if (s->p != p)
		s->d->spaced = 1;
}

/* push appends a token of type t and returns its index. */
static int
push(struct scan *s, enum js_type t)
{
	struct js_doc *d = s->d;

	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 64;
		d->t = erealloc(d->t, (size_t)d->cap * sizeof *d->t);
	}
	d->t[d->n].type = t;
	d->t[d->n].n = 0;
	d->t[d->n].esc = 0;
	return d->n++;
}

/* hex4 reads four hex digits at p into *out. Returns 0 or -1. */
static int
hex4(const char *p, const char *end, unsigned *out)
{
	unsigned v = 0;
	int i, h;

	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		if ((h = hex_digit((unsigned char)p[i])) < 0)
			return -1;
		v = v << 4 | (unsigned)h;
	}
	*out = v;
	return 0;
}

/* put_utf8 writes code point c at *w, advancing it. */
static void
put_utf8(char **w, unsigned c)
{
	unsigned char *o = (unsigned char *)*w;

	if (c < 0x80) {
		*o++ = (unsigned char)c;
	} else if (c < 0x800) {
		*o++ = (unsigned char)(0xc0 | c >> 6);
		*o++ = (unsigned char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		*o++ = (unsigned char)(0xe0 | c >> 12);
		*o++ = (unsigned char)(0x80 | (c >> 6 & 0x3f));
		*o++ = (unsigned char)(0x80 | (c & 0x3f));
	} else {
		*o++ = (unsigned char)(0xf0 | c >> 18);
		*o++ = (unsigned char)(0x80 | (c >> 12 & 0x3f));
		*o++ = (unsigned char)(0x80 | (c >> 6 & 0x3f));
		*o++ = (unsigned char)(0x80 | (c & 0x3f));
	}
	*w = (char *)o;
}

/* escape decodes the escape at s->p (just past the backslash) to *w. */
static int
escape(struct scan *s, char **w)
{
	const char *at = s->p - 1;
	unsigned c, lo;

	switch (*s->p++) {
	case '"': *(*w)++ = '"'; return 0;
	case '\\': *(*w)++ = '\\'; return 0;
	case '/': *(*w)++ = '/'; return 0;
	case 'b': *(*w)++ = '\b'; return 0;
	case 'f': *(*w)++ = '\f'; return 0;
	case 'n': *(*w)++ = '\n'; return 0;
	case 'r': *(*w)++ = '\r'; return 0;
	case 't': *(*w)++ = '\t'; return 0;
	case 'u': break;
	default: return fail(s, at, "invalid escape");
	}
	if (hex4(s->p, s->end, &c) < 0)
		return fail(s, at, "invalid \\u escape");
	s->p += 4;
	if (c >= 0xdc00 && c <= 0xdfff)
		return fail(s, at, "invalid Unicode surrogate");
	if (c >= 0xd800 && c <= 0xdbff) {
		if (s->end - s->p < 6 || s->p[0] != '\\' || s->p[1] != 'u' ||
			hex4(s->p + 2, s->end, &lo) < 0 || lo < 0xdc00 ||
			lo > 0xdfff)
			return fail(s, at, "invalid Unicode surrogate");
		s->p += 6;
		c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (!c)
		s->d->nul = 1;
	put_utf8(w, c);
	return 0;
}

/* plain[c] says whether byte c needs no decoding in a string: printable
 * ASCII other than quote and backslash. */
/* clang-format off */
static const unsigned char plain[256] = {
#define ROW16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
	ROW16(0), ROW16(0),
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x22 '"' */
	ROW16(1), ROW16(1),
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x5c '\\' */
	ROW16(1), ROW16(1),
#undef ROW16
};
/* clang-format on */

/* ONES * b repeats byte b through a word; any_below(v, b) says whether
 * some byte of v is below b (b <= 128), any_zero whether one is 0. */
#define ONES 0x0101010101010101ull
#define HIGHS (ONES * 0x80)
#define any_below(v, b) (((v)-ONES * (b)) & ~(v)&HIGHS)
#define any_zero(v) any_below(v, 1)

/* plain_run returns how many bytes from p on need no decoding, reading
 * eight at a time: a word's mask has the high bit of each byte that is a
 * control character, non-ASCII, a quote or a backslash set, and maybe
 * of some bytes after the first such one too (a borrow), never before
 * it; so on a little-endian machine the lowest bit set names it. */
static size_t
plain_run(const char *p, const char *end)
{
	const unsigned char *q = (const unsigned char *)p;
	uint64_t v, mask;

	while ((const unsigned char *)end - q >= 8) {
		memcpy(&v, q, sizeof v);
		mask = (v & HIGHS) | any_below(v, 0x20) |
			any_zero(v ^ ONES * '"') | any_zero(v ^ ONES * '\\');
		if (mask) {
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			q += __builtin_ctzll(mask) >> 3;
			return (size_t)(q - (const unsigned char *)p);
#else
			break;
#endif
		}
		q += 8;
	}
	while (q < (const unsigned char *)end && plain[*q])
		q++;
	return (size_t)(q - (const unsigned char *)p);
}

/* ESCAPED: what special returns for an escape it decoded, above any
 * UTF-8 sequence's length. */
enum { ESCAPED = 8 };

/* special handles what ends a run of plain bytes at s->p in the string
 * opened at open: -1 for an error, 0 at the closing quote, ESCAPED for
 * an escape (decoded to *w, s->p moved past it), else the length of the
 * valid UTF-8 sequence at s->p (not moved past). */
static int
special(struct scan *s, const char *open, char **w)
{
	unsigned char c;
	int n;

	if (s->p >= s->end)
		return fail(s, open, "unterminated string");
	c = (unsigned char)*s->p;
	if (c == '"')
		return 0;
	if (c < 0x20)
		return fail(s, s->p, "control character in string");
	if (c == '\\') {
		if (++s->p >= s->end)
			return fail(s, open, "unterminated string");
		return escape(s, w) < 0 ? -1 : ESCAPED;
	}
	n = err_utf8_len((unsigned char *)s->p, (unsigned char *)s->end);
	if (!n)
		return fail(s, s->p, "invalid UTF-8");
	return n;
}

/* raw_string checks a string at s->p (on the quote) and makes a token
 * of its raw text, for js_scan. */
static int
raw_string(struct scan *s)
{
	const char *open = s->p++, *start = s->p;
	char scratch[8], *w;
	int t, n, esc = 0;

	for (;;) {
		s->p += plain_run(s->p, s->end);
		w = scratch;
		if ((n = special(s, open, &w)) <= 0)
			break;
		if (n == ESCAPED)
			esc = 1;
		else
			s->p += n;
	}
	if (n < 0)
		return -1;
	t = push(s, JS_STRING);
	s->d->t[t].s = start;
	s->d->t[t].len = (size_t)(s->p - start);
	s->d->t[t].esc = esc;
	s->d->t[t].next = t + 1;
	s->p++;
	return t;
}

/* string reads a string at s->p (on the quote) into a new token,
 * decoding in place and ending it with NUL where its quote was. Runs of
 * plain bytes are only moved once an escape has shortened the text. */
static int
string(struct scan *s)
{
	const char *open = s->p++;
	char *w = s->p, *start = s->p;
	size_t run;
	int t, n;

	for (;;) {
		run = plain_run(s->p, s->end);
		if (w != s->p)
			memmove(w, s->p, run);
		w += run;
		s->p += run;
		if ((n = special(s, open, &w)) <= 0)
			break;
		if (n != ESCAPED) {
			memmove(w, s->p, (size_t)n);
			w += n;
			s->p += n;
		}
	}
	if (n < 0)
		return -1;
	s->p++;
	*w = '\0';
	t = push(s, JS_STRING);
	s->d->t[t].s = start;
	s->d->t[t].len = (size_t)(w - start);
	s->d->t[t].next = t + 1;
	return t;
}

/* digits skips one or more decimal digits; returns how many. */
static int
digits(struct scan *s)
{
	const char *p = s->p;

	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
	return (int)(s->p - p);
}

/* number reads a number at s->p in JSON's grammar. */
static int
number(struct scan *s)
{
	const char *start = s->p;
	int real = 0, t;
	char tmp[64], *copy, *end;
	size_t n;

	if (*s->p == '-')
		s->p++;
	if (s->p < s->end && *s->p == '0')
		s->p++;
	else if (!digits(s))
		return fail(s, start, "invalid number");
	if (s->p < s->end && *s->p == '.') {
		s->p++;
		real = 1;
		if (!digits(s))
			return fail(s, start, "invalid number");
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		s->p++;
		real = 1;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (!digits(s))
			return fail(s, start, "invalid number");
	}
	t = push(s, JS_REAL);
	n = (size_t)(s->p - start);
	if (!real && n <= 18) { /* fits in a long long: no strtoll */
		long long v = 0;
		const char *q = start + (*start == '-');

		for (; q < s->p; q++)
			v = v * 10 + (*q - '0');
		s->d->t[t].type = JS_INT;
		s->d->t[t].i = *start == '-' ? -v : v;
		s->d->t[t].d = (double)s->d->t[t].i;
		return t;
	}
	copy = n < sizeof tmp ? tmp : emalloc(n + 1);
	memcpy(copy, start, n);
	copy[n] = '\0';
	errno = 0;
	if (!real)
		s->d->t[t].i = strtoll(copy, &end, 10);
	if (!real && errno != ERANGE) {
		s->d->t[t].type = JS_INT;
		s->d->t[t].d = (double)s->d->t[t].i;
	} else {
		s->d->t[t].d = strtod(copy, &end);
		if (!real || isinf(s->d->t[t].d))
			s->d->bignum = 1;
	}
	if (copy != tmp)
		free(copy);
	return t;
}

/* literal reads true, false or null at s->p. */
static int
literal(struct scan *s, const char *word, enum js_type type)
{
	size_t n = strlen(word);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return fail(s, s->p, "invalid literal");
	s->p += n;
	return push(s, type);
}

/* members reads the rest of an object or array after its opening
 * bracket into token t. */
static int
members(struct scan *s, int t, int object)
{
	char close = object ? '}' : ']';
	int n = 0;

	skip_ws(s);
	if (s->p < s->end && *s->p == close) {
		s->p++;
		return 0;
	}
	for (;;) {
		skip_ws(s);
		if (object) {
			if (s->p >= s->end || *s->p != '"')
				return fail(s, s->p,
					s->p < s->end
						? "object key expected"
						: "unexpected end of input");
			if ((s->raw ? raw_string(s) : string(s)) < 0)
				return -1;
			skip_ws(s);
			if (s->p >= s->end || *s->p != ':')
				return fail(s, s->p, "':' expected");
			s->p++;
		}
		if (value(s) < 0)
			return -1;
		n++;
		skip_ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == close) {
			s->p++;
			s->d->t[t].n = n;
			return 0;
		}
		if (s->p >= s->end)
			return fail(s, s->p, "unexpected end of input");
		return fail(s, s->p,
			object ? "',' or '}' expected" : "',' or ']' expected");
	}
}

/* value reads any value at s->p; returns its token index. */
static int
value(struct scan *s)
{
	int t;

	skip_ws(s);
	if (s->p >= s->end)
		return fail(s, s->p, "unexpected end of input");
	switch (*s->p) {
	case '"': t = s->raw ? raw_string(s) : string(s); break;
	case 't': t = literal(s, "true", JS_TRUE); break;
	case 'f': t = literal(s, "false", JS_FALSE); break;
	case 'n': t = literal(s, "null", JS_NULL); break;
	case '{':
	case '[':
		if (++s->depth > MAX_DEPTH)
			return fail(s, s->p, "nesting too deep");
		t = push(s, *s->p == '{' ? JS_OBJECT : JS_ARRAY);
		s->d->t[t].s = s->p++;
		if (members(s, t, s->d->t[t].type == JS_OBJECT) < 0)
			return -1;
		s->d->t[t].len = (size_t)(s->p - s->d->t[t].s);
		s->depth--;
		break;
	default:
		if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))
			t = number(s);
		else
			return fail(s, s->p, "unexpected character");
	}
	if (t >= 0)
		s->d->t[t].next = s->d->n;
	return t;
}

static int
parse(struct js_doc *d, char *buf, size_t len, int raw)
{
	struct scan s = {d, buf, buf, buf + len, 0, raw};

	d->n = 0;
	d->errcol = 0;
	d->err[0] = '\0';
	d->spaced = 0;
	d->bignum = 0;
	d->nul = 0;
	if (value(&s) < 0)
		return -1;
	skip_ws(&s);
	if (s.p != s.end)
		return fail(&s, s.p, "end of input expected");
	return 0;
}

int
js_parse(struct js_doc *d, char *buf, size_t len)
{
	return parse(d, buf, len, 0);
}

int
js_scan(struct js_doc *d, const char *buf, size_t len)
{
	return parse(d, (char *)buf, len, 1); /* raw: written to never */
}

void
js_free(struct js_doc *d)
{
	free(d->t);
	d->t = NULL;
	d->n = d->cap = 0;
}

int
js_get(const struct js_doc *d, int obj, const char *key)
{
	int i, k, found = -1;

	if (obj < 0 || d->t[obj].type != JS_OBJECT)
		return -1;
	for (i = 0, k = obj + 1; i < d->t[obj].n; i++) {
		if (d->t[k].s[0] == key[0] && strcmp(d->t[k].s, key) == 0)
			found = k + 1;
		k = d->t[k + 1].next;
	}
	return found;
}

/* name_hash mixes a name's length and first, second and last bytes: no
 * two of the record fields of sched-pick collide. */
static unsigned
name_hash(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	return len ? ((unsigned)len + u[0] + 2u * u[len - 1] + 4u * u[1]) & 255
		   : 0;
}

enum { NAMES_IDLE, NAMES_BUILDING, NAMES_READY };

/* The slots are published with an atomic release and read after an
 * acquire; helgrind sees only locks, so it is told so where its header
 * is at hand (t/0145 runs it), and the marks are nothing otherwise. */
#if defined(__has_include)
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#endif
#endif
#ifndef ANNOTATE_HAPPENS_BEFORE
#define ANNOTATE_HAPPENS_BEFORE(obj) ((void)0)
#define ANNOTATE_HAPPENS_AFTER(obj) ((void)0)
#define ANNOTATE_BENIGN_RACE_SIZED(addr, size, why) ((void)0)
#endif

static void
names_init(struct js_names *nm)
{
	unsigned h;
	int i;

	memset(nm->slot, 0, sizeof nm->slot);
	nm->linear = 0;
	for (i = 0; i < nm->n; i++) {
		h = name_hash(nm->names[i], strlen(nm->names[i]));
		if (nm->slot[h] || i >= 255)
			nm->linear = 1;
		nm->slot[h] = (unsigned char)(i + 1);
	}
	ANNOTATE_HAPPENS_BEFORE(&nm->ready);
	__atomic_store_n(&nm->ready, NAMES_READY, __ATOMIC_RELEASE);
}

/* names_ready builds nm's slots on first use, in one thread only: it
 * returns 1 when they may be read, 0 while another thread builds them
 * (the caller then compares every name). */
static int
names_ready(struct js_names *nm)
{
	int idle = NAMES_IDLE;

	if (__atomic_load_n(&nm->ready, __ATOMIC_ACQUIRE) == NAMES_READY) {
		ANNOTATE_HAPPENS_AFTER(&nm->ready);
		return 1;
	}
	ANNOTATE_BENIGN_RACE_SIZED(&nm->ready, sizeof nm->ready, "atomic");
	if (!__atomic_compare_exchange_n(&nm->ready, &idle, NAMES_BUILDING, 0,
		    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	names_init(nm);
	return 1;
}

void
js_fields(const struct js_doc *d, int obj, struct js_names *nm, int *out)
{
	const struct js_tok *key;
	int i, k, j, linear;

	linear = !names_ready(nm) || nm->linear;
	for (j = 0; j < nm->n; j++)
		out[j] = -1;
	if (obj < 0 || d->t[obj].type != JS_OBJECT)
		return;
	for (i = 0, k = obj + 1; i < d->t[obj].n; i++, k = d->t[k + 1].next) {
		key = &d->t[k];
		if (!linear) {
			j = nm->slot[name_hash(key->s, key->len)] - 1;
			if (j >= 0 && strcmp(nm->names[j], key->s) == 0)
				out[j] = k + 1;
			continue;
		}
		for (j = 0; j < nm->n; j++)
			if (strcmp(nm->names[j], key->s) == 0)
				out[j] = k + 1;
	}
}

const char *
js_str(const struct js_doc *d, int i)
{
	return i >= 0 && d->t[i].type == JS_STRING ? d->t[i].s : NULL;
}

/* real_repr writes v as jansson would: ".0" after a whole number. */
static void
real_repr(double v, char *buf, size_t n)
{
	size_t len;

	snprintf(buf, n, "%.15g", v);
	len = strlen(buf);
	if (!strpbrk(buf, ".eEni") && len + 2 < n)
		memcpy(buf + len, ".0", 3);
}

char *
js_repr(const struct js_doc *d, int i, char *buf, size_t n)
{
	static const char *const words[] = {"null", "false", "true"};
	enum js_type t = i < 0 ? JS_NULL : d->t[i].type;

	if (i < 0)
		snprintf(buf, n, "nothing");
	else if (t <= JS_TRUE)
		snprintf(buf, n, "%s", words[t]);
	else if (t == JS_INT)
		snprintf(buf, n, "%lld", d->t[i].i);
	else if (t == JS_REAL)
		real_repr(d->t[i].d, buf, n);
	else if (t == JS_STRING)
		snprintf(buf, n, "\"%s\"", d->t[i].s);
	else
		snprintf(buf, n, "%s",
			t == JS_ARRAY ? "an array" : "an object");
	return buf;
}

/* ---- the raw tokens of js_scan ---------------------------------------- */

/* unescape decodes the n raw bytes of a checked string at raw to out
 * (room for n + 1 bytes), NUL-terminated; returns the decoded length. */
static size_t
unescape(const char *raw, size_t n, char *out)
{
	struct js_doc none = {0};
	struct scan s = {&none, (char *)raw, (char *)raw, (char *)raw + n, 0,
		1};
	char *w = out;

	while (s.p < s.end) {
		if (*s.p != '\\') {
			*w++ = *s.p++;
			continue;
		}
		s.p++;
		escape(&s, &w); /* checked by js_scan: cannot fail */
	}
	*w = '\0';
	return (size_t)(w - out);
}

char *
js_raw_str(const struct js_doc *d, int i)
{
	const struct js_tok *t;
	char *out;

	if (i < 0 || d->t[i].type != JS_STRING)
		return NULL;
	t = &d->t[i];
	out = emalloc(t->len + 1);
	if (t->esc) {
		unescape(t->s, t->len, out);
	} else {
		memcpy(out, t->s, t->len);
		out[t->len] = '\0';
	}
	return out;
}

int
js_raw_eq(const struct js_doc *d, int i, const char *s)
{
	const struct js_tok *t;
	char *dec;
	size_t n;
	int eq;

	if (i < 0 || d->t[i].type != JS_STRING)
		return 0;
	t = &d->t[i];
	if (!t->esc)
		return t->len == strlen(s) && memcmp(t->s, s, t->len) == 0;
	dec = emalloc(t->len + 1);
	n = unescape(t->s, t->len, dec); /* may hold a NUL: compare all */
	eq = n == strlen(s) && memcmp(dec, s, n) == 0;
	free(dec);
	return eq;
}

int
js_raw_get(const struct js_doc *d, int obj, const char *key)
{
	int i, k, found = -1;

	if (obj < 0 || d->t[obj].type != JS_OBJECT)
		return -1;
	for (i = 0, k = obj + 1; i < d->t[obj].n; i++) {
		if (js_raw_eq(d, k, key))
			found = k + 1;
		k = d->t[k + 1].next;
	}
	return found;
}

size_t
js_compact(const char *p, size_t n, char *out)
{
	const char *end = p + n;
	char *w = out;
	int in_string = 0;

	for (; p < end; p++) {
		if (in_string) {
			*w++ = *p;
			if (*p == '\\')
				*w++ = *++p;
			else if (*p == '"')
				in_string = 0;
		} else if (*p != ' ' && *p != '\t' && *p != '\n' &&
			*p != '\r') {
			*w++ = *p;
			in_string = *p == '"';
		}
	}
	return (size_t)(w - out);
}
