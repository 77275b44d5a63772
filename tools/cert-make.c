/* cert-make: the admission webhook's serving certificate, made where it
 * runs (a Job in the cluster), kept while it is good, renewed before it
 * expires, and its CA patched into the MutatingWebhookConfiguration.
 *
 *   cert-make [-n namespace] [-s service] [-S secret] [-H host]...
 *             [-D days] [-R days] [-w config] [-W seconds]
 *             [--kubeconfig file] [--context name]
 *   cert-make -o dir [-n namespace] [-s service] [-H host]...
 *             [-D days | -V notbefore,notafter]
 *   cert-make -c certfile [-n namespace] [-s service] [-H host]...
 *
 * The names certified are the Service's DNS names (svc, svc.ns,
 * svc.ns.svc, svc.ns.svc.cluster.local) and each -H (an IP literal
 * becomes an IP SAN). In the cluster it GETs the Secret and keeps it when
 * it is a kubernetes.io/tls Secret whose tls.crt chains to its ca.crt,
 * whose tls.key is tls.crt's, which names every name and is valid for
 * more than -R days; else it makes a new CA and serving certificate
 * (x509(3): the CA's key is thrown away) and creates the Secret or
 * updates it at the resourceVersion read; a 409 means someone else wrote
 * it: that one is read and judged once more. Then every webhook of the
 * configuration gets caBundle = base64(ca.crt), by a JSON patch that
 * tests each webhook's name at its index, sent only when something
 * differs; a configuration not there yet is waited for (every 2 s, up to
 * -W seconds). The verbs used are exactly: secrets get, create, update;
 * mutatingwebhookconfigurations get, patch.
 *
 * One JSON line tells what it did, never a key:
 *   {"secret":"ns/name","action":"kept|created|renewed","reason":"...",
 *    "notAfter":"RFC3339","names":[...],"config":"name","patched":[...]}
 * -o writes ca.crt, tls.crt and tls.key (0600) into dir with no API call;
 * -c checks a certificate file.
 *
 * EXIT STATUS: 0 done; 1 a bad certificate, or the API refused (the
 * message names the object and gives the API's own); 2 usage; 75 the API
 * server could not be reached. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "b64.h"
#include "err.h"
#include "kname.h"
#include "kube.h"
#include "kubeconfig.h"
#include "nd.h"
#include "x509.h"

#define MAX_HOSTS 64
#define DAY 86400
#define SKEW 300 /* seconds a new certificate is valid before now */

struct opts {
	const char *ns, *service, *secret, *config, *dir, *check;
	const char *kubeconfig, *context;
	const char *hosts[MAX_HOSTS];
	int nhosts, service_named;
	long days, renew, wait;
	int days_set, window_set;
	time_t not_before, not_after;
	/* the names certified, NULL-terminated */
	char *names[MAX_HOSTS + 5];
	size_t nnames;
};

static const char usage_text[] =
	"usage: cert-make [-n namespace] [-s service] [-S secret] [-H host]...\n"
	"                 [-D days] [-R days] [-w config] [-W seconds]\n"
	"                 [--kubeconfig file] [--context name]\n"
	"       cert-make -o dir [-n namespace] [-s service] [-H host]...\n"
	"                 [-D days | -V notbefore,notafter]\n"
	"       cert-make -c certfile [-n namespace] [-s service] [-H host]...\n";

static const char help_text[] =
	"Make, keep or renew the webhook's serving certificate.\n"
	"\n"
	"  -n namespace    the Service's namespace (canhazgpu-system)\n"
	"  -s service      the Service's name (k8shazgpu-webhook)\n"
	"  -S secret       the kubernetes.io/tls Secret (k8shazgpu-webhook-certs)\n"
	"  -H host         another DNS name or IP address (repeatable)\n"
	"  -D days         validity of a new certificate (365)\n"
	"  -R days         renew when valid for this many days or fewer (30)\n"
	"  -w config       MutatingWebhookConfiguration to give the CA\n"
	"                  (k8shazgpu-webhook; '' for none)\n"
	"  -W seconds      wait this long for the configuration to exist (60)\n"
	"  -o dir          write ca.crt, tls.crt, tls.key there; no API call\n"
	"  -V nb,na        with -o: validity from nb to na (RFC 3339), for\n"
	"                  tests and drills\n"
	"  -c file         check a certificate: valid now, naming the names\n"
	"                  (the Service's when -n or -s is given, and each -H)\n"
	"  --kubeconfig f  kubeconfig file\n"
	"  --context name  kubeconfig context\n"
	"  -h, --version   this help; the version\n";

