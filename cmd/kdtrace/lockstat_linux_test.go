package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tracepointCounters opens a perf counter of tracepoint system:event
// on each CPU, counting only the events filter (the kernel's event
// filter syntax) passes.
func tracepointCounters(t *testing.T, system, event, filter string) []*os.File {
	t.Helper()
	if _, err := os.Stat("/sys/kernel/tracing/events"); err != nil {
		if err := unix.Mount("nodev", "/sys/kernel/tracing", "tracefs", 0, ""); err != nil {
			t.Skipf("mounting tracefs: %v", err)
		}
	}
	b, err := os.ReadFile(filepath.Join("/sys/kernel/tracing/events", system, event, "id"))
	if err != nil {
		t.Skipf("no tracepoint %s:%s: %v", system, event, err)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	var fs []*os.File
	for cpu := range runtime.NumCPU() {
		// Disabled until filtered: it would count every event till then.
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_TRACEPOINT, Config: id, Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
			Bits: unix.PerfBitDisabled}
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			t.Fatalf("perf_event_open %s:%s on CPU %d: %v", system, event, cpu, err)
		}
		f := os.NewFile(uintptr(fd), system+":"+event)
		t.Cleanup(func() { f.Close() })
		if err := unix.IoctlSetString(fd, unix.PERF_EVENT_IOC_SET_FILTER, filter); err != nil {
			t.Fatalf("filtering %s:%s with %q: %v", system, event, filter, err)
		}
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_ENABLE, 0); err != nil {
			t.Fatalf("enabling %s:%s: %v", system, event, err)
		}
		fs = append(fs, f)
	}
	return fs
}

// readCounters returns the sum of perf counters' values.
func readCounters(t *testing.T, fs []*os.File) uint64 {
	t.Helper()
	n := uint64(0)
	for _, f := range fs {
		var b [8]byte
		if _, err := f.Read(b[:]); err != nil {
			t.Fatalf("reading %s: %v", f.Name(), err)
		}
		n += binary.NativeEndian.Uint64(b[:])
	}
	return n
}

