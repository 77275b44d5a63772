/* dra-plugin: the DRA kubelet plugin of driver gpu.canhazgpu.dev, for
 * one node.
 *
 *   dra-plugin [options] serve   gRPC on the kubelet's plugin sockets
 *   dra-plugin [options] -       request records on stdin (no sockets)
 *   dra-plugin [options] spec device[,device]...
 *                                the CDI spec of one claim with one request
 *                                of those devices, on stdout (no API server,
 *                                no ledger, nothing written)
 *
 * serve registers with the kubelet through
 *   <kubelet dir>/plugins_registry/<driver>-reg.sock
 * (pluginregistration.Registration: GetInfo answers type DRAPlugin, the
 * driver, the endpoint and the services v1.DRAPlugin then
 * v1beta1.DRAPlugin, in that order, since the kubelet takes the first it
 * knows) and serves NodePrepareResources and NodeUnprepareResources of
 * both versions on <kubelet dir>/plugins/<driver>/dra.sock. Each socket
 * has threads of its own (lib/grpc.c), so GetInfo is answered at once
 * while a prepare waits on the API server or the ledger. Connections are
 * kept open while idle: the kubelet takes a closed one for a plugin gone.
 *
 * The node's devices come from gpu records (gpu-probe's output: batches
 * ended by a flush record), read from -g FILE or, serving, from stdin as
 * they come: `gpu-probe -i 30 | dra-plugin serve`. Sockets are opened
 * once the first batch is read. What prepare and unprepare decide, and
 * the checkpoint <kubelet dir>/plugins/<driver>/checkpoint.json, are in
 * tools/dra-plugin/dra.h; the CDI specs in tools/dra-plugin/cdi.h: -m full (the
 * default) mounts the driver's files found under the driver root -T and adds
 * the container toolkit's hooks (-X), for any runtime; -m env passes nodes and
 * env only, for a node whose runtime is NVIDIA's. At start, and every -E
 * seconds, checkpoint, API claims, ledger and CDI specs are reconciled.
 *
 * -R FILE (serving): readiness for stat-serve(1). The file is touched
 * (made 0644 when missing, its time set to now) once the plugin has a
 * device inventory and the kubelet reported it registered
 * (NotifyRegistrationStatus registered=true), then every 10 s while the
 * sockets listen and the inventory is current: a regular file of gpu
 * records always is; a stream is until it ends (the probe feeding it is
 * gone). A registration the kubelet reported failed stops the touches
 * until one succeeds.
 *
 * Serving, a thread keeps the cluster's ResourceClaims from a list and
 * watch (tools/dra-plugin/rcache.h; -W: none), so that a prepare reads its
 * claim without a GET. -v says the time of each phase of every call on
 * stderr; -M FILE writes them, as Prometheus metrics, every 10 s.
 *
 * Records written on stdout, one per line: each answer
 *   {"kind":"prepare"|"unprepare","claims":{...},"ms":...,"phases":{...}}
 *   (the JSON form of the gRPC answer, the milliseconds it took, and those
 *   of each phase: struct dra_times), each
 * {"kind":"registration","registered":..., "error":...} the kubelet sends, each
 * reconcile report. In - mode stdin carries
 * {"kind":"prepare"|"unprepare","claims":[{ "namespace","uid","name"}]} and
 * {"kind":"reconcile"}, and -g is required.
 *
 * SIGTERM or SIGINT stops serving: connections closed, both sockets
 * removed, exit 0.
 *
 * EXIT STATUS: 0 stopped by a signal, or every record done; 1 a record
 * was bad or the configuration unusable (kubeconfig, sockets, an
 * unreadable checkpoint that could not be set aside); 2 usage. A Redis
 * server or API server that cannot be reached fails the claims asked
 * meanwhile, not the plugin. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "dra.h"
#include "drapb.h"
#include "err.h"
#include "gpuobj.h"
#include "grpc.h"
#include "nd.h"
#include "prom.h"
#include "redis.h"

#define DRIVER "gpu.canhazgpu.dev"

static const char usage_text[] =
	"usage: dra-plugin [-d driver] [-N node] [-k dir] [-C dir] [-D dir] "
	"[-r redis]\n"
	"                  [-g file] [-L seconds] [-E seconds] [-R file]\n"
	"                  [-m full|env] [-H dir] [-T root] [-p dir] [-X hook]\n"
	"                  [-u uid] [-M file] [-vW]\n"
	"                  [--kubeconfig file] [--context name]\n"
	"                  serve | - | spec device[,device]...\n";
static const char help_text[] =
	"The DRA kubelet plugin: prepares GPUs for pods (ledger holds, CDI "
	"specs).\n\n"
	"  serve          register with the kubelet and serve its gRPC calls\n"
	"  -              answer request records on stdin instead\n"
	"  spec dev,...   print the CDI spec of one claim of those devices\n"
	"  -d driver      DRA driver name (default " DRIVER ")\n"
	"  -N node        this node (default $NODE_NAME, else the hostname)\n"
	"  -k dir         the kubelet's directory (default /var/lib/kubelet)\n"
	"  -C dir         where CDI specs go (default /var/run/cdi)\n"
	"  -D dir         where device nodes are looked for (default /dev)\n"
	"  -r redis       the canhazgpu ledger (host:port or a socket; "
	"default\n"
	"                 $K8SHAZGPU_REDIS; none: nothing is held); password "
	"from\n"
	"                 $K8SHAZGPU_REDIS_PASSWORD\n"
	"  -g file        gpu records (default: stdin when serving)\n"
	"  -L seconds     wait for the ledger's lock at most this long "
	"(default 15)\n"
	"  -E seconds     reconcile every this often (default 600)\n"
	"  -R file        serving: touched every 10 s while ready (registered,\n"
	"                 the device inventory current)\n"
	"  -m mode        CDI specs: full (nodes, driver mounts, hooks; the "
	"default)\n"
	"                 or env (nodes and env: the node's runtime is "
	"NVIDIA's)\n"
	"  -H dir         where this plugin sees the host's / (a container's\n"
	"                 mount of it): -T, -D and -p default to under it, and\n"
	"                 specs name host paths as the host does\n"
	"  -T root        the driver root its files are found under (default /)\n"
	"  -p dir         the driver's proc directory (default /proc)\n"
	"  -X hook        nvidia-cdi-hook (default: looked for under the root)\n"
	"  -u uid         spec: the claim uid (default offline)\n"
	"  -M file        serving: Prometheus metrics written there every 10 s\n"
	"                 (calls, and the seconds of each phase)\n"
	"  -v             say the time of each phase of every call on stderr\n"
	"  -W             serving: no ResourceClaim watch cache, a GET per "
	"claim\n"
	"  --kubeconfig f, --context name   the API server (default: "
	"$KUBECONFIG,\n"
	"                 ~/.kube/config, or the in-cluster service account)\n"
	"  -h, -V         this help; the version\n";

static struct {
	const char *driver, *node, *kdir, *cdi_dir, *devdir, *redis, *gpus;
	const char *kubeconfig, *context;
	const char *ready;
	const char *hostroot, *root, *procroot, *hook, *uid, *metrics;
	double lockwait, every;
	int serve, spec, mode, any_node, verbose, no_cache;
	char **devices; /* spec's operands */
} O = {
	.driver = DRIVER,
	.kdir = "/var/lib/kubelet",
	.cdi_dir = "/var/run/cdi",
	.uid = "offline",
	.mode = CDI_FULL,
	.lockwait = 15,
	.every = 600,
};