static void
usage(void)
{
	fputs(usage_text, stderr);
	exit(HAZ_USAGE);
}

static void
bad_option(const char *fmt, const char *arg)
{
	err_warn(fmt, arg);
	usage();
}

/* number_arg parses a whole number from lo to hi for option ch. */
static long
number_arg(int ch, const char *arg, long lo, long hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi) {
		err_warn("-%c %s: expected %s from %ld to %ld", ch, arg, what,
			lo, hi);
		usage();
	}
	return v;
}

/* window_arg parses -V "notbefore,notafter". */
static void
window_arg(struct opts *o, const char *arg)
{
	const char *comma = strchr(arg, ',');
	char *first, why[128], msg[512];

	if (!comma)
		bad_option("-V %s: expected notbefore,notafter (RFC 3339)",
			arg);
	first = estrdup(arg);
	first[comma - arg] = '\0';
	if (x509_parse_time(first, &o->not_before, why, sizeof why) < 0)
		snprintf(msg, sizeof msg, "-V %s: notbefore: %s", arg, why);
	else if (x509_parse_time(comma + 1, &o->not_after, why, sizeof why) < 0)
		snprintf(msg, sizeof msg, "-V %s: notafter: %s", arg, why);
	else
		msg[0] = '\0';
	free(first);
	if (msg[0])
		bad_option("%s", msg);
	if (o->not_after <= o->not_before)
		bad_option("-V %s: notafter must come after notbefore", arg);
	o->window_set = 1;
}

/* host_ok: h is an IPv4 or IPv6 literal or a DNS name ("*." allowed
 * first) that cannot be taken for a mistyped address. */
static int
host_ok(const char *h)
{
	unsigned char ip[16];

	if (inet_pton(AF_INET, h, ip) == 1 || inet_pton(AF_INET6, h, ip) == 1)
		return 1;
	if (strspn(h, "0123456789.") == strlen(h))
		return 0; /* no address, and no top-level domain is numeric */
	if (!strncmp(h, "*.", 2))
		h += 2;
	return kn_is_dns_subdomain(h, KN_SUBDOMAIN_MAX);
}

/* add_name appends s (copied) to the names unless it is there. */
static void
add_name(struct opts *o, const char *s)
{
	size_t i;

	for (i = 0; i < o->nnames; i++)
		if (!strcasecmp(o->names[i], s))
			return;
	o->names[o->nnames++] = estrdup(s);
	o->names[o->nnames] = NULL;
}

