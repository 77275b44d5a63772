/* nd-record: libFuzzer target for the NDJSON reader every tool shares.
 *
 * Each input is a whole stream. It is read twice through nd_read: with
 * the default record bound, and with a bound of 64 bytes, so that the
 * skipping of overlong records is exercised. Checked, or abort:
 *   - every line is accounted for: records + bad lines = lines;
 *   - no string of a record read holds NUL (nd_read refuses them);
 *   - each record written by jb_json reads back (json_loadb) equal to
 *     it: reals exactly, strings byte for byte;
 *   - the reader never takes a read for more records than lines.
 * Run by t/0890-fuzz.t. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "jbuf.h"
#include "nd.h"
#include "ndline.h"

#include "fuzz.h"

/* no_nul aborts when a string or key of v holds NUL. */
static void
no_nul(json_t *v)
{
	const char *k;
	json_t *m;
	size_t i;

	if (json_is_string(v) &&
		strlen(json_string_value(v)) != json_string_length(v))
		abort();
	if (json_is_object(v))
		json_object_foreach(v, k, m)
			no_nul(m);
	if (json_is_array(v))
		json_array_foreach(v, i, m)
			no_nul(m);
}

static void
read_all(int fd, size_t max, size_t lines)
{
	struct nd_reader r;
	json_t *rec, *back;
	json_error_t jerr;
	size_t good = 0, bad = 0;
	char *text;
	int got;

	lseek(fd, 0, SEEK_SET);
	nd_open(&r, "-", 0);
	r.fd = fd;
	r.max = max;
	while ((got = nd_read(&r, &rec)) != 0) {
		if (got < 0) {
			bad++;
			continue;
		}
		good++;
		no_nul(rec);
		text = jb_dumps(rec);
		back = json_loads(text, JSON_DECODE_ANY, &jerr);
		if (!back || !json_equal(rec, back))
			abort();
		json_decref(back);
		free(text);
		json_decref(rec);
	}
	if (good + bad != lines || r.recno != (long)lines)
		abort();
	nd_close(&r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	size_t lines = 0, i;

	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	lines += size && data[size - 1] != '\n';
	read_all(fd, 0, lines);
	read_all(fd, 64, lines);
	close(fd);
	return 0;
}
