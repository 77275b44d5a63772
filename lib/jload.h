/* jload (jl_): JSON text into jansson values in under half the instructions of
 * json_loadb.
 *
 * jansson's reader takes the text a byte at a time through a stream with
 * a look-ahead buffer; jl_loadb reads it with jscan(3) into tokens
 * instead and builds the same values from them, in the same order, with
 * the same calls jansson's reader makes. The result is json_loadb's, value
 * for value and error for error: whatever jscan refuses, and whatever
 * jansson would read differently (a string holding NUL without
 * JSON_ALLOW_NUL, an object key holding NUL, an integer out of range, a
 * real that overflows, nesting past jscan's depth) goes to json_loadb
 * itself, as do flags other than JSON_DECODE_ANY and JSON_ALLOW_NUL. */
#ifndef HAZ_JLOAD_H
#define HAZ_JLOAD_H

#include <stddef.h>

#include <jansson.h>

/* jl_loadb is json_loadb(buf, len, flags, err); thread-safe. */
json_t *jl_loadb(const char *buf, size_t len, size_t flags, json_error_t *err);

/* A jl_skip_fn returns the names of the members to leave out of the
 * object found at path[1..depth] (NULL-terminated), or NULL for none;
 * when it sets *keep, the names are those to keep and all others are
 * left out. A name ending in an asterisk names every key that begins
 * with what comes before it. path holds the keys leading there from the
 * top, NULL for an array element (path[0] is unused). */
typedef const char *const *jl_skip_fn(const char *const *path, int depth,
	int *keep, void *arg);

/* jl_loadb_skip is jl_loadb leaving out the members skip names, with
 * all their contents; text it hands to json_loadb comes back whole. The
 * text is checked whole either way: a skipped member that jansson would
 * refuse makes it refuse the text. */
json_t *jl_loadb_skip(const char *buf, size_t len, size_t flags,
	json_error_t *err, jl_skip_fn *skip, void *arg);

/* jl_handed_over returns how many calls jl_loadb has handed to
 * json_loadb (flags, or text jscan refused or jansson reads otherwise). */
unsigned long jl_handed_over(void);

#endif
