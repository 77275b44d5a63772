/* rset (rs_): an ordered set of small integers (node ranks): a sorted array
 * while it has at most RS_SMALL members, then a bitset over the whole
 * universe with a summary word per 64 words, so that adding, removing
 * and finding the next member stay cheap both for the many small sets
 * and for the few that hold most nodes. */
#ifndef HAZ_RSET_H
#define HAZ_RSET_H

#include <stdint.h>

enum { RS_SMALL = 48 };
#define RS_NONE UINT32_MAX

struct rset {
	uint32_t n;     /* members */
	uint32_t cap;   /* room in arr */
	uint32_t *arr;  /* sorted members, while not big */
	uint64_t *bits; /* when big: one bit per member of the universe */
	uint64_t *sum;  /* when big: bit w set iff bits[w] != 0 */
	uint32_t words; /* when big: size of bits */
};

/* An all-zero struct rset is an empty set. */
void rs_free(struct rset *s);

/* rs_add adds r (< universe, not a member). */
void rs_add(struct rset *s, uint32_t r, uint32_t universe);

/* rs_del removes r (a member). An emptied set keeps its memory, to be
 * filled again: sets come and go with the groups of an index. */
void rs_del(struct rset *s, uint32_t r);

/* rs_next returns the least member >= r, or RS_NONE. */
uint32_t rs_next(const struct rset *s, uint32_t r);

#endif
