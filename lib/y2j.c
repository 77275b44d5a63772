/* y2j: YAML to jansson, one document at a time; see y2j.h.
 *
 * A recursive descent over libyaml's events: parse_node reads one node
 * (scalar, alias, sequence or mapping) with all its events. Errors are
 * of two sorts: libyaml's (syntax, bad UTF-8, read errors) end the
 * stream; ours (duplicate key, bad scalar, limits) skip to the end of
 * the document, so the next one can still be read.
 *
 * Nesting is refused before libyaml scans far ahead: its scanner checks
 * every open flow level on every token, so a document nested n deep
 * costs it n^2. The read handler hands libyaml small chunks and looks at
 * its nesting (open flow collections plus block indentation levels, each
 * a collection the parser will open) before each one; once that passes
 * Y2J_MAX_DEPTH it feeds one more simple-key window (1024 characters, or
 * to the end of the line: libyaml's own lookahead), so every token up to
 * the excess is final and the parser reports the excess exactly where it
 * reads it, then ends the input there (a cut). Reading then goes on at
 * the next line that starts or ends a document ("---" or "..." and a
 * blank): libyaml ends whatever it reads at such a line, so a new parser
 * started there reads the documents that follow as one would have. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "err.h"
#include "y2j.h"

#define TAG_PREFIX "tag:yaml.org,2002:"
#define DIGITS "0123456789"

enum state { S_READING, S_PENDING, S_BROKEN, S_END };
enum kind { K_STR, K_NULL, K_BOOL, K_INT, K_FLOAT };

/* CHUNK_MAX: the most bytes handed to libyaml at once, so that its
 * nesting is looked at every few hundred characters; SIMPLE_KEY_WINDOW:
 * how far its scanner looks ahead for the ':' of a key, at most. */
enum { CHUNK_MAX = 512, SIMPLE_KEY_WINDOW = 1024 };

struct y2j_stream {
	yaml_parser_t parser;
	char *name;
	FILE *f; /* the input, or buf[pos..len) */
	const char *buf;
	size_t len, pos;
	int errnum; /* errno of a read error */
	/* Input position, to place libyaml's reader errors: bytes handed
	 * over so far, and where the last chunk (never more than a line)
	 * began. */
	size_t offset, chunk_off, col, chunk_col;
	unsigned long line, chunk_line;
	enum state state;
	/* Nesting past the limit, seen by the read handler: where libyaml's
	 * scanner was (tripped), and whether the input was then ended (cut).
	 * told: the parser reported it in this document. */
	int tripped, cut, told;
	yaml_mark_t trip;
	/* Where the parser of now started, after cuts: lines before it,
	 * bytes before it. Marks of libyaml count from there. */
	unsigned long line_base;
	size_t off_base;
	/* Bytes read from the input ahead of the parser, pend[pend_pos ..
	 * npend), handed over first: a line start looked at by resync. */
	unsigned char pend[8];
	int pend_pos, npend;
	/* This document's anchors: name -> [value, nodes, depth, text]. */
	json_t *anchors;
	unsigned long nodes, max_nodes; /* made so far, allowed */
	size_t text, max_text;          /* scalar bytes so far, allowed */
	int whole;             /* limits count all documents together */
	int depth, deepest;    /* open collections now, and at most in the
				* node being made (aliases included) */
	yaml_mark_t doc_mark;  /* where the last document began */
	struct y2j_error *err; /* where this call reports */
	int failed;            /* an error is set in this call */
};

struct key {
	char *text;
	size_t len;
	int merge;
	yaml_mark_t mark;
};

static json_t *parse_node(struct y2j_stream *s, yaml_event_t *ev);

static json_t *
jcheck(json_t *v)
{
	if (!v)
		err_die(HAZ_FAIL, "jansson: out of memory");
	return v;
}

/* ---- errors ---- */

static void
vfail(struct y2j_stream *s, unsigned long line, unsigned long col,
	const char *fmt, va_list ap)
{
	struct y2j_error *e = s->err;
	int n;

	e->line = line;
	e->column = col;
	if (line)
		n = snprintf(e->text, sizeof e->text, "%s:%lu:%lu: ", s->name,
			line, col);
	else
		n = snprintf(e->text, sizeof e->text, "%s: ", s->name);
	if (n >= 0 && (size_t)n < sizeof e->text)
		vsnprintf(e->text + n, sizeof e->text - (size_t)n, fmt, ap);
	s->failed = 1;
}

