/* webhook-patch: admission decisions for GPU pods: MIG-size fallback,
 * RuntimeClass limits and our scheduler for strategy-annotated pods,
 * answered as AdmissionReview responses.
 *
 *   webhook-patch [-Pv] [-f chains] [-i inventory] [-R class] [-S name]
 *                 [-l addr:port -c cert -k key [-N name]... [-t threads]]
 *                 [--context name] [--kubeconfig file] [file...]
 *   webhook-patch -D [-f chains]
 *
 * Without -l it is a filter: each line of the files (or stdin) is an
 * AdmissionReview request (admission.k8s.io/v1), and one response line is
 * written for it, always, even for a line that is no review at all (then
 * the response refuses with code 400 and says what is wrong, and the
 * exit status becomes 1). With -l it serves HTTPS on addr:port:
 *   POST /mutate (or /)  one review; 200, or 400 for an unusable review,
 *                        413 for a body over 8 MiB
 *   GET /healthz         200 "ok" while the process serves
 *   GET /readyz          200 once the inventory is synced and the
 *                        certificate is good, else 503 with the reason
 *   GET /metrics         Prometheus text: reviews by outcome, fallbacks
 *                        by from/to, denials by limit, review latency,
 *                        connections accepted
 * The certificate and key files are read again when they change (checked
 * every second, or at once on SIGHUP) without dropping a request; SIGTERM
 * or SIGINT stops accepting, lets requests in flight finish (up to 25 s)
 * and exits 0. The certificate is checked (x509(3)) at start, after each
 * reload and once a minute: one that is expired, not yet valid, or does
 * not name each -N name is logged once ("webhook-patch: tls.crt:
 * certificate expired at ...") and makes /readyz 503 with that reason;
 * /healthz stays 200 and reviews are still answered (the API server
 * decides whether to trust it; failurePolicy Ignore keeps pods coming).
 *
 * The policy is mutate(3): RuntimeClass limits (filled in, refused, or
 * held Pending by a scheduling gate with -P; -R sets a default class on
 * GPU pods naming none), then MIG fallback along the chains of -f (or the
 * built-in ones, migchain(3)); and a pod annotated with
 * agentaflow.gpu/scheduling-strategy or agentaflow.gpu/priority, left to
 * the default scheduler, is handed to ours (-S, else
 * $K8SHAZGPU_SCHEDULER_NAME, else k8shazgpu), unless an annotation is
 * malformed (then a warning). What is free comes from inventory records
 * (-i, offline; avail(3) describes them) or else from a list+watch of
 * nodes, pods and runtimeclasses kept in the background (informer(3)).
 * -D prints the chains in effect as JSON and exits.
 *
 * EXIT STATUS: 0 done; 1 a line was no usable review, or the inventory,
 * chains or certificates could not be used; 2 usage. */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admission.h"
#include "avail.h"
#include "clock.h"
#include "err.h"
#include "httpd.h"
#include "informer.h"
#include "kname.h"
#include "migchain.h"
#include "mutate.h"
#include "nd.h"
#include "ndline.h"
#include "prom.h"
#include "x509.h"

#define MAX_BODY (8 << 20)
#define GRACE 25.0
#define MAX_NAMES 64
#define CERT_RECHECK 60.0 /* seconds between checks of the validity */

struct ctx {
	struct mutate_opts mo;
	const char *chains_file, *inventory, *listen, *cert, *key;
	const char *context, *kubeconfig;
	unsigned threads;
	int dump, verbose;
	struct migchain *chains;
	struct avail *a;
	struct informer *in;
	struct prom *prom;
	struct httpd *h; /* set once serving (atomic: handlers may run first) */
	const char *names[MAX_NAMES + 1]; /* -N, NULL-terminated */
	int nnames;
	char *cert_pem;      /* the certificate served, as last loaded */
	double cert_checked; /* when it was last checked (clock_mono()) */
	time_t cert_due;     /* when it starts or ends being valid, or 0 */
	pthread_mutex_t cert_lock;
	char cert_bad[640]; /* under cert_lock: why it is bad, or "" */
};

static const char usage_text[] =
	"usage: webhook-patch [-Pv] [-f chains] [-i inventory] [-R class] [-S name]\n"
	"                     [-l addr:port -c cert -k key [-N name]... [-t threads]]\n"
	"                     [--context name] [--kubeconfig file] [file...]\n"
	"       webhook-patch -D [-f chains]\n";

