package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
)

// floodBufsize is the bufsize of the flood tests: small, so that the
// system calls of the test, of kdtrace and of the rest of the machine
// fill the ring (floodBufsize of each CPU's) between two reads.
const floodBufsize = 256 << 10

// TestSyscallFlood runs the most common first one-liner, every system
// call's entry traced, while this test makes system calls as fast as
// it can: kdtrace traces its own calls too (its reads of the records,
// its writes of what it prints), and must still read in rounds, stop on
// exit() and on SIGINT, print what it read, report what it had no room
// for in dtrace's words, and hold no more memory than its buffers
// account for.
func TestSyscallFlood(t *testing.T) {
	needTracing(t)
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Skipf("cannot count the CPUs: %v", err)
	}
	const (
		begin = `BEGIN { trace("go"); }`
		trace = `syscall:::entry { trace(arg0); }`
		exit  = `tick-1s { exit(0); }`
	)
	bufsize := fmt.Sprintf("bufsize=%d", floodBufsize)
	// The ring holds bufsize of each CPU's, in a power of two.
	ring := int64(1) << bits.Len64(uint64(floodBufsize*ncpu-1))
	tests := []struct {
		name   string
		args   []string
		isJSON bool
		sigint bool
	}{
		{"exit", []string{"-x", bufsize, "-n", begin, "-n", trace, "-n", exit}, false, false},
		{"sigint", []string{"-x", bufsize, "-n", begin, "-n", trace}, false, true},
		{"json exit", []string{"-x", bufsize, "-O", "json", "-n", begin, "-n", trace, "-n", exit}, true, false},
		{"json sigint", []string{"-x", bufsize, "-O", "json", "-n", begin, "-n", trace}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The same enabling, stopped by BEGIN: what kdtrace
			// holds without the system calls' records.
			base := runFlood(t, slices.Concat(tt.args, []string{"-n", `BEGIN { exit(0); }`}), false)
			if base.status != 0 {
				t.Fatalf("the run stopped at BEGIN: status %d, stderr %q", base.status, base.stderr)
			}
			r := runFlood(t, tt.args, tt.sigint)
			if r.status != 0 {
				t.Errorf("status %d, want 0 (stderr %q)", r.status, r.stderr)
			}
			if n := floodFirings(t, r.stdout, tt.isJSON); n == 0 {
				t.Errorf("no syscall firing printed (stdout %d bytes, stderr %q)", len(r.stdout), r.stderr)
			}
			if !floodDrops.MatchString(r.stderr) {
				t.Errorf("no drops reported, though %d system calls were made into a ring of %d bytes; stderr %q", r.calls, ring, r.stderr)
			}
			if tt.isJSON && !bytes.Contains(r.stdout, []byte(`"type":"drop"`)) {
				t.Errorf("no drop object in the JSON output")
			}
			// The records of a round: the ring's pages, the
			// records copied out of it, their decoding, and as
			// much again before the collector frees them; the
			// enabling's own memory, again as much before it is
			// collected.
			bound := 2*base.maxRSS + 16*ring
			if r.maxRSS > bound {
				t.Errorf("peak RSS %d KiB, over %d KiB: twice the %d KiB of the enabling alone and 16 times the %d KiB ring of bufsize %d KiB on %d CPUs",
					r.maxRSS>>10, bound>>10, base.maxRSS>>10, ring>>10, floodBufsize>>10, ncpu)
			}
			t.Logf("%d calls made, %d bytes printed, peak RSS %d KiB (%d KiB without firings)", r.calls, len(r.stdout), r.maxRSS>>10, base.maxRSS>>10)
		})
	}
}

// TestSpecSizeDefault speculates more firings than dtrace's default
// specsize (32 KiB of each CPU's) holds and never sets it: the firings
// past it are dropped and reported, as dtrace's speculative drops, not
// kept without bound until the commit. Each firing is printed or
// dropped.
func TestSpecSizeDefault(t *testing.T) {
	needTracing(t)
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Skipf("cannot count the CPUs: %v", err)
	}
	// A firing's record is at least 16 bytes: 2048 a CPU, 32 KiB, on
	// the CPU that ran most of them.
	n := 2048 * ncpu
	pid := os.Getpid()
	prog := fmt.Sprintf(`BEGIN { printf("go\n"); s = speculation(); }
syscall::getrusage:entry /pid == %d/ { speculate(s); printf("%%d\n", arg0); }
syscall::getrusage:return /pid == %d && ++i == %d/ { commit(s); }
syscall::getrusage:return /pid == %d && i == %d/ { exit(0); }`, pid, pid, n, pid, n)
	out, errs, st := runActive(t, []string{"-q", "-n", prog}, func() {
		var ru syscall.Rusage
		for range n {
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		}
	})
	if st != 0 {
		t.Fatalf("status %d (stderr %q)", st, errs)
	}
	printed := 0
	for line := range strings.Lines(out) {
		if line == "0\n" {
			printed++
		}
	}
	m := regexp.MustCompile(`(?m)^kdtrace: (\d+) speculative drops?$`).FindAllStringSubmatch(errs, -1)
	dropped := 0
	for _, d := range m {
		k, _ := strconv.Atoi(d[1])
		dropped += k
	}
	if dropped == 0 || printed+dropped != n {
		t.Errorf("%d firings printed and %d dropped, want some dropped and %d in all (stderr %q)", printed, dropped, n, errs)
	}
}

