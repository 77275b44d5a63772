/* grpc-call: a small gRPC client over a unix socket, on nghttp2's client
 * API, to test lib/grpc (and lib/drapb) from the outside.
 *
 *	grpc-call [-jrv] [-a AUTHORITY] [-t TYPE] [-m METHOD] [-k N]
 *	          [-i SECONDS] [-c MS] SOCKET PATH [FILE]
 *	grpc-call -g SOCKET [FILE]
 *
 * Opens one connection, waits for the server's SETTINGS, then makes N
 * calls (-k, default 1) to PATH on it, each after SECONDS idle (-i); the
 * request is the bytes of FILE (default stdin), read once, sent as one
 * length-prefixed message (-r: as the DATA payload verbatim). For each
 * call it prints
 *	http CODE        when :status is not 200 (and nothing more), or
 *	status N         grpc-status ("status none" when there is none)
 *	message TEXT     grpc-message, percent-decoded, when there is one
 *	the response     the message's bytes in hex on one line, or with -j
 *	                 its JSON (only with status 0)
 * -j: the request is JSON, encoded for PATH's message (GetInfo: no input
 * is read; NotifyRegistrationStatus: {"registered":BOOL,"error":".."};
 * v1 and v1beta1 NodePrepareResources and NodeUnprepareResources:
 * {"claims":[{"namespace","uid","name"}]}), and the response is printed
 * as compact JSON (lib/drapb's shapes; an empty message as {}).
 * -v: every frame of the call first: `headers NAME=VALUE...`, `data LEN`,
 * `trailers NAME=VALUE...`, with ` end` when it ends the stream.
 * -c MS: the first call is cancelled (RST_STREAM CANCEL) after MS
 * milliseconds: it prints `cancelled`.
 * -g: no HTTP/2 at all: FILE's bytes are written as they are, then the
 * frames the server sends are printed (`frame TYPE`, GOAWAY with its
 * error code) until it closes the connection: `closed`.
 * A connection the server closes before a call's end prints `connection
 * closed`; nothing for 30 s prints `timeout`. Exit 0 when every call got
 * an answer (whatever its status), 1 otherwise, 2 for usage. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "drapb.h"
#include "err.h"
#include "grpc.h"

#define WAIT_MS 30000

static struct {
	int json, raw, verbose;
	const char *authority, *type, *method, *path;
	int calls, cancel_ms;
	double idle;
} O = {.authority = "localhost",
	.type = "application/grpc",
	.method = "POST",
	.calls = 1,
	.cancel_ms = -1};

/* The call in flight. */
static struct call {
	int32_t id;
	int closed, cancelled;
	uint32_t reset; /* RST_STREAM error code from the server */
	char http[8];
	char *grpc_status, *grpc_message;
	uint8_t *body;
	size_t len;
	const uint8_t *req; /* what DATA sends */
	size_t reqlen, reqoff;
	char *frame; /* the headers of the frame being received (-v) */
} C;

static int fd = -1, conn_closed, got_settings;

static void
usage(void)
{
	fprintf(stderr,
		"usage: grpc-call [-jrv] [-a authority] [-t type] "
		"[-m method] [-k calls] [-i seconds] [-c ms] SOCKET "
		"PATH [FILE]\n"
		"       grpc-call -g SOCKET [FILE]\n");
	exit(HAZ_USAGE);
}

static uint8_t *
slurp(const char *file, size_t *len)
{
	FILE *f = file ? fopen(file, "rb") : stdin;
	uint8_t *buf = NULL;
	size_t cap = 0, n;

	if (!f)
		err_die(HAZ_FAIL, "%s:", file);
	*len = 0;
	do {
		if (*len == cap)
			buf = erealloc(buf, cap = cap ? cap * 2 : 4096);
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n > 0);
	if (ferror(f))
		err_die(HAZ_FAIL, "%s: read error", file ? file : "<stdin>");
	if (file)
		fclose(f);
	return buf;
}

static int
connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int s;

	if (strlen(path) >= sizeof sa.sun_path)
		err_die(HAZ_USAGE, "%s: socket path too long", path);
	strcpy(sa.sun_path, path);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0)
		err_die(HAZ_FAIL, "%s:", path);
	return s;
}

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* ---- -g: bytes in, frames out ---------------------------------------- */

static const char *
frame_name(unsigned t)
{
	static const char *const names[] = {"DATA", "HEADERS", "PRIORITY",
		"RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY",
		"WINDOW_UPDATE", "CONTINUATION"};

	return t < sizeof names / sizeof *names ? names[t] : "UNKNOWN";
}

