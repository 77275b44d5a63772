/* webhook-load: a small HTTPS load client for bench/webhook (libcurl
 * multi): POSTs one body over and over, from C connections kept alive,
 * optionally paced to R requests a second, and prints one JSON line:
 *
 *   {"sent":10000,"ok":10000,"errors":0,"seconds":10.0,"rate":1000.0,
 *    "p50_ms":0.31,"p90_ms":0.40,"p99_ms":0.85,"max_ms":3.1,
 *    "sent_p50_ms":0.30,"sent_p99_ms":0.80}
 *
 * Latency (p50_ms ...) is from the moment a request is due (paced) or
 * handed to curl (unpaced) to its last byte, so a client falling behind
 * shows as latency rather than hiding it; sent_* count from the moment
 * it was handed to curl, the time the request itself took.
 *
 *   webhook-load -u URL -b BODYFILE [-n max] [-d seconds] [-c conns]
 *                [-r rate] [-a cacert] [-C cert -K key] [-s status]
 *                [-o file]
 *
 * -s is the HTTP status that counts as ok (default 200; 201 for creates);
 * -o appends each request's time (sent, ms) to file, one a line.
 * Before the clock starts, each connection is opened (its TLS handshake)
 * and used once, unmeasured: the connections measured are kept-alive
 * ones, as the API server's are. */
#include <sys/timerfd.h>

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "../lib/clock.h"

struct conn {
	CURL *h;
	double due;   /* when its request was due */
	double start; /* when it was handed to curl */
	int busy;
};

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n;

	if (!f) {
		perror(path);
		exit(1);
	}
	*len = 0;
	do {
		buf = realloc(buf, cap += 1 << 20);
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n);
	fclose(f);
	return buf;
}

/* arm sets the timer to fire at monotonic time t (0: disarm). */
static void
arm(int tfd, double t)
{
	struct itimerspec it = {{0, 0}, {0, 0}};

	if (t > 0) {
		it.it_value.tv_sec = (time_t)t;
		it.it_value.tv_nsec = (long)((t - (double)it.it_value.tv_sec) *
			1e9);
		if (!it.it_value.tv_sec && !it.it_value.tv_nsec)
			it.it_value.tv_nsec = 1;
	}
	timerfd_settime(tfd, TFD_TIMER_ABSTIME, &it, NULL);
}

/* wait_for sleeps until a transfer has news or the next request is due
 * at monotonic time `due` (0: none paced). The due time is a timerfd
 * polled with curl's sockets: exact to the microsecond without spinning,
 * so the client leaves the CPU to the server under test (a poll timeout
 * in whole milliseconds either sleeps too long or spins). */
static void
wait_for(CURLM *m, int tfd, double due)
{
	struct curl_waitfd w = {tfd, CURL_WAIT_POLLIN, 0};
	uint64_t fired;

	arm(tfd, due);
	curl_multi_poll(m, &w, 1, 1000, NULL);
	if (w.revents && read(tfd, &fired, sizeof fired) < 0)
		fired = 0;
}

/* prime sends one request on each connection, all at once, and waits
 * for them: connections opened, handshakes done, before any is timed. */
static void
prime(CURLM *m, struct conn *c, long conns, int tfd)
{
	CURLMsg *msg;
	int running, left;
	long i;

	for (i = 0; i < conns; i++)
		curl_multi_add_handle(m, c[i].h);
	do {
		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &left)))
			if (msg->msg == CURLMSG_DONE)
				curl_multi_remove_handle(m, msg->easy_handle);
		if (running)
			wait_for(m, tfd, 0);
	} while (running);
}

static int
by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
pct(const double *v, long n, double p)
{
	long i = (long)(p * (double)n);

	if (!n)
		return 0;
	return v[i >= n ? n - 1 : i];
}

