/* smi-csv: libFuzzer target for smi_parse_csv, gpu-probe's reader of
 * `nvidia-smi --query-gpu=... --format=csv,noheader,nounits` output
 * (live, or a capture given to -r).
 *
 * Each input is a whole output. Checked, or abort:
 *   - every GPU read has a value, possibly null, in every column: an
 *     integer index >= 0, a string uuid, and each column of its type
 *     (integers >= 0, strings, MIG mode a boolean);
 *   - every string is text a record can carry: no NUL, valid UTF-8 (as
 *     jansson holds it), no control character, not empty;
 *   - no two GPUs share an index or a uuid;
 *   - no more GPUs than lines, and a line given up sets inv.failed,
 *     which the return value tells;
 *   - each GPU's values, written by jb_json, read back equal; an error
 *     state kept is text, of a null value; its faults are an array of
 *     strings.
 * Leaks are found by libFuzzer's leak check. Run by t/0890-fuzz.t. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jbuf.h"
#include "smi.h"

#include "fuzz.h"

/* text checks a string taken from nvidia-smi's output. */
static void
text(const json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);

	check(n > 0, "an empty string");
	check(strlen(s) == n, "a string holds NUL");
	check(smi_not_text(s, n) == NULL && !strchr(s, '\t'),
		"a string is not text");
}

/* column checks the value of column c. */
static void
column(enum smi_col c, const json_t *v)
{
	check(v != NULL, "a column without a value");
	if (c == SMI_INDEX)
		check(json_is_integer(v) && json_integer_value(v) >= 0,
			"an index that is not a whole number");
	if (c == SMI_UUID)
		check(json_is_string(v), "a uuid that is not a string");
	if (json_is_null(v))
		return;
	switch (smi_cols[c].type) {
	case 's':
		check(json_is_string(v), "a string column of another type");
		text(v);
		break;
	case 'm': check(json_is_boolean(v), "MIG mode is not a boolean"); break;
	default:
		check(json_is_integer(v) && json_integer_value(v) >= 0,
			"a number column that is not a whole number >= 0");
	}
}

/* round_trip checks that v written by jb_json reads back equal. */
static void
round_trip(const json_t *v)
{
	struct jb b = {0};
	json_t *back;

	jb_json(&b, v);
	back = json_loadb(b.buf, b.len, JSON_DECODE_ANY, NULL);
	check(back && json_equal(back, v), "a value does not read back");
	json_decref(back);
	jb_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct smi_inv inv = {0};
	const struct smi_gpu *g, *h;
	json_t *faults, *f;
	size_t i, j, lines = 1;
	int rc, c;

	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	inv.quiet = size % 2;
	rc = smi_parse_csv(&inv, "fuzz", (const char *)data, size);
	check((rc < 0) == (inv.failed != 0), "the result is not inv.failed");
	check(inv.ngpus <= lines, "more GPUs than lines");
	for (i = 0; i < inv.ngpus; i++) {
		g = &inv.gpus[i];
		check(g->line >= 1 && (size_t)g->line <= lines, "a bad line");
		for (c = 0; c < SMI_NCOLS; c++) {
			column((enum smi_col)c, g->val[c]);
			round_trip(g->val[c]);
			check(!g->fault[c] ||
					(json_is_null(g->val[c]) &&
						!smi_not_text(g->fault[c],
							strlen(g->fault[c])) &&
						!strchr(g->fault[c], '\t')),
				"a fault that is not text, or of a value");
		}
		/* small inputs: the quadratic check is the plain one */
		for (j = 0; j < i; j++) {
			h = &inv.gpus[j];
			check(!json_equal(g->val[SMI_INDEX], h->val[SMI_INDEX]),
				"two GPUs with one index");
			check(!json_equal(g->val[SMI_UUID], h->val[SMI_UUID]),
				"two GPUs with one uuid");
		}
		faults = smi_faults(&inv, g);
		check(json_is_array(faults), "faults are not an array");
		json_array_foreach(faults, j, f)
			check(json_is_string(f), "a fault is not a string");
		json_decref(faults);
		check(g->nmig == 0, "MIG devices without -L");
	}
	smi_free(&inv);
	return 0;
}
