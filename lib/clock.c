/* clock: the wall clock's seconds as RFC 3339 text, both ways (the
 * monotonic clock is inline in clock.h). */
#include <time.h>

#include "clock.h"

char *
clock_rfc3339(long long sec, char *buf)
{
	time_t t = (time_t)sec;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, CLOCK_RFC3339_SIZE, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

double
clock_parse_rfc3339(const char *s)
{
	struct tm tm = {0};

	if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	return (double)timegm(&tm);
}
