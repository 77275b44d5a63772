/* x509: a throwaway CA and a serving certificate, and their checks, on
 * OpenSSL 3's libcrypto (see x509.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "err.h"
#include "x509.h"

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	ERR_clear_error();
	return -1;
}

/* ---- times ------------------------------------------------------------- */

char *
x509_time(time_t t, char *buf)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

/* what a certificate's times can hold: years of four digits */
#define TIME_MIN (-62167219200LL) /* 0000-01-01T00:00:00Z */
#define TIME_MAX 253402300799LL   /* 9999-12-31T23:59:59Z */

/* digits reads n decimal digits at s into *v; 0, or -1 when one is not. */
static int
digits(const char *s, int n, int *v)
{
	*v = 0;
	for (; n > 0; n--, s++) {
		if (*s < '0' || *s > '9')
			return -1;
		*v = *v * 10 + (*s - '0');
	}
	return 0;
}

static int
days_in(int year, int month)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30,
		31};
	int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return month == 2 && leap ? 29 : days[month - 1];
}

/* parse_time is x509_parse_time with a buffer for the reason. */
static int
parse_time(const char *s, time_t *t, char *why, size_t n)
{
	struct tm tm = {0};
	int y, mo, d, h, mi, sec, oh, om, sign;

	/* YYYY-MM-DDTHH:MM:SS, each a fixed number of digits */
	if (strlen(s) < 20 || digits(s, 4, &y) < 0 || s[4] != '-' ||
		digits(s + 5, 2, &mo) < 0 || s[7] != '-' ||
		digits(s + 8, 2, &d) < 0 || (s[10] != 'T' && s[10] != 't') ||
		digits(s + 11, 2, &h) < 0 || s[13] != ':' ||
		digits(s + 14, 2, &mi) < 0 || s[16] != ':' ||
		digits(s + 17, 2, &sec) < 0)
		goto form;
	if (mo < 1 || mo > 12)
		return fail(why, n, "month %02d is not 01 to 12", mo);
	if (d < 1 || d > days_in(y, mo))
		return fail(why, n, "%04d-%02d has %d days, not %02d", y, mo,
			days_in(y, mo), d);
	if (h > 23)
		return fail(why, n, "hour %02d is not 00 to 23", h);
	if (mi > 59)
		return fail(why, n, "minute %02d is not 00 to 59", mi);
	if (sec > 59)
		return fail(why, n,
			"second %02d is not 00 to 59 (a certificate holds "
			"no leap second)",
			sec);
	s += 19;
	if (*s == '.') { /* fractions of a second: at least one digit */
		if (s[1] < '0' || s[1] > '9')
			goto form;
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	}
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	*t = timegm(&tm);
	if ((*s == 'Z' || *s == 'z') && !s[1])
		return 0;
	if ((*s != '+' && *s != '-') || strlen(s) != 6 ||
		digits(s + 1, 2, &oh) < 0 || s[3] != ':' ||
		digits(s + 4, 2, &om) < 0)
		goto form;
	if (oh > 23 || om > 59)
		return fail(why, n, "offset %s is not -23:59 to +23:59", s);
	sign = *s == '+' ? 1 : -1;
	*t -= sign * (oh * 3600 + om * 60);
	/* the offset may carry it out of the four digits of a year */
	if (*t < TIME_MIN || *t > TIME_MAX)
		return fail(why, n,
			"in UTC outside 0000-01-01T00:00:00Z to "
			"9999-12-31T23:59:59Z");
	return 0;
form:
	return fail(why, n,
		"not an RFC 3339 time (YYYY-MM-DDTHH:MM:SS[.frac], then Z "
		"or +HH:MM)");
}

int
x509_parse_time(const char *s, time_t *t, char *why, size_t n)
{
	char none[1];

	return why ? parse_time(s, t, why, n)
		   : parse_time(s, t, none, sizeof none);
}

static time_t
asn1_seconds(const ASN1_TIME *a)
{
	struct tm tm;

	if (!a || ASN1_TIME_to_tm(a, &tm) != 1)
		return 0;
	return timegm(&tm);
}

/* ---- reading ------------------------------------------------------------ */

