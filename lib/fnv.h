/* fnv: FNV-1a, 64 bit: a fast hash of bytes, for digests that tell
 * whether something changed and for spreading keys over a few queues.
 * Not for tables whose keys come from outside (hmap seeds its own).
 *
 * Threads: any thread. */
#ifndef HAZ_FNV_H
#define HAZ_FNV_H

#include <stddef.h>
#include <stdint.h>

/* The basis to start from. */
#define FNV64_BASIS 14695981039346656037ULL

/* fnv_64 folds the n bytes at p into h and returns the hash; start from
 * FNV64_BASIS, and chain calls to hash parts in turn. */
uint64_t fnv_64(uint64_t h, const void *p, size_t n);

#endif
