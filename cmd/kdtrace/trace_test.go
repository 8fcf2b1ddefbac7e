package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"

	"github.com/kdtrace/kdtrace/internal/linux/attach"
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
	return openFiles(t, "anon_inode:bpf-prog")
}

// perfEvents counts the perf events this process holds open.
func perfEvents(t *testing.T) int {
	t.Helper()
	return openFiles(t, "anon_inode:[perf_event]")
}

// labeled returns the number on out's line "name N", 0 if it has none:
// how the tests' scripts print their counts.
func labeled(out, name string) int64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\d+)$`).FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// openFiles counts this process's descriptors whose link reads link.
func openFiles(t *testing.T, link string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if l, _ := os.Readlink("/proc/self/fd/" + fd.Name()); l == link {
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
	// BEGIN runs in this process: its name, as the kernel keeps it.
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args           []string
		status         int
		stdout, stderr string
	}{
		{[]string{"-n", `BEGIN { printf("hi %d\n", 42); exit(0); }`}, 0,
			header + begin + "hi 42\n\n\n", "kdtrace: description 'BEGIN ' matched 1 probe\n"},
		{[]string{"-q", "-n", `BEGIN { exit(7); }`}, 7, "\n", ""},
		// An lquantize() of 5002 buckets is over a per-CPU map
		// entry's 32 KiB: the CPUs share its entries.
		{[]string{"-q", "-n", `BEGIN { @ = lquantize(7, 0, 5000, 1); @ = lquantize(7, 0, 5000, 1); exit(0); }`}, 0,
			"\n\n           value  ------------- Distribution ------------- count    \n" +
				"               6 |                                         0        \n" +
				"               7 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 2        \n" +
				"               8 |                                         0        \n\n", ""},
		// The aggregation's key is made where the printf's last
		// record ends (dtrace_ecb_resize's aggbase); the record keeps
		// its value.
		{[]string{"-q", "-n", `BEGIN { printf("%d %d\n", 7, 3); @c = sum(5); exit(0); }`}, 0, "7 3\n\n                5\n", ""},
		// BEGIN runs in kdtrace, which descends from init and from
		// itself, not from a process that cannot be.
		{[]string{"-q", "-n", `BEGIN { printf("%d %d %d\n", progenyof($pid), progenyof(1), progenyof(-1)); exit(0); }`}, 0, "1 1 0\n\n", ""},
		// -i names a probe by its ID: 1 is BEGIN, as in dtrace.
		{[]string{"-q", "-i", `1 { printf("one"); exit(0); }`}, 0, "one\n", ""},
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
		// Translators that translate again in their members, four
		// deep, under sums that hold registers: each level's input
		// waits in a spill slot rather than a register.
		{[]string{"-q", "-n", nestedXlate}, 0, "11117 111\n\n", ""},
		// %s takes the kernel's char arrays, whose char is unsigned
		// (-funsigned-char), as dtrace takes char [].
		{[]string{"-q", "-n", `BEGIN { printf("%s|%s\n", curthread->comm, execname); exit(0); }`}, 0, strings.TrimSuffix(string(comm), "\n") + "|" + strings.TrimSuffix(string(comm), "\n") + "\n\n", ""},
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

// nestedXlate translates a chain of four structs, each translator
// translating the next in its member's expression, as io.d's fileinfo_t
// translators do from a request through its bio and page to the file.
const nestedXlate = `struct n4 { int v; };
struct n3 { struct n4 *p; int w; };
struct n2 { struct n3 *p; int w; };
struct n1 { struct n2 *p; int w; };
typedef struct t { int v; } t_t;
translator t_t < struct n4 *P > { v = P == NULL || P->v == 0 || P->v == 99 ? -1 : P->v + 1; };
translator t_t < struct n3 *P > { v = P == NULL || P->w == 0 ? -1 : xlate <t_t> (P->p).v + P->w; };
translator t_t < struct n2 *P > { v = P == NULL || P->w == 0 ? -1 : xlate <t_t> (P->p).v + P->w; };
translator t_t < struct n1 *P > { v = P == NULL || P->w == 0 ? -1 : xlate <t_t> (P->p).v + P->w; };
BEGIN {
	this->a = (struct n1 *)alloca(sizeof (struct n1));
	this->a->p = (struct n2 *)alloca(sizeof (struct n2));
	this->a->p->p = (struct n3 *)alloca(sizeof (struct n3));
	this->a->p->p->p = (struct n4 *)alloca(sizeof (struct n4));
	this->a->w = 10000;
	this->a->p->w = 1000;
	this->a->p->p->w = 100;
	this->a->p->p->p->v = 10;
	printf("%d %d\n", 1 + (2 + (3 + xlate <t_t> (this->a).v)), xlate <t_t> (this->a->p->p).v);
	exit(0);
}`

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

// TestTraceExitAtOnce calls exit() from a probe with the buffers read
// once an hour: the run must still end, with the clause's output, as
// the status is read apart from the buffers.
func TestTraceExitAtOnce(t *testing.T) {
	needTracing(t)
	// A close of no file, which nothing but the test makes, once the
	// tracing is active and its first reading of the buffers done:
	// the output of BEGIN is printed before that reading, which sees
	// any exit() called by then.
	const fd = 987654
	prog := fmt.Sprintf(`BEGIN { printf("go\n"); } syscall::close:entry /pid == %d && arg0 == %d/ { printf("exit\n"); exit(3); }`, os.Getpid(), fd)
	out, errs, st := runActive(t, []string{"-q", "-x", "switchrate=1h", "-n", prog}, func() {
		time.Sleep(300 * time.Millisecond)
		syscall.Close(fd)
	})
	if want := "go\nexit\n\n"; st != 3 || out != want {
		t.Errorf("status %d, stdout %q, want 3 and %q (stderr %q)", st, out, want, errs)
	}
}

// checkReleased checks that this process holds as many BPF programs as
// before.
func checkReleased(t *testing.T, before int) {
	t.Helper()
	if after := loadedPrograms(t); after != before {
		t.Errorf("%d BPF programs held before the run, %d after", before, after)
	}
}

// TestTraceSDT counts the runs of a program through proc:::exec-success,
// which kdtrace makes from the sched_process_exec tracepoint, and its
// system calls' returns through a syscall tracepoint site; once with the
// program's name in the clauses, once as a macro argument, which the
// provider's own D for its sites must not take as its own.
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
	const prog = `BEGIN { printf("go\n"); }
