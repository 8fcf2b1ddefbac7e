package vm

import "github.com/kdtrace/kdtrace/dif"

// Context is what the kernel knows of a probe firing and the thread it
// fires in: the values of D's built-in variables. The zero Context is a
// firing with every value zero and every string empty.
type Context struct {
	Args  []uint64 // args[] and arg0 … arg9; an index beyond reads 0
	Regs  []uint64 // regs[], the firing's trap frame; nil: there is none
	URegs []uint64 // uregs[], the thread's user registers; nil: none

	EPID uint64 // epid: the enabled probe
	ID   uint64 // id: the probe

	ProbeProv string // probeprov
	ProbeMod  string // probemod
	ProbeFunc string // probefunc
	ProbeName string // probename

	PID      uint64 // pid
	PPID     uint64 // ppid
	TID      uint64 // tid
	UID      uint64 // uid
	GID      uint64 // gid
	Execname string // execname
	Execargs string // execargs, the arguments separated by spaces
	Zonename string // zonename: the jail's name on FreeBSD
	Errno    uint64 // errno
	CPU      uint64 // cpu
	IPL      uint64 // ipl: the interrupt priority level the probe fires at

	Curthread uint64 // curthread: the address of the thread

	Timestamp     uint64 // timestamp, nanoseconds
	Vtimestamp    uint64 // vtimestamp
	Walltimestamp uint64 // walltimestamp, nanoseconds since the epoch

	Caller      uint64 // caller
	UCaller     uint64 // ucaller
	StackDepth  uint64 // stackdepth
	UStackDepth uint64 // ustackdepth
}

// variable returns the value of a built-in variable, element ndx of a
// built-in array (dtrace_dif_variable).
func (m *Machine) variable(ctx *Context, id uint32, ndx uint64) (uint64, error) {
	if id >= dif.VarArg0 && id <= dif.VarArg9 {
		ndx = uint64(id - dif.VarArg0)
		id = dif.VarArgs
	}
	switch id {
	case dif.VarArgs:
		if ndx < uint64(len(ctx.Args)) {
			return ctx.Args[ndx], nil
		}
		return 0, nil
	case dif.VarRegs, dif.VarUregs:
		regs := ctx.Regs
		if id == dif.VarUregs {
			regs = ctx.URegs
		}
		if regs == nil {
			return 0, fault(FaultBadAddr, 0)
		}
		if ndx >= uint64(len(regs)) {
			return 0, fault(FaultIllOp, 0)
		}
		return regs[ndx], nil
	case dif.VarCurthread:
		return ctx.Curthread, nil
	case dif.VarTimestamp:
		return ctx.Timestamp, nil
	case dif.VarVtimestamp:
		return ctx.Vtimestamp, nil
	case dif.VarWalltimestamp:
		return ctx.Walltimestamp, nil
	case dif.VarEPID:
		return ctx.EPID, nil
	case dif.VarID:
		return ctx.ID, nil
	case dif.VarStackdepth:
		return ctx.StackDepth, nil
	case dif.VarUstackdepth:
		return ctx.UStackDepth, nil
	case dif.VarCaller:
		return ctx.Caller, nil
	case dif.VarUcaller:
		return ctx.UCaller, nil
	case dif.VarProbeprov:
		return m.varstr(ctx.ProbeProv)
	case dif.VarProbemod:
		return m.varstr(ctx.ProbeMod)
	case dif.VarProbefunc:
		return m.varstr(ctx.ProbeFunc)
	case dif.VarProbename:
		return m.varstr(ctx.ProbeName)
	case dif.VarPID:
		return ctx.PID, nil
	case dif.VarPPID:
		return ctx.PPID, nil
	case dif.VarTID:
		return ctx.TID, nil
	case dif.VarExecname:
		return m.varstr(ctx.Execname)
	case dif.VarExecargs:
		return m.varstr(ctx.Execargs)
	case dif.VarZonename:
		return m.varstr(ctx.Zonename)
	case dif.VarUID:
		return ctx.UID, nil
	case dif.VarGID:
		return ctx.GID, nil
	case dif.VarErrno:
		return ctx.Errno, nil
	case dif.VarCPU:
		return ctx.CPU, nil
	case dif.VarIPL:
		// As illumos's dtrace_dif_variable (FreeBSD's faults ILLOP
		// on it): 0 without kernel privilege (dtrace_priv_kernel).
		if m.cfg.Restricted {
			return 0, nil
		}
		return ctx.IPL, nil
	}
	return 0, fault(FaultIllOp, 0)
}

// varstr copies a string of the context into scratch, as
// dtrace_dif_varstr does for a consumer that may not read the kernel's
// copy, and returns its address.
func (m *Machine) varstr(s string) (uint64, error) {
	if n := int(m.cfg.StrSize) - 1; len(s) > n {
		s = s[:n]
	}
	size := uint64(len(s)) + 1
	if !m.inScratch(size) {
		return 0, fault(FaultNoScratch, 0)
	}
	addr, buf := m.scratchNext()
	copy(buf, s)
	buf[len(s)] = 0
	m.scratchPtr += size
	return addr, nil
}
