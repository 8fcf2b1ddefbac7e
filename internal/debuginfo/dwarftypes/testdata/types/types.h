/* Types for debuginfo's type tests (types_test.go): a.c and b.c are
 * compiled into one program, probe.c prints what the compiler says of
 * their sizes and offsets. */
#include <stddef.h>

enum color { RED = -2, GREEN = 0, BLUE = 7, BIG = 0x7fffffff };
enum uns { U_A = 1, U_B = 0xfffffff0u };
enum small { S_NEG = -128, S_POS = 127 } __attribute__((packed));

typedef unsigned int u32;
typedef u32 my_u32;
typedef my_u32 chain_t;

struct list {
	struct list *next, *prev;
};

struct bits {
	unsigned int a : 3;
	int b : 5;
	unsigned long c : 40;
	char d;
	unsigned short e : 9;
	_Bool f : 1;
	long long g : 33;
	enum color h : 4;
};

struct fwd_only; /* defined in fwd.h, which only b.c includes */

struct anon {
	int kind;
	union {
		int i;
		long l;
		struct {
			short lo, hi;
		};
	};
	struct {
		char tag[3];
		int n;
	} named;
	const volatile int cv;
	const char *const name;
	char *restrict rp;
	int matrix[3][4];
	struct list *lists[2];
	int (*cmp)(const void *, const void *);
	void (*vfn)(int, ...);
	chain_t ch;
	enum color color;
	struct fwd_only *fp;
	struct anon *self;
	int flex[];
};

struct zero {
	int n;
	char z[0];
};

typedef struct {
	int x;
	unsigned char uc;
	signed char sc;
	char c;
} anon_td;

int f(int a, const char *b, struct list *l);
int vf(const char *fmt, ...);
