/* hmap: test driver for lib/hmap.c.
 *
 *   build/unit/hmap [ROUNDS [SEED]]
 *
 * Puts, replaces, takes and deletes random keys from a small key space,
 * many times over (so probe chains wrap, grow and shift back), checking
 * the table against a plain array after every step and by a full walk at
 * the end of each round. Prints "ok N" and exits 0, or names the first
 * difference and exits 1. Values are counted so that valgrind sees any
 * the table forgets to free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hmap.h"

#define KEYS 600

static long live; /* values allocated and not yet freed */

static void
val_free(void *p)
{
	live--;
	free(p);
}

static int *
val(int v)
{
	int *p = emalloc(sizeof *p);

	*p = v;
	live++;
	return p;
}

static void
key(char *buf, size_t n, int i)
{
	snprintf(buf, n, "uid-%d-%x", i, (unsigned)i * 2654435761u);
}

/* walk checks that iteration sees exactly the keys of ref. */
static int
walk(struct hm *h, const int *ref)
{
	const char *k;
	void *v;
	size_t pos = 0, n = 0, want = 0;
	int i;

	while (hm_next(h, &pos, &k, &v)) {
		n++;
		if (sscanf(k, "uid-%d-", &i) != 1 || ref[i] != *(int *)v)
			return -1;
	}
	for (i = 0; i < KEYS; i++)
		want += ref[i] != 0;
	return n == want && hm_len(h) == want ? 0 : -1;
}

static int
step(struct hm *h, int *ref, int i, int op, int r)
{
	char k[64];
	int *got;

	key(k, sizeof k, i);
	if (op < 5) {
		hm_put(h, k, val(r));
		ref[i] = r;
	} else if (op < 7) {
		got = hm_take(h, k);
		if ((got ? *got : 0) != ref[i])
			return -1;
		if (got)
			val_free(got);
		ref[i] = 0;
	} else if (op < 9) {
		if (hm_del(h, k) != (ref[i] != 0))
			return -1;
		ref[i] = 0;
	}
	got = hm_get(h, k);
	return (got ? *got : 0) == ref[i] ? 0 : -1;
}

int
main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20, ref[KEYS], r, s, i;
	struct hm *h;

	err_init("hmap");
	srand(argc > 2 ? (unsigned)atoi(argv[2]) : 1);
	for (r = 0; r < rounds; r++) {
		h = hm_new(val_free);
		memset(ref, 0, sizeof ref);
		for (s = 0; s < 5000; s++) {
			i = rand() % KEYS;
			if (step(h, ref, i, rand() % 10, 1 + rand() % 1000) < 0)
				err_die(HAZ_FAIL,
					"round %d step %d key %d: wrong", r, s,
					i);
		}
		if (walk(h, ref) < 0)
			err_die(HAZ_FAIL, "round %d: walk disagrees", r);
		hm_free(h);
	}
	if (live != 0)
		err_die(HAZ_FAIL, "%ld values not freed", live);
	printf("ok %d\n", rounds);
	return 0;
}
