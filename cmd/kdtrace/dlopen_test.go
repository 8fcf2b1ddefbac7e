package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dlopenLib has a function with a USDT probe, whose argument is the
// function's.
const dlopenLib = `#include <sys/sdt.h>
__attribute__((noinline)) int foo(int x) { DTRACE_PROBE1(foo, probe, x); return x + 1; }
`

// dlopenMain dlopen()s the library argv[1], calls its foo argv[2]
// times, dlclose()s it, renames argv[4] over argv[1] when given (a new
// file where the old was), and does it all again calling foo argv[3]
// times. Its own function phase is probed from the start.
const dlopenMain = `#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int phase(const char *lib, int n) {
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) { fprintf(stderr, "%s\n", dlerror()); exit(1); }
	int (*f)(int) = (int (*)(int))dlsym(h, "foo");
	if (f == NULL) { fprintf(stderr, "%s\n", dlerror()); exit(1); }
	int s = 0;
	for (int i = 0; i < n; i++)
		s += f(i);
	dlclose(h);
	return s;
}

int main(int argc, char **argv) {
	int s = phase(argv[1], atoi(argv[2]));
	if (argc > 4 && rename(argv[4], argv[1]) != 0) { perror("rename"); exit(1); }
	s += phase(argv[1], atoi(argv[3]));
	return s == 0;
}
`

// TestDlopen traces, from before it starts, a program that dlopen()s a
// library twice, calling its function 3 times, then 4: the pid and
// USDT probes of the library, which is mapped only once the tracing
// runs, fire 7 times, and the USDT probe's argument is read where the
// library's notes say; the probe of the program's own function, enabled
// from the start, fires twice, undisturbed. When the library's file is
// replaced between the two dlopen()s, the probes of the first are
// detached at its dlclose() and those of the new file attached: still
// 7. Nothing is left loaded after.
func TestDlopen(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the run-time linker followed is glibc's on Linux amd64")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		t.Skip("no <sys/sdt.h> (systemtap-sdt-dev)")
	}
	needTracing(t)
	dir := t.TempDir()
	cc := func(args ...string) {
		t.Helper()
		cmd := exec.Command("gcc", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc %q: %v\n%s", args, err, out)
		}
	}
	for name, src := range map[string]string{"foo.c": dlopenLib, "main.c": dlopenMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cc("-O1", "-shared", "-fPIC", "-o", "libfoo.so", "foo.c")
	cc("-O1", "-o", "main", "main.c", "-ldl")
	lib := filepath.Join(dir, "libfoo.so")
	script := `pid$target:libfoo.so::entry, foo$target:::probe, pid$target:a.out:phase:entry
{
	@n[probemod, probefunc, probename] = count();
}

foo$target:::probe
{
	@sum = sum(arg0);
}

END
{
	printa("%s:%s:%s %@d\n", @n);
	printa("sum %@d\n", @sum);
}
`
	want := `main:phase:entry 2
libfoo.so:foo:entry 7
libfoo.so:foo:probe 7
sum 9

`
	for _, tc := range []struct {
		name    string
		replace bool
	}{
		{"same file", false},
		{"file replaced", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := filepath.Join(dir, "main") + " " + lib + " 3 4"
			if tc.replace {
				alt := filepath.Join(dir, "libfoo.new.so")
				cc("-O1", "-shared", "-fPIC", "-o", alt, "foo.c")
				cmd += " " + alt
			}
			before := loadedPrograms(t)
			var stdout, stderr bytes.Buffer
			if st := run([]string{"dtrace", "-Zq", "-c", cmd, "-n", script}, &stdout, &stderr); st != 0 {
				t.Fatalf("status %d: %s", st, stderr.String())
			}
			if d := cmp.Diff(want, stdout.String()); d != "" {
				t.Errorf("counts (-want +got):\n%s\nstderr: %s", d, stderr.String())
			}
			if after := loadedPrograms(t); after != before {
				t.Errorf("%d BPF programs loaded after the tracing, %d before", after, before)
			}
		})
	}
}

// execProgram fires its USDT probe five times, with arguments 0 to 4.
const execProgram = `#include <sys/sdt.h>
__attribute__((noinline)) void hit(int i) { DTRACE_PROBE1(kd_exec, hit, i); }
int main(void) {
	for (int i = 0; i < 5; i++)
		hit(i);
	return 0;
}
`

// TestExecZ traces, with -Z, the USDT probes of a process that does not
// exist yet: system() starts it, and its probes, which no description
// matched when the tracing began, fire from its first instruction on,
// each time.
func TestExecZ(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("processes are followed through Linux's sched_process_exec")
	}
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		t.Skip("no <sys/sdt.h> (systemtap-sdt-dev)")
	}
	needTracing(t)
	exe := buildFixture(t, "exec", execProgram)
	// The last firing ends the tracing: exit() in BEGIN would end it
	// before the program runs. A minute without it is a failure.
	script := `BEGIN
{
	system("` + exe + `");
}

kd_exec*:::hit
/progenyof($pid)/
{
	@n[probemod, probefunc, probename] = count();
	@s = sum(arg0);
}

kd_exec*:::hit
/arg0 == 4/
{
	exit(0);
}

tick-60s
{
	exit(1);
}

END
{
	printa("%s:%s:%s %@d\n", @n);
	printa("sum %@d\n", @s);
}
`
	before := loadedPrograms(t)
	var stdout, stderr bytes.Buffer
	if st := run([]string{"dtrace", "-wqZ", "-n", script}, &stdout, &stderr); st != 0 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	want := "exec:hit:hit 5\nsum 10\n\n"
	if d := cmp.Diff(want, stdout.String()); d != "" {
		t.Errorf("counts (-want +got):\n%s\nstderr: %s", d, stderr.String())
	}
	if after := loadedPrograms(t); after != before {
		t.Errorf("%d BPF programs loaded after the tracing, %d before", after, before)
	}
}
