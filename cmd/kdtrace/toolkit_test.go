package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// The DTraceToolkit's scripts are D programs that their shell wrappers
// open with one inline per command-line option, and whose clauses
// choose what to print with "OPT ? printf(...) : 1;": dtrace folds the
// constant condition away, and the 1 left as a statement records
// nothing. The tests here run programs of our own in the shapes of
// opensnoop, execsnoop, rwsnoop, procsystime and fddist over a workload
// whose every system call is known, and compare each line printed.

// toolkitWorkload is the program the tests trace. Each mode prepares,
// keeps to the CPU it is on (so that its children do too, and their
// records come in the order they were made), says "ready", waits for
// SIGUSR1 (sent once tracing is on), does its system calls and says
// what the test cannot know beforehand.
const toolkitWorkload = `#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *s) { write(1, s, strlen(s)); }

static void await(void) {
	cpu_set_t cpus;
	sigset_t set;
	int sig;
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	sched_setaffinity(0, sizeof cpus, &cpus);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	say("ready\n");
	sigwait(&set, &sig);
}

static char *path(const char *dir, const char *name) {
	char *p;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		exit(1);
	return p;
}

/* opens opens dir/present and dir/missing, then n times a path at the
   start of a page of a file mapped a page at a time and never touched
   (not faulted in: only the kernel's own read of it faults it in), and
   a path that ends at the last byte before an unmapped page. It says
   where each cold path lies. */
static void opens(const char *dir, int n) {
	long pg = sysconf(_SC_PAGESIZE);
	char *present = path(dir, "present"), *missing = path(dir, "missing");
	char **cold = calloc(n, sizeof *cold), *buf = calloc(n, pg), line[128];
	int fd, i;

	close(open(present, O_WRONLY | O_CREAT | O_TRUNC, 0600));
	fd = open(path(dir, "cold"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	for (i = 0; i < n; i++)
		snprintf(buf + i * pg, pg, "%s/cold-%d", dir, i);
	if (write(fd, buf, n * pg) != n * pg)
		exit(1);
	for (i = 0; i < n; i++)
		if ((cold[i] = mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fd, i * pg)) == MAP_FAILED)
			exit(1);
	close(fd);
	char *edge = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (edge == MAP_FAILED || munmap(edge + pg, pg) != 0)
		exit(1);
	await();
	open(present, O_RDONLY);
	open(missing, O_RDONLY);
	for (i = 0; i < n; i++) {
		int l = snprintf(line, sizeof line, "%s/edge-%d", dir, i);
		char *p = edge + pg - l - 1;
		memcpy(p, line, l + 1);
		openat(AT_FDCWD, cold[i], O_RDONLY);
		openat(AT_FDCWD, p, O_RDONLY);
	}
	for (i = 0; i < n; i++) {
		snprintf(line, sizeof line, "cold %p\n", cold[i]);
		say(line);
	}
}

/* execs runs dir/kdtk-child n times, with "run" and its number, one
   after the other, and says each child's process ID. */
static void execs(const char *dir, int n) {
	char *child = path(dir, "kdtk-child"), num[16], line[64];
	pid_t *pids = calloc(n, sizeof *pids);
	int i;

	await();
	for (i = 0; i < n; i++) {
		snprintf(num, sizeof num, "%d", i);
		if ((pids[i] = fork()) == 0) {
			execl(child, "kdtk-child", "run", num, (char *)NULL);
			_exit(127);
		}
		waitpid(pids[i], NULL, 0);
	}
	for (i = 0; i < n; i++) {
		snprintf(line, sizeof line, "child %d\n", (int)pids[i]);
		say(line);
	}
}

/* rws writes 100 and 23 bytes to dir/data, reads them back (123, then
   0 at its end) and writes 7 bytes to /dev/null. */
static void rws(const char *dir) {
	char *data = path(dir, "data"), buf[4096];
	int fd;

	memset(buf, 'x', sizeof buf);
	await();
	fd = open(data, O_RDWR | O_CREAT | O_TRUNC, 0600);
	write(fd, buf, 100);
	write(fd, buf, 23);
	lseek(fd, 0, SEEK_SET);
	read(fd, buf, sizeof buf);
	read(fd, buf, sizeof buf);
	close(fd);
	fd = open("/dev/null", O_WRONLY);
	write(fd, buf, 7);
	close(fd);
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "run") == 0)
		return 0;
	if (argc < 3)
		return 2;
	if (strcmp(argv[1], "open") == 0)
		opens(argv[2], argc > 3 ? atoi(argv[3]) : 0);
	else if (strcmp(argv[1], "exec") == 0)
		execs(argv[2], argc > 3 ? atoi(argv[3]) : 0);
	else if (strcmp(argv[1], "rw") == 0)
		rws(argv[2]);
	else
		return 2;
	return 0;
}
`

