/* stat-serve: serve a long-running wrapper's metrics and health over HTTP.
 *
 *   stat-serve [-P] [-l addr:port] [-d dir] [-s seconds]
 *
 * A shell loop cannot listen on a socket; it writes files instead, and
 * this serves them:
 *   GET /metrics   the file DIR/metrics (Prometheus text format 0.0.4);
 *                  503 until it exists
 *   GET /healthz   200 "ok" while this process runs
 *   GET /readyz    200 "ok" when DIR/ready was touched within -s seconds
 *                  (the wrapper touches it after every good cycle), else
 *                  503 naming how long ago
 * Anything else is 404; methods other than GET and HEAD are 405. It binds
 * 127.0.0.1:9090 unless told otherwise, and stops on TERM or INT after
 * the requests in flight; with -P also when the process that started it
 * dies, so a wrapper killed outright leaves no server holding its port.
 *
 * EXIT STATUS: 0 stopped by a signal; 1 the address could not be bound;
 * 2 usage. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "err.h"

static const char usage_text[] =
	"usage: stat-serve [-P] [-l addr:port] [-d dir] [-s seconds]\n";

struct conf {
	const char *dir;
	long stale;
};

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

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned code, const char *type, char *body,
	size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body,
		MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
text(struct MHD_Connection *c, unsigned code, const char *msg)
{
	char *s = estrdup(msg);

	return reply(c, code, "text/plain; charset=utf-8", s, strlen(s));
}

/* slurp reads the whole file path; NULL when it cannot. */
static char *
slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 8192, n = 0;
	char *buf;
	ssize_t got;

	if (fd < 0)
		return NULL;
	buf = emalloc(cap);
	while ((got = read(fd, buf + n, cap - n)) > 0)
		if ((n += (size_t)got) == cap)
			buf = erealloc(buf, cap *= 2);
	close(fd);
	if (got < 0) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static enum MHD_Result
metrics(struct MHD_Connection *c, const struct conf *cf)
{
	char path[PATH_MAX], *body;
	size_t len;

	snprintf(path, sizeof path, "%s/metrics", cf->dir);
	if (!(body = slurp(path, &len)))
		return text(c, 503, "no metrics yet\n");
	return reply(c, 200, "text/plain; version=0.0.4; charset=utf-8", body, len);
}

static enum MHD_Result
readyz(struct MHD_Connection *c, const struct conf *cf)
{
	char path[PATH_MAX], msg[128];
	struct stat st;
	long age;

	snprintf(path, sizeof path, "%s/ready", cf->dir);
	if (stat(path, &st) < 0)
		return text(c, 503, "not ready: no cycle finished yet\n");
	age = (long)(time(NULL) - st.st_mtime);
	if (age > cf->stale) {
		snprintf(msg, sizeof msg, "not ready: last good cycle %lds ago\n", age);
		return text(c, 503, msg);
	}
	return text(c, 200, "ok\n");
}

static enum MHD_Result
route(void *arg, struct MHD_Connection *c, const char *url,
	const char *method, const char *version, const char *data,
	size_t *size, void **state)
{
	const struct conf *cf = arg;

	(void)version;
	(void)data;
	(void)size;
	(void)state;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text(c, 405, "method not allowed\n");
	if (strcmp(url, "/metrics") == 0)
		return metrics(c, cf);
	if (strcmp(url, "/healthz") == 0)
		return text(c, 200, "ok\n");
	if (strcmp(url, "/readyz") == 0)
		return readyz(c, cf);
	return text(c, 404, "not found\n");
}

int
main(int argc, char **argv)
{
	struct conf cf = {".", 60};
	const char *addr = "127.0.0.1:9090";
	struct sockaddr_in sa;
	struct MHD_Daemon *d;
	sigset_t sigs;
	char *end;
	int ch, sig, with_parent = 0;

	err_init(argv[0]);
	while ((ch = getopt(argc, argv, "Pl:d:s:hV")) != -1) {
		switch (ch) {
		case 'P': with_parent = 1; break;
		case 'l': addr = optarg; break;
		case 'd': cf.dir = optarg; break;
		case 's':
			cf.stale = strtol(optarg, &end, 10);
			if (*end || cf.stale < 1)
				err_die(HAZ_USAGE, "-s: not a number of seconds: %s", optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			puts("Serve DIR/metrics at /metrics, /healthz, and /readyz (DIR/ready\n"
			     "touched within -s seconds, default 60). Default 127.0.0.1:9090.");
			return HAZ_OK;
		case 'V': puts("stat-serve " HAZ_VERSION); return HAZ_OK;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (parse_addr(addr, &sa) < 0)
		err_die(HAZ_USAGE, "-l: not an IPv4 address and port: %s", addr);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	/* TERM on the parent's death, and not if it died already */
	if (with_parent && (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() == 1))
		return HAZ_OK;
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
		0, NULL, NULL, route, &cf, MHD_OPTION_SOCK_ADDR, &sa,
		MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (!d)
		err_die(HAZ_FAIL, "%s: cannot listen:", addr);
	sigwait(&sigs, &sig);
	MHD_stop_daemon(d);
	return HAZ_OK;
}
