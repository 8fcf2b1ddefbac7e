package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// spinsleep spins for argv[2] milliseconds of its own CPU time, then
// sleeps for argv[3] milliseconds, argv[1] times; getppid() marks the
// start of each spin and getuid() its end.
const spinsleep = `#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static long long cputime(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
int main(int argc, char **argv) {
	int n = atoi(argv[1]);
	long long spin = atoll(argv[2]) * 1000000LL;
	struct timespec nap = {0, atol(argv[3]) * 1000000L};
	for (int i = 0; i < n; i++) {
		getppid();
		long long end = cputime() + spin;
		while (cputime() < end)
			;
		getuid();
		nanosleep(&nap, NULL);
	}
	return 0;
}
`

// script runs kdtrace -q with the extra options opts and -s on the
// script prog, and returns what it printed; it fails the test unless
// kdtrace succeeds without a word on stderr.
func script(t *testing.T, prog string, opts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prog.d")
	if err := os.WriteFile(path, []byte(prog), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := append(append([]string{"kdtrace", "-q"}, opts...), "-s", path)
	if st := run(args, &stdout, &stderr); st != 0 || stderr.Len() != 0 {
		t.Fatalf("kdtrace %q: status %d, stderr %q", args, st, stderr.String())
	}
	return stdout.String()
}

// intervals runs kdtrace -q -c cmd -s on the script prog, whose clauses
// print lines of a name and two numbers, and returns the numbers by
// name.
func intervals(t *testing.T, cmd, prog string) map[string][][2]int64 {
	t.Helper()
	out := script(t, prog, "-c", cmd)
	got := map[string][][2]int64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("line %q of %q: want a name and two numbers", line, out)
		}
		a, err1 := strconv.ParseInt(f[1], 10, 64)
		b, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("line %q: want a name and two numbers", line)
		}
		got[f[0]] = append(got[f[0]], [2]int64{a, b})
	}
	return got
}

// TestVtimestamp checks that vtimestamp counts a thread's time on a CPU
// and not its time off: over each spin of spinsleep, its delta is at
// least half the CPU time the program spun (as the kernel counts it for
// the thread) and at most the spin's timestamp delta; over each sleep,
// where the thread is off the CPU but for its system calls, it is under
// half the sleep's timestamp delta.
func TestVtimestamp(t *testing.T) {
	needTracing(t)
	bin := gcctest.Build(t, t.TempDir(), "spinsleep", spinsleep)
	const rounds, spinMS, sleepMS = 4, 40, 40
	got := intervals(t, fmt.Sprintf("%s %d %d %d", bin, rounds, spinMS, sleepMS), `
		self uint64_t v, t;
		syscall::getppid:entry /pid == $target && self->t/ {
			printf("sleep %d %d\n", vtimestamp - self->v, timestamp - self->t);
		}
		syscall::getppid:entry /pid == $target/ { self->v = vtimestamp; self->t = timestamp; }
		syscall::getuid:entry /pid == $target/ {
			printf("spin %d %d\n", vtimestamp - self->v, timestamp - self->t);
			self->v = vtimestamp; self->t = timestamp;
		}`)
	if len(got["spin"]) != rounds || len(got["sleep"]) != rounds-1 {
		t.Fatalf("%d spins and %d sleeps, want %d and %d: %v", len(got["spin"]), len(got["sleep"]), rounds, rounds-1, got)
	}
	for _, s := range got["spin"] {
		// vtimestamp is the scheduler's clock and timestamp ktime's:
		// over a spin they may differ by a thousandth (470 ns in 40 ms
		// was seen), vtimestamp then ahead.
		if dv, dt := s[0], s[1]; dv < spinMS*1e6/2 || dv > dt+dt/1000 {
			t.Errorf("a spin of %d ms of CPU time: vtimestamp delta %d, timestamp delta %d", spinMS, dv, dt)
		}
	}
	t.Logf("spins %v, sleeps %v", got["spin"], got["sleep"])
	for _, s := range got["sleep"] {
		if dv, dt := s[0], s[1]; dv < 0 || dv >= dt/2 {
			t.Errorf("a sleep of %d ms: vtimestamp delta %d, timestamp delta %d", sleepMS, dv, dt)
		}
	}
}