#define PEM_MAX (1 << 20)

char *
x509_load(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	buf = emalloc(PEM_MAX + 1);
	n = fread(buf, 1, PEM_MAX + 1, f);
	if (ferror(f) || n > PEM_MAX) {
		snprintf(err, errlen, "%s: %s", path,
			ferror(f) ? strerror(errno) : "larger than 1 MiB");
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* read_cert returns the first certificate of pem, or NULL. */
static X509 *
read_cert(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;

	BIO_free(b);
	ERR_clear_error();
	return x;
}

/* san_text returns one subjectAltName as text (an IP address written
 * into buf of len bytes), with *is_ip set; NULL for kinds other than
 * DNS and IP. */
static const char *
san_text(const GENERAL_NAME *g, char *buf, size_t len, int *is_ip)
{
	const unsigned char *p;
	int n;

	if (g->type == GEN_DNS) {
		*is_ip = 0;
		return (const char *)ASN1_STRING_get0_data(g->d.dNSName);
	}
	if (g->type != GEN_IPADD)
		return NULL;
	*is_ip = 1;
	p = ASN1_STRING_get0_data(g->d.iPAddress);
	n = ASN1_STRING_length(g->d.iPAddress);
	if (!inet_ntop(n == 4 ? AF_INET : AF_INET6, p, buf, (socklen_t)len) ||
		(n != 4 && n != 16))
		snprintf(buf, len, "?");
	return buf;
}

int
x509_info(const char *pem, struct x509_info *i, char *err, size_t errlen)
{
	GENERAL_NAMES *gens;
	X509 *x = read_cert(pem);
	char buf[64];
	const char *t;
	int k, n, is_ip;

	memset(i, 0, sizeof *i);
	if (!x)
		return fail(err, errlen, "no PEM certificate");
	i->not_before = asn1_seconds(X509_get0_notBefore(x));
	i->not_after = asn1_seconds(X509_get0_notAfter(x));
	gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	n = gens ? sk_GENERAL_NAME_num(gens) : 0;
	i->names = ecalloc((size_t)n + 1, sizeof *i->names);
	for (k = 0; k < n; k++)
		if ((t = san_text(sk_GENERAL_NAME_value(gens, k), buf,
			     sizeof buf, &is_ip)))
			i->names[i->nnames++] = estrdup(t);
	GENERAL_NAMES_free(gens);
	X509_free(x);
	ERR_clear_error();
	return 0;
}

void
x509_info_free(struct x509_info *i)
{
	size_t k;

	for (k = 0; i->names && k < i->nnames; k++)
		free(i->names[k]);
	free(i->names);
	i->names = NULL;
	i->nnames = 0;
}

/* names_ip: name as the bytes of an IP address in ip (16 bytes), their
 * count returned; 0 when it is no IP literal. */
static int
names_ip(const char *name, unsigned char *ip)
{
	if (inet_pton(AF_INET, name, ip) == 1)
		return 4;
	if (inet_pton(AF_INET6, name, ip) == 1)
		return 16;
	return 0;
}

/* has_name: gens holds name, as an IP SAN when it is an IP literal,
 * else as a DNS SAN of the same text but for case. */
static int
has_name(const GENERAL_NAMES *gens, const char *name)
{
	unsigned char ip[16];
	const GENERAL_NAME *g;
	int k, iplen = names_ip(name, ip);
	size_t len = strlen(name);

	for (k = 0; gens && k < sk_GENERAL_NAME_num(gens); k++) {
		g = sk_GENERAL_NAME_value(gens, k);
		if (iplen && g->type == GEN_IPADD &&
			ASN1_STRING_length(g->d.iPAddress) == iplen &&
			!memcmp(ASN1_STRING_get0_data(g->d.iPAddress), ip,
				(size_t)iplen))
			return 1;
		if (!iplen && g->type == GEN_DNS &&
			(size_t)ASN1_STRING_length(g->d.dNSName) == len &&
			!strncasecmp((const char *)ASN1_STRING_get0_data(
					     g->d.dNSName),
				name, len))
			return 1;
	}
	return 0;
}

int
x509_check(const char *pem, const char *const *names, time_t now, char *err,
	size_t errlen)
{
	GENERAL_NAMES *gens;
	X509 *x = read_cert(pem);
	time_t nb, na;
	char when[24];
	int rc = 0;

	if (!x)
		return fail(err, errlen, "no PEM certificate");
	nb = asn1_seconds(X509_get0_notBefore(x));
	na = asn1_seconds(X509_get0_notAfter(x));
	gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	if (now >= na)
		rc = fail(err, errlen, "certificate expired at %s",
			x509_time(na, when));
	else if (now < nb)
		rc = fail(err, errlen, "certificate not valid before %s",
			x509_time(nb, when));
	for (; rc == 0 && names && *names; names++)
		if (!has_name(gens, *names))
			rc = fail(err, errlen, "does not name %s", *names);
	GENERAL_NAMES_free(gens);
	X509_free(x);
	ERR_clear_error();
	return rc;
}

int
x509_verify(const char *ca_pem, const char *crt_pem, char *err, size_t errlen)
{
	X509 *ca = read_cert(ca_pem), *crt = read_cert(crt_pem);
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int rc = 0;

	if (!ca || !crt)
		rc = fail(err, errlen, "no PEM certificate");
	else if (!st || !ctx || !X509_STORE_add_cert(st, ca) ||
		!X509_STORE_CTX_init(ctx, st, crt, NULL))
		rc = fail(err, errlen, "cannot set up verification");
	else {
		X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_NO_CHECK_TIME);
		if (X509_verify_cert(ctx) != 1)
			rc = fail(err, errlen, "%s",
				X509_verify_cert_error_string(
					X509_STORE_CTX_get_error(ctx)));
	}
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	X509_free(ca);
	X509_free(crt);
	ERR_clear_error();
	return rc;
}

int
x509_key_matches(const char *crt_pem, const char *key_pem, char *err,
	size_t errlen)
{
	X509 *x = read_cert(crt_pem);
	BIO *b = BIO_new_mem_buf(key_pem, -1);
	EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
	int rc = 0;

	if (!x)
		rc = fail(err, errlen, "no PEM certificate");
	else if (!k)
		rc = fail(err, errlen, "no PEM private key");
	else if (EVP_PKEY_eq(X509_get0_pubkey(x), k) != 1)
		rc = fail(err, errlen, "the key is not the certificate's");
	EVP_PKEY_free(k);
	BIO_free(b);
	X509_free(x);
	ERR_clear_error();
	return rc;
}

/* ---- making ------------------------------------------------------------- */

/* add_ext adds the extension nid with value (openssl's config syntax)
 * to x, issued by issuer. */
static int
add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v3;
	X509_EXTENSION *e;
	int ok;

	X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
	if (!(e = X509V3_EXT_conf_nid(NULL, &v3, nid, value)))
		return 0;
	ok = X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	return ok;
}

