/*
 * wallshift.so: a test double for the wall clock.  Preloaded, it adds the
 * number of milliseconds in the file named by GPUWISE_WALLSHIFT_FILE (read
 * on every call; absent or empty = 0) to CLOCK_REALTIME, gettimeofday and
 * time, and leaves every other clock alone: the date "jumps" while the
 * monotonic and boot clocks run on (tests/e2e/queue-avail.t).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static long long shift_ms(void)
{
	const char *p = getenv("GPUWISE_WALLSHIFT_FILE");
	FILE *f = p ? fopen(p, "r") : NULL;
	long long v = 0;
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

static void add(struct timespec *ts, long long ms)
{
	long long ns = (long long)ts->tv_nsec + (ms % 1000) * 1000000LL;
	ts->tv_sec += (time_t)(ms / 1000) + (time_t)(ns >= 1000000000LL ? 1 : ns < 0 ? -1 : 0);
	ts->tv_nsec = (long)(ns >= 1000000000LL ? ns - 1000000000LL : ns < 0 ? ns + 1000000000LL : ns);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
	int rc = real(id, ts);
	if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		add(ts, shift_ms());
	return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;
	(void)tz;
	if (clock_gettime(CLOCK_REALTIME, &ts))
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *out)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (out)
		*out = ts.tv_sec;
	return ts.tv_sec;
}