static void __attribute__((format(printf, 4, 5))) fail_pos(struct y2j_stream *s,
	unsigned long line, unsigned long col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(s, line, col, fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 3, 4)))
fail_at(struct y2j_stream *s, yaml_mark_t mark, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(s, mark.line + 1 + s->line_base, mark.column + 1, fmt, ap);
	va_end(ap);
}

/* fail_reader reports a reader error (bad encoding, read failure) at
 * the position of the offending byte when it lies in the last chunk. */
static void
fail_reader(struct y2j_stream *s)
{
	yaml_parser_t *p = &s->parser;
	size_t off = p->problem_offset + s->off_base;
	unsigned long line = 0, col = 0;

	if (s->errnum) {
		fail_pos(s, 0, 0, "read error: %s", strerror(s->errnum));
		return;
	}
	if (off >= s->chunk_off && off <= s->offset) {
		line = s->chunk_line;
		col = s->chunk_col + (off - s->chunk_off) + 1;
	}
	if (p->problem_value != -1)
		fail_pos(s, line, col, "%s (#x%02X)", p->problem,
			(unsigned)p->problem_value);
	else
		fail_pos(s, line, col, "%s", p->problem);
}

/* fail_syntax reports the error libyaml stopped on; the stream is
 * finished after it. */
static void
fail_syntax(struct y2j_stream *s)
{
	yaml_parser_t *p = &s->parser;
	const char *why = p->problem ? p->problem : "unknown error";

	s->state = S_BROKEN;
	if (p->error == YAML_MEMORY_ERROR)
		err_die(HAZ_FAIL, "libyaml: out of memory");
	if (s->cut) {
		/* what libyaml says past a cut is about the cut */
		s->state = S_END;
		s->told = 1;
		fail_at(s, s->trip, "nesting deeper than %d levels",
			Y2J_MAX_DEPTH);
	} else if (p->error == YAML_READER_ERROR)
		fail_reader(s);
	else if (p->context)
		fail_at(s, p->problem_mark, "%s (%s at %lu:%lu)", why,
			p->context,
			(unsigned long)p->context_mark.line + 1 + s->line_base,
			(unsigned long)p->context_mark.column + 1);
	else
		fail_at(s, p->problem_mark, "%s", why);
}

/* ---- input ---- */

static int
source_byte(struct y2j_stream *s)
{
	if (s->f)
		return getc(s->f);
	return s->pos < s->len ? (unsigned char)s->buf[s->pos++] : EOF;
}

/* peek returns byte i (0..3) ahead of the reading position, or EOF. */
static int
peek(struct y2j_stream *s, int i)
{
	int c;

	if (s->pend_pos == s->npend)
		s->pend_pos = s->npend = 0;
	while (s->npend - s->pend_pos <= i) {
		if ((c = source_byte(s)) == EOF)
			return EOF;
		s->pend[s->npend++] = (unsigned char)c;
	}
	return s->pend[s->pend_pos + i];
}

/* take returns the next byte, or EOF, counting it into the position. */
static int
take(struct y2j_stream *s)
{
	int c = s->pend_pos < s->npend ? s->pend[s->pend_pos++]
				       : source_byte(s);

	if (c == EOF)
		return EOF;
	s->offset++;
	if (c == '\n') {
		s->line++;
		s->col = 0;
	} else {
		s->col++;
	}
	return c;
}

/* too_deep watches libyaml's scanner for nesting past the limit (see
 * the top of this file) and tells when the input is to end: one simple
 * key window after the scanner first went past it. */
static int
too_deep(struct y2j_stream *s)
{
	const yaml_parser_t *p = &s->parser;
	ptrdiff_t depth = p->flow_level + (p->indents.top - p->indents.start);

	if (!s->tripped && depth > Y2J_MAX_DEPTH) {
		s->tripped = 1;
		s->trip = p->mark;
	}
	if (s->tripped &&
		(p->mark.line > s->trip.line ||
			p->mark.index > s->trip.index + SIMPLE_KEY_WINDOW))
		s->cut = 1;
	return s->cut;
}

