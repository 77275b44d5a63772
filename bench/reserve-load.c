/* reserve-load: the load client of bench/reserve. C clients, one thread
 * each, each driving its own gpu-reserve process in record mode (request
 * records on its stdin, reservation records on its stdout, one
 * connection to Redis for the whole run, as a long-lived host tool or
 * the node agent keeps one), do reserve+release pairs of one GPU, as fast
 * as they go, for a number of seconds; then it prints one JSON line:
 *
 *   {"clients":8,"pairs":24000,"seconds":10.0,"pairs_per_s":2400.0,
 *    "reserve_p50_ms":0.9,"reserve_p99_ms":3.1,"release_p50_ms":0.4,
 *    "release_p99_ms":1.2,"pair_p50_ms":1.4,"pair_p99_ms":4.0,
 *    "failed":0,"double_booked":0}
 *
 *   reserve-load -g gpu-reserve -p port [-c clients] [-d seconds]
 *
 * A double booking is caught in Redis itself, apart from the ledger:
 * after each reserve the client claims the GPU with SETNX
 * bench:owner:<gpu> (a claim already there is a double booking) and
 * drops its claim before the release. Those two commands run on a
 * connection of the client's own and are outside the latencies, inside
 * the pairs per second. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "../lib/clock.h"

extern char **environ;

struct client {
	int id;
	const char *tool;
	int port;
	double until;
	double *res, *rel, *pair; /* latencies, ms */
	size_t n, cap;
	long failed, doubles;
};

static void
die(const char *what)
{
	fprintf(stderr, "reserve-load: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* spawn starts tool in record mode with pipes to and from it. */
static pid_t
spawn(const char *tool, FILE **to, FILE **from)
{
	int in[2], out[2];
	posix_spawn_file_actions_t fa;
	char *argv[] = {(char *)tool, "-", NULL};
	pid_t pid;

	if (pipe(in) < 0 || pipe(out) < 0)
		die("pipe");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addclose(&fa, in[1]);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	if ((errno = posix_spawn(&pid, tool, &fa, NULL, argv, environ)))
		die(tool);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	if (!(*to = fdopen(in[1], "w")) || !(*from = fdopen(out[0], "r")))
		die("fdopen");
	return pid;
}

/* gpu_of returns the "gpu" member of a reservation record, or -1. */
static int
gpu_of(const char *line)
{
	const char *p = strstr(line, "\"gpu\":");

	return p ? atoi(p + 6) : -1;
}

static void
keep(struct client *c, double res, double rel, double pair)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 4096;
		c->res = realloc(c->res, c->cap * sizeof(double));
		c->rel = realloc(c->rel, c->cap * sizeof(double));
		c->pair = realloc(c->pair, c->cap * sizeof(double));
		if (!c->res || !c->rel || !c->pair)
			die("realloc");
	}
	c->res[c->n] = res;
	c->rel[c->n] = rel;
	c->pair[c->n++] = pair;
}

/* run does pairs until c->until: reserve one GPU, claim it in Redis,
 * drop the claim, release it. A reserve that gets nothing (every GPU
 * held by the others) counts as failed. */
