/* threads: test driver for the state lib/ shares between threads.
 *
 *	threads names|hmap|nd THREADS ROUNDS
 *
 * Starts THREADS threads at once, each doing ROUNDS rounds of:
 *
 *	names   js_fields of one record through one js_names that none of
 *	        them has used before (its slots are built on first use)
 *	hmap    a table of its own: 64 keys put, then read back
 *	nd      nd_write of one record {"thread":T,"round":R,"pad":...}
 *
 * names and hmap print one line, "THREADS threads, N rounds, W wrong",
 * W counting the lookups that did not find what was stored; nd prints the
 * records themselves, for the test to check that every line is whole.
 * Run it under helgrind to see a race, not only its rare effects. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "hmap.h"
#include "jscan.h"
#include "nd.h"

enum { MAXT = 64, KEYS = 64 };

static const char *const names[] = {"kind", "id", "name", "node", "gpus",
	"uuid", "memory_mib", "health"};
static struct js_names shared = {names, 8, 0, 0, {0}};
static const char record[] = "{\"health\":\"ok\",\"gpus\":2,\"kind\":\"gpu\","
			     "\"uuid\":\"GPU-1\",\"id\":\"w\",\"name\":\"n\","
			     "\"node\":\"k\",\"memory_mib\":1}";
static int rounds;
static pthread_barrier_t start;

/* one_names: 1 when js_fields found each of the 8 members at its key */
static int
one_names(void)
{
	struct js_doc d = {0};
	char buf[sizeof record];
	int out[8], i, ok = 1;

	memcpy(buf, record, sizeof record);
	if (js_parse(&d, buf, sizeof record - 1) != 0)
		return 0;
	js_fields(&d, 0, &shared, out);
	for (i = 0; i < 8; i++)
		ok &= out[i] > 0 && strcmp(d.t[out[i] - 1].s, names[i]) == 0;
	js_free(&d);
	return ok;
}

/* one_hmap: 1 when a table of 64 keys gives every value back */
static int
one_hmap(long self)
{
	struct hm *h = hm_new(NULL);
	char key[32];
	long i;
	int ok = 1;

	for (i = 0; i < KEYS; i++) {
		snprintf(key, sizeof key, "%ld/%ld", self, i);
		hm_put(h, key, (void *)(i + 1));
	}
	for (i = 0; i < KEYS; i++) {
		snprintf(key, sizeof key, "%ld/%ld", self, i);
		ok &= hm_get(h, key) == (void *)(i + 1);
	}
	hm_free(h);
	return ok;
}

static void
one_nd(long self, int round)
{
	json_t *r = json_pack("{s:i, s:i, s:s}", "thread", (int)self, "round",
		round, "pad",
		"................................................................");

	nd_write(r);
	json_decref(r);
}

struct job {
	long self;
	char what;
	long wrong;
};

static void *
run(void *arg)
{
	struct job *j = arg;
	int r;

	pthread_barrier_wait(&start);
	for (r = 0; r < rounds; r++) {
		if (j->what == 'n' && !one_names())
			j->wrong++;
		else if (j->what == 'h' && !one_hmap(j->self))
			j->wrong++;
		else if (j->what == 'd')
			one_nd(j->self, r);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	struct job job[MAXT];
	pthread_t t[MAXT];
	long n, i, wrong = 0;

	err_prog = "threads";
	if (argc != 4 || !strchr("nhd", argv[1][0]) ||
		(n = strtol(argv[2], NULL, 10)) < 1 || n > MAXT ||
		(rounds = atoi(argv[3])) < 1)
		err_die(2, "usage: threads names|hmap|nd THREADS ROUNDS");
	if (!strcmp(argv[1], "nd"))
		argv[1] = "d";
	json_object_seed(0); /* as the tools do, before their threads */
	pthread_barrier_init(&start, NULL, (unsigned)n);
	for (i = 0; i < n; i++) {
		job[i] = (struct job){i, argv[1][0], 0};
		if (pthread_create(&t[i], NULL, run, &job[i]))
			err_die(1, "pthread_create:");
	}
	for (i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		wrong += job[i].wrong;
	}
	pthread_barrier_destroy(&start);
	if (argv[1][0] != 'd')
		printf("%ld threads, %ld rounds, %ld wrong\n", n, n * rounds,
			wrong);
	return nd_finish(0);
}
