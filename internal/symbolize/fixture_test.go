package symbolize_test

import (
	"testing"

	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/symbolize"
)

// fixtureProgram prints the addresses of its functions, of its
// variables, of a libc function and of memory in no object, then waits
// for its stdin to close.
const fixtureProgram = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int counter;          /* .bss */
int table[64] = {1};  /* .data */

__attribute__((noinline)) int leaf(int x) { return x * 3 + counter; }
__attribute__((noinline)) static int helper(int x) { return leaf(x) + table[x & 63]; }

int main(void) {
	int local;
	printf("leaf %p\n", (void *)leaf);
	printf("helper %p\n", (void *)helper);
	printf("main %p\n", (void *)main);
	printf("counter %p\n", (void *)&counter);
	printf("table %p\n", (void *)table);
	printf("getppid %p\n", dlsym(RTLD_DEFAULT, "getppid"));
	printf("heap %p\n", malloc(64));
	printf("stack %p\n", (void *)&local);
	printf("end 0\n");
	fflush(stdout);
	char buf[8];
	ssize_t n = read(0, buf, sizeof buf);
	return helper((int)n);
}
`

// lookup is what a test asks and what it expects.
type lookup struct {
	what   string
	addr   uint64
	object string
	name   string // "" for the object alone; "-" for nothing found
	value  uint64
}

func check(t *testing.T, s *symbolize.System, pid uint64, tests []lookup) {
	t.Helper()
	for _, tt := range tests {
		got, ok := s.User(pid, tt.addr)
		switch {
		case tt.name == "-":
			if ok {
				t.Errorf("%s: User(%d, %#x) = %+v, want nothing", tt.what, pid, tt.addr, got)
			}
		case !ok:
			t.Errorf("%s: User(%d, %#x) found nothing, want %s`%s", tt.what, pid, tt.addr, tt.object, tt.name)
		case got != (consumer.Symbol{Object: tt.object, Name: tt.name, Value: tt.value}):
			t.Errorf("%s: User(%d, %#x) = %+v, want %s`%s at %#x", tt.what, pid, tt.addr, got, tt.object, tt.name, tt.value)
		}
	}
}
