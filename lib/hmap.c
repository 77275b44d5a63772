/* hmap: string-keyed hash table with tombstone-free deletion. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "hmap.h"

struct slot {
	char *key; /* NULL: empty */
	void *val;
	uint64_t hash;
};

struct hm {
	struct slot *slots;
	size_t cap; /* a power of two */
	size_t len;
	void (*free_val)(void *);
	uint64_t seed; /* the process's, see seed() */
};

/* seed is drawn once per process: keys come from input (uuids, node
 * names, ids), and with a hash anyone can compute, keys made to share a
 * slot would turn every lookup into a scan of them all. Whichever thread
 * makes the first table draws it; each table keeps a copy, so that
 * hashing reads nothing shared. */
static uint64_t
seed(void)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t drawn;
	uint64_t s;

	pthread_mutex_lock(&mu);
	if (!drawn) {
		if (getrandom(&s, sizeof s, GRND_NONBLOCK) != sizeof s)
			s = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
		drawn = s | 1;
	}
	s = drawn;
	pthread_mutex_unlock(&mu);
	return s;
}

/* FNV-1a, 64 bit, from a seeded basis, then mixed (splitmix64's
 * finalizer) so that the low bits, which pick the slot, depend on every
 * byte. */
static uint64_t
hash(const struct hm *t, const char *s)
{
	uint64_t h = 14695981039346656037ULL ^ t->seed;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

struct hm *
hm_new(void (*free_val)(void *))
{
	struct hm *h = ecalloc(1, sizeof *h);

	h->cap = 16;
	h->slots = ecalloc(h->cap, sizeof *h->slots);
	h->free_val = free_val;
	h->seed = seed();
	return h;
}

void
hm_free(struct hm *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->cap; i++) {
		if (!h->slots[i].key)
			continue;
		free(h->slots[i].key);
		if (h->free_val)
			h->free_val(h->slots[i].val);
	}
	free(h->slots);
	free(h);
}

/* find returns the slot holding key, or the empty slot where it belongs. */
static struct slot *
find(const struct hm *h, const char *key, uint64_t hv)
{
	size_t i = hv & (h->cap - 1);

	while (h->slots[i].key) {
		if (h->slots[i].hash == hv && strcmp(h->slots[i].key, key) == 0)
			break;
		i = (i + 1) & (h->cap - 1);
	}
	return &h->slots[i];
}

static void
grow(struct hm *h)
{
	struct slot *old = h->slots, *s;
	size_t oldcap = h->cap, i;

	h->cap *= 2;
	h->slots = ecalloc(h->cap, sizeof *h->slots);
	for (i = 0; i < oldcap; i++) {
		if (!old[i].key)
			continue;
		s = find(h, old[i].key, old[i].hash);
		*s = old[i];
	}
	free(old);
}

void *
hm_get(const struct hm *h, const char *key)
{
	struct slot *s = find(h, key, hash(h, key));

	return s->key ? s->val : NULL;
}

void
hm_put(struct hm *h, const char *key, void *val)
{
	uint64_t hv = hash(h, key);
	struct slot *s = find(h, key, hv);

	if (s->key) {
		if (h->free_val && s->val != val)
			h->free_val(s->val);
		s->val = val;
		return;
	}
	if ((h->len + 1) * 4 > h->cap * 3) {
		grow(h);
		s = find(h, key, hv);
	}
	s->key = estrdup(key);
	s->hash = hv;
	s->val = val;
	h->len++;
}

/* unlink empties slot i and moves later entries of the probe chain back
 * so that every entry stays reachable from its home slot. */
static void
unlink_slot(struct hm *h, size_t i)
{
	size_t j = i, home, mask = h->cap - 1;

	h->slots[i].key = NULL;
	for (;;) {
		j = (j + 1) & mask;
		if (!h->slots[j].key)
			return;
		home = h->slots[j].hash & mask;
		/* leave j alone when its home lies cyclically in (i, j] */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		h->slots[i] = h->slots[j];
		h->slots[j].key = NULL;
		i = j;
	}
}

void *
hm_take(struct hm *h, const char *key)
{
	struct slot *s = find(h, key, hash(h, key));
	void *val;

	if (!s->key)
		return NULL;
	val = s->val;
	free(s->key);
	unlink_slot(h, (size_t)(s - h->slots));
	h->len--;
	return val;
}

int
hm_del(struct hm *h, const char *key)
{
	struct slot *s = find(h, key, hash(h, key));
	void *val;

	if (!s->key)
		return 0;
	val = hm_take(h, key);
	if (h->free_val)
		h->free_val(val);
	return 1;
}

size_t
hm_len(const struct hm *h)
{
	return h->len;
}

int
hm_next(const struct hm *h, size_t *pos, const char **key, void **val)
{
	for (; *pos < h->cap; (*pos)++) {
		if (h->slots[*pos].key) {
			*key = h->slots[*pos].key;
			*val = h->slots[*pos].val;
			(*pos)++;
			return 1;
		}
	}
	return 0;
}
