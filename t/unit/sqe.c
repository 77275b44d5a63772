/* unit/sqe: what the engine of sched-queue keeps of an object.
 *
 *   unit/sqe keep FEED <objects   each line an object of FEED (gpuworkloads,
 *                                 nodes, jobs, configmaps, pods); prints
 *                                 what sqe_load keeps of it, compact, or
 *                                 "bad: WHY" for a line that is no JSON
 *
 * Exit 2 on bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jbuf.h"
#include "sqe.h"

int
main(int argc, char **argv)
{
	char *line = NULL, *js;
	size_t cap = 0;
	ssize_t n;
	json_error_t je;
	json_t *o;
	int f;

	if (argc != 3 || strcmp(argv[1], "keep")) {
		fputs("usage: unit/sqe keep FEED <objects\n", stderr);
		return 2;
	}
	for (f = 0; f < SQE_NFEEDS && strcmp(argv[2], sqe_feed_name[f]); f++)
		;
	if (f == SQE_NFEEDS) {
		fprintf(stderr, "unit/sqe: no feed %s\n", argv[2]);
		return 2;
	}
	while ((n = getline(&line, &cap, stdin)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (!(o = sqe_load(f, line, (size_t)n, &je))) {
			printf("bad: %s\n", je.text);
			continue;
		}
		js = jb_dumps(o);
		puts(js);
		free(js);
		json_decref(o);
	}
	free(line);
	return 0;
}
