/* Wall-clock seconds from a monotonic clock, for timings and deadlines. */
#ifndef CM_CLOCK_H
#define CM_CLOCK_H

#include <time.h>

static inline double cm_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