static struct dra D;
static struct prom *M; /* the -M metrics */
static char *dra_sock, *reg_sock;
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

#define READY_EVERY 10 /* seconds between touches of the -R file */

/* What readiness needs, set by the threads that learn it (__atomic). */
static struct {
	int inventory;  /* a batch of gpu records was read */
	int stale;      /* the stream of gpu records ended */
	int registered; /* the kubelet's last word: registered */
} R;

static void
usage(void)
{
	fputs(usage_text, stderr);
	exit(HAZ_USAGE);
}

/* emit writes rec (taken) on stdout, one writer at a time. */
static void
emit(json_t *rec)
{
	pthread_mutex_lock(&out_mu);
	nd_write(rec);
	pthread_mutex_unlock(&out_mu);
	json_decref(rec);
}

static double
seconds(int opt, const char *s, double min)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min) || v > 1e9) {
		err_warn("-%c: not a number of seconds from %g: %s", opt, min,
			s);
		usage();
	}
	return v;
}

/* under_host_root: with -H, the driver root, /dev and /proc not named
 * otherwise are those under the host root. */
static void
under_host_root(void)
{
	static char dev[PATH_MAX], proc[PATH_MAX];
	const char *h = O.hostroot && strcmp(O.hostroot, "/") ? O.hostroot
							      : NULL;

	if (!O.root)
		O.root = h ? h : "/";
	if (!O.devdir) {
		snprintf(dev, sizeof dev, "%s/dev", h ? h : "");
		O.devdir = dev;
	}
	if (!O.procroot) {
		snprintf(proc, sizeof proc, "%s/proc", h ? h : "");
		O.procroot = proc;
	}
}