// TestProcsystime is the shape of the Toolkit's procsystime: the
// system calls of a process counted, and their times on a CPU
// (vtimestamp) and elapsed (timestamp) summed, by call. The count is
// exact; the sleep's time on a CPU is under half its elapsed time, no
// call's is over it, and every call took some.
func TestProcsystime(t *testing.T) {
	needTracing(t)
	bin := gcctest.Build(t, t.TempDir(), "calls", calls)
	const n = 500
	got := intervals(t, fmt.Sprintf("%s %d 1", bin, n), `
		syscall:::entry /pid == $target/ { self->v = vtimestamp; self->t = timestamp; }
		syscall:::return /self->t/ {
			@calls[probefunc] = count();
			@oncpu[probefunc] = sum(vtimestamp - self->v);
			@least[probefunc] = min(vtimestamp - self->v);
			@elapsed[probefunc] = sum(timestamp - self->t);
			self->v = 0; self->t = 0;
		}
		END { printa("%s %@d %@d\n", @oncpu, @elapsed); printa("calls:%s %@d 0\n", @calls);
			printa("least:%s %@d 0\n", @least); }`)
	counts, least := map[string]int64{}, map[string]int64{}
	for name, v := range got {
		if f, ok := strings.CutPrefix(name, "calls:"); ok {
			counts[f] = v[0][0]
			continue
		}
		if f, ok := strings.CutPrefix(name, "least:"); ok {
			least[f] = v[0][0]
			continue
		}
		if oncpu, elapsed := v[0][0], v[0][1]; oncpu < 0 || oncpu > elapsed {
			t.Errorf("%s: on a CPU %d ns, elapsed %d ns", name, oncpu, elapsed)
		}
	}
	if counts["getppid"] != n || counts["clock_nanosleep"] != 1 {
		t.Errorf("getppid called %d times, clock_nanosleep %d; want %d and 1: %v", counts["getppid"], counts["clock_nanosleep"], n, counts)
	}
	t.Logf("%v", got)
	// The kernel brings a thread's CPU time up to date at the clock
	// tick: vtimestamp counts the slice running since, so that even the
	// shortest call took some time on a CPU.
	if least["getppid"] <= 0 {
		t.Errorf("the shortest getppid took %d ns on a CPU, want more than 0", least["getppid"])
	}
	if s := got["clock_nanosleep"]; len(s) != 1 || s[0][0] >= s[0][1]/2 {
		t.Errorf("sleep(1): on a CPU and elapsed %v, want the first under half the second", s)
	}
}

// TestFiringTime checks that a firing has one time, as dtrace's
// dtms_timestamp: every read of timestamp and vtimestamp in any clause
// of one firing gives the same value, and walltimestamp moves with
// them; the next firing has a later time.
func TestFiringTime(t *testing.T) {
	needTracing(t)
	out := script(t, `
		uint64_t t0, v0, w0, last;
		profile:::tick-10ms { t0 = timestamp; v0 = vtimestamp; w0 = walltimestamp; }
		profile:::tick-10ms {
			printf("%d %d %d %d\n", timestamp - t0, vtimestamp - v0,
			    walltimestamp - w0, timestamp - timestamp);
			printf("later %d 0 0 0\n", last == 0 || timestamp > last);
			last = timestamp;
		}
		profile:::tick-10ms /++n == 5/ { exit(0); }`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d lines, want 10: %q", len(lines), out)
	}
	for i, line := range lines {
		want := "0 0 0 0"
		if i%2 == 1 {
			want = "later 1 0 0 0"
		}
		if line != want {
			t.Errorf("line %d: %q, want %q", i+1, line, want)
		}
	}
}

// forker forks argv[1] children one after another, each of which runs
// /bin/true, and waits for each.
const forker = `#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
	int n = atoi(argv[1]);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			execl("/bin/true", "true", (char *)0);
			_exit(127);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
			return 1;
	}
	return 0;
}
`

