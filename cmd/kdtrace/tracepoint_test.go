package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// traceEvents returns the running kernel's trace events that the sdt
// and rawtp providers make probes of: those tracefs's available_events
// lists but the syscall provider's and tracers' (kprobes, uprobes,
// Oracle's DTrace's dt_*). It skips the test without tracefs.
func traceEvents(t *testing.T) []string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("trace events are Linux's")
	}
	data, err := os.ReadFile("/sys/kernel/tracing/available_events")
	if err != nil {
		t.Skipf("tracefs cannot be read (mount -t tracefs nodev /sys/kernel/tracing, as root): %v", err)
	}
	var evs []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		sys, _, _ := strings.Cut(line, ":")
		if sys != "syscalls" && sys != "kprobes" && sys != "uprobes" && !strings.HasPrefix(sys, "dt_") {
			evs = append(evs, line)
		}
	}
	return evs
}

// TestListTracepoints checks that -l lists an sdt and a rawtp probe for
// each trace event, as Oracle's DTrace names them.
func TestListTracepoints(t *testing.T) {
	evs := traceEvents(t)
	for _, pv := range []string{"sdt", "rawtp"} {
		var stdout, stderr bytes.Buffer
		if st := run([]string{"kdtrace", "-l", "-n", pv + ":::"}, &stdout, &stderr); st != 0 {
			t.Fatalf("-l %s:::: exit %d: %s", pv, st, stderr.String())
		}
		lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")[1:]
		if len(lines) != len(evs) {
			t.Errorf("-l %s::: lists %d probes; available_events has %d events of its", pv, len(lines), len(evs))
			continue
		}
		for i, line := range lines {
			sys, ev, _ := strings.Cut(evs[i], ":")
			if f := strings.Fields(line); len(f) != 4 || f[1] != pv || f[2] != sys || f[3] != ev {
				t.Errorf("-l %s::: line %q, want %s:%s::%s", pv, line, pv, sys, ev)
				break
			}
		}
	}
}

// TestListTracepointAttributes checks -lv of a rawtp probe against
// Oracle's DTrace's (its test providers/rawtp/tst.lv-sched_process_fork):
// the attributes, and the raw tracepoint's arguments typed from BTF.
func TestListTracepointAttributes(t *testing.T) {
	traceEvents(t)
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("the running kernel has no BTF: %v", err)
	}
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-lv", "-n", "rawtp:::sched_process_fork"}, &stdout, &stderr); st != 0 {
		t.Fatalf("exit %d: %s", st, stderr.String())
	}
	lines := strings.SplitN(stdout.String(), "\n", 3)
	if f := strings.Fields(lines[1]); len(f) != 4 || f[1] != "rawtp" || f[2] != "sched" || f[3] != "sched_process_fork" {
		t.Errorf("probe line %q", lines[1])
	}
	const want = `
	Probe Description Attributes
		Identifier Names: Private
		Data Semantics:   Private
		Dependency Class: Unknown

	Argument Attributes
		Identifier Names: Private
		Data Semantics:   Private
		Dependency Class: ISA

	Argument Types
		args[0]: struct task_struct *
		args[1]: struct task_struct *

`
	if len(lines) < 3 || lines[2] != want {
		t.Errorf("-lv rawtp:::sched_process_fork:\n%s\nwant\n%s", stdout.String(), want)
	}
}