// workload is a running toolkitWorkload, waiting for SIGUSR1.
type workload struct {
	cmd *exec.Cmd
	out io.Reader
	pid int
	dir string
}

// startWorkload builds the workload, statically linked so that no
// dynamic linker opens or reads, and starts it in mode with dir and
// args, once it is ready. The test stops it if it is still running.
func startWorkload(t *testing.T, mode string, args ...string) *workload {
	t.Helper()
	dir := t.TempDir()
	bin := gcctest.Build(t, dir, "kdtk", toolkitWorkload, "-static")
	if mode == "exec" {
		if err := os.Link(bin, filepath.Join(dir, "kdtk-child")); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, append([]string{mode, dir}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); line != "ready\n" {
		t.Fatalf("workload %s: %q, %v", mode, line, err)
	}
	// Its wait for the signal is made before tracing starts: the
	// tests count the system calls after it.
	waiting := fmt.Sprint(unix.SYS_RT_SIGTIMEDWAIT, " ")
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", cmd.Process.Pid))
		if strings.HasPrefix(string(b), waiting) {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("workload %s does not wait for its signal: %q", mode, b)
		}
	}
	return &workload{cmd: cmd, out: r, pid: cmd.Process.Pid, dir: dir}
}

// run lets the workload go and returns what it says once it has ended.
func (w *workload) run(t *testing.T) string {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	said, err := io.ReadAll(w.out)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Wait(); err != nil {
		t.Fatalf("workload: %v", err)
	}
	return string(said)
}

// traceWorkload runs kdtrace -n prog, lets w run once kdtrace has
// printed its first line (the header its BEGIN prints, so tracing is
// on), and interrupts kdtrace as Ctrl-C would once w has ended. It
// returns what kdtrace printed, its status and what w said.
func traceWorkload(t *testing.T, prog string, w *workload) (stdout, stderr string, status int, said string) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan int)
	var errs strings.Builder
	go func() {
		done <- run([]string{"kdtrace", "-n", prog}, pw, &errs)
		pw.Close()
	}()
	var out strings.Builder
	read := make(chan struct{})
	first := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		for n := 0; sc.Scan(); n++ {
			fmt.Fprintln(&out, sc.Text())
			if n == 0 {
				close(first)
			}
		}
	}()
	select {
	case <-first:
		said = w.run(t)
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	case status = <-done:
		<-read
		t.Fatalf("kdtrace ended before printing: status %d, stderr %q", status, errs.String())
	case <-time.After(60 * time.Second):
		t.Fatal("kdtrace printed no header")
	}
	select {
	case status = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("kdtrace did not stop")
	}
	<-read
	return out.String(), errs.String(), status, said
}

// inlines writes a Toolkit wrapper's inline options: "name=value"
// pairs, a value in quotes being a string.
func inlines(opts ...string) string {
	var b strings.Builder
	for _, o := range opts {
		name, value, _ := strings.Cut(o, "=")
		typ := "int"
		if strings.HasPrefix(value, `"`) {
			typ = "string"
		}
		fmt.Fprintf(&b, "inline %s %s = %s;\n", typ, name, value)
	}
	return b.String()
}

// saidFields returns the second field of each line of said that
// starts with word.
func saidFields(said, word string) []string {
	var f []string
	for _, line := range strings.Split(said, "\n") {
		if rest, ok := strings.CutPrefix(line, word+" "); ok {
			f = append(f, rest)
		}
	}
	return f
}