static void
parse(int argc, char **argv)
{
	static const struct option longs[] = {
		{"context", required_argument, NULL, 'c'},
		{"kubeconfig", required_argument, NULL, 'K'},
		{"help", no_argument, NULL, 'h'},
		{"driver-root", required_argument, NULL, 'T'},
		{"proc-root", required_argument, NULL, 'p'},
		{"cdi-mode", required_argument, NULL, 'm'},
		{"cdi-hook", required_argument, NULL, 'X'},
		{"host-root", required_argument, NULL, 'H'},
		{NULL, 0, NULL, 0},
	};
	static char host[HOST_NAME_MAX + 1];
	int c;

	while ((c = getopt_long(argc, argv,
			"d:N:k:C:D:r:g:L:E:R:m:H:T:p:X:u:M:vWhV", longs,
			NULL)) != -1) {
		switch (c) {
		case 'd': O.driver = optarg; break;
		case 'N': O.node = optarg; break;
		case 'k': O.kdir = optarg; break;
		case 'C': O.cdi_dir = optarg; break;
		case 'D': O.devdir = optarg; break;
		case 'r': O.redis = optarg; break;
		case 'g': O.gpus = optarg; break;
		case 'L': O.lockwait = seconds(c, optarg, 0); break;
		case 'E': O.every = seconds(c, optarg, 1); break;
		case 'R': O.ready = optarg; break;
		case 'H': O.hostroot = optarg; break;
		case 'T': O.root = optarg; break;
		case 'p': O.procroot = optarg; break;
		case 'X': O.hook = optarg; break;
		case 'u': O.uid = optarg; break;
		case 'M': O.metrics = optarg; break;
		case 'v': O.verbose = 1; break;
		case 'W': O.no_cache = 1; break;
		case 'm':
			if ((O.mode = cdi_mode_of(optarg)) < 0) {
				err_warn("-m: not full or env: %s", optarg);
				usage();
			}
			break;
		case 'c': O.context = optarg; break;
		case 'K': O.kubeconfig = optarg; break;
		case 'h':
			fputs(usage_text, stdout);
			fputs(help_text, stdout);
			exit(nd_finish(HAZ_OK));
		case 'V':
			puts("dra-plugin " HAZ_VERSION);
			exit(nd_finish(HAZ_OK));
		default: usage();
		}
	}
	under_host_root();
	if (optind < argc && strcmp(argv[optind], "spec") == 0) {
		O.spec = 1;
		O.devices = argv + optind + 1;
		if (optind + 1 == argc)
			usage();
		O.any_node = !O.node; /* the records are the node's */
	} else if (optind != argc - 1) {
		usage();
	} else if (strcmp(argv[optind], "serve") == 0) {
		O.serve = 1;
	} else if (strcmp(argv[optind], "-") != 0) {
		usage();
	}
	if (!O.serve && !O.gpus) {
		err_warn("%s: the gpu records must come from -g file",
			argv[optind]);
		usage();
	}
	if (!O.node)
		O.node = getenv("NODE_NAME");
	if (!O.node || !*O.node) {
		if (gethostname(host, sizeof host - 1) < 0)
			err_die(HAZ_FAIL, "hostname:");
		O.node = host;
	}
	if (!O.redis)
		O.redis = getenv("K8SHAZGPU_REDIS");
	if (O.redis && !*O.redis)
		O.redis = NULL;
}