proc:::exec-success /execname == NAME/ { @e = count(); }
proc:::exit /execname == NAME/ { @x = sum(args[0]); }`
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"literal", []string{"-q", "-n", strings.ReplaceAll(prog, "NAME", `"kdsdt-true"`)}},
		{"macro", []string{"-q", "-n", strings.ReplaceAll(prog, "NAME", "$$1"), "kdsdt-true"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, st := runActive(t, tt.args, func() {
				for range n {
					exec.Command(bin).Run()
				}
				syscall.Kill(os.Getpid(), syscall.SIGINT)
			})
			// proc:::exit's args[0] is CLD_EXITED, 1, for each.
			if want := fmt.Sprintf("go\n\n%17d\n%17d\n", n, n); st != 0 || out != want {
				t.Errorf("status %d, stdout %q, want 0 and %q (stderr %q)", st, out, want, errs)
			}
		})
	}
}

// noKernelFunctions skips the test, saying why, unless this kernel can
// put no probe at a kernel function: it refuses BPF trampolines and has
// no kprobes. It returns the reasons of both.
func noKernelFunctions(t *testing.T, why string) (*attach.KprobesError, error) {
	t.Helper()
	terr, kerr := attach.HaveTrampolines(), attach.HaveKprobes()
	if terr == nil || kerr == nil {
		t.Skip(why)
	}
	var ke *attach.KprobesError
	if !errors.As(kerr, &ke) {
		t.Fatalf("HaveKprobes = %v, want a *KprobesError", kerr)
	}
	return ke, terr
}

// TestFbtImpossible checks that on a kernel with neither BPF
// trampolines nor kprobes an fbt probe is refused in one sentence that
// names both, and leaves nothing loaded.
func TestFbtImpossible(t *testing.T) {
	needTracing(t)
	ke, terr := noKernelFunctions(t, "this kernel has BPF trampolines or kprobes for fbt")
	before := loadedPrograms(t)
	var stdout, stderr bytes.Buffer
	st := run([]string{"kdtrace", "-n", "fbt::vfs_read:entry { exit(0); }"}, &stdout, &stderr)
	want := fmt.Sprintf("kdtrace: could not enable tracing: this kernel cannot put fbt probes in place: it has no BPF trampolines (%v), and %s\n", terr, ke.Reason)
	if st != 1 || stderr.String() != want {
		t.Errorf("status %d, stderr %q; want 1, %q", st, stderr.String(), want)
	}
	if after := loadedPrograms(t); after != before {
		t.Errorf("%d BPF programs held before the run, %d after", before, after)
	}
}

// TestGlobLeavesOutFunctions checks that on a kernel that can put no
// probe at a kernel function, a glob over the sched and lockstat
// providers traces the probes made of tracepoints and leaves out, with
// one warning each, those at functions (sched:::tick, lockstat's
// acquire and release), while naming such a probe alone is refused.
func TestGlobLeavesOutFunctions(t *testing.T) {
	needTracing(t)
	ke, terr := noKernelFunctions(t, "this kernel has BPF trampolines or kprobes: every probe of a glob is traced")
	why := fmt.Sprintf("this kernel cannot put them in place: it has no BPF trampolines (%v), and %s", terr, ke.Reason)
	tests := []struct {
		desc     string
		status   int
		stderr   string
		contains string // for a refusal, what stderr holds
	}{
		{"sched:::", 0, "kdtrace: warning: description 'sched:::' leaves out 3 probes at kernel functions (sched:vmlinux::dequeue): " + why + "\n", ""},
		{"lockstat:::*-acquire", 0, "kdtrace: warning: description 'lockstat:::*-acquire' leaves out 3 probes at kernel functions (lockstat:vmlinux::adaptive-acquire): " + why + "\n", ""},
		{"sched:::on-cpu", 0, "", ""},
		{"sched:::tick", 1, "", "this kernel cannot put sched:vmlinux::tick at sched_tick() in place"},
	}
	before := loadedPrograms(t)
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		st := run([]string{"kdtrace", "-q", "-n", tt.desc + " { }", "-n", "BEGIN { exit(0); }"}, &stdout, &stderr)
		if st != tt.status {
			t.Errorf("%s: status %d; want %d (stderr %q)", tt.desc, st, tt.status, stderr.String())
		}
		if tt.contains != "" {
			if !strings.Contains(stderr.String(), tt.contains) {
				t.Errorf("%s: stderr %q; want it to hold %q", tt.desc, stderr.String(), tt.contains)
			}
		} else if stderr.String() != tt.stderr {
			t.Errorf("%s: stderr %q; want %q", tt.desc, stderr.String(), tt.stderr)
		}
	}
	if after := loadedPrograms(t); after != before {
		t.Errorf("%d BPF programs held before the runs, %d after", before, after)
	}
}

// TestTraceFill checks dtrace's fill buffer policy: once a CPU's buffer
// is full its firings are dropped and the tracing ends, END's record
// printed in the room kept for it.
func TestTraceFill(t *testing.T) {
	needTracing(t)
	// Each firing is a 12-byte header and an 8-byte value at 16: 24
	// bytes, aligned to 8. 80 bytes hold three, less END's 24+8.
	prog := `tick-10ms { printf("%d\n", i++); } END { printf("end %d\n", i > 2); }`
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-q", "-x", "bufpolicy=fill", "-x", "bufsize=80", "-n", prog}, &stdout, &stderr); st != 0 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	if want := "0\n1\nend 1\n\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	if !regexp.MustCompile(`^(kdtrace: [0-9]+ drops? on CPU [0-9]+\n)+$`).MatchString(stderr.String()) {
		t.Errorf("stderr %q, want drops reported", stderr.String())
	}
}

// TestTraceFreopen checks that freopen() sends the actions' output to a
// file, appending, and freopen("") back; a file that cannot be opened is
// a library error of the firing, as dtrace_freopen reports it.
func TestTraceFreopen(t *testing.T) {
	needTracing(t)
	file := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(file, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := fmt.Sprintf(`BEGIN { freopen(%q); printf("to file\n"); freopen(""); printf("back\n"); freopen("/nonexistent/x"); printf("still\n"); freopen(%[1]q); exit(0); } END { printf("end\n"); }`, file)
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-wq", "-n", prog}, &stdout, &stderr); st != 0 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	// The newline dtrace(1) prints at the end is its own, which
	// freopen() does not redirect.
	if want := "back\nstill\n\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	if want := "kdtrace: error on enabled probe ID 1 (ID 1: dtrace:::BEGIN): couldn't freopen() \"/nonexistent/x\": No such file or directory\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := "before\nto file\nend\n"; string(got) != want {
		t.Errorf("the file holds %q, want %q", got, want)
	}
}

// TestTraceRing checks dtrace's ring buffer policy: the firings print
// when the tracing ends, the newest that fit in bufsize.
func TestTraceRing(t *testing.T) {
	needTracing(t)
	// Each firing is a 12-byte header and a 4-byte int: 16 bytes; 50
	// hold the last three: the last printf's, exit()'s and END's.
	prog := `int i; tick-1ms /i < 100/ { printf("%d\n", i++); } tick-1ms /i == 100/ { exit(0); } END { printf("end %d\n", i); }`
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-q", "-x", "bufpolicy=ring", "-x", "bufsize=50", "-n", prog}, &stdout, &stderr); st != 0 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	if want := "99\nend 100\n\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
}

// TestTraceStrsizePragma checks that a script's strsize pragma sizes
// the strings checked after it, as dt_opt_strsize resizes D's string.
func TestTraceStrsizePragma(t *testing.T) {
	needTracing(t)
	script := filepath.Join(t.TempDir(), "s.d")
	src := "#pragma D option quiet\n#pragma D option strsize=6\nBEGIN { x = \"abcdefghij\"; printf(\"%s|\\n\", x); exit(0); }\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-s", script}, &stdout, &stderr); st != 0 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	if want := "abcdef|\n\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
}

// TestTraceChain counts this process's umask calls with 3,000 clauses
// on one probe, which kdtrace splits over a chain of programs: each
// clause counts each call, and nothing stays loaded.
func TestTraceChain(t *testing.T) {
	needTracing(t)
	const n, calls = 3000, 5
	var src strings.Builder
	src.WriteString(`BEGIN { printf("go\n"); }` + "\n")
	for j := range n {
		fmt.Fprintf(&src, "syscall::umask:entry /pid == %d/ { @[%d] = count(); }\n", os.Getpid(), j)
	}
	script := filepath.Join(t.TempDir(), "chain.d")
	if err := os.WriteFile(script, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	before := loadedPrograms(t)
	out, errs, st := runActive(t, []string{"-q", "-s", script}, func() {
		for range calls {
			syscall.Umask(0o22)
		}
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	})
	if st != 0 {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	counts := map[string]string{}
	for _, l := range strings.Split(strings.TrimPrefix(out, "go\n"), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			counts[f[0]] = f[1]
		} else if len(f) != 0 {
			t.Fatalf("line %q in stdout %q", l, out)
		}
	}
	if len(counts) != n {
		t.Errorf("%d keys printed, want %d", len(counts), n)
	}
	for j := range n {
		if c := counts[fmt.Sprint(j)]; c != fmt.Sprint(calls) {
			t.Fatalf("@[%d] = %q, want %d (stderr %q)", j, c, calls, errs)
		}
	}
	checkReleased(t, before)
}