static void *
run(void *arg)
{
	struct client *c = arg;
	char req[256], line[4096];
	FILE *to, *from;
	redisContext *r = redisConnect("127.0.0.1", c->port);
	pid_t pid = spawn(c->tool, &to, &from);

	if (!r || r->err) {
		fprintf(stderr, "reserve-load: redis: %s\n",
			r ? r->errstr : "no memory");
		exit(1);
	}
	while (clock_mono() < c->until) {
		double t0 = clock_mono(), t1, t2;
		redisReply *rep;
		int gpu;

		snprintf(req, sizeof req,
			"{\"op\":\"reserve\",\"gpus\":1,\"type\":\"manual\","
			"\"user\":\"bench%d\",\"duration\":\"1h\","
			"\"nonblock\":true}\n",
			c->id);
		if (fputs(req, to) == EOF || fflush(to) == EOF)
			die("write to gpu-reserve");
		if (!fgets(line, sizeof line, from))
			die("gpu-reserve ended");
		t1 = clock_mono();
		if ((gpu = gpu_of(line)) < 0) {
			c->failed++;
			continue;
		}
		rep = redisCommand(r, "SETNX bench:owner:%d %d", gpu, c->id);
		if (!rep || rep->type != REDIS_REPLY_INTEGER ||
			rep->integer != 1)
			c->doubles++;
		freeReplyObject(rep);
		rep = redisCommand(r, "DEL bench:owner:%d", gpu);
		freeReplyObject(rep);
		t2 = clock_mono();
		snprintf(req, sizeof req,
			"{\"op\":\"release\",\"gpu_ids\":[%d],"
			"\"user\":\"bench%d\"}\n",
			gpu, c->id);
		if (fputs(req, to) == EOF || fflush(to) == EOF)
			die("write to gpu-reserve");
		if (!fgets(line, sizeof line, from))
			die("gpu-reserve ended");
		keep(c, (t1 - t0) * 1e3, (clock_mono() - t2) * 1e3,
			(clock_mono() - t0 - (t2 - t1)) * 1e3);
	}
	fclose(to);
	fclose(from);
	kill(pid, SIGTERM);
	redisFree(r);
	return NULL;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* pct returns the p-th percentile of all clients' values at offset. */
static double
pct(struct client *cs, int n, size_t total, size_t off, double p)
{
	double *all = malloc((total ? total : 1) * sizeof(double)), v;
	size_t k = 0;

	if (!all)
		die("malloc");
	for (int i = 0; i < n; i++) {
		double *src = *(double **)((char *)&cs[i] + off);

		for (size_t j = 0; j < cs[i].n; j++)
			all[k++] = src[j];
	}
	if (!total) {
		free(all);
		return 0;
	}
	qsort(all, total, sizeof(double), cmp);
	v = all[(size_t)(p * (double)(total - 1) + 0.5)];
	free(all);
	return v;
}

int
main(int argc, char **argv)
{
	const char *tool = NULL;
	int port = 0, clients = 1, opt;
	double seconds = 10, t0, took;
	struct client *cs;
	pthread_t *th;
	size_t total = 0;
	long failed = 0, doubles = 0;

	while ((opt = getopt(argc, argv, "g:p:c:d:")) != -1) {
		switch (opt) {
		case 'g': tool = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'c': clients = atoi(optarg); break;
		case 'd': seconds = atof(optarg); break;
		default: goto usage;
		}
	}
	if (!tool || port <= 0 || clients <= 0 || seconds <= 0)
		goto usage;
	signal(SIGPIPE, SIG_IGN);
	cs = calloc((size_t)clients, sizeof *cs);
	th = calloc((size_t)clients, sizeof *th);
	if (!cs || !th)
		die("calloc");
	t0 = clock_mono();
	for (int i = 0; i < clients; i++) {
		cs[i] = (struct client){.id = i,
			.tool = tool,
			.port = port,
			.until = t0 + seconds};
		if ((errno = pthread_create(&th[i], NULL, run, &cs[i])))
			die("pthread_create");
	}
	for (int i = 0; i < clients; i++)
		pthread_join(th[i], NULL);
	took = clock_mono() - t0;
	for (int i = 0; i < clients; i++) {
		total += cs[i].n;
		failed += cs[i].failed;
		doubles += cs[i].doubles;
	}
	printf("{\"clients\":%d,\"pairs\":%zu,\"seconds\":%.1f,"
	       "\"pairs_per_s\":%.1f,\"reserve_p50_ms\":%.3f,"
	       "\"reserve_p99_ms\":%.3f,\"release_p50_ms\":%.3f,"
	       "\"release_p99_ms\":%.3f,\"pair_p50_ms\":%.3f,"
	       "\"pair_p99_ms\":%.3f,\"failed\":%ld,\"double_booked\":%ld}\n",
		clients, total, took, (double)total / took,
		pct(cs, clients, total, offsetof(struct client, res), .5),
		pct(cs, clients, total, offsetof(struct client, res), .99),
		pct(cs, clients, total, offsetof(struct client, rel), .5),
		pct(cs, clients, total, offsetof(struct client, rel), .99),
		pct(cs, clients, total, offsetof(struct client, pair), .5),
		pct(cs, clients, total, offsetof(struct client, pair), .99),
		failed, doubles);
	return 0;
usage:
	fputs("usage: reserve-load -g gpu-reserve -p port [-c clients] "
	      "[-d seconds]\n",
		stderr);
	return 2;
}