/* -------------------------------------------------------------- readiness */

/* is_ready: inventory read and current, registration reported good. */
static int
is_ready(void)
{
	return __atomic_load_n(&R.inventory, __ATOMIC_SEQ_CST) &&
		!__atomic_load_n(&R.stale, __ATOMIC_SEQ_CST) &&
		__atomic_load_n(&R.registered, __ATOMIC_SEQ_CST);
}

/* touch_ready sets the -R file's time to now (made 0644 when missing)
 * when there is one and the plugin is ready; a failure is warned about,
 * the plugin serving on. Safe from any thread. */
static void
touch_ready(void)
{
	int fd;

	if (!O.ready || !is_ready())
		return;
	fd = open(O.ready,
		O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	if (fd < 0 || futimens(fd, NULL) < 0)
		err_warn("-R %s:", O.ready);
	if (fd >= 0)
		close(fd);
}

/* ------------------------------------------------------------ gpu records */

/* read_batch reads gpu records of this node up to a flush record or the
 * end of input into *batch (a new array). Returns 1 after a flush, 0 at
 * the end of input. Bad records are warned about and skipped. */
static int
read_batch(struct nd_reader *r, json_t **batch)
{
	char why[256];
	const char *kind, *node;
	json_t *rec;
	int rc;

	*batch = json_array();
	while ((rc = nd_read(r, &rec)) != 0) {
		if (rc < 0)
			continue;
		kind = json_string_value(json_object_get(rec, "kind"));
		node = json_string_value(json_object_get(rec, "node"));
		if (kind && strcmp(kind, "flush") == 0) {
			json_decref(rec);
			return 1;
		}
		if (!kind || strcmp(kind, "gpu") != 0) {
			nd_warn(r, "not a gpu record: kind %s",
				kind ? kind : "missing");
		} else if (!O.any_node &&
			(!node || strcmp(node, O.node) != 0)) {
			nd_warn(r, "a gpu record of node %s, not of %s",
				node ? node : "(none)", O.node);
		} else if (gobj_check(rec, O.driver, why, sizeof why) < 0) {
			nd_warn(r, "%s", why);
		} else {
			json_array_append(*batch, rec);
		}
		json_decref(rec);
	}
	return 0;
}

/* regular_input says whether the gpu records come from a regular file,
 * whose end is the whole inventory, not a probe gone. */
static int
regular_input(const struct nd_reader *r)
{
	struct stat st;

	return fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* follow keeps the device table current from the rest of the input;
 * at its end the last table stays. */
static void *
follow(void *arg)
{
	struct nd_reader *r = arg;
	json_t *batch;
	int more;

	do {
		more = read_batch(r, &batch);
		if (json_array_size(batch) > 0 || more) {
			dra_set_gpus(&D, batch);
			__atomic_store_n(&R.inventory, 1, __ATOMIC_SEQ_CST);
		}
		json_decref(batch);
	} while (more);
	if (!regular_input(r)) {
		__atomic_store_n(&R.stale, 1, __ATOMIC_SEQ_CST);
		if (O.ready)
			err_warn("%s: the gpu records ended; the device "
				 "inventory is no longer current",
				r->name);
	}
	nd_close(r);
	return NULL;
}

/* -------------------------------------------------------------- handlers */

/* phases returns t as the "phases" member of a call's record. */
static json_t *
phases(const struct dra_times *t)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:i, s:i}", "claim", t->claim_ms,
		"ledger", t->ledger_ms, "cdi", t->cdi_ms, "checkpoint",
		t->ckpt_ms, "cached", t->cached, "fetched", t->fetched);
}

