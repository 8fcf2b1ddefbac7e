package dtrace

import "golang.org/x/sys/unix"

// breakpoint is brk #0.
var breakpoint = []byte{0x00, 0x00, 0x20, 0xd4}

// trapPC returns the address of the breakpoint the stopped process
// hit: brk leaves the program counter on it.
func trapPC(pid int) (uint64, error) {
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(pid, &regs); err != nil {
		return 0, err
	}
	return regs.Pc, nil
}

// setPC sets the stopped process's program counter.
func setPC(pid int, pc uint64) error {
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(pid, &regs); err != nil {
		return err
	}
	regs.Pc = pc
	return unix.PtraceSetRegs(pid, &regs)
}
