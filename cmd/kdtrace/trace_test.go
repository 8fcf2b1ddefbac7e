package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"

	"github.com/kdtrace/kdtrace/internal/dtracetest"
)

// needTracing skips a test where this process cannot load BPF programs.
func needTracing(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("tracing needs root")
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Skipf("cannot lift the memlock limit: %v", err)
	}
}

// loadedPrograms counts the BPF programs this process holds: those
// kdtrace run in-process has loaded and not yet closed. (Counting the
// system's would count other tests' too: go test runs packages at once.)
func loadedPrograms(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if l, _ := os.Readlink("/proc/self/fd/" + fd.Name()); l == "anon_inode:bpf-prog" {
			n++
		}
	}
	return n
}

// TestTrace runs D programs and compares what kdtrace prints with what
// dtrace prints for them.
func TestTrace(t *testing.T) {
	needTracing(t)
	header := "CPU     ID                    FUNCTION:NAME\n"
	begin := "  0      1                           :BEGIN "
	tests := []struct {
		args           []string
		status         int
		stdout, stderr string
	}{
		{[]string{"-n", `BEGIN { printf("hi %d\n", 42); exit(0); }`}, 0,
			header + begin + "hi 42\n\n\n", "kdtrace: description 'BEGIN ' matched 1 probe\n"},
		{[]string{"-q", "-n", `BEGIN { exit(7); }`}, 7, "\n", ""},
		{[]string{"-n", `BEGIN { trace(1); trace("two"); trace((char)3); exit(0); }`}, 0,
			header + begin + "        1  two                                 3\n\n", "kdtrace: description 'BEGIN ' matched 1 probe\n"},
		{[]string{"-q", "-n", `BEGIN { x = 0; y = 1 / x; }`, "-n", `BEGIN { exit(0); }`}, 0, "\n",
			"kdtrace: error on enabled probe ID 1 (ID 1: dtrace:::BEGIN): divide-by-zero in action #2 at DIF offset 8\n"},
		{[]string{"-q", "-n", `BEGIN { @a["x"] = sum(3); @a["y"] = sum(1); @b = quantize(5); exit(0); }`}, 0,
			"\n  y                                                                 1\n  x                                                                 3\n\n" +
				"           value  ------------- Distribution ------------- count    \n" +
				"               2 |                                         0        \n" +
				"               4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n" +
				"               8 |                                         0        \n\n", ""},
		{[]string{"-q", "-n", `tick-10ms /i++ == 3/ { printf("%d\n", i); exit(0); }`}, 0, "4\n\n", ""},
		{[]string{"-q", "-n", `BEGIN { exit(0); } END { printf("end\n"); }`}, 0, "end\n\n", ""},
	}
	before := loadedPrograms(t)
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		st := run(append([]string{"kdtrace"}, tt.args...), &stdout, &stderr)
		if st != tt.status || stdout.String() != tt.stdout || stderr.String() != tt.stderr {
			t.Errorf("kdtrace %q: status %d, stdout %q, stderr %q;\nwant %d, %q, %q", tt.args, st, stdout.String(), stderr.String(), tt.status, tt.stdout, tt.stderr)
		}
	}
	checkReleased(t, before)
}

// runActive runs kdtrace with args, a program whose BEGIN prints "go"
// alone on a line, calls active once that line is printed (the tracing
// is then active), and returns what kdtrace printed and its status. It
// fails the test if kdtrace has not stopped after a minute.
func runActive(t *testing.T, args []string, active func()) (stdout, stderr string, status int) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan int)
	var errs strings.Builder
	go func() {
		done <- run(append([]string{"kdtrace"}, args...), pw, &errs)
		pw.Close()
	}()
	var out strings.Builder
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Fprintln(&out, sc.Text())
			if sc.Text() == "go" {
				active()
			}
		}
	}()
	select {
	case status = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("kdtrace did not stop")
	}
	<-read
	return out.String(), errs.String(), status
}

// TestTraceSyscalls counts this process's getppid calls through the
// syscall provider, stopped by SIGINT as a user would.
func TestTraceSyscalls(t *testing.T) {
	needTracing(t)
	const n = 1000
	before := loadedPrograms(t)
	prog := fmt.Sprintf(`BEGIN { printf("go\n"); } syscall::getppid:entry /pid == %d/ { @n = count(); }`, os.Getpid())
	out, errs, st := runActive(t, []string{"-q", "-n", prog}, func() {
		for range n {
			syscall.Getppid()
		}
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	})
	if want := fmt.Sprintf("go\n\n%17d\n", n); st != 0 || out != want {
		t.Errorf("status %d, stdout %q, want 0 and %q (stderr %q)", st, out, want, errs)
	}
	checkReleased(t, before)
}

