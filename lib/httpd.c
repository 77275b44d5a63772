/* httpd: libmicrohttpd daemons over one socket, reloaded on certificate
 * change, stopped gracefully (see httpd.h).
 *
 * A "generation" is one daemon with one certificate pair. The current
 * generation accepts; retired ones only finish their connections. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "clock.h"
#include "err.h"
#include "gate.h"
#include "httpd.h"

#define PEM_MAX (1 << 20)
#define PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

struct gen {
	struct httpd *h;
	struct MHD_Daemon *d;
	int fd;           /* its own dup of the socket; -1 once closed */
	char *cert, *key; /* PEM, NUL-terminated; key wiped on free */
	size_t keylen;
	int inflight;     /* requests begun and not completed (atomic) */
	double retired;   /* when it stopped accepting; 0 while current */
	struct gen *next; /* older generations */
};

struct httpd {
	struct httpd_opts o;
	struct gate *gate; /* every connection, all generations */
	int fd, port;
	unsigned long connections;   /* accepted, all generations (atomic) */
	struct stat cert_st, key_st; /* of the files last tried */
	struct gen *gens;            /* current first */
};

/* One request being gathered. */
struct req {
	struct gen *g;
	char *buf;
	size_t len, cap, dropped;
	int too_large;
};

static int seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- the socket ------------------------------------------------------ */

/* split_listen splits "host:port", "[v6]:port" or ":port". */
static int
split_listen(const char *s, char *host, size_t hn, char *port, size_t pn)
{
	const char *colon;

	if (s[0] == '[') {
		if (!(colon = strstr(s, "]:")) || (size_t)(colon - s - 1) >= hn)
			return -1;
		snprintf(host, hn, "%.*s", (int)(colon - s - 1), s + 1);
		colon++;
	} else {
		if (!(colon = strrchr(s, ':')) || (size_t)(colon - s) >= hn)
			return -1;
		snprintf(host, hn, "%.*s", (int)(colon - s), s);
	}
	if (!colon[1] || strlen(colon + 1) >= pn ||
		strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return -1;
	snprintf(port, pn, "%s", colon + 1);
	return 0;
}

static int
bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	char port[16];

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0 ||
		getnameinfo((struct sockaddr *)&ss, len, NULL, 0, port,
			sizeof port, NI_NUMERICSERV) != 0)
		return -1;
	return atoi(port);
}