/* read_chunk is libyaml's read handler: it hands over at most one line,
 * and at most CHUNK_MAX bytes, at a time, so a pipe streams, a reader
 * error can be placed and nesting is watched; it ends the input early
 * when too_deep says so. */
static int
read_chunk(void *data, unsigned char *buf, size_t size, size_t *got)
{
	struct y2j_stream *s = data;
	size_t n = 0;
	int c;

	*got = 0;
	if (too_deep(s))
		return 1;
	if (size > CHUNK_MAX)
		size = CHUNK_MAX;
	s->chunk_off = s->offset;
	s->chunk_line = s->line;
	s->chunk_col = s->col;
	while (n < size && (c = take(s)) != EOF) {
		buf[n++] = (unsigned char)c;
		if (c == '\n')
			break;
	}
	*got = n;
	if (s->f && ferror(s->f)) {
		s->errnum = errno ? errno : EIO;
		return 0;
	}
	return 1;
}

/* at_marker tells whether the input, at the start of a line, goes on
 * with "---" or "..." and a blank or the line's end. */
static int
at_marker(struct y2j_stream *s)
{
	int c = peek(s, 0), i;

	if (c != '-' && c != '.')
		return 0;
	for (i = 1; i < 3; i++)
		if (peek(s, i) != c)
			return 0;
	c = peek(s, 3);
	return c == EOF || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* resync goes on after a cut (see the top of this file): skips to the
 * next line that starts or ends a document and starts a new parser
 * there. Returns 1, 0 when the input ends first, -1 with an error set
 * for a read error. */
static int
resync(struct y2j_stream *s)
{
	int c = 0;

	s->cut = s->tripped = s->told = 0;
	while (c != EOF) {
		while (s->col != 0 && (c = take(s)) != EOF)
			;
		if (c == EOF || at_marker(s))
			break;
		c = take(s);
	}
	if (s->f && ferror(s->f)) {
		fail_pos(s, 0, 0, "read error: %s", strerror(errno));
		return -1;
	}
	if (c == EOF)
		return 0;
	yaml_parser_delete(&s->parser);
	if (!yaml_parser_initialize(&s->parser))
		err_die(HAZ_FAIL, "libyaml: out of memory");
	yaml_parser_set_input(&s->parser, read_chunk, s);
	s->line_base = s->line - 1;
	s->off_base = s->offset;
	json_object_clear(s->anchors);
	s->state = S_READING;
	return 1;
}

/* next_event reads the next event into ev (caller deletes it). On a
 * libyaml error returns -1: reported now, or, when this call already
 * has an error to tell, on the next call of y2j_next; after a cut whose
 * excess was told, not at all (the stream of this parser just ends). */
static int
next_event(struct y2j_stream *s, yaml_event_t *ev)
{
	if (yaml_parser_parse(&s->parser, ev))
		return 0;
	if (s->cut && s->told)
		s->state = S_END; /* the cut's consequence: told already */
	else if (s->failed)
		s->state = S_PENDING;
	else
		fail_syntax(s);
	return -1;
}

/* ---- scalars ---- */

static int
one_of(const char *t, const char *const *words)
{
	for (; *words; words++)
		if (strcmp(t, *words) == 0)
			return 1;
	return 0;
}

static int
all_in(const char *t, size_t len, const char *set)
{
	return len > 0 && strspn(t, set) == len;
}

static int
is_int(const char *t, size_t len)
{
	if (len > 2 && t[0] == '0' && t[1] == 'o')
		return all_in(t + 2, len - 2, "01234567");
	if (len > 2 && t[0] == '0' && t[1] == 'x')
		return all_in(t + 2, len - 2, DIGITS "abcdefABCDEF");
	if (len > 0 && (*t == '-' || *t == '+'))
		t++, len--;
	return all_in(t, len, DIGITS);
}

/* is_float matches [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
 * in the NUL-terminated t. */
static int
is_float(const char *t)
{
	size_t whole, frac = 0;

	if (*t == '-' || *t == '+')
		t++;
	whole = strspn(t, DIGITS);
	t += whole;
	if (*t == '.') {
		frac = strspn(++t, DIGITS);
		t += frac;
	}
	if (whole + frac == 0)
		return 0;
	if (*t == 'e' || *t == 'E') {
		t++;
		if (*t == '-' || *t == '+')
			t++;
		if (!strspn(t, DIGITS))
			return 0;
		t += strspn(t, DIGITS);
	}
	return *t == '\0';
}

static int
is_inf_or_nan(const char *t)
{
	static const char *const infs[] = {".inf", ".Inf", ".INF", NULL};
	static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};

	if (one_of(t, nans))
		return 1;
	return one_of(*t == '-' || *t == '+' ? t + 1 : t, infs);
}