// TestShortlived is the shape of the Toolkit's shortlived.d: the time
// on a CPU (vtimestamp) that short-lived processes cost in fork, in
// exec and in their lives from exec to exit, and how many there were.
// The counts are exact; each time is more than 0, and a life's time on
// a CPU is no more than its elapsed time.
func TestShortlived(t *testing.T) {
	needTracing(t)
	if _, err := os.Stat("/bin/true"); err != nil {
		t.Skipf("no /bin/true: %v", err)
	}
	bin := gcctest.Build(t, t.TempDir(), "forker", forker)
	const n = 20
	got := intervals(t, fmt.Sprintf("%s %d", bin, n), `
		self uint64_t fork, exec, life, born;
		syscall::clone*:entry, syscall::fork:entry, syscall::vfork:entry /pid == $target/ {
			self->fork = vtimestamp;
		}
		syscall::clone*:return, syscall::fork:return, syscall::vfork:return /self->fork/ {
			@n["fork"] = count(); @v["fork"] = sum(vtimestamp - self->fork); @t["fork"] = sum(0);
			self->fork = 0;
		}
		syscall::execve:entry /ppid == $target/ { self->exec = vtimestamp; }
		syscall::execve:return /self->exec/ {
			@n["exec"] = count(); @v["exec"] = sum(vtimestamp - self->exec); @t["exec"] = sum(0);
			self->exec = 0;
		}
		proc:::exec-success /ppid == $target/ { self->life = vtimestamp; self->born = timestamp; }
		proc:::exit /self->life/ {
			@n["life"] = count(); @v["life"] = sum(vtimestamp - self->life);
			@t["life"] = sum(timestamp - self->born);
		}
		END { printa("%s %@d %@d\n", @v, @t); printa("count:%s %@d 0\n", @n); }`)
	t.Logf("%v", got)
	for _, what := range []string{"fork", "exec", "life"} {
		if c := got["count:"+what]; len(c) != 1 || c[0][0] != n {
			t.Errorf("%s counted %v, want %d", what, c, n)
		}
		v := got[what]
		if len(v) != 1 || v[0][0] <= 0 {
			t.Errorf("%s: time on a CPU %v, want more than 0", what, v)
			continue
		}
		if what == "life" && v[0][0] > v[0][1] {
			t.Errorf("lives: %d ns on a CPU, over their %d ns elapsed", v[0][0], v[0][1])
		}
	}
}

// stopper forks a child that stops itself with SIGSTOP, waits for it to
// stop, continues it and reaps it.
const stopper = `#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
	pid_t pid = fork();
	if (pid == 0) {
		raise(SIGSTOP);
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st))
		return 1;
	kill(pid, SIGCONT);
	return waitpid(pid, &st, 0) != pid || st != 0;
}
`

// TestLwpsinfoFlags checks the PR_* bits of lwpsinfo_t's pr_flag: a
// CPU's idle thread (the run queue's) is PR_IDLE and PR_ISSYS, and
// kdtrace running BEGIN is neither; a thread that stops itself leaves
// its CPU PR_STOPPED once, and its parent waiting for it leaves asleep.
func TestLwpsinfoFlags(t *testing.T) {
	needTracing(t)
	var stdout, stderr bytes.Buffer
	args := []string{"kdtrace", "-q", "-n", `BEGIN {
		this->idle = curthread->se.cfs_rq->rq->idle;
		printf("%x %x\n", xlate <lwpsinfo_t *> (this->idle)->pr_flag, curlwpsinfo->pr_flag);
		printf("%x %x\n", PR_IDLE | PR_ISSYS, 0);
		exit(0);
	}`}
	if st := run(args, &stdout, &stderr); st != 0 || stderr.Len() != 0 {
		t.Fatalf("kdtrace %q: status %d, stderr %q", args, st, stderr.String())
	}
	lines := strings.Split(stdout.String(), "\n")
	if len(lines) < 2 || lines[0] != lines[1] {
		t.Errorf("the idle thread's and kdtrace's pr_flag, then the want: %q", stdout.String())
	}

	bin := gcctest.Build(t, t.TempDir(), "stopper", stopper)
	got := intervals(t, bin, `
		sched:::off-cpu /ppid == $target && curlwpsinfo->pr_flag & PR_STOPPED/ { @n["stopped"] = count(); }
		sched:::off-cpu /pid == $target && curlwpsinfo->pr_flag & PR_ASLEEP/ { @n["asleep"] = count(); }
		sched:::off-cpu /(pid == $target || ppid == $target) && curlwpsinfo->pr_flag & (PR_PTRACE | PR_IDLE | PR_ISSYS)/ {
			@n["other"] = count();
		}
		END { printa("%s %@d 0\n", @n); }`)
	if s, a, o := got["stopped"], got["asleep"], got["other"]; len(s) != 1 || s[0][0] != 1 || len(a) != 1 || a[0][0] < 1 || o != nil {
		t.Errorf("threads leaving their CPU stopped %v, asleep %v, traced, idle or kernel %v; want 1, at least 1, none", s, a, o)
	}
}

