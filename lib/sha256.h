/* sha256: the SHA-256 digest (FIPS 180-4), incremental, with no library
 * behind it, so diff-pack's unpack-only build links statically in a
 * small binary (OpenSSL's libcrypto.a would add 4 MiB to every pod's
 * init image).
 *
 * Threads: no state of its own: a context belongs to one thread at a time. */
#ifndef HAZ_SHA256_H
#define HAZ_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes fed so far */
	unsigned char buf[64];
	size_t n; /* bytes waiting in buf */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* sha256_hex finishes s and writes 64 lowercase hex digits and a NUL. */
void sha256_hex(struct sha256 *s, char out[65]);
/* sha256_buf: the digest of data[0..len) in one call. */
void sha256_buf(const void *data, size_t len, char out[65]);

#endif