// checkReleased checks that this process holds as many BPF programs as
// before.
func checkReleased(t *testing.T, before int) {
	t.Helper()
	if after := loadedPrograms(t); after != before {
		t.Errorf("%d BPF programs held before the run, %d after", before, after)
	}
}

// TestSuiteBEGIN runs the DTrace suite's tests that need no other probe
// than dtrace's and the profile provider's timers, as its harness runs
// them (dtrace -C -s tst.X.d in the test's folder), and compares their
// output with the expected output byte for byte.
func TestSuiteBEGIN(t *testing.T) {
	needTracing(t)
	if testing.Short() {
		t.Skip("the suite takes a minute")
	}
	if dtracetest.Race {
		// Minutes more, for no goroutine the other tests do not run.
		t.Skip("the suite's programs run without the race detector")
	}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	// A watchdog's SIGINT that comes as a run ends must not kill the
	// test: this channel takes it then.
	absorb := make(chan os.Signal, 1)
	signal.Notify(absorb, os.Interrupt)
	defer signal.Stop(absorb)
	pass, total := 0, 0
	var fails []string
	for _, d := range dtracetest.Files(t, "tst.*.d") {
		out := d + ".out"
		want, err := os.ReadFile(out)
		if err != nil || dtracetest.NeedsHelper(d) {
			continue
		}
		src, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		if otherProbes.Match(src) {
			continue
		}
		total++
		if err := os.Chdir(filepath.Dir(d)); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		// As the harness's timeout: a program that never exits is
		// stopped, as by ^C, and fails.
		watchdog := time.AfterFunc(suiteTimeout, func() { syscall.Kill(os.Getpid(), syscall.SIGINT) })
		st := run([]string{"kdtrace", "-C", "-s", filepath.Base(d)}, &stdout, &stderr)
		if !watchdog.Stop() {
			fails = append(fails, fmt.Sprintf("%s: stopped after %v", dtracetest.Rel(t, d), suiteTimeout))
			continue
		}
		if st == 0 && bytes.Equal(stdout.Bytes(), want) {
			pass++
			continue
		}
		first, _, _ := strings.Cut(stderr.String(), "\n")
		fails = append(fails, fmt.Sprintf("%s: status %d: %s", dtracetest.Rel(t, d), st, first))
	}
	t.Logf("%d of %d pass; failures:\n%s", pass, total, strings.Join(fails, "\n"))
	// What passes today; a regression lowers it.
	if pass < minSuiteBEGIN {
		t.Errorf("%d of %d of the suite's BEGIN and tick tests pass, want at least %d", pass, total, minSuiteBEGIN)
	}
}

// otherProbes finds a test that enables other probes than dtrace's and
// the timers.
var otherProbes = regexp.MustCompile(`syscall|fbt|pid|proc:|sched:|io:|profile-|lockstat|sdt|usdt|\$target`)

// suiteTimeout is how long a suite program may run.
const suiteTimeout = 20 * time.Second

// minSuiteBEGIN is how many of the suite's BEGIN and tick tests pass.
const minSuiteBEGIN = 160

// TestTraceSDT counts the runs of a program through proc:::exec-success,
// which kdtrace makes from the sched_process_exec tracepoint, and its
// system calls' returns through a syscall tracepoint site.
func TestTraceSDT(t *testing.T) {
	needTracing(t)
	const n = 3
	bin := filepath.Join(t.TempDir(), "kdsdt-true")
	b, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	prog := `BEGIN { printf("go\n"); }
proc:::exec-success /execname == "kdsdt-true"/ { @e = count(); }
proc:::exit /execname == "kdsdt-true"/ { @x = sum(args[0]); }`
	out, errs, st := runActive(t, []string{"-q", "-n", prog}, func() {
		for range n {
			exec.Command(bin).Run()
		}
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	})
	// proc:::exit's args[0] is CLD_EXITED, 1, for each.
	if want := fmt.Sprintf("go\n\n%17d\n%17d\n", n, n); st != 0 || out != want {
		t.Errorf("status %d, stdout %q, want 0 and %q (stderr %q)", st, out, want, errs)
	}
}
