/* linear-pick: sched-pick's engine with the plainest search: every node
 * is looked at for every request. Not a tool: bench/sched builds it
 * with cc against the build's libhaz.a, to measure what the indexes of
 * sched-pick save and to check that both choose the same nodes.
 *
 * usage: linear-pick [-v] [-r seed] [-S strategy] [file ...]
 *
 * Records, their reading, orders and output are sched-pick's
 * (lib/sched.c, lib/sched_feed.c); only the search differs: load every
 * node, keep the one that fits and sorts first by sp_cmp. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "err.h"
#include "nd.h"
#include "sched.h"
#include "sched_feed.h"

static void *
open_scan(struct sp_state *st)
{
	return st;
}

static void
nothing(void *ctx)
{
	(void)ctx;
}

static void
nothing_for(void *ctx, struct sp_node *n)
{
	(void)ctx;
	(void)n;
}

/* find looks at every node: its load first, the full fit only for one
 * that would sort before the best so far. */
static struct sp_node *
find(void *ctx, const struct sp_query *q)
{
	struct sp_state *st = ctx;
	struct sp_node *best = NULL, *n;
	struct sp_load bl, l;
	size_t i;

	for (i = 0; i < st->nnodes; i++) {
		n = st->nodes[i];
		sp_node_load(n, q, &l);
		if (l.count < q->k)
			continue;
		if (best && sp_cmp(n, &l, best, &bl, q, st->nnodes) >= 0)
			continue;
		if (!sp_fits(n, q, NULL))
			continue;
		best = n;
		bl = l;
	}
	return best;
}

static void
nothing_of(void *ctx, struct sp_node *n, const char *key, const char *val,
	int in)
{
	(void)ctx;
	(void)n;
	(void)key;
	(void)val;
	(void)in;
}

static const struct sp_ops scan_ops = {open_scan, nothing, nothing_for,
	nothing_of, find, nothing};

int
main(int argc, char **argv)
{
	int c, strategy = SP_LEAST_UTILIZED, verbose = 0, bad;
	unsigned long long seed = 1;
	double start = sp_clock(0), first, cpu;
	struct sp_state st;
	size_t n;

	err_init(argv[0]);
	while ((c = getopt(argc, argv, "r:S:v")) != -1) {
		switch (c) {
		case 'r': seed = strtoull(optarg, NULL, 10); break;
		case 'S':
			if ((strategy = sp_strategy_parse(optarg)) < 0)
				err_die(HAZ_USAGE, "-S %s: unknown strategy",
					optarg);
			break;
		case 'v': verbose = 1; break;
		default:
			fputs("usage: linear-pick [-v] [-r seed] [-S strategy] "
			      "[file ...]\n",
				stderr);
			return HAZ_USAGE;
		}
	}
	sp_init(&st, &scan_ops, strategy, seed);
	bad = sp_feed_inputs(&st, argc - optind, argv + optind, NULL, NULL);
	sp_flush(&st);
	n = st.nplaced + st.nunsched;
	first = st.seq ? st.first_wall : sp_clock(0);
	cpu = st.seq ? sp_clock(1) - st.first_cpu : 0.0;
	if (verbose) /* as sched-pick -v says it */
		err_warn("stats: decisions=%zu placed=%zu unschedulable=%zu "
			 "inventory_s=%.6f requests_s=%.6f requests_cpu_s=%.6f "
			 "deciding_s=%.6f us_per_decision=%.3f",
			n, st.nplaced, st.nunsched, first - start,
			sp_clock(0) - first, cpu, st.decide_sec,
			n ? st.decide_sec * 1e6 / (double)n : 0.0);
	sp_free(&st);
	return nd_finish(bad ? HAZ_FAIL : HAZ_OK);
}
