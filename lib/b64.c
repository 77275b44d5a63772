/* b64: base64 decoding and encoding. */
#include <stdlib.h>

#include "b64.h"
#include "err.h"

static const char alphabet
	[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int
sextet(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* padding_ok checks that in[i..len) holds only '=' and line breaks, and
 * that the '=' count completes the last quantum of got sextets. */
static int
padding_ok(const char *in, size_t len, size_t i, int got, size_t *bad)
{
	int pads = 0;

	for (; i < len; i++) {
		if (in[i] == '\r' || in[i] == '\n')
			continue;
		if (in[i] != '=' || got + pads >= 4) {
			*bad = i;
			return 0;
		}
		pads++;
	}
	return 1;
}

int
b64_decode(const char *in, size_t len, unsigned char **out, size_t *outlen,
	size_t *bad)
{
	unsigned char *buf = emalloc(len / 4 * 3 + 4);
	unsigned long acc = 0;
	size_t i, n = 0, last = 0;
	int got = 0, v;

	*out = NULL;
	for (i = 0; i < len && in[i] != '='; i++) {
		if (in[i] == '\r' || in[i] == '\n')
			continue;
		if ((v = sextet((unsigned char)in[i])) < 0) {
			*bad = i;
			goto fail;
		}
		last = i;
		acc = acc << 6 | (unsigned long)v;
		if (++got == 4) {
			buf[n++] = acc >> 16 & 0xff;
			buf[n++] = acc >> 8 & 0xff;
			buf[n++] = acc & 0xff;
			acc = 0;
			got = 0;
		}
	}
	if (got == 1) {
		*bad = last;
		goto fail;
	}
	if (got == 0 && i < len) {
		*bad = i;
		goto fail;
	}
	if (!padding_ok(in, len, i, got, bad))
		goto fail;
	if (got == 2)
		buf[n++] = acc >> 4 & 0xff;
	if (got == 3) {
		buf[n++] = acc >> 10 & 0xff;
		buf[n++] = acc >> 2 & 0xff;
	}
	buf[n] = '\0';
	*out = buf;
	*outlen = n;
	return 0;
fail:
	free(buf);
	return -1;
}

char *
b64_encode(const void *p, size_t n)
{
	const unsigned char *s = p;
	char *out = emalloc((n + 2) / 3 * 4 + 1), *o = out;
	unsigned long acc;
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		acc = (unsigned long)s[i] << 16 | s[i + 1] << 8 | s[i + 2];
		*o++ = alphabet[acc >> 18 & 63];
		*o++ = alphabet[acc >> 12 & 63];
		*o++ = alphabet[acc >> 6 & 63];
		*o++ = alphabet[acc & 63];
	}
	if (i < n) {
		acc = (unsigned long)s[i] << 16;
		if (i + 1 < n)
			acc |= s[i + 1] << 8;
		*o++ = alphabet[acc >> 18 & 63];
		*o++ = alphabet[acc >> 12 & 63];
		*o++ = i + 1 < n ? alphabet[acc >> 6 & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}