// TestLockstatContention counts the contention of one mutex, a pipe's,
// which writers sharing the pipe take at each write, through lockstat's
// adaptive-spin and adaptive-block, and checks the counts against the
// kernel's own, from perf counters of the lock tracepoints filtered by
// the mutex's address: each contended mutex_lock ends at one
// lock:contention_end, so adaptive-spin and adaptive-block together fire
// as many times; those that sleep pass lock:contention_begin flagged
// MUTEX (0x20) once at least, so adaptive-block fires at most as many
// times as that, and only if it passed.
func TestLockstatContention(t *testing.T) {
	needTracing(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// A pipe of 1 MiB: a writer holds its mutex while it copies its
	// 64 KiB in, where in a full pipe it would let it go and wait.
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 1<<20); err != nil {
		t.Logf("F_SETPIPE_SZ: %v", err)
	}
	// The pipe's mutex is the first member of its pipe_inode_info, the
	// file's private data.
	const where = `BEGIN { printf("go\n"); }
syscall::write:entry /pid == $pid && arg0 == $1/ { printf("mutex %x\n", (uint64_t)curthread->files->fdt->fd[arg0]->private_data); exit(0); }`
	out, errs, st := runActive(t, []string{"-q", "-n", where, strconv.Itoa(int(w.Fd()))}, func() {
		w.Write([]byte{1})
		r.Read(make([]byte, 1))
	})
	m := regexp.MustCompile(`(?m)^mutex ([0-9a-f]+)$`).FindStringSubmatch(out)
	if st != 0 || m == nil {
		t.Fatalf("finding the pipe's mutex: status %d, stdout %q, stderr %q", st, out, errs)
	}
	mutex := "0x" + m[1]
	addr, err := strconv.ParseUint(m[1], 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	filterAddr := strconv.FormatUint(addr, 10)
	ends := tracepointCounters(t, "lock", "contention_end", "ret == 0 && lock_addr == "+filterAddr)
	slept := tracepointCounters(t, "lock", "contention_begin", "flags == 32 && lock_addr == "+filterAddr)
	spun := tracepointCounters(t, "lock", "contention_begin", "flags == 33 && lock_addr == "+filterAddr)
	const prog = `BEGIN { printf("go\n"); }
lockstat:::adaptive-block /(uint64_t)args[0] == $1/ { @b = count(); }
lockstat:::adaptive-spin /(uint64_t)args[0] == $1/ { @s = count(); }
END { printa("block %@d\n", @b); printa("spin %@d\n", @s); }`
	var nends, nslept, nspun uint64
	out, errs, st = runActive(t, []string{"-q", "-n", prog, mutex}, func() {
		read := make(chan error)
		go func() {
			_, err := io.Copy(io.Discard, r)
			read <- err
		}()
		var dds []*exec.Cmd
		for range 8 {
			dd := exec.Command("dd", "if=/dev/zero", "bs=64k", "count=500", "status=none")
			dd.Stdout = w
			if err := dd.Start(); err != nil {
				t.Error(err)
				break
			}
			dds = append(dds, dd)
		}
		for _, dd := range dds {
			if err := dd.Wait(); err != nil {
				t.Errorf("dd: %v", err)
			}
		}
		w.Close()
		if err := <-read; err != nil {
			t.Errorf("reading the pipe: %v", err)
		}
		nends, nslept, nspun = readCounters(t, ends), readCounters(t, slept), readCounters(t, spun)
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	})
	if st != 0 {
		t.Fatalf("status %d: %s", st, errs)
	}
	count := func(name string) uint64 { return uint64(labeled(out, name)) }
	block, spin := count("block"), count("spin")
	t.Logf("mutex %s: %d contended, passing MUTEX|SPIN %d times, MUTEX %d times; lockstat: %d adaptive-spin, %d adaptive-block", mutex, nends, nspun, nslept, spin, block)
	if nends == 0 {
		t.Skip("the writers contended no mutex")
	}
	// A waiter passes MUTEX|SPIN once on the way in and once more for
	// each wakeup it spins after, then MUTEX unless the spin took the
	// lock: those that never slept are at most the difference.
	if spin+block != nends || block > nslept || (block == 0) != (nslept == 0) || spin > nspun-nslept {
		t.Errorf("adaptive-spin %d, adaptive-block %d; the kernel counts %d contended, passing MUTEX|SPIN %d times, MUTEX %d times:\n%s%s",
			spin, block, nends, nspun, nslept, out, errs)
	}
}

// TestLockstatAcquireNeedsKprobes checks that on a kernel without
// kprobes or BPF trampolines lockstat's acquire and release probes,
// which fire on entering the kernel's lock functions, are refused in a
// sentence that says why, lockstat::: with them, and that nothing is
// left loaded.
func TestLockstatAcquireNeedsKprobes(t *testing.T) {
	needTracing(t)
	ke, terr := noKernelFunctions(t, "this kernel has BPF trampolines or kprobes")
	before := loadedPrograms(t)
	// A glob leaves them out instead (TestGlobLeavesOutFunctions).
	for _, desc := range []string{"lockstat:::adaptive-acquire", "lockstat:::adaptive-release"} {
		var stdout, stderr bytes.Buffer
		st := run([]string{"kdtrace", "-n", desc + " { exit(0); }"}, &stdout, &stderr)
		want := fmt.Sprintf("kdtrace: could not enable tracing: this kernel cannot put lockstat:vmlinux::adaptive-acquire at mutex_lock() in place: it has no BPF trampolines (%v), and %s\n", terr, ke.Reason)
		if desc == "lockstat:::adaptive-release" {
			want = strings.ReplaceAll(want, "adaptive-acquire at mutex_lock()", "adaptive-release at mutex_unlock()")
		}
		if st != 1 || stderr.String() != want {
			t.Errorf("%s: status %d, stderr %q; want 1, %q", desc, st, stderr.String(), want)
		}
	}
	if after := loadedPrograms(t); after != before {
		t.Errorf("%d BPF programs held before the runs, %d after", before, after)
	}
}
