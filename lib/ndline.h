/* ndline (ndl_): the raw lines of the NDJSON loop, for tools that parse records
 * themselves (see jscan.h). The rules are nd_read's: records numbered
 * from 1 on r->recno, "\r\n" accepted, a blank line an error (warned,
 * r->failed set) unless ND_SKIP_BLANK. Open and close r with nd_open and
 * nd_close. */
#ifndef HAZ_NDLINE_H
#define HAZ_NDLINE_H

#include "nd.h"

/* ndl_read points *line at the next record (NUL-terminated, writable,
 * valid until the next call) and its length in *len. Returns 1 for a
 * record, 0 at end of input, -1 for a blank line or one longer than
 * r->max (ND_MAX_RECORD unless set before the first call; warned, skipped
 * without being held whole). Input is read with read(2), so records
 * stream from a pipe as they come. A read error ends the tool with
 * status 1. */
int ndl_read(struct nd_reader *r, char **line, size_t *len);

#endif