/* account says how long a call of kind took, and where: on stderr with
 * -v, and in the metrics. */
static void
account(const char *kind, double total_ms, const struct dra_times *t)
{
	static const char *const names[] = {"claim", "ledger", "cdi",
		"checkpoint"};
	const double v[] = {t->claim_ms, t->ledger_ms, t->cdi_ms, t->ckpt_ms};
	char *l;
	size_t i;

	if (O.verbose)
		err_warn("%s: %.2f ms: claim %.2f (%d cached, %d read), ledger "
			 "%.2f, cdi %.2f, checkpoint %.2f",
			kind, total_ms, t->claim_ms, t->cached, t->fetched,
			t->ledger_ms, t->cdi_ms, t->ckpt_ms);
	l = prom_labels("call", kind, NULL);
	prom_observe(M, "k8shazgpu_dra_call_seconds", l, total_ms / 1e3);
	free(l);
	for (i = 0; i < 4; i++) {
		l = prom_labels("call", kind, "phase", names[i], NULL);
		prom_add(M, "k8shazgpu_dra_phase_seconds_total", l, v[i] / 1e3);
		free(l);
	}
	l = prom_labels("source", "cache", NULL);
	prom_add(M, "k8shazgpu_dra_claim_reads_total", l, t->cached);
	free(l);
	l = prom_labels("source", "api", NULL);
	prom_add(M, "k8shazgpu_dra_claim_reads_total", l, t->fetched);
	free(l);
}

/* claims_call decodes a prepare or unprepare request, has fn decide and
 * encodes the answer; the answer is also written as a record of kind,
 * with "ms", the milliseconds the decision took, and "phases", those of
 * each phase (struct dra_times). */
static int
claims_call(const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len,
	char **msg,
	json_t *(*fn)(struct dra *, const json_t *, struct dra_times *),
	uint8_t *(*encode)(const json_t *, size_t *), const char *kind,
	const char *message)
{
	struct dra_times t;
	char why[256];
	json_t *q = dpb_claims(req, len, why, sizeof why), *res;
	double t0, took;

	if (!q) {
		*msg = easprintf("%s: %s", message, why);
		return 3; /* INVALID_ARGUMENT */
	}
	t0 = clock_mono();
	res = fn(&D, q, &t);
	took = (clock_mono() - t0) * 1e3;
	json_decref(q);
	*resp = encode(res, resp_len);
	json_object_set_new(res, "kind", json_string(kind));
	json_object_set_new(res, "ms", json_real(took));
	json_object_set_new(res, "phases", phases(&t));
	account(kind, took, &t);
	emit(res);
	return 0;
}

/* write_metrics writes the -M file, as a new file renamed over it. */
static void
write_metrics(void)
{
	char *text, *tmp;
	size_t len;
	FILE *f;

	if (!O.metrics)
		return;
	text = prom_render(M, &len);
	tmp = easprintf("%s.tmp", O.metrics);
	if (!(f = fopen(tmp, "w")) || fwrite(text, 1, len, f) != len ||
		fclose(f) != 0 || rename(tmp, O.metrics) < 0) {
		err_warn("-M %s:", O.metrics);
		unlink(tmp);
	}
	free(tmp);
	free(text);
}

static int
on_prepare(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	(void)arg;
	return claims_call(req, len, resp, resp_len, msg, dra_prepare,
		dpb_prepare_response, "prepare", "NodePrepareResourcesRequest");
}

static int
on_unprepare(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	(void)arg;
	return claims_call(req, len, resp, resp_len, msg, dra_unprepare,
		dpb_unprepare_response, "unprepare",
		"NodeUnprepareResourcesRequest");
}

