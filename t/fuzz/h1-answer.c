/* h1-answer: libFuzzer target for h1_read, lib/kube's reader of the API
 * server's answers on a kept connection.
 *
 * Each input is what a connection delivers: answers, one after another,
 * read until one fails or none is left, with a body limit of 4 KiB.
 * Checked, or abort:
 *   - an answer read has a status 100 to 999, a body of at most the
 *     limit, NUL-ended, and no body but NULL when empty;
 *   - a failure says why (but a read failure, the caller's to tell), and
 *     never claims more bytes received than the input has;
 *   - the same input handed over one byte at a time, and 4,093 bytes at a
 *     time, gives the same answers and the same end, byte for byte.
 * Leaks are found by libFuzzer's leak check. Run by t/0890-fuzz.t. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "h1.h"

#define MAX 4096

struct src {
	const uint8_t *p;
	size_t n, at, piece;
};

static ssize_t
src_read(void *arg, char *buf, size_t cap)
{
	struct src *s = arg;
	size_t n = s->n - s->at;

	if (n > s->piece)
		n = s->piece;
	if (n > cap)
		n = cap;
	memcpy(buf, s->p + s->at, n);
	s->at += n;
	return (ssize_t)n;
}

/* run reads every answer of data, handed piece bytes at a time, and
 * returns what it saw as text (malloc'd). */
static char *
run(const uint8_t *data, size_t size, size_t piece)
{
	struct src s = {data, size, 0, piece};
	struct h1_in in = {.read = src_read, .arg = &s};
	struct h1_answer a;
	enum h1_status st;
	char why[256], *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);

	check(f != NULL, "open_memstream");
	while (in.off < in.len || s.at < s.n) {
		st = h1_read(&in, "GET", MAX, 0, &a, why, sizeof why);
		check(in.got <= size, "got no more than given");
		if (st != H1_OK) {
			check(*why != '\0', "a failure says why");
			fprintf(f, "%d %s\n", (int)st, why);
			h1_answer_free(&a);
			break;
		}
		check(a.code >= 100 && a.code <= 999 && a.len <= MAX &&
				(a.body ? a.body[a.len] == '\0' : a.len == 0),
			"an answer's code and body");
		fprintf(f, "%ld %d %zu ", a.code, a.keep, a.len);
		if (a.len)
			fwrite(a.body, 1, a.len, f);
		fputc('\n', f);
		h1_answer_free(&a);
	}
	h1_in_free(&in);
	check(fclose(f) == 0, "fclose");
	return out;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *one = run(data, size, 1), *many = run(data, size, 4093);

	check(strcmp(one, many) == 0, "the same answers, any pieces");
	free(one);
	free(many);
	return 0;
}
