package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/dtracetest"
	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// calls is a program that calls f and getppid as many times as its
// first argument says, then sleeps as many seconds as its second.
const calls = `#include <stdlib.h>
#include <unistd.h>
__attribute__((noinline)) int f(int x) { return x * 3 + 1; }
int main(int argc, char **argv) {
	int n = atoi(argv[1]), s = 0;
	for (int i = 0; i < n; i++) { s += f(i); getppid(); }
	if (argc > 2) sleep(atoi(argv[2]));
	return s == -1;
}
`

// children returns the processes whose parent is this process.
func children(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// noChildren checks that kdtrace left no process it created behind,
// running, stopped or unreaped.
func noChildren(t *testing.T, args []string) {
	t.Helper()
	if c := children(t); len(c) != 0 {
		t.Errorf("kdtrace %q left processes %v", args, c)
	}
}

// TestCreateErrors checks -c and -p's errors, and that a command that
// never runs is killed: when compiling fails, and with -e.
func TestCreateErrors(t *testing.T) {
	tests := []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"-c", "/nonexistent/prog arg", "-n", "BEGIN { }"}, 1, "kdtrace: failed to execute /nonexistent/prog: No such file or directory\n"},
		{[]string{"-x", "evaltime=never", "-c", "sleep 100", "-n", "BEGIN { }"}, 1, "kdtrace: failed to set -x evaltime: Invalid value for specified option\n"},
		{[]string{"-c", "sleep 100", "-n", "BEGIN { x = ; }"}, 1, "kdtrace: invalid probe specifier BEGIN { x = ; }: syntax error near \";\"\n"},
		{[]string{"-c", "sleep 100", "-e", "-n", "BEGIN { }"}, 0, ""},
		{[]string{"-c", "sleep 100", "-c", "sleep 100", "-e", "-n", "pid$target:libc.so.6:getppid:entry { }"}, 0, ""},
		{[]string{"-p", "x1", "-n", "BEGIN { }"}, 1, "kdtrace: invalid pid: x1\n"},
		// With a target process, %A takes an integer: the checker knows
		// of the target.
		{[]string{"-c", "sleep 100", "-e", "-n", "BEGIN { @[0] = count(); printa(\"%A %@d\\n\", @); }"}, 0, ""},
		{[]string{"-e", "-n", "BEGIN { @[0] = count(); printa(\"%A %@d\\n\", @); }"}, 1, "kdtrace: invalid probe specifier BEGIN { @[0] = count(); printa(\"%A %@d\\n\", @); }: in action list: printa( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %A\n\t prototype: pointer or integer (with -p/-c) or _usymaddr (without -p/-c)\n\t  argument: int\n"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		st := run(append([]string{"kdtrace"}, tt.args...), &stdout, &stderr)
		if st != tt.status || stderr.String() != tt.stderr {
			t.Errorf("kdtrace %q: status %d, stderr %q; want %d, %q", tt.args, st, stderr.String(), tt.status, tt.stderr)
		}
		noChildren(t, tt.args)
	}
}

