package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// ioBlock is the size of the blocks the io tests read and write.
const ioBlock = 4096

// ioDisk is the block device a directory is on, as devinfo_t and
// bufinfo_t name it.
type ioDisk struct {
	statname string // the disk or partition (dev_statname)
	name     string // its disk (dev_name)
	edev     uint64 // its device number in the kernel's encoding (b_edev)
	fs       string // the file system's type (fi_fs)
}

// diskOf returns the block device dir is on. It skips the test where
// that is no block device of blk-mq, whose requests the io provider
// traces (tmpfs, or a device mapper or other bio-based device).
func diskOf(t *testing.T, dir string) ioDisk {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	major, minor := unix.Major(st.Dev), unix.Minor(st.Dev)
	sys, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", major, minor))
	if err != nil {
		t.Skipf("%s is on no block device (%d:%d): %v", dir, major, minor, err)
	}
	d := ioDisk{statname: filepath.Base(sys), name: filepath.Base(sys), edev: uint64(major)<<20 | uint64(minor)}
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		d.name = filepath.Base(filepath.Dir(sys))
	}
	if _, err := os.Stat(filepath.Join("/sys/block", d.name, "mq")); err != nil {
		t.Skipf("%s is on %s, a block device without blk-mq requests", dir, d.name)
	}
	// The file system is the one mounted on the longest prefix of dir.
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	best := ""
	for line := range strings.Lines(string(mounts)) {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		if mp := f[1]; (dir == mp || strings.HasPrefix(dir, strings.TrimSuffix(mp, "/")+"/")) && len(mp) >= len(best) {
			best, d.fs = mp, f[2]
		}
	}
	return d
}

// ioThread runs functions in one locked OS thread, so that a D program
// can pick out its I/O by tid, which it must know before it starts.
type ioThread struct {
	tid  int
	work chan func()
	done chan struct{}
}

func newIOThread(t *testing.T) *ioThread {
	th := &ioThread{work: make(chan func()), done: make(chan struct{})}
	tid := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		for f := range th.work {
			f()
			th.done <- struct{}{}
		}
	}()
	th.tid = <-tid
	t.Cleanup(func() { close(th.work) })
	return th
}

// do runs f in the thread and waits for it.
func (th *ioThread) do(f func()) {
	th.work <- f
	<-th.done
}

// writeSynced writes n blocks of data to a new file at path, and syncs
// them to the disk, so that later O_DIRECT writes overwrite blocks the
// file system has allocated.
func writeSynced(t *testing.T, path string, n int) {
	t.Helper()
	data := make([]byte, n*ioBlock)
	for i := range data {
		data[i] = byte(i / ioBlock)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// aggLines reads the lines "key ... value" a program's printa prints
// into a map from key to value.
func aggLines(t *testing.T, out string) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			continue
		}
		m[strings.Join(f[:len(f)-1], " ")] = v
	}
	return m
}

// ioDirectProgram counts a thread's requests at io:::start, pairs them
// with their io:::done by arg0, as a script keyed on the request does,
// and by args[0]'s device and block, as the Guide's iotime.d does.
const ioDirectProgram = `
BEGIN { printf("go\n"); }
io:::start /tid == TID/ {
	s[arg0] = 1;
	t[args[0]->b_edev, args[0]->b_blkno] = timestamp;
	this->rw = args[0]->b_flags & B_READ ? "R" : "W";
	@c[this->rw, "start"] = count();
	@b[this->rw, "start-bytes"] = sum(args[0]->b_bcount);
	@d[args[1]->dev_statname, args[1]->dev_name, args[1]->dev_pathname, args[0]->b_edev] = count();
	@f[args[2]->fi_name, args[2]->fi_offset] = count();
}
io:::done /s[arg0]/ {
	s[arg0] = 0;
	this->rw = args[0]->b_flags & B_READ ? "R" : "W";
	@c[this->rw, "done"] = count();
	@b[this->rw, "done-bytes"] = sum(args[0]->b_bcount);
}
io:::done /t[args[0]->b_edev, args[0]->b_blkno]/ {
	this->elapsed = timestamp - t[args[0]->b_edev, args[0]->b_blkno];
	@c["iotime", this->elapsed > 0 ? "paired" : "unordered"] = count();
	t[args[0]->b_edev, args[0]->b_blkno] = 0;
}
END { printa("%s %s %@d\n", @c); printa("%s %s %@d\n", @b); printa("%s %s %s %d %@d\n", @d); printa("%s %d %@d\n", @f); }
`

