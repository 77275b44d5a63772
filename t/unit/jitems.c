/* jitems: test driver for lib/jitems.c.
 *
 *   build/unit/jitems < page
 *
 * Prints what ji_split finds in the page on stdin, "split A B" (the
 * items array's byte span, from 0) or "whole", then, after a split, one
 * line per element: "S E TEXT" (its span and its text), and at the end
 * "end" or "error at byte N" (from 1). Exit 0, or 1 after an error. */
#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "jitems.h"

int
main(void)
{
	char *p = NULL;
	size_t cap = 0, len = 0, n, a, b, pos = 0, s, e;
	int r;

	do {
		if (len + 4096 > cap)
			p = erealloc(p, cap = 2 * (len + 4096));
		n = fread(p + len, 1, cap - len, stdin);
		len += n;
	} while (n > 0);
	if (ji_split(p, len, &a, &b)) {
		puts("whole");
		free(p);
		return 0;
	}
	printf("split %zu %zu\n", a, b);
	while ((r = ji_next(p, a, b, &pos, &s, &e)) > 0)
		printf("%zu %zu %.*s\n", s, e, (int)(e - s), p + s);
	if (r < 0)
		printf("error at byte %zu\n", pos + 1);
	else
		puts("end");
	free(p);
	return r < 0;
}
