/* nd: the one NDJSON loop every tool uses.
 *
 * Records are numbered from 1 per input. "\r\n" line ends are accepted.
 * A blank line is an error unless ND_SKIP_BLANK is set. Output is compact
 * JSON plus "\n", flushed per record; a write error ends the tool.
 *
 * Threads: nd_write may be called from any thread: each record is written
 * whole, one at a time. A reader belongs to one thread. */
#ifndef HAZ_ND_H
#define HAZ_ND_H

#include <stdio.h>

#include <jansson.h>

#include "jload.h"

enum { ND_SKIP_BLANK = 1 };

/* The bound on one record of any NDJSON input, in bytes without its line
 * end (k8shazgpu(7)): a longer one is a bad record, skipped without being
 * held in memory. */
#define ND_MAX_RECORD ((size_t)16 << 20)

struct nd_reader {
	FILE *f;
	int fd;     /* f's descriptor, read directly */
	char *name; /* "<stdin>" or the path, for messages */
	long recno; /* number of the record last read, from 1 */
	char *line; /* the bytes read: line[pos..end) not yet taken */
	size_t cap, pos, end;
	size_t max; /* record bound; 0 until the first read sets it */
	int eof;
	int toolong; /* the last record read was past max */
	int flags;
	int failed; /* set once any record was bad */
};

/* nd_open opens path ("-" or NULL for stdin). Returns 0, or -1 with a
 * message printed. */
int nd_open(struct nd_reader *r, const char *path, int flags);
void nd_close(struct nd_reader *r);

/* nd_read stores the next record in *out (caller owns it). Returns 1 for a
 * record, 0 at end of input, -1 for a bad record (warned, r->failed set,
 * reading may continue): invalid JSON, a string holding \u0000 (no
 * record of ours carries one, and C strings would cut it), a number out
 * of range, a record past ND_MAX_RECORD. A read error ends the tool with
 * status 1; it is never taken for the end of input. */
int nd_read(struct nd_reader *r, json_t **out);

/* nd_read_skip is nd_read leaving out of the record the members skip
 * names (see jl_loadb_skip); the record is still checked whole. */
int nd_read_skip(struct nd_reader *r, json_t **out, jl_skip_fn *skip,
	void *arg);

/* nd_warn reports a problem with the record last read:
 * `tool: name:recno: message`. Sets r->failed. */
void nd_warn(struct nd_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* nd_write prints rec compactly plus "\n" to stdout and flushes. Dies on a
 * write error. Does not take ownership. */
void nd_write(json_t *rec);

/* nd_finish flushes and closes stdout, dying if that fails; returns status
 * unchanged so main can `return nd_finish(status)`. */
int nd_finish(int status);

/* nd_each_input hands fn each input of a filter, open: the paths of
 * argv, or stdin when argc is 0, each opened by nd_open with flags and
 * closed once fn returns, having read it as it likes (nd_read, ndl_read).
 * An input that cannot be opened (nd_open has said why) is handed over
 * as NULL, so that fn can count it against the work in hand. Returns
 * HAZ_OK, or HAZ_FAIL when an input could not be opened, held a bad
 * record (r->failed) or fn returned nonzero. */
int nd_each_input(int argc, char **argv, int flags,
	int (*fn)(struct nd_reader *r, void *arg), void *arg);

/* nd_each_record is nd_each_input reading records with nd_read: fn sees
 * every record (it does not take rec), rec NULL for a bad one (warned),
 * and r and rec NULL for an input that could not be opened. Returns as
 * nd_each_input. */
int nd_each_record(int argc, char **argv, int flags,
	int (*fn)(struct nd_reader *r, json_t *rec, void *arg), void *arg);

/* nd_loop_files is nd_each_record for a fn that sees the good records
 * only. */
int nd_loop_files(int argc, char **argv, int flags,
	int (*fn)(struct nd_reader *r, json_t *rec, void *arg), void *arg);

#endif