static void
parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{"kubeconfig", required_argument, NULL, 'K'},
		{"context", required_argument, NULL, 'C'},
		{"version", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int ch, i;

	memset(o, 0, sizeof *o);
	o->ns = "canhazgpu-system";
	o->service = "k8shazgpu-webhook";
	o->secret = "k8shazgpu-webhook-certs";
	o->config = "k8shazgpu-webhook";
	o->days = 365;
	o->renew = 30;
	o->wait = 60;
	while ((ch = getopt_long(argc, argv, "n:s:S:H:D:R:w:W:o:V:c:h",
			longopts, NULL)) != -1) {
		switch (ch) {
		case 'n':
			o->ns = optarg;
			o->service_named = 1;
			break;
		case 's':
			o->service = optarg;
			o->service_named = 1;
			break;
		case 'S': o->secret = optarg; break;
		case 'H':
			if (o->nhosts == MAX_HOSTS)
				bad_option("-H %s: too many hosts", optarg);
			if (!host_ok(optarg))
				bad_option(
					"-H %s: not a DNS name or IP address",
					optarg);
			o->hosts[o->nhosts++] = optarg;
			break;
		case 'D':
			o->days = number_arg(ch, optarg, 1, 36500, "days");
			o->days_set = 1;
			break;
		case 'R':
			o->renew = number_arg(ch, optarg, 0, 36499, "days");
			break;
		case 'w': o->config = optarg; break;
		case 'W':
			o->wait = number_arg(ch, optarg, 0, 3600, "seconds");
			break;
		case 'o': o->dir = optarg; break;
		case 'V': window_arg(o, optarg); break;
		case 'c': o->check = optarg; break;
		case 'K': o->kubeconfig = optarg; break;
		case 'C': o->context = optarg; break;
		case 'h':
			fputs(usage_text, stdout);
			fputs(help_text, stdout);
			exit(HAZ_OK);
		case 'v': puts("cert-make " HAZ_VERSION); exit(HAZ_OK);
		default: usage();
		}
	}
	if (optind < argc || (o->dir && o->check) ||
		(o->window_set && (!o->dir || o->days_set)))
		usage();
	if (!kn_is_dns_label(o->ns))
		bad_option("-n %s: not a namespace name", o->ns);
	if (!kn_is_dns_label(o->service))
		bad_option("-s %s: not a Service name", o->service);
	if (!kn_is_dns_subdomain(o->secret, KN_SUBDOMAIN_MAX))
		bad_option("-S %s: not a Secret name", o->secret);
	if (*o->config && !kn_is_dns_subdomain(o->config, KN_SUBDOMAIN_MAX))
		bad_option("-w %s: not a configuration name", o->config);
	if (!o->dir && !o->check && o->renew >= o->days) {
		err_warn("-R %ld: must be less than -D %ld", o->renew, o->days);
		usage();
	}
	if (!o->check || o->service_named) {
		char *n[4];

		n[0] = easprintf("%s", o->service);
		n[1] = easprintf("%s.%s", o->service, o->ns);
		n[2] = easprintf("%s.%s.svc", o->service, o->ns);
		n[3] = easprintf("%s.%s.svc.cluster.local", o->service, o->ns);
		for (i = 0; i < 4; i++) {
			add_name(o, n[i]);
			free(n[i]);
		}
	}
	for (i = 0; i < o->nhosts; i++)
		add_name(o, o->hosts[i]);
}

static void
free_names(struct opts *o)
{
	size_t i;

	for (i = 0; i < o->nnames; i++)
		free(o->names[i]);
}

/* ---- output ------------------------------------------------------------- */

/* cert_json adds "notAfter" and "names" of the certificate pem to rec. */
static void
cert_json(json_t *rec, const char *pem)
{
	struct x509_info i;
	char when[24], err[128];
	json_t *names = json_array();
	size_t k;

	if (x509_info(pem, &i, err, sizeof err) == 0) {
		json_object_set_new(rec, "notAfter",
			json_string(x509_time(i.not_after, when)));
		for (k = 0; k < i.nnames; k++)
			json_array_append_new(names, json_string(i.names[k]));
		x509_info_free(&i);
	}
	json_object_set_new(rec, "names", names);
}

/* make_pair makes a new CA and serving certificate for o's names, valid
 * -V's window or from a little before now for -D days. */
static int
make_pair(const struct opts *o, struct x509_pair *p)
{
	time_t now = time(NULL);
	char *cn = easprintf("%s.%s.svc", o->service, o->ns);
	char err[256];
	int rc;

	rc = x509_make(cn, (const char *const *)o->names, o->nnames,
		o->window_set ? o->not_before : now - SKEW,
		o->window_set ? o->not_after : now + o->days * DAY, p, err,
		sizeof err);
	free(cn);
	if (rc < 0)
		err_warn("%s", err);
	return rc;
}

/* ---- -c and -o ------------------------------------------------------------
 */

static int
check_file(const struct opts *o)
{
	char err[1024];
	char *pem = x509_load(o->check, err, sizeof err);
	json_t *rec;

	if (!pem) {
		err_warn("%s", err);
		return HAZ_FAIL;
	}
	if (x509_check(pem, (const char *const *)o->names, time(NULL), err,
		    sizeof err) < 0) {
		err_warn("%s: %s", o->check, err);
		free(pem);
		return HAZ_FAIL;
	}
	rec = json_object();
	cert_json(rec, pem);
	nd_write(rec);
	json_decref(rec);
	free(pem);
	return HAZ_OK;
}