// opensnoop's shape: the path pointer saved at entry, the path read at
// return (where the kernel has faulted its page in), one line per open
// of the process the -p option names.
const opensnoop = `
#pragma D option quiet
#pragma D option switchrate=10hz

dtrace:::BEGIN
{
	OPT_time ? printf("%-14s ", "TIME") : 1;
	printf("%5s %6s %-12s %3s ", "UID", "PID", "COMM", "FD");
	OPT_err ? printf("%3s ", "ERR") : 1;
	printf("%-20s\n", "PATH");
}

/* open(2) has the path in arg0, openat(2) in arg1. */
syscall::open:entry { self->pathp = arg0; }
syscall::openat:entry { self->pathp = arg1; }

syscall::open:entry, syscall::openat:entry
{
	self->ok = FILTER ? 0 : 1;
	(OPT_name == 1 && NAME == execname) ? self->ok = 1 : 1;
	(OPT_pid == 1 && PID == pid) ? self->ok = 1 : 1;
}

syscall::open:return, syscall::openat:return
/self->ok && (!OPT_failonly || (int)arg0 < 0)/
{
	OPT_time ? printf("%-14d ", timestamp / 1000) : 1;
	printf("%5d %6d %-12s %3d ", uid, pid, execname, (int)arg0);
	OPT_err ? printf("%3d ", errno) : 1;
	printf("%-20s\n", copyinstr(self->pathp));
	self->pathp = 0;
	self->ok = 0;
}

syscall::open:return, syscall::openat:return
/self->ok/
{
	self->pathp = 0;
	self->ok = 0;
}
`

// TestToolkitOpensnoop checks every line of opensnoop's shape over a
// workload's opens, among them paths in pages not yet faulted in.
func TestToolkitOpensnoop(t *testing.T) {
	needTracing(t)
	const n = 8
	for _, tt := range []struct {
		name          string
		err, failonly int
	}{
		{"errors", 1, 0},   // opensnoop -e -p PID
		{"failonly", 0, 1}, // opensnoop -x -p PID
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := startWorkload(t, "open", fmt.Sprint(n))
			prog := inlines("OPT_time=0", fmt.Sprintf("OPT_err=%d", tt.err), fmt.Sprintf("OPT_failonly=%d", tt.failonly),
				"OPT_name=0", "OPT_pid=1", "FILTER=1", fmt.Sprintf("PID=%d", w.pid), `NAME="."`) + opensnoop
			out, errs, st, _ := traceWorkload(t, prog, w)
			var want strings.Builder
			line := func(fd, errno int, path string) {
				if tt.failonly == 1 && fd >= 0 {
					return
				}
				fmt.Fprintf(&want, "%5d %6d %-12s %3d ", os.Getuid(), w.pid, "kdtk", fd)
				if tt.err == 1 {
					fmt.Fprintf(&want, "%3d ", errno)
				}
				fmt.Fprintf(&want, "%-20s\n", path)
			}
			fmt.Fprintf(&want, "%5s %6s %-12s %3s ", "UID", "PID", "COMM", "FD")
			if tt.err == 1 {
				fmt.Fprintf(&want, "%3s ", "ERR")
			}
			fmt.Fprintf(&want, "%-20s\n", "PATH")
			line(3, 0, filepath.Join(w.dir, "present"))
			line(-1, 2, filepath.Join(w.dir, "missing"))
			for i := range n {
				line(-1, 2, filepath.Join(w.dir, fmt.Sprintf("cold-%d", i)))
				line(-1, 2, filepath.Join(w.dir, fmt.Sprintf("edge-%d", i)))
			}
			want.WriteString("\n")
			if diff := cmp.Diff(want.String(), out); st != 0 || errs != "" || diff != "" {
				t.Errorf("status %d, stderr %q, stdout (-want +got):\n%s", st, errs, diff)
			}
		})
	}
}

