/* kexec: pods/exec over a WebSocket, see kexec.h. */
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "b64.h"
#include "err.h"
#include "kexec.h"
#include "ws.h"

#define KEXEC_PROTO "v5.channel.k8s.io"
#define KEXEC_CHUNK 65536       /* stdin bytes a message */
#define KEXEC_MSG_MAX (4 << 20) /* the longest message taken */
#define KEXEC_WAIT_MS 30000     /* the longest the peer may stay silent */

/* One exec's connection and what is read but not yet used. */
struct conn {
	CURL *h;
	unsigned char *buf;
	size_t len, cap;
	struct kube_error *e;
	const char *what; /* "exec NS/POD", for messages */
};

static void __attribute__((format(printf, 3, 4)))
fail(struct conn *c, enum kube_errkind kind, const char *fmt, ...)
{
	va_list ap;
	int n;

	c->e->kind = kind;
	c->e->status = 0;
	c->e->reason[0] = '\0';
	n = snprintf(c->e->msg, sizeof c->e->msg, "%s: ", c->what);
	va_start(ap, fmt);
	vsnprintf(c->e->msg + n, sizeof c->e->msg - (size_t)n, fmt, ap);
	va_end(ap);
}

/* wait_sock waits until the connection can be read (events POLLIN) or
 * written (POLLOUT); -1 after KEXEC_WAIT_MS of nothing. */
static int
wait_sock(struct conn *c, short events)
{
	curl_socket_t s;
	struct pollfd p;
	int r;

	if (curl_easy_getinfo(c->h, CURLINFO_ACTIVESOCKET, &s) != CURLE_OK)
		return -1;
	p.fd = (int)s;
	p.events = events;
	do
		r = poll(&p, 1, KEXEC_WAIT_MS);
	while (r < 0 && errno == EINTR);
	return r > 0 ? 0 : -1;
}

static int
send_all(struct conn *c, const void *data, size_t len)
{
	const char *p = data;
	size_t n;
	CURLcode rc;

	while (len) {
		rc = curl_easy_send(c->h, p, len, &n);
		if (rc == CURLE_AGAIN) {
			if (wait_sock(c, POLLOUT) < 0)
				break;
			continue;
		}
		if (rc != CURLE_OK)
			break;
		p += n;
		len -= n;
	}
	if (len)
		fail(c, KUBE_ETEMP, "the connection broke while sending");
	return len ? -1 : 0;
}

/* fill reads more bytes into c->buf: 0, or -1 at the end or an error
 * (*eof set at an orderly end). */
static int
fill(struct conn *c, int *eof)
{
	size_t n;
	CURLcode rc;

	*eof = 0;
	for (;;) {
		if (c->cap - c->len < 16384)
			c->buf = erealloc(c->buf, c->cap = 2 * c->cap + 16384);
		rc = curl_easy_recv(c->h, c->buf + c->len, c->cap - c->len, &n);
		if (rc == CURLE_AGAIN) {
			if (wait_sock(c, POLLIN) < 0) {
				fail(c, KUBE_ETEMP, "no answer for %d s",
					KEXEC_WAIT_MS / 1000);
				return -1;
			}
			continue;
		}
		if (rc != CURLE_OK || n == 0) {
			*eof = rc == CURLE_OK;
			return -1;
		}
		c->len += n;
		return 0;
	}
}

static void
consume(struct conn *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
}

static int
send_frame(struct conn *c, int opcode, const void *p, size_t len)
{
	unsigned char mask[4], *f = emalloc(len + WS_HDR_MAX);
	size_t n;
	int r;

	if (getrandom(mask, sizeof mask, 0) != sizeof mask)
		memset(mask, 0x5a, sizeof mask);
	n = ws_frame(f, opcode, p, len, mask);
	r = send_all(c, f, n);
	free(f);
	return r;
}

/* exec_path: the exec subresource's path with the command and the
 * streams in its query. */
static char *
exec_path(const char *prefix, const struct kexec_req *r)
{
	char *ns = kube_escape(r->ns), *pod = kube_escape(r->pod), *p;
	char *const *a;

	p = easprintf("%s/api/v1/namespaces/%s/pods/%s/exec", prefix, ns, pod);
	free(ns);
	free(pod);
	for (a = r->argv; *a; a++)
		kube_query(&p, "command", *a);
	if (r->container)
		kube_query(&p, "container", r->container);
	kube_query(&p, "stdin", "true");
	kube_query(&p, "stdout", "true");
	kube_query(&p, "stderr", "true");
	return p;
}

