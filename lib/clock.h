/* clock: the monotonic clock, as one number, for deadlines and
 * latencies that must not jump when the wall clock is set; and the wall
 * clock's seconds as RFC 3339 text, both ways.
 *
 * The monotonic clock is defined here, inline, rather than in clock.c,
 * so that the bench/ load clients, built by their scripts with a bare
 * `cc file.c`, can use it by including this header alone.
 *
 * Threads: any thread. */
#ifndef HAZ_CLOCK_H
#define HAZ_CLOCK_H

#include <time.h>

/* clock_mono returns seconds since an arbitrary fixed point (boot),
 * with nanosecond resolution. */
static inline double
clock_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* clock_mono_ms is clock_mono in whole milliseconds. */
static inline long
clock_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* clock_after returns the wall-clock time seconds from now, as
 * pthread_cond_timedwait(3) wants its deadline. */
static inline struct timespec
clock_after(double seconds)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)seconds;
	ts.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* CLOCK_RFC3339_SIZE is the room clock_rfc3339 needs. */
#define CLOCK_RFC3339_SIZE 32

/* clock_rfc3339 writes unix seconds sec as "2026-11-24T01:02:03Z" (UTC)
 * into buf (CLOCK_RFC3339_SIZE bytes) and returns buf. */
char *clock_rfc3339(long long sec, char *buf);

/* clock_parse_rfc3339 returns the unix seconds of s, read as
 * "YYYY-MM-DDTHH:MM:SS" in UTC (what follows the seconds, a fraction or
 * an offset, is not read), or 0 when s is NULL or not such a time. */
double clock_parse_rfc3339(const char *s);

#endif
