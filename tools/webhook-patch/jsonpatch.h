/* jsonpatch (jp_): JSON Patch (RFC 6902) made by comparing two documents, and
 * applied to one.
 *
 * jp_diff compares the document as it came with the document as it
 * should be and returns the operations that turn one into the other:
 * "remove" for a member that went away, "add" for a new one, "replace"
 * for a changed scalar, a value of another type, or an array whose length
 * changed (arrays of equal length are compared element by element).
 * Paths are JSON Pointers (RFC 6901): "~" is written "~0" and "/" "~1",
 * so "nvidia.com/mig-1g.10gb" becomes "nvidia.com~1mig-1g.10gb".
 *
 * jp_apply applies add, remove, replace and test, enough to check what
 * jp_diff makes; move and copy are refused. */
#ifndef HAZ_JSONPATCH_H
#define HAZ_JSONPATCH_H

#include <stddef.h>

#include <jansson.h>

/* jp_diff returns a new array of operations (empty when from and to are
 * equal). Neither argument is changed or kept. */
json_t *jp_diff(const json_t *from, const json_t *to);

/* jp_escape returns a malloc'd copy of key escaped as one JSON Pointer
 * token. */
char *jp_escape(const char *key);

/* jp_apply applies patch to *doc, which may be replaced (a patch may
 * replace the root). Returns 0, or -1 with a one-line reason in err; *doc
 * may then be partly patched. */
int jp_apply(json_t **doc, const json_t *patch, char *err, size_t errlen);

#endif