/* classify types a plain scalar by the YAML 1.2 core schema. */
static enum kind
classify(const char *t, size_t len)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL",
		NULL};
	static const char *const bools[] = {"true", "True", "TRUE", "false",
		"False", "FALSE", NULL};

	if (strlen(t) != len)
		return K_STR;
	if (one_of(t, nulls))
		return K_NULL;
	if (one_of(t, bools))
		return K_BOOL;
	if (is_int(t, len))
		return K_INT;
	if (is_float(t) || is_inf_or_nan(t))
		return K_FLOAT;
	return K_STR;
}

/* has_nul tells whether the scalar of ev holds a NUL character (a
 * "\0" escape): no value of ours may, as C strings would cut it. */
static int
has_nul(struct y2j_stream *s, const yaml_event_t *ev)
{
	if (!memchr(ev->data.scalar.value, '\0', ev->data.scalar.length))
		return 0;
	fail_at(s, ev->start_mark, "scalar holds a NUL character (\\0)");
	return 1;
}

static json_t *
make_string(struct y2j_stream *s, const yaml_event_t *ev)
{
	json_t *v;

	if (has_nul(s, ev))
		return NULL;
	v = json_stringn((const char *)ev->data.scalar.value,
		ev->data.scalar.length);
	if (!v)
		fail_at(s, ev->start_mark, "scalar is not valid UTF-8");
	return v;
}

/* make_int converts a scalar that is_int accepted. */
static json_t *
make_int(struct y2j_stream *s, const yaml_event_t *ev)
{
	const char *t = (const char *)ev->data.scalar.value;
	int base = 10;
	long long v;

	if (t[0] == '0' && (t[1] == 'o' || t[1] == 'x')) {
		base = t[1] == 'o' ? 8 : 16;
		t += 2;
	}
	errno = 0;
	v = strtoll(t, NULL, base);
	if (errno == ERANGE) {
		fail_at(s, ev->start_mark, "integer %.64s out of range",
			(const char *)ev->data.scalar.value);
		return NULL;
	}
	return jcheck(json_integer(v));
}

/* make_real converts a scalar that classify called K_FLOAT, or a
 * decimal K_INT tagged !!float: strtod, so the double nearest the text. */
static json_t *
make_real(struct y2j_stream *s, const yaml_event_t *ev)
{
	const char *t = (const char *)ev->data.scalar.value;
	double d;

	if (is_inf_or_nan(t)) {
		fail_at(s, ev->start_mark, "cannot represent %s in JSON", t);
		return NULL;
	}
	d = strtod(t, NULL);
	if (isinf(d)) {
		fail_at(s, ev->start_mark, "real %.64s out of range", t);
		return NULL;
	}
	return jcheck(json_real(d));
}

static json_t *
make_value(struct y2j_stream *s, const yaml_event_t *ev, enum kind kind)
{
	const char *t = (const char *)ev->data.scalar.value;

	switch (kind) {
	case K_NULL: return json_null();
	case K_BOOL: return json_boolean(t[0] == 't' || t[0] == 'T');
	case K_INT: return make_int(s, ev);
	case K_FLOAT: return make_real(s, ev);
	default: return make_string(s, ev);
	}
}

/* tag_kind maps a resolved tag to the kind it forces; K_STR for !!str
 * and for every tag this code does not know. */
static enum kind
tag_kind(const char *tag)
{
	static const struct {
		const char *name;
		enum kind kind;
	} tags[] = {
		{TAG_PREFIX "null", K_NULL},
		{TAG_PREFIX "bool", K_BOOL},
		{TAG_PREFIX "int", K_INT},
		{TAG_PREFIX "float", K_FLOAT},
	};
	size_t i;

	for (i = 0; i < sizeof tags / sizeof *tags; i++)
		if (strcmp(tag, tags[i].name) == 0)
			return tags[i].kind;
	return K_STR;
}

