/* hmap (hm_): a string-keyed hash table (open addressing, linear probing).
 *
 * Keys are copied; values are owned by the table when a free function was
 * given to hm_new.
 *
 * Threads: a table is used by one thread at a time (the caller locks a
 * shared one); tables in different threads need nothing. */
#ifndef HAZ_HMAP_H
#define HAZ_HMAP_H

#include <stddef.h>

struct hm;

/* hm_new returns an empty table; free_val (may be NULL) is called on
 * every value the table drops: replaced, deleted, or left at hm_free. */
struct hm *hm_new(void (*free_val)(void *));
void hm_free(struct hm *h);

/* hm_get returns the value stored under key, or NULL. */
void *hm_get(const struct hm *h, const char *key);

/* hm_put stores val under key, dropping any value stored before. */
void hm_put(struct hm *h, const char *key, void *val);

/* hm_take removes key and returns its value without freeing it (NULL
 * when absent). */
void *hm_take(struct hm *h, const char *key);

/* hm_del removes key, freeing its value; returns 1 if it was there. */
int hm_del(struct hm *h, const char *key);

size_t hm_len(const struct hm *h);

/* hm_next walks the table: start with *pos = 0; returns 1 and sets *key
 * and *val per entry, 0 at the end. The table must not change during a
 * walk. */
int hm_next(const struct hm *h, size_t *pos, const char **key, void **val);

#endif
