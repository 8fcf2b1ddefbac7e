/*
 * A stand-in for a kernel: a few functions inlined at several sites, so
 * that kdtrace's kinst rewrite can be tried without a kernel debug
 * image. Built by build.sh; the binary beside it is what the README's
 * example and the golden tests read.
 */
#include <stddef.h>

struct req {
	int len;
	int flags;
	char *buf;
};

/* Inlined everywhere, with an early return: two exits per copy. */
static inline __attribute__((always_inline)) int
req_valid(const struct req *r)
{
	if (r == NULL || r->len <= 0)
		return 0;
	return (r->flags & 1) == 0;
}

/* Inlined at some sites and also kept out of line. */
static inline int
req_bytes(const struct req *r)
{
	int n = 0;

	for (int i = 0; i < r->len; i++)
		n += r->buf[i] != 0;
	return n;
}

/* Never inlined: kinst::req_free:entry becomes fbt::req_free:entry. */
__attribute__((noinline)) void
req_free(struct req *r)
{
	r->len = 0;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) int
req_submit(struct req *r)
{
	if (!req_valid(r))
		return -1;
	return req_bytes(r);
}

__attribute__((noinline)) int
req_retry(struct req *r, int tries)
{
	int total = 0;

	while (tries-- > 0) {
		if (!req_valid(r))
			break;
		total += req_bytes(r);
	}
	req_free(r);
	return total;
}

int (*volatile bytes_fn)(const struct req *) = req_bytes;

int
main(void)
{
	char buf[4] = "ab";
	struct req r = { 2, 0, buf };

	return req_submit(&r) + req_retry(&r, 2) + bytes_fn(&r);
}