// TestRefusedNames checks that a name of illumos's D library that means
// nothing on Linux fails to compile, saying so, where one Linux honours
// compiles.
func TestRefusedNames(t *testing.T) {
	for _, tt := range []struct{ name, why string }{
		{"PR_FORK", "Linux has no /proc control of a process"},
		{"PR_DAEMON", "Linux has no Solaris threads library"},
		{"PR_ORPHAN", "Linux does not keep this state of a process"},
	} {
		prog := "BEGIN { trace(curlwpsinfo->pr_flag & " + tt.name + "); }"
		var stdout, stderr bytes.Buffer
		st := run([]string{"kdtrace", "-e", "-n", prog}, &stdout, &stderr)
		want := "kdtrace: invalid probe specifier " + prog + ": in action list: failed to resolve " + tt.name +
			": Unknown variable name (" + tt.name + " is not defined on Linux: " + tt.why + ")\n"
		if st != 1 || stderr.String() != want {
			t.Errorf("kdtrace -e -n %q: status %d, stderr %q; want 1, %q", prog, st, stderr.String(), want)
		}
	}
	var stdout, stderr bytes.Buffer
	prog := "BEGIN { trace(curlwpsinfo->pr_flag & (PR_STOPPED | PR_ISTOP | PR_ASLEEP | PR_IDLE | PR_ISSYS | PR_PTRACE)); }"
	if st := run([]string{"kdtrace", "-e", "-n", prog}, &stdout, &stderr); st != 0 {
		t.Errorf("kdtrace -e -n %q: status %d, stderr %q", prog, st, stderr.String())
	}
}

// chdirs changes its directory to each argument in turn, calling
// getppid() after each; an argument "chroot:DIR" chroots to DIR and
// changes to its root.
const chdirs = `#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "chroot:", 7) == 0) {
			if (chroot(argv[i] + 7) != 0 || chdir("/") != 0)
				return 1;
		} else if (chdir(argv[i]) != 0) {
			return 1;
		}
		getppid();
	}
	return 0;
}
`

// TestCwdRoot checks cwd and root, paths from the root of the mount
// tree as illumos gives them: across mounts (/proc), into a chroot,
// whose root is the directory chrooted to, and cut short behind "..."
// to the last names that fit in strsize.
func TestCwdRoot(t *testing.T) {
	needTracing(t)
	dir := t.TempDir()
	bin := gcctest.Build(t, dir, "chdirs", chdirs)
	jail, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(jail, "x", "y"), 0o700); err != nil {
		t.Fatal(err)
	}
	prog := `syscall::getppid:entry /pid == $target/ { printf("%s %s\n", cwd, root); }`
	got := script(t, prog, "-c", fmt.Sprintf("%s /proc %s/x chroot:%s /x/y", bin, jail, jail))
	want := "/proc /\n" + jail + "/x /\n" + jail + " " + jail + "\n" + jail + "/x/y " + jail + "\n\n"
	if got != want {
		t.Errorf("cwd and root:\n%s\nwant\n%s", got, want)
	}

	// In strsize bytes, "..." and the last names that fit in strsize-4.
	const strsize = 24
	path := jail + "/x/y"
	kept := path
	for len(kept) > strsize-4 {
		kept = kept[strings.IndexByte(kept[1:], '/')+1:]
	}
	got = script(t, prog, "-x", fmt.Sprintf("strsize=%d", strsize), "-c", fmt.Sprintf("%s %s", bin, path))
	if want := "..." + kept + " /\n\n"; got != want {
		t.Errorf("cwd and root in %d bytes: %q, want %q", strsize, got, want)
	}
}

