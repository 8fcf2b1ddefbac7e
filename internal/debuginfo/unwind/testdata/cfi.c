/* Functions whose frames take the call frame information through its
 * forms: a frame pointer (alloca), many callee-saved registers, early
 * returns gcc describes with remember/restore state, a realigned stack,
 * a variadic function and a cold path. cfi.s has the forms compilers
 * leave out. */
#include <alloca.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

volatile int sink;

__attribute__((noinline)) int with_alloca(int n)
{
	char *p = alloca(n + 1);
	p[n] = (char)n;
	sink = p[n];
	return p[0] + sink;
}

__attribute__((noinline)) long many_saved(long a, long b, long c, long d)
{
	long s = 0;
	for (long i = 0; i < a; i++) {
		s += with_alloca((int)(i & 7)) * b;
		s ^= c + i * d;
		if (s == 12345)
			return -1; /* an early return from inside the frame */
	}
	return s + a * b - c * d;
}

__attribute__((noinline, force_align_arg_pointer)) int realigned(int x)
{
	int v[8] __attribute__((aligned(64)));
	for (int i = 0; i < 8; i++)
		v[i] = x + i + sink;
	sink = v[x & 7];
	return v[(x + 1) & 7];
}

__attribute__((noinline)) int sum(int n, ...)
{
	va_list ap;
	int s = 0;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, int);
	va_end(ap);
	return s;
}

__attribute__((noinline, cold)) void fail(const char *why)
{
	fprintf(stderr, "%s\n", why);
	exit(2);
}

__attribute__((noinline)) int checked(int x)
{
	if (__builtin_expect(x < 0, 0))
		fail("negative");
	return realigned(x) + sum(3, x, x, x);
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%ld\n", many_saved(argc + 3, 2, 3, 4) + checked(argc));
	return 0;
}
