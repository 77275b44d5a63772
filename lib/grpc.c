/* grpc: a unary gRPC server on nghttp2, one thread per connection (see
 * grpc.h for the rules it keeps).
 *
 * Threads: the accept thread owns the list of connections; it starts a
 * thread per connection and joins those that have ended each time it
 * wakes. grpc_stop wakes every thread at once through the stop pipe, which
 * it writes once and nobody reads (it stays readable), then joins them.
 * A connection thread owns its socket, its nghttp2 session and its
 * streams; nothing else touches them. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "err.h"
#include "hex.h"
#include "grpc.h"

#define PREFIX 5 /* compressed flag + 4-byte big-endian length */
#define READ_CHUNK 16384

/* One request stream, from its HEADERS to its close. */
struct gstream {
	struct conn *c;
	int32_t id;
	char *path;
	int post;      /* :method was POST */
	int grpc_type; /* content-type was gRPC's */
	int answered;  /* the answer is submitted: further input is dropped */
	uint8_t *in;   /* the request body, at most PREFIX + GS_MAX_MESSAGE */
	size_t inlen, incap;
	uint64_t total; /* body bytes received, kept or not */
	uint8_t *out;   /* the answer's DATA: prefix + message */
	size_t outlen, outoff;
	struct gstream *prev, *next;
};

struct conn {
	struct grpc_server *s;
	int fd;
	pthread_t th;
	int done; /* the thread has ended (under s->mu) */
	nghttp2_session *h2;
	struct gstream *streams;
	uint32_t goaway_error; /* our GOAWAY's error code, once sent */
	int peer_goaway;       /* the peer said goodbye (GOAWAY) first */
	char why[160];         /* nghttp2's last word on a bad frame */
	struct conn *next;
};

struct grpc_server {
	int fd;
	int stop[2]; /* written once by grpc_stop, never read */
	const struct grpc_method *methods;
	char *name;
	pthread_t th;
	pthread_mutex_t mu;
	struct conn *conns;
};

/* ---- percent-encoding (grpc-message) -------------------------------- */

char *
grpc_percent_encode(const char *msg)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	char *out, *q;

	out = q = emalloc(strlen(msg) * 3 + 1);
	for (p = (const unsigned char *)msg; *p; p++) {
		if (*p >= 0x20 && *p <= 0x7e && *p != '%') {
			*q++ = (char)*p;
			continue;
		}
		*q++ = '%';
		*q++ = hex[*p >> 4];
		*q++ = hex[*p & 15];
	}
	*q = '\0';
	return out;
}