static const char help_text[] =
	"Answer AdmissionReviews: MIG-size fallback, RuntimeClass limits, and\n"
	"our scheduler for pods annotated with a strategy or a priority.\n"
	"\n"
	"  -f file         fallback chains and settings (YAML or JSON)\n"
	"  -i file         inventory records instead of watching the cluster\n"
	"  -R class        runtimeClassName for GPU pods that name none\n"
	"  -P              hold pods over their RuntimeClass limits Pending\n"
	"                  (scheduling gate) instead of refusing them\n"
	"  -S name         our scheduler's name (default\n"
	"                  $K8SHAZGPU_SCHEDULER_NAME, else k8shazgpu)\n"
	"  -l addr:port    serve HTTPS there instead of reading reviews\n"
	"  -c file, -k file  serving certificate and key (PEM)\n"
	"  -N name         a name the certificate must hold (repeatable;\n"
	"                  /readyz answers 503 while it does not)\n"
	"  -t threads      serving threads (default 4)\n"
	"  -v              log each decision that changes or refuses a pod\n"
	"  -D              print the chains in effect as JSON and exit\n"
	"  --context name  kubeconfig context\n"
	"  --kubeconfig f  kubeconfig file\n"
	"  -h, -V          this help; the version\n";

static void
usage(void)
{
	fputs(usage_text, stderr);
	exit(HAZ_USAGE);
}

/* ---- decisions --------------------------------------------------------- */

static const char *const outcome_names[] = {
	[ADM_ALLOWED] = "allowed",
	[ADM_PATCHED] = "patched",
	[ADM_DENIED] = "denied",
	[ADM_INVALID] = "invalid",
};

/* log_note says what a decision did, with -v, naming the object by the
 * request's name, else its own, else its generateName and "*". */
static void
log_note(const struct adm_request *r, const struct adm_verdict *v,
	const struct mutate_note *n)
{
	const json_t *md = json_object_get(r->object, "metadata");
	const char *name = r->name, *star = "";
	int i;

	if (!*name && !(name = json_string_value(json_object_get(md, "name"))))
		name = "";
	if (!*name) {
		name = json_string_value(json_object_get(md, "generateName"));
		name = name ? name : "";
		star = "*";
	}
	for (i = 0; i < n->nfallback; i++)
		err_warn("%s %s/%s%s: fallback %s->%s", r->kind, r->namespace,
			name, star, n->from[i], n->to[i]);
	if (n->scheduler)
		err_warn("%s %s/%s%s: scheduler %s", r->kind, r->namespace,
			name, star, n->scheduler);
	if (n->limit)
		err_warn("%s %s/%s%s: %s: %s", r->kind, r->namespace, name,
			star, n->gated ? "held" : "refused",
			v->message ? v->message : n->limit);
}

/* decide runs the policy and counts what it did. */
static void
decide(const struct adm_request *r, struct adm_verdict *v, void *arg)
{
	struct ctx *c = arg;
	struct mutate_note n;
	char *labels;
	int i;

	mutate_decide(&c->mo, c->a, r, v, &n);
	for (i = 0; c->prom && i < n.nfallback; i++) {
		/* values from pods and RuntimeClasses: escaped */
		labels = prom_labels("from", n.from[i], "to", n.to[i],
			(char *)NULL);
		prom_add(c->prom, "k8shazgpu_webhook_fallbacks_total", labels,
			1);
		free(labels);
	}
	if (c->prom && n.limit) {
		labels = prom_labels("limit", n.limit, "action",
			n.gated ? "gate" : "deny", (char *)NULL);
		prom_add(c->prom, "k8shazgpu_webhook_denials_total", labels, 1);
		free(labels);
	}
	if (c->verbose)
		log_note(r, v, &n);
}

/* ---- stdin mode -------------------------------------------------------- */

/* answer_line answers the review on one line (the reader has warned of
 * a blank one, got < 0), as serving answers a request body. */
static json_t *
answer_line(struct ctx *c, struct nd_reader *r, const char *line, size_t n,
	int got)
{
	char err[512];
	enum adm_outcome out;
	json_t *resp;

	if (got < 0 && r->toolong) /* warned, not held whole */
		return adm_invalid("",
			"request body larger than 8388608 bytes");
	if (got < 0)
		return adm_invalid("", "empty request");
	resp = adm_answer(line, n, decide, c, &out, err, sizeof err);
	if (out == ADM_INVALID)
		nd_warn(r, "invalid AdmissionReview: %s", err);
	return resp;
}

