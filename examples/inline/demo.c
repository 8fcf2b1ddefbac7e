/*
 * The README's first example: valid() is small, static and inline, so
 * the compiler copies its body into get() and put() instead of calling
 * it; a table of checks also calls it through a pointer, which keeps an
 * out-of-line copy too. kdtrace -c ./demo -s demo.d counts valid()'s
 * entries and returns at every copy, and the program prints how many
 * calls it made, so the two can be compared.
 */
#include <stdio.h>

struct req {
	int op;			/* 0 get, 1 put, 2 checked through the table */
	int len;
	const char *key;
};

static long calls, by_get, by_put, by_table;

static inline int valid(const struct req *r)
{
	calls++;
	if (r->key == NULL)			/* an early return */
		return 0;
	if (r->len <= 0 || r->len > 16)
		return 0;
	for (int i = 0; i < r->len; i++)	/* a loop */
		if (r->key[i] == '\0')
			return 0;
	return 1;
}

int (*volatile check)(const struct req *) = valid;

__attribute__((noinline)) int get(const struct req *r)
{
	by_get++;
	if (!valid(r))
		return -1;
	return r->len;
}

__attribute__((noinline)) int put(const struct req *r)
{
	by_put++;
	return valid(r) ? 2 * r->len : -2;
}

int main(void)
{
	static const char *keys[] = { "alpha", NULL, "beta", "gamma-delta-epsilon", "pi" };
	long sum = 0;
	for (int i = 0; i < 1000; i++) {
		const char *k = keys[i % 5];
		struct req r = { i % 3, k ? (int)__builtin_strlen(k) - (i % 7 == 0) : 0, k };
		switch (r.op) {
		case 0:
			sum += get(&r);
			break;
		case 1:
			sum += put(&r);
			break;
		default:
			by_table++;
			sum += check(&r);
		}
	}
	printf("demo: valid() called %ld times: %ld from get, %ld from put, %ld through a pointer (sum %ld)\n",
	    calls, by_get, by_put, by_table, sum);
	return 0;
}
