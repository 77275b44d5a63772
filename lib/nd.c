/* nd: NDJSON reading and writing. */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "jbuf.h"
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
		r->fd = STDIN_FILENO;
		r->name = estrdup("<stdin>");
		return 0;
	}
	r->f = fopen(path, "r");
	if (!r->f) {
		err_warn("%s:", path);
		return -1;
	}
	r->fd = fileno(r->f);
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
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	err_warn("%s:%ld: %s", r->name, r->recno, msg);
	r->failed = 1;
}

/* js_error_text says what made jansson refuse a record, in our words
 * where its own name a flag. */
static const char *
js_error_text(json_error_t *e)
{
	switch (json_error_code(e)) {
	case json_error_null_character:
		return "a string holds \\u0000, which no record may carry";
	case json_error_null_byte_in_key:
		return "a member name holds \\u0000, which no record may carry";
	case json_error_numeric_overflow:
		return "a number out of range (integers fit in 64 bits, reals "
		       "are finite doubles)";
	default: return err_clean(e->text);
	}
}

int
nd_read(struct nd_reader *r, json_t **out)
{
	return nd_read_skip(r, out, NULL, NULL);
}

int
nd_read_skip(struct nd_reader *r, json_t **out, jl_skip_fn *skip, void *arg)
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
	*out = skip ? jl_loadb_skip(line, n, JSON_DECODE_ANY, &jerr, skip, arg)
		    : jl_loadb(line, n, JSON_DECODE_ANY, &jerr);
	if (!*out) {
		nd_warn(r, "invalid JSON at column %d: %s", jerr.column,
			js_error_text(&jerr));
		return -1;
	}
	return 1;
}

void
nd_write(json_t *rec)
{
	/* one buffer, kept between records, and one fwrite: jansson's
	 * json_dumpf writes token by token through stdio. The lock keeps
	 * the buffer and the line whole when threads write records. */
	static struct jb b;
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

	pthread_mutex_lock(&mu);
	jb_reset(&b);
	jb_json(&b, rec);
	jb_write(&b);
	pthread_mutex_unlock(&mu);
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
nd_each_input(int argc, char **argv, int flags,
	int (*fn)(struct nd_reader *r, void *arg), void *arg)
{
	struct nd_reader r;
	int status = HAZ_OK;
	int i;

	for (i = 0; i < (argc ? argc : 1); i++) {
		if (nd_open(&r, argc ? argv[i] : "-", flags) < 0) {
			fn(NULL, arg);
			status = HAZ_FAIL;
			continue;
		}
		if (fn(&r, arg) != 0 || r.failed)
			status = HAZ_FAIL;
		nd_close(&r);
	}
	return status;
}

/* What nd_each_record hands on. */
struct each {
	int (*fn)(struct nd_reader *r, json_t *rec, void *arg);
	void *arg;
};

static int
each_record(struct nd_reader *r, void *arg)
{
	struct each *e = arg;
	json_t *rec;
	int got, bad = 0;

	if (!r)
		return e->fn(NULL, NULL, e->arg);
	while ((got = nd_read(r, &rec)) != 0) {
		if (e->fn(r, got > 0 ? rec : NULL, e->arg) != 0)
			bad = 1;
		json_decref(rec);
	}
	return bad;
}

int
nd_each_record(int argc, char **argv, int flags,
	int (*fn)(struct nd_reader *r, json_t *rec, void *arg), void *arg)
{
	struct each e = {fn, arg};

	return nd_each_input(argc, argv, flags, each_record, &e);
}

/* good_record hands on a good record; the bad ones, and inputs that
 * could not be opened, already fail the run. */
static int
good_record(struct nd_reader *r, json_t *rec, void *arg)
{
	struct each *e = arg;

	return rec ? e->fn(r, rec, e->arg) : 0;
}

int
nd_loop_files(int argc, char **argv, int flags,
	int (*fn)(struct nd_reader *r, json_t *rec, void *arg), void *arg)
{
	struct each e = {fn, arg};

	return nd_each_record(argc, argv, flags, good_record, &e);
}
