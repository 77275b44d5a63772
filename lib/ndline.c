/* ndline: raw NDJSON lines with nd_read's rules, each at most r->max
 * bytes long. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "ndline.h"

/* fill reads what the input has ready (one read(2): a pipe's records
 * stream as they come) into r->line after r->end, growing the buffer up
 * to the record bound. Returns the bytes read, 0 at end of input; a read
 * error ends the tool: it is never taken for the end of input. */
static size_t
fill(struct nd_reader *r)
{
	size_t want;
	ssize_t n;

	if (r->pos) {
		memmove(r->line, r->line + r->pos, r->end - r->pos);
		r->end -= r->pos;
		r->pos = 0;
	}
	if (r->cap - r->end < 4096 && r->cap < r->max + 2) {
		r->cap = r->cap ? r->cap * 2 : 16384;
		if (r->cap > r->max + 2)
			r->cap = r->max + 2;
		r->line = erealloc(r->line, r->cap);
	}
	want = r->cap - r->end - 1; /* room for the NUL */
	do
		n = read(r->fd, r->line + r->end, want);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		err_die(HAZ_FAIL, "%s: read error:", r->name);
	r->end += (size_t)n;
	return (size_t)n;
}

/* too_long drops the rest of an overlong record, up to and including its
 * newline, and warns once with its number. */
static void
too_long(struct nd_reader *r)
{
	char *nl;

	r->toolong = 1;
	nd_warn(r,
		"record longer than %zu bytes (the bound of every input "
		"record): skipped",
		r->max);
	for (;;) {
		nl = memchr(r->line + r->pos, '\n', r->end - r->pos);
		if (nl) {
			r->pos = (size_t)(nl - r->line) + 1;
			return;
		}
		r->pos = r->end = 0;
		if (!fill(r))
			return;
	}
}

int
ndl_read(struct nd_reader *r, char **line, size_t *len)
{
	char *start, *nl = NULL;
	size_t n, scanned = 0;

	if (!r->max)
		r->max = ND_MAX_RECORD;
	if (!r->line && !fill(r))
		r->eof = 1;
	r->toolong = 0;
	for (;;) {
		start = r->line + r->pos;
		nl = memchr(start + scanned, '\n', r->end - r->pos - scanned);
		if (nl)
			break;
		scanned = r->end - r->pos;
		if (scanned > r->max) {
			r->recno++;
			too_long(r);
			return -1;
		}
		if (r->eof || !fill(r)) {
			r->eof = 1;
			break;
		}
	}
	if (!nl && r->pos == r->end)
		return 0;
	r->recno++;
	start = r->line + r->pos;
	n = nl ? (size_t)(nl - start) : r->end - r->pos;
	if (n > r->max) {
		too_long(r);
		return -1;
	}
	r->pos += n + (nl != NULL);
	if (n > 0 && start[n - 1] == '\r')
		n--;
	start[n] = '\0';
	*line = start;
	*len = n;
	if (strspn(start, " \t") != n)
		return 1;
	if (!(r->flags & ND_SKIP_BLANK))
		nd_warn(r, "blank line");
	return -1;
}
