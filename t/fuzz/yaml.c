/* yaml: libFuzzer target for lib/y2j.c, the reader of every YAML input
 * (yaml2json, topologies, kubeconfig, gpu-probe's -c, submit).
 *
 * Each input is a whole YAML stream. It is read document by document
 * (y2j_next) under smaller limits than the tools' (so that inputs run
 * fast), then again with the limits counting all documents together
 * (y2j_limit_whole, as yaml2json -a reads), then, when every document
 * was good, by y2j_load_buffer with the tools' limits. Checked, or abort:
 *   - every document is a value with no NUL in a string or a key, no
 *     infinity or NaN, nested no deeper than Y2J_MAX_DEPTH;
 *   - each document written by jb_json (as yaml2json writes it) is one
 *     line that reads back (json_loadb) equal to it: reals exactly,
 *     strings byte for byte;
 *   - every error names the input ("fuzz:"), and the stream ends within
 *     as many calls as the input has bytes;
 *   - the documents read together, when none fails, are those read one
 *     by one; y2j_load_buffer gives the same array (or says the
 *     documents together are too big), and in one-document mode the one
 *     document or "more than one document".
 * Leaks are found by libFuzzer's leak check. Run by t/0890-fuzz.t. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jbuf.h"
#include "y2j.h"

#include "fuzz.h"

enum { MAX_NODES = 20000, MAX_TEXT = 1 << 20 };

/* sound checks v, found depth collections deep. */
static void
sound(json_t *v, int depth)
{
	const char *k;
	json_t *m;
	size_t i;

	check(depth <= Y2J_MAX_DEPTH, "a document nests too deep");
	if (json_is_string(v))
		check(strlen(json_string_value(v)) == json_string_length(v),
			"a string holds NUL");
	if (json_is_real(v))
		check(isfinite(json_real_value(v)), "a real is not finite");
	if (json_is_object(v))
		json_object_foreach(v, k, m) {
			sound(m, depth + 1);
		}
	if (json_is_object(v)) {
		/* a key with NUL would be cut by every reader in C */
		void *it;

		for (it = json_object_iter(v); it;
			it = json_object_iter_next(v, it))
			check(strlen(json_object_iter_key(it)) ==
					json_object_iter_key_len(it),
				"a key holds NUL");
	}
	if (json_is_array(v))
		json_array_foreach(v, i, m)
			sound(m, depth + 1);
}

/* written checks that doc, written as yaml2json writes it, reads back
 * as the same value. */
static void
written(const json_t *doc)
{
	struct jb b = {0};
	json_error_t jerr;
	json_t *back;

	jb_json(&b, doc);
	check(memchr(b.buf, '\n', b.len) == NULL, "a record spans lines");
	back = json_loadb(b.buf, b.len, JSON_DECODE_ANY, &jerr);
	check(back != NULL, "a record written is not JSON");
	check(json_equal(doc, back), "a record does not read back the same");
	json_decref(back);
	jb_free(&b);
}

static void
error_ok(const struct y2j_error *e, size_t size)
{
	check(memchr(e->text, '\0', sizeof e->text) != NULL,
		"an error text is not terminated");
	check(strncmp(e->text, "fuzz:", 5) == 0,
		"an error does not name the input");
	check(e->line <= size + 2, "an error is placed past the input");
}

/* read_stream reads every document of data into a new array under the
 * fuzzing limits, for each document or (whole) all together. Sets
 * *failed when some document failed. */
static json_t *
read_stream(const uint8_t *data, size_t size, int whole, int *failed)
{
	struct y2j_stream *s;
	struct y2j_error e;
	json_t *docs = json_array(), *doc;
	size_t calls = 0;
	int got;

	*failed = 0;
	s = y2j_open_buffer((const char *)data, size, "fuzz");
	y2j_set_max_nodes(s, MAX_NODES);
	y2j_set_max_text(s, MAX_TEXT);
	if (whole)
		y2j_limit_whole(s);
	while ((got = y2j_next(s, &doc, &e)) != 0) {
		check(++calls <= size + 2, "the stream does not end");
		if (got < 0) {
			error_ok(&e, size);
			*failed = 1;
			continue;
		}
		check(doc != NULL, "a document without a value");
		sound(doc, 0);
		written(doc);
		json_array_append_new(docs, doc);
	}
	y2j_close(s);
	return docs;
}

/* loaded checks y2j_load_buffer (the tools' limits) on a stream whose
 * documents, docs, all read well one by one. */
static void
loaded(const uint8_t *data, size_t size, const json_t *docs)
{
	struct y2j_error e;
	size_t i, n = 0;
	json_t *v, *d;

	v = y2j_load_buffer((const char *)data, size, "fuzz", Y2J_ALL, &e);
	if (v)
		check(json_equal(v, docs), "y2j_load_buffer differs");
	else
		check(strstr(e.text, "together") != NULL,
			"y2j_load_buffer fails on good documents");
	json_decref(v);
	json_array_foreach(docs, i, d)
		n += !json_is_null(d);
	v = y2j_load_buffer((const char *)data, size, "fuzz", Y2J_SKIP_NULL,
		&e);
	if (n > 1) {
		check(!v && strstr(e.text, "more than one document"),
			"y2j_load_buffer takes more than one document");
		return;
	}
	check(v != NULL, "y2j_load_buffer fails on one good document");
	json_array_foreach(docs, i, d)
		if (!json_is_null(d))
			break;
	check(json_equal(v, i < json_array_size(docs) ? d : json_null()),
		"y2j_load_buffer's one document differs");
	json_decref(v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *docs, *all;
	int failed, all_failed;

	docs = read_stream(data, size, 0, &failed);
	all = read_stream(data, size, 1, &all_failed);
	if (!all_failed)
		check(!failed && json_equal(all, docs),
			"documents read together differ from one by one");
	if (!failed)
		loaded(data, size, docs);
	json_decref(all);
	json_decref(docs);
	return 0;
}
