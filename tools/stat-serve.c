/* stat-serve: serve a long-running wrapper's metrics and health over HTTP.
 *
 *   stat-serve [-P] [-l addr:port] [-d dir] [-s seconds]
 *   stat-serve -c file
 *
 * A shell loop cannot listen on a socket; it writes files instead, and
 * this serves them:
 *   GET /metrics   the file DIR/metrics when it is a regular file of at
 *                  most MAX_METRICS bytes every line of which is valid
 *                  Prometheus text format 0.0.4 (prom_check); 503 "no
 *                  metrics yet" until it exists; 500 with a one-line
 *                  reason when it is not served (told once on stderr per
 *                  reason)
 *   GET /healthz   200 "ok" while this process runs: nothing is read
 *   GET /readyz    200 "ok" when DIR/ready was touched within -s seconds
 *                  (the wrapper touches it after every good cycle), else
 *                  503 naming how long ago: one stat(2), no open
 * Anything else is 404; methods other than GET and HEAD are 405. It binds
 * 127.0.0.1:9090 unless told otherwise, and stops on TERM or INT after
 * the requests in flight; with -P also when the process that started it
 * dies, so a wrapper killed outright leaves no server holding its port.
 *
 * The server is lib/httpd's, plain HTTP, and its bounds keep /healthz
 * answered whatever other clients do (see gate.h): a request must arrive
 * whole within REQUEST_TIMEOUT seconds of the connection's start, however
 * slowly its bytes come; a client address holds at most PER_IP
 * connections and all together MAX_CONNECTIONS, a new one taking the
 * place of the one that has waited longest. So connections trickling a
 * byte at a time, from one address or many, are closed at their deadline
 * or as soon as a probe comes, and the probe is answered.
 *
 * The metrics file is never opened unless stat(2) says it is a regular
 * file, then opened with O_NONBLOCK and checked again, and read up to its
 * bound: a FIFO, a device (/dev/zero), a directory or a file growing
 * without end cannot hold a request, let alone the server. Connections
 * are served by a pool of threads polling them: a slow one holds no
 * thread.
 *
 * -c FILE checks FILE as /metrics would serve it: silent with status 0
 * when it would be served, else the reason and status 1.
 *
 * EXIT STATUS: 0 stopped by a signal, or -c FILE would be served; 1 the
 * address could not be bound, or -c FILE would not be served; 2 usage. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "httpd.h"
#include "prom.h"

static const char usage_text
	[] = "usage: stat-serve [-P] [-l addr:port] [-d dir] [-s seconds]\n"
	     "       stat-serve -c file\n";

enum {
	MAX_METRICS = 1 << 20, /* bytes of the metrics file served */
	MAX_CONNECTIONS = 32,  /* at once */
	PER_IP = 8,            /* at once from one address */
	REQUEST_TIMEOUT = 5,   /* seconds a request may take to arrive */
	IDLE_TIMEOUT = 10,     /* seconds a quiet connection is kept */
	THREADS = 2,           /* polling the connections */
	MAX_BODY = 4096,       /* bytes of a request body kept (none used) */
};

struct conf {
	const char *dir;
	long stale;
	pthread_mutex_t mu;
	char told[256]; /* the last reason the metrics were not served */
};

/* What one request is answered. */
struct answer {
	unsigned status;
	const char *type;
	char *body; /* malloc'd */
	size_t len;
};

/* What load_metrics found. */
enum { M_OK, M_MISSING, M_BAD };

static void
usage(void)
{
	fputs(usage_text, stderr);
	exit(HAZ_USAGE);
}

