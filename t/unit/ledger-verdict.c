/* ledger-verdict: the ledger's two readers of a GPU key, fed the same
 * values and their verdicts compared: the C one (lg_state_parse) and the
 * Lua one the scripts use (lua_lib's sload), run inside a real Redis.
 *
 *   build/unit/ledger-verdict ADDR NOW [-n N] [-s SEED] FILE...
 *   build/unit/ledger-verdict ADDR NOW -e SCRIPT PARAMS
 *
 * The second form runs one of the ledger's scripts (reserve, release,
 * heartbeat, cleanup, k8s-sync, k8s-prepare, queue-add, queue-heartbeat,
 * queue-try, queue-cancel) with PARAMS ("-": read from stdin), a JSON
 * object sent as it is (now,
 * ns, off and token too), and prints its answer: the scripts' own bounds,
 * tried without the C side's checks in front of them. A SCRIPT with a /
 * is a file of Lua run after the shared Lua, as a script's body is: a
 * test's probe of the shared functions.
 *
 * Each FILE holds one value, byte for byte; with -n, N more values are
 * made from them by mutation (bytes flipped, cut, doubled, spliced,
 * hostile tokens put in; SEED fixes the choice). For each value it
 * prints nothing when both say the same (free; held, active or not, and
 * by whom; or unreadable), else one line:
 *
 *   differ HEX: c=VERDICT lua=VERDICT
 *
 * and at the end "values N, differ K". Exit status 0 when none differ,
 * 1 when some do, 2 for bad arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "ledger.h"
#include "redis.h"

#pragma GCC diagnostic ignored "-Wunused-const-variable"
#pragma GCC diagnostic ignored "-Wunused-variable"
#include "lua_ledger.h"

static const struct {
	const char *name, *body;
} bodies[] = {{"reserve", lua_reserve}, {"release", lua_release},
	{"heartbeat", lua_heartbeat}, {"cleanup", lua_cleanup},
	{"k8s-sync", lua_k8s_sync}, {"k8s-prepare", lua_k8s_prepare},
	{"queue-add", lua_queue_add}, {"queue-heartbeat", lua_queue_heartbeat},
	{"queue-try", lua_queue_try}, {"queue-cancel", lua_queue_cancel}};

struct buf {
	char *p;
	size_t n;
};

static int read_file(const char *path, struct buf *b);

/* run_script runs script name with params; prints its answer. */
static int
run_script(const char *addr, const char *name, const char *params)
{
	const char *av[4] = {"EVAL", NULL, "0", params};
	char *src = NULL;
	struct rd rd;
	redisReply *y;
	size_t i;

	for (i = 0; i < sizeof bodies / sizeof bodies[0]; i++)
		if (strcmp(bodies[i].name, name) == 0)
			src = easprintf("%s%s%s%s", lg_lua_bounds(), lua_lib,
				lua_mig, bodies[i].body);
	if (!src && strchr(name, '/')) {
		struct buf body;

		if (read_file(name, &body) < 0)
			err_die(HAZ_FAIL, "%s:", name);
		body.p[body.n] = '\0';
		src = easprintf("%s%s%s%s", lg_lua_bounds(), lua_lib, lua_mig,
			body.p);
		free(body.p);
	}
	if (!src)
		err_die(HAZ_USAGE, "no script %s", name);
	av[1] = src;
	rd_connect(&rd, addr, 0, NULL, 5);
	y = rd_cmdv(&rd, 4, av, NULL);
	printf("%s\n",
		y->type == REDIS_REPLY_STRING || y->type == REDIS_REPLY_ERROR
			? y->str
			: "?");
	freeReplyObject(y);
	rd_close(&rd);
	free(src);
	return 0;
}

/* The Lua verdict; and a value jflat passes at once must be one jwalk
 * passes too (else the verdict says so, and differs from C's). */
static const char verdict_body[] =
	"if jflat(ARGV[2]) and jwalk(ARGV[2]) then\n"
	"  return 'jflat passed what jwalk refuses: ' .. jwalk(ARGV[2])\n"
	"end\n"
	"local st = sload(0, ARGV[2])\n"
	"local v = st.bad and 'bad' or st.free and 'free' or\n"
	"  ((st.active and 'active ' or 'inactive ') .. st.type .. ' ' ..\n"
	"  st.user)\n"
	"return v\n";