/* write_file writes text to dir/name with mode, through a temporary file
 * renamed into place, so a server watching the file never reads half. */
static int
write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	char *path = easprintf("%s/%s", dir, name);
	char *tmp = easprintf("%s/.%s.tmp", dir, name);
	size_t len = strlen(text);
	int fd, ok;

	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	ok = fd >= 0 && fchmod(fd, mode) == 0 &&
		write(fd, text, len) == (ssize_t)len;
	if (fd >= 0 && close(fd) < 0)
		ok = 0;
	if (!ok || rename(tmp, path) < 0) {
		err_warn("%s:", ok ? path : tmp);
		unlink(tmp);
		ok = 0;
	}
	free(path);
	free(tmp);
	return ok ? 0 : -1;
}

static int
write_dir(const struct opts *o)
{
	struct x509_pair p;
	json_t *rec;
	int rc;

	if (mkdir(o->dir, 0755) < 0 && errno != EEXIST) {
		err_warn("%s:", o->dir);
		return HAZ_FAIL;
	}
	if (make_pair(o, &p) < 0)
		return HAZ_FAIL;
	rc = write_file(o->dir, "ca.crt", p.ca_crt, 0644) ||
		write_file(o->dir, "tls.key", p.tls_key, 0600) ||
		write_file(o->dir, "tls.crt", p.tls_crt, 0644);
	if (!rc) {
		rec = json_pack("{ss}", "dir", o->dir);
		cert_json(rec, p.tls_crt);
		nd_write(rec);
		json_decref(rec);
	}
	x509_pair_free(&p);
	return rc ? HAZ_FAIL : HAZ_OK;
}

/* ---- the Secret -----------------------------------------------------------
 */

/* data_pem returns the decoded data[key] of a Secret, or NULL. */
static char *
data_pem(const json_t *secret, const char *key)
{
	const char *v = json_string_value(
		json_object_get(json_object_get(secret, "data"), key));
	unsigned char *out;
	size_t n, bad;

	if (!v || b64_decode(v, strlen(v), &out, &n, &bad) < 0)
		return NULL;
	return (char *)out;
}

/* judge says whether the Secret read can be kept: 1, or 0 with why not
 * in why. */
static int
judge(const struct opts *o, const json_t *secret, char *why, size_t len)
{
	static const char *const keys[] = {"ca.crt", "tls.crt", "tls.key"};
	const char *type = json_string_value(json_object_get(secret, "type"));
	char *pem[3] = {NULL, NULL, NULL};
	char err[512];
	struct x509_info i;
	time_t now = time(NULL);
	int k, ok = 0;

	if (!type || strcmp(type, "kubernetes.io/tls")) {
		snprintf(why, len, "not a kubernetes.io/tls Secret (type %s)",
			type ? type : "none");
		return 0;
	}
	for (k = 0; k < 3; k++)
		if (!(pem[k] = data_pem(secret, keys[k]))) {
			snprintf(why, len, "no %s", keys[k]);
			goto out;
		}
	if (x509_info(pem[1], &i, err, sizeof err) < 0)
		snprintf(why, len, "tls.crt: %s", err);
	else if (x509_verify(pem[0], pem[1], err, sizeof err) < 0)
		snprintf(why, len, "tls.crt does not chain to ca.crt: %s", err);
	else if (x509_key_matches(pem[1], pem[2], err, sizeof err) < 0)
		snprintf(why, len, "tls.key does not match tls.crt: %s", err);
	else if (x509_check(pem[1], (const char *const *)o->names, now, err,
			 sizeof err) < 0)
		snprintf(why, len, "%s", err);
	else if (i.not_after - now <= o->renew * DAY)
		snprintf(why, len, "expires in %lld days",
			(long long)((i.not_after - now) / DAY));
	else
		ok = 1;
	x509_info_free(&i);
out:
	for (k = 0; k < 3; k++) {
		if (pem[k])
			memset(pem[k], 0, strlen(pem[k]));
		free(pem[k]);
	}
	return ok;
}

/* new_secret returns the Secret to write: the one read (its metadata,
 * resourceVersion included) or a new one, with the pair as its data. */