/* add_sans adds names as the subjectAltName extension of x. */
static int
add_sans(X509 *x, const char *const *names, size_t n)
{
	GENERAL_NAMES *gens = GENERAL_NAMES_new();
	GENERAL_NAME *g;
	ASN1_IA5STRING *dns;
	ASN1_OCTET_STRING *ip;
	unsigned char addr[16];
	size_t k;
	int iplen, ok = gens != NULL;

	for (k = 0; ok && k < n; k++) {
		if (!(g = GENERAL_NAME_new())) {
			ok = 0;
			break;
		}
		if ((iplen = names_ip(names[k], addr))) {
			ip = ASN1_OCTET_STRING_new();
			ok = ip && ASN1_OCTET_STRING_set(ip, addr, iplen);
			GENERAL_NAME_set0_value(g, GEN_IPADD, ip);
		} else {
			dns = ASN1_IA5STRING_new();
			ok = dns && ASN1_STRING_set(dns, names[k], -1);
			GENERAL_NAME_set0_value(g, GEN_DNS, dns);
		}
		if (!ok || !sk_GENERAL_NAME_push(gens, g)) {
			GENERAL_NAME_free(g);
			ok = 0;
		}
	}
	ok = ok &&
		X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0,
			X509V3_ADD_DEFAULT) == 1;
	GENERAL_NAMES_free(gens);
	return ok;
}

