/*
 * Functions the compiler inlines, clones and splits, reached on every
 * kind of path, for kdtrace's pid entry and return probes. The program
 * counts the calls itself and prints, at exit, one line per count:
 *
 *	f N		calls of f, counted by f
 *	f.CALLER N	calls of f made by CALLER (f: through the pointer)
 *	p N, g N, m N	calls of p, g and m, counted by them
 *	h N		calls of the library's h, counted by h
 *
 * f is inlined into several callers, with an early return, a loop, a
 * cold path gcc moves to CALLER.cold, a tail call from inside f, and
 * calls through a function pointer to its out-of-line copy, one of
 * them a tail call. p has a fast path and a large slow one: gcc inlines
 * the fast path and leaves the rest as p.part.0. g takes a pointer and
 * an argument it never reads, and most calls pass the same constant:
 * gcc makes clones of it (g.constprop.0.isra.0) in place of g. m's
 * copy in take() ends where take's other path joins it (clang), so its
 * return site is reached without entering m.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long l1(long), l2(long), lcount(void);	/* the library's */

static long nf, np, ng, nm;
static long per[6];
static volatile long sink;

__attribute__((noinline)) long big(long x) { sink += x; return x / 2; }
__attribute__((noinline, cold)) long rare(long x) { sink -= x; return -x; }

static inline long f(long x)
{
	nf++;
	if (x < 0)				/* an early return */
		return -1;
	if (x > 1000)				/* a tail call from inside f */
		return big(x);
	long s = 0;
	for (long i = 0; i < x % 5; i++)	/* a loop */
		s += i ^ x;
	if (__builtin_expect(x % 17 == 0, 0))	/* a cold path, split off */
		s = rare(s);
	return s;
}

long (*volatile fp)(long) = f;		/* keeps an out-of-line copy */

__attribute__((noinline)) long once(long x) { per[0]++; return f(x) * 3; }
__attribute__((noinline)) long loop(long n)
{
	long t = 0;
	for (long i = -2; i < n; i++) {
		per[1]++;
		t += f(i * 13);
	}
	return t;
}
__attribute__((noinline)) long tail(long x) { per[2]++; return f(x); }
__attribute__((noinline)) long viaptr(long x) { per[5]++; return fp(x) + 1; }
__attribute__((noinline)) long tailptr(long x) { per[5]++; return fp(x); }

static long p(long x)
{
	np++;
	if (x & 1)
		return 0;
	long s = 0;
	for (long i = 0; i < x; i++) {
		s += (i * x) ^ (s >> 3);
		if (s % 13 == 0)
			sink += s;
		else
			sink -= i;
		s += sink & x;
		if (s % 7 == 0)
			s = rare(s);
	}
	return s;
}
__attribute__((noinline)) long d1(long x) { return p(x) + 1; }
__attribute__((noinline)) long d2(long x) { return p(x + 3) * 2; }
__attribute__((noinline)) long d3(long x) { return p(x * 5) * 2; }

struct pt { long a, b, c[8]; };
__attribute__((noinline)) static long g(struct pt *q, long k, long unused)
{
	ng++;
	long s = 0;
	for (long i = 0; i < q->a; i++)
		s += (i * k) ^ (s >> 3);
	return s;
}
__attribute__((noinline)) long c1(long x) { struct pt q = {x, 2}; return g(&q, 3, x); }
__attribute__((noinline)) long c2(long x) { struct pt q = {x, 4}; return g(&q, 3, 1); }
__attribute__((noinline)) long c3(long x) { struct pt q = {x, 4}; return g(&q, x, 1); }

static volatile int markbyte;
static char pool[2048];
__attribute__((noinline)) long work(long x) { sink += x; return x & 7; }

static inline void m(char *q, long n)
{
	nm++;
	if (__builtin_expect(markbyte, 0))
		memset(q, markbyte, n);
}
__attribute__((noinline)) char *take(long n)
{
	long a = work(n), b = work(n + 1);
	char *q;
	if (a == 3) {
		q = pool + a + b;
		work(a * b);
		return q;
	}
	q = pool + (n & 1023);
	m(q, a + b);
	return q;
}

int main(int argc, char **argv)
{
	static const char *caller[] = { "once", "loop", "tail", "", "", "f" };
	long n = argc > 1 ? atol(argv[1]) : 100;
	long t = 0;
	for (long i = 0; i < n; i++) {
		long x = (i % 7 == 0) ? -i : (i % 11 == 0) ? 1000 + i : i;
		t += once(x) + tail(x) + viaptr(x) + tailptr(x);
		t += d1(i) + d2(i) + d3(i);
		t += c1(i) + c2(i) + c3(i);
		t += l1(i - 3) + l2(i);
		t += (long)take(i);
		if (i == n / 2)
			markbyte = 1;
	}
	t += loop(n);
	sink = t;
	printf("f %ld\n", nf);
	for (int i = 0; i < 6; i++)
		if (caller[i][0] != '\0')
			printf("f.%s %ld\n", caller[i], per[i]);
	printf("p %ld\ng %ld\nm %ld\nh %ld\n", np, ng, nm, lcount());
	return 0;
}
