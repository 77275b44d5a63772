/* yaml2json: YAML documents in, one JSON line per document out.
 *
 * usage: yaml2json [-as] [file ...]
 *
 * Reads each file in turn (none, or "-": stdin) as a YAML stream and
 * writes every document in it as one line of compact JSON, flushed at
 * once. Typing follows the YAML 1.2 core schema (see lib/y2j.h and
 * yaml2json(1)): "yes" and "on" stay strings, 0o17 and 0x1f are
 * integers, 1e3 and .5 are reals, quoted scalars are strings.
 *
 *	-a	write the documents of each file as one JSON array (an
 *		empty file gives [])
 *	-s	skip documents that are empty or null, such as the one a
 *		trailing "---" makes
 *	-h	print help on stdout and exit
 *	-V	print the version and exit
 *
 * A bad document is reported as `yaml2json: FILE:LINE:COL: why` and
 * skipped; reading goes on with the next document, except after a
 * syntax error, which ends that file. With -a a file with any error
 * writes no array. A document may hold at most 1000000 nodes and 16 MiB
 * of scalar text, aliases counted as what they expand to, so an alias
 * bomb fails quickly; with -a the documents of a file together, since
 * they are held until the array is written. Nesting deeper than 1000
 * levels is refused before libyaml reads much further; reading goes on
 * at the next line that starts or ends a document (--- or ...).
 *
 * Exit status: 0 all documents converted, 1 some file or document
 * failed, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "nd.h"
#include "y2j.h"

static const char usage_line[] = "usage: yaml2json [-ahsV] [file ...]";

static int opt_array, opt_skip_null;

static void
usage(void)
{
	fprintf(stderr, "%s\n", usage_line);
	exit(HAZ_USAGE);
}

static void
help(void)
{
	printf("%s\n"
	       "Convert YAML documents to JSON, one line per document.\n"
	       "  -a  write each file's documents as one JSON array\n"
	       "  -s  skip empty and null documents\n"
	       "  -h  print this help\n"
	       "  -V  print the version\n"
	       "With no file, or when file is -, read standard input.\n",
		usage_line);
	exit(nd_finish(HAZ_OK));
}

/* emit writes doc, or adds it to all; takes doc. */
static void
emit(json_t *doc, json_t *all)
{
	if (opt_skip_null && json_is_null(doc))
		json_decref(doc);
	else if (all)
		json_array_append_new(all, doc);
	else {
		nd_write(doc);
		json_decref(doc);
	}
}

/* convert writes the documents of path; returns HAZ_OK or HAZ_FAIL. */
static int
convert(const char *path)
{
	struct y2j_error err;
	struct y2j_stream *s;
	json_t *doc, *all = NULL;
	int got, status = HAZ_OK;

	if (!(s = y2j_open(path, &err))) {
		err_warn("%s", err.text);
		return HAZ_FAIL;
	}
	if (opt_array && !(all = json_array()))
		err_die(HAZ_FAIL, "out of memory");
	if (opt_array)
		y2j_limit_whole(s); /* all is held until the end */
	while ((got = y2j_next(s, &doc, &err)) != 0) {
		if (got < 0) {
			err_warn("%s", err.text);
			status = HAZ_FAIL;
		} else {
			emit(doc, all);
		}
	}
	if (all && status == HAZ_OK)
		nd_write(all);
	json_decref(all);
	y2j_close(s);
	return status;
}

int
main(int argc, char **argv)
{
	int c, i, status = HAZ_OK;

	err_init(argv[0]);
	opterr = 0;
	while ((c = getopt(argc, argv, "ahsV")) != -1) {
		switch (c) {
		case 'a': opt_array = 1; break;
		case 's': opt_skip_null = 1; break;
		case 'h': help(); break;
		case 'V':
			printf("yaml2json %s\n", HAZ_VERSION);
			return nd_finish(HAZ_OK);
		default: err_warn("unknown option -%c", optopt); usage();
		}
	}
	argc -= optind;
	argv += optind;
	for (i = 0; i < (argc ? argc : 1); i++)
		if (convert(argc ? argv[i] : "-") != HAZ_OK)
			status = HAZ_FAIL;
	return nd_finish(status);
}
