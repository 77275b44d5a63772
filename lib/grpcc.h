/* grpcc: a unary gRPC client over HTTP/2 without TLS (h2c, prior
 * knowledge) on a unix socket, as container runtimes serve CRI.
 *
 * One connection per call: connect, send the client preface and the
 * request, read the answer, close. A runtime's socket is local, so a
 * connection costs little, and a call holds no state another thread
 * could trip over: one thread may pull an image while another asks the
 * same runtime for the pull's progress. nghttp2 does the HTTP/2 framing,
 * as for our server (lib/grpc); this file only the gRPC rules.
 *
 * The request: POST path, with :scheme http, :authority localhost,
 * content-type application/grpc, te trailers, grpc-timeout when a
 * timeout is given, then the caller's headers; a caller's content-type
 * replaces ours. The message goes out uncompressed, in one
 * length-prefixed frame of the body.
 *
 * The answer: :status 200 with a grpc-status, either in the trailers
 * after at most one message, or in the first and only HEADERS frame
 * (Trailers-Only, as runtimes answer a failed call). grpc-message is
 * percent-decoded. A message over GRPCC_MAX_MESSAGE bytes ends the call
 * as soon as its prefix announces it (the connection is closed). */
#ifndef HAZ_GRPCC_H
#define HAZ_GRPCC_H

#include <stddef.h>
#include <stdint.h>

/* The largest answer taken: ListImages on a node with thousands of
 * images stays far below it. */
#define GRPCC_MAX_MESSAGE (16u << 20)

/* grpcc_call calls path ("/pkg.Service/Method") on the unix socket sock
 * with the len bytes of req (an encoded message, without the 5-byte
 * prefix; req may be NULL when len is 0). headers is NULL or a list of
 * name, value, ..., NULL (lowercase names), sent after ours.
 * timeout_ms > 0 is sent as grpc-timeout and enforced here too: the
 * call is given up that long after it began; 0 waits as long as the
 * server takes.
 *
 * Returns the grpc-status, 0 to 16. With 0, *resp is the answer's
 * message, malloc'd (not NULL, even for an empty message) of *resp_len
 * bytes, and *msg is NULL. With another status, *resp is NULL and *msg
 * the decoded grpc-message, malloc'd ("" when there is none).
 *
 * Returns -1 when no gRPC answer came, with *resp NULL, *msg a malloc'd
 * sentence saying why and errno telling the cases apart:
 *	ENOENT, ECONNREFUSED, EACCES...  connect failed (nothing serves sock)
 *	ETIMEDOUT    no whole answer within timeout_ms
 *	EMSGSIZE     the answer's message is over GRPCC_MAX_MESSAGE
 *	EPROTO       not a gRPC answer: an HTTP status other than 200, no
 *	             grpc-status, a reset stream, bad framing, status 0
 *	             without exactly one message
 *	ECONNRESET   the connection ended before the answer did
 *	EIO          sending or receiving failed otherwise */
int grpcc_call(const char *sock, const char *path, const char *const *headers,
	const uint8_t *req, size_t len, int timeout_ms, uint8_t **resp,
	size_t *resp_len, char **msg);

#endif