/* listen_on returns a listening, non-blocking socket, or -1 with err. */
static int
listen_on(const char *spec, char *err, size_t errlen)
{
	struct addrinfo hints = {0}, *res, *ai;
	char host[256], port[16];
	int fd = -1, one = 1, rc;

	if (split_listen(spec, host, sizeof host, port, sizeof port) < 0)
		return seterr(err, errlen, "%s: expected HOST:PORT", spec);
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((rc = getaddrinfo(*host ? host : NULL, port, &hints, &res)) != 0)
		return seterr(err, errlen, "%s: %s", spec, gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
			listen(fd, 511) == 0 &&
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) ==
				0)
			break;
		seterr(err, errlen, "%s: cannot listen: %s", spec,
			strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* ---- requests --------------------------------------------------------- */

static void
req_add(struct req *r, const char *data, size_t n, size_t max)
{
	if (r->too_large || r->len + n > max) {
		r->too_large = 1;
		r->dropped += n;
		free(r->buf);
		r->buf = NULL;
		r->len = r->cap = 0;
		return;
	}
	if (r->len + n + 1 > r->cap) {
		r->cap = (r->len + n + 1) * 2;
		if (r->cap > max + 1)
			r->cap = max + 1;
		r->buf = erealloc(r->buf, r->cap);
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	r->buf[r->len] = '\0';
}

/* conn_of is the gate's entry of con (NULL if it has none). */
static struct gate_conn *
conn_of(struct MHD_Connection *con)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(con,
		MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

/* respond runs the handler and queues its reply. */
static enum MHD_Result
respond(struct gen *g, struct MHD_Connection *con, const char *url,
	const char *method, struct req *r)
{
	struct httpd_req q = {method, url, r->buf ? r->buf : "", r->len,
		r->too_large};
	struct httpd_reply p = {0};
	struct gate_conn *gc = conn_of(con);
	struct MHD_Response *resp;
	enum MHD_Result ret;

	gate_busy(g->h->gate, gc);
	g->h->o.handler(&q, &p, g->h->o.arg);
	resp = MHD_create_response_from_buffer(p.len, p.body ? p.body : "",
		p.body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		free(p.body);
		gate_replied(g->h->gate, gc);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
		p.content_type ? p.content_type : "application/json");
	ret = MHD_queue_response(con, p.status ? (unsigned)p.status : 200,
		resp);
	MHD_destroy_response(resp);
	gate_replied(g->h->gate, gc);
	return ret;
}

/* declared_too_large says whether Content-Length is over max. */
static int
declared_too_large(struct MHD_Connection *con, size_t max)
{
	const char *cl = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
		MHD_HTTP_HEADER_CONTENT_LENGTH);

	return cl && strtoull(cl, NULL, 10) > max;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *con, const char *url,
	const char *method, const char *version, const char *data, size_t *size,
	void **state)
{
	struct gen *g = cls;
	struct req *r = *state;

	(void)version;
	if (!r) {
		r = ecalloc(1, sizeof *r);
		r->g = g;
		*state = r;
		__atomic_add_fetch(&g->inflight, 1, __ATOMIC_SEQ_CST);
		if (declared_too_large(con, g->h->o.max_body)) {
			r->too_large = 1;
			return respond(g, con, url, method, r);
		}
		return MHD_YES;
	}
	if (*size) {
		req_add(r, data, *size, g->h->o.max_body);
		*size = 0;
		/* an endless body is cut off rather than read for ever */
		return r->dropped > 4 * g->h->o.max_body ? MHD_NO : MHD_YES;
	}
	return respond(g, con, url, method, r);
}

static void
on_completed(void *cls, struct MHD_Connection *con, void **state,
	enum MHD_RequestTerminationCode toe)
{
	struct req *r = *state;

	(void)cls;
	(void)toe;
	if (!r)
		return;
	gate_done(r->g->h->gate, conn_of(con));
	__atomic_sub_fetch(&r->g->inflight, 1, __ATOMIC_SEQ_CST);
	free(r->buf);
	free(r);
	*state = NULL;
}

/* on_connection counts connections as they open (with keep-alive a
 * client sends many requests over one, and the count shows it does) and
 * tells the gate of each: its entry is the connection's socket context. */
static void
on_connection(void *cls, struct MHD_Connection *con, void **socket_context,
	enum MHD_ConnectionNotificationCode code)
{
	struct gen *g = cls;
	const union MHD_ConnectionInfo *fd, *peer;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		gate_close(g->h->gate, *socket_context);
		*socket_context = NULL;
		return;
	}
	__atomic_add_fetch(&g->h->connections, 1, __ATOMIC_RELAXED);
	fd = MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);
	peer = MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	*socket_context = fd ? gate_open(g->h->gate, fd->connect_fd,
				       peer ? peer->client_addr : NULL)
			     : NULL;
}

static void
on_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof msg, fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	err_warn("httpd: %s", msg); /* peers' bytes shown cleaned */
}

/* ---- generations ------------------------------------------------------ */

static void
gen_free(struct gen *g)
{
	if (!g)
		return;
	if (g->d)
		MHD_stop_daemon(g->d);
	if (g->fd >= 0)
		close(g->fd);
	if (g->key)
		memset(g->key, 0, g->keylen);
	free(g->key);
	free(g->cert);
	free(g);
}

