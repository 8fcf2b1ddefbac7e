package probe

import (
	"strconv"
)

// testProgram is a small C program: its functions are the offline
// kernel's and, running, the traced process's.
const testProgram = `
#include <unistd.h>

__attribute__((noinline)) int work(int x) { return x * 3 + 1; }
__attribute__((noinline)) int other(int x) { return (x ^ 0x55) + work(x); }
__attribute__((noinline)) void idle(void) { for (;;) pause(); }

int main(int argc, char **argv) {
	if (argc > 1)
		idle();
	return other(argc);
}
`

// testModule is a kernel module's functions, as a relocatable object.
const testModule = `
__attribute__((noinline)) int mod_init(int x) { return x + 7; }
__attribute__((noinline)) int mod_exit(int x) { return mod_init(x) * 2; }
`

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
