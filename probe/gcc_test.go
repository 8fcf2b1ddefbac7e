package probe

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
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

// buildC compiles src with gcc into dir/name, with the given flags,
// skipping the test when gcc cannot.
func buildC(t *testing.T, dir, name, src string, flags ...string) string {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("the test programs' code is decoded as amd64")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("no gcc: %v", err)
	}
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	args := append([]string{"-O1", "-fno-pie", "-no-pie", "-fcf-protection=none", "-o", out, c}, flags...)
	if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Skipf("gcc %v: %v\n%s", args, err, b)
	}
	return out
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