static json_t *
new_secret(const struct opts *o, const json_t *old, const struct x509_pair *p)
{
	json_t *s;
	char *v[3];
	int k;

	if (old) {
		/* the type is immutable: another one is refused, and said */
		s = json_deep_copy(old);
		json_object_set_new(s, "type",
			json_string("kubernetes.io/tls"));
	} else {
		s = json_pack("{ss ss s{ss ss s{ss ss}} ss}", "apiVersion",
			"v1", "kind", "Secret", "metadata", "name", o->secret,
			"namespace", o->ns, "labels",
			"app.kubernetes.io/part-of", "k8shazgpu",
			"app.kubernetes.io/managed-by", "cert-make", "type",
			"kubernetes.io/tls");
	}
	v[0] = b64_encode(p->ca_crt, strlen(p->ca_crt));
	v[1] = b64_encode(p->tls_crt, strlen(p->tls_crt));
	v[2] = b64_encode(p->tls_key, strlen(p->tls_key));
	json_object_set_new(s, "data",
		json_pack("{ss ss ss}", "ca.crt", v[0], "tls.crt", v[1],
			"tls.key", v[2]));
	memset(v[2], 0, strlen(v[2]));
	for (k = 0; k < 3; k++)
		free(v[k]);
	return s;
}

/* The result of settling the Secret: what was done, and the PEM of its
 * ca.crt and tls.crt as they now stand. */
struct settled {
	const char *action;
	char reason[640];
	char *ca, *crt;
};

/* settle keeps, creates or renews the Secret. Returns HAZ_OK with s
 * filled, or an exit status after a message. */
static int
settle(const struct opts *o, struct kube *k, struct settled *s)
{
	char *path = easprintf("/api/v1/namespaces/%s/secrets/%s", o->ns,
		o->secret);
	char *coll = easprintf("/api/v1/namespaces/%s/secrets", o->ns);
	struct kube_error e = {0};
	struct x509_pair p;
	json_t *old = NULL, *obj, *done = NULL;
	int attempt, status = HAZ_FAIL;

	memset(s, 0, sizeof *s);
	for (attempt = 0; attempt < 2; attempt++) {
		json_decref(old);
		if (!(old = kube_get(k, path, &e)) &&
			!(e.kind == KUBE_EAPI && e.status == 404))
			goto fail;
		if (old && judge(o, old, s->reason, sizeof s->reason)) {
			s->action = "kept";
			s->ca = data_pem(old, "ca.crt");
			s->crt = data_pem(old, "tls.crt");
			status = HAZ_OK;
			goto out;
		}
		if (!old)
			snprintf(s->reason, sizeof s->reason, "missing");
		if (make_pair(o, &p) < 0)
			goto out;
		obj = new_secret(o, old, &p);
		done = old ? kube_replace(k, path, obj, &e)
			   : kube_create(k, coll, obj, &e);
		json_decref(obj);
		if (done) {
			s->action = old ? "renewed" : "created";
			s->ca = estrdup(p.ca_crt);
			s->crt = estrdup(p.tls_crt);
			x509_pair_free(&p);
			status = HAZ_OK;
			goto out;
		}
		x509_pair_free(&p);
		/* someone else wrote it meanwhile: judge theirs, once */
		if (!(e.kind == KUBE_EAPI && e.status == 409))
			break;
	}
fail:
	err_warn("%s", e.msg);
	status = kube_exit_status(&e);
out:
	json_decref(done);
	json_decref(old);
	free(path);
	free(coll);
	return status;
}

/* ---- the MutatingWebhookConfiguration ---------------------------------------
 */

/* bundle_patch returns the JSON patch that gives each webhook of cfg the
 * caBundle bundle (empty when all have it), and adds the names of those
 * it changes to patched. */
