/* gpu-alert: post GPU health transitions to a Slack or Teams webhook.
 *
 *   gpu-alert [-nv] [-s [namespace/]secret] [-k key] [-u file]
 *             [-f slack|teams|auto] [-r per-minute] [-R tries]
 *             [-t seconds] [-T celsius] [--context name]
 *             [--kubeconfig file] [-S [namespace/]configmap] [file...]
 *   gpu-alert -1 [-nv] [-s ...] [-k key] [-u file] [-f format] [-R tries]
 *             [-t seconds] [--context name] [--kubeconfig file]
 *
 * Reads Node watch events (claim-watch nodes) or gpu records (gpu-probe)
 * and tracks each device (node + uuid): unhealthy, recovered,
 * temperature (temp_c reaching -T, default 85 as gpu-probe's temp_warn;
 * again only after it fell 5 below) and ecc (ecc_errors increased)
 * alerts; the first sight of a device raises none unless it is already
 * unhealthy (see alert_track.h). The same alert of a device is not sent
 * again within 10 minutes unless it recovered in between; at most -r a
 * minute are sent (default 20), the rest dropped and counted.
 *
 * Each alert is posted as JSON (see alert_fmt.h) to the URL in key -k
 * (default webhook-url) of Secret -s (default $POD_NAMESPACE/
 * alert-webhook, else canhazgpu-system/alert-webhook), read through the
 * API server when an alert is to be sent and kept 60 s; or, with -u, the
 * URL in a file, for hosts without a cluster. Posting happens in a
 * thread of its own behind a bounded queue, so reading never waits for
 * the webhook: no answer, 429 and 5xx are tried again (see
 * alert_send.h) -R times in all (default 4), each post bounded by -t
 * seconds (default 10). The URL is a secret and is never printed.
 *
 * With -S, the health told of each device (sent, or dropped after its
 * tries) is kept in a ConfigMap (see alert_state.h) read at start, so a
 * restart does not tell again of a device still unhealthy, while one
 * that turned unhealthy, or recovered, meanwhile is told.
 *
 * stdout: one record per alert, when its fate is known:
 *   {"kind":"alert","node","device","event","sent":true|false,"tries":N}
 * -n formats and prints each alert's message ("format", "body") and
 * posts nothing. -1 posts one test message and exits.
 *
 * EXIT STATUS: 0 at the end of the input, every alert delivered (or held
 * back by the rate limit or deduplication); 1 when a record was bad or an
 * alert was not delivered, or the kubeconfig is unusable; 2 on bad usage.
 * With -1: 0 delivered, 1 refused or no URL, 75 no answer after the
 * tries. */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alert.h"
#include "alert_fmt.h"
#include "alert_in.h"
#include "alert_send.h"
#include "alert_state.h"
#include "alert_track.h"
#include "alert_url.h"
#include "err.h"
#include "kube.h"
#include "kubeconfig.h"
#include "nd.h"
#include "opt.h"

/* An alert of a device is not sent again within this window unless the
 * device recovered in between. */
#define DEDUP_WINDOW 600.0
/* How long a URL read from the Secret is used before it is read again. */
#define SECRET_TTL 60.0
#define QUEUE_MAX 64

struct opts {
	char *ns, *secret;
	char *state_ns, *state; /* NULL: no state kept */
	const char *key, *url_file;
	const char *context, *kubeconfig;
	double threshold;
	int test, verbose;
	struct as_opts send;
};

static const char usage_text[] =
	"usage: gpu-alert [-nv] [-s [namespace/]secret] [-k key] [-u file]\n"
	"                 [-f slack|teams|auto] [-r per-minute] [-R tries]\n"
	"                 [-t seconds] [-T celsius] [--context name]\n"
	"                 [--kubeconfig file] [-S [namespace/]configmap]\n"
	"                 [file...]\n"
	"       gpu-alert -1 [-nv] [-s [namespace/]secret] [-k key] [-u file]\n"
	"                 [-f slack|teams|auto] [-R tries] [-t seconds]\n"
	"                 [--context name] [--kubeconfig file]\n";