static struct buf *corpus;
static size_t ncorpus;
static unsigned long long rng;

static unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (unsigned)(rng % n) : 0;
}

static const char *const tokens[] = {"0x1", "-1e300", "1e400", "\\u0000",
	"\\ud800", "\\udc00", "\\ud800\\udc00", "-99999999999999999999",
	"9223372036854775808", "-9223372036854775808", "9223372036854775807",
	"01", "+1", "1.", ".5", "NaN", "Infinity", "-Infinity", "1e", "1E+",
	"-", "-0", "0.0e0", "\xff", "\xc0\x80", "\xed\xa0\x80",
	"\xf4\x90\x80\x80", "\xe2\x82", "\x01", "\x7f",
	"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "]]]]", "\"", "\\", "\\x", "null",
	"true", "{}", "[]", ",", ":", " ", "\t", "\n", "\r", "\f",
	"253402300799", "253402300800", "-1", "0", "\"run\"", "\"manual\"",
	"\"k8s\"", "\"user\":\"u\"", "\"type\":\"run\"", "\"last_heartbeat\":",
	"\"expiry_time\":", "\"start_time\":", "\"9999-12-31T23:59:59Z\"",
	"\"0000-01-01T00:00:00Z\"", "\"1969-12-31T23:59:59Z\"",
	"\"2026-02-29T00:00:00Z\"", "\"2024-02-29T00:00:00+24:00\"",
	"\"2026-11-27T00:00:00.5-01:30\"", "\"1800000000\"", "\"-5\"",
	"\"5.9\"", "1800000000.9", "1.8e9", "\"\xc2\x9b\"", "\"\\u001b[31m\""};

/* mutate makes a new value from the corpus, in *out (malloc'd). */
static void
mutate(struct buf *out)
{
	const struct buf *a = &corpus[rnd((unsigned)ncorpus)];
	const struct buf *b = &corpus[rnd((unsigned)ncorpus)];
	size_t at = a->n ? rnd((unsigned)a->n + 1) : 0, cut, k;
	const char *t;

	out->p = emalloc(a->n + b->n + 64);
	memcpy(out->p, a->p, a->n);
	out->n = a->n;
	switch (rnd(6)) {
	case 0: /* a byte flipped */
		if (out->n)
			out->p[rnd((unsigned)out->n)] ^= (char)(1u << rnd(8));
		break;
	case 1: /* a piece cut out */
		cut = rnd(8) + 1;
		if (at + cut <= out->n) {
			memmove(out->p + at, out->p + at + cut,
				out->n - at - cut);
			out->n -= cut;
		}
		break;
	case 2: /* spliced with another */
		k = b->n ? rnd((unsigned)b->n) : 0;
		memcpy(out->p + at, b->p + k, b->n - k);
		out->n = at + b->n - k;
		break;
	default: /* a hostile token put in, or in place of a number */
		t = tokens[rnd(sizeof tokens / sizeof tokens[0])];
		k = strlen(t);
		cut = 0;
		while (at + cut < out->n &&
			strchr("0123456789.-+eE", out->p[at + cut]) && rnd(4))
			cut++;
		memmove(out->p + at + k, out->p + at + cut, out->n - at - cut);
		memcpy(out->p + at, t, k);
		out->n = out->n - cut + k;
		break;
	}
}

static int
read_file(const char *path, struct buf *b)
{
	FILE *f = fopen(path, "rb");
	char chunk[4096];
	size_t got;

	if (!f)
		return -1;
	b->p = NULL;
	b->n = 0;
	while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
		b->p = erealloc(b->p, b->n + got + 1);
		memcpy(b->p + b->n, chunk, got);
		b->n += got;
	}
	fclose(f);
	if (!b->p)
		b->p = emalloc(1);
	return 0;
}

/* c_verdict is lg_state_parse's verdict on v, as the Lua body says it. */
static void
c_verdict(const struct buf *v, long long now, char *out, size_t n)
{
	struct lg_state st;

	lg_state_parse(&st, 0, v->p, v->n, now);
	if (st.kind == LG_BAD)
		snprintf(out, n, "bad");
	else if (st.kind == LG_FREE)
		snprintf(out, n, "free");
	else
		snprintf(out, n, "%s %s %s", st.active ? "active" : "inactive",
			st.type, st.user);
	lg_state_free(&st);
}

