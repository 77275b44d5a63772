/* rset: sorted array or summarized bitset. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "rset.h"

void
rs_free(struct rset *s)
{
	free(s->arr);
	free(s->bits);
	free(s->sum);
	memset(s, 0, sizeof *s);
}

/* grow turns a full small set into a bitset over universe. */
static void
grow(struct rset *s, uint32_t universe)
{
	uint32_t i, r;

	s->words = (universe + 63) / 64;
	s->bits = ecalloc(s->words, sizeof *s->bits);
	s->sum = ecalloc((s->words + 63) / 64, sizeof *s->sum);
	for (i = 0; i < s->n; i++) {
		r = s->arr[i];
		s->bits[r / 64] |= 1ULL << (r % 64);
		s->sum[r / 4096] |= 1ULL << (r / 64 % 64);
	}
	free(s->arr);
	s->arr = NULL;
	s->cap = 0;
}

/* lower returns the position of the first array member >= r. */
static uint32_t
lower(const struct rset *s, uint32_t r)
{
	uint32_t lo = 0, hi = s->n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (s->arr[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void
rs_add(struct rset *s, uint32_t r, uint32_t universe)
{
	uint32_t i;

	if (!s->bits && s->n == RS_SMALL)
		grow(s, universe);
	if (s->bits) {
		s->n++;
		s->bits[r / 64] |= 1ULL << (r % 64);
		s->sum[r / 4096] |= 1ULL << (r / 64 % 64);
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4;
		s->arr = erealloc(s->arr, s->cap * sizeof *s->arr);
	}
	i = lower(s, r);
	memmove(&s->arr[i + 1], &s->arr[i], (s->n - i) * sizeof *s->arr);
	s->arr[i] = r;
	s->n++;
}

void
rs_del(struct rset *s, uint32_t r)
{
	uint32_t i;

	if (s->bits) {
		s->n--;
		s->bits[r / 64] &= ~(1ULL << (r % 64));
		if (!s->bits[r / 64])
			s->sum[r / 4096] &= ~(1ULL << (r / 64 % 64));
		return;
	}
	i = lower(s, r);
	memmove(&s->arr[i], &s->arr[i + 1], (s->n - i - 1) * sizeof *s->arr);
	s->n--;
}

uint32_t
rs_next(const struct rset *s, uint32_t r)
{
	uint32_t w, sw, nsum;
	uint64_t m;

	if (!s->bits) {
		w = s->n ? lower(s, r) : 0;
		return w < s->n ? s->arr[w] : RS_NONE;
	}
	w = r / 64;
	if (w >= s->words)
		return RS_NONE;
	if ((m = s->bits[w] & (~0ULL << (r % 64))))
		return w * 64 + (uint32_t)__builtin_ctzll(m);
	/* the summary finds the next non-empty word */
	w++;
	sw = w / 64;
	nsum = (s->words + 63) / 64;
	if (sw >= nsum)
		return RS_NONE;
	m = w % 64 ? s->sum[sw] & (~0ULL << (w % 64)) : s->sum[sw];
	while (!m && ++sw < nsum)
		m = s->sum[sw];
	if (!m)
		return RS_NONE;
	w = sw * 64 + (uint32_t)__builtin_ctzll(m);
	return w * 64 + (uint32_t)__builtin_ctzll(s->bits[w]);
}
