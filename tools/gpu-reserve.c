/* gpu-reserve: the canhazgpu GPU ledger in Redis, shared by host users and
 * Kubernetes.
 *
 * usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait]
 *                    [-T timeout] [-i gpufile] [-M mib] command [args]
 *
 * Commands: init, pool, reserve, release, heartbeat, run, status, cleanup,
 * queue, report, mark, k8s-sync, prepare, watch; with none (stdin not a
 * terminal) or "-", request records from stdin. Each writes NDJSON
 * records: `reservation` (reserve, release, heartbeat, cleanup,
 * k8s-sync, prepare), `pool` (init, pool), `gpu-state` (status),
 * `queue-entry`, `usage`, `conflict`, the `gpu` records of mark with a
 * `held` member. gpu-reserve(1) has them all.
 *
 * Redis keys, JSON, lock, allocation order and history are canhazgpu's
 * to the byte (lib/ledger.h); every write is one Lua script, those that
 * allocate under canhazgpu:allocation_lock.
 *
 * Exit status: 0 ok, 1 an operation or record failed, 2 usage, 75 Redis
 * unreachable or the allocation lock held past -L seconds. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "ledger.h"
#include "nd.h"
#include "redis.h"

/* The global options, and the connection once made. */
static struct {
	const char *addr, *passfile, *gpufile;
	int db;
	double lockwait_s, timeout_s;
	long long threshold_mib;
	long long *mem; /* -i: memory_used_mib per index, -1 unknown */
	int nmem;
	int connected, watching;
	struct rd rd, sub; /* sub: keyspace events, when watching */
	struct lg lg;
} G = {
	.lockwait_s = 15,
	.timeout_s = 5,
	.threshold_mib = 1024,
};

static const char usage_line
	[] = "usage: gpu-reserve [-a addr] [-D db] [-P passfile] [-L lockwait] "
	     "[-T timeout] [-i gpufile] [-M mib] command [options] [args]";

static void
usage(void)
{
	fprintf(stderr, "%s\n", usage_line);
	exit(HAZ_USAGE);
}

static void
help(void)
{
	printf("%s\n"
	       "Reserve GPUs in the canhazgpu ledger in Redis.\n"
	       "  -a ADDR     host:port, [v6]:port or a unix socket path\n"
	       "              (default $K8SHAZGPU_REDIS, else 127.0.0.1:6379)\n"
	       "  -D DB       database (default $K8SHAZGPU_REDIS_DB, else 0)\n"
	       "  -P FILE     password: the file's first line (default\n"
	       "              $K8SHAZGPU_REDIS_PASSWORD)\n"
	       "  -L SECONDS  wait for another's allocation lock (default 15)\n"
	       "  -T SECONDS  time limit per Redis command (default 5)\n"
	       "  -i FILE     gpu records (gpu-probe) for use without a "
	       "reservation\n"
	       "  -M MIB      memory in use above which a GPU is in use "
	       "(default 1024)\n"
	       "Commands:\n"
	       "  init -g N [-f] [-p nvidia|amd|fake] | pool\n"
	       "  reserve [-g N] [-G ids] [-t run|manual|k8s] [-u user] "
	       "[-U actual_user]\n"
	       "          [-c claim_uid] [-d duration] [-n note] [-f] [-b] "
	       "[-w wait]\n"
	       "  release [-G ids] [-u user] [-c claim_uid] [-t type]\n"
	       "  prepare -C claim_uid -n namespace/name [-p pod] [-G ids]\n"
	       "          [-m gpu:MIG-uuid,...]\n"
	       "  heartbeat -G ids [-u user]\n"
	       "  run [reserve options] [-l seconds] [-o] -- command [args]\n"
	       "  status [-l] | cleanup | queue [-e] | report [-d days]\n"
	       "  mark [-w] | k8s-sync | watch [-t seconds]\n"
	       "  - (or none, stdin not a terminal): request records\n",
		usage_line);
	exit(nd_finish(HAZ_OK));
}

/* num_arg reads option o's argument as a number in [lo, hi]. */
static double
num_arg(int o, const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || v < lo || v > hi || v != v) {
		err_warn("-%c: not a number from %g to %g: %s", o, lo, hi, s);
		usage();
	}
	return v;
}

/* read_password returns the first line of path (malloc'd). */
static char *
read_password(const char *path)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		err_die(HAZ_FAIL, "-P %s:", path);
	n = getline(&line, &cap, f);
	fclose(f);
	if (n < 0) {
		free(line);
		err_die(HAZ_FAIL, "-P %s: empty file", path);
	}
	line[strcspn(line, "\r\n")] = '\0';
	return line;
}

