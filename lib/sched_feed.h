/* sched_feed (sp_): the input loop of sched-pick's engine, shared with
 * bench/linear-pick so that both read records alike and differ only in
 * their search.
 *
 * Each input (the paths of argv, or stdin when argc is 0) is read line
 * by line with the NDJSON rules (ndline.h), each line parsed into the
 * state's document and applied by sp_feed. A line that is not JSON is
 * warned of on its input and skipped; so is a record sp_feed refuses. */
#ifndef HAZ_SCHED_FEED_H
#define HAZ_SCHED_FEED_H

#include "sched.h"

/* sp_feed_inputs feeds st every record of the inputs, calling flushed
 * (when not NULL) with arg each time a flush record has placed a batch.
 * Returns HAZ_OK, or HAZ_FAIL when an input could not be opened or held
 * a bad record. */
int sp_feed_inputs(struct sp_state *st, int argc, char **argv,
	void (*flushed)(struct sp_state *st, void *arg), void *arg);

#endif
