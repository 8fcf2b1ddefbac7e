package attach

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// Syscalls attaches prog, a raw tracepoint program, to every system
// call's entry (the raw tracepoint sys_enter) or, with ret, its return
// (sys_exit). The program's context holds the registers and the call's
// number (entry) or return value (return), and the program tells the
// calls apart by the number (SyscallNumber): one attachment serves every
// syscall probe of a program.
func Syscalls(prog *ebpf.Program, ret bool) (*attachment, error) {
	name := "sys_enter"
	if ret {
		name = "sys_exit"
	}
	return RawTracepoint(prog, name)
}

// RawTracepoint attaches prog, a raw tracepoint program, to the kernel's
// tracepoint name ("sched_switch"), which need not be in tracefs.
func RawTracepoint(prog *ebpf.Program, name string) (*attachment, error) {
	l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: name, Program: prog})
	if err != nil {
		return nil, fmt.Errorf("attaching to raw tracepoint %s: %w", name, err)
	}
	a := &attachment{}
	a.add(l)
	return a, nil
}

// Tracepoint attaches prog, a tracepoint program, to tracepoint
// system:event ("sched", "sched_process_exec") through a perf event.
// The event's ID comes from tracefs, which must be mounted.
func Tracepoint(prog *ebpf.Program, system, event string) (*attachment, error) {
	if err := haveTracefs(); err != nil {
		return nil, fmt.Errorf("attaching to tracepoint %s:%s: %w", system, event, err)
	}
	l, err := link.Tracepoint(system, event, prog, nil)
	if err != nil {
		return nil, fmt.Errorf("attaching to tracepoint %s:%s: %w", system, event, err)
	}
	a := &attachment{}
	a.add(l)
	return a, nil
}

// haveTracefs returns nil if tracefs is mounted where cilium/ebpf looks
// for it, else one sentence saying how to mount it: systemd mounts it
// at boot, but containers and minimal systems often do not.
func haveTracefs() error {
	for _, dir := range tracefsDirs {
		if _, err := os.Stat(dir + "/events"); err == nil {
			return nil
		}
	}
	return errors.New("tracefs is not mounted (mount it with: mount -t tracefs nodev /sys/kernel/tracing)")
}
