package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// entryFixture's functions print their parameters first thing, one
// "function name=value" line each; kdtrace's locals-> at their entry
// probes must print the same lines. Their parameters take every place
// the System V convention has: the six registers, the stack beyond
// them, a struct in two registers (read from a copy of them), a struct
// in memory, a double in an xmm register, and the hidden pointer to a
// struct result in rdi.
const entryFixture = `#include <stdio.h>
#include <stdlib.h>

struct two { long x, y; };
struct big { long a, b, c; };

__attribute__((noinline)) long work(int a, long b, char *p, struct two t, struct big g, int f6, double d, int f7, short f8)
{
	printf("work a=%d\nwork b=%ld\nwork p=%p\nwork t.x=%ld\nwork t.y=%ld\nwork g.a=%ld\nwork g.c=%ld\nwork f6=%d\nwork f7=%d\nwork f8=%d\n",
		a, b, (void *)p, t.x, t.y, g.a, g.c, f6, f7, f8);
	return a + b + t.x + t.y + g.a + g.b + g.c + f6 + (long)d + f7 + f8 + (p != NULL);
}

__attribute__((noinline)) struct big make(long a, long b, long c, long d, long e, long f, long g)
{
	printf("make a=%ld\nmake b=%ld\nmake e=%ld\nmake f=%ld\nmake g=%ld\n", a, b, e, f, g);
	struct big r = { a + b + c, d + e, f + g };
	return r;
}

int main(int argc, char **argv)
{
	struct two t = { argc + 10, argc + 11 };
	struct big g = { argc + 20, argc + 21, argc + 22 };
	char *out = getenv("LOCALS_OUT");
	if (out != NULL && freopen(out, "w", stdout) == NULL)
		return 1;
	long n = work(argc + 4, argc + 5, argv[0], t, g, argc + 6, argc + 0.5, -argc - 7, argc + 8);
	struct big r = make(argc + 30, argc + 31, argc + 32, argc + 33, argc + 34, argc + 35, -argc - 36);
	printf("result %ld %ld\n", n, r.a + r.b + r.c);
	return 0;
}
`

