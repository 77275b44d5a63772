/* grpcc: a unary gRPC call on a unix socket (see grpcc.h). */
#include "grpcc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "clock.h"
#include "err.h"
#include "grpc.h"

#define PREFIX 5 /* compressed flag, 4-byte big-endian length */
#define MAX_BODY (PREFIX + GRPCC_MAX_MESSAGE)

/* One call: what goes out, and what came back so far. */
struct call {
	int fd;
	int32_t id;
	int closed;     /* our stream has ended */
	uint32_t reset; /* the code it ended with (0: NO_ERROR) */
	int http;       /* :status, 0 until seen */
	char *status;   /* grpc-status, as sent */
	char *message;  /* grpc-message, still percent-encoded */
	uint8_t *body;  /* DATA, at most MAX_BODY bytes */
	size_t len, cap;
	int too_big;        /* the answer's message is over the limit */
	int send_errno;     /* why on_send failed */
	const uint8_t *out; /* the request body: prefix and message */
	size_t outlen, outoff;
};

/* fail sets *msg and errno (e) and returns -1. */
static int __attribute__((format(printf, 3, 4)))
fail(char **msg, int e, const char *fmt, ...)
{
	va_list ap;

	free(*msg);
	va_start(ap, fmt);
	if (vasprintf(msg, fmt, ap) < 0)
		*msg = estrdup("out of memory");
	va_end(ap);
	errno = e;
	return -1;
}

/* ---- nghttp2 callbacks ----------------------------------------------- */

static ssize_t
on_send(nghttp2_session *h2, const uint8_t *data, size_t len, int flags,
	void *user)
{
	struct call *c = user;
	ssize_t n;

	(void)h2, (void)flags;
	n = send(c->fd, data, len, MSG_NOSIGNAL);
	if (n >= 0)
		return n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return NGHTTP2_ERR_WOULDBLOCK;
	c->send_errno = errno;
	return NGHTTP2_ERR_CALLBACK_FAILURE;
}

