/* b64: standard base64 (RFC 4648 section 4), as Kubernetes stores bytes
 * in JSON and YAML.
 *
 * Threads: no state of its own: any thread, on buffers of its own. */
#ifndef HAZ_B64_H
#define HAZ_B64_H

#include <stddef.h>

/* b64_decode decodes len bytes of in. Line breaks (\r, \n) are skipped;
 * '=' padding may be present or left off at the end. On success it
 * returns 0 and a malloc'd buffer in *out (NUL-terminated, not counted in
 * *outlen). On bad input it returns -1, sets *bad to the offset in in of
 * the first offending byte and leaves *out NULL. */
int b64_decode(const char *in, size_t len, unsigned char **out, size_t *outlen,
	size_t *bad);

/* b64_encode returns a malloc'd NUL-terminated base64 text of n bytes. */
char *b64_encode(const void *p, size_t n);

#endif