/* header_value: the value of header name (with its ':') in the head
 * (NUL-terminated), malloc'd, or NULL. */
static char *
header_value(const char *head, const char *name)
{
	size_t n = strlen(name);
	const char *l, *end;

	for (l = strstr(head, "\r\n"); l; l = strstr(l + 2, "\r\n")) {
		if (strncasecmp(l + 2, name, n))
			continue;
		l += 2 + n;
		while (*l == ' ')
			l++;
		end = strstr(l, "\r\n");
		return easprintf("%.*s", (int)(end ? end - l : (long)strlen(l)),
			l);
	}
	return NULL;
}

/* refused says why the server did not switch protocols: its Status's
 * message when the body holds one, else its status line. */
static void
refused(struct conn *c, const char *head, size_t hlen)
{
	const char *body = (const char *)c->buf + hlen;
	json_t *j = json_loadb(body, c->len - hlen, 0, NULL);
	const char *msg = json_string_value(json_object_get(j, "message"));
	const char *eol = strstr(head, "\r\n");
	long status = strtol(head + 9, NULL, 10);

	if (msg)
		fail(c, status >= 500 ? KUBE_ETEMP : KUBE_EAPI, "%ld: %s",
			status, msg);
	else
		fail(c, status >= 500 ? KUBE_ETEMP : KUBE_EAPI, "%.*s",
			(int)(eol ? eol - head : 60), head);
	c->e->status = status;
	json_decref(j);
}

/* upgrade sends the handshake and reads the answer: 0 when the server
 * switched to the channel protocol. */
static int
upgrade(struct conn *c, const char *path, const char *host, const char *auth)
{
	unsigned char nonce[16];
	char *key, *req, accept[29], *got, *head, *end;
	size_t hlen;
	int eof, r = -1;

	if (getrandom(nonce, sizeof nonce, 0) != sizeof nonce)
		err_die(HAZ_FAIL, "getrandom:");
	key = b64_encode(nonce, sizeof nonce);
	req = easprintf("GET %s HTTP/1.1\r\nHost: %s\r\n"
			"User-Agent: k8shazgpu/" HAZ_VERSION "\r\n"
			"Upgrade: websocket\r\nConnection: Upgrade\r\n"
			"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
			"Sec-WebSocket-Protocol: " KEXEC_PROTO "\r\n%s%s\r\n",
		path, host, key, auth ? auth : "", auth ? "\r\n" : "");
	if (send_all(c, req, strlen(req)) < 0)
		goto out;
	while (!c->len || !(end = memmem(c->buf, c->len, "\r\n\r\n", 4)))
		if (fill(c, &eof) < 0) {
			fail(c, KUBE_ETEMP,
				"the connection ended in the "
				"handshake");
			goto out;
		}
	hlen = (size_t)(end - (char *)c->buf) + 4;
	head = easprintf("%.*s", (int)hlen, (char *)c->buf);
	if (strncmp(head, "HTTP/1.1 101", 12)) {
		/* the Status body, as much as came with the head or soon */
		for (;;) {
			json_t *j = json_loadb((char *)c->buf + hlen,
				c->len - hlen, 0, NULL);
			json_decref(j);
			if (j || c->len - hlen >= 65536 || fill(c, &eof) < 0)
				break;
		}
		refused(c, head, hlen);
	} else {
		ws_accept(key, accept);
		got = header_value(head, "Sec-WebSocket-Accept:");
		if (!got || strcmp(got, accept))
			fail(c, KUBE_EBADDATA,
				"the server's handshake "
				"answer is wrong");
		else
			r = 0;
		free(got);
		consume(c, hlen);
	}
	free(head);
out:
	memset(req, 0, strlen(req));
	free(req);
	free(key);
	return r;
}

/* send_stdin sends r's input on stream 0, then closes the stream. */
static int
send_stdin(struct conn *c, const struct kexec_req *r)
{
	const unsigned char *p = r->in;
	unsigned char *m = emalloc(KEXEC_CHUNK + 1);
	size_t off = 0, n;
	int st = 0;

	while (off < r->inlen && !st) {
		n = r->inlen - off < KEXEC_CHUNK ? r->inlen - off : KEXEC_CHUNK;
		m[0] = 0;
		memcpy(m + 1, p + off, n);
		st = send_frame(c, WS_BINARY, m, n + 1);
		off += n;
	}
	m[0] = 255;
	m[1] = 0;
	if (!st)
		st = send_frame(c, WS_BINARY, m, 2);
	free(m);
	return st;
}

