/* jitems (ji_): the items of a Kubernetes List page, found in its text.
 *
 * A page of 500 Nodes is some 4 MiB of JSON and ten times that as one
 * jansson tree. Read item by item instead, a page costs its text and one
 * item's tree: ji_split finds the top-level "items" array without
 * building anything, ji_next walks its elements, and each element is
 * then read alone. Only structure is followed here (strings, with their
 * escapes, and brackets); whether each part is valid JSON is for the
 * reader of that part to say. */
#ifndef HAZ_JITEMS_H
#define HAZ_JITEMS_H

#include <stddef.h>

/* ji_split looks in p[0..len), a JSON object, for its one top-level
 * member whose key is spelt "items" (no escapes) and whose value is an
 * array. Returns 0 with [*a, *b) the array's text, brackets included;
 * 1 when there is no such member, more than one, or the text is not an
 * object whose members can be followed to its end: the caller then reads
 * the page whole, as any reader would. */
int ji_split(const char *p, size_t len, size_t *a, size_t *b);

/* ji_next steps through the array at p[a..b) (as ji_split gives it):
 * start with *pos = 0; each call sets [*s, *e) to the next element's
 * text, without surrounding blanks, and returns 1, or returns 0 after the
 * last, or -1 (with *pos at the offending byte from p) when the elements
 * are not separated as JSON wants. */
int ji_next(const char *p, size_t a, size_t b, size_t *pos, size_t *s,
	size_t *e);

#endif