static void
connect_ledger(void)
{
	const char *env;
	char *pass = NULL;

	if (G.connected)
		return;
	if (!G.addr)
		G.addr = (env = getenv("K8SHAZGPU_REDIS")) && *env
			? env
			: "127.0.0.1:6379";
	if (G.passfile)
		pass = read_password(G.passfile);
	else if ((env = getenv("K8SHAZGPU_REDIS_PASSWORD")) && *env)
		pass = estrdup(env);
	rd_connect(&G.rd, G.addr, G.db, pass, G.timeout_s);
	if (pass) {
		memset(pass, 0, strlen(pass));
		free(pass);
	}
	fcntl(rd_fd(&G.rd), F_SETFD, FD_CLOEXEC);
	lg_init(&G.lg, &G.rd, G.lockwait_s);
	G.connected = 1;
}

/* read_gpufile reads -i's gpu records: memory_used_mib per index of the
 * whole GPUs (not MIG devices). A /dev/fd/N it names is made
 * close-on-exec. */
static void
read_gpufile(const char *path)
{
	struct nd_reader r;
	json_t *rec, *idx, *mem, *mig;
	long long i;
	int got, fd, end = 0;

	if (nd_open(&r, path, ND_SKIP_BLANK) < 0)
		exit(HAZ_FAIL);
	/* the descriptor they came on is not run's command's to inherit */
	if (sscanf(path, "/dev/fd/%d%n", &fd, &end) == 1 && !path[end] &&
		fd > 2)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	while ((got = nd_read(&r, &rec)) != 0) {
		if (got < 0)
			continue;
		idx = json_object_get(rec, "index");
		mem = json_object_get(rec, "memory_used_mib");
		mig = json_object_get(rec, "mig");
		if (json_is_string(json_object_get(rec, "kind")) &&
			strcmp(json_string_value(json_object_get(rec, "kind")),
				"gpu") == 0 &&
			json_is_integer(idx) && json_is_integer(mem) &&
			(!mig || json_is_null(mig))) {
			i = json_integer_value(idx);
			if (i >= 0 && i < 65536) {
				if (i >= G.nmem) {
					G.mem = erealloc(G.mem,
						(size_t)(i + 1) *
							sizeof *G.mem);
					while (G.nmem <= i)
						G.mem[G.nmem++] = -1;
				}
				G.mem[i] = json_integer_value(mem);
			}
		}
		json_decref(rec);
	}
	if (r.failed)
		exit(HAZ_FAIL);
	nd_close(&r);
}

static long long
mem_used(int gpu)
{
	return gpu >= 0 && gpu < G.nmem ? G.mem[gpu] : -1;
}

static json_t *
unreserved_ids(void)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < G.nmem; i++)
		if (G.mem[i] > G.threshold_mib)
			json_array_append_new(a, json_integer(i));
	return a;
}

/* bad_option says what is wrong with an option, from getopt's answer c
 * (its option strings start with ":"). */
static void
bad_option(int c)
{
	if (c == ':')
		err_warn("-%c needs an argument", optopt);
	else
		err_warn("unknown option -%c", optopt);
}

/* no_more ends with the usage when cmd's options left an argument. */
static void
no_more(const char *cmd, int argc, char **argv)
{
	if (optind != argc) {
		err_warn("%s: unexpected argument %s", cmd, argv[optind]);
		usage();
	}
}

/* open_watch returns a second connection subscribed to the keyspace
 * events of the GPU keys, made once, or NULL when the server does not
 * send them (said once on stderr, with how to turn them on). */
static struct rd *
open_watch(void)
{
	static int tried;

	if (!tried) {
		tried = 1;
		connect_ledger();
		G.watching = lg_keyspace_open(&G.lg, &G.sub) == 0;
		if (G.watching)
			fcntl(rd_fd(&G.sub), F_SETFD, FD_CLOEXEC);
	}
	return G.watching ? &G.sub : NULL;
}

/* ---- requests: reserve, release, heartbeat ---- */

/* do_reserve reserves q, waiting in the queue unless q->nonblock.
 * Returns the reservations ({gpu, user, ...} as the scripts answer), or
 * NULL when refused, with why in *msg (malloc'd). */
static json_t *
do_reserve(struct lg_req *q, char **msg)
{
	json_t *res, *ok, *entry;
	int waitable;

	*msg = NULL;
	connect_ledger();
	res = lg_run(&G.lg, LG_RESERVE,
		lg_reserve_params(q,
			q->force ? json_array() : unreserved_ids()));
	if ((ok = json_object_get(res, "ok"))) {
		json_incref(ok);
		json_decref(res);
		return ok;
	}
	waitable = lg_reserve_refusal(res, q, msg);
	json_decref(res);
	if (!waitable || q->nonblock)
		return NULL;
	free(*msg);
	*msg = NULL;
	entry = lg_queue_entry(q);
	ok = lg_queue_wait(&G.lg, entry,
		q->force ? json_array() : unreserved_ids(), q->wait,
		open_watch());
	if (!ok)
		*msg = easprintf(
			"gave up waiting for %d GPU%s after %g s; left "
			"the queue",
			q->count, q->count == 1 ? "" : "s", q->wait);
	return ok;
}

