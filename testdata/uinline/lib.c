/* A library whose h is inlined into its callers; lcount says how many
 * times h ran. */
static long nh;

static inline long h(long x)
{
	nh++;
	if (x < 0)
		return 0;
	long s = 0;
	for (long i = 0; i < x % 4; i++)
		s += i * x;
	return s;
}

__attribute__((noinline)) long l1(long x) { return h(x) + 1; }
__attribute__((noinline)) long l2(long x) { return h(x * 3) * 2; }
long lcount(void) { return nh; }