static void
dump(const char *path, const double *v, long n)
{
	FILE *f = fopen(path, "a");
	long i;

	if (!f) {
		perror(path);
		exit(1);
	}
	for (i = 0; i < n; i++)
		fprintf(f, "%.3f\n", v[i]);
	if (fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static void
usage(void)
{
	fputs("usage: webhook-load -u URL -b BODYFILE [-n max] [-d seconds] "
	      "[-c conns] [-r rate] [-a cacert] [-C cert -K key] [-s status] "
	      "[-o file]\n",
		stderr);
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *url = NULL, *bodyfile = NULL, *ca = NULL, *cert = NULL,
		   *key = NULL, *out = NULL;
	long max = 1000000000L, conns = 8, want = 200, sent = 0, ok = 0,
	     bad = 0;
	double secs = 10, rate = 0, t0, end, next, *lat, *svc;
	struct curl_slist *hdrs;
	struct conn *c;
	CURLMsg *msg;
	CURLM *m;
	size_t blen;
	char *body;
	long i, code, nlat = 0, busy = 0;
	int ch, running, left, tfd;

	while ((ch = getopt(argc, argv, "u:b:n:d:c:r:a:C:K:s:o:")) != -1) {
		switch (ch) {
		case 'u': url = optarg; break;
		case 'b': bodyfile = optarg; break;
		case 'n': max = atol(optarg); break;
		case 'd': secs = atof(optarg); break;
		case 'c': conns = atol(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 'a': ca = optarg; break;
		case 'C': cert = optarg; break;
		case 'K': key = optarg; break;
		case 's': want = atol(optarg); break;
		case 'o': out = optarg; break;
		default: usage();
		}
	}
	if (!url || !bodyfile || conns < 1)
		usage();
	body = slurp(bodyfile, &blen);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	m = curl_multi_init();
	/* The cache otherwise shrinks with the handles in flight (four per
	 * handle added), and a paced run, with few in flight, would close and
	 * open connections (a TLS handshake each) as the API server does not.
	 */
	curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, conns);
	hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	c = calloc((size_t)conns, sizeof *c);
	lat = malloc(sizeof *lat * (size_t)(max < 4000000 ? max : 4000000));
	svc = malloc(sizeof *svc * (size_t)(max < 4000000 ? max : 4000000));
	for (i = 0; i < conns; i++) {
		c[i].h = curl_easy_init();
		curl_easy_setopt(c[i].h, CURLOPT_URL, url);
		curl_easy_setopt(c[i].h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c[i].h, CURLOPT_POSTFIELDSIZE, (long)blen);
		curl_easy_setopt(c[i].h, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(c[i].h, CURLOPT_WRITEFUNCTION, discard);
		curl_easy_setopt(c[i].h, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c[i].h, CURLOPT_PRIVATE, &c[i]);
		if (ca)
			curl_easy_setopt(c[i].h, CURLOPT_CAINFO, ca);
		if (cert)
			curl_easy_setopt(c[i].h, CURLOPT_SSLCERT, cert);
		if (key)
			curl_easy_setopt(c[i].h, CURLOPT_SSLKEY, key);
	}
	if ((tfd = timerfd_create(CLOCK_MONOTONIC,
		     TFD_CLOEXEC | TFD_NONBLOCK)) < 0) {
		perror("timerfd_create");
		return 1;
	}
	prime(m, c, conns, tfd);
	t0 = next = clock_mono();
	end = t0 + secs;
	for (;;) {
		double t = clock_mono();

		for (i = 0; i < conns && sent < max && t < end; i++) {
			if (c[i].busy || (rate > 0 && t < next))
				continue;
			c[i].busy = 1;
			busy++;
			c[i].due = rate > 0 ? next : t;
			c[i].start = t;
			next += rate > 0 ? 1.0 / rate : 0;
			curl_multi_add_handle(m, c[i].h);
			sent++;
		}
		curl_multi_perform(m, &running);
		while ((msg = curl_multi_info_read(m, &left))) {
			struct conn *done;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
				(char **)&done);
			curl_easy_getinfo(msg->easy_handle,
				CURLINFO_RESPONSE_CODE, &code);
			if (msg->data.result == CURLE_OK && code == want)
				ok++;
			else if (bad++ < 3)
				fprintf(stderr, "webhook-load: %s (HTTP %ld)\n",
					curl_easy_strerror(msg->data.result),
					code);
			if (nlat < 4000000) {
				svc[nlat] = (clock_mono() - done->start) * 1000;
				lat[nlat++] = (clock_mono() - done->due) * 1000;
			}
			curl_multi_remove_handle(m, msg->easy_handle);
			done->busy = 0;
			busy--;
		}
		if (!running && (sent >= max || clock_mono() >= end))
			break;
		if (busy < conns && sent < max && clock_mono() < end) {
			if (rate <= 0 || next <= clock_mono())
				continue; /* a connection is free, a request due
					   */
			wait_for(m, tfd, next);
		} else {
			wait_for(m, tfd, 0); /* until a transfer has news */
		}
	}
	secs = clock_mono() - t0;
	if (out)
		dump(out, svc, nlat);
	qsort(lat, (size_t)nlat, sizeof *lat, by_value);
	qsort(svc, (size_t)nlat, sizeof *svc, by_value);
	printf("{\"sent\":%ld,\"ok\":%ld,\"errors\":%ld,\"seconds\":%.2f,"
	       "\"rate\":%.1f,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,"
	       "\"max_ms\":%.3f,\"sent_p50_ms\":%.3f,\"sent_p99_ms\":%.3f}\n",
		sent, ok, bad, secs, (double)sent / secs, pct(lat, nlat, 0.50),
		pct(lat, nlat, 0.90), pct(lat, nlat, 0.99),
		nlat ? lat[nlat - 1] : 0.0, pct(svc, nlat, 0.50),
		pct(svc, nlat, 0.99));
	for (i = 0; i < conns; i++)
		curl_easy_cleanup(c[i].h);
	curl_multi_cleanup(m);
	close(tfd);
	curl_slist_free_all(hdrs);
	curl_global_cleanup();
	free(c);
	free(lat);
	free(svc);
	free(body);
	return bad ? 1 : 0;
}
