package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// savedPidScript is the inline demo's script with a probe of a library
// and $target in a predicate: pid, inline and library probes in one
// saved program.
const savedPidScript = `
pid$target:libc.so.6:printf:entry /pid == $target/ { @libc[probefunc, pid == $target] = count(); }
`

// TestSavedPid saves a program of pid entry and return probes, the
// inline rewrite's, and a library's, compiled against -c's command,
// and runs it with -c: the output is byte for byte the script's, with
// the demo's counts. A program whose objects were rebuilt since is
// refused, naming both build-ids; one run without a process is
// refused; and no process a save created outlives it.
func TestSavedPid(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the bundled demo is a Linux amd64 program")
	}
	needTracing(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	root := filepath.Join("..", "..", "examples", "inline")
	demo := filepath.Join(dir, "demo")
	b, err := os.ReadFile(filepath.Join(root, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(demo, b, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := os.ReadFile(filepath.Join(root, "demo.d"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "demo.d")
	if err := os.WriteFile(script, append(d, savedPidScript...), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(dir, "demo.dof")
	var stdout, stderr bytes.Buffer
	save := []string{"kdtrace", "-A", "-o", saved, "-c", demo, "-s", script}
	if st := run(save, &stdout, &stderr); st != 0 || stdout.Len() != 0 || stderr.String() != "kdtrace: saved anonymous enabling in "+saved+"\n" {
		t.Fatalf("kdtrace %q: status %d, stdout %q, stderr %q", save, st, stdout.String(), stderr.String())
	}
	noProcess(t, demo)

	want, wantErr := runOut(t, []string{"kdtrace", "-c", demo, "-s", script})
	got, gotErr := runOut(t, []string{"kdtrace", "-c", demo, "-s", saved})
	// The demo makes 1000 calls of valid(), 334 from get; printf
	// once, in main.
	for _, line := range []string{
		fmt.Sprintf("  %-17s %6d\n", "entries", 1000), fmt.Sprintf("  %-17s %6d\n", "returns", 1000),
		fmt.Sprintf("  %-8s %-8s %6d\n", "get", "c", 334), fmt.Sprintf("  %-8s %-8s %6d\n", "get", "43", 334),
		"  printf                                                    1                1\n",
	} {
		if !strings.Contains(want, line) {
			t.Errorf("the script printed no %q:\n%s", line, want)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("output (-script +saved):\n%s", d)
	}
	if d := cmp.Diff(wantErr, gotErr); d != "" {
		t.Errorf("stderr (-script +saved):\n%s", d)
	}

	// Without a process to take as $target.
	stdout.Reset()
	stderr.Reset()
	if st := run([]string{"kdtrace", "-e", "-s", saved}, &stdout, &stderr); st != 1 || stderr.String() != "kdtrace: failed to load saved program: "+saved+" probes its target process's objects (pid$target): it runs with the process given by -c or -p\n" {
		t.Errorf("kdtrace -e -s %s: status %d, stderr %q", saved, st, stderr.String())
	}

	// A save refused after its processes were created kills them.
	stdout.Reset()
	stderr.Reset()
	refused := []string{"kdtrace", "-A", "-o", filepath.Join(dir, "x.dof"), "-c", demo, "-n", "pid$target:a.out:get:entry { trace($target + 1); }"}
	if st := run(refused, &stdout, &stderr); st != 1 || !strings.Contains(stderr.String(), "$target cannot be saved where it is compiled into a constant") {
		t.Errorf("kdtrace %q: status %d, stderr %q", refused, st, stderr.String())
	}
	noProcess(t, demo)

	// The program rebuilt: another build-id.
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("no gcc to rebuild the demo: %v", err)
	}
	const rebuiltID = "0123456789abcdef0123456789abcdef01234567"
	if out, err := exec.Command(gcc, "-O2", "-g", "-Wl,--build-id=0x"+rebuiltID, "-o", demo, filepath.Join(root, "demo.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	stdout.Reset()
	stderr.Reset()
	st := run([]string{"kdtrace", "-c", demo, "-s", saved}, &stdout, &stderr)
	mismatch := regexp.MustCompile(`^kdtrace: failed to load saved program: ` + regexp.QuoteMeta(saved) + ` was compiled for a\.out build-id ` + buildID(t, filepath.Join(root, "demo")) + `, but process \d+'s a\.out has build-id ` + rebuiltID + "\n$")
	if st != 1 || stdout.Len() != 0 || !mismatch.MatchString(stderr.String()) {
		t.Errorf("the rebuilt demo: status %d, stdout %q, stderr %q; want 1 and %q", st, stdout.String(), stderr.String(), mismatch)
	}
	noProcess(t, demo)
}

// buildID returns an ELF file's GNU build-id, hex.
func buildID(t *testing.T, file string) string {
	t.Helper()
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		t.Fatalf("%s has no build-id", file)
	}
	notes, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return noteID(t, notes)
}

// noProcess fails the test if a process runs the program at path: the
// ones kdtrace created must be gone when run returns.
func noProcess(t *testing.T, path string) {
	t.Helper()
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, exe := range exes {
		if target, err := os.Readlink(exe); err == nil && strings.TrimSuffix(target, " (deleted)") == path {
			t.Errorf("process %s runs %s still", filepath.Base(filepath.Dir(exe)), path)
		}
	}
}

// TestSavedPidGrabbed saves a program of pid and USDT probes against a
// process -A -c creates and runs it on one -p grabs: the probe
// descriptions of both providers take the grabbed process's pid, and
// the counts and sums are exact.
func TestSavedPidGrabbed(t *testing.T) {
	needTracing(t)
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		t.Skip("no <sys/sdt.h> (systemtap-sdt-dev)")
	}
	const n = 200
	dir := t.TempDir()
	bin := gcctest.Build(t, dir, "fix", fmt.Sprintf(userFixture, n))
	prog := fmt.Sprintf(`
BEGIN { printf("go\n"); }
pid$target:fix:f:entry /pid == $target/ { @e = count(); @a = sum(arg0); }
pid$target:fix:f:return { @r = count(); @v = sum(arg1); }
fix$target:::hit { @u = sum(arg1); }
fix$target:::hit /arg0 == %d/ { exit(0); }
END { printa("%%@d %%@d %%@d %%@d %%@d\n", @e, @a, @r, @v, @u); }`, n-1)
	saved := filepath.Join(dir, "fix.dof")
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-q", "-A", "-o", saved, "-c", bin, "-n", prog}, &stdout, &stderr); st != 0 {
		t.Fatalf("kdtrace -A: status %d: %s", st, stderr.String())
	}
	noProcess(t, bin)
	b, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	f, err := dof.Read(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Saved()
	if err != nil {
		t.Fatal(err)
	}
	// The pid and USDT clauses', not BEGIN's and END's; and the one
	// object they name.
	if d := cmp.Diff([]int{1, 2, 3, 4}, s.TargetProbes); d != "" {
		t.Errorf("target probes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]dof.BuildID{{Name: "fix", ID: buildID(t, bin)}}, s.Objects); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}

	fix, pid := startFixture(t, bin)
	out, errs, st := runActive(t, []string{"-p", fmt.Sprint(pid), "-s", saved}, func() {
		fix.Process.Signal(syscall.SIGUSR1)
	})
	if st != 0 {
		t.Fatalf("status %d: %s", st, errs)
	}
	sumI, total, sumT := 0, 0, 0
	for i := range n {
		sumI += i
		total += 2 * i
		sumT += total
	}
	if want := fmt.Sprintf("go\n%d %d %d %d %d\n\n", n, sumI, n, 2*sumI, sumT); out != want {
		t.Errorf("stdout %q, want %q (stderr %q)", out, want, errs)
	}
}