// TestCopyinstrEntryColdPage checks copyinstr() at openat's entry, where
// the path's page may not have been faulted in yet: the probe cannot
// take a page fault (bpf_probe_read_user_str does not fault, and this
// kernel runs no sleepable program at a tracepoint), so it reports an
// invalid address for each path in a page never touched, as dtrace
// does, and reads every other path, also one that ends at the last byte
// before an unmapped page. opensnoop reads the path at return instead.
func TestCopyinstrEntryColdPage(t *testing.T) {
	needTracing(t)
	const n = 8
	w := startWorkload(t, "open", fmt.Sprint(n))
	prog := fmt.Sprintf(`#pragma D option quiet
BEGIN { printf("go\n"); }
syscall::openat:entry /pid == %d/ { printf("%%s\n", copyinstr(arg1)); }`, w.pid)
	out, errs, st, said := traceWorkload(t, prog, w)
	want := fmt.Sprintf("go\n%s\n%s\n", filepath.Join(w.dir, "present"), filepath.Join(w.dir, "missing"))
	for i := range n {
		want += filepath.Join(w.dir, fmt.Sprintf("edge-%d", i)) + "\n"
	}
	want += "\n"
	if diff := cmp.Diff(want, out); st != 0 || diff != "" {
		t.Errorf("status %d, stdout (-want +got):\n%s", st, diff)
	}
	re := regexp.MustCompile(`^kdtrace: error on enabled probe ID 2 \(ID [0-9]+: syscall:vmlinux:openat:entry\): invalid address \((0x[0-9a-f]+)\) in action #1 at DIF offset [0-9]+$`)
	var bad []string
	for _, line := range strings.Split(strings.TrimSuffix(errs, "\n"), "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("stderr line %q is not an invalid address error", line)
			continue
		}
		bad = append(bad, m[1])
	}
	if cold := saidFields(said, "cold"); !slices.Equal(bad, cold) {
		t.Errorf("invalid addresses %v; want the cold paths' %v", bad, cold)
	}
}

// execsnoop's shape: one line per exec of the command -c names, at
// execve's return, with the new program's arguments.
const execsnoop = `
#pragma D option quiet
#pragma D option switchrate=10hz

dtrace:::BEGIN
{
	OPT_time ? printf("%-14s ", "TIME") : 1;
	OPT_dump ? printf("%s %s %s %s %s\n", "UID", "PID", "PPID", "COMM", "ARGS") :
	    printf("%5s %6s %6s %s\n", "UID", "PID", "PPID", "ARGS");
}

syscall::execve:return
/(FILTER == 0) || (OPT_cmd == 1 && COMMAND == execname)/
{
	OPT_time ? printf("%-14d ", timestamp / 1000) : 1;
	OPT_dump ? printf("%d %d %d %s ", uid, pid, ppid, execname) :
	    printf("%5d %6d %6d ", uid, pid, ppid);
	OPT_safe ? printf("%S\n", curpsinfo->pr_psargs) :
	    printf("%s\n", curpsinfo->pr_psargs);
}
`

// TestToolkitExecsnoop checks every line of execsnoop's shape over a
// workload that runs a program three times.
func TestToolkitExecsnoop(t *testing.T) {
	needTracing(t)
	const n = 3
	for _, tt := range []struct {
		name string
		dump int
	}{
		{"default", 0}, // execsnoop -c kdtk-child
		{"dump", 1},    // execsnoop -A -c kdtk-child
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := startWorkload(t, "exec", fmt.Sprint(n))
			prog := inlines(fmt.Sprintf("OPT_dump=%d", tt.dump), "OPT_cmd=1", "OPT_time=0", "OPT_safe=0",
				"FILTER=1", `COMMAND="kdtk-child"`) + execsnoop
			out, errs, st, said := traceWorkload(t, prog, w)
			children := saidFields(said, "child")
			if len(children) != n {
				t.Fatalf("workload said %q", said)
			}
			var want strings.Builder
			if tt.dump == 1 {
				want.WriteString("UID PID PPID COMM ARGS\n")
			} else {
				fmt.Fprintf(&want, "%5s %6s %6s %s\n", "UID", "PID", "PPID", "ARGS")
			}
			for i, c := range children {
				var pid int
				fmt.Sscan(c, &pid)
				if tt.dump == 1 {
					fmt.Fprintf(&want, "%d %d %d %s ", os.Getuid(), pid, w.pid, "kdtk-child")
				} else {
					fmt.Fprintf(&want, "%5d %6d %6d ", os.Getuid(), pid, w.pid)
				}
				fmt.Fprintf(&want, "kdtk-child run %d\n", i)
			}
			want.WriteString("\n")
			if diff := cmp.Diff(want.String(), out); st != 0 || errs != "" || diff != "" {
				t.Errorf("status %d, stderr %q, stdout (-want +got):\n%s", st, errs, diff)
			}
		})
	}
}

