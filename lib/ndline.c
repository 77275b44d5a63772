/* ndline: raw NDJSON lines with nd_read's rules. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "ndline.h"

int
ndl_read(struct nd_reader *r, char **line, size_t *len)
{
	ssize_t n;

	errno = 0;
	n = getline(&r->line, &r->cap, r->f);
	if (n < 0) {
		if (ferror(r->f))
			err_die(HAZ_FAIL, "%s: read error:", r->name);
		return 0;
	}
	r->recno++;
	if (n > 0 && r->line[n - 1] == '\n')
		r->line[--n] = '\0';
	if (n > 0 && r->line[n - 1] == '\r')
		r->line[--n] = '\0';
	*line = r->line;
	*len = (size_t)n;
	if (strspn(r->line, " \t") != (size_t)n)
		return 1;
	if (!(r->flags & ND_SKIP_BLANK))
		nd_warn(r, "blank line");
	return -1;
}
