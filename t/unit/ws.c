/* ws: test driver for lib/ws.
 *
 *	ws accept KEY     the Sec-WebSocket-Accept answer to KEY
 *	ws frame OPCODE   stdin as one client frame, in hex, masked with
 *	                  RFC 6455's example mask 37 fa 21 3d
 *	ws parse [MAX]    stdin's frames: "fin OP LEN PAYLOAD" each (the
 *	                  payload as text), then "rest N" for bytes left
 *	                  over, or "bad" for no frame */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ws.h"

static unsigned char *
slurp(size_t *n)
{
	unsigned char *b = NULL;
	size_t cap = 0, got;

	*n = 0;
	do {
		if (*n + 4096 > cap)
			b = erealloc(b, cap = 2 * cap + 4096);
		got = fread(b + *n, 1, 4096, stdin);
		*n += got;
	} while (got);
	return b;
}

static int
parse(size_t max)
{
	size_t n, at = 0;
	unsigned char *b = slurp(&n);
	struct ws_msg m;
	long r;

	while (at < n && (r = ws_parse(b + at, n - at, max, &m)) > 0) {
		printf("%d %d %zu %.*s\n", m.fin, m.opcode, m.len, (int)m.len,
			(char *)m.payload);
		at += (size_t)r;
	}
	if (at < n)
		printf(r < 0 ? "bad\n" : "rest %zu\n", n - at);
	free(b);
	return 0;
}

int
main(int argc, char **argv)
{
	static const unsigned char mask[4] = {0x37, 0xfa, 0x21, 0x3d};
	char acc[29];

	err_init(argv[0]);
	if (argc == 3 && !strcmp(argv[1], "accept")) {
		ws_accept(argv[2], acc);
		puts(acc);
	} else if (argc == 3 && !strcmp(argv[1], "frame")) {
		size_t n, i, len;
		unsigned char *in = slurp(&n), *out = emalloc(n + WS_HDR_MAX);
		len = ws_frame(out, atoi(argv[2]), in, n, mask);
		for (i = 0; i < len; i++)
			printf("%02x%s", out[i], i + 1 < len ? " " : "\n");
		free(in);
		free(out);
	} else if ((argc == 2 || argc == 3) && !strcmp(argv[1], "parse")) {
		return parse(argc == 3 ? strtoul(argv[2], NULL, 10) : 1 << 20);
	} else {
		fputs("usage: ws accept KEY | frame OPCODE | parse [MAX]\n",
			stderr);
		return 2;
	}
	return 0;
}
