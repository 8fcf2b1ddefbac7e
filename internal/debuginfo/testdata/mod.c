/* A second object standing in for a kernel module: compiled with -c, it
 * is ET_REL as .ko files are. */
#define MARK(n) __asm__ volatile("nopw " #n "(%%rax,%%rax,1)" ::: "memory")

extern volatile int modsink;

static inline __attribute__((always_inline)) int modleaf(int x)
{
	MARK(0x7777);
	return x + modsink;
}

int modfunc1(int x)
{
	return modleaf(x) * 5; /* site:modleaf */
}

__attribute__((section(".text.other"))) int modfunc2(int x)
{
	int r = modleaf(x + 1); /* site:modleaf */
	return r + modleaf(r); /* site:modleaf */
}