static const char help_text[] =
	"Post GPU health transitions read from Node watch events or gpu\n"
	"records to a Slack or Teams webhook.\n"
	"\n"
	"  -1              post one test message, then exit\n"
	"  -s ns/secret    Secret holding the URL (default\n"
	"                  $POD_NAMESPACE/alert-webhook, else\n"
	"                  canhazgpu-system/alert-webhook)\n"
	"  -k key          its key (default webhook-url)\n"
	"  -u file         read the URL from file instead (no cluster)\n"
	"  -S, --state ns/configmap\n"
	"                  keep what was told of each device's health there,\n"
	"                  so a restart does not tell it again\n"
	"  -f format       slack, teams or auto (default: by the URL's host)\n"
	"  -r per-minute   alerts sent a minute at most (default 20)\n"
	"  -R tries        posts of one alert at most (default 4)\n"
	"  -t seconds      time one post may take (default 10)\n"
	"  -T celsius      temperature alert threshold (default 85)\n"
	"  -n              print each message instead of posting it\n"
	"  -v              say each try and each alert held back on stderr\n" OPT_KUBE_HELP;

/* object_name splits option c's [namespace/]name into *ns and *name. */
static void
object_name(int c, const char *s, char **ns, char **name)
{
	const char *slash = strchr(s, '/');
	const char *pod_ns = getenv("POD_NAMESPACE");

	free(*ns);
	free(*name);
	if (!pod_ns || !*pod_ns)
		pod_ns = "canhazgpu-system";
	*ns = slash ? strndup(s, (size_t)(slash - s)) : estrdup(pod_ns);
	*name = estrdup(slash ? slash + 1 : s);
	if (!*ns || !**ns || !**name || strchr(*name, '/')) {
		err_warn("-%c: not [namespace/]name: %s", c, s);
		opt_usage(usage_text);
	}
}