// TestTraceTaskRename renames a thread of this process n times with
// prctl(PR_SET_NAME) and traces sdt:task::task_rename for it: the
// record's pid field, and its old and new names, arrays of chars.
func TestTraceTaskRename(t *testing.T) {
	needTracing(t)
	traceEvents(t)
	const n = 5
	ready := make(chan int)
	rename, done, restore := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(restore)
	go func() {
		// One thread, named and renamed, then given its name back
		// once the tracing is over.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		name := make([]byte, 16)
		if err := unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0); err != nil {
			t.Error(err)
		}
		setName(t, "kdt-start")
		ready <- unix.Gettid()
		<-rename
		for i := range n {
			setName(t, fmt.Sprintf("kdt-rename-%d", i))
		}
		close(done)
		<-restore
		setName(t, unix.ByteSliceToString(name))
	}()
	tid := <-ready
	prog := fmt.Sprintf(`BEGIN { printf("go\n"); }
sdt:task::task_rename /args[0] == %d/ { printf("%%s %%s %%d\n", stringof(args[1]), stringof(args[2]), args[3]); }`, tid)
	before, events := loadedPrograms(t), perfEvents(t)
	out, errs, st := runActive(t, []string{"-q", "-n", prog}, func() {
		close(rename)
		<-done
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	})
	var want strings.Builder
	want.WriteString("go\n")
	old := "kdt-start"
	for i := range n {
		name := fmt.Sprintf("kdt-rename-%d", i)
		fmt.Fprintf(&want, "%s %s 0\n", old, name)
		old = name
	}
	want.WriteString("\n")
	if st != 0 || out != want.String() {
		t.Errorf("status %d, stdout %q, want 0 and %q (stderr %q)", st, out, want.String(), errs)
	}
	checkReleased(t, before)
	if after := perfEvents(t); after != events {
		t.Errorf("%d perf events open before the run, %d after", events, after)
	}
}

