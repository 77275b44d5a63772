/* sha256: test driver for lib/sha256.
 *
 *	sha256 [CHUNK]
 *
 * Prints the digest of stdin, fed to sha256_update in pieces of CHUNK
 * bytes (default 4096; 1, 55, 63, 64 and 65 cross every padding and
 * block boundary), then the one-call sha256_buf of the same bytes, which
 * must agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "sha256.h"

int
main(int argc, char **argv)
{
	size_t chunk = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096, n = 0,
	       cap = 0;
	char *all = NULL, a[65], b[65];
	struct sha256 s;
	size_t got;

	err_init(argv[0]);
	if (chunk == 0)
		err_die(HAZ_USAGE, "chunk: a positive number");
	sha256_init(&s);
	for (;;) {
		if (n + chunk > cap) {
			cap = (n + chunk) * 2;
			all = erealloc(all, cap);
		}
		got = fread(all + n, 1, chunk, stdin);
		if (got == 0)
			break;
		sha256_update(&s, all + n, got);
		n += got;
	}
	sha256_hex(&s, a);
	sha256_buf(all, n, b);
	printf("%s\n%s\n", a, b);
	free(all);
	return strcmp(a, b) != 0;
}