/* slurp reads a whole PEM file into a malloc'd NUL-terminated buffer. */
static char *
slurp(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;

	if (!f) {
		seterr(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	buf = emalloc(PEM_MAX + 1);
	n = fread(buf, 1, PEM_MAX + 1, f);
	fclose(f);
	if (n == 0 || n > PEM_MAX) {
		seterr(err, errlen, "%s: %s", path,
			n ? "larger than 1 MiB" : "empty");
		memset(buf, 0, n > PEM_MAX ? PEM_MAX : n);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* gen_start starts a daemon on h's socket with the pair on disk (plain
 * HTTP without a certificate file). The daemon gets a dup of the socket:
 * libmicrohttpd closes the socket it was given when it fails to start (a
 * bad pair), and the one we keep must survive that. It takes up to twice
 * the gate's connections: the gate keeps to its bound by shutting down
 * the connection a new one takes the place of, and libmicrohttpd must
 * have accepted the new one for the gate to see it. */
static struct gen *
gen_start(struct httpd *h, char *err, size_t errlen)
{
	struct gen *g = ecalloc(1, sizeof *g);
	/* poll(2), not epoll: with epoll libmicrohttpd 0.9.75 spins a worker
	 * at full speed for as long as a client sits in the middle of a TLS
	 * handshake (three bytes of a record suffice), until the connection
	 * times out */
	unsigned flags = MHD_USE_POLL | MHD_USE_INTERNAL_POLLING_THREAD |
		MHD_USE_ITC | (h->o.cert_file ? MHD_USE_TLS : 0) |
		(h->o.verbose ? MHD_USE_ERROR_LOG : 0);
	struct MHD_OptionItem tls[] = {
		{MHD_OPTION_HTTPS_MEM_CERT, 0, NULL},
		{MHD_OPTION_HTTPS_MEM_KEY, 0, NULL},
		{MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)PRIORITIES},
		{MHD_OPTION_END, 0, NULL},
	};
	size_t certlen;

	g->h = h;
	g->fd = -1;
	if (h->o.cert_file &&
		(!(g->cert = slurp(h->o.cert_file, &certlen, err, errlen)) ||
			!(g->key = slurp(h->o.key_file, &g->keylen, err,
				  errlen)))) {
		gen_free(g);
		return NULL;
	}
	tls[0].ptr_value = g->cert;
	tls[1].ptr_value = g->key;
	if ((g->fd = fcntl(h->fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		seterr(err, errlen, "dup: %s", strerror(errno));
		gen_free(g);
		return NULL;
	}
	g->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, g,
		MHD_OPTION_EXTERNAL_LOGGER, on_log, NULL,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)g->fd,
		MHD_OPTION_THREAD_POOL_SIZE, h->o.threads,
		MHD_OPTION_CONNECTION_TIMEOUT, h->o.idle_timeout,
		MHD_OPTION_CONNECTION_LIMIT, 2 * h->o.max_connections + 16,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, g,
		MHD_OPTION_ARRAY, h->o.cert_file ? tls : tls + 3,
		MHD_OPTION_END);
	if (!g->d) {
		g->fd = -1; /* closed by libmicrohttpd */
		if (h->o.cert_file)
			seterr(err, errlen,
				"%s, %s: cannot serve with this certificate "
				"and key",
				h->o.cert_file, h->o.key_file);
		else
			seterr(err, errlen, "%s: cannot serve", h->o.listen);
		gen_free(g);
		return NULL;
	}
	return g;
}

/* retire stops g from accepting; its connections go on. The daemon
 * hands its socket back, and it is ours to close. */
static void
retire(struct gen *g)
{
	MHD_socket fd;

	if (!g->retired) {
		fd = MHD_quiesce_daemon(g->d);
		if (fd != MHD_INVALID_SOCKET && fd == g->fd) {
			close(g->fd);
			g->fd = -1;
		}
		g->retired = clock_mono();
	}
}

static unsigned
connections(struct gen *g)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(g->d,
		MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	return i ? i->num_connections : 0;
}

/* reap stops retired generations that are done. */
static void
reap(struct httpd *h)
{
	struct gen **pp = &h->gens, *g;

	while ((g = *pp)) {
		if (g->retired &&
			__atomic_load_n(&g->inflight, __ATOMIC_SEQ_CST) == 0 &&
			(connections(g) == 0 ||
				clock_mono() - g->retired > h->o.drain)) {
			*pp = g->next;
			gen_free(g);
		} else {
			pp = &g->next;
		}
	}
}

/* ---- the server -------------------------------------------------------- */

static int
changed(const struct stat *a, const struct stat *b)
{
	return a->st_mtim.tv_sec != b->st_mtim.tv_sec ||
		a->st_mtim.tv_nsec != b->st_mtim.tv_nsec ||
		a->st_size != b->st_size || a->st_ino != b->st_ino ||
		a->st_dev != b->st_dev;
}

struct httpd *
httpd_start(const struct httpd_opts *o, char *err, size_t errlen)
{
	struct httpd *h = ecalloc(1, sizeof *h);
	struct gate_opts go;

	h->o = *o;
	if (!h->o.threads)
		h->o.threads = 4;
	if (!h->o.max_body)
		h->o.max_body = 8 << 20;
	if (!h->o.idle_timeout)
		h->o.idle_timeout = 120;
	if (!h->o.request_timeout)
		h->o.request_timeout = 10;
	if (!h->o.max_connections)
		h->o.max_connections = 1024;
	if (!h->o.per_ip)
		h->o.per_ip = (h->o.max_connections + 3) / 4;
	if (h->o.drain <= 0)
		h->o.drain = 30;
	go = (struct gate_opts){h->o.max_connections, h->o.per_ip,
		h->o.request_timeout, h->o.idle_timeout};
	if (o->cert_file) {
		stat(o->cert_file, &h->cert_st);
		stat(o->key_file, &h->key_st);
	}
	h->fd = -1;
	if (!(h->gate = gate_new(&go)))
		seterr(err, errlen, "cannot start a thread: %s",
			strerror(errno));
	if (!h->gate || (h->fd = listen_on(o->listen, err, errlen)) < 0 ||
		!(h->gens = gen_start(h, err, errlen))) {
		if (h->fd >= 0)
			close(h->fd);
		gate_free(h->gate);
		free(h);
		return NULL;
	}
	h->port = bound_port(h->fd);
	return h;
}

int
httpd_port(const struct httpd *h)
{
	return h->port;
}

unsigned long
httpd_connections(const struct httpd *h)
{
	return __atomic_load_n(&h->connections, __ATOMIC_RELAXED);
}

int
httpd_tick(struct httpd *h, int force, char *err, size_t errlen)
{
	struct stat c, k;
	struct gen *g;
	int rc = 0;

	if (h->o.cert_file && stat(h->o.cert_file, &c) == 0 &&
		stat(h->o.key_file, &k) == 0 &&
		(force || changed(&c, &h->cert_st) ||
			changed(&k, &h->key_st))) {
		h->cert_st = c;
		h->key_st = k;
		if ((g = gen_start(h, err, errlen))) {
			retire(h->gens);
			g->next = h->gens;
			h->gens = g;
			rc = 1;
		} else {
			rc = -1;
		}
	}
	reap(h);
	return rc;
}

void
httpd_stop(struct httpd *h, double grace)
{
	double until = clock_mono() + grace;
	struct timespec ms10 = {0, 10000000};
	struct gen *g;
	int busy;

	if (!h)
		return;
	for (g = h->gens; g; g = g->next)
		retire(g);
	do {
		busy = 0;
		for (g = h->gens; g; g = g->next)
			busy += __atomic_load_n(&g->inflight, __ATOMIC_SEQ_CST);
		if (busy)
			nanosleep(&ms10, NULL);
	} while (busy && clock_mono() < until);
	while ((g = h->gens)) {
		h->gens = g->next;
		gen_free(g);
	}
	close(h->fd);
	gate_free(h->gate); /* the daemons closed every connection */
	free(h);
}