/* answer_input answers each review of r, bounded as over HTTPS. */
static int
answer_input(struct nd_reader *r, void *arg)
{
	json_t *resp;
	char *line;
	size_t n;
	int got;

	if (!r)
		return 0;
	r->max = MAX_BODY;
	while ((got = ndl_read(r, &line, &n)) != 0) {
		resp = answer_line(arg, r, line, n, got);
		nd_write(resp);
		json_decref(resp);
	}
	return 0;
}

/* ---- serving ----------------------------------------------------------- */

static void
reply_text(struct httpd_reply *p, int status, const char *text)
{
	p->status = status;
	p->content_type = "text/plain; charset=utf-8";
	p->body = estrdup(text);
	p->len = strlen(text);
}

/* metrics refreshes the gauges and renders everything. */
static void
metrics(struct ctx *c, struct httpd_reply *p)
{
	json_t *st = avail_stats(c->a), *v;
	struct httpd *h = __atomic_load_n(&c->h, __ATOMIC_ACQUIRE);
	const char *res;
	char *labels;

	if (h)
		prom_set(c->prom, "k8shazgpu_webhook_connections_total", NULL,
			(double)httpd_connections(h));
	prom_set(c->prom, "k8shazgpu_webhook_inventory_synced", NULL,
		avail_synced(c->a) == AVAIL_ALL);
	json_object_foreach(json_object_get(st, "free"), res, v) {
		labels = prom_labels("resource", res, (char *)NULL);
		prom_set(c->prom, "k8shazgpu_webhook_free", labels,
			(double)json_integer_value(v));
		prom_set(c->prom, "k8shazgpu_webhook_pending", labels,
			(double)json_integer_value(
				json_object_get(json_object_get(st, "pending"),
					res)));
		free(labels);
	}
	json_decref(st);
	p->content_type = "text/plain; version=0.0.4; charset=utf-8";
	p->body = prom_render(c->prom, &p->len);
}

static void
review(struct ctx *c, const struct httpd_req *q, struct httpd_reply *p)
{
	double t0 = clock_mono();
	enum adm_outcome out = ADM_INVALID;
	char err[512], labels[64];
	json_t *resp;

	if (q->too_large) {
		snprintf(err, sizeof err, "request body larger than %d bytes",
			MAX_BODY);
		resp = adm_invalid("", err);
	} else {
		resp = adm_answer(q->body, q->len, decide, c, &out, err,
			sizeof err);
	}
	if (out == ADM_INVALID)
		err_warn("invalid AdmissionReview: %s", err);
	p->status = q->too_large ? 413 : out == ADM_INVALID ? 400 : 200;
	p->body = json_dumps(resp, JSON_COMPACT);
	p->len = strlen(p->body);
	json_decref(resp);
	snprintf(labels, sizeof labels, "outcome=\"%s\"", outcome_names[out]);
	prom_add(c->prom, "k8shazgpu_webhook_reviews_total", labels, 1);
	prom_observe(c->prom, "k8shazgpu_webhook_review_seconds", NULL,
		clock_mono() - t0);
}

static void
handle(const struct httpd_req *q, struct httpd_reply *p, void *arg)
{
	struct ctx *c = arg;
	int post = !strcmp(q->method, "POST");
	char why[sizeof c->cert_bad + 1];

	if (!strcmp(q->path, "/mutate") || !strcmp(q->path, "/")) {
		if (post)
			review(c, q, p);
		else
			reply_text(p, 405, "use POST\n");
	} else if (post) {
		reply_text(p, 404, "not found\n");
	} else if (!strcmp(q->path, "/healthz")) {
		reply_text(p, 200, "ok\n");
	} else if (!strcmp(q->path, "/readyz")) {
		pthread_mutex_lock(&c->cert_lock);
		snprintf(why, sizeof why, "%s\n", c->cert_bad);
		pthread_mutex_unlock(&c->cert_lock);
		if (why[1])
			reply_text(p, 503, why);
		else if (avail_synced(c->a) == AVAIL_ALL)
			reply_text(p, 200, "ok\n");
		else
			reply_text(p, 503, "inventory not synced\n");
	} else if (!strcmp(q->path, "/metrics")) {
		metrics(c, p);
	} else {
		reply_text(p, 404, "not found\n");
	}
}