/* ids_arg parses -G's list into *ids (freeing the one before), or ends
 * the tool with usage. */
static void
ids_arg(const char *arg, int **ids, int *nids)
{
	const char *e;

	free(*ids);
	*ids = NULL;
	if ((e = lg_parse_ids(arg, ids, nids))) {
		err_warn("-G: %s: %s", e, arg);
		usage();
	}
}

/* run's own options: the time limit (-l) and canhazgpu's output (-o). */
static struct lg_run_opts run_opts = {.limit_s = -1};

/* reserve_opts reads reserve's options (and run's, -l and -o into
 * run_opts) from argv into q; returns the index of the first argument
 * left. */
static int
reserve_opts(int argc, char **argv, struct lg_req *q, const char *optstr)
{
	int c;

	memset(q, 0, sizeof *q);
	q->wait = -1;
	while ((c = getopt(argc, argv, optstr)) != -1) {
		switch (c) {
		case 'g':
			q->count = (int)num_arg('g', optarg, 1, LG_MAX_GPUS);
			break;
		case 'G': ids_arg(optarg, &q->ids, &q->nids); break;
		case 't': q->type = optarg; break;
		case 'u': q->user = optarg; break;
		case 'U': q->actual_user = optarg; break;
		case 'c': q->claim_uid = optarg; break;
		case 'n': q->note = optarg; break;
		case 'f': q->force = 1; break;
		case 'b': q->nonblock = 1; break;
		case 'l':
			run_opts.limit_s = num_arg('l', optarg, 0,
				LG_MAX_DURATION);
			break;
		case 'o': run_opts.canhazgpu = 1; break;
		case 'd':
			if (lg_duration(optarg, &q->duration)) {
				err_warn(
					"-d: not a duration: %s (use e.g. 90m, "
					"1.5h)",
					optarg);
				usage();
			}
			break;
		case 'w':
			/* 0: one try in the queue, then give up */
			if (strcmp(optarg, "0") == 0)
				q->wait = 0;
			else if (lg_duration(optarg, &q->wait)) {
				err_warn(
					"-w: not a duration: %s (use e.g. 90s, "
					"10m)",
					optarg);
				usage();
			}
			break;
		default: bad_option(c); usage();
		}
	}
	return optind;
}

static int
cmd_reserve(int argc, char **argv)
{
	struct lg_req q;
	const char *e;
	char why[256], *msg;
	json_t *ok;

	if (reserve_opts(argc, argv, &q, "+:g:G:t:u:U:c:d:n:fbw:") != argc) {
		err_warn("reserve: unexpected argument %s", argv[optind]);
		usage();
	}
	if ((e = lg_req_check(&q, 1, why, sizeof why))) {
		err_warn("%s", e);
		usage();
	}
	ok = do_reserve(&q, &msg);
	free(q.ids);
	if (!ok) {
		err_warn("%s", msg);
		free(msg);
		return HAZ_FAIL;
	}
	lg_write_reservations("reserve", ok);
	json_decref(ok);
	return HAZ_OK;
}

static int
cmd_release(int argc, char **argv)
{
	const char *user = NULL, *claim = NULL, *type = NULL;
	int *ids = NULL, nids = 0, c, status;
	json_t *res;

	while ((c = getopt(argc, argv, "+:G:u:c:C:t:")) != -1) {
		switch (c) {
		case 'G': ids_arg(optarg, &ids, &nids); break;
		case 'u': user = optarg; break;
		case 'c':
		case 'C': claim = optarg; break;
		case 't': type = optarg; break;
		default: bad_option(c); usage();
		}
	}
	no_more("release", argc, argv);
	if (type && strcmp(type, "run") && strcmp(type, "manual") &&
		strcmp(type, "k8s")) {
		err_warn("-t: not run, manual or k8s: %s", type);
		usage();
	}
	if (claim && nids) {
		err_warn("-c and -G: give one");
		usage();
	}
	if (!user)
		user = lg_default_user();
	connect_ledger();
	res = lg_run(&G.lg, LG_RELEASE,
		lg_release_params(ids, nids, user, claim, type, NULL));
	status = lg_release_report(res, "release", user, claim, type, nids);
	json_decref(res);
	free(ids);
	return status;
}

