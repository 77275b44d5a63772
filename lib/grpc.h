/* grpc: a unary gRPC server over HTTP/2 without TLS (h2c, prior
 * knowledge) on unix sockets, as the kubelet speaks to its plugins.
 *
 * Why nghttp2 and protobuf-c: both are plain C with few dependencies and
 * long-stable APIs, and both are fuzzed continuously upstream (OSS-Fuzz);
 * nghttp2 does the HTTP/2 framing, HPACK, flow control and PING answers,
 * this file only the gRPC rules on top. The gRPC C core would bring
 * libstdc++, absl, OpenSSL, re2 and c-ares into a small tool, and it has no
 * stable C API (its own maintainers call it private and unstable); an
 * HTTP/2 stack of our own is what the issue rules out.
 *
 * The server: grpc_listen binds the socket, grpc_start serves it. One accept
 * thread; each connection gets a thread of its own running one nghttp2
 * server session, so a slow call on one socket or connection never
 * delays another connection (GetInfo keeps its 1 s budget while a prepare
 * waits for the API server). The streams of one connection are handled
 * one after the other in that connection's thread, in the order their
 * requests end; the kubelet's concurrent calls on one connection are thus
 * serialized, which the plugin's lock would do anyway.
 *
 * The connection: the server's SETTINGS (MAX_CONCURRENT_STREAMS 100) go
 * first; PINGs are answered by nghttp2; an idle connection is kept open
 * for ever, with no read timeout and no GOAWAY (the kubelet treats a
 * dropped DRA connection as the plugin gone, and wipes its slices 30 s
 * later). A bad preface or frame closes that connection only, after
 * nghttp2's GOAWAY, and is logged once on stderr. A peer that resets a
 * stream or goes away mid-call is no error: the answer is dropped.
 * grpc-timeout is not enforced: a handler runs to its end.
 *
 * A request: :method POST and content-type application/grpc (or
 * application/grpc+...), else HTTP 415 without a gRPC status; then
 * exactly one uncompressed length-prefixed message of at most
 * GS_MAX_MESSAGE bytes. Every failure is a Trailers-Only answer (one
 * HEADERS frame: :status 200, content-type, grpc-status, grpc-message
 * percent-encoded):
 *	unknown :path                      12 "unknown method <path>"
 *	compressed flag 1                  12 "compressed messages are not
 *supported" no message, a cut prefix or body   13 "request has no message",
 *	                                      "truncated message prefix: N of 5
 *bytes", "truncated message: N of M bytes" another flag byte 13 "bad message
 *flag N" more than one message              3 "more than one request message"
 *	a message over GS_MAX_MESSAGE      8 "request message of N bytes is over
 *the limit of 4194304" A handler's answer goes out as HEADERS (:status 200,
 *content-type application/grpc), one DATA message and trailers (grpc-status 0);
 *its error as Trailers-Only with its status and message. */
#ifndef HAZ_GRPC_H
#define HAZ_GRPC_H

#include <stddef.h>
#include <stdint.h>

#define GS_MAX_MESSAGE (4u << 20) /* grpc-go's default receive limit */

/* gRPC status codes used here and by handlers. */
enum {
	GS_OK = 0,
	GS_UNKNOWN = 2,
	GS_INVALID_ARGUMENT = 3,
	GS_DEADLINE_EXCEEDED = 4,
	GS_NOT_FOUND = 5,
	GS_RESOURCE_EXHAUSTED = 8,
	GS_FAILED_PRECONDITION = 9,
	GS_UNIMPLEMENTED = 12,
	GS_INTERNAL = 13,
	GS_UNAVAILABLE = 14,
};

/* A handler gets the request message (len bytes, without the 5-byte
 * prefix; req is never NULL). It returns 0 with *resp a malloc'd message
 * of *resp_len bytes (NULL with 0 for an empty message), sent with
 * grpc-status 0; or a gRPC status from 1 to 16 with *msg a malloc'd
 * grpc-message or NULL (another value is sent as 2 UNKNOWN). The server
 * frees *resp and *msg. Handlers run in the connection threads, several at
 * once for different connections: they lock for themselves. */
typedef int grpc_handler(void *arg, const uint8_t *req, size_t len,
	uint8_t **resp, size_t *resp_len, char **msg);

/* One method: its full :path ("/pkg.Service/Method"), its handler and the
 * handler's arg. A table ends with an entry whose path is NULL. */
struct grpc_method {
	const char *path;
	grpc_handler *fn;
	void *arg;
};

struct grpc_server;

/* grpc_listen removes a stale socket at path (only a socket: any other
 * file there is an error), binds a unix stream socket to path, sets its
 * mode to 0660 and listens. The parent directory must exist. Returns the
 * listening fd (close-on-exec), or -1 with a message in why (n bytes). */
int grpc_listen(const char *path, char *why, size_t n);

/* grpc_start serves fd (from grpc_listen) with methods, which must outlive
 * the server, in threads of its own (all signals blocked in them). name
 * ("registration", "dra") starts the messages about this server. Returns
 * NULL with a message on stderr when no thread can be started (fd is
 * then left open). */
struct grpc_server *grpc_start(int fd, const struct grpc_method *methods,
	const char *name);

/* grpc_stop stops accepting, waits for the handlers running to return,
 * closes every connection (with a GOAWAY where it can be sent at once),
 * joins every thread, closes fd and frees s. The socket file is left for
 * the caller to unlink. NULL is a no-op. */
void grpc_stop(struct grpc_server *s);

/* grpc_percent_encode returns grpc-message's form of msg, malloc'd: every
 * byte outside 0x20..0x7e, and '%', as %XX. */
char *grpc_percent_encode(const char *msg);

/* grpc_percent_decode decodes %XX in place (a '%' without two hex digits
 * is kept as it is) and returns s. */
char *grpc_percent_decode(char *s);

#endif
