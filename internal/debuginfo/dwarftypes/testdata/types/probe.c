/* Prints the sizes and offsets the compiler gives the types of types.h,
 * one per line: size|TYPE|BYTES, off|TYPE|MEMBER|BYTES and, for
 * bit-fields, bits|TYPE|MEMBER|FIRST-BIT|WIDTH. */
#include <stdio.h>
#include <string.h>
#include "types.h"
#include "fwd.h"

#define SIZE(T) printf("size|%s|%zu\n", #T, sizeof(T))
#define OFF(T, M) printf("off|%s|%s|%zu\n", #T, #M, offsetof(T, M))
#define BITS(T, M)                                                   \
	do {                                                         \
		T v;                                                 \
		memset(&v, 0, sizeof v);                             \
		v.M = -1;                                            \
		bits(#T, #M, (unsigned char *)&v, sizeof v);         \
	} while (0)

static void bits(const char *t, const char *m, const unsigned char *p, size_t n)
{
	long lo = -1, w = 0;
	for (size_t i = 0; i < n * 8; i++)
		if (p[i / 8] >> (i % 8) & 1) {
			if (lo < 0)
				lo = (long)i;
			w++;
		}
	printf("bits|%s|%s|%ld|%ld\n", t, m, lo, w);
}

int main(void)
{
	SIZE(struct list);
	OFF(struct list, prev);
	SIZE(struct bits);
	BITS(struct bits, a);
	BITS(struct bits, b);
	BITS(struct bits, c);
	OFF(struct bits, d);
	BITS(struct bits, e);
	BITS(struct bits, f);
	BITS(struct bits, g);
	BITS(struct bits, h);
	SIZE(struct anon);
	OFF(struct anon, kind);
	OFF(struct anon, i);
	OFF(struct anon, l);
	OFF(struct anon, lo);
	OFF(struct anon, hi);
	OFF(struct anon, named);
	OFF(struct anon, named.tag);
	OFF(struct anon, named.n);
	OFF(struct anon, cv);
	OFF(struct anon, name);
	OFF(struct anon, rp);
	OFF(struct anon, matrix);
	OFF(struct anon, lists);
	OFF(struct anon, cmp);
	OFF(struct anon, vfn);
	OFF(struct anon, ch);
	OFF(struct anon, color);
	OFF(struct anon, fp);
	OFF(struct anon, self);
	OFF(struct anon, flex);
	SIZE(struct zero);
	OFF(struct zero, z);
	SIZE(anon_td);
	OFF(anon_td, c);
	SIZE(struct fwd_only);
	OFF(struct fwd_only, b);
	SIZE(enum color);
	SIZE(enum uns);
	SIZE(enum small);
	SIZE(chain_t);
	return 0;
}