static int
cmd_heartbeat(int argc, char **argv)
{
	const char *user = NULL;
	int *ids = NULL, nids = 0, c, status;
	json_t *res;

	while ((c = getopt(argc, argv, "+:G:u:")) != -1) {
		switch (c) {
		case 'G': ids_arg(optarg, &ids, &nids); break;
		case 'u': user = optarg; break;
		default: bad_option(c); usage();
		}
	}
	if (optind != argc || !nids) {
		err_warn("heartbeat: -G ids needed");
		usage();
	}
	connect_ledger();
	res = lg_run(&G.lg, LG_HEARTBEAT,
		lg_heartbeat_params(ids, nids, user ? user : lg_default_user(),
			NULL));
	status = lg_heartbeat_report(res);
	json_decref(res);
	free(ids);
	return status;
}

/* ---- prepare: a claim's holds, all or nothing ---- */

/* prepare_conflict writes the conflict record of c, a conflict of the
 * prepare answer, for claim. */
static void
prepare_conflict(const json_t *claim, const json_t *c)
{
	const json_t *pod = json_object_get(claim, "pod");
	json_t *rec = json_pack("{s:I, s:O?, s:O?, s:O?, s:O?, s:o}", "gpu",
		(json_int_t)lg_jint(c, "gpu"), "mig",
		json_is_string(json_object_get(c, "mig"))
			? json_object_get(c, "mig")
			: NULL,
		"claim_uid", json_object_get(claim, "claim_uid"), "namespace",
		json_object_get(claim, "namespace"), "name",
		json_object_get(claim, "name"), "pods",
		json_is_string(pod) ? json_pack("[O]", pod) : json_array());

	lg_write_conflict(rec, c);
	json_decref(rec);
}

/* do_prepare takes the holds of claim (lg_claim_prepare's shape) and
 * writes a hold record for each, or a conflict record for each conflict
 * with its sentence on stderr (where, when not NULL, names the record).
 * Returns HAZ_OK or HAZ_FAIL; a lock held past -L ends the tool. */
static int
do_prepare(const json_t *claim, struct nd_reader *where)
{
	const json_t *c;
	char msg[1024], *why, *t;
	int status;
	json_t *res;
	size_t i;

	connect_ledger();
	if (!(res = lg_claim_prepare(&G.lg, claim, &status, &why))) {
		snprintf(msg, sizeof msg, "%s", why);
		free(why);
		if (status == HAZ_TEMP)
			err_die(status, "%s", msg);
		if (where)
			nd_warn(where, "%s", msg);
		else
			err_warn("%s", msg);
		return HAZ_FAIL;
	}
	lg_write_reservations("hold", json_object_get(res, "ok"));
	json_array_foreach(json_object_get(res, "conflicts"), i, c)
		prepare_conflict(claim, c);
	json_array_foreach(json_object_get(res, "conflicts"), i, c) {
		t = lg_conflict_text(c);
		if (where)
			nd_warn(where, "%s", t);
		else
			err_warn("%s", t);
		free(t);
	}
	status = json_array_size(json_object_get(res, "conflicts")) ? HAZ_FAIL
								    : HAZ_OK;
	json_decref(res);
	return status;
}

/* mig_arg reads -m's "gpu:uuid,..." into an array of {gpu, uuid}, or
 * ends the tool with usage. */
static json_t *
mig_arg(const char *arg)
{
	json_t *a = json_array();
	char *copy = estrdup(arg), *item, *save = NULL, *colon, *end = NULL;
	long g;

	for (item = strtok_r(copy, ",", &save); item;
		item = strtok_r(NULL, ",", &save)) {
		colon = strchr(item, ':');
		g = colon && isdigit((unsigned char)*item)
			? strtol(item, &end, 10)
			: -1;
		if (g < 0 || g > LG_MAX_GPU_ID || end != colon || !colon[1]) {
			err_warn("-m: not gpu:MIG-uuid: %s", item);
			usage();
		}
		json_array_append_new(a,
			json_pack("{s:i, s:s}", "gpu", (int)g, "uuid",
				colon + 1));
	}
	free(copy);
	if (!json_array_size(a)) {
		err_warn("-m: not gpu:MIG-uuid: %s", arg);
		usage();
	}
	return a;
}

static int
cmd_prepare(int argc, char **argv)
{
	const char *uid = NULL, *who = NULL, *pod = NULL, *slash;
	int *ids = NULL, nids = 0, c, status;
	json_t *mig = NULL, *claim;

	while ((c = getopt(argc, argv, "+:C:n:p:G:m:")) != -1) {
		switch (c) {
		case 'C': uid = optarg; break;
		case 'n': who = optarg; break;
		case 'p': pod = optarg; break;
		case 'G': ids_arg(optarg, &ids, &nids); break;
		case 'm':
			json_decref(mig);
			mig = mig_arg(optarg);
			break;
		default: bad_option(c); usage();
		}
	}
	no_more("prepare", argc, argv);
	slash = who ? strchr(who, '/') : NULL;
	if (!uid || !*uid || !slash || slash == who || !slash[1]) {
		err_warn("prepare: -C claim_uid and -n namespace/name needed");
		usage();
	}
	if (!nids && !mig) {
		err_warn("prepare: -G or -m needed");
		usage();
	}
	claim = json_pack("{s:s, s:s#, s:s, s:o, s:o, s:o}", "claim_uid", uid,
		"namespace", who, (int)(slash - who), "name", slash + 1, "pod",
		lg_str_or_null(pod), "gpus", lg_ids_json(ids, nids), "mig",
		mig ? mig : json_array());
	free(ids);
	status = do_prepare(claim, NULL);
	json_decref(claim);
	return status;
}

