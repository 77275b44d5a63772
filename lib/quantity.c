/* quantity: exact Kubernetes resource quantities; see quantity.h.
 *
 * Parsing keeps the number as a string of decimal digits times a power
 * of ten, multiplies by 1024 for binary suffixes, and only then cuts it
 * into whole units and nano-units, so no step rounds but the last. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "quantity.h"

#define NANO 1000000000
#define EXP_MAX 1000000000000000LL /* exponents saturate here */
#define HEADROOM 32                /* digits six *1024 may add in front */

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
} dec_suffixes[] = {
	{"n", -9}, {"u", -6}, {"m", -3}, {"", 0}, {"k", 3},
	{"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18},
};

static const char *const bin_suffixes[] = {
	"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
};

/* A number being parsed: the digits (values 0-9, no leading zeros)
 * buf[start..end) times 10^exp10, negative when neg. */
struct num {
	char *buf;
	size_t start, end;
	long long exp10;
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

static void
push_digit(struct num *n, int d)
{
	if (n->end == n->start && d == 0)
		return;
	n->buf[n->end++] = (char)d;
}

/* scan_number reads [+-]digits[.digits] at *sp into n and moves *sp
 * past it. Returns QTY_OK, or QTY_ENUMBER when there is no digit. */
static int
scan_number(const char **sp, struct num *n)
{
	const char *s = *sp;
	size_t ndigits = 0;

	n->neg = *s == '-';
	if (*s == '+' || *s == '-')
		s++;
	for (; is_digit(*s); s++, ndigits++)
		push_digit(n, *s - '0');
	if (*s == '.')
		for (s++; is_digit(*s); s++, ndigits++, n->exp10--)
			push_digit(n, *s - '0');
	if (ndigits == 0)
		return QTY_ENUMBER;
	*sp = s;
	return QTY_OK;
}

/* scan_exponent reads the [+-]digits after an 'e' into *exp, which
 * saturates at +-EXP_MAX; nothing may follow. */
static int
scan_exponent(const char *s, long long *exp)
{
	long long v = 0;
	int neg = 0;

	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	if (!is_digit(*s))
		return QTY_EEXP;
	for (; is_digit(*s); s++)
		if (v < EXP_MAX)
			v = v * 10 + (*s - '0');
	if (*s)
		return QTY_EEXP;
	*exp = neg ? -v : v;
	return QTY_OK;
}

/* scan_suffix applies the suffix s to n: a power of ten goes into
 * n->exp10, a power of 1024 into *pow1024. Sets *form. */
static int
scan_suffix(const char *s, struct num *n, int *pow1024, enum qty_form *form)
{
	long long exp;
	size_t i;
	int err;

	for (i = 0; i < sizeof dec_suffixes / sizeof *dec_suffixes; i++)
		if (strcmp(s, dec_suffixes[i].name) == 0) {
			n->exp10 += dec_suffixes[i].exp10;
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
		if ((err = scan_exponent(s + 1, &exp)) != QTY_OK)
			return err;
		n->exp10 += exp;
		*form = QTY_DECIMAL_EXP;
		return QTY_OK;
	}
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ", *s))
			return QTY_EGARBAGE;
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

/* set_magnitude stores (neg ? -1 : 1) * (whole + nano/10^9) in q, in
 * floor form; whole must not exceed INT64_MAX. */
static void
set_magnitude(struct qty *q, uint64_t whole, uint32_t nano, int neg)
{
	if (!neg) {
		q->whole = (int64_t)whole;
		q->nano = (int32_t)nano;
	} else if (nano == 0) {
		q->whole = -(int64_t)whole;
		q->nano = 0;
	} else {
		q->whole = -(int64_t)whole - 1;
		q->nano = (int32_t)(NANO - nano);
	}
}

/* magnitude splits q into |q| as whole and nano; returns 1 if q < 0. */
static int
magnitude(const struct qty *q, uint64_t *whole, uint32_t *nano)
{
	if (q->whole >= 0) {
		*whole = (uint64_t)q->whole;
		*nano = (uint32_t)q->nano;
		return 0;
	}
	if (q->nano == 0) {
		*whole = -(uint64_t)q->whole;
		*nano = 0;
		return 1;
	}
	*whole = -(uint64_t)(q->whole + 1);
	*nano = (uint32_t)(NANO - q->nano);
	return 1;
}

static int
digit_at(const struct num *n, long long i)
{
	long long len = (long long)(n->end - n->start);

	return i >= 0 && i < len ? n->buf[n->start + (size_t)i] : 0;
}

/* to_qty cuts n into whole units and nano-units, rounding any finer
 * digit up (away from zero). */
static int
to_qty(const struct num *n, struct qty *q)
{
	long long len = (long long)(n->end - n->start);
	long long point = len + n->exp10, i;
	uint64_t whole = 0;
	uint32_t nano = 0;

	if (len == 0)
		return QTY_OK;
	if (point > 19)
		return QTY_ERANGE;
	for (i = 0; i < point; i++)
		whole = whole * 10 + (uint64_t)digit_at(n, i);
	for (i = point; i < point + 9; i++)
		nano = nano * 10 + (uint32_t)digit_at(n, i);
	for (i = point + 9 > 0 ? point + 9 : 0; i < len; i++)
		if (digit_at(n, i)) {
			nano++;
			break;
		}
	if (nano == NANO) {
		nano = 0;
		whole++;
	}
	if (whole > INT64_MAX)
		return QTY_ERANGE;
	set_magnitude(q, whole, nano, n->neg);
	return QTY_OK;
}

int
qty_parse(struct qty *q, const char *s)
{
	enum qty_form form = QTY_DECIMAL_SI;
	struct num n = {0};
	int pow1024 = 0, err;

	memset(q, 0, sizeof *q);
	if (!*s)
		return QTY_EEMPTY;
	n.buf = emalloc(strlen(s) + HEADROOM);
	n.start = n.end = HEADROOM;
	err = scan_number(&s, &n);
	if (err == QTY_OK)
		err = scan_suffix(s, &n, &pow1024, &form);
	while (err == QTY_OK && pow1024-- > 0)
		mul1024(&n);
	if (err == QTY_OK)
		err = to_qty(&n, q);
	free(n.buf);
	if (err != QTY_OK)
		memset(q, 0, sizeof *q);
	q->form = form;
	return err;
}

void
qty_from_int(struct qty *q, int64_t v, enum qty_form form)
{
	q->whole = v;
	q->nano = 0;
	q->form = form;
}

void
qty_from_milli(struct qty *q, int64_t milli, enum qty_form form)
{
	int64_t whole = milli / 1000, rest = milli % 1000;

	if (rest < 0) {
		rest += 1000;
		whole--;
	}
	q->whole = whole;
	q->nano = (int32_t)(rest * 1000000);
	q->form = form;
}

int
qty_cmp(const struct qty *a, const struct qty *b)
{
	if (a->whole != b->whole)
		return a->whole < b->whole ? -1 : 1;
	if (a->nano != b->nano)
		return a->nano < b->nano ? -1 : 1;
	return 0;
}

static int
add_i64(int64_t a, int64_t b, int64_t *out)
{
	if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
		return QTY_ERANGE;
	*out = a + b;
	return QTY_OK;
}

int
qty_add(struct qty *out, const struct qty *a, const struct qty *b)
{
	int32_t nano = a->nano + b->nano;
	int64_t whole;
	int carry = nano >= NANO;
	enum qty_form form;

	if (carry)
		nano -= NANO;
	if (add_i64(a->whole, b->whole, &whole) != QTY_OK ||
		add_i64(whole, carry, &whole) != QTY_OK)
		return QTY_ERANGE;
	form = a->whole == 0 && a->nano == 0 ? b->form : a->form;
	out->whole = whole;
	out->nano = nano;
	out->form = form;
	return QTY_OK;
}

int
qty_sub(struct qty *out, const struct qty *a, const struct qty *b)
{
	struct qty neg = *b;
	enum qty_form form;

	if (b->nano == 0) {
		if (b->whole == INT64_MIN)
			return QTY_ERANGE;
		neg.whole = -b->whole;
	} else {
		neg.whole = -1 - b->whole;
		neg.nano = NANO - b->nano;
	}
	form = a->whole == 0 && a->nano == 0 ? b->form : a->form;
	if (qty_add(out, a, &neg) != QTY_OK)
		return QTY_ERANGE;
	out->form = form;
	return QTY_OK;
}

/* signed_value stores (neg ? -m : m) in *out if it fits. */
static int
signed_value(uint64_t m, int neg, int64_t *out)
{
	if (m > (uint64_t)INT64_MAX + neg)
		return QTY_ERANGE;
	*out = neg ? (int64_t)(0 - m) : (int64_t)m;
	return QTY_OK;
}

int
qty_value(const struct qty *q, int64_t *out)
{
	uint64_t whole;
	uint32_t nano;
	int neg = magnitude(q, &whole, &nano);

	if (nano && whole == UINT64_MAX)
		return QTY_ERANGE;
	return signed_value(whole + (nano != 0), neg, out);
}

int
qty_milli(const struct qty *q, int64_t *out)
{
	uint64_t whole;
	uint32_t nano;
	int neg = magnitude(q, &whole, &nano);

	if (whole > (uint64_t)INT64_MAX / 1000 + 1)
		return QTY_ERANGE;
	return signed_value(whole * 1000 + (nano + 999999) / 1000000, neg,
		out);
}

/* format_binary writes whole (at least 1024) with the largest binary
 * suffix that divides it. */
static void
format_binary(char *p, uint64_t whole)
{
	size_t k = 0;

	while (k < 6 && whole % 1024 == 0) {
		whole /= 1024;
		k++;
	}
	sprintf(p, "%ju%s", (uintmax_t)whole, bin_suffixes[k]);
}

/* decimal_digits writes whole.nano as an integer mantissa with no
 * leading or (beyond a multiple of 3) trailing zeros; returns the power
 * of ten, a multiple of 3 from -9 to 18. */
static int
decimal_digits(char *digits, uint64_t whole, uint32_t nano)
{
	char frac[16];
	size_t n, flen;
	int exp10 = 0;

	if (nano == 0) {
		n = (size_t)sprintf(digits, "%ju", (uintmax_t)whole);
		for (; n > 3 && memcmp(digits + n - 3, "000", 3) == 0; n -= 3)
			exp10 += 3;
		digits[n] = '\0';
		return exp10;
	}
	sprintf(frac, "%09u", (unsigned)nano);
	for (flen = 9; frac[flen - 1] == '0'; flen--)
		;
	flen = (flen + 2) / 3 * 3;
	if (whole)
		sprintf(digits, "%ju%.*s", (uintmax_t)whole, (int)flen, frac);
	else
		sprintf(digits, "%.*s", (int)(flen - strspn(frac, "0")),
			frac + strspn(frac, "0"));
	return -(int)flen;
}

static void
format_decimal(char *p, uint64_t whole, uint32_t nano, enum qty_form form)
{
	char digits[40];
	int exp10 = decimal_digits(digits, whole, nano);
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
	uint64_t whole;
	uint32_t nano;
	int neg = magnitude(q, &whole, &nano);
	char *p = buf;

	if (whole == 0 && nano == 0) {
		strcpy(buf, "0");
		return buf;
	}
	if (neg)
		*p++ = '-';
	if (q->form == QTY_BINARY_SI && nano == 0 && whole >= 1024)
		format_binary(p, whole);
	else
		format_decimal(p, whole, nano, q->form);
	return buf;
}
