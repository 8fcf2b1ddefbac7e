package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nobody is the user the unprivileged tests run kdtrace as.
const nobody = "65534"

// unprivileged returns a function that runs kdtrace as nobody, less
// the setpriv options extra gives, with a copy of the test binary (see
// TestMain) where nobody can run it. It skips the test where setpriv
// is missing or the test cannot change user.
func unprivileged(t *testing.T, extra ...string) func(args ...string) (stdout, stderr string, status int) {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("running kdtrace as another user needs root")
	}
	setpriv, bin := nobodyBinary(t)
	prefix := append([]string{"--reuid=" + nobody, "--regid=" + nobody, "--clear-groups"}, extra...)
	return func(args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(setpriv, append(append(prefix, bin), args...)...)
		cmd.Env = append(os.Environ(), "KDTRACE_TEST_MAIN=1")
		cmd.Dir = "/"
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("setpriv %q: %v", args, err)
		}
		return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
	}
}

// nobodyBinary returns setpriv's path and that of a copy of the test
// binary where nobody can run it; it skips the test where setpriv is
// missing.
func nobodyBinary(t *testing.T) (setpriv, bin string) {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	dir, err := os.MkdirTemp("", "kdtrace-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin = filepath.Join(dir, "kdtrace")
	if err := copyFile(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return setpriv, bin
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// TestUnprivileged runs kdtrace as nobody: a run that would trace is
// refused at once, with dtrace's one message and status, whatever else
// it asks (a process to create, a probe that does not exist); -e, -d
// and -l give what they give root.
func TestUnprivileged(t *testing.T) {
	asNobody := unprivileged(t)
	const refused = "kdtrace: failed to initialize dtrace: DTrace requires additional privileges: tracing needs root, or the capabilities CAP_BPF and CAP_PERFMON\n"
	for _, args := range [][]string{
		{"-n", "BEGIN { exit(0); }"},
		{"-n", "syscall::read:entry"},
		{"-n", "syscall::nosuchcall:entry"},
		{"-q", "-c", "/bin/true", "-n", "syscall::read:entry"},
		{"-p", "1", "-n", "BEGIN"},
		{"-w", "-n", "BEGIN { raise(9); }"},
	} {
		stdout, stderr, status := asNobody(args...)
		if status != 1 || stdout != "" || stderr != refused {
			t.Errorf("kdtrace %q as nobody: status %d, stdout %q, stderr %q; want 1, nothing and %q", args, status, stdout, stderr, refused)
		}
	}
	for _, args := range [][]string{
		{"-e", "-n", "syscall::read:entry { @[execname] = count(); }"},
		{"-d", "-e", "-n", "syscall::read:entry /pid == $1/ { @[execname] = count(); }", "42"},
		{"-l", "-n", "syscall::read:", "-n", "BEGIN", "-n", "sched:::on-cpu"},
		{"-lv", "-n", "syscall::openat:entry"},
		{"-e", "-n", "syscall::nosuchcall:entry"},
	} {
		var wantOut, wantErr bytes.Buffer
		wantStatus := run(append([]string{"kdtrace"}, args...), &wantOut, &wantErr)
		stdout, stderr, status := asNobody(args...)
		if status != wantStatus || stdout != wantOut.String() || stderr != wantErr.String() {
			t.Errorf("kdtrace %q as nobody: status %d, stderr %q, stdout (-root +nobody):\n%s\nwant status %d, stderr %q",
				args, status, stderr, cmp.Diff(wantOut.String(), stdout), wantStatus, wantErr.String())
		}
	}
}

// TestCapabilitiesSuffice runs kdtrace as nobody with only CAP_BPF and
// CAP_PERFMON, which is all that tracing asks of Linux since 5.8: it
// traces, and without CAP_PERFMON it is refused.
func TestCapabilitiesSuffice(t *testing.T) {
	needTracing(t)
	caps := unprivileged(t, "--inh-caps=+bpf,+perfmon", "--ambient-caps=+bpf,+perfmon")
	args := []string{"-q", "-n", "BEGIN { printf(\"%d\\n\", 6 * 7); exit(0); }"}
	var want bytes.Buffer
	if st := run(append([]string{"kdtrace"}, args...), &want, io.Discard); st != 0 {
		t.Fatalf("kdtrace %q as root: status %d", args, st)
	}
	stdout, stderr, status := caps(args...)
	if status != 0 || stdout != want.String() {
		t.Errorf("kdtrace with CAP_BPF and CAP_PERFMON: status %d, stdout %q, stderr %q; want 0 and %q", status, stdout, stderr, want.String())
	}
	bpfOnly := unprivileged(t, "--inh-caps=+bpf", "--ambient-caps=+bpf")
	if _, stderr, status := bpfOnly("-q", "-n", "BEGIN { exit(0); }"); status != 1 || !bytes.Contains([]byte(stderr), []byte("requires additional privileges")) {
		t.Errorf("kdtrace with CAP_BPF alone: status %d, stderr %q; want 1 and the privileges message", status, stderr)
	}
}

// TestListIDsUnprivileged lists every probe as root and as nobody, in a
// mount namespace of their own where tracefs is mounted (as it is on
// most systems, readable by root alone): nobody lists every probe root
// lists, with the same ID, but the sdt and rawtp probes. (Before, root listed the system calls of
// tracefs's tracepoints and nobody those of the kernel's handlers, and
// every ID after them differed.)
func TestListIDsUnprivileged(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("listing as another user, in a mount namespace, needs root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	setpriv, bin := nobodyBinary(t)
	out := t.TempDir()
	asRoot, asNobody := filepath.Join(out, "root"), filepath.Join(out, "nobody")
	script := `mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing || exit 99
"$1" -l >"$3" && "$2" --reuid=` + nobody + ` --regid=` + nobody + ` --clear-groups "$1" -l >"$4"`
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", "sh", "-c", script, "sh", bin, setpriv, asRoot, asNobody)
	cmd.Env = append(os.Environ(), "KDTRACE_TEST_MAIN=1")
	cmd.Dir = "/"
	if b, err := cmd.CombinedOutput(); cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 99 {
		t.Skipf("tracefs cannot be mounted: %s", b)
	} else if err != nil {
		t.Fatalf("kdtrace -l as root and as nobody: %v: %s", err, b)
	}
	ids := func(file string) map[string]string {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			if f := strings.Fields(line); len(f) >= 4 {
				m[strings.Join(f[1:], ":")] = f[0]
			}
		}
		return m
	}
	root, other := ids(asRoot), ids(asNobody)
	if len(root) < 100 {
		t.Fatalf("root lists %d probes", len(root))
	}
	bad := 0
	for d, id := range root {
		if pv, _, _ := strings.Cut(d, ":"); pv == "sdt" || pv == "rawtp" {
			// Made of the events tracefs lists to root alone; they
			// are the table's last providers, so that no other
			// probe's ID depends on them.
			continue
		}
		if other[d] != id {
			if bad++; bad <= 10 {
				t.Errorf("%s: ID %s as root, %q as nobody", d, id, other[d])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of root's %d probes have another ID as nobody", bad, len(root))
	}
}
