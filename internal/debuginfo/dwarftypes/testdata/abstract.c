/* f's copy in g keeps no DIE of what it optimised away entirely: clang
   drops unused, gcc drops t. */
static inline __attribute__((always_inline)) int f(int unused, int x)
{
	int t = x * 2;
	__asm__ volatile("" : : "r"(t));
	return t;
}

__attribute__((noinline)) int g(int a) { return f(a + 1, a) + 1; }

int main(int argc, char **argv) { return g(argc); }