static json_t *
bundle_patch(const json_t *cfg, const char *bundle, json_t *patched)
{
	json_t *ops = json_array(), *wh, *cc;
	const char *name, *have;
	char path[64];
	size_t i;

	json_array_foreach(json_object_get(cfg, "webhooks"), i, wh) {
		name = json_string_value(json_object_get(wh, "name"));
		cc = json_object_get(wh, "clientConfig");
		have = json_string_value(json_object_get(cc, "caBundle"));
		if (!name || (have && !strcmp(have, bundle)))
			continue;
		snprintf(path, sizeof path, "/webhooks/%zu/name", i);
		json_array_append_new(ops,
			json_pack("{ss ss ss}", "op", "test", "path", path,
				"value", name));
		snprintf(path, sizeof path, "/webhooks/%zu/clientConfig%s", i,
			cc ? "/caBundle" : "");
		json_array_append_new(ops,
			cc ? json_pack("{ss ss ss}", "op",
				     have ? "replace" : "add", "path", path,
				     "value", bundle)
			   : json_pack("{ss ss s{ss}}", "op", "add", "path",
				     path, "value", "caBundle", bundle));
		json_array_append_new(patched, json_string(name));
	}
	return ops;
}

/* give_bundle patches the configuration o->config so that every webhook
 * trusts ca (PEM), waiting for it to exist; the webhooks changed go into
 * patched. Returns an exit status, after a message when not HAZ_OK. */
static int
give_bundle(const struct opts *o, struct kube *k, const char *ca,
	json_t *patched)
{
	char *path = easprintf("/apis/admissionregistration.k8s.io/v1/"
			       "mutatingwebhookconfigurations/%s",
		o->config);
	char *bundle = b64_encode(ca, strlen(ca));
	struct timespec two = {2, 0};
	time_t until = time(NULL) + o->wait;
	struct kube_error e = {0};
	json_t *cfg, *ops, *done;
	int attempt = 0, status = HAZ_OK;

	for (;;) {
		if (!(cfg = kube_get(k, path, &e))) {
			if (e.kind == KUBE_EAPI && e.status == 404 &&
				time(NULL) < until) {
				nanosleep(&two, NULL);
				continue;
			}
			if (e.kind == KUBE_EAPI && e.status == 404)
				err_warn("mutatingwebhookconfigurations/%s: "
					 "not found after %ld s",
					o->config, o->wait);
			else
				err_warn("%s", e.msg);
			status = e.status == 404 ? HAZ_FAIL
						 : kube_exit_status(&e);
			break;
		}
		json_array_clear(patched);
		ops = bundle_patch(cfg, bundle, patched);
		json_decref(cfg);
		done = json_array_size(ops)
			? kube_patch(k, path, KUBE_PATCH_JSON, ops, &e)
			: json_object();
		json_decref(ops);
		if (done) {
			json_decref(done);
			break;
		}
		/* changed between GET and PATCH (a test failed): once more */
		if (attempt++ == 0 && e.kind == KUBE_EAPI &&
			(e.status == 409 || e.status == 422))
			continue;
		err_warn("%s", e.msg);
		status = kube_exit_status(&e);
		break;
	}
	free(bundle);
	free(path);
	return status;
}

static int
in_cluster(const struct opts *o)
{
	struct kc_config cfg;
	struct settled s;
	struct kube *k;
	json_t *rec, *patched = json_array();
	char *id;
	int status;

	if (kc_load(&cfg, o->kubeconfig, o->context) < 0)
		return HAZ_FAIL;
	k = kube_new(&cfg);
	status = settle(o, k, &s);
	if (status == HAZ_OK && *o->config)
		status = give_bundle(o, k, s.ca, patched);
	if (status == HAZ_OK) {
		id = easprintf("%s/%s", o->ns, o->secret);
		rec = json_pack("{ss ss}", "secret", id, "action", s.action);
		if (strcmp(s.action, "kept"))
			json_object_set_new(rec, "reason",
				json_string(s.reason));
		cert_json(rec, s.crt);
		if (*o->config) {
			json_object_set_new(rec, "config",
				json_string(o->config));
			json_object_set(rec, "patched", patched);
		}
		nd_write(rec);
		json_decref(rec);
		free(id);
	}
	json_decref(patched);
	free(s.ca);
	free(s.crt);
	kube_free(k);
	kc_free(&cfg);
	return status;
}

int
main(int argc, char **argv)
{
	struct opts o;
	int status;

	err_init(argv[0]);
	parse(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	if (o.check)
		status = check_file(&o);
	else if (o.dir)
		status = write_dir(&o);
	else
		status = in_cluster(&o);
	free_names(&o);
	return nd_finish(status);
}