static void
declare_metrics(struct prom *p)
{
	static const double bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.002,
		0.005, 0.01, 0.025, 0.1, 0.5};
	size_t i;
	char labels[32];

	prom_counter(p, "k8shazgpu_webhook_reviews_total",
		"AdmissionReviews answered, by outcome.");
	for (i = 0; i < 4; i++) {
		snprintf(labels, sizeof labels, "outcome=\"%s\"",
			outcome_names[i]);
		prom_add(p, "k8shazgpu_webhook_reviews_total", labels, 0);
	}
	prom_counter(p, "k8shazgpu_webhook_fallbacks_total",
		"MIG requests moved to a smaller profile, by from and to.");
	prom_counter(p, "k8shazgpu_webhook_denials_total",
		"Pods over their RuntimeClass limits, by limit and action.");
	prom_histogram(p, "k8shazgpu_webhook_review_seconds",
		"Time to answer one review.", bounds,
		sizeof bounds / sizeof *bounds);
	prom_counter(p, "k8shazgpu_webhook_connections_total",
		"HTTPS connections accepted (few when clients keep them alive).");
	prom_gauge(p, "k8shazgpu_webhook_inventory_synced",
		"1 once nodes, pods and runtimeclasses have been listed.");
	prom_gauge(p, "k8shazgpu_webhook_free",
		"MIG devices free in the cluster after waiting demand.");
	prom_gauge(p, "k8shazgpu_webhook_pending",
		"MIG devices admitted and not yet seen in the watch.");
}

/* check_cert checks the certificate served: when reload, it is read
 * again from c->cert first (as httpd has just loaded it), else the text
 * last read is checked again. A bad one is logged when reload, or when
 * its reason is new, and makes /readyz 503 with that reason. The next
 * check is due in a minute, or when it starts or ends being valid if
 * that comes first (c->cert_due). */
static void
check_cert(struct ctx *c, int reload)
{
	char err[512], bad[sizeof c->cert_bad];
	struct x509_info i;
	char *pem;
	int changed;
	time_t t;

	if (reload) {
		if (!(pem = x509_load(c->cert, err, sizeof err))) {
			err_warn("%s", err);
			return; /* the pair in use was just loaded: keep on */
		}
		free(c->cert_pem);
		c->cert_pem = pem;
	}
	c->cert_checked = clock_mono();
	c->cert_due = 0;
	if (c->cert_pem && x509_info(c->cert_pem, &i, err, sizeof err) == 0) {
		t = time(NULL);
		c->cert_due = i.not_before > t ? i.not_before
			: i.not_after > t      ? i.not_after
					       : 0;
		x509_info_free(&i);
	}
	bad[0] = '\0';
	if (c->cert_pem &&
		x509_check(c->cert_pem, c->nnames ? c->names : NULL, time(NULL),
			err, sizeof err) < 0)
		snprintf(bad, sizeof bad, "%s: %s", c->cert, err);
	pthread_mutex_lock(&c->cert_lock);
	changed = strcmp(bad, c->cert_bad) != 0;
	memcpy(c->cert_bad, bad, sizeof bad);
	pthread_mutex_unlock(&c->cert_lock);
	if (*bad && (reload || changed))
		err_warn("%s", bad);
}

/* serve runs the HTTPS server until SIGTERM or SIGINT. */
static int
serve(struct ctx *c, const sigset_t *sigs)
{
	struct httpd_opts o = {.listen = c->listen,
		.cert_file = c->cert,
		.key_file = c->key,
		.threads = c->threads,
		.max_body = MAX_BODY,
		.verbose = c->verbose,
		.handler = handle,
		.arg = c};
	struct timespec second = {1, 0};
	struct httpd *h;
	char err[512];
	int sig;

	c->prom = prom_new();
	declare_metrics(c->prom);
	check_cert(c, 1); /* before the first request can ask /readyz */
	if (!(h = httpd_start(&o, err, sizeof err))) {
		err_warn("%s", err);
		return HAZ_FAIL;
	}
	__atomic_store_n(&c->h, h, __ATOMIC_RELEASE);
	err_warn("serving on %s (port %d)", c->listen, httpd_port(h));
	while ((sig = sigtimedwait(sigs, NULL, &second)) != SIGTERM &&
		sig != SIGINT) {
		switch (httpd_tick(h, sig == SIGHUP, err, sizeof err)) {
		case 1:
			err_warn("certificate reloaded from %s", c->cert);
			check_cert(c, 1);
			break;
		case -1:
			err_warn("%s; keeping the certificate in use", err);
			break;
		}
		if (clock_mono() - c->cert_checked >= CERT_RECHECK ||
			(c->cert_due && time(NULL) >= c->cert_due))
			check_cert(c, 0);
	}
	__atomic_store_n(&c->h, NULL, __ATOMIC_RELEASE);
	httpd_stop(h, GRACE);
	return HAZ_OK;
}

/* ---- setup ------------------------------------------------------------- */