/* ---- init, pool, status, cleanup, queue, report ---- */

static void
no_options(int argc, char **argv)
{
	int c;

	if ((c = getopt(argc, argv, "+:")) != -1) {
		bad_option(c);
		usage();
	}
	if (optind != argc) {
		err_warn("%s: unexpected argument %s", argv[0], argv[optind]);
		usage();
	}
}

/* a_provider says whether s names a provider canhazgpu knows. */
static int
a_provider(const char *s)
{
	return !strcmp(s, "nvidia") || !strcmp(s, "amd") || !strcmp(s, "fake");
}

static int
cmd_init(int argc, char **argv)
{
	int c, force = 0, n = 0;
	const char *provider = "nvidia";
	redisReply *y;
	char had[24];

	while ((c = getopt(argc, argv, "+:g:fp:")) != -1) {
		switch (c) {
		case 'g': n = (int)num_arg('g', optarg, 1, LG_MAX_GPUS); break;
		case 'f': force = 1; break;
		case 'p': provider = optarg; break;
		default: bad_option(c); usage();
		}
	}
	if (!a_provider(provider)) {
		err_warn("-p: not nvidia, amd or fake: %s", provider);
		usage();
	}
	if (optind != argc || !n) {
		err_warn("init: -g N needed");
		usage();
	}
	connect_ledger();
	if (!force) {
		y = rd_cmd(&G.rd, "GET " LG_PREFIX "gpu_count");
		if (y->type == REDIS_REPLY_STRING) {
			snprintf(had, sizeof had, "%s", y->str);
			freeReplyObject(y);
			err_die(HAZ_FAIL,
				"the pool is already initialised (" LG_PREFIX
				"gpu_count is %s); -f starts it over",
				err_clean(had));
		}
		freeReplyObject(y);
	} else {
		lg_delete_states(&G.lg);
	}
	y = rd_cmd(&G.rd, "SET " LG_PREFIX "gpu_count %d", n);
	freeReplyObject(y);
	y = rd_cmd(&G.rd, "SET " LG_PREFIX "provider %s", provider);
	freeReplyObject(y);
	printf("{\"kind\":\"pool\",\"gpu_count\":%d,\"provider\":\"%s\"}\n", n,
		provider);
	return HAZ_OK;
}

/* pool_count returns y, the value of canhazgpu:gpu_count, as a JSON
 * integer; null when unset, or (warned, *status HAZ_FAIL) not a count. */
static json_t *
pool_count(const redisReply *y, int *status)
{
	char text[48], *end;
	long n;

	if (y->type != REDIS_REPLY_STRING)
		return json_null();
	snprintf(text, sizeof text, "%s", y->str);
	errno = 0;
	n = strtol(text, &end, 10);
	if (*end || end == text || errno || n < 0 || n > LG_MAX_GPUS) {
		err_warn(LG_PREFIX "gpu_count is not a number from 0 to %d: %s",
			LG_MAX_GPUS, err_clean(text));
		*status = HAZ_FAIL;
		return json_null();
	}
	return json_integer(n);
}

/* pool_provider returns y, the value of canhazgpu:provider, as a JSON
 * string; null when unset, or (warned, *status HAZ_FAIL) not one
 * canhazgpu knows. */
static json_t *
pool_provider(const redisReply *y, int *status)
{
	char text[64];

	if (y->type != REDIS_REPLY_STRING)
		return json_null();
	if (strlen(y->str) == y->len && a_provider(y->str))
		return json_string(y->str);
	snprintf(text, sizeof text, "%s", y->str);
	err_warn(LG_PREFIX "provider is not nvidia, amd or fake: \"%s\" (left "
			   "as it is)",
		err_clean(text));
	*status = HAZ_FAIL;
	return json_null();
}

/* cmd_pool writes the pool record: gpu_count and provider as stored. */
static int
cmd_pool(int argc, char **argv)
{
	int status = HAZ_OK;
	redisReply *y;
	json_t *r, *count;

	no_options(argc, argv);
	connect_ledger();
	y = rd_cmd(&G.rd, "MGET " LG_PREFIX "gpu_count " LG_PREFIX "provider");
	if (y->type != REDIS_REPLY_ARRAY || y->elements != 2)
		rd_fail(&G.rd, y, HAZ_FAIL, "mget");
	count = pool_count(y->element[0], &status);
	r = json_pack("{s:s, s:o, s:o}", "kind", "pool", "gpu_count", count,
		"provider", pool_provider(y->element[1], &status));
	freeReplyObject(y);
	nd_write(r);
	json_decref(r);
	return status;
}

