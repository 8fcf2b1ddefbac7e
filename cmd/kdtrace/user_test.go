package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// userFixture calls f and fires a USDT probe n times once it gets
// SIGUSR1, then waits to be killed.
const userFixture = `#include <signal.h>
#include <unistd.h>
#include <sys/sdt.h>

static volatile sig_atomic_t go;
static void on(int s) { go = 1; }

__attribute__((noinline)) long f(long i) {
	__asm__ volatile("" ::: "memory");
	return i * 2;
}

int main(int argc, char **argv) {
	long total = 0;
	signal(SIGUSR1, on);
	while (!go)
		pause();
	for (long i = 0; i < %d; i++) {
		total += f(i);
		DTRACE_PROBE2(fix, hit, i, total);
	}
	for (;;)
		pause();
}
`

// TestTraceUser traces a process's function entries and returns and its
// USDT probe with their arguments, through -p, and checks the exact
// counts and sums.
func TestTraceUser(t *testing.T) {
	needTracing(t)
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		t.Skip("no <sys/sdt.h> (systemtap-sdt-dev)")
	}
	const n = 500
	bin := gcctest.Build(t, t.TempDir(), "fix", fmt.Sprintf(userFixture, n))
	fix, pid := startFixture(t, bin)
	prog := fmt.Sprintf(`
BEGIN { printf("go\n"); }
pid$target:fix:f:entry { @e = count(); @a = sum(arg0); @g = sum(uregs[R_RDI] + regs[R_RDI]); }
pid$target:fix:f:return { @r = count(); @v = sum(arg1); }
fix$target:::hit { @u = sum(arg1); }
fix$target:::hit /arg0 == %d/ { exit(0); }
END { printa("%%@d %%@d %%@d %%@d %%@d %%@d\n", @e, @a, @r, @v, @u, @g); }`, n-1)
	before := loadedPrograms(t)
	out, errs, st := runActive(t, []string{"-q", "-p", fmt.Sprint(pid), "-n", prog}, func() {
		fix.Process.Signal(syscall.SIGUSR1)
	})
	if st != 0 {
		t.Fatalf("status %d: %s", st, errs)
	}
	sumI, sumV := 0, 0
	for i := range n {
		sumI += i
		sumV += 2 * i
	}
	// The USDT probe's total is the running total, summed.
	total, sumT := 0, 0
	for i := range n {
		total += 2 * i
		sumT += total
	}
	// uregs[R_RDI] and regs[R_RDI] are both f's argument.
	want := fmt.Sprintf("go\n%d %d %d %d %d %d\n\n", n, sumI, n, sumV, sumT, 2*sumI)
	if out != want {
		t.Errorf("stdout %q, want %q (stderr %q)", out, want, errs)
	}
	checkReleased(t, before)
}

// copyoutFixture waits until its flag is set, then writes it and a
// buffer its function named() is given to the file argv[1].
const copyoutFixture = `#include <stdio.h>
#include <unistd.h>
volatile int flag = 0;
char buf[32] = "........";
__attribute__((noinline)) void waiting(volatile int *a) { __asm__ volatile(""); }
__attribute__((noinline)) void named(char *b) { __asm__ volatile(""); }
int main(int argc, char **argv) {
	for (int i = 0; i < 500 && !flag; i++) { waiting(&flag); usleep(10000); }
	named(buf);
	FILE *f = fopen(argv[1], "w");
	fprintf(f, "flag=%d buf=%s\n", flag, buf);
	return fclose(f);
}
`

// TestTraceCopyout checks copyinto(), which reads the traced process's
// memory, and copyout() and copyoutstr(): they write the
// traced process's memory where the kernel lets BPF programs do it,
// and are refused in one sentence where it does not (a kernel locked
// down for integrity).
func TestTraceCopyout(t *testing.T) {
	needTracing(t)
	dir := t.TempDir()
	bin := gcctest.Build(t, dir, "co", copyoutFixture)
	result := filepath.Join(dir, "result")
	// copyinto() reads the buffer into scratch.
	var in, inErr bytes.Buffer
	if st := run([]string{"kdtrace", "-q", "-c", bin + " " + result, "-n", `pid$target::named:entry { p = alloca(16); copyinto(arg0, 8, p); printf("%s\n", stringof(p)); }`}, &in, &inErr); st != 0 || in.String() != "........\n\n" {
		t.Errorf("copyinto: status %d, stdout %q, want %q (stderr %q)", st, in.String(), "........\n\n", inErr.String())
	}
	prog := `pid$target::waiting:entry { this->v = (int *)alloca(4); *this->v = 7; copyout(this->v, arg0, 4); }
pid$target::named:entry { copyoutstr("hello", arg0, 32); }`
	var stdout, stderr bytes.Buffer
	st := run([]string{"kdtrace", "-wq", "-c", bin + " " + result, "-n", prog}, &stdout, &stderr)
	if err := features.HaveProgramHelper(ebpf.Kprobe, asm.FnProbeWriteUser); err != nil {
		if st != 1 || !strings.Contains(stderr.String(), "copyout() writes the user's memory through bpf_probe_write_user, which this kernel refuses") {
			t.Errorf("status %d, stderr %q; want copyout() refused", st, stderr.String())
		}
		return
	}
	got, err := os.ReadFile(result)
	if want := "flag=7 buf=hello\n"; st != 0 || err != nil || string(got) != want {
		t.Errorf("status %d, the process wrote %q (%v), want %q (stderr %q)", st, got, err, want, stderr.String())
	}
}

// startFixture starts the program bin for -p, killed when the test
// ends, and returns it and its pid once it is past its exec: a process
// grabbed before then is the test's copy.
func startFixture(t *testing.T, bin string) (*exec.Cmd, int) {
	t.Helper()
	fix := exec.Command(bin)
	if err := fix.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fix.Process.Kill()
		fix.Wait()
	})
	pid := fix.Process.Pid
	for range 100 {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe == bin {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fix, pid
}