// TestLocalsEntry reads parameters at their function's entry probe,
// before an -O0 prologue has stored them in the frame slots DWARF
// places them in: kdtrace must read them where the caller put them,
// print what the program prints, and say in -lv where each comes from,
// and why those in xmm registers or split over two are not read.
func TestLocalsEntry(t *testing.T) {
	needTracing(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "entry.c")
	if err := os.WriteFile(src, []byte(entryFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	// The parameters read, and their conversions. At -O2 DWARF's lists
	// say where each is at each address, and give some of those on the
	// stack no location at the entry (gcc's g, clang's f7 and f8): those
	// are left out there.
	vars := []struct{ fn, name, conv string }{
		{"work", "a", "%d"}, {"work", "b", "%d"}, {"work", "p", "0x%p"}, {"work", "t.x", "%d"}, {"work", "t.y", "%d"}, {"work", "g.a", "%d"}, {"work", "g.c", "%d"},
		{"work", "f6", "%d"}, {"work", "f7", "%d"}, {"work", "f8", "%d"},
		{"make", "a", "%d"}, {"make", "b", "%d"}, {"make", "e", "%d"}, {"make", "f", "%d"}, {"make", "g", "%d"},
	}
	onStack := []string{"work g.a", "work g.c", "work f7", "work f8"}
	ran := 0
	for _, cc := range []string{"gcc", "clang"} {
		if _, err := exec.LookPath(cc); err != nil {
			t.Logf("no %s", cc)
			continue
		}
		for _, opt := range []string{"-O0", "-O2"} {
			name := cc + opt
			t.Run(name, func(t *testing.T) {
				bin := filepath.Join(dir, name)
				if out, err := exec.Command(cc, opt, "-g", "-fcf-protection=none", "-o", bin, src).CombinedOutput(); err != nil {
					t.Skipf("%s: %v\n%s", cc, err, out)
				}
				var script strings.Builder
				keep := map[string]bool{}
				for _, v := range vars {
					if opt != "-O0" && slices.Contains(onStack, v.fn+" "+v.name) {
						continue
					}
					keep[v.fn+" "+v.name] = true
					fmt.Fprintf(&script, "pid$target::%s:entry { printf(\"%s %s=%s\\n\", locals->%s); }\n", v.fn, v.fn, v.name, v.conv, v.name)
				}
				progOut := filepath.Join(dir, name+".out")
				t.Setenv("LOCALS_OUT", progOut)
				var stdout, stderr bytes.Buffer
				if st := run([]string{"kdtrace", "-q", "-c", bin, "-n", script.String()}, &stdout, &stderr); st != 0 {
					t.Fatalf("status %d: %s", st, stderr.String())
				}
				want, err := os.ReadFile(progOut)
				if err != nil {
					t.Fatal(err)
				}
				checkPrinted(t, stdout.String(), want, keep)
				if opt != "-O0" {
					return
				}
				stdout.Reset()
				stderr.Reset()
				if st := run([]string{"kdtrace", "-lv", "-c", bin, "-n", "pid$target::work:entry", "-n", "pid$target::make:entry"}, &stdout, &stderr); st != 0 {
					t.Fatalf("-lv: status %d: %s", st, stderr.String())
				}
				// gcc and clang name the types apart ("long int", "long").
				for _, l := range []string{
					"a: .* (parameter; rdi (SysV argument))",
					"p: char * (parameter; rdx (SysV argument))",
					"t: struct two (parameter; rcx, r8 (SysV argument))",
					"g: struct big (parameter; stack rsp+8 (SysV argument))",
					"f6: int (parameter; r9 (SysV argument))",
					"d: double (parameter; it is in xmm registers (SysV argument), which a probe cannot read)",
					"f7: int (parameter; stack rsp+32 (SysV argument))",
					"f8: .* (parameter; stack rsp+40 (SysV argument))",
					// make returns a struct in memory: rdi is the pointer to it.
					"a: .* (parameter; rsi (SysV argument))",
					"e: .* (parameter; r9 (SysV argument))",
					"f: .* (parameter; stack rsp+8 (SysV argument))",
				} {
					re := regexp.MustCompile(`\t\tlocals->` + strings.ReplaceAll(regexp.QuoteMeta(l), `\.\*`, `[^(\n]*`) + `\n`)
					if !re.MatchString(stdout.String()) {
						t.Errorf("-lv lacks %q:\n%s", l, stdout.String())
					}
				}
				// One instruction in (push %rbp), the registers may be
				// reused already: only the stack's are read, from the CFA.
				stdout.Reset()
				stderr.Reset()
				if st := run([]string{"kdtrace", "-lv", "-c", bin, "-n", "pid$target::work:1"}, &stdout, &stderr); st != 0 {
					t.Fatalf("-lv: status %d: %s", st, stderr.String())
				}
				for _, l := range []string{
					"a: int (parameter; in the prologue (which ends at work+0x",
					"f7: int (parameter; stack CFA+24 (SysV argument))",
				} {
					if !strings.Contains(stdout.String(), "\t\tlocals->"+l) {
						t.Errorf("-lv at work:1 lacks %q:\n%s", l, stdout.String())
					}
				}
				stdout.Reset()
				stderr.Reset()
				if st := run([]string{"kdtrace", "-q", "-c", bin, "-n", `pid$target::work:1 { printf("work f7=%d\n", locals->f7); }`}, &stdout, &stderr); st != 0 {
					t.Fatalf("status %d: %s", st, stderr.String())
				}
				if got, l := strings.TrimRight(stdout.String(), "\n"), regexp.MustCompile(`(?m)^work f7=.*$`).FindString(string(want)); got != l {
					t.Errorf("at work:1 kdtrace printed %q, the program %q", got, l)
				}
			})
			ran++
		}
	}
	if ran == 0 {
		t.Skip("no C compiler")
	}
}
