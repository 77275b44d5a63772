/* unit/mig: drive lib/mig from stdin, one request a line:
 *
 *   NAME              -> "NAME: slices=G compute=C mem_mib=M attr=A as=CANON"
 *                        or "NAME: invalid"
 *   cmp A B           -> "A < B", "A = B" or "A > B"
 *   usage A B ...     -> "usage: slices=S mem_gib=M"
 *
 * Exit 1 when a cmp or usage line names an invalid profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mig.h"

static const char *const attrs[] = {"none", "me", "me.all", "gfx", "no-me"};

static void
parse_one(const char *name)
{
	struct mig_profile p;
	char canon[32];

	if (mig_parse(name, &p) < 0) {
		printf("%s: invalid\n", name);
		return;
	}
	printf("%s: slices=%d compute=%d mem_mib=%ld attr=%s as=%s\n", name,
		p.slices, p.compute, mig_memory_mib(&p), attrs[p.attr],
		mig_format(&p, canon, sizeof canon));
}

/* words splits line at blanks into w (at most max); returns the count. */
static int
words(char *line, char **w, int max)
{
	int n = 0;
	char *t;

	for (t = strtok(line, " \t\n"); t && n < max; t = strtok(NULL, " \t\n"))
		w[n++] = t;
	return n;
}

static int
request(char **w, int n)
{
	struct mig_profile p[16];
	int i, slices, gib, c;

	for (i = 1; i < n; i++) {
		if (mig_parse(w[i], &p[i - 1]) < 0) {
			printf("%s: invalid\n", w[i]);
			return 1;
		}
	}
	if (strcmp(w[0], "cmp") == 0 && n == 3) {
		c = mig_cmp(&p[0], &p[1]);
		printf("%s %s %s\n", w[1],
			c < 0           ? "<"
				: c > 0 ? ">"
					: "=",
			w[2]);
		return 0;
	}
	mig_usage(p, (size_t)(n - 1), &slices, &gib);
	printf("usage: slices=%d mem_gib=%d\n", slices, gib);
	return 0;
}

int
main(int argc, char **argv)
{
	char *line = NULL, *w[17];
	size_t cap = 0;
	int n, status = 0;

	(void)argc;
	err_init(argv[0]);
	while (getline(&line, &cap, stdin) > 0) {
		n = words(line, w, 17);
		if (n == 0)
			continue;
		if (n == 1)
			parse_one(w[0]);
		else if (strcmp(w[0], "cmp") == 0 || strcmp(w[0], "usage") == 0)
			status |= request(w, n);
		else
			printf("%s: bad request\n", w[0]);
	}
	free(line);
	return status;
}