static int
on_get_info(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	static const char *const versions[] = {"v1.DRAPlugin",
		"v1beta1.DRAPlugin", NULL};

	(void)arg, (void)req, (void)len, (void)msg;
	*resp = dpb_plugin_info("DRAPlugin", O.driver, dra_sock, versions,
		resp_len);
	return 0;
}

static int
on_registration(void *arg, const uint8_t *req, size_t len, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	int registered;
	char *error = NULL;

	(void)arg;
	if (dpb_registration_status(req, len, &registered, &error) < 0) {
		*msg = estrdup("RegistrationStatus: not a valid message");
		return 3;
	}
	__atomic_store_n(&R.registered, registered != 0, __ATOMIC_SEQ_CST);
	if (!registered)
		err_warn("the kubelet did not register driver %s: %s", O.driver,
			error && *error ? error : "no reason given");
	else
		touch_ready();
	emit(json_pack("{s:s, s:b, s:s}", "kind", "registration", "registered",
		registered, "error", error ? error : ""));
	free(error);
	*resp = NULL;
	*resp_len = 0;
	if (registered)
		return 0;
	/* an error fails this attempt, and the kubelet tries again */
	*msg = estrdup("registration refused");
	return 9; /* FAILED_PRECONDITION */
}

static const struct grpc_method dra_methods[] = {
	{"/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
		on_prepare, NULL},
	{"/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources",
		on_unprepare, NULL},
	{"/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources",
		on_prepare, NULL},
	{"/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/"
	 "NodeUnprepareResources",
		on_unprepare, NULL},
	{NULL, NULL, NULL},
};

static const struct grpc_method reg_methods[] = {
	{"/pluginregistration.Registration/GetInfo", on_get_info, NULL},
	{"/pluginregistration.Registration/NotifyRegistrationStatus",
		on_registration, NULL},
	{NULL, NULL, NULL},
};

/* ------------------------------------------------------------------ main */

/* new_metrics declares the -M families. */
static void
new_metrics(void)
{
	static const double bounds[] = {0.001, 0.002, 0.003, 0.005, 0.01, 0.025,
		0.05, 0.1, 0.25, 1};

	M = prom_new();
	prom_histogram(M, "k8shazgpu_dra_call_seconds",
		"Seconds a NodePrepareResources or NodeUnprepareResources call "
		"took in the plugin.",
		bounds, sizeof bounds / sizeof *bounds);
	prom_counter(M, "k8shazgpu_dra_phase_seconds_total",
		"Seconds the calls spent in each phase: claim (the watch cache "
		"or a GET), ledger, cdi, checkpoint.");
	prom_counter(M, "k8shazgpu_dra_claim_reads_total",
		"ResourceClaims prepares read, from the watch cache or the API "
		"server.");
}

/* mkdirs makes path and its parents (mode 0750). */
static void
mkdirs(const char *path)
{
	char *p = estrdup(path), *s;

	for (s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0750) < 0 && errno != EEXIST)
			err_die(HAZ_FAIL, "%s:", p);
		*s = '/';
	}
	if (mkdir(p, 0750) < 0 && errno != EEXIST)
		err_die(HAZ_FAIL, "%s:", p);
	free(p);
}

/* records answers request records from stdin (- mode). */
static int
records(void)
{
	struct nd_reader r;
	const char *kind;
	json_t *rec, *res;
	int rc;

	if (nd_open(&r, NULL, 0) < 0)
		return HAZ_FAIL;
	while ((rc = nd_read(&r, &rec)) != 0) {
		if (rc < 0)
			continue;
		kind = json_string_value(json_object_get(rec, "kind"));
		if (kind && strcmp(kind, "reconcile") == 0) {
			emit(dra_reconcile(&D));
		} else if (kind &&
			(strcmp(kind, "prepare") == 0 ||
				strcmp(kind, "unprepare") == 0) &&
			json_is_array(json_object_get(rec, "claims"))) {
			struct dra_times t;
			double t0 = clock_mono();

			res = kind[0] == 'p' ? dra_prepare(&D, rec, &t)
					     : dra_unprepare(&D, rec, &t);
			account(kind, (clock_mono() - t0) * 1e3, &t);
			json_object_set_new(res, "kind", json_string(kind));
			emit(res);
		} else {
			nd_warn(&r,
				"not a request: want kind prepare or "
				"unprepare with claims, or reconcile");
		}
		json_decref(rec);
	}
	rc = r.failed ? HAZ_FAIL : HAZ_OK;
	nd_close(&r);
	return rc;
}

