/* h1: one HTTP/1.1 exchange's framing, see h1.h. Sections: the
 * request's head; reading; the answer's head; its body. */
#include "h1.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "http.h"

#define H1_LINE_MAX 1024     /* a chunk's size line, a trailer field */
#define KEEP_CAP (128 << 10) /* a larger read buffer is freed when empty */

/* ---- the request's head ------------------------------------------ */

static void
put(char **p, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap)
		*p = erealloc(*p, *cap = (*len + n + 1) * 2);
	memcpy(*p + *len, s, n);
	*len += n;
	(*p)[*len] = '\0';
}

static void
put_line(char **p, size_t *len, size_t *cap, const char *s)
{
	put(p, len, cap, s, strlen(s));
	put(p, len, cap, "\r\n", 2);
}

char *
h1_head(const char *method, const char *target, const char *host,
	const char *const *lines, size_t nlines, long long body_len,
	size_t *len)
{
	char *p = NULL, n[40];
	size_t cap = 0;

	*len = 0;
	put(&p, len, &cap, method, strlen(method));
	put(&p, len, &cap, " ", 1);
	put(&p, len, &cap, target, strlen(target));
	put_line(&p, len, &cap, " HTTP/1.1");
	put(&p, len, &cap, "Host: ", 6);
	put_line(&p, len, &cap, host);
	for (size_t i = 0; i < nlines; i++)
		if (lines[i])
			put_line(&p, len, &cap, lines[i]);
	if (body_len >= 0) {
		snprintf(n, sizeof n, "Content-Length: %lld", body_len);
		put_line(&p, len, &cap, n);
	}
	put(&p, len, &cap, "\r\n", 2);
	return p;
}

/* ---- reading ----------------------------------------------------- */

void
h1_in_reset(struct h1_in *in)
{
	in->off = in->len = 0;
	in->got = in->used = 0;
}

void
h1_in_free(struct h1_in *in)
{
	free(in->buf);
	in->buf = NULL;
	in->cap = 0;
	h1_in_reset(in);
}

/* fill reads more bytes after those not yet used: H1_OK, H1_EEND or
 * H1_EREAD. */
static enum h1_status
fill(struct h1_in *in)
{
	ssize_t n;

	if (in->off == in->len)
		in->off = in->len = 0;
	if (in->cap - in->len < 4096 && in->off) {
		memmove(in->buf, in->buf + in->off, in->len - in->off);
		in->len -= in->off;
		in->off = 0;
	}
	if (in->cap - in->len < 4096)
		in->buf = erealloc(in->buf, in->cap = in->cap * 2 + 16384);
	n = in->read(in->arg, in->buf + in->len, in->cap - in->len);
	if (n < 0)
		return H1_EREAD;
	if (n == 0)
		return H1_EEND;
	in->len += (size_t)n;
	in->got += (size_t)n;
	return H1_OK;
}

static void
take(struct h1_in *in, size_t n)
{
	in->off += n;
	in->used += n;
}

static enum h1_status __attribute__((format(printf, 4, 5)))
bad(const struct h1_in *in, char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(why, whylen, "answer byte %zu: ", in->used);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < whylen)
		vsnprintf(why + n, whylen - (size_t)n, fmt, ap);
	va_end(ap);
	return H1_EBAD;
}

/* ended says why reading stopped at st, in why. */
static enum h1_status
ended(const struct h1_in *in, enum h1_status st, const char *where, char *why,
	size_t whylen)
{
	if (st == H1_EEND)
		snprintf(why, whylen,
			"the connection closed %s (answer byte %zu)", where,
			in->got);
	return st;
}

/* line finds the next line, its end (the "\n") within max bytes:
 * *n is its length without "\r\n". */
static enum h1_status
line(struct h1_in *in, size_t max, const char *what, size_t *n, char *why,
	size_t whylen)
{
	enum h1_status st;
	char *nl;

	while (in->len == in->off ||
		!(nl = memchr(in->buf + in->off, '\n', in->len - in->off))) {
		if (in->len - in->off > max)
			return bad(in, why, whylen, "%s longer than %zu bytes",
				what, max);
		if ((st = fill(in)) != H1_OK)
			return ended(in, st, "inside the answer", why, whylen);
	}
	*n = (size_t)(nl - (in->buf + in->off));
	if (*n > max)
		return bad(in, why, whylen, "%s longer than %zu bytes", what,
			max);
	return H1_OK;
}

static size_t
trimmed(const char *p, size_t n, const char **start)
{
	while (n && (*p == ' ' || *p == '\t'))
		p++, n--;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	*start = p;
	return n;
}

/* ---- the answer's head -------------------------------------------- */

struct head {
	long long length; /* Content-Length, -1 when none */
	int chunked;
	int close;
};

static int
is_name(const char *p, size_t n, const char *name)
{
	return n == strlen(name) && !strncasecmp(p, name, n);
}