/* parse_scalar types the scalar event ev: plain and untagged by the
 * core schema, otherwise by its tag, quoted ones as strings. */
static json_t *
parse_scalar(struct y2j_stream *s, const yaml_event_t *ev)
{
	const char *t = (const char *)ev->data.scalar.value;
	const char *tag = (const char *)ev->data.scalar.tag;
	enum kind want, got = classify(t, ev->data.scalar.length);
	json_t *v;
	double d;

	if (!tag)
		return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
			? make_value(s, ev, got)
			: make_string(s, ev);
	if ((want = tag_kind(tag)) == K_STR)
		return make_string(s, ev);
	if (want == K_FLOAT && got == K_INT && strpbrk(t, "ox")) {
		if (!(v = make_int(s, ev)))
			return NULL;
		d = (double)json_integer_value(v);
		json_decref(v);
		return jcheck(json_real(d));
	}
	if (want == K_FLOAT && got == K_INT)
		return make_real(s, ev); /* decimal: strtod rounds once */
	if (got != want) {
		fail_at(s, ev->start_mark, "\"%.64s\" is not a valid !!%s", t,
			tag + strlen(TAG_PREFIX));
		return NULL;
	}
	return make_value(s, ev, got);
}

/* ---- node counting and aliases ---- */

/* what names the extent the limits count, for messages. */
static const char *
what(const struct y2j_stream *s)
{
	return s->whole ? "the documents together" : "document";
}

/* count_node counts one node with len bytes of scalar text against the
 * limits. Returns 0, or -1 with an error set. */
static int
count_node(struct y2j_stream *s, yaml_mark_t mark, size_t len)
{
	if (s->nodes >= s->max_nodes) {
		fail_at(s, mark, "%s %s more than %lu nodes", what(s),
			s->whole ? "have" : "has", s->max_nodes);
		return -1;
	}
	if (len > s->max_text - s->text) {
		fail_at(s, mark, "%s %s more than %zu bytes of text", what(s),
			s->whole ? "hold" : "holds", s->max_text);
		return -1;
	}
	s->nodes++;
	s->text += len;
	return 0;
}

/* remember records v under the anchor name with the number of nodes,
 * the bytes of text and the nesting depth it took to make, so that an
 * alias is checked against the limits before it is copied. */
static void
remember(struct y2j_stream *s, const char *name, json_t *v, unsigned long nodes,
	size_t text, int depth)
{
	json_t *rec = json_pack("[O,I,i,I]", v, (json_int_t)nodes, depth,
		(json_int_t)text);

	if (!rec || json_object_set_new(s->anchors, name, rec) < 0)
		err_die(HAZ_FAIL, "jansson: out of memory");
}

/* expand_alias returns a copy of the value anchored under ev's name,
 * counted against the node, text and depth limits before it is made. */
static json_t *
expand_alias(struct y2j_stream *s, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	json_t *rec = json_object_get(s->anchors, name);
	unsigned long nodes;
	size_t text;
	int depth;

	if (!rec) {
		fail_at(s, ev->start_mark, "undefined alias \"%s\"", name);
		return NULL;
	}
	nodes = (unsigned long)json_integer_value(json_array_get(rec, 1));
	depth = (int)json_integer_value(json_array_get(rec, 2));
	text = (size_t)json_integer_value(json_array_get(rec, 3));
	if (nodes > s->max_nodes - s->nodes) {
		fail_at(s, ev->start_mark,
			"alias \"%s\" makes %s%s larger than %lu nodes", name,
			s->whole ? "" : "the ", what(s), s->max_nodes);
		return NULL;
	}
	if (text > s->max_text - s->text) {
		fail_at(s, ev->start_mark,
			"alias \"%s\" makes %s%s hold more than %zu bytes of "
			"text",
			name, s->whole ? "" : "the ", what(s), s->max_text);
		return NULL;
	}
	if (s->depth + depth > Y2J_MAX_DEPTH) {
		fail_at(s, ev->start_mark,
			"alias \"%s\" nests deeper than %d levels", name,
			Y2J_MAX_DEPTH);
		return NULL;
	}
	s->nodes += nodes;
	s->text += text;
	if (s->depth + depth > s->deepest)
		s->deepest = s->depth + depth;
	return jcheck(json_deep_copy(json_array_get(rec, 0)));
}

/* ---- collections ---- */