static void
parse(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		OPT_KUBE_LONGS,
		{"state", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c, secret_given = 0, rate_given = 0;

	*o = (struct opts){.key = "webhook-url",
		.threshold = 85,
		.send = {.tries = 4,
			.timeout = 10,
			.format = AF_AUTO,
			.per_minute = 20,
			.queue = QUEUE_MAX}};
	object_name('s', "alert-webhook", &o->ns, &o->secret);
	while ((c = getopt_long(argc, argv, "1s:S:k:u:f:r:R:t:T:nvhV", longs,
			NULL)) != -1) {
		switch (c) {
		case '1': o->test = 1; break;
		case 's':
			object_name(c, optarg, &o->ns, &o->secret);
			secret_given = 1;
			break;
		case 'S':
			object_name(c, optarg, &o->state_ns, &o->state);
			break;
		case 'k': o->key = optarg; break;
		case 'u': o->url_file = optarg; break;
		case 'f':
			if (af_parse(optarg, &o->send.format) < 0) {
				err_warn("-f: not slack, teams or auto: %s",
					optarg);
				opt_usage(usage_text);
			}
			break;
		case 'r':
			o->send.per_minute = (long)opt_number(c, optarg, 1,
				100000, OPT_WHOLE, usage_text);
			rate_given = 1;
			break;
		case 'R':
			o->send.tries = (int)opt_number(c, optarg, 1, 100,
				OPT_WHOLE, usage_text);
			break;
		case 't':
			o->send.timeout = opt_number(c, optarg, 0.001, 3600, 0,
				usage_text);
			break;
		case 'T':
			o->threshold = opt_number(c, optarg, 0, 1000, 0,
				usage_text);
			break;
		case 'n': o->send.dry_run = 1; break;
		case 'v': o->verbose = o->send.verbose = 1; break;
		case OPT_CONTEXT: o->context = optarg; break;
		case OPT_KUBECONFIG: o->kubeconfig = optarg; break;
		case 'h':
			fputs(usage_text, stdout);
			fputs(help_text, stdout);
			exit(nd_finish(HAZ_OK));
		case 'V':
			puts("gpu-alert " HAZ_VERSION);
			exit(nd_finish(HAZ_OK));
		default: opt_usage(usage_text);
		}
	}
	if (o->url_file &&
		(secret_given || strcmp(o->key, "webhook-url") || o->context ||
			o->kubeconfig)) {
		err_warn("-u excludes -s, -k, --context and --kubeconfig");
		opt_usage(usage_text);
	}
	if (o->test && (optind < argc || rate_given)) {
		err_warn("-1 takes no file and no -r");
		opt_usage(usage_text);
	}
	if (o->state && (o->url_file || o->test)) {
		err_warn("-S excludes -u and -1");
		opt_usage(usage_text);
	}
}

struct reader {
	struct alert_in in;
	struct alert_sender *s;
	int verbose;
};

/* emit sends what the tracker raised, or mentions what it held back. */
static void
emit(struct alert *a, int suppressed, void *arg)
{
	struct reader *rd = arg;

	if (!suppressed) {
		as_submit(rd->s, a);
		return;
	}
	if (rd->verbose)
		err_warn("node %s device %s: %s alert held back: sent within "
			 "the last %g minutes",
			a->node, a->uuid, alert_event_name(a->event),
			DEDUP_WINDOW / 60);
	alert_free(a);
}

/* noted keeps the fate of each alert tried in the state ConfigMap. */
static void
noted(const struct alert *a, int sent, void *arg)
{
	(void)sent;
	ast_note(arg, a);
}

/* input reads one input's records, each of a Node event's object but
 * its name and devices annotation left unread (ai_skip). */
static int
input(struct nd_reader *r, void *arg)
{
	struct reader *rd = arg;
	json_t *rec;
	int got, bad = 0;

	if (!r)
		return 1;
	while ((got = nd_read_skip(r, &rec, ai_skip, NULL)) != 0) {
		if (got > 0 && ai_record(&rd->in, r, rec, alert_now()) < 0)
			bad = 1;
		json_decref(rec);
	}
	return bad;
}

int
main(int argc, char **argv)
{
	struct kc_config cfg;
	struct kube *k = NULL;
	struct alert_url *u;
	struct alert_sender *s;
	struct alert_state *st = NULL;
	struct reader rd = {0};
	struct opts o;
	int status = HAZ_OK, sent;
	char host[256];

	err_init(argv[0]);
	/* jansson draws its hash seed here, before any thread starts */
	json_object_seed(0);
	parse(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	if (o.url_file)
		u = au_file(o.url_file);
	else {
		if (kc_load(&cfg, o.kubeconfig, o.context) < 0)
			return nd_finish(HAZ_FAIL);
		k = kube_new(&cfg);
		kube_set_timeout(k, (long)(o.send.timeout * 1000));
		u = au_secret(k, o.ns, o.secret, o.key, SECRET_TTL);
	}
	if (o.state) {
		st = ast_open(k, o.state_ns, o.state);
		o.send.done = noted;
		o.send.done_arg = st;
	}
	s = as_start(u, &o.send);
	if (o.test) {
		const char *node = getenv("NODE_NAME");
		struct alert_dev d = {.node = node,
			.index = -1,
			.health = -1,
			.temp_c = NAN,
			.ecc = -1};

		if ((!node || !*node) && gethostname(host, sizeof host) == 0) {
			host[sizeof host - 1] = '\0';
			d.node = host;
		}
		as_submit(s, alert_new(ALERT_TEST, &d, alert_now()));
	} else {
		rd.verbose = o.verbose;
		rd.s = s;
		rd.in = (struct alert_in){at_new(o.threshold, DEDUP_WINDOW),
			emit, &rd, 0, NULL};
		if (st)
			ast_seed(st, rd.in.t);
		status = nd_each_input(argc - optind, argv + optind, 0, input,
			&rd);
		ai_free(&rd.in);
		at_free(rd.in.t);
	}
	sent = as_finish(s);
	if (o.test)
		status = sent;
	else if (sent != HAZ_OK)
		status = HAZ_FAIL;
	au_free(u);
	ast_free(st);
	if (k) {
		kube_free(k);
		kc_free(&cfg);
	}
	free(o.ns);
	free(o.secret);
	free(o.state_ns);
	free(o.state);
	return nd_finish(status);
}
