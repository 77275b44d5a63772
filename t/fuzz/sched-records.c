/* sched-records: libFuzzer target for sched-pick's records.
 *
 * Each input is a stream of inventory, allocation, release, request and
 * flush records, fed as sched-pick feeds them (a fresh state per input,
 * every strategy in turn as the default), with a flush at the end.
 * Checked, or abort:
 *   - every record written is one line of JSON that json_loadb takes
 *     (no inf or nan, nothing cut), of kind placement or unschedulable.
 * Run by t/0890-fuzz.t. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "nd.h"
#include "ndline.h"
#include "sched.h"
#include "sched_index.h"

#include "fuzz.h"

static int out_fd = -1;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* the records sched-pick writes land in a file checked per input */
	out_fd = memfd_create("out", 0);
	if (out_fd < 0 || dup2(out_fd, 1) < 0)
		abort();
	return 0;
}

/* check_output aborts unless every line written is a record of ours. */
static void
check_output(void)
{
	off_t n;
	char *buf, *line, *nl;
	json_error_t jerr;
	json_t *rec;
	const char *kind;

	fflush(stdout);
	n = lseek(1, 0, SEEK_CUR);
	buf = malloc((size_t)n + 1);
	if (!buf || pread(1, buf, (size_t)n, 0) != n)
		abort();
	buf[n] = '\0';
	for (line = buf; *line; line = nl + 1) {
		if (!(nl = strchr(line, '\n')))
			abort();
		rec = json_loadb(line, (size_t)(nl - line), 0, &jerr);
		kind = json_string_value(json_object_get(rec, "kind"));
		if (!rec || !kind ||
			(strcmp(kind, "placement") &&
				strcmp(kind, "unschedulable")))
			abort();
		json_decref(rec);
	}
	free(buf);
	if (ftruncate(1, 0) < 0 || lseek(1, 0, SEEK_SET) < 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size),
	    strat = size ? data[0] % SP_NSTRATEGIES : 0;
	struct sp_state st;
	struct nd_reader r;
	char *line;
	size_t len;
	int got;

	sp_init(&st, &spx_ops, strat, 42);
	nd_open(&r, "-", 0);
	r.fd = fd;
	while ((got = ndl_read(&r, &line, &len)) != 0) {
		if (got < 0)
			continue;
		if (js_parse(&st.doc, line, len) == 0)
			sp_feed(&st, &r, &st.doc);
	}
	sp_flush(&st);
	nd_close(&r);
	sp_free(&st);
	close(fd);
	check_output();
	return 0;
}
