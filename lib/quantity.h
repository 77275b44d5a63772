/* quantity (qty_): Kubernetes resource quantities ("10Gi", "500m", "1e3").
 *
 * The grammar and the values are those of Kubernetes' resource.Quantity
 * (ParseQuantity, apimachinery 0.34), so that a quantity means here what
 * it means to the API server:
 *
 *	quantity ::= [+-] number suffix
 *	number   ::= digits* [ "." digits* ]   (no digit at all reads as 0)
 *	suffix   ::= "" | n | u | m | k | M | G | T | P | E      (decimal SI)
 *	           | Ki | Mi | Gi | Ti | Pi | Ei                (binary SI)
 *	           | (e | E) [+-] digits                        (exponent)
 *
 * "1E" is 10^18 (exa); "1E3" is 1000. No white space anywhere. As in
 * Kubernetes:
 * - an exponent must fit in 64 bits and is then taken modulo 2^32, as a
 *   signed 32-bit number ("1e4294967298" is 100), and so is the power of
 *   ten it makes with the fraction digits;
 * - digits finer than 10^-9 round up, away from zero ("0.1n" is "1n");
 * - a binary (Ki ... Ei) quantity of more than 2^63-1 units is that
 *   many: "8Ei" is 9223372036854775807;
 * - a number with no digit is 0 ("Gi", "."), except with an exponent
 *   below -9 ("e-10"), which is an error.
 * A decimal quantity has no bound in Kubernetes ("1e30", "1e99999").
 *
 * A value is held exactly as a sign, a magnitude of whole units and a
 * count of nano-units, while the magnitude is below 10^38 units. A value
 * of 10^38 units or more, parsed or summed, is held as exactly 10^38 of
 * its sign and called huge (qty_huge): it compares equal to any other
 * huge value of its sign, and above (below) every other value, so a
 * limit below 10^38 is checked exactly against it; a caller comparing
 * two huge values must treat the answer as unknown.
 *
 * Canonical form (qty_format), as Kubernetes serializes:
 * - decimal (DecimalSI, exponent): the largest power of ten that is a
 *   multiple of 3 and leaves an integer mantissa: 1.5 is "1500m",
 *   8000m is "8", 1000 is "1k", 1e3 is "1e3", 1.5e3 is "1500"; DecimalSI
 *   goes no higher than E: 10^21 is "1000E" (Kubernetes would drop the
 *   suffix and write "1").
 * - binary (BinarySI): the largest power of 1024 that divides the
 *   value: 0.5Gi is "512Mi", 16Gi stays "16Gi", 1.5Gi is "1536Mi";
 *   a value under 1024 in magnitude, or not a whole number, is written
 *   as DecimalSI instead (1.5Ki is "1536", 0.3Ki is "307200m").
 * - a sign only when negative; zero is "0".
 * The form of a parsed quantity is that of its suffix; a sum or
 * difference takes the form of its left operand unless that is zero.
 *
 * Threads: no state of its own: any thread. */
#ifndef HAZ_QUANTITY_H
#define HAZ_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#ifndef __SIZEOF_INT128__
#error "quantity.h needs a compiler with unsigned __int128"
#endif

enum qty_form {
	QTY_DECIMAL_SI,  /* "", m, k, M ... */
	QTY_BINARY_SI,   /* Ki, Mi, Gi ... */
	QTY_DECIMAL_EXP, /* e3, e-6 ... */
};

/* Errors returned by the functions below; qty_strerror names them. */
enum {
	QTY_OK = 0,
	QTY_EEMPTY,   /* empty string */
	QTY_ENUMBER,  /* no number where one must be */
	QTY_ESUFFIX,  /* letters that are no suffix */
	QTY_EEXP,     /* e/E not followed by a 64-bit signed integer */
	QTY_EGARBAGE, /* other characters after the number */
	QTY_ERANGE,   /* result is huge, or does not fit the type asked */
};

/* value = (neg ? -1 : 1) * (whole + nano / 10^9), with nano < 10^9,
 * whole <= 10^38 (10^38: huge, nano 0) and neg 0 for zero. */
struct qty {
	unsigned __int128 whole;
	uint32_t nano;
	int neg;
	enum qty_form form;
};

/* Room for any qty_format result, the terminating NUL included. */
#define QTY_BUFSIZE 64

/* qty_parse reads s into *q. Returns QTY_OK (a huge value included), or
 * an error with *q zeroed. */
int qty_parse(struct qty *q, const char *s);
const char *qty_strerror(int err);

/* qty_huge returns 1 when q is 10^38 units or more in magnitude (its
 * exact value unknown), else 0. */
int qty_huge(const struct qty *q);

/* qty_from_int and qty_from_milli make a quantity of v units or v
 * thousandths of a unit, to be written in form. */
void qty_from_int(struct qty *q, int64_t v, enum qty_form form);
void qty_from_milli(struct qty *q, int64_t milli, enum qty_form form);

/* qty_cmp returns -1, 0 or 1 as a is less than, equal to or more than
 * b; the form plays no part. Exact unless both are huge of one sign
 * (then 0). */
int qty_cmp(const struct qty *a, const struct qty *b);

/* qty_add and qty_sub store a+b or a-b in *out (which may be a or b).
 * Return QTY_OK for an exact result, or QTY_ERANGE when the result is
 * huge: it is 10^38 units or more in magnitude, or an operand is huge;
 * *out then holds the huge value of the result's sign (an operand huge,
 * the other not: that operand's sign; both huge, of opposite signs: +).
 * So for operands that are not negative, a huge result means a sum of
 * 10^38 or more, and any other result is the exact sum. */
int qty_add(struct qty *out, const struct qty *a, const struct qty *b);
int qty_sub(struct qty *out, const struct qty *a, const struct qty *b);

/* qty_value and qty_milli store the value in units or thousandths,
 * rounded away from zero (Kubernetes' Value and MilliValue). Return
 * QTY_OK, or QTY_ERANGE when that does not fit in an int64_t. */
int qty_value(const struct qty *q, int64_t *out);
int qty_milli(const struct qty *q, int64_t *out);

/* qty_format writes the canonical form of q into buf, which holds
 * QTY_BUFSIZE bytes, and returns buf. A huge value is written as 10^38
 * of its sign and form. */
char *qty_format(const struct qty *q, char *buf);

#endif