/* exit_status reads the Status object of stream 3: 0 for Success, the
 * ExitCode cause of a NonZeroExitCode failure, else -1 (said). */
static int
exit_status(struct conn *c, const char *s, size_t len)
{
	json_t *j = json_loadb(s, len, 0, NULL), *cause;
	const char *st = json_string_value(json_object_get(j, "status"));
	const char *reason = json_string_value(json_object_get(j, "reason"));
	const char *msg = json_string_value(json_object_get(j, "message"));
	size_t i;
	int code = -1;

	if (st && !strcmp(st, "Success"))
		code = 0;
	else if (reason && !strcmp(reason, "NonZeroExitCode"))
		json_array_foreach(json_object_get(json_object_get(j,
							   "details"),
					   "causes"),
			i, cause) {
			const char *cr = json_string_value(
				json_object_get(cause, "reason"));
			const char *cm = json_string_value(
				json_object_get(cause, "message"));
			if (cr && cm && !strcmp(cr, "ExitCode"))
				code = atoi(cm) & 255;
		}
	if (code < 0)
		fail(c, KUBE_EAPI, "%s", msg ? msg : "no exit status");
	json_decref(j);
	return code;
}

/* one_msg handles a whole message: output copied, the status read
 * (*code), a ping answered; 1 at a close. */
static int
one_msg(struct conn *c, const struct kexec_req *r, struct ws_msg *m,
	char **status, size_t *slen)
{
	if (m->opcode == WS_CLOSE)
		return 1;
	if (m->opcode == WS_PING)
		return send_frame(c, WS_PONG, m->payload, m->len) < 0 ? -1 : 0;
	if (m->opcode != WS_BINARY || m->len < 1)
		return 0;
	if (m->payload[0] == 1 && r->out)
		fwrite(m->payload + 1, 1, m->len - 1, r->out);
	else if (m->payload[0] == 2 && r->err)
		fwrite(m->payload + 1, 1, m->len - 1, r->err);
	else if (m->payload[0] == 3) {
		*status = erealloc(*status, *slen + m->len);
		memcpy(*status + *slen, m->payload + 1, m->len - 1);
		*slen += m->len - 1;
	}
	return 0;
}

/* stream reads messages until the server closes; the exit status. */
static int
stream(struct conn *c, const struct kexec_req *r)
{
	struct ws_msg m;
	char *status = NULL;
	size_t slen = 0;
	long n;
	int eof = 0, done = 0, code = -1;

	while (!done) {
		while (!done &&
			(n = ws_parse(c->buf, c->len, KEXEC_MSG_MAX, &m)) > 0) {
			done = one_msg(c, r, &m, &status, &slen);
			consume(c, (size_t)n);
		}
		if (done < 0 || n < 0) {
			if (n < 0)
				fail(c, KUBE_EBADDATA, "a malformed frame");
			free(status);
			return -1;
		}
		if (!done && fill(c, &eof) < 0)
			break;
	}
	if (r->out)
		fflush(r->out);
	if (r->err)
		fflush(r->err);
	if (status)
		code = exit_status(c, status, slen);
	else if (c->e->kind == KUBE_OK)
		fail(c, KUBE_EBADDATA,
			"the stream ended without the "
			"command's status");
	free(status);
	return code;
}

int
kexec_run(struct kube *k, const struct kexec_req *r, struct kube_error *e)
{
	struct conn c = {.e = e};
	char *auth, *host, *prefix, *path, *what;
	int code = -1;

	memset(e, 0, sizeof *e);
	what = easprintf("exec %s/%s", r->ns, r->pod);
	c.what = what;
	path = exec_path("", r);
	c.h = kube_connect(k, path, &auth, &host, &prefix, e);
	free(path);
	if (c.h) {
		path = exec_path(prefix, r);
		if (upgrade(&c, path, host, auth) == 0 &&
			send_stdin(&c, r) == 0)
			code = stream(&c, r);
		free(path);
	}
	if (auth)
		memset(auth, 0, strlen(auth));
	free(auth);
	free(host);
	free(prefix);
	free(c.buf);
	free(what);
	return code;
}