/* cleanup_now runs the cleanup script; writes its releases with op when
 * op is not NULL. */
static void
cleanup_now(const char *op)
{
	json_t *res;

	connect_ledger();
	res = lg_run(&G.lg, LG_CLEANUP, json_object());
	if (op)
		lg_write_reservations(op, json_object_get(res, "released"));
	json_decref(res);
}

/* write_status writes the gpu-state records of every GPU, their times
 * by time_json. */
static int
write_status(json_t *(*time_json)(const struct lg_time *))
{
	struct lg_clock now;
	struct lg_state *sts;
	int n, i, status = HAZ_OK;
	long long mem;
	json_t *r;

	cleanup_now(NULL);
	n = lg_gpu_count(&G.lg);
	lg_clock(&now);
	sts = lg_read_states(&G.lg, n, now.sec);
	for (i = 0; i < n; i++) {
		if (sts[i].kind == LG_BAD)
			lg_bad_warning(i, sts[i].why);
		mem = mem_used(i);
		r = lg_state_record(&sts[i], mem, mem > G.threshold_mib,
			time_json);
		nd_write(r);
		json_decref(r);
	}
	lg_states_free(sts, n);
	return status;
}

static int
cmd_status(int argc, char **argv)
{
	json_t *(*time_json)(const struct lg_time *) = lg_time_json;
	int c;

	while ((c = getopt(argc, argv, "+:l")) != -1) {
		switch (c) {
		case 'l': time_json = lg_time_shown_json; break;
		default: bad_option(c); usage();
		}
	}
	no_more("status", argc, argv);
	return write_status(time_json);
}

static int
cmd_cleanup(int argc, char **argv)
{
	no_options(argc, argv);
	cleanup_now("cleanup");
	return HAZ_OK;
}

static int
cmd_queue(int argc, char **argv)
{
	int c, raw = 0;

	while ((c = getopt(argc, argv, "+:e")) != -1) {
		switch (c) {
		case 'e': raw = 1; break;
		default: bad_option(c); usage();
		}
	}
	no_more("queue", argc, argv);
	connect_ledger();
	return lg_queue_list(&G.lg, raw);
}

static int
cmd_report(int argc, char **argv)
{
	double days = 30;
	int c;

	while ((c = getopt(argc, argv, "+:d:")) != -1) {
		switch (c) {
		case 'd': days = num_arg('d', optarg, 0.001, 36500); break;
		default: bad_option(c); usage();
		}
	}
	no_more("report", argc, argv);
	connect_ledger();
	return lg_report(&G.lg, days);
}

/* ---- mark, k8s-sync, watch ---- */

static int
cmd_mark(int argc, char **argv)
{
	int c, watch = 0;
	struct rd *sub = NULL;

	while ((c = getopt(argc, argv, "+:w")) != -1) {
		switch (c) {
		case 'w': watch = 1; break;
		default: bad_option(c); usage();
		}
	}
	no_more("mark", argc, argv);
	connect_ledger();
	if (watch)
		sub = open_watch();
	return lg_mark(&G.lg, sub, watch, G.threshold_mib);
}

static int
cmd_k8s_sync(int argc, char **argv)
{
	no_options(argc, argv);
	connect_ledger();
	return lg_k8s_sync(&G.lg);
}

static int
cmd_watch(int argc, char **argv)
{
	double secs = -1;
	struct rd *sub;
	int c;

	while ((c = getopt(argc, argv, "+:t:")) != -1) {
		switch (c) {
		case 't': secs = num_arg('t', optarg, 0, 1e9); break;
		default: bad_option(c); usage();
		}
	}
	no_more("watch", argc, argv);
	connect_ledger();
	sub = open_watch();
	return lg_watch(&G.lg, sub, secs);
}

/* ---- run ---- */

static int
cmp_info(const void *a, const void *b)
{
	return (int)(lg_jint(*(json_t *const *)a, "gpu") -
		lg_jint(*(json_t *const *)b, "gpu"));
}

/* qsort_infos sorts an array of reservation infos by GPU. */
static void
qsort_infos(json_t *a)
{
	size_t n = json_array_size(a), i;
	json_t **v = emalloc((n + 1) * sizeof *v);

	for (i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(a, i));
	qsort(v, n, sizeof *v, cmp_info);
	json_array_clear(a);
	for (i = 0; i < n; i++)
		json_array_append_new(a, v[i]);
	free(v);
}

/* reconnect drops the connection and makes a new one, for a supervisor
 * whose Redis went away. */
