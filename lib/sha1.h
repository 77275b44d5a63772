/* sha1: the SHA-1 digest (FIPS 180-4) of a byte string, as Redis names
 * scripts for EVALSHA. */
#ifndef HAZ_SHA1_H
#define HAZ_SHA1_H

#include <stddef.h>

/* sha1_hex writes the digest of data[0..len) as 40 lowercase hex digits
 * and a NUL to out. */
void sha1_hex(const void *data, size_t len, char out[41]);

#endif
