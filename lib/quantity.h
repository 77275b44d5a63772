/* quantity: Kubernetes resource quantities ("10Gi", "500m", "1e3").
 *
 * The grammar is Kubernetes' resource.Quantity:
 *
 *	quantity ::= [+-] number suffix
 *	number   ::= digits | digits "." digits | digits "." | "." digits
 *	suffix   ::= "" | n | u | m | k | M | G | T | P | E      (decimal SI)
 *	           | Ki | Mi | Gi | Ti | Pi | Ei                (binary SI)
 *	           | (e | E) [+-] digits                        (exponent)
 *
 * "1E" is 10^18 (exa); "1E3" is 1000. No white space anywhere.
 *
 * A value is held exactly as a whole part and a count of nano-units, so
 * sums and comparisons never round. As in Kubernetes, a magnitude may
 * not exceed 2^63-1 units, and digits finer than 10^-9 round up, away
 * from zero ("0.1n" is "1n").
 *
 * Canonical form (qty_format), as Kubernetes serializes:
 * - decimal (DecimalSI, exponent): the largest power of ten that is a
 *   multiple of 3 and leaves an integer mantissa: 1.5 is "1500m",
 *   8000m is "8", 1000 is "1k", 1e3 is "1e3", 1.5e3 is "1500".
 * - binary (BinarySI): the largest power of 1024 that divides the
 *   value: 0.5Gi is "512Mi", 16Gi stays "16Gi", 1.5Gi is "1536Mi";
 *   a value under 1024 in magnitude, or not a whole number, is written
 *   as DecimalSI instead (1.5Ki is "1536", 0.3Ki is "307200m").
 * - a sign only when negative; zero is "0".
 * The form of a parsed quantity is that of its suffix; a sum or
 * difference takes the form of its left operand unless that is zero. */
#ifndef HAZ_QUANTITY_H
#define HAZ_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

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
	QTY_EEXP,     /* e/E not followed by a signed integer */
	QTY_EGARBAGE, /* other characters after the number */
	QTY_ERANGE,   /* magnitude beyond 2^63-1 units */
};

/* value = whole + nano / 10^9, with 0 <= nano < 10^9 (so whole is the
 * floor: -1.5 is whole -2, nano 500000000). */
struct qty {
	int64_t whole;
	int32_t nano;
	enum qty_form form;
};

/* Room for any qty_format result, the terminating NUL included. */
#define QTY_BUFSIZE 48

/* qty_parse reads s into *q. Returns QTY_OK, or an error with *q zeroed. */
int qty_parse(struct qty *q, const char *s);
const char *qty_strerror(int err);

/* qty_from_int and qty_from_milli make a quantity of v units or v
 * thousandths of a unit, to be written in form. */
void qty_from_int(struct qty *q, int64_t v, enum qty_form form);
void qty_from_milli(struct qty *q, int64_t milli, enum qty_form form);

/* qty_cmp returns -1, 0 or 1 as a is less than, equal to or more than
 * b; the form plays no part. */
int qty_cmp(const struct qty *a, const struct qty *b);

/* qty_add and qty_sub store a+b or a-b in *out (which may be a or b).
 * Return QTY_OK, or QTY_ERANGE with *out unchanged. */
int qty_add(struct qty *out, const struct qty *a, const struct qty *b);
int qty_sub(struct qty *out, const struct qty *a, const struct qty *b);

/* qty_value and qty_milli store the value in units or thousandths,
 * rounded away from zero (Kubernetes' Value and MilliValue). Return
 * QTY_OK, or QTY_ERANGE when that does not fit in an int64_t. */
int qty_value(const struct qty *q, int64_t *out);
int qty_milli(const struct qty *q, int64_t *out);

/* qty_format writes the canonical form of q into buf, which holds
 * QTY_BUFSIZE bytes, and returns buf. */
char *qty_format(const struct qty *q, char *buf);

#endif