static void
reconnect(struct lg *l)
{
	(void)l;
	rd_close(&G.rd);
	G.connected = 0;
	connect_ledger();
}

static int
cmd_run(int argc, char **argv)
{
	struct lg_req q;
	int first, *ids, n, i, status;
	long long *since;
	char why[256], dur[32], *shown, *p;
	const char *e;
	json_t *ok;

	first = reserve_opts(argc, argv, &q, "+:g:G:u:U:n:fbw:l:o");
	if (first >= argc || strcmp(argv[first - 1], "--") != 0) {
		err_warn("run: -- and a command needed");
		usage();
	}
	q.type = "run";
	if ((e = lg_req_check(&q, 1, why, sizeof why))) {
		err_warn("%s", e);
		usage();
	}
	if (!(ok = do_reserve(&q, &p))) {
		err_warn("%s", p);
		free(p);
		return HAZ_FAIL;
	}
	n = (int)json_array_size(ok);
	qsort_infos(ok);
	ids = emalloc((size_t)n * sizeof *ids);
	since = emalloc((size_t)n * sizeof *since);
	for (i = 0; i < n; i++) {
		ids[i] = (int)lg_jint(json_array_get(ok, (size_t)i), "gpu");
		since[i] = lg_jint(json_array_get(ok, (size_t)i), "since");
	}
	json_decref(ok);
	shown = ecalloc((size_t)n * 7 + 1, 1);
	for (i = 0; i < n; i++)
		sprintf(shown + strlen(shown), "%s%d", i ? " " : "", ids[i]);
	/* canhazgpu's line, on its standard output with -o */
	fprintf(run_opts.canhazgpu ? stdout : stderr,
		"Reserved %d GPU(s): [%s] for command execution", n, shown);
	if (run_opts.limit_s >= 0)
		fprintf(run_opts.canhazgpu ? stdout : stderr, " (timeout: %s)",
			lg_hms(run_opts.limit_s, dur));
	fprintf(run_opts.canhazgpu ? stdout : stderr, "\n");
	status = lg_supervise(&G.lg, argv + first, ids, since, n, q.user,
		&run_opts, reconnect);
	free(shown);
	free(since);
	free(ids);
	free(q.ids);
	return status;
}

/* ---- request records ---- */

#define FIELD_STR(k, dst)                                                      \
	do {                                                                   \
		if (lg_field_str(rec, k, dst)) {                               \
			nd_warn(r, "%s: not a string", k);                     \
			goto bad;                                              \
		}                                                              \
	} while (0)

/* request runs one request record; returns HAZ_OK or HAZ_FAIL. */
static int
request(struct nd_reader *r, json_t *rec)
{
	const char *op, *e, *dur, *type;
	struct lg_req q;
	char why[256], *msg;
	int status = HAZ_FAIL, *ids = NULL, nids = 0;
	json_t *v, *res;

	memset(&q, 0, sizeof q);
	if (!json_is_object(rec) || lg_field_str(rec, "op", &op) || !op) {
		nd_warn(r,
			"op: missing (reserve, release, heartbeat, prepare, "
			"status or cleanup)");
		return HAZ_FAIL;
	}
	if ((e = lg_field_ids(rec, "gpu_ids", &ids, &nids))) {
		nd_warn(r, "gpu_ids: %s", e);
		goto bad;
	}
	FIELD_STR("user", &q.user);
	if (strcmp(op, "reserve") == 0) {
		v = json_object_get(rec, "gpus");
		if (v && !json_is_null(v) &&
			(!json_is_integer(v) || json_integer_value(v) < 1 ||
				json_integer_value(v) > LG_MAX_GPUS)) {
			nd_warn(r, "gpus: not a positive integer");
			goto bad;
		}
		q.count = v ? (int)json_integer_value(v) : 0;
		FIELD_STR("type", &q.type);
		FIELD_STR("actual_user", &q.actual_user);
		FIELD_STR("claim_uid", &q.claim_uid);
		FIELD_STR("note", &q.note);
		FIELD_STR("duration", &dur);
		if (dur && lg_duration(dur, &q.duration)) {
			nd_warn(r,
				"duration: not a duration: %s (use e.g. 90m, "
				"1.5h)",
				dur);
			goto bad;
		}
		q.force = json_is_true(json_object_get(rec, "force"));
		q.nonblock = 1;
		q.ids = ids, q.nids = nids;
		if ((e = lg_req_check(&q, 0, why, sizeof why))) {
			nd_warn(r, "%s", e);
			goto bad;
		}
		if (!(res = do_reserve(&q, &msg))) {
			nd_warn(r, "%s", msg);
			free(msg);
			goto bad;
		}
		lg_write_reservations("reserve", res);
		json_decref(res);
		status = HAZ_OK;
	} else if (strcmp(op, "release") == 0) {
		FIELD_STR("claim_uid", &q.claim_uid);
		FIELD_STR("type", &type);
		if (type && strcmp(type, "run") && strcmp(type, "manual") &&
			strcmp(type, "k8s")) {
			nd_warn(r, "type: not run, manual or k8s: %s", type);
			goto bad;
		}
		if (!q.user)
			q.user = lg_default_user();
		connect_ledger();
		res = lg_run(&G.lg, LG_RELEASE,
			lg_release_params(ids, nids, q.user, q.claim_uid, type,
				NULL));
		status = lg_release_report(res, "release", q.user, q.claim_uid,
			type, nids);
		json_decref(res);
	} else if (strcmp(op, "heartbeat") == 0) {
		if (!nids) {
			nd_warn(r, "gpu_ids: needed for heartbeat");
			goto bad;
		}
		connect_ledger();
		res = lg_run(&G.lg, LG_HEARTBEAT,
			lg_heartbeat_params(ids, nids,
				q.user ? q.user : lg_default_user(), NULL));
		status = lg_heartbeat_report(res);
		json_decref(res);
	} else if (strcmp(op, "prepare") == 0) {
		json_t *claim = json_deep_copy(rec);

		json_object_del(claim, "op");
		json_object_del(claim, "gpu_ids");
		json_object_set_new(claim, "gpus", lg_ids_json(ids, nids));
		status = do_prepare(claim, r);
		json_decref(claim);
	} else if (strcmp(op, "status") == 0) {
		status = write_status(lg_time_json);
	} else if (strcmp(op, "cleanup") == 0) {
		cleanup_now("cleanup");
		status = HAZ_OK;
	} else {
		nd_warn(r, "op: unknown: %s", op);
	}
bad:
	free(ids);
	return status;
}