static json_t *
parse_sequence(struct y2j_stream *s)
{
	json_t *seq = jcheck(json_array()), *item;
	yaml_event_t ev;

	for (;;) {
		if (next_event(s, &ev) < 0)
			break;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return seq;
		}
		if (!(item = parse_node(s, &ev)))
			break;
		json_array_append_new(seq, item);
	}
	json_decref(seq);
	return NULL;
}

/* scalar_key fills k from the key scalar ev. The key is its source
 * text; it is typed only when anchored, to be aliased later. Deletes
 * ev. */
static int
scalar_key(struct y2j_stream *s, yaml_event_t *ev, struct key *k)
{
	json_t *v;
	int rc;

	if (has_nul(s, ev)) {
		yaml_event_delete(ev);
		return -1;
	}
	k->len = ev->data.scalar.length;
	k->text = emalloc(k->len + 1);
	memcpy(k->text, ev->data.scalar.value, k->len + 1);
	k->merge = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		!ev->data.scalar.tag && strcmp(k->text, "<<") == 0;
	if (ev->data.scalar.anchor) {
		v = parse_node(s, ev);
		json_decref(v);
		return v ? 0 : -1;
	}
	rc = count_node(s, ev->start_mark, k->len);
	yaml_event_delete(ev);
	return rc;
}

/* read_key fills k from the key event ev: a scalar, or an alias of a
 * scalar (a string as is, others as JSON text). Deletes ev; k->text is
 * the caller's to free, even on failure. */
static int
read_key(struct y2j_stream *s, yaml_event_t *ev, struct key *k)
{
	json_t *v;

	k->mark = ev->start_mark;
	if (ev->type == YAML_SCALAR_EVENT)
		return scalar_key(s, ev, k);
	if (ev->type != YAML_ALIAS_EVENT) {
		fail_at(s, k->mark, "mapping key must be a scalar");
		yaml_event_delete(ev);
		return -1;
	}
	if (!(v = parse_node(s, ev)))
		return -1;
	if (json_is_string(v)) {
		k->len = json_string_length(v);
		k->text = emalloc(k->len + 1);
		memcpy(k->text, json_string_value(v), k->len + 1);
	} else if (!json_is_array(v) && !json_is_object(v)) {
		if (!(k->text = json_dumps(v, JSON_ENCODE_ANY)))
			err_die(HAZ_FAIL, "jansson: out of memory");
		k->len = strlen(k->text);
	} else {
		fail_at(s, k->mark, "mapping key must be a scalar");
	}
	json_decref(v);
	return k->text ? 0 : -1;
}

/* add_merge queues the value v of a merge key (a mapping or a sequence
 * of mappings) on merges. Takes v. */
static int
add_merge(struct y2j_stream *s, json_t *merges, json_t *v, yaml_mark_t mark)
{
	json_t *m;
	size_t i;

	if (json_is_object(v)) {
		json_array_append_new(merges, v);
		return 0;
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, m)
			if (!json_is_object(m))
				break;
		if (i == json_array_size(v)) {
			json_array_extend(merges, v);
			json_decref(v);
			return 0;
		}
	}
	json_decref(v);
	fail_at(s, mark,
		"merge value must be a mapping or a sequence of "
		"mappings");
	return -1;
}

/* map_entry reads one key and its value into obj (a merge key's value
 * into merges). Returns 1, 0 at the end of the mapping, -1 on error. */
static int
map_entry(struct y2j_stream *s, json_t *obj, json_t *merges)
{
	struct key k = {0};
	yaml_event_t ev;
	yaml_mark_t vmark;
	json_t *v;
	int rc = -1;

	if (next_event(s, &ev) < 0)
		return -1;
	if (ev.type == YAML_MAPPING_END_EVENT) {
		yaml_event_delete(&ev);
		return 0;
	}
	if (read_key(s, &ev, &k) < 0)
		goto out;
	if (!k.merge && json_object_getn(obj, k.text, k.len)) {
		fail_at(s, k.mark, "duplicate key \"%.64s\"", k.text);
		goto out;
	}
	if (next_event(s, &ev) < 0)
		goto out;
	vmark = ev.start_mark;
	if (!(v = parse_node(s, &ev)))
		goto out;
	if (k.merge)
		rc = add_merge(s, merges, v, vmark);
	else if ((rc = json_object_setn_new(obj, k.text, k.len, v)) < 0)
		fail_at(s, k.mark, "key is not valid UTF-8");
out:
	free(k.text);
	return rc < 0 ? -1 : 1;
}

