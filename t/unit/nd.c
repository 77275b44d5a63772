/* nd: test driver for the input loops of lib/nd.c.
 *
 *   build/unit/nd each|loop|input [-f] [file ...]
 *
 * Runs nd_each_record, nd_loop_files or nd_each_input over the files
 * (stdin when none; ND_SKIP_BLANK with -f) and prints one line a call of
 * its callback: "rec NAME:N JSON" for a record, "bad NAME:N" for a bad
 * one, "unopened" for an input that could not be opened, "input NAME"
 * then "line NAME:N TEXT" for each line nd_each_input's callback reads.
 * A record {"refuse":true}, or for nd_each_input a line "refuse" in an
 * input, makes the callback return 1. Prints "status N" last and exits
 * 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "nd.h"
#include "ndline.h"

static int
on_record(struct nd_reader *r, json_t *rec, void *arg)
{
	char *text;

	(void)arg;
	if (!r) {
		puts("unopened");
		return 0;
	}
	if (!rec) {
		printf("bad %s:%ld\n", r->name, r->recno);
		return 0;
	}
	text = json_dumps(rec, JSON_COMPACT | JSON_ENCODE_ANY);
	printf("rec %s:%ld %s\n", r->name, r->recno, text);
	free(text);
	return json_is_true(json_object_get(rec, "refuse"));
}

static int
on_input(struct nd_reader *r, void *arg)
{
	char *line;
	size_t len;
	int got, refused = 0;

	(void)arg;
	if (!r) {
		puts("unopened");
		return 0;
	}
	printf("input %s\n", r->name);
	while ((got = ndl_read(r, &line, &len)) != 0) {
		if (got < 0)
			continue;
		printf("line %s:%ld %s\n", r->name, r->recno, line);
		refused |= strcmp(line, "refuse") == 0;
	}
	return refused;
}

int
main(int argc, char **argv)
{
	int flags = 0, status;
	const char *mode;

	err_init("nd");
	if (argc < 2)
		err_die(HAZ_USAGE, "usage: nd each|loop|input [-f] [file ...]");
	mode = argv[1];
	argc -= 2;
	argv += 2;
	if (argc && strcmp(argv[0], "-f") == 0) {
		flags = ND_SKIP_BLANK;
		argc--;
		argv++;
	}
	if (strcmp(mode, "each") == 0)
		status = nd_each_record(argc, argv, flags, on_record, NULL);
	else if (strcmp(mode, "loop") == 0)
		status = nd_loop_files(argc, argv, flags, on_record, NULL);
	else if (strcmp(mode, "input") == 0)
		status = nd_each_input(argc, argv, flags, on_input, NULL);
	else
		err_die(HAZ_USAGE, "%s: unknown mode", mode);
	printf("status %d\n", status);
	return nd_finish(HAZ_OK);
}
