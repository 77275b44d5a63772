/* jbuf: JSON text building for records written often. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jbuf.h"

/* grow makes room for n more bytes and a NUL. */
static void
grow(struct jb *b, size_t n)
{
	while (b->len + n + 1 > b->cap)
		b->cap = b->cap ? b->cap * 2 : 256;
	b->buf = erealloc(b->buf, b->cap);
}

static inline void
put(struct jb *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap)
		grow(b, n);
	memcpy(b->buf + b->len, s, n);
	b->len += n;
}

void
jb_reset(struct jb *b)
{
	b->len = 0;
}

void
jb_free(struct jb *b)
{
	free(b->buf);
	memset(b, 0, sizeof *b);
}

void
jb_raw(struct jb *b, const char *s)
{
	put(b, s, strlen(s));
}

/* plain[c]: byte c goes into a JSON string as it is. */
/* clang-format off */
static const unsigned char plain[256] = {
#define ROW16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
	ROW16(0), ROW16(0),
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x22 '"' */
	ROW16(1), ROW16(1),
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x5c '\\' */
	ROW16(1), ROW16(1), ROW16(1), ROW16(1), ROW16(1), ROW16(1), ROW16(1),
	ROW16(1), ROW16(1), ROW16(1),
#undef ROW16
};
/* clang-format on */

void
jb_strn(struct jb *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	char esc[7] = "\\u00";
	size_t run;

	put(b, "\"", 1);
	while (p < end) {
		for (run = 0; plain[p[run]]; run++)
			; /* stops at a NUL, the one at end at the latest */
		put(b, (const char *)p, run);
		p += run;
		if (p == end)
			break;
		switch (*p) {
		case '"': put(b, "\\\"", 2); break;
		case '\\': put(b, "\\\\", 2); break;
		case '\b': put(b, "\\b", 2); break;
		case '\f': put(b, "\\f", 2); break;
		case '\n': put(b, "\\n", 2); break;
		case '\r': put(b, "\\r", 2); break;
		case '\t': put(b, "\\t", 2); break;
		default:
			esc[4] = hex[*p >> 4];
			esc[5] = hex[*p & 15];
			put(b, esc, 6);
		}
		p++;
	}
	put(b, "\"", 1);
}

void
jb_str(struct jb *b, const char *s)
{
	jb_strn(b, s, strlen(s));
}

void
jb_int(struct jb *b, long long v)
{
	char tmp[24], *p = tmp + sizeof tmp;
	unsigned long long u = v < 0 ? 0 - (unsigned long long)v
				     : (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	put(b, p, (size_t)(tmp + sizeof tmp - p));
}

int
jb_dtoa(double v, char *buf)
{
	int n, prec;
	char *e, *p, *q;

	if (!isfinite(v))
		return -1;
	/* the fewest significant digits that read back as v */
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, JB_DTOA_SIZE, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	n = snprintf(buf, JB_DTOA_SIZE, "%.*g", prec, v);
	if ((e = strchr(buf, 'e'))) {
		/* "1e+20" as "1e20", "1e-07" as "1e-7" */
		p = q = e + 1;
		if (*p == '+')
			p++;
		else if (*p == '-')
			q = ++p;
		while (*p == '0' && p[1])
			p++;
		memmove(q, p, strlen(p) + 1);
		n = (int)strlen(buf);
	} else if (!strchr(buf, '.')) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	return n;
}

void
jb_real(struct jb *b, double v)
{
	char tmp[JB_DTOA_SIZE];
	int n = jb_dtoa(v, tmp);

	if (n < 0)
		err_die(HAZ_FAIL, "<stdout>: cannot write %s as JSON",
			isnan(v)        ? "nan"
				: v < 0 ? "-inf"
					: "inf");
	put(b, tmp, (size_t)n);
}

void
jb_milli(struct jb *b, long long v)
{
	char frac[5];
	long long a = v < 0 ? -v : v;
	int f = (int)(a % 1000), n = 3;

	if (v < 0)
		put(b, "-", 1);
	jb_int(b, a / 1000);
	frac[0] = '.';
	frac[1] = (char)('0' + f / 100);
	frac[2] = (char)('0' + f / 10 % 10);
	frac[3] = (char)('0' + f % 10);
	while (n > 1 && frac[n] == '0')
		n--;
	put(b, frac, (size_t)n + 1);
}

void
jb_write(const struct jb *b)
{
	if (fwrite(b->buf, 1, b->len, stdout) != b->len ||
		putchar('\n') == EOF || fflush(stdout) == EOF)
		err_die(HAZ_FAIL, "<stdout>: write error:");
}

void
jb_json(struct jb *b, const json_t *v)
{
	const char *key;
	json_t *m;
	size_t i, n;
	int first = 1;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		put(b, "{", 1);
		json_object_foreach((json_t *)v, key, m) {
			if (!first)
				put(b, ",", 1);
			first = 0;
			jb_str(b, key);
			put(b, ":", 1);
			jb_json(b, m);
		}
		put(b, "}", 1);
		break;
	case JSON_ARRAY:
		put(b, "[", 1);
		n = json_array_size(v);
		for (i = 0; i < n; i++) {
			if (i)
				put(b, ",", 1);
			jb_json(b, json_array_get(v, i));
		}
		put(b, "]", 1);
		break;
	case JSON_STRING:
		jb_strn(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER: jb_int(b, json_integer_value(v)); break;
	case JSON_REAL: jb_real(b, json_real_value(v)); break;
	case JSON_TRUE: put(b, "true", 4); break;
	case JSON_FALSE: put(b, "false", 5); break;
	default: put(b, "null", 4);
	}
}

char *
jb_dumps(const json_t *v)
{
	struct jb b = {0};

	jb_json(&b, v);
	put(&b, "", 1);
	return b.buf;
}
