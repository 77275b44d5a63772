/* quantity: exact Kubernetes resource quantities; see quantity.h.
 *
 * Parsing keeps the number as a string of decimal digits times a power
 * of ten, multiplies by 1024 for binary suffixes, and only then cuts it
 * into whole units and nano-units, so no step rounds but the last. No
 * loop runs on the exponent: an exponent of 2^31 costs what 3 does.
 * Magnitudes are unsigned 128-bit numbers below 10^38 (sums below
 * 2 * 10^38), so nothing here can overflow. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "quantity.h"

typedef unsigned __int128 u128;

#define NANO 1000000000u
#define HUGE_DIGITS 38 /* 10^38 units and more are huge */
#define HEADROOM 32    /* digits six *1024 may add in front */

static const u128 huge_whole = (u128)10000000000000000000u *
	10000000000000000000u; /* 10^38 */

static const char *const errors[] = {
	[QTY_OK] = "no error",
	[QTY_EEMPTY] = "empty quantity",
	[QTY_ENUMBER] = "invalid number",
	[QTY_ESUFFIX] = "unknown suffix",
	[QTY_EEXP] = "invalid exponent",
	[QTY_EGARBAGE] = "trailing garbage",
	[QTY_ERANGE] = "out of range",
};

static const struct {
	const char *name;
	int exp10;
} dec_suffixes[] = {{"n", -9}, {"u", -6}, {"m", -3}, {"", 0}, {"k", 3},
	{"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18}};

static const char *const bin_suffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi",
	"Ei"};

/* A number being parsed: the digits (values 0-9, no leading zeros)
 * buf[start..end) times 10^exp10, negative when neg; nfrac digits were
 * written after the point, ndigits in all. */
struct num {
	char *buf;
	size_t start, end, nfrac, ndigits;
	int64_t exp10;
	int neg;
};

const char *
qty_strerror(int err)
{
	if (err < 0 || (size_t)err >= sizeof errors / sizeof *errors)
		return "unknown error";
	return errors[err];
}

static int
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* wrap32 is v taken modulo 2^32 as a signed 32-bit number, as Go's
 * int32() conversion makes it. */
static int64_t
wrap32(uint64_t v)
{
	uint32_t u = (uint32_t)v;

	return u >= 0x80000000u ? (int64_t)u - 0x100000000LL : (int64_t)u;
}

static void
push_digit(struct num *n, int d)
{
	n->ndigits++;
	if (n->end == n->start && d == 0)
		return;
	n->buf[n->end++] = (char)d;
}

/* scan_number reads [+-]digits*[.digits*] at *sp into n and moves *sp
 * past it; no digit at all is allowed (Kubernetes reads it as 0). */
static void
scan_number(const char **sp, struct num *n)
{
	const char *s = *sp;

	n->neg = *s == '-';
	if (*s == '+' || *s == '-')
		s++;
	for (; is_digit(*s); s++)
		push_digit(n, *s - '0');
	if (*s == '.')
		for (s++; is_digit(*s); s++, n->nfrac++)
			push_digit(n, *s - '0');
	*sp = s;
}

/* suffix_shape checks what Kubernetes lets follow a number: letters of
 * "eEinumkKMGTP", then an optional sign, then digits, and nothing else. */
static int
suffix_shape(const char *s)
{
	s += strspn(s, "eEinumkKMGTP");
	if (*s == '+' || *s == '-')
		s++;
	while (is_digit(*s))
		s++;
	return *s ? QTY_EGARBAGE : QTY_OK;
}

/* parse_int64 reads s whole as Go's strconv.ParseInt(s, 10, 64) does:
 * an optional sign, then at least one digit, within int64. */
static int
parse_int64(const char *s, int64_t *out)
{
	uint64_t v = 0, limit = (uint64_t)INT64_MAX;
	int neg = 0;

	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (!*s)
		return -1;
	limit += (uint64_t)neg;
	for (; *s; s++) {
		if (!is_digit(*s) || v > (limit - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* scan_suffix interprets the suffix s: a power of ten in *exp10 (the
 * exponent of "e..." wrapped to 32 bits), or a power of 1024 in
 * *pow1024. Sets *form. */
static int
scan_suffix(const char *s, int64_t *exp10, int *pow1024, enum qty_form *form)
{
	int64_t exp;
	size_t i;

	for (i = 0; i < sizeof dec_suffixes / sizeof *dec_suffixes; i++)
		if (strcmp(s, dec_suffixes[i].name) == 0) {
			*exp10 = dec_suffixes[i].exp10;
			*form = QTY_DECIMAL_SI;
			return QTY_OK;
		}
	for (i = 1; i < sizeof bin_suffixes / sizeof *bin_suffixes; i++)
		if (strcmp(s, bin_suffixes[i]) == 0) {
			*pow1024 = (int)i;
			*form = QTY_BINARY_SI;
			return QTY_OK;
		}
	if (*s == 'e' || *s == 'E') {
		if (parse_int64(s + 1, &exp) < 0)
			return QTY_EEXP;
		*exp10 = wrap32((uint64_t)exp);
		*form = QTY_DECIMAL_EXP;
		return QTY_OK;
	}
	return QTY_ESUFFIX;
}

static void
mul1024(struct num *n)
{
	unsigned carry = 0, v;
	size_t i;

	for (i = n->end; i-- > n->start;) {
		v = (unsigned)n->buf[i] * 1024u + carry;
		n->buf[i] = (char)(v % 10);
		carry = v / 10;
	}
	for (; carry; carry /= 10)
		n->buf[--n->start] = (char)(carry % 10);
}

static void
set_huge(struct qty *q, int neg)
{
	q->whole = huge_whole;
	q->nano = 0;
	q->neg = neg;
}

static int
digit_at(const struct num *n, int64_t i)
{
	int64_t len = (int64_t)(n->end - n->start);

	return i >= 0 && i < len ? n->buf[n->start + (size_t)i] : 0;
}

/* to_qty cuts n into whole units and nano-units, rounding any finer
 * digit up (away from zero); 10^38 units or more make it huge. Trailing
 * zeros go first, so the last digit tells whether any is finer. */
static void
to_qty(struct num *n, struct qty *q)
{
	int64_t len, point, i;
	u128 whole = 0;
	uint32_t nano = 0;

	for (; n->end > n->start && n->buf[n->end - 1] == 0; n->end--)
		n->exp10++;
	len = (int64_t)(n->end - n->start);
	point = len + n->exp10;
	if (len == 0)
		return;
	if (point > HUGE_DIGITS) {
		set_huge(q, n->neg);
		return;
	}
	for (i = 0; i < point; i++)
		whole = whole * 10 + (u128)digit_at(n, i);
	for (i = point; i < point + 9; i++)
		nano = nano * 10 + (uint32_t)digit_at(n, i);
	if (len > point + 9)
		nano++;
	if (nano == NANO) {
		nano = 0;
		whole++;
	}
	if (whole >= huge_whole) {
		set_huge(q, n->neg);
		return;
	}
	q->whole = whole;
	q->nano = nano;
	q->neg = n->neg;
}

/* value_of sets n->exp10 for the suffix and applies a binary one. No
 * digit at all is 0, but an error for a power of ten below -9, Pi or
 * Ei, where Kubernetes leaves its fast path and parses the number again
 * (and finds none). */
static int
value_of(struct num *n, int64_t exp10, int pow1024, enum qty_form form,
	struct qty *q)
{
	if (form != QTY_BINARY_SI) {
		/* Kubernetes adds the fraction's length to the exponent in
		 * 32 bits: the power of ten is -wrap32(nfrac - exp10) */
		n->exp10 = -wrap32((uint32_t)n->nfrac - (uint64_t)exp10);
		if (!n->ndigits && exp10 < -9)
			return QTY_ENUMBER;
		to_qty(n, q);
		return QTY_OK;
	}
	if (!n->ndigits && pow1024 >= 5)
		return QTY_ENUMBER;
	n->exp10 = -(int64_t)n->nfrac;
	if ((int64_t)(n->end - n->start) + n->exp10 > HUGE_DIGITS)
		pow1024 = 0; /* beyond 2^63 already */
	while (pow1024-- > 0)
		mul1024(n);
	to_qty(n, q);
	if (q->whole > (u128)INT64_MAX ||
		(q->whole == (u128)INT64_MAX && q->nano)) {
		q->whole = (u128)INT64_MAX; /* Kubernetes' cap for BinarySI */
		q->nano = 0;
	}
	return QTY_OK;
}

int
qty_parse(struct qty *q, const char *s)
{
	enum qty_form form = QTY_DECIMAL_SI;
	struct num n = {0};
	int64_t exp10 = 0;
	int pow1024 = 0, err;

	memset(q, 0, sizeof *q);
	if (!*s)
		return QTY_EEMPTY;
	n.buf = emalloc(strlen(s) + HEADROOM);
	n.start = n.end = HEADROOM;
	scan_number(&s, &n);
	err = suffix_shape(s);
	if (err == QTY_OK)
		err = scan_suffix(s, &exp10, &pow1024, &form);
	if (err == QTY_OK)
		err = value_of(&n, exp10, pow1024, form, q);
	free(n.buf);
	if (err != QTY_OK)
		memset(q, 0, sizeof *q);
	q->form = form;
	return err;
}

int
qty_huge(const struct qty *q)
{
	return q->whole >= huge_whole;
}

static int
is_zero(const struct qty *q)
{
	return q->whole == 0 && q->nano == 0;
}

void
qty_from_int(struct qty *q, int64_t v, enum qty_form form)
{
	q->neg = v < 0;
	q->whole = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	q->nano = 0;
	q->form = form;
}

void
qty_from_milli(struct qty *q, int64_t milli, enum qty_form form)
{
	uint64_t m = milli < 0 ? 0 - (uint64_t)milli : (uint64_t)milli;

	q->neg = milli < 0;
	q->whole = m / 1000;
	q->nano = (uint32_t)(m % 1000) * 1000000u;
	q->form = form;
}

/* cmp_magnitude compares |a| and |b|. */
static int
cmp_magnitude(const struct qty *a, const struct qty *b)
{
	if (a->whole != b->whole)
		return a->whole < b->whole ? -1 : 1;
	if (a->nano != b->nano)
		return a->nano < b->nano ? -1 : 1;
	return 0;
}

int
qty_cmp(const struct qty *a, const struct qty *b)
{
	int c;

	if (a->neg != b->neg)
		return a->neg ? -1 : 1;
	c = cmp_magnitude(a, b);
	return a->neg ? -c : c;
}

int
qty_add(struct qty *out, const struct qty *a, const struct qty *b)
{
	enum qty_form form = is_zero(a) ? b->form : a->form;
	const struct qty *big = a, *small = b;
	struct qty r = {0};

	r.form = form;
	if (qty_huge(a) || qty_huge(b)) {
		set_huge(&r,
			qty_huge(a) && qty_huge(b) ? a->neg && b->neg
				: qty_huge(a)      ? a->neg
						   : b->neg);
		*out = r;
		return QTY_ERANGE;
	}
	if (a->neg == b->neg) {
		r.whole = a->whole + b->whole; /* < 2 * 10^38 < 2^128 */
		r.nano = a->nano + b->nano;
		if (r.nano >= NANO) {
			r.nano -= NANO;
			r.whole++;
		}
		r.neg = a->neg;
		if (r.whole >= huge_whole) {
			set_huge(&r, a->neg);
			*out = r;
			return QTY_ERANGE;
		}
	} else {
		if (cmp_magnitude(a, b) < 0) {
			big = b;
			small = a;
		}
		r.whole = big->whole - small->whole;
		if (big->nano >= small->nano) {
			r.nano = big->nano - small->nano;
		} else {
			r.nano = big->nano + NANO - small->nano;
			r.whole--;
		}
		r.neg = is_zero(&r) ? 0 : big->neg;
	}
	*out = r;
	return QTY_OK;
}

int
qty_sub(struct qty *out, const struct qty *a, const struct qty *b)
{
	struct qty neg = *b;

	if (!is_zero(b))
		neg.neg = !b->neg;
	return qty_add(out, a, &neg);
}

/* signed_value stores (neg ? -m : m) in *out if it fits. */
static int
signed_value(u128 m, int neg, int64_t *out)
{
	if (m > (u128)INT64_MAX + (unsigned)neg)
		return QTY_ERANGE;
	*out = neg ? (int64_t)(0 - (uint64_t)m) : (int64_t)m;
	return QTY_OK;
}

int
qty_value(const struct qty *q, int64_t *out)
{
	return signed_value(q->whole + (q->nano != 0), q->neg, out);
}

int
qty_milli(const struct qty *q, int64_t *out)
{
	if (q->whole > (u128)INT64_MAX / 1000 + 1)
		return QTY_ERANGE;
	return signed_value(q->whole * 1000 + (q->nano + 999999) / 1000000,
		q->neg, out);
}

/* u128_str writes v in decimal into p and returns its length. */
static size_t
u128_str(char *p, u128 v)
{
	char tmp[48];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	p[n] = '\0';
	return n;
}

/* format_binary writes whole (at least 1024) with the largest binary
 * suffix that divides it. */
static void
format_binary(char *p, u128 whole)
{
	size_t k = 0;

	while (k < 6 && whole % 1024 == 0) {
		whole /= 1024;
		k++;
	}
	strcpy(p + u128_str(p, whole), bin_suffixes[k]);
}

/* decimal_digits writes whole.nano as an integer mantissa with no
 * leading or (beyond a multiple of 3) trailing zeros; returns the power
 * of ten, a multiple of 3 from -9 up (DecimalSI: up to 18, its largest
 * suffix). */
static int
decimal_digits(char *digits, u128 whole, uint32_t nano, enum qty_form form)
{
	char frac[16];
	size_t n, flen, z;
	int exp10 = 0;

	if (nano == 0) {
		n = u128_str(digits, whole);
		for (; n > 3 && memcmp(digits + n - 3, "000", 3) == 0 &&
			(form != QTY_DECIMAL_SI || exp10 < 18);
			n -= 3)
			exp10 += 3;
		digits[n] = '\0';
		return exp10;
	}
	sprintf(frac, "%09u", (unsigned)nano);
	for (flen = 9; frac[flen - 1] == '0'; flen--)
		;
	flen = (flen + 2) / 3 * 3;
	frac[flen] = '\0';
	if (whole) {
		n = u128_str(digits, whole);
		strcpy(digits + n, frac);
	} else {
		z = strspn(frac, "0");
		memmove(digits, frac + z, flen - z + 1);
	}
	return -(int)flen;
}

static void
format_decimal(char *p, u128 whole, uint32_t nano, enum qty_form form)
{
	char digits[64];
	int exp10 = decimal_digits(digits, whole, nano, form);
	size_t i;

	if (form == QTY_DECIMAL_EXP) {
		if (exp10)
			sprintf(p, "%se%d", digits, exp10);
		else
			sprintf(p, "%s", digits);
		return;
	}
	for (i = 0; dec_suffixes[i].exp10 != exp10; i++)
		;
	sprintf(p, "%s%s", digits, dec_suffixes[i].name);
}

char *
qty_format(const struct qty *q, char *buf)
{
	char *p = buf;

	if (is_zero(q)) {
		strcpy(buf, "0");
		return buf;
	}
	if (q->neg)
		*p++ = '-';
	if (q->form == QTY_BINARY_SI && q->nano == 0 && q->whole >= 1024)
		format_binary(p, q->whole);
	else
		format_decimal(p, q->whole, q->nano, q->form);
	return buf;
}
