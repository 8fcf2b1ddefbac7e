package attach

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// cpuPMU is where the kernel lists the CPU's performance monitoring
// unit, which counts the hardware events.
const cpuPMU = "/sys/bus/event_source/devices/cpu"

// PerfEvents attaches prog, a perf event program, to ev on every online
// CPU. An event the machine cannot count is refused in a sentence that
// says so.
func PerfEvents(prog *ebpf.Program, ev PerfEvent) (*attachment, error) {
	if ev.Period == 0 {
		return nil, fmt.Errorf("%s: the period is 0", ev.Name)
	}
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, err
	}
	var bits uint64
	if ev.ExcludeUser {
		bits |= unix.PerfBitExcludeUser
	}
	if ev.ExcludeKernel {
		bits |= unix.PerfBitExcludeKernel
	}
	a := &attachment{}
	for _, cpu := range cpus {
		// Period mode: the event fires every Period, exactly, where
		// frequency mode would adjust the period as it goes.
		attr := unix.PerfEventAttr{Type: ev.Type, Config: ev.Config, Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
			Sample: ev.Period, Bits: bits}
		fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENODEV) {
				return a.fail(fmt.Errorf("%s: this machine cannot count the event (perf_event_open: %w)%s", ev.Name, err, pmuHint(ev.Type)))
			}
			return a.fail(fmt.Errorf("%s: opening its perf event on CPU %d: %w", ev.Name, cpu, err))
		}
		f := os.NewFile(uintptr(fd), "perf_event "+ev.Name)
		a.add(f)
		l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent})
		if err != nil {
			return a.fail(fmt.Errorf("%s: attaching to its perf event on CPU %d: %w", ev.Name, cpu, err))
		}
		a.add(l)
	}
	return a, nil
}

// pmuHint says why a hardware event cannot be counted, where the kernel
// lists no CPU performance monitoring unit: a virtual machine whose
// hypervisor does not expose the counters, usually.
func pmuHint(typ uint32) string {
	if typ != unix.PERF_TYPE_HARDWARE {
		return ""
	}
	if _, err := os.Stat(cpuPMU); err == nil {
		return ""
	}
	return ": it has no hardware performance counters (no " + cpuPMU + ")"
}
