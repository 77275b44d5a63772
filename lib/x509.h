/* x509: the webhook's certificates on OpenSSL's libcrypto: a throwaway CA
 * and a serving certificate made in memory, and the checks a server and
 * its certificate maker share.
 *
 * Keys are ECDSA P-256. The CA (CA:TRUE, keyCertSign) signs one serving
 * certificate (CA:FALSE, digitalSignature, serverAuth, the names as
 * subjectAltName) and its key is then freed: nothing ever stores it, so
 * the next renewal makes a new CA. A name that parses as an IPv4 or IPv6
 * literal becomes an IP SAN, anything else a DNS SAN.
 *
 * Every function takes PEM text (NUL-terminated) and reports trouble as
 * one line without the program name, in err:
 *   certificate expired at 2026-01-02T03:04:05Z
 *   certificate not valid before 2031-01-01T00:00:00Z
 *   does not name k8shazgpu-webhook.canhazgpu-system.svc
 * Times are Unix seconds, printed as RFC 3339 UTC. libcrypto is linked
 * statically by every tool that links libcurl (see the Makefile). */
#ifndef HAZ_X509_H
#define HAZ_X509_H

#include <stddef.h>
#include <time.h>

/* A CA and the serving certificate it signed, with the serving key. */
struct x509_pair {
	char *ca_crt;  /* PEM */
	char *tls_crt; /* PEM */
	char *tls_key; /* PEM PKCS#8, unencrypted; wiped by x509_pair_free */
};

/* x509_make makes a new CA and a serving certificate for names (n of
 * them, at least one), both valid from not_before to not_after, the
 * serving one with subject CN cn. Returns 0 with out filled, or -1 with
 * err set and out empty. */
int x509_make(const char *cn, const char *const *names, size_t n,
	time_t not_before, time_t not_after, struct x509_pair *out, char *err,
	size_t errlen);

/* x509_pair_free wipes the key and frees the three texts. */
void x509_pair_free(struct x509_pair *p);

/* What x509_info reads from a certificate. */
struct x509_info {
	time_t not_before, not_after;
	char **names; /* its subjectAltNames (DNS and IP, as text), in order */
	size_t nnames;
};

/* x509_info reads the first certificate of pem. Returns 0 with i filled
 * (free with x509_info_free), or -1 with err "no PEM certificate". */
int x509_info(const char *pem, struct x509_info *i, char *err, size_t errlen);
void x509_info_free(struct x509_info *i);

/* x509_check checks the first certificate of pem at time now: valid
 * then, and naming each of names (a NULL-terminated list; NULL for
 * none). DNS names compare without regard to case, IP literals by
 * address. Returns 0, or -1 with the first reason in err. */
int x509_check(const char *pem, const char *const *names, time_t now, char *err,
	size_t errlen);

/* x509_verify checks that the first certificate of crt_pem is signed by
 * the first certificate of ca_pem, a CA: the signatures only, since the
 * times are x509_check's business. Returns 0, or -1 with OpenSSL's
 * reason ("unable to get local issuer certificate") in err. */
int x509_verify(const char *ca_pem, const char *crt_pem, char *err,
	size_t errlen);

/* x509_key_matches: the private key key_pem is the one of the first
 * certificate of crt_pem. Returns 0, or -1 with a reason in err. */
int x509_key_matches(const char *crt_pem, const char *key_pem, char *err,
	size_t errlen);

/* x509_load returns the malloc'd NUL-terminated text of the PEM file
 * path (at most 1 MiB), or NULL with "PATH: why" in err. */
char *x509_load(const char *path, char *err, size_t errlen);

/* x509_time formats t as RFC 3339 UTC ("2026-01-02T03:04:05Z") into buf
 * of at least 21 bytes and returns buf. */
char *x509_time(time_t t, char *buf);

/* x509_parse_time parses an RFC 3339 time ("2026-01-02T03:04:05Z", or
 * with a +hh:mm / -hh:mm offset, fractions of seconds ignored) that a
 * certificate can hold: a day its month has in that year (February 29
 * in leap years only), hours 00 to 23, minutes and seconds 00 to 59 (no
 * leap second). Returns 0 with *t set, or -1 with the reason in why (n
 * bytes; why may be NULL): `2021-02 has 28 days, not 30`. */
int x509_parse_time(const char *s, time_t *t, char *why, size_t n);

#endif