// rwsnoop's shape: one line per read (at its return, with the bytes
// read) and write (at its entry, with the bytes asked for) of the
// processes the options name, with the name of the file found by
// walking the process's file table, as the Toolkit walks Solaris's.
const rwsnoop = `
#pragma D option quiet
#pragma D option switchrate=10hz

dtrace:::BEGIN
{
	OPT_ppid ? printf("%6s ", "PPID") : 1;
	printf("%5s %6s %-12s %1s %7s %s\n", "UID", "PID", "CMD", "D", "BYTES", "FILE");
}

syscall::*read:entry, syscall::*write:entry
/pid != $pid/
{
	self->ok = FILTER ? 0 : 1;
	(OPT_name == 1 && NAME == execname) ? self->ok = 1 : 1;
	(OPT_pid == 1 && PID == pid) ? self->ok = 1 : 1;
	self->fd = self->ok ? arg0 : 0;
}

syscall::*read:return
/self->ok/
{
	self->rw = "R";
	self->size = arg0;
}

syscall::*write:entry
/self->ok/
{
	self->rw = "W";
	self->size = arg2;
}

syscall::*read:return, syscall::*write:entry
/self->ok/
{
	this->filep = self->fd < curthread->files->fdt->max_fds ?
	    curthread->files->fdt->fd[self->fd] : 0;
	self->vpath = this->filep != 0 ?
	    stringof(this->filep->f_path.dentry->d_name.name) : "<unknown>";
	OPT_ppid ? printf("%6d ", ppid) : 1;
	printf("%5d %6d %-12.12s %1s %7d %s\n",
	    uid, pid, execname, self->rw, (int)self->size, self->vpath);
	self->ok = 0;
	self->fd = 0;
	self->rw = 0;
	self->size = 0;
	self->vpath = 0;
}
`

// TestToolkitRwsnoop checks every line of rwsnoop's shape over a
// workload's reads and writes.
func TestToolkitRwsnoop(t *testing.T) {
	needTracing(t)
	for _, tt := range []struct {
		name string
		opts []string
		ppid bool
	}{
		{"pid", []string{"OPT_ppid=0", "OPT_name=0", "OPT_pid=1", "FILTER=1", `NAME="."`}, false},    // rwsnoop -p PID
		{"name", []string{"OPT_ppid=1", "OPT_name=1", "OPT_pid=0", "FILTER=1", `NAME="kdtk"`}, true}, // rwsnoop -P -n kdtk
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := startWorkload(t, "rw")
			prog := inlines(append(tt.opts, fmt.Sprintf("PID=%d", w.pid))...) + rwsnoop
			out, errs, st, _ := traceWorkload(t, prog, w)
			var want strings.Builder
			if tt.ppid {
				fmt.Fprintf(&want, "%6s ", "PPID")
			}
			fmt.Fprintf(&want, "%5s %6s %-12s %1s %7s %s\n", "UID", "PID", "CMD", "D", "BYTES", "FILE")
			for _, rw := range []struct {
				d     string
				bytes int
				file  string
			}{{"W", 100, "data"}, {"W", 23, "data"}, {"R", 123, "data"}, {"R", 0, "data"}, {"W", 7, "null"}} {
				if tt.ppid {
					fmt.Fprintf(&want, "%6d ", os.Getpid())
				}
				fmt.Fprintf(&want, "%5d %6d %-12.12s %1s %7d %s\n", os.Getuid(), w.pid, "kdtk", rw.d, rw.bytes, rw.file)
			}
			want.WriteString("\n")
			if diff := cmp.Diff(want.String(), out); st != 0 || errs != "" || diff != "" {
				t.Errorf("status %d, stderr %q, stdout (-want +got):\n%s", st, errs, diff)
			}
		})
	}
}

