/* ws: the WebSocket framing of RFC 6455 a client needs, with no
 * transport: the handshake's key and its expected answer, client frames
 * (always masked), and server frames parsed from a byte buffer. The
 * transport (a TLS connection to the API server) is lib/kexec's.
 *
 * Threads: no state of its own: any thread, on buffers of its own. */
#ifndef HAZ_WS_H
#define HAZ_WS_H

#include <stddef.h>

enum {
	WS_CONT = 0x0,
	WS_TEXT = 0x1,
	WS_BINARY = 0x2,
	WS_CLOSE = 0x8,
	WS_PING = 0x9,
	WS_PONG = 0xa,
};

/* The most header bytes a frame has: 2, 8 of length, 4 of mask. */
#define WS_HDR_MAX 14

/* ws_accept writes to out the Sec-WebSocket-Accept value a server must
 * answer to the Sec-WebSocket-Key key: base64 of SHA-1(key + GUID). */
void ws_accept(const char *key, char out[29]);

/* ws_frame writes one final client frame of opcode holding len bytes of
 * payload, masked with mask, to out (room for len + WS_HDR_MAX bytes);
 * returns the frame's size. */
size_t ws_frame(unsigned char *out, int opcode, const void *payload, size_t len,
	const unsigned char mask[4]);

/* One frame parsed by ws_parse. */
struct ws_msg {
	int fin;                /* the last frame of its message */
	int opcode;             /* WS_* */
	unsigned char *payload; /* inside the buffer parsed, unmasked */
	size_t len;
};

/* ws_parse reads the frame at the start of buf (len bytes): returns its
 * size with *m filled (a masked payload unmasked in place), 0 when buf
 * holds only part of it, or -1 when it is no frame: reserved bits set,
 * an unknown opcode, a control frame over 125 bytes or fragmented, or a
 * length over max. */
long ws_parse(unsigned char *buf, size_t len, size_t max, struct ws_msg *m);

#endif
