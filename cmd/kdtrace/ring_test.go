//go:build linux

package main

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBufsizeEachCPU checks that bufsize is the room of each CPU's
// records, as dtrace's buffer of each CPU: a burst on every CPU, each
// within bufsize but all of them together well past it, is recorded
// whole, without a drop. The records are read only when the tracing
// stops (switchrate of a minute), so the ring must hold them all. With
// a quarter of that bufsize the bursts do not fit, and each CPU's
// firings are printed or reported dropped on that CPU, as dtrace
// reports them ("N drops on CPU n").
func TestBufsizeEachCPU(t *testing.T) {
	needTracing(t)
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Skipf("cannot read this process's CPUs: %v", err)
	}
	var cpus []int
	for cpu := range 1024 {
		if allowed.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	if len(cpus) < 2 {
		t.Skipf("needs two CPUs to run on, has %d", len(cpus))
	}
	// A firing takes 32 bytes of the ring: its header (8), the CPU
	// and speculation before the record (8), the record's header (12)
	// and cpu (4). n of them take 48k, within 64k of a CPU's, and 96k
	// on two CPUs, well past 64k.
	const n = 1536
	dropLine := regexp.MustCompile(`^kdtrace: (\d+) drops? on CPU (\d+)$`)
	prog := fmt.Sprintf(`BEGIN { printf("go\n"); } syscall::getppid:entry /pid == %d/ { printf("%%d\n", cpu); }`, os.Getpid())
	for _, tt := range []struct {
		bufsize int
		drops   bool
	}{{64 << 10, false}, {16 << 10, true}} {
		t.Run(fmt.Sprint(tt.bufsize), func(t *testing.T) {
			out, errs, st := runActive(t, []string{"-q", "-x", fmt.Sprintf("bufsize=%d", tt.bufsize), "-x", "switchrate=1m", "-n", prog}, func() {
				burst(t, cpus, n)
				syscall.Kill(os.Getpid(), syscall.SIGINT)
			})
			if st != 0 {
				t.Errorf("status %d, want 0 (stderr %q)", st, errs)
			}
			printed, dropped := map[int]int{}, map[int]int{}
			for _, line := range strings.Fields(out)[1:] {
				cpu, _ := strconv.Atoi(line)
				printed[cpu]++
			}
			total := 0
			for _, line := range strings.Split(strings.TrimSuffix(errs, "\n"), "\n") {
				m := dropLine.FindStringSubmatch(line)
				if m == nil {
					if line != "" {
						t.Errorf("stderr: %q, not a report of drops", line)
					}
					continue
				}
				k, _ := strconv.Atoi(m[1])
				cpu, _ := strconv.Atoi(m[2])
				dropped[cpu] += k
				total += k
			}
			for _, cpu := range cpus {
				if printed[cpu]+dropped[cpu] != n {
					t.Errorf("CPU %d: %d firings printed and %d dropped, want %d in all", cpu, printed[cpu], dropped[cpu], n)
				}
				delete(printed, cpu)
				delete(dropped, cpu)
			}
			if len(printed) != 0 || len(dropped) != 0 {
				t.Errorf("firings printed %v and dropped %v on CPUs that made none", printed, dropped)
			}
			if tt.drops != (total > 0) {
				t.Errorf("%d drops, want drops %v (stderr %q)", total, tt.drops, errs)
			}
		})
	}
}

// burst makes n getppid calls on each of cpus, from a thread pinned to
// it. Each thread stays locked, and so ends with its goroutine: no
// thread pinned to a CPU is left to the runtime.
func burst(t *testing.T, cpus []int, n int) {
	var wg sync.WaitGroup
	for _, cpu := range cpus {
		wg.Go(func() {
			runtime.LockOSThread()
			var set unix.CPUSet
			set.Set(cpu)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				t.Errorf("pinning a thread to CPU %d: %v", cpu, err)
				return
			}
			for range n {
				syscall.Getppid()
			}
		})
	}
	wg.Wait()
}