// floodDrops is dtrace's report of a CPU's drops, by kdtrace as the
// test runs it (the test binary).
var floodDrops = regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(filepath.Base(os.Args[0])) + `: \d+ drops? on CPU \d+$`)

// closeOnce closes c unless it is closed.
func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}

// saveHWM writes this process's peak RSS (VmHWM) to file, for the
// test that ran it as kdtrace: the rusage of a child counts the memory
// of the process it was forked from (the test's, the mm it shares until
// it execs), which may be more than kdtrace's own.
func saveHWM(file string) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			os.WriteFile(file, []byte(strings.TrimSpace(v)), 0o600)
		}
	}
}

// A floodRun is what a run of kdtrace under a flood of system calls
// did.
type floodRun struct {
	status int
	stdout []byte
	stderr string
	maxRSS int64 // bytes
	calls  int64 // system calls the test made while kdtrace traced
}

// runFlood runs kdtrace with args as a process of its own, its output
// in a file as `kdtrace … > out`, and makes system calls as fast as it
// can from when kdtrace has printed (a BEGIN clause's record) until it
// exits. With sigint, once kdtrace has reported drops it is sent
// SIGINT, as a user stops it. It fails the test if kdtrace does not
// stop.
func runFlood(t *testing.T, args []string, sigint bool) floodRun {
	t.Helper()
	dir := t.TempDir()
	out, hwm := filepath.Join(dir, "out"), filepath.Join(dir, "hwm")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "KDTRACE_TEST_MAIN=1", "KDTRACE_TEST_HWM="+hwm)
	cmd.Stdout = f
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var errs strings.Builder
	dropped := make(chan struct{})
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer closeOnce(dropped)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			errs.WriteString(sc.Text() + "\n")
			if floodDrops.MatchString(sc.Text()) {
				closeOnce(dropped)
			}
		}
	}()
	exited := make(chan struct{})
	var calls atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		// BEGIN's record, printed in the first round, says the
		// tracing is active.
		for {
			if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
				break
			}
			select {
			case <-exited:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		for {
			select {
			case <-exited:
				return
			default:
			}
			// getrusage(2): a call the syscall provider lists
			// from tracefs's events and from the kernel's
			// handlers alike (getppid's handler has no BTF).
			var ru syscall.Rusage
			for range 1000 {
				syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			}
			calls.Add(1000)
		}
	})
	var waitErr error
	go func() {
		<-read
		waitErr = cmd.Wait()
		close(exited)
	}()
	deadline := time.After(60 * time.Second)
	stuck := func(what string) {
		cmd.Process.Kill()
		<-exited
		wg.Wait()
		t.Fatalf("kdtrace %q %s in a minute (stderr %q)", args, what, errs.String())
	}
	if sigint {
		// The signal comes once kdtrace has reported drops, or not
		// at all if it exited first.
		select {
		case <-dropped:
			cmd.Process.Signal(syscall.SIGINT)
		case <-exited:
		case <-deadline:
			stuck("reported no drops")
		}
	}
	select {
	case <-exited:
	case <-deadline:
		stuck("did not stop")
	}
	wg.Wait()
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		t.Fatal(waitErr)
	}
	stdout, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(hwm)
	if err != nil {
		t.Fatalf("kdtrace told no peak RSS: %v", err)
	}
	kb, ok := strings.CutSuffix(string(b), " kB")
	peak, err := strconv.ParseInt(kb, 10, 64)
	if !ok || err != nil {
		t.Fatalf("VmHWM %q", b)
	}
	return floodRun{status: cmd.ProcessState.ExitCode(), stdout: stdout, stderr: errs.String(),
		maxRSS: peak << 10, calls: calls.Load()}
}

// floodFirings counts the syscall entries printed: lines ending in
// :entry and a value in dtrace's output, probe objects of the syscall
// provider in JSON.
func floodFirings(t *testing.T, out []byte, isJSON bool) int {
	t.Helper()
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Bytes()
		if !isJSON {
			if f := strings.Fields(string(line)); len(f) == 4 && strings.HasSuffix(f[2], ":entry") {
				n++
			}
			continue
		}
		var o struct {
			Type  string
			Probe struct{ Provider, Name string }
		}
		if err := json.Unmarshal(line, &o); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", line, err)
		}
		if o.Type == "probe" && o.Probe.Provider == "syscall" && o.Probe.Name == "entry" {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