static int
garbage(const char *sock, const char *file)
{
	size_t len, got = 0, cap = 0, off;
	uint8_t *in = slurp(file, &len), *buf = NULL;
	struct pollfd p;
	ssize_t n;
	long end = now_ms() + WAIT_MS;

	fd = connect_to(sock);
	if (write(fd, in, len) != (ssize_t)len)
		err_die(HAZ_FAIL, "write:");
	free(in);
	for (;;) {
		p.fd = fd;
		p.events = POLLIN;
		if (poll(&p, 1, (int)(end - now_ms())) <= 0) {
			puts("timeout");
			return HAZ_FAIL;
		}
		if (got == cap)
			buf = erealloc(buf, cap = cap ? cap * 2 : 4096);
		n = read(fd, buf + got, cap - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	for (off = 0; off + 9 <= got;) {
		size_t flen = (size_t)buf[off] << 16 | buf[off + 1] << 8 |
			buf[off + 2];
		unsigned type = buf[off + 3];

		if (type == NGHTTP2_GOAWAY && flen >= 8 && off + 17 <= got)
			printf("frame GOAWAY %s\n",
				nghttp2_http2_strerror(
					(uint32_t)buf[off + 13] << 24 |
					(uint32_t)buf[off + 14] << 16 |
					(uint32_t)buf[off + 15] << 8 |
					buf[off + 16]));
		else
			printf("frame %s\n", frame_name(type));
		off += 9 + flen;
	}
	puts("closed");
	free(buf);
	close(fd);
	return 0;
}

/* ---- nghttp2 callbacks ----------------------------------------------- */

static ssize_t
on_send(nghttp2_session *h2, const uint8_t *data, size_t len, int flags,
	void *user)
{
	ssize_t n;

	(void)h2, (void)flags, (void)user;
	n = send(fd, data, len, MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN ? NGHTTP2_ERR_WOULDBLOCK
				       : NGHTTP2_ERR_CALLBACK_FAILURE;
	return n;
}

static ssize_t
read_request(nghttp2_session *h2, int32_t id, uint8_t *buf, size_t length,
	uint32_t *flags, nghttp2_data_source *src, void *user)
{
	size_t n = C.reqlen - C.reqoff;

	(void)h2, (void)id, (void)src, (void)user;
	if (n > length)
		n = length;
	memcpy(buf, C.req + C.reqoff, n);
	C.reqoff += n;
	if (C.reqoff == C.reqlen)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int
on_header(nghttp2_session *h2, const nghttp2_frame *f, const uint8_t *name,
	size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
	void *user)
{
	char *v = strndup((const char *)value, valuelen);

	(void)h2, (void)flags, (void)user;
	if (f->hd.stream_id != C.id) {
		free(v);
		return 0;
	}
	if (O.verbose) {
		char *was = C.frame;

		C.frame = easprintf("%s %.*s=%s", was ? was : "", (int)namelen,
			name, v);
		free(was);
	}
	if (namelen == 7 && memcmp(name, ":status", 7) == 0)
		snprintf(C.http, sizeof C.http, "%s", v);
	else if (namelen == 11 && memcmp(name, "grpc-status", 11) == 0) {
		free(C.grpc_status);
		C.grpc_status = v, v = NULL;
	} else if (namelen == 12 && memcmp(name, "grpc-message", 12) == 0) {
		free(C.grpc_message);
		C.grpc_message = v, v = NULL;
	}
	free(v);
	return 0;
}

static int
on_data(nghttp2_session *h2, uint8_t flags, int32_t id, const uint8_t *data,
	size_t len, void *user)
{
	(void)h2, (void)flags, (void)user;
	if (id != C.id)
		return 0;
	C.body = erealloc(C.body, C.len + len + 1);
	memcpy(C.body + C.len, data, len);
	C.len += len;
	return 0;
}

static int
on_frame_recv(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
	const char *end = f->hd.flags & NGHTTP2_FLAG_END_STREAM ? " end" : "";

	(void)h2, (void)user;
	if (f->hd.type == NGHTTP2_SETTINGS && !(f->hd.flags & NGHTTP2_FLAG_ACK))
		got_settings = 1;
	if (!O.verbose || f->hd.stream_id != C.id || !C.id)
		return 0;
	if (f->hd.type == NGHTTP2_HEADERS) {
		printf("%s%s%s\n",
			f->headers.cat == NGHTTP2_HCAT_HEADERS ? "trailers"
							       : "headers",
			C.frame ? C.frame : "", end);
		free(C.frame);
		C.frame = NULL;
	} else if (f->hd.type == NGHTTP2_DATA) {
		printf("data %zu%s\n", f->hd.length, end);
	}
	return 0;
}

static int
on_stream_close(nghttp2_session *h2, int32_t id, uint32_t error, void *user)
{
	(void)h2, (void)user;
	if (id == C.id) {
		C.closed = 1;
		C.reset = error;
	}
	return 0;
}

/* ---- the calls ------------------------------------------------------- */

/* pump sends and receives until *done, the connection ends or until ms
 * from now (-1: WAIT_MS); returns 0 when *done, 1 at the time limit given,
 * -1 when the connection is gone or nothing came for WAIT_MS. */
static int
pump(nghttp2_session *h2, const int *done, long ms)
{
	long end = now_ms() + (ms < 0 ? WAIT_MS : ms);
	uint8_t buf[16384];
	struct pollfd p;
	ssize_t n;
	int left;

	while (!*done) {
		if (nghttp2_session_send(h2) != 0)
			return conn_closed = 1, -1;
		left = (int)(end - now_ms());
		if (left <= 0)
			return ms < 0 ? (puts("timeout"), -1) : 1;
		p.fd = fd;
		p.events = POLLIN;
		if (poll(&p, 1, left) <= 0)
			continue;
		n = read(fd, buf, sizeof buf);
		if (n <= 0)
			return conn_closed = 1, -1;
		if (nghttp2_session_mem_recv(h2, buf, (size_t)n) < 0)
			return conn_closed = 1, -1;
	}
	return 0;
}

static void
print_json(json_t *j, const char *why)
{
	char *s;

	if (!j) {
		printf("bad response: %s\n", why);
		return;
	}
	s = json_dumps(j, JSON_COMPACT);
	puts(s);
	free(s);
	json_decref(j);
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void
print_response(void)
{
	const uint8_t *m = C.body + 5;
	size_t len, i;
	char why[128];

	if (C.len < 5 || C.body[0] != 0 ||
		(len = (size_t)C.body[1] << 24 | (size_t)C.body[2] << 16 |
				(size_t)C.body[3] << 8 | C.body[4]) !=
			C.len - 5) {
		printf("bad response body of %zu bytes\n", C.len);
		return;
	}
	if (!O.json) {
		for (i = 0; i < len; i++)
			printf("%02x", m[i]);
		putchar('\n');
	} else if (ends_with(O.path, "/GetInfo")) {
		print_json(dpb_decode_plugin_info(m, len, why, sizeof why),
			why);
	} else if (ends_with(O.path, "/NodePrepareResources")) {
		print_json(dpb_decode_prepare_response(m, len, why, sizeof why),
			why);
	} else if (ends_with(O.path, "/NodeUnprepareResources")) {
		print_json(dpb_decode_unprepare_response(m, len, why,
				   sizeof why),
			why);
	} else {
		puts(len ? "bad response: not empty" : "{}");
	}
}

/* one_call makes one call on h2 and prints its outcome; -1 when the
 * connection failed under it. */
static int
one_call(nghttp2_session *h2, const uint8_t *req, size_t reqlen, int cancel)
{
	const nghttp2_nv nv[] = {
		{(uint8_t *)":method", (uint8_t *)O.method, 7, strlen(O.method),
			0},
		{(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
		{(uint8_t *)":path", (uint8_t *)O.path, 5, strlen(O.path), 0},
		{(uint8_t *)":authority", (uint8_t *)O.authority, 10,
			strlen(O.authority), 0},
		{(uint8_t *)"content-type", (uint8_t *)O.type, 12,
			strlen(O.type), 0},
		{(uint8_t *)"te", (uint8_t *)"trailers", 2, 8, 0},
	};
	nghttp2_data_provider prd = {.read_callback = read_request};
	int rc;

	memset(&C, 0, sizeof C);
	C.req = req;
	C.reqlen = reqlen;
	C.id = nghttp2_submit_request(h2, NULL, nv, sizeof nv / sizeof *nv,
		reqlen ? &prd : NULL, NULL);
	if (C.id < 0)
		err_die(HAZ_FAIL, "submit: %s", nghttp2_strerror(C.id));
	if (cancel >= 0 && pump(h2, &C.closed, cancel) == 1) {
		nghttp2_submit_rst_stream(h2, NGHTTP2_FLAG_NONE, C.id,
			NGHTTP2_CANCEL);
		C.cancelled = 1;
	}
	rc = pump(h2, &C.closed, -1);
	if (rc < 0) {
		if (conn_closed)
			puts("connection closed");
	} else if (C.cancelled) {
		puts("cancelled");
	} else if (!*C.http) {
		printf("reset %s\n", nghttp2_http2_strerror(C.reset));
	} else if (strcmp(C.http, "200") != 0) {
		printf("http %s\n", C.http);
	} else {
		printf("status %s\n", C.grpc_status ? C.grpc_status : "none");
		if (C.grpc_message)
			printf("message %s\n",
				grpc_percent_decode(C.grpc_message));
		if (C.grpc_status && strcmp(C.grpc_status, "0") == 0)
			print_response();
	}
	fflush(stdout);
	free(C.grpc_status);
	free(C.grpc_message);
	free(C.body);
	free(C.frame);
	return rc < 0 ? -1 : 0;
}

/* request builds the DATA payload from the input. */
static uint8_t *
request(const char *file, size_t *len)
{
	uint8_t *in = NULL, *msg, *out;
	size_t n = 0;
	json_t *j;
	json_error_t e;

	if (!O.json || !ends_with(O.path, "/GetInfo"))
		in = slurp(file, &n);
	if (O.raw) {
		*len = n;
		return in;
	}
	if (O.json) {
		j = n ? json_loadb((const char *)in, n, 0, &e) : json_object();
		if (!j)
			err_die(HAZ_USAGE, "bad JSON request: %s", e.text);
		if (ends_with(O.path, "/GetInfo"))
			msg = emalloc(1), n = 0;
		else if (ends_with(O.path, "/NotifyRegistrationStatus"))
			msg = dpb_encode_registration_status(
				json_is_true(json_object_get(j, "registered")),
				json_string_value(json_object_get(j, "error")),
				&n);
		else if (ends_with(O.path, "/NodePrepareResources") ||
			ends_with(O.path, "/NodeUnprepareResources"))
			msg = dpb_encode_claims(j, &n);
		else
			err_die(HAZ_USAGE, "%s: no JSON form known", O.path);
		json_decref(j);
		if (!msg)
			err_die(HAZ_USAGE, "request is not {\"claims\":[...]}");
		free(in);
		in = msg;
	}
	*len = 5 + n;
	out = emalloc(*len);
	out[0] = 0;
	out[1] = (uint8_t)(n >> 24);
	out[2] = (uint8_t)(n >> 16);
	out[3] = (uint8_t)(n >> 8);
	out[4] = (uint8_t)n;
	if (n)
		memcpy(out + 5, in, n);
	free(in);
	return out;
}

int
main(int argc, char **argv)
{
	nghttp2_session_callbacks *cb;
	nghttp2_session *h2;
	uint8_t *req;
	size_t reqlen;
	struct timespec idle;
	int c, i, g = 0, status = 0;

	err_init(argv[0]);
	while ((c = getopt(argc, argv, "jrvga:t:m:k:i:c:")) != -1) {
		switch (c) {
		case 'j': O.json = 1; break;
		case 'r': O.raw = 1; break;
		case 'v': O.verbose = 1; break;
		case 'g': g = 1; break;
		case 'a': O.authority = optarg; break;
		case 't': O.type = optarg; break;
		case 'm': O.method = optarg; break;
		case 'k': O.calls = atoi(optarg); break;
		case 'i': O.idle = atof(optarg); break;
		case 'c': O.cancel_ms = atoi(optarg); break;
		default: usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (g) {
		if (argc < 1 || argc > 2)
			usage();
		return garbage(argv[0], argc > 1 ? argv[1] : NULL);
	}
	if (argc < 2 || argc > 3 || O.calls < 1)
		usage();
	O.path = argv[1];
	req = request(argc > 2 ? argv[2] : NULL, &reqlen);

	fd = connect_to(argv[0]);
	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_send_callback(cb, on_send);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb,
		on_stream_close);
	nghttp2_session_client_new(&h2, cb, NULL);
	nghttp2_session_callbacks_del(cb);
	nghttp2_submit_settings(h2, NGHTTP2_FLAG_NONE, NULL, 0);
	if (pump(h2, &got_settings, -1) < 0) {
		if (conn_closed)
			puts("connection closed");
		status = HAZ_FAIL;
	}
	for (i = 0; i < O.calls && !status; i++) {
		if (O.idle > 0) {
			idle.tv_sec = (time_t)O.idle;
			idle.tv_nsec = (long)((O.idle - (double)idle.tv_sec) *
				1e9);
			while (nanosleep(&idle, &idle) != 0)
				;
		}
		if (one_call(h2, req, reqlen, i == 0 ? O.cancel_ms : -1) < 0)
			status = HAZ_FAIL;
	}
	nghttp2_session_del(h2);
	close(fd);
	free(req);
	return status;
}