// TestCreate runs commands under -c: kdtrace stops when they exit,
// with dtrace's notice, and counts exactly what they do from their
// first instruction, through the pid provider in the program and in
// libc, and through the syscall provider.
func TestCreate(t *testing.T) {
	needTracing(t)
	dir := t.TempDir()
	bin := gcctest.Build(t, dir, "calls", calls)
	killed := gcctest.Build(t, dir, "killed", "#include <signal.h>\nint main(void) { raise(SIGKILL); return 0; }\n")
	const n = 1234
	cmd := fmt.Sprintf("%s %d", bin, n)
	exited := `kdtrace: pid \d+ has exited\n`
	matched := func(what string, probes int) string {
		return regexp.QuoteMeta(fmt.Sprintf("kdtrace: description '%s' matched %d probe", what, probes))
	}
	count := fmt.Sprintf("\n%17d\n", n)
	tests := []struct {
		args           []string
		stdout, stderr string // stderr: a regular expression
	}{
		{[]string{"-c", "true", "-n", "BEGIN { }"},
			"CPU     ID                    FUNCTION:NAME\n  0      1                           :BEGIN \n\n",
			"^" + matched("BEGIN ", 1) + "\n" + exited + "$"},
		{[]string{"-q", "-c", "true", "-n", "BEGIN { }"}, "\n", "^$"},
		{[]string{"-c", "false", "-q", "-n", "BEGIN { }"}, "\n", "^$"},
		{[]string{"-c", "false", "-n", "tick-1h { }"}, "\n", "^" + matched("tick-1h ", 1) + "\n" + `kdtrace: pid \d+ exited with status 1\n$`},
		{[]string{"-c", killed, "-n", "tick-1h { }"}, "\n", "^" + matched("tick-1h ", 1) + "\n" + `kdtrace: pid \d+ terminated by SIGKILL\n$`},
		{[]string{"-c", cmd, "-n", "pid$target:a.out:f:entry { @ = count(); }"}, count,
			"^" + matched("pid$target:a.out:f:entry ", 1) + "\n" + exited + "$"},
		{[]string{"-q", "-c", cmd, "-n", "pid$target:libc.so.6:getppid:entry { @ = count(); }"}, count, "^$"},
		{[]string{"-q", "-c", cmd, "-n", "syscall::getppid:entry /pid == $target/ { @ = count(); }"}, count, "^$"},
		// At exec only the program and the dynamic linker are mapped:
		// the program's probes can be made.
		{[]string{"-q", "-x", "evaltime=exec", "-c", cmd, "-n", "pid$target:a.out:f:entry { @ = count(); }"}, count, "^$"},
		{[]string{"-q", "-x", "evaltime=main", "-c", cmd, "-n", "pid$target:a.out:main:entry { @ = count(); } pid$target:a.out:f:entry { @f = count(); }"},
			fmt.Sprintf("\n%17d\n%17d\n", 1, n), "^$"},
		// Several commands: kdtrace stops when the last one exits.
		{[]string{"-q", "-c", "sleep 0.5", "-c", cmd, "-n", "pid$target:a.out:f:entry { @ = count(); }"}, count, "^$"},
		// END fires, and the aggregations print, when the command exits.
		{[]string{"-q", "-c", cmd, "-n", "pid$target:a.out:f:entry { @ = count(); } END { printf(\"end\\n\"); }"}, "end\n" + count, "^$"},
	}
	before := loadedPrograms(t)
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		st := run(append([]string{"kdtrace"}, tt.args...), &stdout, &stderr)
		if st != 0 || stdout.String() != tt.stdout || !regexp.MustCompile(tt.stderr).MatchString(stderr.String()) {
			t.Errorf("kdtrace %q: status %d, stdout %q, stderr %q;\nwant 0, %q, %q", tt.args, st, stdout.String(), stderr.String(), tt.stdout, tt.stderr)
		}
		noChildren(t, tt.args)
	}
	checkReleased(t, before)
}

// TestCreateKilled checks that a command still running when a clause
// calls exit() is killed and reaped, as is one still running on
// SIGTERM.
func TestCreateKilled(t *testing.T) {
	needTracing(t)
	bin := gcctest.Build(t, t.TempDir(), "calls", calls)
	for _, prog := range []string{
		`BEGIN { printf("%d\n", $target); } pid$target:a.out:f:entry { @ = count(); } tick-100ms { exit(0); }`,
		// tick runs in kdtrace: this is SIGTERM to kdtrace.
		`BEGIN { printf("%d\n", $target); } pid$target:a.out:f:entry { @ = count(); } tick-100ms { raise(SIGTERM); }`,
	} {
		var stdout, stderr bytes.Buffer
		args := []string{"kdtrace", "-q", "-w", "-c", bin + " 10 100", "-n", prog}
		start := time.Now()
		st := run(args, &stdout, &stderr)
		took := time.Since(start)
		pid, _, _ := strings.Cut(stdout.String(), "\n")
		if st != 0 || stdout.String() != pid+"\n\n               10\n" || stderr.String() != "" {
			t.Errorf("kdtrace %q: status %d, stdout %q, stderr %q", args, st, stdout.String(), stderr.String())
		}
		if took > 20*time.Second {
			t.Errorf("kdtrace %q took %v", args, took)
		}
		if _, err := os.Stat("/proc/" + pid); err == nil {
			t.Errorf("process %s is still there after kdtrace", pid)
		}
		noChildren(t, args)
	}
}

// TestGrab checks that kdtrace -p stops when the process exits, which
// it does not kill.
func TestGrab(t *testing.T) {
	needTracing(t)
	sleep := exec.Command("sleep", "1")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	var stdout, stderr bytes.Buffer
	args := []string{"kdtrace", "-p", strconv.Itoa(sleep.Process.Pid), "-n", "tick-1h { }"}
	st := run(args, &stdout, &stderr)
	took := time.Since(started)
	if err := sleep.Wait(); err != nil {
		t.Errorf("sleep: %v (killed?)", err)
	}
	want := fmt.Sprintf("kdtrace: description 'tick-1h ' matched 1 probe\nkdtrace: pid %d has exited\n", sleep.Process.Pid)
	if st != 0 || stdout.String() != "\n" || stderr.String() != want {
		t.Errorf("kdtrace %q: status %d, stdout %q, stderr %q; want 0, %q, %q", args, st, stdout.String(), stderr.String(), "\n", want)
	}
	if took < 900*time.Millisecond || took > 10*time.Second {
		t.Errorf("kdtrace -p of sleep 1 returned after %v", took)
	}
}