// TestDPathDentry checks d_path_dentry(), the path of a dentry through
// the first mount of its file system, against d_path() of the current
// directory: they agree in /proc, and in a directory of the test's
// file system where it is mounted once, and differ through a later
// bind mount of that directory, which d_path() names and
// d_path_dentry() does not; in a chroot the root is the directory
// chrooted to, as for d_path().
func TestDPathDentry(t *testing.T) {
	needTracing(t)
	dir := t.TempDir()
	bin := gcctest.Build(t, dir, "chdirs", chdirs)
	dir = onlyMount(t, dir)
	if err := os.MkdirAll(filepath.Join(dir, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	bind := bindMount(t, dir)
	prog := `syscall::getppid:entry /pid == $target/ {
		printf("%s %s %s\n", d_path(&curthread->fs->pwd), d_path_dentry(curthread->fs->pwd.dentry),
		    d_path_dentry(curthread->fs->root.dentry));
	}`
	got := script(t, prog, "-c", fmt.Sprintf("%s /proc %s/x %s/x chroot:%s/x", bin, dir, bind, bind))
	want := "/proc /proc /\n" + dir + "/x " + dir + "/x /\n" + bind + "/x " + dir + "/x /\n" +
		bind + "/x " + dir + "/x " + dir + "/x\n\n"
	if got != want {
		t.Errorf("d_path and d_path_dentry of cwd, d_path_dentry of root:\n%s\nwant\n%s", got, want)
	}
}

// opener opens argv[1] for reading and writing, appending, as
// descriptor 3, writes argv[2] to it, moves to offset 5, makes a pipe
// (4 and 5), and calls getppid().
const opener = `#include <fcntl.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
	int p[2];
	int fd = open(argv[1], O_RDWR | O_APPEND | O_CREAT, 0600);
	if (fd != 3 || write(fd, argv[2], strlen(argv[2])) < 0 || lseek(fd, 5, SEEK_SET) != 5 || pipe(p) != 0)
		return 1;
	getppid();
	return 0;
}
`

// TestFds checks fds[], the files of the current process by
// descriptor: a file's name, directory, path, file system, offset and
// open flags; a pipe, whose name the kernel makes up, has no path; a
// descriptor that is not open, or out of the table, is "<none>".
func TestFds(t *testing.T) {
	needTracing(t)
	dir := t.TempDir()
	bin := gcctest.Build(t, dir, "opener", opener)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(real, "data")
	// One clause: each member is its translation alone, and takes
	// scratch space for its own string only.
	prog := `syscall::getppid:entry /pid == $target/ {
		printf("%s|%s|%s|%d|%x\n", fds[3].fi_name, fds[3].fi_dirname, fds[3].fi_pathname, fds[3].fi_offset,
		    fds[3].fi_oflags & (O_ACCMODE | O_APPEND));
		printf("%s|%s|%s\n", fds[4].fi_fs, fds[4].fi_pathname, fds[4].fi_dirname);
		printf("%s|%s|%s|%s\n", fds[6].fi_name, fds[6].fi_pathname, fds[-1].fi_name, fds[1 << 20].fi_fs);
		printf("%s\n", fds[3].fi_fs);
	}`
	got := strings.Split(script(t, prog, "-c", bin+" "+file+" 'hello, world'"), "\n")
	want := []string{
		fmt.Sprintf("data|%s|%s|5|%x", real, file, syscall.O_RDWR|syscall.O_APPEND),
		"pipefs|<unknown>|<unknown>",
		"<none>|<none>|<none>|<none>",
	}
	if len(got) < 4 || !slices.Equal(got[:3], want) {
		t.Fatalf("fds[]:\n%q\nwant\n%q", got, want)
	}
	if got[3] == "" || got[3] == "<none>" {
		t.Errorf("fds[3].fi_fs = %q, want the file system's type", got[3])
	}
}

// TestAggKeysPacked traces every system call on the machine, kdtrace's
// own and those of ls -R /etc among them, into aggregations
// keyed on execname and probefunc, which keep only those names' bytes
// in their maps, and into the same keyed on copies of them, which keep
// whole strsize strings: the names the running system brings, not ones
// the test chose, must come out the same both ways.
func TestAggKeysPacked(t *testing.T) {
	needTracing(t)
	out := script(t, `
		syscall:::entry {
			@packed[execname, probefunc] = count();
			@whole[strjoin(execname, ""), strjoin(probefunc, "")] = count();
		}
		END {
			printa("packed %s %s %@d\n", @packed);
			printa("whole %s %s %@d\n", @whole);
		}`, "-c", "ls -R /etc")
	got := map[string]map[string]string{"packed": {}, "whole": {}}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || got[f[0]] == nil {
			t.Fatalf("line %q of %q", line, out)
		}
		got[f[0]][f[1]+" "+f[2]] = f[3]
	}
	if len(got["packed"]) < 3 {
		t.Fatalf("%d keys: %q", len(got["packed"]), out)
	}
	if diff := cmp.Diff(got["whole"], got["packed"]); diff != "" {
		t.Errorf("keys and counts (-whole +packed):\n%s", diff)
	}
	found := false
	for k := range got["packed"] {
		found = found || strings.HasPrefix(k, "ls ")
	}
	if !found {
		t.Errorf("no system call of ls: %v", got["packed"])
	}
}
