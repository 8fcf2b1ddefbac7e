package vm

import (
	"fmt"

	"github.com/kdtrace/kdtrace/dif"
)

// FaultCode is the kind of a fault, numbered as dtrace.h numbers them
// (DTRACEFLT_*): the value the ERROR probe passes as arg4.
type FaultCode int

// The faults DIF can raise.
const (
	FaultUnknown   FaultCode = 0 // DTRACEFLT_UNKNOWN
	FaultBadAddr   FaultCode = 1 // DTRACEFLT_BADADDR: a load or store at an address that cannot be accessed
	FaultBadAlign  FaultCode = 2 // DTRACEFLT_BADALIGN: a misaligned store
	FaultIllOp     FaultCode = 3 // DTRACEFLT_ILLOP: an illegal operation or argument
	FaultDivZero   FaultCode = 4 // DTRACEFLT_DIVZERO: division or remainder by zero
	FaultNoScratch FaultCode = 5 // DTRACEFLT_NOSCRATCH: scratch memory exhausted
	FaultKPriv     FaultCode = 6 // DTRACEFLT_KPRIV: a read of kernel memory without the privilege
	FaultUPriv     FaultCode = 7 // DTRACEFLT_UPRIV: a read of user memory without the privilege
	FaultTupOFlow  FaultCode = 8 // DTRACEFLT_TUPOFLOW: a push beyond the tuple stack
	FaultBadStack  FaultCode = 9 // DTRACEFLT_BADSTACK
)

var faultNames = [...]string{
	FaultBadAddr:   "invalid address",
	FaultBadAlign:  "invalid alignment",
	FaultIllOp:     "illegal operation",
	FaultDivZero:   "divide-by-zero",
	FaultNoScratch: "out of scratch space",
	FaultKPriv:     "invalid kernel access",
	FaultUPriv:     "invalid user access",
	FaultTupOFlow:  "tuple stack overflow",
	FaultBadStack:  "bad stack",
}

// String returns the words dtrace prints for the fault
// (dtrace_faultstr).
func (c FaultCode) String() string {
	if c > 0 && int(c) < len(faultNames) {
		return faultNames[c]
	}
	return "unknown fault"
}

// hasAddr reports whether the kernel records an address (cpuc_dtrace_illval)
// with the fault.
func (c FaultCode) hasAddr() bool {
	switch c {
	case FaultBadAddr, FaultBadAlign, FaultKPriv, FaultUPriv, FaultBadStack:
		return true
	}
	return false
}

// A Fault is a DIF fault: the kernel would stop the DIFO, discard what
// its clause recorded and fire the ERROR probe with these values.
type Fault struct {
	Code FaultCode
	// PC is the index of the faulting instruction; PC·4 is the DIF
	// offset dtrace reports (dtms_fltoffs).
	PC    int
	Instr dif.Instr
	// Addr is the address at fault (cpuc_dtrace_illval) for faults of
	// memory: BADADDR, BADALIGN, KPRIV, UPRIV.
	Addr uint64
}

// Offset returns the byte offset of the faulting instruction in the
// DIF, the number the ERROR probe passes as arg3.
func (f *Fault) Offset() int { return f.PC * dif.InstrSize }

func (f *Fault) Error() string {
	s := "vm: " + f.Code.String()
	if f.Code.hasAddr() {
		s += fmt.Sprintf(" (0x%x)", f.Addr)
	}
	return s + fmt.Sprintf(" at DIF offset %d (instruction %d: %v)", f.Offset(), f.PC, f.Instr)
}

// An UnsupportedError reports an instruction the machine cannot run
// outside a kernel: a subroutine that reads kernel structures (mutex_owned,
// rw_read_held, …) or a translator reference.
type UnsupportedError struct {
	PC    int
	Instr dif.Instr
	What  string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("vm: %s needs a kernel (instruction %d: %v)", e.What, e.PC, e.Instr)
}

// fault makes a Fault whose place the interpreter fills in.
func fault(c FaultCode, addr uint64) *Fault { return &Fault{Code: c, Addr: addr, PC: -1} }

func unsupported(what string) *UnsupportedError { return &UnsupportedError{What: what, PC: -1} }

// locate places an error raised by instruction pc.
func locate(err error, pc int, in dif.Instr) error {
	switch e := err.(type) {
	case *Fault:
		if e.PC < 0 {
			e.PC, e.Instr = pc, in
		}
	case *UnsupportedError:
		if e.PC < 0 {
			e.PC, e.Instr = pc, in
		}
	}
	return err
}