/* read_all sets the device table from the last batch of gr's records.
 * Returns HAZ_OK, or HAZ_FAIL when a record was bad. */
static int
read_all(struct nd_reader *gr)
{
	json_t *batch;
	int more;

	do { /* the last batch is the node's */
		more = read_batch(gr, &batch);
		if (more || json_array_size(batch) > 0)
			dra_set_gpus(&D, batch);
		json_decref(batch);
	} while (more);
	return gr->failed ? HAZ_FAIL : HAZ_OK;
}

/* spec prints the CDI spec of one claim (request "gpus") of the devices
 * named by the operands, each a comma-separated list. */
static int
spec(void)
{
	struct nd_reader gr;
	json_t *names = json_array(), *out;
	char **a, *list, *save, *t, *why = NULL, *text;
	int status;

	if (nd_open(&gr, O.gpus, 0) < 0)
		return HAZ_FAIL;
	status = read_all(&gr);
	nd_close(&gr);
	for (a = O.devices; *a; a++) {
		list = estrdup(*a);
		for (save = NULL, t = strtok_r(list, ",", &save); t;
			t = strtok_r(NULL, ",", &save))
			json_array_append_new(names, json_string(t));
		free(list);
	}
	if (json_array_size(names) == 0)
		usage();
	out = dra_spec(&D, O.uid, "offline", "spec", "gpus", names, &why);
	json_decref(names);
	if (!out) {
		err_warn("spec: %s", why);
		free(why);
		return HAZ_FAIL;
	}
	text = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(out);
	if (!text)
		err_die(HAZ_FAIL, "out of memory");
	puts(text);
	free(text);
	return status;
}

/* serve registers and serves until SIGTERM or SIGINT. */
static int
serve(struct nd_reader *gr)
{
	struct grpc_server *dra_srv, *reg_srv;
	struct timespec wait;
	double next_reconcile, left;
	pthread_t reader;
	sigset_t set;
	char why[512], *dir, *kdir;
	int fd, sig;

	dir = easprintf("%s/plugins_registry", O.kdir);
	mkdirs(dir);
	free(dir);
	/* the endpoint GetInfo names is dialled by the kubelet: absolute */
	if (!(kdir = realpath(O.kdir, NULL)))
		err_die(HAZ_FAIL, "%s:", O.kdir);
	reg_sock = easprintf("%s/plugins_registry/%s-reg.sock", kdir, O.driver);
	dra_sock = easprintf("%s/plugins/%s/dra.sock", kdir, O.driver);
	free(kdir);

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* every thread inherits it */
	if (pthread_create(&reader, NULL, follow, gr) != 0)
		err_die(HAZ_FAIL, "reading gpu records:");
	pthread_detach(reader);

	if ((fd = grpc_listen(dra_sock, why, sizeof why)) < 0)
		err_die(HAZ_FAIL, "%s", why);
	dra_srv = grpc_start(fd, dra_methods, "dra");
	/* registered last: the kubelet dials the endpoint GetInfo names */
	if ((fd = grpc_listen(reg_sock, why, sizeof why)) < 0)
		err_die(HAZ_FAIL, "%s", why);
	reg_srv = grpc_start(fd, reg_methods, "registration");
	err_warn("serving driver %s for node %s on %s", O.driver, O.node,
		dra_sock);

	/* a reconcile every -E seconds, the ready file every READY_EVERY */
	next_reconcile = clock_mono() + O.every;
	for (;;) {
		left = next_reconcile - clock_mono();
		left = left < 0 ? 0 : left < READY_EVERY ? left : READY_EVERY;
		wait.tv_sec = (time_t)left;
		wait.tv_nsec = (long)((left - (double)wait.tv_sec) * 1e9);
		sig = sigtimedwait(&set, NULL, &wait);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (sig >= 0 || errno != EAGAIN)
			continue;
		if (clock_mono() >= next_reconcile) {
			emit(dra_reconcile(&D));
			next_reconcile = clock_mono() + O.every;
		}
		touch_ready();
		write_metrics();
	}
	/* the registration socket first: the kubelet sees the plugin go */
	grpc_stop(reg_srv);
	unlink(reg_sock);
	grpc_stop(dra_srv);
	unlink(dra_sock);
	err_warn("stopped by signal %d; sockets removed", sig);
	free(reg_sock);
	free(dra_sock);
	return HAZ_OK;
}

