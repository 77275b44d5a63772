/* sched-pick: choose a node and devices for each GPU request by a
 * strategy.
 *
 * usage: sched-pick [-v] [-r seed] [-S strategy] [-s statefile] [file ...]
 *
 * Reads NDJSON records (the files in turn, else stdin):
 *
 *   node        name, labels, ready, unschedulable, cost, cheap
 *   gpu         gpu-probe's record: node, index, uuid, memory_mib,
 *               util_pct, mig_enabled, mig, health
 *   allocation  id, devices (UUIDs), exclusive, memory_mib: held already
 *   release     id: free what it holds (or withdraw it if still waiting)
 *   request     id, gpus, gpu_ids, mig_profile, mig_fallback,
 *               min_memory_mib, exclusive, priority, strategy,
 *               prefer_node, node_selector, created
 *   flush       place the requests read since the last flush
 *
 * Inventory, allocation and release records take effect when read;
 * requests wait for a flush or the end of input, and are then placed in
 * input order (with -S priority: higher priority first, then earlier
 * created, then input order). Each is answered at once by one record:
 *
 *   {"kind":"placement","id","node","devices","indexes","strategy",
 *    "score"[,"mig_profile"][,"fallback_from"]}
 *   {"kind":"unschedulable","id","reason"}
 *
 * A placement holds its devices for later requests until released:
 * exclusively, or shared (exclusive false) while their memory lasts,
 * shared requests packing onto shared devices before taking free ones.
 * A profile of mig_fallback is tried on every node only after the ones
 * before it failed everywhere; a fitting prefer_node wins over the
 * strategy; a node_selector must match. Unhealthy devices, nodes not
 * ready or unschedulable, and devices in use are never chosen. The same
 * input, options and seed give the same output.
 *
 * Strategies (-S, or a request's own): least_utilized (default),
 * least_loaded, best_fit, binpack, spread, binpack_gpu, spread_gpu,
 * priority, round_robin (its position kept in -s FILE across runs),
 * random (seeded by -r, reproducible), cost_optimized; the exact orders
 * are in sched-pick(1). Nodes are found through indexes kept up to date
 * on every placement (lib/sched_index.h), not by a scan.
 *
 * -v prints statistics on stderr at the end (bench/sched reads them).
 *
 * GPU_UTILIZATION_GOAL (percent, 1 to 100, default 80): least_utilized
 * places a request on devices whose util_pct is below it when some node
 * has enough of them, and on others only when none has.
 *
 * Exit: 0 ok, unschedulable requests included; 1 a bad record (warned
 * with its source and number, skipped), a file or state file that cannot
 * be read, or a write error; 2 usage, or a bad GPU_UTILIZATION_GOAL. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "jscan.h"
#include "nd.h"
#include "sched.h"
#include "sched_feed.h"
#include "sched_index.h"

#define USAGE                                                                  \
	"usage: sched-pick [-v] [-r seed] [-S strategy] [-s statefile] "       \
	"[file ...]\n"

struct opts {
	int strategy;
	uint64_t seed;
	const char *state;
	int verbose;
};

static void
help(void)
{
	fputs(USAGE, stdout);
	puts("  -r SEED      seed of the random strategy (default 1)\n"
	     "  -S NAME      default strategy: least_utilized, least_loaded,\n"
	     "               best_fit, binpack, spread, binpack_gpu,\n"
	     "               spread_gpu, priority, round_robin, random,\n"
	     "               cost_optimized (default least_utilized)\n"
	     "  -s FILE      keep the round-robin position in FILE\n"
	     "  -v           statistics on stderr at the end\n"
	     "  -h, -V       help, version\n"
	     "environment:\n"
	     "  GPU_UTILIZATION_GOAL  percent, 1 to 100 (default 80):\n"
	     "               least_utilized takes devices under it first");
}

static void
usage(void)
{
	fputs(USAGE, stderr);
	exit(HAZ_USAGE);
}

/* ---- the state file ---- */

/* load_state reads the round-robin position from path; a missing file
 * means none yet. Dies when the file cannot be read or is not one. */
