/* y2j: YAML streams as jansson values (libyaml's event parser).
 *
 * libyaml owns the yaml_ prefix; these functions are y2j_.
 *
 * What a document becomes:
 * - mappings are objects, sequences arrays, block or flow alike;
 * - untagged plain scalars are typed by the YAML 1.2 core schema:
 *   null Null NULL ~ and the empty scalar are null; true True TRUE
 *   false False FALSE are booleans; [-+]digits, 0o octal and 0x hex
 *   are integers; decimal fractions and exponents (1.5, .5, 1e3) are
 *   reals; anything else (yes, on, 0b1, 1_000, 0x-1) is a string;
 * - quoted and block (| >) scalars are strings, as is anything tagged
 *   !!str or ! ; !!null, !!bool, !!int and !!float force that type and
 *   refuse a scalar that is not one; other tags are ignored (the scalar
 *   stays a string);
 * - infinities and NaN (.inf, -.Inf, .nan) have no JSON form and are an
 *   error, as are integers beyond int64 and reals beyond double range;
 *   quote or tag them !!str to keep them as text;
 * - mapping keys are the key scalar's source text ("1: a" has key "1");
 *   a key that is a mapping or a sequence, or repeats in its mapping,
 *   is an error;
 * - an alias is a deep copy of its anchor's value; the merge key <<
 *   (plain, untagged) takes a mapping or a sequence of mappings, whose
 *   keys are added unless the mapping has them (the earlier mapping
 *   wins among several);
 * - a scalar holding a NUL character (a "\0" escape) is an error: C
 *   strings would cut it;
 * - a document may hold at most Y2J_MAX_NODES nodes and Y2J_MAX_TEXT
 *   bytes of scalar text (keys and values), aliases counted as what
 *   they expand to (so an alias bomb stops early, whether of many nodes
 *   or of one long scalar), nested at most Y2J_MAX_DEPTH deep; with
 *   y2j_limit_whole (and Y2J_ALL) those bounds hold for all the
 *   documents of the stream together. Nesting past the limit is refused
 *   before libyaml reads far beyond it (its scanner's time grows with
 *   the square of the nesting): the rest of that document is skipped up
 *   to the next line that starts or ends a document ("---" or "...").
 *
 * Errors read "NAME:LINE:COLUMN: why", ready for err_warn("%s"). */
#ifndef HAZ_Y2J_H
#define HAZ_Y2J_H

#include <stddef.h>

#include <jansson.h>

#define Y2J_MAX_NODES 1000000UL
#define Y2J_MAX_TEXT ((size_t)16 << 20)
#define Y2J_MAX_DEPTH 1000

/* Flags for y2j_load. */
enum {
	Y2J_ALL = 1,       /* return an array of every document */
	Y2J_SKIP_NULL = 2, /* leave out null (empty) documents */
};

struct y2j_error {
	unsigned long line, column; /* from 1; 0 when not known */
	char text[512];             /* "NAME:LINE:COLUMN: why" */
};

struct y2j_stream;

/* y2j_open opens the file path ("-" or NULL: stdin, named "<stdin>").
 * Returns NULL with err set when it cannot be opened. */
struct y2j_stream *y2j_open(const char *path, struct y2j_error *err);

/* y2j_open_buffer reads the len bytes at buf, which must stay valid
 * until y2j_close; name is used in messages. */
struct y2j_stream *y2j_open_buffer(const char *buf, size_t len,
	const char *name);

/* y2j_set_max_nodes lowers or raises the node limit (Y2J_MAX_NODES),
 * y2j_set_max_text the text limit (Y2J_MAX_TEXT). */
void y2j_set_max_nodes(struct y2j_stream *s, unsigned long max);
void y2j_set_max_text(struct y2j_stream *s, size_t max);

/* y2j_limit_whole makes the node and text limits count every document
 * of s together, for a caller that keeps them all (as one value). */
void y2j_limit_whole(struct y2j_stream *s);

/* y2j_next stores the next document in *doc (caller owns it). Returns
 * 1 for a document, 0 at the end of the stream, -1 with err set for a
 * bad document. After a syntax error the stream ends (the next call
 * returns 0); after any other error reading goes on with the next
 * document. Time is linear in the input, memory bounded by the limits
 * above and by the longest scalar. */
int y2j_next(struct y2j_stream *s, json_t **doc, struct y2j_error *err);

/* y2j_close frees s and closes its file (never stdin). */
void y2j_close(struct y2j_stream *s);

/* y2j_load and y2j_load_buffer read a whole stream. With Y2J_ALL they
 * return an array of its documents; without it the stream must hold
 * at most one document (after Y2J_SKIP_NULL), which is returned (null
 * when there is none). NULL, with err set, on the first error. */
json_t *y2j_load(const char *path, int flags, struct y2j_error *err);
json_t *y2j_load_buffer(const char *buf, size_t len, const char *name,
	int flags, struct y2j_error *err);

#endif
