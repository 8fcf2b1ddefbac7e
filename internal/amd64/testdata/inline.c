/*
 * Fixtures for ExitSites. Each inline function is called once; the exits
 * are marked independently of the code under test: a nopw with a unique
 * displacement placed where the caller resumes, or the ret and tail-call
 * jmp that objdump shows.
 */
#define INL static inline __attribute__((always_inline))
#define MARK(n) asm volatile("nopw " #n "(%%rax,%%rax,1)" ::: "memory")
#define MARKV(n, v) asm volatile("nopw " #n "(%%rax,%%rax,1)" :: "r"(v) : "memory")

extern int ext(int);
extern void sink(int);

/* An early return inside a loop. */
INL int find(const int *p, int n, int key)
{
	for (int i = 0; i < n; i++)
		if (p[i] == key)
			return i;
	return -1;
}

int early(const int *p, int n)
{
	int r = find(p, n, 42);
	MARKV(0x2222, r);
	return r + 1;
}

/* A cold early return: the copy is split into several ranges. */
INL int split(int x, int y)
{
	if (__builtin_expect(x < 0, 0)) {
		sink(y);
		return -1;
	}
	if (x > 100)
		return x * 3;
	return x + y;
}

int splitter(int a, int b)
{
	int r = split(a, b);
	MARKV(0x2222, r);
	return r;
}

/* The caller's argument is computed inside the copy: a range ends and
 * control comes straight back in, which is not an exit. */
INL int sq(int x, int y)
{
	int t = x * x;
	if (t > 100) {
		sink(t);
		return t;
	}
	return t + y;
}

int sinking(int a, int b, int c)
{
	int r = sq(a, b * c + 7);
	MARKV(0x2222, r);
	return r;
}

/* The copy ends on the latch of the caller's rotated loop: its back edge
 * leaves the copy for the loop head. */
struct it {
	int i, n;
};

INL int latch(struct it *t)
{
	t->i++;
	asm goto("cmp %1, %0; jl %l[again]" : : "r"(t->i), "m"(t->n) : "cc" : again);
	return 0;
again:
	return 1;
}

int rotated(struct it *t)
{
	int s = 0;
	do {
		MARK(0x3333);
		s += t->i;
	} while (latch(t));
	MARKV(0x2222, s);
	return s;
}

/* A tail call out of the copy. */
INL int tail(int x)
{
	if (x > 5)
		return ext(x);
	return x;
}

int tailer(int x)
{
	return tail(x + 1);
}

/* The caller's ret merged into the copy's returns. */
INL int pick(int x)
{
	if (x & 1)
		return x * 7;
	if (x & 2)
		return x - 9;
	return 0;
}

int merged(int x)
{
	return pick(x);
}

/* A copy inside a loop inside another copy. */
INL int inner(int x)
{
	return x * x + 1;
}

INL int outer(const int *p, int n)
{
	int s = 0;
	for (int i = 0; i < n; i++) {
		int v = inner(p[i]);
		MARKV(0x4444, v);
		s += v;
	}
	return s;
}

int nested(const int *p, int n)
{
	int r = outer(p, n);
	MARKV(0x2222, r);
	return r;
}

/* A switch in the copy: a jump table, unless built with -fno-jump-tables. */
INL int sw(int x)
{
	switch (x) {
	case 0: sink(10); return 3;
	case 1: sink(11); return 9;
	case 2: sink(12); return 1;
	case 3: sink(13); return 4;
	case 4: sink(14); return 8;
	case 5: sink(15); return 2;
	case 6: sink(16); return 6;
	}
	return -1;
}

int switcher(int x)
{
	int r = sw(x);
	MARKV(0x2222, r);
	return r;
}