/* has_token: does the comma-separated list v (n bytes) name tok? */
static int
has_token(const char *v, size_t n, const char *tok)
{
	size_t i = 0, j, k;
	const char *t;

	while (i < n) {
		for (j = i; j < n && v[j] != ','; j++)
			;
		k = trimmed(v + i, j - i, &t);
		if (is_name(t, k, tok))
			return 1;
		i = j + 1;
	}
	return 0;
}

/* field takes one field line of n bytes at p. */
static enum h1_status
field(struct h1_in *in, const char *p, size_t n, struct head *h,
	struct h1_answer *a, double now, char *why, size_t whylen)
{
	const char *colon = memchr(p, ':', n), *v;
	size_t name, vn;
	char num[64];
	long long len = 0;

	if (!colon || colon == p)
		return bad(in, why, whylen, "a field line without a name");
	name = (size_t)(colon - p);
	vn = trimmed(colon + 1, n - name - 1, &v);
	if (is_name(p, name, "Content-Length")) {
		if (vn == 0 || vn > 18)
			return bad(in, why, whylen, "Content-Length %s",
				"not a length");
		for (size_t i = 0; i < vn; i++) {
			if (!isdigit((unsigned char)v[i]))
				return bad(in, why, whylen,
					"Content-Length not a length");
			len = len * 10 + (v[i] - '0');
		}
		if (h->length >= 0 && h->length != len)
			return bad(in, why, whylen, "two Content-Lengths");
		h->length = len;
	} else if (is_name(p, name, "Transfer-Encoding")) {
		if (is_name(v, vn, "chunked"))
			h->chunked = 1;
		else if (!is_name(v, vn, "identity"))
			return bad(in, why, whylen,
				"Transfer-Encoding %.*s not supported",
				(int)(vn > 40 ? 40 : vn), v);
	} else if (is_name(p, name, "Connection")) {
		h->close |= has_token(v, vn, "close");
	} else if (is_name(p, name, "Retry-After") && vn < sizeof num) {
		memcpy(num, v, vn);
		num[vn] = '\0';
		a->after = http_retry_after(num, now);
	}
	return H1_OK;
}

/* status takes the status line: "HTTP/1.x NNN[ reason]". */
static enum h1_status
status(struct h1_in *in, const char *p, size_t n, struct head *h,
	struct h1_answer *a, char *why, size_t whylen)
{
	if (n >= 1 && p[n - 1] == '\r')
		n--;
	if (n < 12 || memcmp(p, "HTTP/1.", 7) ||
		!isdigit((unsigned char)p[7]) || p[8] != ' ' || p[9] < '1' ||
		p[9] > '9' || !isdigit((unsigned char)p[10]) ||
		!isdigit((unsigned char)p[11]) || (n > 12 && p[12] != ' '))
		return bad(in, why, whylen, "not an HTTP/1.x status line");
	a->code = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	/* HTTP/1.0 closes unless told otherwise; we do not ask */
	h->close = p[7] == '0';
	return H1_OK;
}

/* head reads one answer's head, the blank line included. */
static enum h1_status
head(struct h1_in *in, struct head *h, struct h1_answer *a, double now,
	char *why, size_t whylen)
{
	enum h1_status st;
	size_t n, start = in->used;
	const char *p;

	h->length = -1;
	h->chunked = h->close = 0;
	a->after = -1;
	for (int first = 1;; first = 0) {
		st = line(in, H1_HEAD_MAX - (in->used - start), "the head", &n,
			why, whylen);
		if (st == H1_EBAD)
			snprintf(why, whylen,
				"answer byte %zu: the head longer than %d "
				"bytes",
				start, H1_HEAD_MAX);
		if (st == H1_EEND && in->got == 0)
			snprintf(why, whylen,
				"the connection closed before an answer");
		if (st != H1_OK)
			return st;
		p = in->buf + in->off;
		if (first)
			st = status(in, p, n, h, a, why, whylen);
		else if (n == 0 || (n == 1 && p[0] == '\r'))
			return take(in, n + 1), H1_OK;
		else
			st = field(in, p, n, h, a, now, why, whylen);
		if (st != H1_OK)
			return st;
		take(in, n + 1);
	}
}

/* ---- the body ---------------------------------------------------- */

/* copy appends n bytes of body to a, from what is buffered, then
 * straight from the read function. */
static enum h1_status
copy(struct h1_in *in, struct h1_answer *a, size_t *cap, size_t n, char *why,
	size_t whylen)
{
	size_t have = in->len - in->off, k;
	ssize_t r;

	if (a->len + n + 1 > *cap) {
		*cap = *cap * 2 > a->len + n + 1 ? *cap * 2 : a->len + n + 1;
		a->body = erealloc(a->body, *cap);
	}
	k = have < n ? have : n;
	if (k) {
		memcpy(a->body + a->len, in->buf + in->off, k);
		a->len += k;
		take(in, k);
	}
	n -= k;
	while (n) {
		r = in->read(in->arg, a->body + a->len, n);
		if (r <= 0)
			return ended(in, r < 0 ? H1_EREAD : H1_EEND,
				"inside the body", why, whylen);
		a->len += (size_t)r;
		in->got += (size_t)r;
		in->used += (size_t)r;
		n -= (size_t)r;
	}
	a->body[a->len] = '\0';
	return H1_OK;
}