/* new_cert returns an unsigned certificate for key with subject CN cn,
 * a random 127-bit serial number, and the validity given. */
static X509 *
new_cert(EVP_PKEY *key, const char *cn, time_t nb, time_t na)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_get_subject_name(x);
	BIGNUM *serial = BN_new();
	int ok;

	ok = x && serial && X509_set_version(x, X509_VERSION_3) &&
		BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
		BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(x)) &&
		ASN1_TIME_set(X509_getm_notBefore(x), nb) &&
		ASN1_TIME_set(X509_getm_notAfter(x), na) &&
		X509_set_pubkey(x, key) &&
		X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
			(const unsigned char *)cn, -1, -1, 0);
	BN_free(serial);
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* bio_text returns what was written into the memory BIO b as a malloc'd
 * string, or NULL when ok is 0 or b holds nothing; b is freed. */
static char *
bio_text(BIO *b, int ok)
{
	char *p = NULL, *data;
	long n;

	if (b && ok && (n = BIO_get_mem_data(b, &data)) > 0) {
		p = emalloc((size_t)n + 1);
		memcpy(p, data, (size_t)n);
		p[n] = '\0';
	}
	BIO_free(b);
	return p;
}

/* pem_cert and pem_key return the PEM text of a certificate or a
 * private key as a malloc'd string, or NULL; the key goes through a
 * BIO of secure memory, wiped when freed. */
static char *
pem_cert(X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());

	return bio_text(b, b && PEM_write_bio_X509(b, x));
}

static char *
pem_key(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_secmem());

	return bio_text(b,
		b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL));
}

int
x509_make(const char *cn, const char *const *names, size_t n, time_t not_before,
	time_t not_after, struct x509_pair *out, char *err, size_t errlen)
{
	EVP_PKEY *cakey = EVP_EC_gen("P-256"), *key = EVP_EC_gen("P-256");
	X509 *ca = NULL, *crt = NULL;
	char *cacn = easprintf("%s-ca", cn);
	int ok;

	memset(out, 0, sizeof *out);
	ok = cakey && key && n > 0 &&
		(ca = new_cert(cakey, cacn, not_before, not_after)) &&
		X509_set_issuer_name(ca, X509_get_subject_name(ca)) &&
		add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE") &&
		add_ext(ca, ca, NID_key_usage,
			"critical,keyCertSign,cRLSign") &&
		add_ext(ca, ca, NID_subject_key_identifier, "hash") &&
		X509_sign(ca, cakey, EVP_sha256()) &&
		(crt = new_cert(key, cn, not_before, not_after)) &&
		X509_set_issuer_name(crt, X509_get_subject_name(ca)) &&
		add_ext(crt, ca, NID_basic_constraints, "critical,CA:FALSE") &&
		add_ext(crt, ca, NID_key_usage, "critical,digitalSignature") &&
		add_ext(crt, ca, NID_ext_key_usage, "serverAuth") &&
		add_ext(crt, ca, NID_authority_key_identifier,
			"keyid:always") &&
		add_sans(crt, names, n) &&
		X509_sign(crt, cakey, EVP_sha256()) &&
		(out->ca_crt = pem_cert(ca)) &&
		(out->tls_crt = pem_cert(crt)) && (out->tls_key = pem_key(key));
	free(cacn);
	X509_free(ca);
	X509_free(crt);
	EVP_PKEY_free(cakey); /* the CA's key: never kept */
	EVP_PKEY_free(key);
	if (!ok) {
		x509_pair_free(out);
		return fail(err, errlen, "cannot make the certificates: %s",
			ERR_reason_error_string(ERR_peek_last_error())
				? ERR_reason_error_string(ERR_peek_last_error())
				: "unknown error");
	}
	return 0;
}

void
x509_pair_free(struct x509_pair *p)
{
	if (p->tls_key)
		OPENSSL_cleanse(p->tls_key, strlen(p->tls_key));
	free(p->ca_crt);
	free(p->tls_crt);
	free(p->tls_key);
	memset(p, 0, sizeof *p);
}
