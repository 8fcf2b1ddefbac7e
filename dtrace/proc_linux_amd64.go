package dtrace

import "golang.org/x/sys/unix"

// breakpoint is int3.
var breakpoint = []byte{0xcc}

// trapPC returns the address of the breakpoint the stopped process
// hit: int3 leaves the program counter after it.
func trapPC(pid int) (uint64, error) {
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(pid, &regs); err != nil {
		return 0, err
	}
	return regs.Rip - uint64(len(breakpoint)), nil
}

// setPC sets the stopped process's program counter.
func setPC(pid int, pc uint64) error {
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(pid, &regs); err != nil {
		return err
	}
	regs.Rip = pc
	return unix.PtraceSetRegs(pid, &regs)
}