static int
cmd_records(int argc, char **argv)
{
	struct nd_reader r;
	int got, status = HAZ_OK;
	json_t *rec;

	if (argc > 1) {
		err_warn("-: unexpected argument %s", argv[1]);
		usage();
	}
	if (nd_open(&r, "-", 0) < 0)
		return HAZ_FAIL;
	while ((got = nd_read(&r, &rec)) != 0) {
		if (got < 0) {
			status = HAZ_FAIL;
			continue;
		}
		if (request(&r, rec) != HAZ_OK)
			status = HAZ_FAIL;
		json_decref(rec);
	}
	nd_close(&r);
	return status;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{"init", cmd_init},
	{"pool", cmd_pool},
	{"reserve", cmd_reserve},
	{"release", cmd_release},
	{"heartbeat", cmd_heartbeat},
	{"run", cmd_run},
	{"status", cmd_status},
	{"cleanup", cmd_cleanup},
	{"queue", cmd_queue},
	{"report", cmd_report},
	{"mark", cmd_mark},
	{"k8s-sync", cmd_k8s_sync},
	{"prepare", cmd_prepare},
	{"watch", cmd_watch},
	{"-", cmd_records},
};

int
main(int argc, char **argv)
{
	const char *env;
	size_t i;
	int c, status;

	err_init(argv[0]);
	if ((env = getenv("K8SHAZGPU_REDIS_DB")) && *env)
		G.db = (int)num_arg('D', env, 0, 1 << 20);
	opterr = 0;
	while ((c = getopt(argc, argv, "+:a:D:P:L:T:i:M:hV")) != -1) {
		switch (c) {
		case 'a': G.addr = optarg; break;
		case 'D': G.db = (int)num_arg('D', optarg, 0, 1 << 20); break;
		case 'P': G.passfile = optarg; break;
		case 'L': G.lockwait_s = num_arg('L', optarg, 0, 3600); break;
		case 'T':
			G.timeout_s = num_arg('T', optarg, 0.001, 3600);
			break;
		case 'i': G.gpufile = optarg; break;
		case 'M':
			G.threshold_mib = (long long)num_arg('M', optarg, 0,
				1e12);
			break;
		case 'h': help(); break;
		case 'V':
			printf("gpu-reserve %s\n", HAZ_VERSION);
			return nd_finish(HAZ_OK);
		default: bad_option(c); usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (G.gpufile)
		read_gpufile(G.gpufile);
	if (argc == 0) {
		if (isatty(STDIN_FILENO)) {
			err_warn("no command");
			usage();
		}
		status = cmd_records(0, argv);
	} else {
		for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
			if (strcmp(argv[0], commands[i].name) == 0)
				break;
		if (i == sizeof commands / sizeof commands[0]) {
			err_warn("unknown command %s", argv[0]);
			usage();
		}
		optind = 0; /* the command's options start at argv[1] */
		status = commands[i].fn(argc, argv);
	}
	if (G.connected)
		rd_close(&G.rd);
	if (G.watching)
		rd_close(&G.sub);
	free(G.mem);
	return nd_finish(status);
}
