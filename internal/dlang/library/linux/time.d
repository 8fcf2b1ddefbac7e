/*
 * time.d: the time types that D programs find in Solaris's and FreeBSD's
 * kernels and Linux's lacks: hrtime_t, the nanoseconds timestamp,
 * vtimestamp and walltimestamp count, and userland's struct timespec
 * (Linux's kernel has only struct timespec64 and __kernel_timespec).
 */

typedef long long hrtime_t;
typedef long time_t;

struct timespec {
	time_t tv_sec;	/* seconds */
	long tv_nsec;	/* and nanoseconds */
};
