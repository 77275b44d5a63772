/* ws: WebSocket frames (RFC 6455), see ws.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "err.h"
#include "sha1.h"
#include "ws.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

static int
hexval(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

void
ws_accept(const char *key, char out[29])
{
	char *both = easprintf("%s" WS_GUID, key), hex[41], *b;
	unsigned char raw[20];
	int i;

	sha1_hex(both, strlen(both), hex);
	free(both);
	for (i = 0; i < 20; i++)
		raw[i] = (unsigned char)(hexval(hex[2 * i]) << 4 |
			hexval(hex[2 * i + 1]));
	b = b64_encode(raw, sizeof raw);
	memcpy(out, b, 28);
	out[28] = '\0';
	free(b);
}

size_t
ws_frame(unsigned char *out, int opcode, const void *payload, size_t len,
	const unsigned char mask[4])
{
	const unsigned char *p = payload;
	size_t at = 2, i;

	out[0] = (unsigned char)(0x80 | (opcode & 0x0f));
	if (len < 126) {
		out[1] = (unsigned char)(0x80 | len);
	} else if (len <= 0xffff) {
		out[1] = 0x80 | 126;
		out[2] = (unsigned char)(len >> 8);
		out[3] = (unsigned char)len;
		at = 4;
	} else {
		out[1] = 0x80 | 127;
		for (i = 0; i < 8; i++)
			out[2 + i] = (unsigned char)((uint64_t)len >>
				(8 * (7 - i)));
		at = 10;
	}
	memcpy(out + at, mask, 4);
	at += 4;
	for (i = 0; i < len; i++)
		out[at + i] = p[i] ^ mask[i % 4];
	return at + len;
}

static int
known_opcode(int op)
{
	return op == WS_CONT || op == WS_TEXT || op == WS_BINARY ||
		op == WS_CLOSE || op == WS_PING || op == WS_PONG;
}

long
ws_parse(unsigned char *buf, size_t len, size_t max, struct ws_msg *m)
{
	size_t at = 2, n, i;
	int masked;

	if (len < 2)
		return 0;
	m->fin = buf[0] >> 7;
	m->opcode = buf[0] & 0x0f;
	masked = buf[1] >> 7;
	n = buf[1] & 0x7f;
	if ((buf[0] & 0x70) || !known_opcode(m->opcode))
		return -1;
	if (m->opcode >= WS_CLOSE && (n > 125 || !m->fin))
		return -1;
	if (n == 126) {
		if (len < 4)
			return 0;
		n = (size_t)buf[2] << 8 | buf[3];
		at = 4;
	} else if (n == 127) {
		uint64_t v = 0;
		if (len < 10)
			return 0;
		for (i = 0; i < 8; i++)
			v = v << 8 | buf[2 + i];
		if (v > max)
			return -1;
		n = (size_t)v;
		at = 10;
	}
	if (n > max)
		return -1;
	if (len < at + (masked ? 4 : 0) + n)
		return 0;
	m->payload = buf + at + (masked ? 4 : 0);
	m->len = n;
	if (masked)
		for (i = 0; i < n; i++)
			m->payload[i] ^= buf[at + i % 4];
	return (long)(at + (masked ? 4 : 0) + n);
}