char *
grpc_percent_decode(char *s)
{
	char *r = s, *w = s;
	int hi, lo;

	while (*r) {
		if (r[0] == '%' && (hi = hex_digit(r[1])) >= 0 &&
			(lo = hex_digit(r[2])) >= 0) {
			*w++ = (char)(hi << 4 | lo);
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return s;
}

/* ---- the socket ------------------------------------------------------ */

int
grpc_listen(const char *path, char *why, size_t n)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof sa.sun_path) {
		snprintf(why, n, "%s: socket path too long", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(why, n, "%s: exists and is not a socket",
				path);
			return -1;
		}
		if (unlink(path) < 0 && errno != ENOENT) {
			snprintf(why, n, "%s: cannot remove the old socket: %s",
				path, strerror(errno));
			return -1;
		}
	} else if (errno != ENOENT) {
		snprintf(why, n, "%s: %s", path, strerror(errno));
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, n, "socket: %s", strerror(errno));
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
		chmod(path, 0660) < 0 || listen(fd, 64) < 0) {
		snprintf(why, n, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- streams --------------------------------------------------------- */

static void
stream_free(struct gstream *st)
{
	struct conn *c = st->c;

	if (st->prev)
		st->prev->next = st->next;
	else
		c->streams = st->next;
	if (st->next)
		st->next->prev = st->prev;
	free(st->path);
	free(st->in);
	free(st->out);
	free(st);
}

/* trailers_only answers st with one HEADERS frame ending the stream:
 * grpc-status code and, when msg is not NULL, grpc-message. */
static int
trailers_only(struct gstream *st, int code, const char *msg)
{
	char status[16];
	char *enc = msg ? grpc_percent_encode(msg) : NULL;
	nghttp2_nv nv[4] = {
		{(uint8_t *)":status", (uint8_t *)"200", 7, 3, 0},
		{(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12,
			16, 0},
		{(uint8_t *)"grpc-status", (uint8_t *)status, 11, 0, 0},
		{(uint8_t *)"grpc-message", (uint8_t *)enc, 12, 0, 0},
	};
	int rv;

	nv[2].valuelen = (size_t)snprintf(status, sizeof status, "%d", code);
	if (enc)
		nv[3].valuelen = strlen(enc);
	rv = nghttp2_submit_response(st->c->h2, st->id, nv, enc ? 4 : 3, NULL);
	free(enc);
	return rv;
}

/* read_answer hands nghttp2 the answer's DATA; at its end it submits the
 * trailers (grpc-status 0), which end the stream. */
static ssize_t
read_answer(nghttp2_session *h2, int32_t id, uint8_t *buf, size_t length,
	uint32_t *flags, nghttp2_data_source *src, void *user)
{
	static const nghttp2_nv ok[] = {
		{(uint8_t *)"grpc-status", (uint8_t *)"0", 11, 1, 0},
	};
	struct gstream *st = src->ptr;
	size_t n = st->outlen - st->outoff;

	(void)user;
	if (n > length)
		n = length;
	memcpy(buf, st->out + st->outoff, n);
	st->outoff += n;
	if (st->outoff == st->outlen) {
		*flags |= NGHTTP2_DATA_FLAG_EOF |
			NGHTTP2_DATA_FLAG_NO_END_STREAM;
		if (nghttp2_submit_trailer(h2, id, ok, 1) != 0)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	return (ssize_t)n;
}

static const struct grpc_method *
find_method(const struct grpc_method *m, const char *path)
{
	for (; m->path; m++)
		if (strcmp(m->path, path) == 0)
			return m;
	return NULL;
}

static int say(char *why, size_t n, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* say writes the message into why and returns code. */
static int
say(char *why, size_t n, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return code;
}

/* framing_error checks that st's body is exactly one uncompressed message
 * within the limit; returns 0, or a gRPC status with its message in why. */
static int
framing_error(const struct gstream *st, char *why, size_t n)
{
	unsigned long len;

	if (st->total == 0)
		return say(why, n, GS_INTERNAL, "request has no message");
	if (st->total < PREFIX)
		return say(why, n, GS_INTERNAL,
			"truncated message prefix: %u of 5 bytes",
			(unsigned)st->total);
	if (st->in[0] == 1)
		return say(why, n, GS_UNIMPLEMENTED,
			"compressed messages are not supported");
	if (st->in[0] != 0)
		return say(why, n, GS_INTERNAL, "bad message flag %u",
			(unsigned)st->in[0]);
	len = (unsigned long)st->in[1] << 24 | (unsigned long)st->in[2] << 16 |
		(unsigned long)st->in[3] << 8 | st->in[4];
	if (len > GS_MAX_MESSAGE)
		return say(why, n, GS_RESOURCE_EXHAUSTED,
			"request message of %lu bytes is over the limit of %u",
			len, GS_MAX_MESSAGE);
	if (st->total < PREFIX + (uint64_t)len)
		return say(why, n, GS_INTERNAL,
			"truncated message: %llu of %lu bytes",
			(unsigned long long)(st->total - PREFIX), len);
	if (st->total > PREFIX + (uint64_t)len)
		return say(why, n, GS_INVALID_ARGUMENT,
			"more than one request message");
	return 0;
}

/* answer runs st's handler, or says what is wrong with st, once its
 * request has ended; 0, or an nghttp2 error (fatal to the session). */
static int
answer(struct gstream *st)
{
	static const nghttp2_nv unsupported[] = {
		{(uint8_t *)":status", (uint8_t *)"415", 7, 3, 0},
	};
	static const nghttp2_nv ok[] = {
		{(uint8_t *)":status", (uint8_t *)"200", 7, 3, 0},
		{(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12,
			16, 0},
	};
	const struct grpc_method *m;
	nghttp2_data_provider prd;
	uint8_t *resp = NULL;
	size_t resp_len = 0;
	char why[128], *msg = NULL;
	int code, rv;

	st->answered = 1;
	if (!st->post || !st->grpc_type)
		return nghttp2_submit_response(st->c->h2, st->id, unsupported,
			1, NULL);
	m = st->path ? find_method(st->c->s->methods, st->path) : NULL;
	if (!m) {
		msg = easprintf("unknown method %s",
			st->path ? st->path : "(none)");
		rv = trailers_only(st, GS_UNIMPLEMENTED, msg);
		free(msg);
		return rv;
	}
	if ((code = framing_error(st, why, sizeof why)) != 0)
		return trailers_only(st, code, why);

	code = m->fn(m->arg, st->in + PREFIX, st->inlen - PREFIX, &resp,
		&resp_len, &msg);
	free(st->in);
	st->in = NULL;
	if (code != 0) {
		free(resp);
		rv = trailers_only(st,
			code > 0 && code <= 16 ? code : GS_UNKNOWN, msg);
		free(msg);
		return rv;
	}
	free(msg);
	st->outlen = PREFIX + resp_len;
	st->out = emalloc(st->outlen);
	st->out[0] = 0;
	st->out[1] = (uint8_t)(resp_len >> 24);
	st->out[2] = (uint8_t)(resp_len >> 16);
	st->out[3] = (uint8_t)(resp_len >> 8);
	st->out[4] = (uint8_t)resp_len;
	if (resp_len)
		memcpy(st->out + PREFIX, resp, resp_len);
	free(resp);
	prd.source.ptr = st;
	prd.read_callback = read_answer;
	return nghttp2_submit_response(st->c->h2, st->id, ok, 2, &prd);
}

/* ---- nghttp2 callbacks ----------------------------------------------- */

static ssize_t
on_send(nghttp2_session *h2, const uint8_t *data, size_t len, int flags,
	void *user)
{
	struct conn *c = user;
	ssize_t n;

	(void)h2, (void)flags;
	do
		n = send(c->fd, data, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK
			? NGHTTP2_ERR_WOULDBLOCK
			: NGHTTP2_ERR_CALLBACK_FAILURE;
	return n;
}

static int
on_begin_headers(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
	struct conn *c = user;
	struct gstream *st;

	if (f->hd.type != NGHTTP2_HEADERS ||
		f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = ecalloc(1, sizeof *st);
	st->c = c;
	st->id = f->hd.stream_id;
	st->next = c->streams;
	if (c->streams)
		c->streams->prev = st;
	c->streams = st;
	nghttp2_session_set_stream_user_data(h2, st->id, st);
	return 0;
}

static int
is_grpc_type(const uint8_t *v, size_t n)
{
	return (n == 16 && memcmp(v, "application/grpc", 16) == 0) ||
		(n == 22 && memcmp(v, "application/grpc+proto", 22) == 0);
}

static int
on_header(nghttp2_session *h2, const nghttp2_frame *f, const uint8_t *name,
	size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
	void *user)
{
	struct gstream *st;

	(void)flags, (void)user;
	if (f->hd.type != NGHTTP2_HEADERS ||
		f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	st = nghttp2_session_get_stream_user_data(h2, f->hd.stream_id);
	if (!st)
		return 0;
	if (namelen == 7 && memcmp(name, ":method", 7) == 0)
		st->post = valuelen == 4 && memcmp(value, "POST", 4) == 0;
	else if (namelen == 5 && memcmp(name, ":path", 5) == 0 && !st->path)
		st->path = strndup((const char *)value, valuelen);
	else if (namelen == 12 && memcmp(name, "content-type", 12) == 0)
		st->grpc_type = is_grpc_type(value, valuelen);
	return 0;
}

/* on_data keeps the body up to one message over the limit's worth; the
 * rest is only counted (flow control windows are given back by nghttp2
 * all the same). */
static int
on_data(nghttp2_session *h2, uint8_t flags, int32_t id, const uint8_t *data,
	size_t len, void *user)
{
	struct gstream *st = nghttp2_session_get_stream_user_data(h2, id);
	size_t room, keep;

	(void)flags, (void)user;
	if (!st || st->answered)
		return 0;
	st->total += len;
	room = PREFIX + GS_MAX_MESSAGE - st->inlen;
	keep = len < room ? len : room;
	if (!keep)
		return 0;
	if (st->inlen + keep > st->incap) {
		size_t cap = st->incap ? st->incap : 256;

		while (cap < st->inlen + keep)
			cap *= 2;
		if (cap > PREFIX + GS_MAX_MESSAGE)
			cap = PREFIX + GS_MAX_MESSAGE;
		st->in = erealloc(st->in, cap);
		st->incap = cap;
	}
	memcpy(st->in + st->inlen, data, keep);
	st->inlen += keep;
	return 0;
}

static int
on_frame_recv(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
	struct gstream *st;

	(void)user;
	if ((f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) ||
		!(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	st = nghttp2_session_get_stream_user_data(h2, f->hd.stream_id);
	if (!st || st->answered)
		return 0;
	if (answer(st) != 0)
		nghttp2_submit_rst_stream(h2, NGHTTP2_FLAG_NONE, st->id,
			NGHTTP2_INTERNAL_ERROR);
	return 0;
}

static int
on_stream_close(nghttp2_session *h2, int32_t id, uint32_t error, void *user)
{
	struct gstream *st = nghttp2_session_get_stream_user_data(h2, id);

	(void)error, (void)user;
	if (st)
		stream_free(st);
	return 0;
}

static int
on_frame_send(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
	struct conn *c = user;

	(void)h2;
	if (f->hd.type == NGHTTP2_GOAWAY && f->goaway.error_code)
		c->goaway_error = f->goaway.error_code;
	return 0;
}

/* on_invalid notes a GOAWAY of the peer's that nghttp2 refused: grpc-go
 * closing a client connection (the kubelet after registering) names its
 * own last stream in it, which a server's session takes for a protocol
 * error. The peer is leaving either way: nothing to report. */
static int
on_invalid(nghttp2_session *h2, const nghttp2_frame *f, int lib, void *user)
{
	struct conn *c = user;

	(void)h2, (void)lib;
	if (f->hd.type == NGHTTP2_GOAWAY)
		c->peer_goaway = 1;
	return 0;
}

static int
on_error(nghttp2_session *h2, int code, const char *msg, size_t len, void *user)
{
	struct conn *c = user;

	(void)h2, (void)code;
	snprintf(c->why, sizeof c->why, "%.*s", (int)len, msg);
	return 0;
}

/* ---- a connection ---------------------------------------------------- */

/* serve runs c's session until the peer leaves, the session ends or the
 * server stops; it logs at most once why the connection was closed. */
static void
serve(struct conn *c)
{
	struct pollfd pfd[2];
	uint8_t buf[READ_CHUNK];
	ssize_t n, rv;
	char why[64] = "";

	for (;;) {
		if (nghttp2_session_send(c->h2) != 0)
			break; /* the peer is gone */
		if (!nghttp2_session_want_read(c->h2) &&
			!nghttp2_session_want_write(c->h2))
			break;
		pfd[0].fd = c->fd;
		pfd[0].events = (nghttp2_session_want_read(c->h2) ? POLLIN
								  : 0) |
			(nghttp2_session_want_write(c->h2) ? POLLOUT : 0);
		pfd[1].fd = c->s->stop[0];
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents) {
			nghttp2_session_terminate_session(c->h2,
				NGHTTP2_NO_ERROR);
			nghttp2_session_send(c->h2);
			return;
		}
		if (!(pfd[0].revents & POLLIN)) {
			if (pfd[0].revents & (POLLERR | POLLHUP | POLLNVAL))
				break;
			continue;
		}
		n = read(c->fd, buf, sizeof buf);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			break;
		}
		rv = nghttp2_session_mem_recv(c->h2, buf, (size_t)n);
		if (rv < 0) {
			snprintf(why, sizeof why, "%s",
				rv == NGHTTP2_ERR_BAD_CLIENT_MAGIC
					? "no HTTP/2 client preface"
					: rv == NGHTTP2_ERR_FLOODED
					? "flooded with frames"
					: nghttp2_strerror((int)rv));
			why[0] = (char)tolower((unsigned char)why[0]);
			nghttp2_session_terminate_session(c->h2,
				NGHTTP2_PROTOCOL_ERROR);
			nghttp2_session_send(c->h2);
			break;
		}
	}
	if (*why)
		err_warn("%s: closed a connection: %s", c->s->name, why);
	else if (c->goaway_error && !c->peer_goaway)
		err_warn("%s: closed a connection: %s%s%s", c->s->name,
			nghttp2_http2_strerror(c->goaway_error),
			*c->why ? ": " : "", c->why);
}

static void *
conn_main(void *arg)
{
	nghttp2_settings_entry iv = {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS,
		100};
	struct conn *c = arg;
	nghttp2_session_callbacks *cb;

	if (nghttp2_session_callbacks_new(&cb) != 0)
		goto out;
	nghttp2_session_callbacks_set_send_callback(cb, on_send);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb,
		on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb,
		on_stream_close);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
	nghttp2_session_callbacks_set_error_callback2(cb, on_error);
	nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb,
		on_invalid);
	if (nghttp2_session_server_new(&c->h2, cb, c) == 0) {
		if (nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, &iv, 1) ==
			0)
			serve(c);
		nghttp2_session_del(c->h2);
	}
	nghttp2_session_callbacks_del(cb);
	/* nghttp2_session_del does not call on_stream_close */
	while (c->streams)
		stream_free(c->streams);
out:
	close(c->fd);
	pthread_mutex_lock(&c->s->mu);
	c->done = 1;
	pthread_mutex_unlock(&c->s->mu);
	return NULL;
}

/* ---- the server ------------------------------------------------------ */

/* reap joins and frees the connections whose thread has ended; with all,
 * every connection, waiting for each (grpc_stop, once the stop pipe is
 * written). */
static void
reap(struct grpc_server *s, int all)
{
	struct conn **pp = &s->conns, *c;
	int done;

	while ((c = *pp)) {
		pthread_mutex_lock(&s->mu);
		done = c->done;
		pthread_mutex_unlock(&s->mu);
		if (!done && !all) {
			pp = &c->next;
			continue;
		}
		pthread_join(c->th, NULL);
		*pp = c->next;
		free(c);
	}
}

static void *
accept_main(void *arg)
{
	struct grpc_server *s = arg;
	struct pollfd pfd[2] = {{s->fd, POLLIN, 0}, {s->stop[0], POLLIN, 0}};
	struct timespec pause = {0, 100 * 1000 * 1000};
	struct conn *c;
	int fd, err, complained = 0;

	for (;;) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		reap(s, 0);
		if (!(pfd[0].revents & POLLIN))
			continue;
		fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR ||
				errno == ECONNABORTED)
				continue;
			if (!complained++)
				err_warn("%s: accept:", s->name);
			nanosleep(&pause,
				NULL); /* out of fds: let some close */
			continue;
		}
		complained = 0;
		c = ecalloc(1, sizeof *c);
		c->s = s;
		c->fd = fd;
		if ((err = pthread_create(&c->th, NULL, conn_main, c)) != 0) {
			errno = err;
			err_warn("%s: cannot start a connection thread:",
				s->name);
			close(fd);
			free(c);
			continue;
		}
		c->next = s->conns;
		s->conns = c;
	}
	return NULL;
}

struct grpc_server *
grpc_start(int fd, const struct grpc_method *methods, const char *name)
{
	struct grpc_server *s = ecalloc(1, sizeof *s);
	sigset_t all, old;
	int err, fl;

	s->fd = fd;
	s->methods = methods;
	s->name = estrdup(name);
	if (pipe2(s->stop, O_CLOEXEC) < 0) {
		err_warn("%s: pipe:", name);
		free(s->name);
		free(s);
		return NULL;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	pthread_mutex_init(&s->mu, NULL);
	/* the threads (and the connection threads they start) inherit a
	 * mask with every signal blocked: signals go to the caller's thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&s->th, NULL, accept_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		errno = err;
		err_warn("%s: cannot start the accept thread:", name);
		close(s->stop[0]);
		close(s->stop[1]);
		pthread_mutex_destroy(&s->mu);
		free(s->name);
		free(s);
		return NULL;
	}
	return s;
}

void
grpc_stop(struct grpc_server *s)
{
	ssize_t n;

	if (!s)
		return;
	do
		n = write(s->stop[1], "x", 1);
	while (n < 0 && errno == EINTR);
	pthread_join(s->th, NULL);
	reap(s, 1);
	close(s->fd);
	close(s->stop[0]);
	close(s->stop[1]);
	pthread_mutex_destroy(&s->mu);
	free(s->name);
	free(s);
}