/* parse_addr reads "a.b.c.d:port" into sa; returns 0 or -1. */
static int
parse_addr(const char *s, struct sockaddr_in *sa)
{
	const char *colon = strrchr(s, ':');
	char host[64], *end;
	long port;

	if (!colon || (size_t)(colon - s) >= sizeof host)
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	port = strtol(colon + 1, &end, 10);
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	sa->sin_port = htons((unsigned short)port);
	if (*end || port < 1 || port > 65535 ||
		inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return -1;
	return 0;
}

/* ---- the metrics file ---- */

/* read_bounded reads fd to its end into *buf (malloc'd, caller frees),
 * starting with room for hint bytes. Returns 0, 1 when there is more
 * than MAX_METRICS bytes, or -1 with errno set. */
static int
read_bounded(int fd, size_t hint, char **buf, size_t *len)
{
	size_t cap = (hint < MAX_METRICS ? hint : MAX_METRICS) + 1, n = 0;
	char *b = emalloc(cap);
	ssize_t got;

	for (;;) {
		if (n == cap) {
			if (cap > MAX_METRICS)
				break;
			cap = cap > MAX_METRICS / 2 ? MAX_METRICS + 1 : 2 * cap;
			b = erealloc(b, cap);
		}
		got = read(fd, b + n, cap - n);
		if (got == 0) {
			*buf = b;
			*len = n;
			return 0;
		}
		if (got < 0 && errno != EINTR) {
			free(b);
			return -1;
		}
		if (got > 0)
			n += (size_t)got;
	}
	free(b);
	return 1;
}

/* load_metrics reads the metrics file path into *buf (malloc'd, caller
 * frees) when it is to be served: M_OK. Otherwise M_MISSING when there
 * is no such file, or M_BAD with the reason in why; *buf is then NULL.
 * It never blocks on what is not a regular file. */
static int
load_metrics(const char *path, char **buf, size_t *len, char *why,
	size_t whylen)
{
	char reason[200];
	struct stat st;
	size_t line;
	int fd, r;

	*buf = NULL;
	if (stat(path, &st) < 0) {
		if (errno == ENOENT)
			return M_MISSING;
		snprintf(why, whylen, "cannot read: %s", strerror(errno));
		return M_BAD;
	}
	if (!S_ISREG(st.st_mode))
		goto irregular;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) <
		0) {
		if (errno == ENOENT)
			return M_MISSING; /* gone since */
		snprintf(why, whylen, "cannot read: %s", strerror(errno));
		return M_BAD;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) { /* changed since */
		close(fd);
		goto irregular;
	}
	r = st.st_size > MAX_METRICS
		? 1
		: read_bounded(fd, (size_t)st.st_size, buf, len);
	if (r < 0)
		snprintf(why, whylen, "cannot read: %s", strerror(errno));
	close(fd);
	if (r > 0)
		snprintf(why, whylen, "over %d bytes", MAX_METRICS);
	if (r)
		return M_BAD;
	if ((line = prom_check(*buf, *len, reason, sizeof reason))) {
		snprintf(why, whylen, "line %zu: %s", line, reason);
		free(*buf);
		*buf = NULL;
		return M_BAD;
	}
	return M_OK;
irregular:
	snprintf(why, whylen, "not a regular file");
	return M_BAD;
}

/* tell writes why the metrics are not served to stderr, unless it is
 * what was told last; why NULL: they were served, so the next reason is
 * told again. */
static void
tell(struct conf *cf, const char *path, const char *why)
{
	pthread_mutex_lock(&cf->mu);
	if (!why) {
		cf->told[0] = '\0';
	} else if (strcmp(cf->told, why)) {
		snprintf(cf->told, sizeof cf->told, "%s", why);
		err_warn("%s: %s", path, why);
	}
	pthread_mutex_unlock(&cf->mu);
}

/* ---- answers ---- */

static void
text(struct answer *a, unsigned status, const char *msg)
{
	a->status = status;
	a->type = "text/plain; charset=utf-8";
	a->body = estrdup(msg);
	a->len = strlen(msg);
}

static void
metrics(struct conf *cf, struct answer *a)
{
	char path[PATH_MAX], why[256], msg[300];

	if ((size_t)snprintf(path, sizeof path, "%s/metrics", cf->dir) >=
		sizeof path) {
		text(a, 500, "bad metrics file: path too long\n");
		return;
	}
	switch (load_metrics(path, &a->body, &a->len, why, sizeof why)) {
	case M_OK:
		tell(cf, path, NULL);
		a->status = 200;
		a->type = "text/plain; version=0.0.4; charset=utf-8";
		break;
	case M_MISSING: text(a, 503, "no metrics yet\n"); break;
	default:
		tell(cf, path, why);
		snprintf(msg, sizeof msg, "bad metrics file: %s\n", why);
		text(a, 500, msg);
	}
}

