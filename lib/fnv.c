/* fnv: FNV-1a, 64 bit. */
#include "fnv.h"

uint64_t
fnv_64(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 1099511628211ULL;
	return h;
}