int
main(int argc, char **argv)
{
	struct rd_script script = {"verdict", NULL, ""};
	unsigned long long values = 0, differ = 0, i, iters = 0;
	char params[128], cv[1024], lv[1024], *src;
	struct buf v;
	struct rd rd;
	redisReply *y;
	long long now;
	size_t k;
	int c;

	err_init(argv[0]);
	if (argc < 3)
		err_die(HAZ_USAGE,
			"usage: ledger-verdict ADDR NOW [-n N] "
			"[-s SEED] FILE...");
	now = atoll(argv[2]);
	if (argc == 6 && strcmp(argv[3], "-e") == 0 &&
		strcmp(argv[5], "-") == 0) {
		struct buf in;

		if (read_file("/dev/stdin", &in) < 0)
			err_die(HAZ_FAIL, "stdin:");
		in.p[in.n] = '\0';
		c = run_script(argv[1], argv[4], in.p);
		free(in.p);
		return c;
	}
	if (argc == 6 && strcmp(argv[3], "-e") == 0)
		return run_script(argv[1], argv[4], argv[5]);
	rng = 88172645463325252ULL;
	optind = 3;
	while ((c = getopt(argc, argv, "n:s:")) != -1) {
		if (c == 'n')
			iters = strtoull(optarg, NULL, 10);
		else if (c == 's')
			rng ^= strtoull(optarg, NULL, 10) * 2654435761ULL;
		else
			return HAZ_USAGE;
	}
	for (; optind < argc; optind++) {
		corpus = erealloc(corpus, (ncorpus + 1) * sizeof *corpus);
		if (read_file(argv[optind], &corpus[ncorpus]) < 0)
			err_die(HAZ_FAIL, "%s:", argv[optind]);
		ncorpus++;
	}
	if (!ncorpus)
		err_die(HAZ_USAGE, "no corpus");
	rd_connect(&rd, argv[1], 0, NULL, 5);
	src = easprintf("%s%s%s%s", lg_lua_bounds(), lua_lib, lua_mig,
		verdict_body);
	script.src = src;
	snprintf(params, sizeof params,
		"{\"now\":%lld,\"ns\":0,\"off\":0,\"token\":\"t\"}", now);
	for (i = 0; i < ncorpus + iters; i++) {
		if (i < ncorpus) {
			v = corpus[i];
		} else {
			mutate(&v);
		}
		/* the value goes as ARGV[2], byte for byte */
		{
			const char *av[5] = {"EVALSHA", script.sha, "0", params,
				NULL};
			size_t lens[5];

			if (!script.sha[0])
				rd_script_sha(&script);
			av[4] = v.p;
			lens[0] = 7, lens[1] = 40, lens[2] = 1;
			lens[3] = strlen(params), lens[4] = v.n;
			y = rd_cmdv(&rd, 5, av, lens);
			if (y->type == REDIS_REPLY_ERROR &&
				strncmp(y->str, "NOSCRIPT", 8) == 0) {
				freeReplyObject(y);
				av[0] = "EVAL", lens[0] = 4;
				av[1] = src, lens[1] = strlen(src);
				y = rd_cmdv(&rd, 5, av, lens);
			}
		}
		snprintf(lv, sizeof lv, "%s",
			y->type == REDIS_REPLY_STRING          ? y->str
				: y->type == REDIS_REPLY_ERROR ? "lua-error"
							       : "?");
		if (y->type == REDIS_REPLY_ERROR)
			fprintf(stderr, "lua error: %s\n", y->str);
		freeReplyObject(y);
		c_verdict(&v, now, cv, sizeof cv);
		values++;
		if (strcmp(cv, lv) != 0) {
			differ++;
			printf("differ ");
			for (k = 0; k < v.n; k++)
				printf("%02x", (unsigned char)v.p[k]);
			printf(": c=%s lua=%s\n", cv, lv);
		}
		if (i >= ncorpus)
			free(v.p);
	}
	printf("values %llu, differ %llu\n", values, differ);
	for (k = 0; k < ncorpus; k++)
		free(corpus[k].p);
	free(corpus);
	free(src);
	rd_close(&rd);
	return differ ? 1 : 0;
}
