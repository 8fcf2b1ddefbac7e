package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// callSiteFixture's step prints its parameters, then no longer needs
// them: at mark_step optimised code gives them only as their values on
// entry (DW_OP_entry_value), which main's call sites record: a
// callee-saved register (n, kept for the printf after the calls), n+1
// and constants. The third call, through a pointer, records none.
const callSiteFixture = `#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long use(long x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

__attribute__((noinline)) long step(long a, long k)
{
	printf("step a=%ld\nstep k=%ld\n", a, k);
	__asm__ volatile(".globl mark_step\nmark_step:");
	return use(7);
}

long (*volatile indirect)(long, long) = step;

int main(int argc, char **argv)
{
	long n = argc + 40;
	char *out = getenv("LOCALS_OUT");
	if (out != NULL && freopen(out, "w", stdout) == NULL)
		return 1;
	long s = step(n, 5);
	s += step(n + 1, 6);
	printf("n=%ld\n", n);
	if (argc > 1)
		s += indirect(n, 8);
	printf("result %ld\n", s);
	return 0;
}
`

// TestLocalsCallSite reads, at -O2, parameters given only as their
// values on entry, past the function's first instruction, from the
// call site the function was called from: each direct call's values
// must be the program's, and the call through a pointer, whose call
// site records nothing, must fault rather than print a value.
func TestLocalsCallSite(t *testing.T) {
	needTracing(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "callsite.c")
	if err := os.WriteFile(src, []byte(callSiteFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, cc := range []string{"gcc", "clang"} {
		if _, err := exec.LookPath(cc); err != nil {
			t.Logf("no %s", cc)
			continue
		}
		ran++
		// DWARF 5's DW_TAG_call_site, and DWARF 4's GNU extension.
		for _, dw := range []string{"-gdwarf-4", "-gdwarf-5"} {
			name := cc + dw
			t.Run(name, func(t *testing.T) {
				bin := filepath.Join(dir, name)
				if out, err := exec.Command(cc, "-O2", dw, "-fcf-protection=none", "-o", bin, src).CombinedOutput(); err != nil {
					t.Skipf("%s: %v\n%s", cc, err, out)
				}
				off := markOffset(t, bin, "step", "mark_step")
				probe := fmt.Sprintf("pid$target:a.out:step:%x", off)
				var stdout, stderr bytes.Buffer
				if st := run([]string{"kdtrace", "-lv", "-c", bin, "-n", probe}, &stdout, &stderr); st != 0 {
					t.Fatalf("-lv: status %d: %s", st, stderr.String())
				}
				for _, l := range []string{"a", "k"} {
					if want := "\t\tlocals->" + l + ": "; !strings.Contains(stdout.String(), want) ||
						!strings.Contains(stdout.String(), "from the call sites returning to ") {
						t.Errorf("-lv does not say %s comes from the call sites:\n%s", l, stdout.String())
					}
				}
				progOut := filepath.Join(dir, name+".out")
				t.Setenv("LOCALS_OUT", progOut)
				stdout.Reset()
				stderr.Reset()
				script := probe + ` { printf("step a=%d\nstep k=%d\n", locals->a, locals->k); }`
				if st := run([]string{"kdtrace", "-q", "-c", bin + " indirect", "-n", script}, &stdout, &stderr); st != 0 {
					t.Fatalf("status %d: %s", st, stderr.String())
				}
				want, err := os.ReadFile(progOut)
				if err != nil {
					t.Fatal(err)
				}
				var wantLines []string
				for _, l := range strings.Split(string(want), "\n") {
					if strings.HasPrefix(l, "step ") {
						wantLines = append(wantLines, l)
					}
				}
				// The third call's, through the pointer, faults.
				if len(wantLines) != 6 {
					t.Fatalf("the program printed %q", want)
				}
				wantLines = wantLines[:4]
				gotLines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
				if !slices.Equal(gotLines, wantLines) {
					t.Errorf("kdtrace printed\n%s\nthe program printed\n%s", strings.Join(gotLines, "\n"), strings.Join(wantLines, "\n"))
				}
				if n := strings.Count(stderr.String(), "invalid address (0x0) in action #1"); n != 1 {
					t.Errorf("%d faults, want 1 (the call through the pointer): %s", n, stderr.String())
				}
			})
		}
	}
	if ran == 0 {
		t.Skip("no C compiler")
	}
}

// markOffset returns the offset of symbol mark in function fn of bin.
func markOffset(t *testing.T, bin, fn, mark string) uint64 {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	addr := map[string]uint64{}
	for _, s := range syms {
		addr[s.Name] = s.Value
	}
	if addr[fn] == 0 || addr[mark] < addr[fn] {
		t.Fatalf("no %s in %s", mark, fn)
	}
	return addr[mark] - addr[fn]
}
