package attach

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// Profile attaches prog, a perf event program, to a cpu-clock event on
// every online CPU that fires every interval of the CPU's time, as
// profile-N fires. A CPU that is idle does not run its clock, so it
// fires little or not at all.
func Profile(prog *ebpf.Program, interval time.Duration) (*attachment, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("profile interval %v is not positive", interval)
	}
	// cpu-clock counts nanoseconds: the sample period is the interval.
	return PerfEvents(prog, PerfEvent{Name: "cpu-clock", Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Period: uint64(interval.Nanoseconds())})
}

// onlineCPUs returns the online CPUs' numbers, from the kernel's list
// such as "0-3,5".
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, fmt.Errorf("listing the online CPUs: %w", err)
	}
	cpus, err := parseCPUList(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("listing the online CPUs: /sys/devices/system/cpu/online: %w", err)
	}
	return cpus, nil
}

func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad CPU list %q", s)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				return nil, fmt.Errorf("bad CPU list %q", s)
			}
		}
		for c := first; c <= last; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