static ssize_t
read_request(nghttp2_session *h2, int32_t id, uint8_t *buf, size_t length,
	uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct call *c = user;
	size_t n = c->outlen - c->outoff;

	(void)h2, (void)id, (void)src;
	if (n > length)
		n = length;
	memcpy(buf, c->out + c->outoff, n);
	c->outoff += n;
	if (c->outoff == c->outlen)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int
named(const uint8_t *name, size_t len, const char *want)
{
	return len == strlen(want) && memcmp(name, want, len) == 0;
}

static int
on_header(nghttp2_session *h2, const nghttp2_frame *f, const uint8_t *name,
	size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
	void *user)
{
	struct call *c = user;
	char **to = NULL;

	(void)h2, (void)flags;
	if (f->hd.stream_id != c->id)
		return 0;
	if (named(name, namelen, ":status") &&
		f->headers.cat == NGHTTP2_HCAT_RESPONSE) {
		c->http = valuelen == 3 ? atoi((const char *)value) : -1;
		return 0;
	}
	if (named(name, namelen, "grpc-status"))
		to = &c->status;
	else if (named(name, namelen, "grpc-message"))
		to = &c->message;
	if (to) {
		free(*to);
		*to = strndup((const char *)value, valuelen);
		if (!*to)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	return 0;
}

/* on_data keeps the body, and stops the call as soon as the message it
 * announces, or the body itself, is over the limit: nothing that large
 * is ever held. */
static int
on_data(nghttp2_session *h2, uint8_t flags, int32_t id, const uint8_t *data,
	size_t len, void *user)
{
	struct call *c = user;
	size_t announced;

	(void)h2, (void)flags;
	if (id != c->id)
		return 0;
	if (len > MAX_BODY - c->len) {
		c->too_big = 1;
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	}
	if (c->len + len > c->cap) {
		c->cap = c->cap ? c->cap : 4096;
		while (c->cap < c->len + len)
			c->cap *= 2;
		c->body = erealloc(c->body, c->cap);
	}
	memcpy(c->body + c->len, data, len);
	c->len += len;
	if (c->len >= PREFIX) {
		announced = (size_t)c->body[1] << 24 |
			(size_t)c->body[2] << 16 | (size_t)c->body[3] << 8 |
			c->body[4];
		if (announced > GRPCC_MAX_MESSAGE) {
			c->too_big = 1;
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		}
	}
	return 0;
}

static int
on_stream_close(nghttp2_session *h2, int32_t id, uint32_t error, void *user)
{
	struct call *c = user;

	(void)h2;
	if (id == c->id) {
		c->closed = 1;
		c->reset = error;
	}
	return 0;
}

/* ---- the call -------------------------------------------------------- */

/* dial connects to the unix socket sock; the fd is non-blocking. */
static int
dial(const char *sock, char **msg)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, e;

	if (strlen(sock) >= sizeof sa.sun_path)
		return fail(msg, ENAMETOOLONG, "%s: socket path too long",
			sock);
	strcpy(sa.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(msg, errno, "socket: %s", strerror(errno));
	/* a local connect either works or fails at once; only then is the
	 * fd made non-blocking, for the exchange */
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
		fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
		e = errno;
		close(fd);
		return fail(msg, e, "connect to %s: %s", sock, strerror(e));
	}
	return fd;
}

/* exchange sends and receives until the stream ends (0), the deadline
 * (0: none) passes or the connection fails (-1, *msg and errno set). */
static int
exchange(nghttp2_session *h2, struct call *c, long deadline, int timeout_ms,
	char **msg)
{
	uint8_t buf[16384];
	struct pollfd p;
	ssize_t n;
	int left, rv;

	for (;;) {
		if ((rv = nghttp2_session_send(h2)) != 0)
			return c->send_errno == EPIPE ||
					c->send_errno == ECONNRESET
				? fail(msg, ECONNRESET,
					  "the server closed the connection")
				: fail(msg, EIO, "send: %s",
					  c->send_errno
						  ? strerror(c->send_errno)
						  : nghttp2_strerror(rv));
		if (c->closed)
			return 0;
		left = -1;
		if (deadline && (left = (int)(deadline - clock_mono_ms())) <= 0)
			return fail(msg, ETIMEDOUT, "no answer in %d ms",
				timeout_ms);
		p.fd = c->fd;
		p.events = POLLIN;
		if (nghttp2_session_want_write(h2))
			p.events |= POLLOUT;
		if ((rv = poll(&p, 1, left)) <= 0) {
			if (rv < 0 && errno != EINTR)
				return fail(msg, EIO, "poll: %s",
					strerror(errno));
			continue;
		}
		if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = recv(c->fd, buf, sizeof buf, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return fail(msg, ECONNRESET,
				"the server closed the connection before "
				"answering");
		rv = (int)nghttp2_session_mem_recv(h2, buf, (size_t)n);
		if (rv < 0)
			return c->too_big
				? fail(msg, EMSGSIZE,
					  "the answer is over the limit of "
					  "%u bytes",
					  GRPCC_MAX_MESSAGE)
				: fail(msg, EPROTO, "HTTP/2: %s",
					  nghttp2_strerror(rv));
	}
}

/* outcome turns a stream that ended into the call's result. */
static int
outcome(struct call *c, uint8_t **resp, size_t *resp_len, char **msg)
{
	size_t n;
	char *end;
	long status;

	if (!c->http)
		return fail(msg, EPROTO, "the stream was reset: %s",
			nghttp2_http2_strerror(c->reset));
	if (c->http != 200)
		return fail(msg, EPROTO, "HTTP status %d, not a gRPC answer",
			c->http);
	if (!c->status)
		return c->reset
			? fail(msg, EPROTO, "the stream was reset: %s",
				  nghttp2_http2_strerror(c->reset))
			: fail(msg, EPROTO, "the answer has no grpc-status");
	status = strtol(c->status, &end, 10);
	if (end == c->status || *end || status < 0 || status > 16)
		return fail(msg, EPROTO, "bad grpc-status \"%.16s\"",
			err_clean(c->status));
	if (status != 0) {
		*msg = c->message ? grpc_percent_decode(c->message)
				  : estrdup("");
		c->message = NULL;
		return (int)status;
	}
	if (c->len < PREFIX)
		return fail(msg, EPROTO, "status 0 without a message");
	if (c->body[0] != 0)
		return fail(msg, EPROTO, "the message is compressed");
	n = (size_t)c->body[1] << 24 | (size_t)c->body[2] << 16 |
		(size_t)c->body[3] << 8 | c->body[4];
	if (n != c->len - PREFIX)
		return fail(msg, EPROTO,
			"the body holds %zu bytes after the prefix, which "
			"announces %zu",
			c->len - PREFIX, n);
	*resp = emalloc(n ? n : 1);
	memcpy(*resp, c->body + PREFIX, n);
	*resp_len = n;
	return 0;
}

/* request_headers fills nv (room for 7 + the caller's) and returns how
 * many; timeout holds grpc-timeout's value. */
static size_t
request_headers(nghttp2_nv *nv, const char *path, const char *const *headers,
	int timeout_ms, char *timeout, size_t timeout_size)
{
#define NV(n, v)                                                               \
	((nghttp2_nv){(uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v),    \
		NGHTTP2_NV_FLAG_NONE})
	size_t k = 0, type;

	nv[k++] = NV(":method", "POST");
	nv[k++] = NV(":scheme", "http");
	nv[k++] = NV(":path", path);
	nv[k++] = NV(":authority", "localhost");
	type = k;
	nv[k++] = NV("content-type", "application/grpc");
	nv[k++] = NV("te", "trailers");
	if (timeout_ms > 0) {
		/* at most 8 digits; past 27 hours, in seconds */
		if (timeout_ms <= 99999999)
			snprintf(timeout, timeout_size, "%dm", timeout_ms);
		else
			snprintf(timeout, timeout_size, "%dS",
				timeout_ms / 1000 + 1);
		nv[k++] = NV("grpc-timeout", timeout);
	}
	for (; headers && headers[0] && headers[1]; headers += 2) {
		if (strcmp(headers[0], "content-type") == 0)
			nv[type] = NV(headers[0], headers[1]);
		else
			nv[k++] = NV(headers[0], headers[1]);
	}
	return k;
#undef NV
}

int
grpcc_call(const char *sock, const char *path, const char *const *headers,
	const uint8_t *req, size_t len, int timeout_ms, uint8_t **resp,
	size_t *resp_len, char **msg)
{
	nghttp2_settings_entry iv[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
		{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20}};
	nghttp2_data_provider prd = {.read_callback = read_request};
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_session *h2 = NULL;
	struct call c = {.fd = -1};
	long deadline = timeout_ms > 0 ? clock_mono_ms() + timeout_ms : 0;
	size_t nh = 0, nnv;
	nghttp2_nv *nv;
	char timeout[16];
	uint8_t *out;
	int rc, e;

	*resp = NULL;
	*resp_len = 0;
	*msg = NULL;
	if (len > UINT32_MAX)
		return fail(msg, EMSGSIZE, "request of %zu bytes", len);
	for (; headers && headers[nh]; nh++)
		;
	if ((c.fd = dial(sock, msg)) < 0)
		return -1;
	out = emalloc(PREFIX + len);
	out[0] = 0;
	out[1] = (uint8_t)(len >> 24);
	out[2] = (uint8_t)(len >> 16);
	out[3] = (uint8_t)(len >> 8);
	out[4] = (uint8_t)len;
	if (len)
		memcpy(out + PREFIX, req, len);
	c.out = out;
	c.outlen = PREFIX + len;
	nv = emalloc((7 + nh / 2) * sizeof *nv);
	nnv = request_headers(nv, path, headers, timeout_ms, timeout,
		sizeof timeout);

	if (nghttp2_session_callbacks_new(&cb) != 0) {
		rc = fail(msg, ENOMEM, "out of memory");
		goto out;
	}
	nghttp2_session_callbacks_set_send_callback(cb, on_send);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb,
		on_stream_close);
	if (nghttp2_session_client_new(&h2, cb, &c) != 0 ||
		nghttp2_submit_settings(h2, NGHTTP2_FLAG_NONE, iv,
			sizeof iv / sizeof *iv) != 0 ||
		nghttp2_session_set_local_window_size(h2, NGHTTP2_FLAG_NONE, 0,
			1 << 24) != 0 ||
		(c.id = nghttp2_submit_request(h2, NULL, nv, nnv, &prd, &c)) <
			0) {
		rc = fail(msg, ENOMEM, "cannot start the HTTP/2 session");
		goto out;
	}
	rc = exchange(h2, &c, deadline, timeout_ms, msg);
	if (rc == 0)
		rc = outcome(&c, resp, resp_len, msg);
	e = errno;
	/* a last GOAWAY, if it fits in the socket now: the server then
	 * sees a client that left, not one that broke */
	if (nghttp2_session_terminate_session(h2,
		    c.closed ? NGHTTP2_NO_ERROR : NGHTTP2_CANCEL) == 0)
		nghttp2_session_send(h2);
	errno = e;
out:
	e = errno;
	nghttp2_session_del(h2);
	nghttp2_session_callbacks_del(cb);
	close(c.fd);
	free(out);
	free(nv);
	free(c.status);
	free(c.message);
	free(c.body);
	errno = e;
	return rc;
}
