// Package gcctest builds small C programs with gcc for tests that read
// their symbols and decode their code as amd64, and runs the tools such
// tests use (objcopy, readelf, gdb).
package gcctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Need skips the test unless every tool is installed.
func Need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: %v", tool, err)
		}
	}
}

// Run runs a command in dir and fails the test with its output if it
// fails.
func Run(t testing.TB, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// Build compiles src with gcc into dir/name, not position-independent
// and without CET's endbr64, with the given flags added, and returns
// its path. It skips the test off amd64 or when gcc cannot build it.
func Build(t testing.TB, dir, name, src string, flags ...string) string {
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

// LockedEntry is a program whose function locked starts with a
// lock-prefixed instruction, which uprobes refuse, beside a function
// lockless they take. With more than five arguments it calls both;
// with pause among them it waits for a signal.
const LockedEntry = `#include <string.h>
#include <unistd.h>
__asm__(".globl locked\n.type locked,@function\nlocked:\n\tlock incl (%rdi)\n\tret\n.size locked, .-locked\n");
void locked(int *);
__attribute__((noinline)) int lockless(int *p) { return *p + 1; }
int main(int argc, char **argv) {
	int x = 0;
	if (argc > 5) {
		locked(&x);
		x = lockless(&x);
	}
	if (argc > 1 && strcmp(argv[1], "pause") == 0)
		pause();
	return x;
}
`