// TestSuiteProcesses runs the DTrace suite's shell tests of -c's
// environment (-x setenv, -x unsetenv) and of killing a created
// process when compiling fails, as its harness runs them: ksh
// tst.X.ksh with the path of a command named dtrace, status 0 and the
// standard output as the .out file says. (tst.ld_nolazyload.ksh checks
// that the command gets LD_NOLAZYLOAD=1, as dtrace gives it.)
func TestSuiteProcesses(t *testing.T) {
	needTracing(t)
	ksh, err := exec.LookPath("ksh")
	if err != nil {
		t.Skip("no ksh")
	}
	bin := build(t, "dtrace")
	dir := dtracetest.Dir(t)
	for _, name := range []string{
		"env/tst.setenv1.ksh", "env/tst.setenv2.ksh", "env/tst.setenv3.ksh",
		"env/tst.unsetenv1.ksh", "env/tst.unsetenv2.ksh", "env/tst.ld_nolazyload.ksh",
		"pid/tst.killonerror.ksh",
	} {
		file := filepath.Join(dir, name)
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(ksh, filepath.Base(file), bin)
		cmd.Dir = filepath.Dir(file)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		want, rerr := os.ReadFile(file + ".out")
		if err != nil || rerr == nil && stdout.String() != string(want) {
			t.Errorf("%s: %v; stdout %q, want %q; stderr %q", name, err, stdout.String(), want, stderr.String())
		}
	}
}

// build builds kdtrace into a temporary directory under name.
func build(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	if b, err := exec.Command(gobin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return bin
}

// TestCreateKill9 checks that the command kdtrace created dies with
// kdtrace, even when kdtrace is killed with SIGKILL, as dtrace's do.
func TestCreateKill9(t *testing.T) {
	needTracing(t)
	bin := build(t, "kdtrace")
	cmd := exec.Command(bin, "-q", "-c", "sleep 100", "-n", `BEGIN { printf("%d\n", $target); }`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("reading $target: %v", err)
	}
	pid := strings.TrimSpace(line)
	cmd.Process.Kill()
	cmd.Wait()
	// Orphaned, it is reaped by init once it dies.
	for range 100 {
		if !running(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("process %s created by kdtrace still runs after kdtrace was killed", pid)
}

// running reports whether process pid exists and is not a zombie.
func running(pid string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestPIDRefusedWarning checks that a pid description whose glob names
// a function uprobes cannot probe at its first instruction compiles,
// without it, with dtrace's warning on stderr.
func TestPIDRefusedWarning(t *testing.T) {
	needTracing(t)
	bin := gcctest.Build(t, t.TempDir(), "locked", gcctest.LockedEntry)
	args := []string{"kdtrace", "-e", "-c", bin, "-n", "pid$target:a.out:lock*:entry { @ = count(); }"}
	var stdout, stderr bytes.Buffer
	st := run(args, &stdout, &stderr)
	if want := ":locked:lock*:entry: function locked left out: uprobes refuse its first instruction (a lock or segment prefix, or a system call)\n"; st != 0 || !strings.HasPrefix(stderr.String(), "kdtrace: warning: pid") || !strings.HasSuffix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("%q: status %d, stderr %q; want 0 and one warning ending %q", args, st, stderr.String(), want)
	}
	noChildren(t, args)
}

// TestPIDLibcEntries puts an entry probe on every function of the
// system's libc, a library nobody here wrote: the run attaches what
// uprobes take (glibc's pthread_spin_lock starts with a lock prefix
// they refuse), counts /bin/true's calls, and warns at most once.
func TestPIDLibcEntries(t *testing.T) {
	needTracing(t)
	args := []string{"kdtrace", "-q", "-n", `pid$target:libc.so.6::entry { @ = count(); } END { printa("%@d\n", @); }`, "-c", "/bin/true"}
	var stdout, stderr bytes.Buffer
	st := run(args, &stdout, &stderr)
	n, err := strconv.Atoi(strings.TrimSpace(stdout.String()))
	if st != 0 || err != nil || n <= 0 || strings.Count(stderr.String(), "\n") > 1 {
		t.Errorf("%q: status %d, stdout %q, stderr %q; want 0, a count of calls and at most one warning", args, st, stdout.String(), stderr.String())
	}
	noChildren(t, args)
}