// ioRun runs prog (a program whose BEGIN prints "go") around work,
// which it runs in th, and returns what it printed. kdtrace drops, and
// reports, a firing that interrupts another of its programs on a CPU,
// as a request's completion may: a run that reports drops is tried
// again, up to three times, since its counts need not be exact.
func ioRun(t *testing.T, prog string, th *ioThread, work func() error) string {
	t.Helper()
	for try := 1; ; try++ {
		var werr error
		out, errs, st := runActive(t, []string{"-q", "-n", prog}, func() {
			th.do(func() { werr = work() })
			syscall.Kill(os.Getpid(), syscall.SIGINT)
		})
		if werr != nil {
			t.Skipf("the I/O failed: %v", werr)
		}
		if st != 0 {
			t.Fatalf("status %d, stderr %q", st, errs)
		}
		if !strings.Contains(errs, "drop") {
			return out
		}
		if try == 3 {
			t.Fatalf("drops in %d runs: %s", try, errs)
		}
		t.Logf("run %d: %s", try, errs)
	}
}

// directIO returns a function that reads and then writes n blocks of
// the file at path with O_DIRECT, one request each.
func directIO(t *testing.T, path string, n int) func() error {
	buf, err := unix.Mmap(-1, 0, ioBlock, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(buf) })
	return func() error {
		fd, err := unix.Open(path, unix.O_RDWR|unix.O_DIRECT, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		for i := range n {
			if _, err := unix.Pread(fd, buf, int64(i*ioBlock)); err != nil {
				return err
			}
		}
		for i := range n {
			if _, err := unix.Pwrite(fd, buf, int64(i*ioBlock)); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestIODirect reads and writes n blocks of a file with O_DIRECT, one
// request each, and checks that io:::start and io:::done fire once for
// each, in pairs, with its bytes and device, and that the file of
// O_DIRECT's user memory is dtrace's "<unknown>".
func TestIODirect(t *testing.T) {
	needTracing(t)
	const n = 32
	dir := t.TempDir()
	disk := diskOf(t, dir)
	path := filepath.Join(dir, "kdtrace-io-direct")
	writeSynced(t, path, n)
	th := newIOThread(t)
	prog := strings.ReplaceAll(ioDirectProgram, "TID", strconv.Itoa(th.tid))
	out := ioRun(t, prog, th, directIO(t, path, n))
	got := aggLines(t, out)
	want := map[string]int64{
		"R start": n, "R done": n, "W start": n, "W done": n,
		"iotime paired": 2 * n,
		"R start-bytes": n * ioBlock,
		"R done-bytes":  n * ioBlock,
		"W start-bytes": n * ioBlock,
		"W done-bytes":  n * ioBlock,
		fmt.Sprintf("%s %s /dev/%s %d", disk.statname, disk.name, disk.statname, disk.edev): 2 * n,
		"<unknown> -1": 2 * n,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("aggregations (-want +got):\n%s\nstdout:\n%s", diff, out)
	}
}

// TestIOWait checks that a thread's waits for its O_DIRECT requests
// fire io:::wait-start and io:::wait-done in it, as many of each. How
// often the thread leaves the CPU in its waits depends on how fast the
// device is (not at all for a request done before the thread sleeps)
// and on preemption, but 2n waits sleep at least once.
func TestIOWait(t *testing.T) {
	needTracing(t)
	const n = 32
	dir := t.TempDir()
	diskOf(t, dir)
	path := filepath.Join(dir, "kdtrace-io-wait")
	writeSynced(t, path, n)
	th := newIOThread(t)
	prog := strings.ReplaceAll(`BEGIN { printf("go\n"); }
io:::wait-start /tid == TID/ { @["wait-start"] = count(); }
io:::wait-done /tid == TID/ { @["wait-done"] = count(); }
io:::start /tid == TID/ { @["start"] = count(); }`, "TID", strconv.Itoa(th.tid))
	got := aggLines(t, ioRun(t, prog, th, directIO(t, path, n)))
	if w := got["wait-start"]; w < 1 || got["wait-done"] != w || got["start"] != 2*n {
		t.Errorf("start %d, wait-start %d, wait-done %d; want %d, and as many wait-done as wait-start, at least 1",
			got["start"], w, got["wait-done"], 2*n)
	}
}

// ioFileProgram sums, by the file args[2] names, the bytes of the
// requests at io:::start and io:::done, and the range of the file they
// cover, and by its path and directory, the bytes at io:::start.
const ioFileProgram = `
BEGIN { printf("go\n"); }
io:::start /args[2]->fi_name == NAME || args[2]->fi_name == NAME2/ {
	this->rw = args[0]->b_flags & B_READ ? "R" : "W";
	@b[args[2]->fi_name, this->rw, "start", args[2]->fi_fs] = sum(args[0]->b_bcount);
	@lo[args[2]->fi_name, this->rw, "from"] = min(args[2]->fi_offset);
	@hi[args[2]->fi_name, this->rw, "to"] = max(args[2]->fi_offset + args[0]->b_bcount);
	@p[args[2]->fi_name, "path", args[2]->fi_pathname, args[2]->fi_dirname] = sum(args[0]->b_bcount);
}
io:::done /args[2]->fi_name == NAME || args[2]->fi_name == NAME2/ {
	this->rw = args[0]->b_flags & B_READ ? "R" : "W";
	@b[args[2]->fi_name, this->rw, "done", args[2]->fi_fs] = sum(args[0]->b_bcount);
}
END {
	printa("%s %s %s %s %@d\n", @b); printa("%s %s %s %@d\n", @lo); printa("%s %s %s %@d\n", @hi);
	printa("%s %s %s %s %@d\n", @p);
}
`

// onlyMount returns the path of dir from the root of the mount tree,
// its symbolic links resolved, where the file system it is on is
// mounted once, at its root; it skips the test where it is mounted
// more often or not at its root, as the first of its mounts, through
// which fileinfo_t names the files of I/O, is not known here.
func onlyMount(t *testing.T, dir string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	dev := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	var roots []string
	for line := range strings.Lines(string(info)) {
		// ID, parent ID, major:minor, root, mount point, ...
		if f := strings.Fields(line); len(f) > 4 && f[2] == dev {
			roots = append(roots, f[3])
		}
	}
	if len(roots) != 1 || roots[0] != "/" {
		t.Skipf("the file system of %s (%s) is mounted at %q of it: which mount names its files is not known here", dir, dev, roots)
	}
	return dir
}

// bindMount binds dir onto a new directory, a second mount of its file
// system made after the first, and returns that directory; the test's
// cleanup detaches it.
func bindMount(t *testing.T, dir string) string {
	t.Helper()
	bind := t.TempDir()
	if err := unix.Mount(dir, bind, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("bind mount of %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(bind, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", bind, err)
		}
	})
	return bind
}

// ioFileWork returns a function that writes a file of n blocks at path
// through the page cache and syncs it, reads it back after dropping it
// from the cache, and writes block k of a new file at path2.
func ioFileWork(path, path2 string, n, k int) func() error {
	return func() error {
		data := make([]byte, n*ioBlock)
		for i := range data {
			data[i] = byte(i)
		}
		os.Remove(path2) // from a run tried again
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		// Written back, then dropped from the cache and read.
		if err := unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WAIT_BEFORE|
			unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER); err != nil {
			return err
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			return err
		}
		if _, err := f.ReadAt(data, 0); err != nil {
			return err
		}
		f2, err := os.OpenFile(path2, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer f2.Close()
		if _, err := f2.WriteAt(data[:ioBlock], int64(k*ioBlock)); err != nil {
			return err
		}
		return f2.Sync()
	}
}

// TestIOFile runs ioFileWork, the second file written through a bind
// mount of the directory, and checks that io:::start and io:::done's
// args[2] name the files, their file system, and the bytes and offsets
// of the file their requests cover, as the Toolkit's iofileb.d and
// diskhits use them, and their full paths and directories: those
// through the file system's first mount, the second file's too.
func TestIOFile(t *testing.T) {
	needTracing(t)
	const n, k = 64, 5
	dir := t.TempDir()
	disk := diskOf(t, dir)
	dir = onlyMount(t, dir)
	bind := bindMount(t, dir)
	name := fmt.Sprintf("kdtrace-io-%d", os.Getpid())
	name2 := name + "-b"
	path, path2 := filepath.Join(dir, name), filepath.Join(dir, name2)
	prog := strings.NewReplacer("NAME2", strconv.Quote(name2), "NAME", strconv.Quote(name)).Replace(ioFileProgram)
	out := ioRun(t, prog, newIOThread(t), ioFileWork(path, filepath.Join(bind, name2), n, k))
	want := map[string]int64{
		name + " W start " + disk.fs:         n * ioBlock,
		name + " W done " + disk.fs:          n * ioBlock,
		name + " R start " + disk.fs:         n * ioBlock,
		name + " R done " + disk.fs:          n * ioBlock,
		name + " W from":                     0,
		name + " W to":                       n * ioBlock,
		name + " R from":                     0,
		name + " R to":                       n * ioBlock,
		name2 + " W start " + disk.fs:        ioBlock,
		name2 + " W done " + disk.fs:         ioBlock,
		name2 + " W from":                    k * ioBlock,
		name2 + " W to":                      (k + 1) * ioBlock,
		name + " path " + path + " " + dir:   2 * n * ioBlock,
		name2 + " path " + path2 + " " + dir: ioBlock,
	}
	if diff := cmp.Diff(want, aggLines(t, out)); diff != "" {
		t.Errorf("aggregations (-want +got):\n%s\nstdout:\n%s", diff, out)
	}
}

// TestIOSnoop is the shape of the Guide's iosnoop.d, which prints each
// request's device, file and direction at io:::start, here for the
// files of ioFileWork: each line names one of them by its full path.
func TestIOSnoop(t *testing.T) {
	needTracing(t)
	const n, k = 16, 3
	dir := t.TempDir()
	disk := diskOf(t, dir)
	dir = onlyMount(t, dir)
	name := fmt.Sprintf("kdtrace-iosnoop-%d", os.Getpid())
	name2 := name + "-b"
	path, path2 := filepath.Join(dir, name), filepath.Join(dir, name2)
	prog := strings.NewReplacer("NAME2", strconv.Quote(name2), "NAME", strconv.Quote(name)).Replace(
		`BEGIN { printf("go\n"); printf("%10s %58s %2s\n", "DEVICE", "FILE", "RW"); }
io:::start /args[2]->fi_name == NAME || args[2]->fi_name == NAME2/ {
	printf("%10s %58s %2s\n", args[1]->dev_statname, args[2]->fi_pathname, args[0]->b_flags & B_READ ? "R" : "W");
}`)
	out := ioRun(t, prog, newIOThread(t), ioFileWork(path, path2, n, k))
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 2 || lines[1] != fmt.Sprintf("%10s %58s %2s", "DEVICE", "FILE", "RW") {
		t.Fatalf("no heading:\n%s", out)
	}
	got := map[string]bool{}
	for _, l := range lines[2:] {
		got[l] = true
	}
	want := map[string]bool{}
	for _, w := range []string{path + " W", path + " R", path2 + " W"} {
		f := strings.Fields(w)
		want[fmt.Sprintf("%10s %58s %2s", disk.statname, f[0], f[1])] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("iosnoop's lines (-want +got):\n%s\nstdout:\n%s", diff, out)
	}
}

// TestIOList checks that -lv lists the io provider's four probes with
// the argument types the compiler gives them: start and done translate
// their three, whose members compile, and have no args[3]; wait-start
// and wait-done have none.
func TestIOList(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the probe catalog is the running Linux system's")
	}
	var stdout, stderr strings.Builder
	if st := run([]string{"kdtrace", "-lv", "-P", "io"}, &stdout, &stderr); st != 0 {
		t.Fatalf("-lv -P io: exit %d: %s", st, stderr.String())
	}
	var probes []string
	types := map[string][]string{}
	last := ""
	for line := range strings.Lines(stdout.String()) {
		f := strings.Fields(line)
		switch {
		case len(f) == 4 && f[1] == "io":
			last = f[3]
			probes = append(probes, last)
		case len(f) >= 2 && strings.HasPrefix(f[0], "args["):
			types[last] = append(types[last], strings.Join(f[1:], " "))
		}
	}
	if len(probes) == 0 {
		t.Skipf("no io provider here: %s", stderr.String())
	}
	xargs := []string{"bufinfo_t *", "devinfo_t *", "fileinfo_t *"}
	want := map[string][]string{"start": xargs, "done": xargs}
	if diff := cmp.Diff([]string{"start", "done", "wait-start", "wait-done"}, probes); diff != "" {
		t.Errorf("-lv -P io probes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("-lv -P io argument types (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		prog string
		ok   bool
	}{
		{`io:::start, io:::done { trace(args[0]->b_flags & B_READ); trace(args[0]->b_bcount); trace(args[0]->b_blkno);
		trace(args[0]->b_lblkno); trace(args[0]->b_edev); trace(args[1]->dev_major); trace(args[1]->dev_minor);
		trace(args[1]->dev_name); trace(args[1]->dev_statname); trace(args[1]->dev_pathname);
		trace(args[2]->fi_name); trace(args[2]->fi_dirname);
		trace(args[2]->fi_pathname); trace(args[2]->fi_fs); trace(args[2]->fi_offset); trace(args[2]->fi_oflags); }`, true},
		{`io:::wait-start, io:::wait-done { trace(pid); }`, true},
		{`io:::start { trace(args[3]); }`, false},
		{`io:::wait-start { trace(args[0]); }`, false},
	} {
		stderr.Reset()
		st := run([]string{"kdtrace", "-e", "-n", tt.prog}, &stdout, &stderr)
		if (st == 0) != tt.ok {
			t.Errorf("-e -n %q: exit %d, want success %v: %s", tt.prog, st, tt.ok, stderr.String())
		}
	}
}