static json_t *
parse_mapping(struct y2j_stream *s)
{
	json_t *obj = jcheck(json_object());
	json_t *merges = jcheck(json_array()), *m;
	size_t i;
	int rc;

	while ((rc = map_entry(s, obj, merges)) > 0)
		;
	if (rc == 0)
		json_array_foreach(merges, i, m)
			json_object_update_missing(obj, m);
	json_decref(merges);
	if (rc < 0) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

static json_t *
parse_collection(struct y2j_stream *s, const yaml_event_t *ev,
	json_t *(*parse)(struct y2j_stream *))
{
	json_t *v;

	if (count_node(s, ev->start_mark, 0) < 0)
		return NULL;
	if (s->depth >= Y2J_MAX_DEPTH) {
		fail_at(s, ev->start_mark, "nesting deeper than %d levels",
			Y2J_MAX_DEPTH);
		s->told = 1;
		return NULL;
	}
	if (++s->depth > s->deepest)
		s->deepest = s->depth;
	v = parse(s);
	s->depth--;
	return v;
}

/* parse_node turns the node that ev starts (scalar, alias, sequence or
 * mapping) into a value, reading the rest of its events, and records
 * its anchor. Deletes ev. NULL with an error set on failure. */
static json_t *
parse_node(struct y2j_stream *s, yaml_event_t *ev)
{
	const yaml_char_t *anchor = NULL;
	unsigned long nodes = s->nodes;
	size_t text = s->text;
	int deepest = s->deepest;
	json_t *v = NULL;

	s->deepest = s->depth;
	switch (ev->type) {
	case YAML_ALIAS_EVENT: v = expand_alias(s, ev); break;
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		if (count_node(s, ev->start_mark, ev->data.scalar.length) == 0)
			v = parse_scalar(s, ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		v = parse_collection(s, ev, parse_sequence);
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		v = parse_collection(s, ev, parse_mapping);
		break;
	default:
		fail_at(s, ev->start_mark, "unexpected libyaml event %d",
			(int)ev->type);
	}
	if (v && anchor)
		remember(s, (const char *)anchor, v, s->nodes - nodes,
			s->text - text, s->deepest - s->depth);
	if (s->deepest < deepest)
		s->deepest = deepest;
	yaml_event_delete(ev);
	return v;
}

/* ---- documents and streams ---- */

/* skip_document reads up to the end of the current document after an
 * error of ours, so that the next document can be read. */
static void
skip_document(struct y2j_stream *s)
{
	yaml_event_t ev;
	yaml_event_type_t type;

	do {
		if (next_event(s, &ev) < 0)
			return;
		type = ev.type;
		yaml_event_delete(&ev);
	} while (type != YAML_DOCUMENT_END_EVENT);
}

static int
read_document(struct y2j_stream *s, json_t **doc)
{
	unsigned long nodes = s->nodes;
	size_t text = s->text;
	yaml_event_t ev;
	json_t *root;

	if (!s->whole)
		s->nodes = s->text = 0;
	s->depth = s->deepest = 0;
	s->told = 0;
	if (next_event(s, &ev) < 0)
		return -1;
	root = parse_node(s, &ev);
	if (root && next_event(s, &ev) == 0) {
		yaml_event_delete(&ev); /* the document end */
		json_object_clear(s->anchors);
		*doc = root;
		return 1;
	}
	json_decref(root);
	if (s->whole) { /* a refused document counts for nothing */
		s->nodes = nodes;
		s->text = text;
	}
	if (s->state == S_READING)
		skip_document(s);
	json_object_clear(s->anchors);
	return -1;
}

int
y2j_next(struct y2j_stream *s, json_t **doc, struct y2j_error *err)
{
	yaml_event_t ev;
	yaml_event_type_t type;
	int got;

	*doc = NULL;
	memset(err, 0, sizeof *err);
	s->err = err;
	s->failed = 0;
	if (s->state == S_PENDING) {
		fail_syntax(s);
		return -1;
	}
	for (;;) {
		if (s->state != S_READING && !s->cut)
			return 0;
		if (s->state != S_READING && (got = resync(s)) <= 0)
			return got;
		if (next_event(s, &ev) < 0) {
			if (s->failed)
				return -1;
			continue; /* the end of a cut: told already */
		}
		type = ev.type;
		if (type == YAML_DOCUMENT_START_EVENT)
			s->doc_mark = ev.start_mark;
		yaml_event_delete(&ev);
		if (type == YAML_DOCUMENT_START_EVENT)
			return read_document(s, doc);
		if (type != YAML_STREAM_END_EVENT)
			continue;
		s->state = S_END;
		if (s->cut && !s->told) { /* never left untold */
			s->told = 1;
			fail_at(s, s->trip, "nesting deeper than %d levels",
				Y2J_MAX_DEPTH);
			return -1;
		}
	}
}

static struct y2j_stream *
stream_new(FILE *f, const char *buf, size_t len, const char *name)
{
	struct y2j_stream *s = ecalloc(1, sizeof *s);

	if (!yaml_parser_initialize(&s->parser))
		err_die(HAZ_FAIL, "libyaml: out of memory");
	yaml_parser_set_input(&s->parser, read_chunk, s);
	s->name = estrdup(name);
	s->f = f;
	s->buf = buf;
	s->len = len;
	s->line = 1;
	s->state = S_READING;
	s->anchors = jcheck(json_object());
	s->max_nodes = Y2J_MAX_NODES;
	s->max_text = Y2J_MAX_TEXT;
	return s;
}

struct y2j_stream *
y2j_open(const char *path, struct y2j_error *err)
{
	FILE *f;

	if (!path || strcmp(path, "-") == 0)
		return stream_new(stdin, NULL, 0, "<stdin>");
	if (!(f = fopen(path, "r"))) {
		err->line = err->column = 0;
		snprintf(err->text, sizeof err->text, "%s: %s", path,
			strerror(errno));
		return NULL;
	}
	return stream_new(f, NULL, 0, path);
}

struct y2j_stream *
y2j_open_buffer(const char *buf, size_t len, const char *name)
{
	return stream_new(NULL, buf, len, name);
}

void
y2j_set_max_nodes(struct y2j_stream *s, unsigned long max)
{
	s->max_nodes = max;
}

void
y2j_set_max_text(struct y2j_stream *s, size_t max)
{
	s->max_text = max;
}

void
y2j_limit_whole(struct y2j_stream *s)
{
	s->whole = 1;
}

void
y2j_close(struct y2j_stream *s)
{
	if (!s)
		return;
	yaml_parser_delete(&s->parser);
	if (s->f && s->f != stdin)
		fclose(s->f);
	json_decref(s->anchors);
	free(s->name);
	free(s);
}

/* load_stream gathers the documents of s as y2j_load describes. */
static json_t *
load_stream(struct y2j_stream *s, int flags, struct y2j_error *err)
{
	json_t *docs = jcheck(json_array()), *doc;
	int rc;

	if (flags & Y2J_ALL)
		y2j_limit_whole(s);
	while ((rc = y2j_next(s, &doc, err)) > 0) {
		if ((flags & Y2J_SKIP_NULL) && json_is_null(doc)) {
			json_decref(doc);
			continue;
		}
		if (!(flags & Y2J_ALL) && json_array_size(docs) == 1) {
			json_decref(doc);
			fail_at(s, s->doc_mark, "more than one document");
			rc = -1;
			break;
		}
		json_array_append_new(docs, doc);
	}
	if (rc < 0) {
		json_decref(docs);
		return NULL;
	}
	if (flags & Y2J_ALL)
		return docs;
	doc = json_array_size(docs) ? json_incref(json_array_get(docs, 0))
				    : json_null();
	json_decref(docs);
	return doc;
}

json_t *
y2j_load(const char *path, int flags, struct y2j_error *err)
{
	struct y2j_stream *s = y2j_open(path, err);
	json_t *v;

	if (!s)
		return NULL;
	v = load_stream(s, flags, err);
	y2j_close(s);
	return v;
}

json_t *
y2j_load_buffer(const char *buf, size_t len, const char *name, int flags,
	struct y2j_error *err)
{
	struct y2j_stream *s = y2j_open_buffer(buf, len, name);
	json_t *v = load_stream(s, flags, err);

	y2j_close(s);
	return v;
}
