/* ledger_time: canhazgpu's times and durations, read and written. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "err.h"
#include "ledger.h"

void
lg_clock(struct lg_clock *c)
{
	struct timespec ts;
	struct tm tm;
	time_t t;
	const char *fake = getenv("K8SHAZGPU_NOW");
	char *end;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (fake && *fake) {
		ts.tv_sec = (time_t)strtoll(fake, &end, 10);
		ts.tv_nsec = 0;
		if (*end == '.') {
			long scale = 100000000;

			for (end++; *end >= '0' && *end <= '9';
				end++, scale /= 10)
				ts.tv_nsec += (*end - '0') * scale;
		}
	}
	c->sec = ts.tv_sec;
	c->nsec = ts.tv_nsec;
	t = ts.tv_sec;
	localtime_r(&t, &tm);
	c->off = (int)tm.tm_gmtoff;
}

/* days_from_civil: the days from 1970-01-01 to y-m-d (proleptic
 * Gregorian), after H. Hinnant. */
static long long
days_from_civil(long long y, int m, int d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* digits reads n decimal digits at s into *v; returns 0 or -1. */
static int
digits(const char *s, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

/* rfc3339 reads s as RFC 3339 into t. Returns 0 or -1. */
static int
rfc3339(const char *s, struct lg_time *t)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30,
		31};
	int y, mo, d, h, mi, sec, oh, om, off = 0, leap;
	long ns = 0, scale = 100000000;
	const char *p;

	if (strlen(s) < 20 || digits(s, 4, &y) || s[4] != '-' ||
		digits(s + 5, 2, &mo) || s[7] != '-' || digits(s + 8, 2, &d) ||
		(s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) ||
		s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' ||
		digits(s + 17, 2, &sec))
		return -1;
	p = s + 19;
	if (*p == '.') {
		if (!isdigit((unsigned char)p[1]))
			return -1;
		for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
			ns += (*p - '0') * scale;
	}
	if ((*p == 'Z' || *p == 'z') && !p[1])
		off = 0;
	else if ((*p == '+' || *p == '-') && !digits(p + 1, 2, &oh) &&
		p[3] == ':' && !digits(p + 4, 2, &om) && !p[6] && oh < 24 &&
		om < 60)
		off = (*p == '-' ? -1 : 1) * (oh * 3600 + om * 60);
	else
		return -1;
	leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 ||
		mi > 59 || sec > 59 || (mo == 2 && d == 29 && !leap))
		return -1;
	t->sec = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
		off;
	t->nsec = ns;
	t->off = off;
	t->set = lg_time_ok(t->sec);
	return t->set ? 0 : -1;
}

/* numeric says whether s is -?digits or -?digits.digits. */
static int
numeric(const char *s)
{
	const char *p = s + (*s == '-');
	size_t n = strspn(p, "0123456789");

	if (!n)
		return 0;
	p += n;
	if (*p == '.') {
		n = strspn(p + 1, "0123456789");
		if (!n)
			return 0;
		p += 1 + n;
	}
	return *p == '\0';
}

int
lg_time_parse(const json_t *v, struct lg_time *t)
{
	double x;

	memset(t, 0, sizeof *t);
	if (!v || json_is_null(v))
		return 0;
	if (json_is_integer(v)) {
		t->sec = json_integer_value(v);
	} else if (json_is_real(v) ||
		(json_is_string(v) && numeric(json_string_value(v)))) {
		x = json_is_real(v) ? json_real_value(v)
				    : strtod(json_string_value(v), NULL);
		if (x > 9e15 || x < -9e15)
			return -1;
		t->sec = (long long)x; /* truncates, as canhazgpu does */
	} else if (json_is_string(v)) {
		return rfc3339(json_string_value(v), t);
	} else {
		return -1;
	}
	t->local = 1;
	/* the ledger's range: nothing outside it is a time (lg_time_ok) */
	t->set = lg_time_ok(t->sec);
	return t->set ? 0 : -1;
}

char *
lg_rfc3339(long long sec, char *buf)
{
	struct tm tm;
	time_t t = (time_t)sec;

	if (!gmtime_r(&t, &tm) || tm.tm_year < -1900 || tm.tm_year > 8099)
		memset(&tm, 0, sizeof tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

json_t *
lg_time_json(const struct lg_time *t)
{
	char buf[32];

	return t->set ? json_string(lg_rfc3339(t->sec, buf)) : json_null();
}

json_t *
lg_time_shown_json(const struct lg_time *t)
{
	char buf[48], frac[16] = "", zone[16] = "Z";
	struct tm tm;
	time_t at;
	int off = t->off, i;

	if (!t->set)
		return json_null();
	if (t->local) {
		at = (time_t)t->sec;
		localtime_r(&at, &tm);
		off = (int)tm.tm_gmtoff;
	} else if (t->nsec) {
		snprintf(frac, sizeof frac, ".%09ld", t->nsec);
		for (i = (int)strlen(frac); frac[i - 1] == '0'; i--)
			frac[i - 1] = '\0';
	}
	if (off)
		snprintf(zone, sizeof zone, "%c%02d:%02d", off < 0 ? '-' : '+',
			abs(off) / 3600, abs(off) / 60 % 60);
	at = (time_t)(t->sec + off);
	gmtime_r(&at, &tm);
	strftime(buf, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	return json_sprintf("%s%s%s", buf, frac, zone);
}

json_t *
lg_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *
lg_copy_or_null(const json_t *v)
{
	return v ? json_deep_copy(v) : json_null();
}

json_t *
lg_secs_json(const json_t *secs)
{
	char buf[32];

	if (!json_is_number(secs))
		return json_null();
	return json_string(lg_rfc3339((long long)json_number_value(secs), buf));
}

int
lg_duration(const char *s, double *secs)
{
	const char *p = s;
	double n, unit;
	char *end;

	if (!isdigit((unsigned char)*p))
		return -1;
	p += strspn(p, "0123456789");
	if (*p == '.') {
		if (!isdigit((unsigned char)p[1]))
			return -1;
		p += 1 + strspn(p + 1, "0123456789");
	}
	switch (*p) {
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	default: return -1;
	}
	if (p[1])
		return -1;
	errno = 0;
	n = strtod(s, &end);
	if (end != p || errno || n * unit > LG_MAX_DURATION || n * unit <= 0)
		return -1;
	*secs = n * unit;
	return 0;
}

void
lg_random_hex(char *out, size_t n)
{
	unsigned char b[64];
	size_t i, got = 0;
	ssize_t r;

	if (n > sizeof b)
		n = sizeof b;
	while (got < n) {
		r = getrandom(b + got, n - got, 0);
		if (r < 0 && errno != EINTR)
			err_die(HAZ_FAIL, "getrandom:");
		if (r > 0)
			got += (size_t)r;
	}
	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}
