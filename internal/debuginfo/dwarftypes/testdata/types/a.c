#include "types.h"

struct dup { /* b.c has another struct dup */
	int x;
};

struct anon g_anon;
struct bits g_bits;
const char *names[4];
struct zero *g_zero;
anon_td g_td;
struct dup a_dup;
enum uns g_uns;
enum small g_small;
static int s_counter;

int f(int a, const char *b, struct list *l) { return a + (b != 0) + (l != 0) + s_counter; }

int vf(const char *fmt, ...) { return fmt != 0; }

int knr() { return 0; }

int main(void) { return f(1, "x", 0) + vf("y") + knr() + g_anon.kind; }
