/* nd: NDJSON reading and writing. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jload.h"
#include "nd.h"
#include "ndline.h"

int
nd_open(struct nd_reader *r, const char *path, int flags)
{
	memset(r, 0, sizeof *r);
	r->flags = flags;
	if (!path || strcmp(path, "-") == 0) {
		r->f = stdin;
		r->name = estrdup("<stdin>");
		return 0;
	}
	r->f = fopen(path, "r");
	if (!r->f) {
		err_warn("%s:", path);
		return -1;
	}
	r->name = estrdup(path);
	return 0;
}

void
nd_close(struct nd_reader *r)
{
	if (r->f && r->f != stdin)
		fclose(r->f);
	free(r->line);
	free(r->name);
	r->f = NULL;
	r->line = NULL;
	r->name = NULL;
}

void
nd_warn(struct nd_reader *r, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s:%ld: ", err_prog, r->name, r->recno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	r->failed = 1;
}

int
nd_read(struct nd_reader *r, json_t **out)
{
	json_error_t jerr;
	char *line;
	size_t n;
	int rc;

	*out = NULL;
	while ((rc = ndl_read(r, &line, &n)) < 0)
		if (!(r->flags & ND_SKIP_BLANK))
			return -1;
	if (rc == 0)
		return 0;
	*out = jl_loadb(line, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (!*out) {
		nd_warn(r, "invalid JSON at column %d: %s", jerr.column,
			err_clean(jerr.text));
		return -1;
	}
	return 1;
}

/* the buffer nd_write serializes a record into, kept between records */
struct dumpbuf {
	char *p;
	size_t len, cap;
};

/* nd_dump_add appends s[0..n) to a dumpbuf; a json_dump_callback. */
static int
nd_dump_add(const char *s, size_t n, void *data)
{
	struct dumpbuf *b = data;

	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 256;
		b->p = erealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

void
nd_write(json_t *rec)
{
	/* jansson's json_dumpf writes token by token through stdio; one
	 * buffer, kept between records, and one fwrite cost a third less */
	static struct dumpbuf b;

	b.len = 0;
	if (json_dump_callback(rec, nd_dump_add, &b, JSON_COMPACT |
			JSON_ENCODE_ANY | JSON_REAL_PRECISION(15)) < 0)
		err_die(HAZ_FAIL, "<stdout>: cannot serialize a record");
	nd_dump_add("\n", 1, &b);
	if (fwrite(b.p, 1, b.len, stdout) != b.len || fflush(stdout) == EOF)
		err_die(HAZ_FAIL, "<stdout>: write error:");
}

int
nd_finish(int status)
{
	if (fflush(stdout) == EOF || ferror(stdout))
		err_die(HAZ_FAIL, "<stdout>: write error:");
	if (fclose(stdout) == EOF)
		err_die(HAZ_FAIL, "<stdout>: close:");
	return status;
}

int
nd_loop_files(int argc, char **argv, int flags,
	int (*fn)(struct nd_reader *r, json_t *rec, void *arg), void *arg)
{
	struct nd_reader r;
	int status = HAZ_OK;
	json_t *rec;
	int i, got;

	for (i = 0; i < (argc ? argc : 1); i++) {
		if (nd_open(&r, argc ? argv[i] : "-", flags) < 0) {
			status = HAZ_FAIL;
			continue;
		}
		while ((got = nd_read(&r, &rec)) != 0) {
			if (got > 0 && fn(&r, rec, arg) != 0)
				status = HAZ_FAIL;
			json_decref(rec);
		}
		if (r.failed)
			status = HAZ_FAIL;
		nd_close(&r);
	}
	return status;
}