static void
load_state(struct sp_state *st, const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;
	const char *last;

	if (!f) {
		if (errno == ENOENT)
			return;
		err_die(HAZ_FAIL, "%s:", path);
	}
	n = fread(buf, 1, sizeof buf - 1, f);
	if (ferror(f))
		err_die(HAZ_FAIL, "%s: read error:", path);
	fclose(f);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	if (js_parse(&st->doc, buf, n) < 0 || st->doc.t[0].type != JS_OBJECT)
		err_die(HAZ_FAIL, "%s: not a sched-pick state file", path);
	last = js_str(&st->doc, js_get(&st->doc, 0, "round_robin_last"));
	st->rr_last = last ? estrdup(last) : NULL;
}

/* save_state writes the round-robin position to path through a
 * temporary file renamed over it, so a reader never sees half of one.
 * Dies on failure. */
static void
save_state(const struct sp_state *st, const char *path)
{
	char *tmp = easprintf("%s.%ld.tmp", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	struct jb b = {0};

	if (!f)
		err_die(HAZ_FAIL, "%s:", tmp);
	jb_raw(&b, "{\"kind\":\"sched-state\",\"round_robin_last\":");
	if (st->rr_last)
		jb_str(&b, st->rr_last);
	else
		jb_raw(&b, "null");
	jb_raw(&b, "}\n");
	if (fwrite(b.buf, 1, b.len, f) != b.len || fclose(f) == EOF)
		err_die(HAZ_FAIL, "%s: write error:", tmp);
	if (rename(tmp, path) < 0)
		err_die(HAZ_FAIL, "%s: rename to %s:", tmp, path);
	jb_free(&b);
	free(tmp);
}

/* ---- the loop ---- */

/* saved keeps the round-robin position of each batch placed. */
static void
saved(struct sp_state *st, void *arg)
{
	const struct opts *o = arg;

	save_state(st, o->state);
}

/* stats reports on stderr what the run did and what it cost: seconds
 * reading the inventory (up to the first request), then for the
 * requests on (wall clock and CPU), and deciding alone. */
static void
stats(const struct sp_state *st, double start)
{
	size_t n = st->nplaced + st->nunsched;
	double first = st->seq ? st->first_wall : sp_clock(0);

	err_warn("stats: decisions=%zu placed=%zu unschedulable=%zu "
		 "inventory_s=%.6f requests_s=%.6f requests_cpu_s=%.6f "
		 "deciding_s=%.6f us_per_decision=%.3f",
		n, st->nplaced, st->nunsched, first - start,
		sp_clock(0) - first,
		st->seq ? sp_clock(1) - st->first_cpu : 0.0, st->decide_sec,
		n ? st->decide_sec * 1e6 / (double)n : 0.0);
}

static uint64_t
seed_arg(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || *s == '-' || errno) {
		err_warn("-r %s: expected a whole number", s);
		usage();
	}
	return v;
}

static void
parse_opts(struct opts *o, int argc, char **argv)
{
	int c;

	memset(o, 0, sizeof *o);
	o->seed = 1;
	while ((c = getopt(argc, argv, "hr:S:s:vV")) != -1) {
		switch (c) {
		case 'h': help(); exit(nd_finish(HAZ_OK));
		case 'r': o->seed = seed_arg(optarg); break;
		case 'S':
			if ((o->strategy = sp_strategy_parse(optarg)) < 0) {
				err_warn("-S %s: unknown strategy", optarg);
				usage();
			}
			break;
		case 's': o->state = optarg; break;
		case 'v': o->verbose = 1; break;
		case 'V':
			puts("sched-pick " HAZ_VERSION);
			exit(nd_finish(HAZ_OK));
		default: usage();
		}
	}
}

int
main(int argc, char **argv)
{
	struct sp_state st;
	struct opts o;
	int status;
	double start = sp_clock(0);

	err_init(argv[0]);
	parse_opts(&o, argc, argv);
	sp_init(&st, &spx_ops, o.strategy, o.seed);
	if (o.state)
		load_state(&st, o.state);
	status = sp_feed_inputs(&st, argc - optind, argv + optind,
		o.state ? saved : NULL, &o);
	if (st.nbatch) {
		sp_flush(&st);
		if (o.state)
			save_state(&st, o.state);
	}
	if (o.verbose)
		stats(&st, start);
	sp_free(&st);
	return nd_finish(status);
}