static void
load_inventory(struct ctx *c)
{
	struct nd_reader r;
	char err[256];
	json_t *rec;
	int got;

	if (nd_open(&r, c->inventory, ND_SKIP_BLANK) < 0)
		exit(HAZ_FAIL);
	while ((got = nd_read(&r, &rec)) != 0) {
		if (got < 0 || avail_record(c->a, rec, err, sizeof err) < 0) {
			if (got > 0)
				nd_warn(&r, "%s", err);
			exit(HAZ_FAIL);
		}
		json_decref(rec);
	}
	nd_close(&r);
	avail_set_synced(c->a, AVAIL_ALL);
}

static void
parse_args(struct ctx *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"context", required_argument, NULL, 'C'},
		{"kubeconfig", required_argument, NULL, 'K'},
		{NULL, 0, NULL, 0},
	};
	const char *from;
	int ch;

	c->mo.scheduler = getenv("K8SHAZGPU_SCHEDULER_NAME");
	if (c->mo.scheduler && !*c->mo.scheduler)
		c->mo.scheduler = NULL; /* set but empty: as unset */
	from = "$K8SHAZGPU_SCHEDULER_NAME";
	while ((ch = getopt_long(argc, argv, "Df:i:R:PS:l:c:k:N:t:vhV",
			longopts, NULL)) != -1) {
		switch (ch) {
		case 'D': c->dump = 1; break;
		case 'f': c->chains_file = optarg; break;
		case 'i': c->inventory = optarg; break;
		case 'R': c->mo.default_class = optarg; break;
		case 'P': c->mo.gate = 1; break;
		case 'S':
			c->mo.scheduler = optarg;
			from = "-S";
			break;
		case 'l': c->listen = optarg; break;
		case 'c': c->cert = optarg; break;
		case 'k': c->key = optarg; break;
		case 'N':
			if (c->nnames == MAX_NAMES)
				usage();
			c->names[c->nnames++] = optarg;
			break;
		case 't':
			c->threads = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'v': c->verbose = 1; break;
		case 'C': c->context = optarg; break;
		case 'K': c->kubeconfig = optarg; break;
		case 'h':
			fputs(usage_text, stdout);
			fputs(help_text, stdout);
			exit(HAZ_OK);
		case 'V': puts("webhook-patch " HAZ_VERSION); exit(HAZ_OK);
		default: usage();
		}
	}
	if (c->listen && (!c->cert || !c->key || optind < argc))
		usage();
	if ((c->cert || c->key || c->nnames) && !c->listen)
		usage();
	/* the API server refuses a pod whose schedulerName is no DNS
	 * subdomain: better refused here, once, than every pod patched */
	if (c->mo.scheduler &&
		!kn_is_dns_subdomain(c->mo.scheduler, KN_SUBDOMAIN_MAX)) {
		err_warn("%s %s: not a scheduler name (a DNS subdomain)", from,
			c->mo.scheduler);
		usage();
	}
}

static void
load_chains(struct ctx *c)
{
	char err[512];

	if (!c->chains_file)
		c->chains = migchain_default();
	else if (!(c->chains = migchain_load(c->chains_file, err, sizeof err)))
		err_die(HAZ_FAIL, "%s", err);
	c->mo.chains = c->chains;
}

int
main(int argc, char **argv)
{
	struct ctx c = {.cert_lock = PTHREAD_MUTEX_INITIALIZER};
	sigset_t sigs;
	int status;

	err_init(argv[0]);
	/* jansson draws its hash seed here, before any thread starts */
	json_object_seed(0);
	parse_args(&c, argc, argv);
	load_chains(&c);
	if (c.dump) {
		json_t *j = migchain_json(c.chains);

		nd_write(j);
		json_decref(j);
		migchain_free(c.chains);
		return nd_finish(HAZ_OK);
	}
	/* signals are taken by sigtimedwait, so no thread may get them */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	if (c.listen)
		pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	c.a = avail_new(migchain_pending_seconds(c.chains));
	if (c.inventory)
		load_inventory(&c);
	else if (!(c.in = informer_start(c.kubeconfig, c.context, c.a, 0)))
		exit(HAZ_FAIL);
	if (c.in && !c.listen && !informer_wait(c.in, 30))
		err_warn("inventory not synced after 30 s; going on");
	status = c.listen ? serve(&c, &sigs)
			  : nd_each_input(argc - optind, argv + optind, 0,
				    answer_input, &c);
	informer_stop(c.in);
	avail_free(c.a);
	prom_free(c.prom);
	migchain_free(c.chains);
	free(c.cert_pem);
	return nd_finish(status);
}