static void
readyz(const struct conf *cf, struct answer *a)
{
	char path[PATH_MAX], msg[128];
	struct stat st;
	double age;

	snprintf(path, sizeof path, "%s/ready", cf->dir);
	if (stat(path, &st) < 0) {
		text(a, 503, "not ready: no cycle finished yet\n");
		return;
	}
	age = difftime(time(NULL), st.st_mtime);
	if (age > cf->stale) {
		snprintf(msg, sizeof msg,
			"not ready: last good cycle %.0fs ago\n", age);
		text(a, 503, msg);
	} else if (age < -cf->stale) {
		snprintf(msg, sizeof msg,
			"not ready: last good cycle %.0fs in the future\n",
			-age);
		text(a, 503, msg);
	} else {
		text(a, 200, "ok\n");
	}
}

/* answer decides what the request method url gets. */
static void
answer(struct conf *cf, const char *method, const char *url, struct answer *a)
{
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		text(a, 405, "method not allowed\n");
	else if (strcmp(url, "/metrics") == 0)
		metrics(cf, a);
	else if (strcmp(url, "/healthz") == 0)
		text(a, 200, "ok\n");
	else if (strcmp(url, "/readyz") == 0)
		readyz(cf, a);
	else
		text(a, 404, "not found\n");
}

/* ---- transport ---- */

static void
handle(const struct httpd_req *q, struct httpd_reply *p, void *arg)
{
	struct answer a;

	answer(arg, q->method, q->path, &a);
	p->status = (int)a.status;
	p->content_type = a.type;
	p->body = a.body;
	p->len = a.len;
}

/* check is -c: whether file would be served. */
static int
check(const char *file)
{
	char why[256], *buf;
	size_t len;

	switch (load_metrics(file, &buf, &len, why, sizeof why)) {
	case M_OK: free(buf); return HAZ_OK;
	case M_MISSING:
		errno = ENOENT;
		err_warn("%s:", file);
		return HAZ_FAIL;
	default: err_warn("%s: %s", file, why); return HAZ_FAIL;
	}
}

int
main(int argc, char **argv)
{
	struct conf cf = {".", 60, PTHREAD_MUTEX_INITIALIZER, ""};
	const char *addr = "127.0.0.1:9090", *checked = NULL;
	struct httpd_opts o = {.threads = THREADS,
		.max_body = MAX_BODY,
		.idle_timeout = IDLE_TIMEOUT,
		.request_timeout = REQUEST_TIMEOUT,
		.max_connections = MAX_CONNECTIONS,
		.per_ip = PER_IP,
		.handler = handle,
		.arg = &cf};
	struct sockaddr_in sa;
	struct httpd *h;
	char err[512];
	sigset_t sigs;
	char *end;
	int ch, sig, with_parent = 0;

	err_init(argv[0]);
	while ((ch = getopt(argc, argv, "c:Pl:d:s:hV")) != -1) {
		switch (ch) {
		case 'c': checked = optarg; break;
		case 'P': with_parent = 1; break;
		case 'l': addr = optarg; break;
		case 'd': cf.dir = optarg; break;
		case 's':
			cf.stale = strtol(optarg, &end, 10);
			if (*end || cf.stale < 1)
				err_die(HAZ_USAGE,
					"-s: not a number of seconds: %s",
					optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			puts("Serve DIR/metrics at /metrics, /healthz, and /readyz (DIR/ready\n"
			     "touched within -s seconds, default 60). Default 127.0.0.1:9090.\n"
			     "The metrics file is served when it is a regular file of at most\n"
			     "1048576 bytes, all valid Prometheus text format 0.0.4; else 500.\n"
			     "-c FILE checks FILE so, instead of serving.");
			return HAZ_OK;
		case 'V': puts("stat-serve " HAZ_VERSION); return HAZ_OK;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (checked)
		return check(checked);
	if (parse_addr(addr, &sa) < 0)
		err_die(HAZ_USAGE, "-l: not an IPv4 address and port: %s",
			addr);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	/* TERM on the parent's death, and not if it died already */
	if (with_parent &&
		(prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() == 1))
		return HAZ_OK;
	o.listen = addr;
	if (!(h = httpd_start(&o, err, sizeof err)))
		err_die(HAZ_FAIL, "%s", err);
	sigwait(&sigs, &sig);
	httpd_stop(h, 5);
	return HAZ_OK;
}
