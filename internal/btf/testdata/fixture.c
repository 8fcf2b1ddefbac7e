// The C fixture of TestClang, compiled with clang -g -O2 -target bpf -c.
// clang emits BTF only for the types that globals and functions use.

typedef unsigned int u32;
typedef u32 my_u32;
typedef long long s64;

enum color { RED = -1, GREEN, BLUE = 7 };
enum mask { HIGH = 0x80000000u };

struct opaque;
union uopaque;

struct flags {
	unsigned int a : 3;
	unsigned int b : 5;
	int c : 10;
	union {
		int i;
		float f;
	};
	struct {
		char x, y;
	} pair;
	const volatile int cv;
	char name[16];
	struct opaque *op;
	union uopaque *uop;
	struct flags *next;
	my_u32 id;
	enum color color;
	enum mask mask;
	void (*cb)(struct flags *, int);
	char __attribute__((btf_type_tag("user"))) *user;
	double d;
	_Bool ok;
	unsigned char uc;
	signed char sc;
	unsigned long ul;
};

extern int printk(const char *fmt, ...);

struct flags g_flags;
s64 counter __attribute__((btf_decl_tag("counter_tag")));

int handle(struct flags *f, const char *msg, unsigned long n)
{
	printk("%d", 1);
	return f->a + msg[0] + n;
}