// procsystime's shape, counting the system calls of the process -p
// names: each statement of the clause that counts is chosen by an
// option, so that a 1 recorded for the statements whose option is off
// would print a line per system call.
const procsystime = `
#pragma D option quiet

dtrace:::BEGIN
{
	self->start = 0;
}

dtrace:::BEGIN
/!OPT_command/
{
	printf("Tracing... Hit Ctrl-C to end...\n");
}

syscall:::entry
/(!OPT_filter) || (OPT_pid && pid == PID)/
{
	self->ok = 1;
}

syscall:::entry
/self->ok/
{
	OPT_counts ? @Counts[probefunc] = count() : 1;
	(OPT_counts && OPT_totals) ? @Counts["TOTAL:"] = count() : 1;
	OPT_elapsed ? self->start = timestamp : 1;
	self->ok = 0;
}

syscall:::return
/self->start/
{
	this->elapsed = timestamp - self->start;
	@Elapsed[probefunc] = sum(this->elapsed);
	OPT_totals ? @Elapsed["TOTAL:"] = sum(this->elapsed) : 1;
	self->start = 0;
}

dtrace:::END
/OPT_counts/
{
	printf("\nSyscall Counts for ");
	OPT_pid ? printf("PID %d,\n\n", PID) : 1;
	(!OPT_filter) ? printf("all processes,\n\n") : 1;
	printf("%16s %18s\n", "SYSCALL", "COUNT");
	OPT_counts ? printa("%16s %@18d\n", @Counts) : 1;
}
`

// TestToolkitProcsystime checks procsystime's shape, -cT -p PID, over
// the workload's reads and writes: its system calls counted, and
// nothing printed for the statements its options turn off.
func TestToolkitProcsystime(t *testing.T) {
	needTracing(t)
	w := startWorkload(t, "rw")
	prog := inlines("OPT_elapsed=0", "OPT_counts=1", "OPT_totals=1", "OPT_filter=1", "OPT_pid=1", "OPT_command=0",
		fmt.Sprintf("PID=%d", w.pid)) + procsystime
	out, errs, st, _ := traceWorkload(t, prog, w)
	var want strings.Builder
	fmt.Fprintf(&want, "Tracing... Hit Ctrl-C to end...\n\nSyscall Counts for PID %d,\n\n%16s %18s\n", w.pid, "SYSCALL", "COUNT")
	// The workload's calls once it is let go: its sigwait returns,
	// then it opens, writes twice, seeks, reads twice and closes its
	// file, opens, writes and closes /dev/null and exits.
	for _, c := range []struct {
		name  string
		count int
	}{{"exit_group", 1}, {"lseek", 1}, {"close", 2}, {"openat", 2}, {"read", 2}, {"write", 3}, {"TOTAL:", 11}} {
		fmt.Fprintf(&want, "%16s %18d\n", c.name, c.count)
	}
	want.WriteString("\n")
	if diff := cmp.Diff(want.String(), out); st != 0 || errs != "" || diff != "" {
		t.Errorf("status %d, stderr %q, stdout (-want +got):\n%s", st, errs, diff)
	}
}

// TestToolkitHeader checks fddist's header, whose words its options
// choose with conditions on two inlines.
func TestToolkitHeader(t *testing.T) {
	needTracing(t)
	const fddist = `
#pragma D option quiet
dtrace:::BEGIN
{
	printf("Tracing ");
	OPT_read && OPT_write ? printf("reads and writes") : 1;
	OPT_read && ! OPT_write ? printf("reads") : 1;
	! OPT_read && OPT_write ? printf("writes") : 1;
	printf("... Hit Ctrl-C to end.\n");
	exit(0);
}`
	for _, tt := range []struct {
		read, write int
		words       string
	}{{1, 1, "reads and writes"}, {1, 0, "reads"}, {0, 1, "writes"}} {
		prog := inlines(fmt.Sprintf("OPT_read=%d", tt.read), fmt.Sprintf("OPT_write=%d", tt.write)) + fddist
		var stdout, stderr strings.Builder
		st := run([]string{"kdtrace", "-n", prog}, &stdout, &stderr)
		if want := "Tracing " + tt.words + "... Hit Ctrl-C to end.\n\n"; st != 0 || stdout.String() != want || stderr.Len() != 0 {
			t.Errorf("read %d write %d: status %d, stdout %q, stderr %q; want %q", tt.read, tt.write, st, stdout.String(), stderr.String(), want)
		}
	}
}
