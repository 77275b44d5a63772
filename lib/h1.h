/* h1: an HTTP/1.1 client's side of one exchange, with no transport: the
 * request's head written into a buffer, and the answer read from bytes
 * a read function supplies (lib/kube's kept connection reads them from
 * its TLS connection; a test, from a string).
 *
 * The answer: a status line "HTTP/1.x NNN ...", fields, a blank line,
 * then the body, framed by Transfer-Encoding: chunked, else by
 * Content-Length, else by the end of the connection. An interim answer
 * (1xx but 101) is passed over. Kept of the fields: the framing,
 * Connection (close), Retry-After. An answer to HEAD, a 204 and a 304
 * have no body. Limits, each a clear error naming the byte: the head
 * H1_HEAD_MAX bytes, a chunk's size line 1 KiB, the body the caller's
 * max; any other coding than chunked, two lengths that differ, a length
 * or chunk size that is not hexadecimal/decimal digits are refused.
 *
 * Threads: no state of its own; a struct h1_in is one thread's at a
 * time. */
#ifndef HAZ_H1_H
#define HAZ_H1_H

#include <stddef.h>
#include <sys/types.h>

#define H1_HEAD_MAX 65536

/* h1_read_fn reads up to cap bytes into buf: their number, 0 at the end
 * of the stream, -1 when reading failed (the caller keeps why). */
typedef ssize_t h1_read_fn(void *arg, char *buf, size_t cap);

/* The bytes read from one connection and not yet used: zero-initialise
 * with read and arg set; h1_in_reset forgets them (a new connection),
 * h1_in_free frees the buffer. */
struct h1_in {
	h1_read_fn *read;
	void *arg;
	char *buf;
	size_t off, len, cap; /* [off, len) not yet used */
	size_t got;           /* bytes of the current answer received so far */
	size_t used;          /* of them, taken: where the next byte is */
};

void h1_in_reset(struct h1_in *in);
void h1_in_free(struct h1_in *in);

struct h1_answer {
	long code;
	int keep;     /* the connection may carry the next request */
	double after; /* Retry-After in seconds, -1 when none */
	char *body;   /* malloc'd, NUL-ended; NULL when there was none */
	size_t len;
};

enum h1_status {
	H1_OK = 0,
	H1_EREAD, /* reading failed: the read function's -1 */
	H1_EEND,  /* the stream ended before the answer did */
	H1_EBAD,  /* not HTTP/1.x as above; why names the byte */
	H1_EBIG,  /* a body over max bytes */
};

/* h1_head writes into a malloc'd string the head of a request: the
 * request line "METHOD TARGET HTTP/1.1", Host, each of the nlines lines
 * of lines (full "Name: value", without CRLF; NULL ones passed over),
 * Content-Length when body_len is not -1, and the blank line. */
char *h1_head(const char *method, const char *target, const char *host,
	const char *const *lines, size_t nlines, long long body_len,
	size_t *len);

/* h1_read reads one answer from in into *a (zeroed first; free its body
 * with h1_answer_free): H1_OK, or another status with why (whylen
 * bytes) saying what, by byte of the answer ("" for H1_EREAD: the read
 * function's failure is the caller's to tell); the connection then
 * carries nothing more, and in->got says whether any byte of an answer
 * came. method is the request's (an answer to HEAD has no
 * body); now is Unix time, for a Retry-After date. */
enum h1_status h1_read(struct h1_in *in, const char *method, size_t max,
	double now, struct h1_answer *a, char *why, size_t whylen);

void h1_answer_free(struct h1_answer *a);

#endif