// TestTraceFork runs a shell that forks n children, each running a
// program, and counts the forks through sdt:sched::sched_process_fork
// (the record's strings, __data_loc fields, and pids) and
// rawtp:sched::sched_process_fork (the parent and child tasks), and the
// programs' execs through sdt:sched::sched_process_exec's file name.
func TestTraceFork(t *testing.T) {
	needTracing(t)
	traceEvents(t)
	const n = 3
	dir := t.TempDir()
	sh, tru := filepath.Join(dir, "kdtfork-sh"), filepath.Join(dir, "kdtfork-true")
	for bin, from := range map[string]string{sh: "/bin/sh", tru: "/bin/true"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Skip(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	prog := fmt.Sprintf(`BEGIN { printf("go\n"); }
sdt:sched::sched_process_fork /execname == "kdtfork-sh"/ {
	@sdt[stringof(args[0]), args[1] == pid, stringof(args[2]), args[3] != pid] = count();
}
rawtp:sched::sched_process_fork /execname == "kdtfork-sh"/ { @raw[args[0]->pid == pid, args[1]->pid != pid] = count(); }
sdt:sched::sched_process_exec /stringof(args[0]) == %q/ { @exec[args[1] == pid] = count(); }
END { printa("sdt %%s %%d %%s %%d %%@d\n", @sdt); printa("rawtp %%d %%d %%@d\n", @raw); printa("exec %%d %%@d\n", @exec); }`, tru)
	// The shell runs a builtin last, so that it forks for each run of
	// the program rather than exec the last in its own process.
	script := strings.Repeat(tru+"; ", n) + ":"
	before, events := loadedPrograms(t), perfEvents(t)
	out, errs, st := runActive(t, []string{"-q", "-n", prog}, func() {
		if err := exec.Command(sh, "-c", script).Run(); err != nil {
			t.Error(err)
		}
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	})
	want := fmt.Sprintf("go\nsdt kdtfork-sh 1 kdtfork-sh 1 %d\nrawtp 1 1 %d\nexec 1 %d\n\n", n, n, n)
	if st != 0 || out != want {
		t.Errorf("status %d, stdout %q, want 0 and %q (stderr %q)", st, out, want, errs)
	}
	checkReleased(t, before)
	if after := perfEvents(t); after != events {
		t.Errorf("%d perf events open before the run, %d after", events, after)
	}
}

// TestTraceTracepointGlobs enables every rawtp probe, and every sdt
// probe of a system, at once: each attaches, and all are detached when
// the tracing ends.
func TestTraceTracepointGlobs(t *testing.T) {
	needTracing(t)
	evs := traceEvents(t)
	descs := map[string]int{"rawtp:::": len(evs)}
	// irq_vectors's events (x86's) refuse a sampling perf event.
	for _, sys := range []string{"sched", "irq_vectors"} {
		for _, ev := range evs {
			if strings.HasPrefix(ev, sys+":") {
				descs["sdt:"+sys+"::"]++
			}
		}
	}
	for desc, want := range descs {
		before, events := loadedPrograms(t), perfEvents(t)
		var stdout, stderr bytes.Buffer
		st := run([]string{"kdtrace", "-n", desc + " { @ = count(); }", "-n", "BEGIN { exit(0); }"}, &stdout, &stderr)
		// Probes that fire in each other's programs (irq and
		// scheduler events at once) drop some firings, counted.
		var msgs strings.Builder
		for _, line := range strings.SplitAfter(stderr.String(), "\n") {
			if !dropLine.MatchString(line) {
				msgs.WriteString(line)
			}
		}
		wantErr := fmt.Sprintf("kdtrace: description '%s ' matched %d probes\nkdtrace: description 'BEGIN ' matched 1 probe\n", desc, want)
		if st != 0 || msgs.String() != wantErr {
			t.Errorf("%s: exit %d, stderr %q; want 0, %q", desc, st, stderr.String(), wantErr)
		}
		checkReleased(t, before)
		if after := perfEvents(t); after != events {
			t.Errorf("%s: %d perf events open before the run, %d after", desc, events, after)
		}
	}
}

var dropLine = regexp.MustCompile(`^kdtrace: \d+ drops on CPU \d+\n$`)

// setName names the calling thread.
func setName(t *testing.T, name string) {
	b := append([]byte(name), 0)
	if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0); err != nil {
		t.Error(err)
	}
	runtime.KeepAlive(b)
}

// TestTraceManyClauses renames a thread of this process n times with
// prctl(PR_SET_NAME) and counts the renames in each of 3,000 clauses on
// sdt:task::task_rename, an SDT site at a tracepoint, and in each of
// 3,000 on syscall::prctl:entry: the programs of both are split into
// chains (the kernel refuses one program of the site's 3,000 clauses),
// and every clause counts each rename once.
func TestTraceManyClauses(t *testing.T) {
	needTracing(t)
	traceEvents(t)
	const n, clauses = 3, 3000
	ready := make(chan int)
	rename, done, restore := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(restore)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		name := make([]byte, 16)
		if err := unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0); err != nil {
			t.Error(err)
		}
		ready <- unix.Gettid()
		<-rename
		for i := range n {
			setName(t, fmt.Sprintf("kdt-clauses-%d", i))
		}
		close(done)
		<-restore
		setName(t, unix.ByteSliceToString(name))
	}()
	tid := <-ready
	var prog strings.Builder
	prog.WriteString("BEGIN { printf(\"go\\n\"); }\n")
	for j := range clauses {
		fmt.Fprintf(&prog, "sdt:task::task_rename /args[0] == %d/ { @s[%d] = count(); }\n", tid, j)
	}
	for j := range clauses {
		fmt.Fprintf(&prog, "syscall::prctl:entry /tid == %d && arg0 == %d/ { @p[%d] = count(); }\n", tid, unix.PR_SET_NAME, j)
	}
	prog.WriteString(`END { printa("s %d %@d\n", @s); printa("p %d %@d\n", @p); }`)
	script := filepath.Join(t.TempDir(), "clauses.d")
	if err := os.WriteFile(script, []byte(prog.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	before := loadedPrograms(t)
	out, errs, st := runActive(t, []string{"-q", "-s", script}, func() {
		close(rename)
		<-done
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	})
	if st != 0 {
		t.Fatalf("status %d (stderr %q)", st, errs)
	}
	var want []string
	for _, kind := range []string{"p", "s"} {
		for j := range clauses {
			want = append(want, fmt.Sprintf("%s %d %d", kind, j, n))
		}
	}
	slices.Sort(want)
	got := slices.DeleteFunc(strings.Split(out, "\n"), func(l string) bool { return l == "" || l == "go" })
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%d counts, want %d; first lines %q (stderr %q)", len(got), len(want), got[:min(len(got), 5)], errs)
	}
	checkReleased(t, before)
}
