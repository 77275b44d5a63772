/* webhook-noop: the cheapest webhook there is, for bench/webhook: over
 * the same HTTPS server library and settings as webhook-patch, it
 * answers every POST with an AdmissionReview response allowing it, its
 * uid copied from the request without parsing the rest (a dry run also
 * gets the warning "webhook-noop", so that a client can tell it is the
 * one registered). Registered in
 * place of webhook-patch, it shows what calling any webhook costs the
 * API server, the floor under what webhook-patch adds.
 *
 *   webhook-noop -c cert -k key   serves on 127.0.0.1, prints the port,
 *                                 stops on TERM or INT */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <microhttpd.h>

struct req {
	char buf[1 << 16];
	size_t len;
};

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	static char none[] = "";
	char *s;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
		fseek(f, 0, SEEK_SET) || !(s = calloc(1, (size_t)n + 1)) ||
		fread(s, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "webhook-noop: cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	return n ? s : none;
}

/* uid finds "uid":"..." in the request (the first one is the
 * request's: AdmissionReview puts request.uid before the object). */
static int
uid(const char *body, const char **s)
{
	const char *p = strstr(body, "\"uid\":\""), *q;

	if (!p)
		return 0;
	p += 7;
	for (q = p; *q && *q != '"'; q++)
		if (*q == '\\')
			return 0;
	*s = p;
	return *q == '"' ? (int)(q - p) : 0;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *con, const char *url,
	const char *method, const char *version, const char *data, size_t *size,
	void **state)
{
	struct req *r = *state;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	const char *u;
	char out[512];
	int n;

	(void)cls, (void)url, (void)method, (void)version;
	if (!r) {
		*state = calloc(1, sizeof *r);
		return *state ? MHD_YES : MHD_NO;
	}
	if (*size) {
		n = (int)(*size < sizeof r->buf - 1 - r->len
				? *size
				: sizeof r->buf - 1 - r->len);
		memcpy(r->buf + r->len, data, (size_t)n);
		r->len += (size_t)n;
		*size = 0;
		return MHD_YES;
	}
	r->buf[r->len] = '\0';
	if (!(n = uid(r->buf, &u)) || n > 256)
		u = "", n = 0;
	n = snprintf(out, sizeof out,
		"{\"apiVersion\":\"admission.k8s.io/v1\","
		"\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"%.*s\","
		"\"allowed\":true%s}}",
		n, u,
		strstr(r->buf, "\"dryRun\":true")
			? ",\"warnings\":[\"webhook-noop\"]"
			: "");
	resp = MHD_create_response_from_buffer((size_t)n, out,
		MHD_RESPMEM_MUST_COPY);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
		"application/json");
	ret = MHD_queue_response(con, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void
on_completed(void *cls, struct MHD_Connection *con, void **state,
	enum MHD_RequestTerminationCode toe)
{
	(void)cls, (void)con, (void)toe;
	free(*state);
	*state = NULL;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in lo = {.sin_family = AF_INET};
	const char *cert = NULL, *key = NULL;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;
	sigset_t sigs;
	int ch, sig;

	while ((ch = getopt(argc, argv, "c:k:")) != -1) {
		switch (ch) {
		case 'c': cert = optarg; break;
		case 'k': key = optarg; break;
		default: goto usage;
		}
	}
	if (!cert || !key) {
	usage:
		fprintf(stderr, "usage: webhook-noop -c cert -k key\n");
		return 2;
	}
	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	d = MHD_start_daemon(MHD_USE_POLL | MHD_USE_INTERNAL_POLLING_THREAD |
			MHD_USE_TLS | MHD_USE_ITC,
		0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&lo, MHD_OPTION_THREAD_POOL_SIZE, 2u,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
		MHD_OPTION_HTTPS_MEM_CERT, slurp(cert),
		MHD_OPTION_HTTPS_MEM_KEY, slurp(key),
		MHD_OPTION_HTTPS_PRIORITIES,
		"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2", MHD_OPTION_END);
	if (!d || !(info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT))) {
		fprintf(stderr, "webhook-noop: cannot serve\n");
		return 1;
	}
	printf("%u\n", (unsigned)info->port);
	fflush(stdout);
	while ((sig = sigwaitinfo(&sigs, NULL)) < 0)
		;
	MHD_stop_daemon(d);
	return 0;
}
