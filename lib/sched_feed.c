#include <stddef.h>

#include "err.h"
#include "jscan.h"
#include "nd.h"
#include "ndline.h"
#include "sched.h"
#include "sched_feed.h"

/* What feed_input needs beside the reader. */
struct feed {
	struct sp_state *st;
	void (*flushed)(struct sp_state *st, void *arg);
	void *arg;
};

static int
feed_input(struct nd_reader *r, void *arg)
{
	struct feed *f = arg;
	struct js_doc *d = &f->st->doc;
	char *line;
	size_t len;
	int got;

	if (!r)
		return 0;
	while ((got = ndl_read(r, &line, &len)) != 0) {
		if (got < 0)
			continue;
		if (js_parse(d, line, len) < 0)
			nd_warn(r, "invalid JSON at column %d: %s", d->errcol,
				d->err);
		else if (sp_feed(f->st, r, d) == SP_FLUSHED && f->flushed)
			f->flushed(f->st, f->arg);
	}
	return 0;
}

int
sp_feed_inputs(struct sp_state *st, int argc, char **argv,
	void (*flushed)(struct sp_state *st, void *arg), void *arg)
{
	struct feed f = {st, flushed, arg};

	return nd_each_input(argc, argv, 0, feed_input, &f);
}
