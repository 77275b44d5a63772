/* jscan: test driver for js_scan and the js_raw_* functions of lib/jscan.
 *
 *	jscan PATH...
 *
 * Reads JSON lines from stdin; for each prints what js_scan made of it:
 *
 *	error at column N: REASON        js_scan refused it (and js_parse
 *	                                 refused it alike, else "MISMATCH")
 *	spaced|compact JSON              whether whitespace lies outside
 *	                                 strings, then js_compact of the line
 *	PATH = VALUE                     per PATH (keys joined by '.', looked
 *	                                 up by js_raw_get): a string decoded
 *	                                 up to a NUL, then (eq) when js_raw_eq
 *	                                 finds it equal to that; an object
 *	                                 or array as its raw text; a number
 *	                                 or literal as its type; nothing
 *	                                 when the line has no such value */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jscan.h"

/* lookup follows the dotted path from the top value; -1 when absent. */
static int
lookup(const struct js_doc *d, const char *path)
{
	char *copy = estrdup(path), *key, *rest = copy;
	int t = 0;

	while (t >= 0 && (key = strsep(&rest, ".")))
		t = js_raw_get(d, t, key);
	free(copy);
	return t;
}

static void
show(const struct js_doc *d, const char *path)
{
	static const char *const types[] = {"null", "false", "true", "int",
		"real", "string", "array", "object"};
	int t = lookup(d, path);
	char *s;

	if (t < 0)
		return;
	printf("%s = ", path);
	if (d->t[t].type == JS_STRING) {
		s = js_raw_str(d, t);
		printf("%s (%s)\n", s, js_raw_eq(d, t, s) ? "eq" : "not eq");
		free(s);
	} else if (d->t[t].type >= JS_ARRAY) {
		printf("%.*s\n", (int)d->t[t].len, d->t[t].s);
	} else {
		puts(types[d->t[t].type]);
	}
}

int
main(int argc, char **argv)
{
	struct js_doc d = {0}, p = {0};
	char *line = NULL, *copy, *out;
	size_t cap = 0, n;
	ssize_t len;
	int i, ok;

	err_init(argv[0]);
	while ((len = getline(&line, &cap, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		copy = emalloc((size_t)len + 1);
		memcpy(copy, line, (size_t)len + 1);
		ok = js_parse(&p, copy, (size_t)len) == 0;
		if (js_scan(&d, line, (size_t)len) < 0) {
			printf("error at column %d: %s%s\n", d.errcol, d.err,
				!ok && p.errcol == d.errcol &&
						strcmp(p.err, d.err) == 0
					? ""
					: " MISMATCH");
			free(copy);
			continue;
		}
		out = emalloc((size_t)len + 1);
		n = js_compact(line, (size_t)len, out);
		printf("%s %.*s%s\n", d.spaced ? "spaced" : "compact", (int)n,
			out, ok && p.n == d.n ? "" : " MISMATCH");
		for (i = 1; i < argc; i++)
			show(&d, argv[i]);
		free(out);
		free(copy);
	}
	free(line);
	js_free(&d);
	js_free(&p);
	return 0;
}