static enum h1_status
too_big(struct h1_in *in, size_t max, char *why, size_t whylen)
{
	snprintf(why, whylen, "answer byte %zu: a body larger than %zu bytes",
		in->used, max);
	return H1_EBIG;
}

static size_t
hexval(char c)
{
	return (size_t)(isdigit((unsigned char)c)
			? c - '0'
			: tolower((unsigned char)c) - 'a' + 10);
}

/* chunk_size reads a chunk's size line: hexadecimal digits, then
 * extensions, which are passed over. */
static enum h1_status
chunk_size(struct h1_in *in, size_t *size, char *why, size_t whylen)
{
	enum h1_status st;
	size_t n, i = 0, v = 0;
	const char *p;

	if ((st = line(in, H1_LINE_MAX, "a chunk's size line", &n, why,
		     whylen)) != H1_OK)
		return st;
	p = in->buf + in->off;
	for (; i < n && isxdigit((unsigned char)p[i]); i++) {
		if (v >> 56)
			return bad(in, why, whylen, "a chunk size too large");
		v = v * 16 + hexval(p[i]);
	}
	/* after the digits: extensions, or the line's end */
	if (i == 0 || (i < n && (!p[i] || !strchr(";\t\r ", p[i]))))
		return bad(in, why, whylen, "not a chunk size");
	take(in, n + 1);
	*size = v;
	return H1_OK;
}

static enum h1_status
chunked(struct h1_in *in, struct h1_answer *a, size_t max, char *why,
	size_t whylen)
{
	enum h1_status st;
	size_t size = 0, cap = 0, n;
	int blank;

	for (;;) {
		if ((st = chunk_size(in, &size, why, whylen)) != H1_OK)
			return st;
		if (size == 0)
			break;
		if (size > max - a->len)
			return too_big(in, max, why, whylen);
		if ((st = copy(in, a, &cap, size, why, whylen)) != H1_OK)
			return st;
		if ((st = line(in, H1_LINE_MAX, "a chunk's end", &n, why,
			     whylen)) != H1_OK)
			return st;
		if (n > 1 || (n == 1 && in->buf[in->off] != '\r'))
			return bad(in, why, whylen,
				"a chunk longer than its size");
		take(in, n + 1);
	}
	/* the trailer: fields passed over, to the blank line */
	for (;;) {
		if ((st = line(in, H1_LINE_MAX, "a trailer field", &n, why,
			     whylen)) != H1_OK)
			return st;
		blank = n == 0 || (n == 1 && in->buf[in->off] == '\r');
		take(in, n + 1);
		if (blank)
			return H1_OK;
	}
}

/* to_end reads a body framed by the end of the connection; one past max
 * bytes is refused where it passes max, however the bytes came. */
static enum h1_status
to_end(struct h1_in *in, struct h1_answer *a, size_t max, char *why,
	size_t whylen)
{
	enum h1_status st;
	size_t cap = 0, have, room;

	for (;;) {
		have = in->len - in->off;
		room = max - a->len;
		if ((st = copy(in, a, &cap, have < room ? have : room, why,
			     whylen)) != H1_OK)
			return st;
		if (have > room)
			return too_big(in, max, why, whylen);
		if ((st = fill(in)) == H1_EEND)
			return H1_OK;
		if (st != H1_OK)
			return st;
	}
}

enum h1_status
h1_read(struct h1_in *in, const char *method, size_t max, double now,
	struct h1_answer *a, char *why, size_t whylen)
{
	struct head h;
	enum h1_status st;
	size_t cap = 0;

	memset(a, 0, sizeof *a);
	in->got = in->len - in->off;
	in->used = 0;
	why[0] = '\0';
	do
		if ((st = head(in, &h, a, now, why, whylen)) != H1_OK)
			goto out;
	while (a->code >= 100 && a->code < 200 && a->code != 101);
	if (a->code == 101) {
		st = bad(in, why, whylen, "101 to a plain request");
		goto out;
	}
	a->keep = !h.close;
	if (!strcmp(method, "HEAD") || a->code == 204 || a->code == 304)
		st = H1_OK;
	else if (h.chunked)
		st = chunked(in, a, max, why, whylen);
	else if (h.length > (long long)max)
		st = too_big(in, max, why, whylen);
	else if (h.length >= 0)
		st = copy(in, a, &cap, (size_t)h.length, why, whylen);
	else {
		a->keep = 0;
		st = to_end(in, a, max, why, whylen);
	}
out:
	if (st != H1_OK) {
		a->keep = 0;
		in->off = in->len = 0;
	} else if (in->off == in->len && in->cap > KEEP_CAP) {
		h1_in_free(in);
	}
	return st;
}

void
h1_answer_free(struct h1_answer *a)
{
	free(a->body);
	a->body = NULL;
	a->len = 0;
}
