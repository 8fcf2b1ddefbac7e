/*
 * Fixture for the debuginfo tests. Each function of interest holds a
 * marker instruction with a displacement of its own; the tests find the
 * markers in objdump's output and check that the index's copies cover
 * them. Lines that call an inlined function end in a "site:" comment
 * naming it.
 */
#define MARK(n) __asm__ volatile("nopw " #n "(%%rax,%%rax,1)" ::: "memory")

extern int ext(int);
extern volatile int sink;

/* Stands for the kernel's return thunk, which Set.ReturnThunks finds. */
__attribute__((used, noinline)) void __x86_return_thunk(void) { __asm__ volatile("ret"); }
__attribute__((cold, noinline)) void slow(int x) { sink = x; }

static inline __attribute__((always_inline)) int leaf(int x)
{
	MARK(0x1111);
	return x * 3 + sink;
}

/* split has an early return and an unlikely cold path, so its copies
 * are split into several ranges. */
static inline __attribute__((always_inline)) int split(int x)
{
	if (x < 0)
		return -1;
	MARK(0x2222);
	if (__builtin_expect(x == 4242, 0)) {
		MARK(0x2223);
		slow(x);
		sink = x + 7;
	}
	return x + sink;
}

/* mid is inlined and inlines leaf: leaf's copies inside it still belong
 * to the out-of-line caller. */
static inline __attribute__((always_inline)) int mid(int x)
{
	MARK(0x3333);
	return leaf(x + 1) * 2; /* site:leaf */
}

/* both is global, so it stays out of line, and small, so it is inlined
 * too. */
int both(int x)
{
	MARK(0x4444);
	return x ^ sink;
}

__attribute__((noinline)) int never(int x)
{
	MARK(0x5555);
	return x + 1 + sink;
}

/* tail ends in a call that becomes a jump. */
static inline __attribute__((always_inline)) int tail(int x)
{
	MARK(0x6666);
	return ext(x + sink);
}

int caller1(int x)
{
	int r = leaf(x); /* site:leaf */
	r += split(r); /* site:split */
	return r + both(x); /* site:both */
}

int caller2(int x)
{
	int r = mid(x); /* site:mid */
	r += split(x + 1); /* site:split */
	r += never(r);
	return tail(r); /* site:tail */
}

int caller3(int x)
{
	if (x > 10)
		return leaf(x) + split(x * 2); /* site:leaf site:split */
	return both(x + 2) + never(x); /* site:both */
}

volatile int sink;

int ext(int x) { return x + sink; }

int main(int argc, char **argv)
{
	(void)argv;
	return caller1(argc) + caller2(argc) + caller3(argc);
}