int
main(int argc, char **argv)
{
	struct kc_config cfg;
	/* static: the reader thread may still wait on it at exit */
	static struct nd_reader gr;
	struct rd rd;
	struct lg lg;
	json_t *batch;
	char why[512], *dir, *rwhy = NULL;
	const char *pass;
	int status, more;

	err_init(argv[0]);
	/* jansson draws its hash seed here, before any thread starts */
	json_object_seed(0);
	parse(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	dra_init(&D);
	D.driver = O.driver;
	D.node = O.node;
	D.cdi.hostroot = O.hostroot;
	D.cdi.devdir = O.devdir;
	D.cdi.procroot = O.procroot;
	D.cdi.root = O.root;
	D.cdi.hook = O.hook;
	D.cdi.mode = (enum cdi_mode)O.mode;
	if (O.spec) {
		status = spec();
		dra_free(&D);
		return nd_finish(status);
	}
	if (kc_load(&cfg, O.kubeconfig, O.context) < 0)
		return nd_finish(HAZ_FAIL);
	new_metrics();
	D.cdi_dir = O.cdi_dir;
	D.cfg = &cfg;
	D.k = kube_new(&cfg);
	kube_set_timeout(D.k, 10000);
	if (O.redis) {
		pass = getenv("K8SHAZGPU_REDIS_PASSWORD");
		memset(&rd, 0, sizeof rd);
		rd.soft = 1;
		if (rd_try_connect(&rd, O.redis, 0, pass && *pass ? pass : NULL,
			    5, &rwhy) != 0) {
			err_warn("%s; claims fail until it answers", rwhy);
			free(rwhy);
		}
		lg_init(&lg, &rd, O.lockwait);
		D.lg = &lg;
	}
	dir = easprintf("%s/plugins/%s", O.kdir, O.driver);
	mkdirs(dir);
	D.ckpt_path = easprintf("%s/checkpoint.json", dir);
	free(dir);
	mkdirs(O.cdi_dir);
	if (dra_load(&D, why, sizeof why) < 0)
		err_die(HAZ_FAIL, "%s", why);

	if (nd_open(&gr, O.gpus, 0) < 0)
		return nd_finish(HAZ_FAIL);
	if (O.serve) {
		if (!O.no_cache &&
			!(D.cache = rc_start(O.kubeconfig, O.context,
				  O.verbose)))
			return nd_finish(HAZ_FAIL);
		/* the first, before registering */
		more = read_batch(&gr, &batch);
		dra_set_gpus(&D, batch);
		if (more || json_array_size(batch) > 0)
			R.inventory = 1;
		json_decref(batch);
		emit(dra_reconcile(&D));
		status = serve(&gr);
		/* the reader may still block on its input: not closed */
	} else {
		status = read_all(&gr);
		nd_close(&gr);
		if (status == HAZ_OK)
			status = records();
	}
	rc_stop(D.cache);
	if (O.redis)
		rd_close(&rd);
	prom_free(M);
	free((char *)D.ckpt_path);
	dra_free(&D);
	kube_free(D.k);
	kc_free(&cfg);
	return nd_finish(status);
}
