/* clock: the monotonic clock, as one number, for deadlines and
 * latencies that must not jump when the wall clock is set.
 *
 * Defined here, inline, rather than in a clock.c, so that the bench/
 * load clients, built by their scripts with a bare `cc file.c`, can use
 * it by including this header alone.
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

#endif
