#include <stdio.h>

struct req {
	int len;
	long id;
	char *name;
};

static inline __attribute__((always_inline)) long scale(struct req *r, long k)
{
	long v = r->len * k;
	__asm__ volatile(".globl mark_inline\nmark_inline:" : : "r"(v));
	return v + r->id;
}

__attribute__((noinline)) long work(struct req *r, int n)
{
	long sum = 0;
	__asm__ volatile(".globl mark_entry\nmark_entry:" : : "r"(r), "r"(n));
	for (int i = 0; i < n; i++) {
		int sq = i * i;
		__asm__ volatile(".globl mark_loop\nmark_loop:" : : "r"(sq), "r"(sum));
		sum += sq + r->len;
	}
	sum += scale(r, n);
	__asm__ volatile(".globl mark_return\nmark_return:" : : "r"(sum));
	return sum;
}

int main(int argc, char **argv)
{
	struct req q = { argc + 2, 7, argv[0] };
	printf("%ld\n", work(&q, argc + 3));
	return 0;
}
