package bpf

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/kdtrace/kdtrace/dif"
)

// vtimestamp is the time the current thread has spent on a CPU, in
// nanoseconds, as dtrace's t_dtrace_vtime counts it: it grows while the
// thread runs and stands still while it is off the CPU.
//
// The kernel keeps a thread's CPU time in se.sum_exec_runtime, but
// brings it up to date only at scheduling events and the clock tick,
// so that alone it lags by up to a tick: too coarse to time a system
// call. A program using vtimestamp therefore has the runtime attach
// VtimeProgram to the sched_switch tracepoint, which keeps MapVtime: for
// each thread, the CPU time it had when it last came onto a CPU and
// when that was (vtimeAcc, vtimeStart). While the thread runs, its
// vtimestamp is that time plus the time since; a thread without an
// entry (one that has not been switched in since the tracing began, or
// whose entry the map's LRU dropped) reads se.sum_exec_runtime. When a
// thread leaves the CPU the time of its slice is added to its entry,
// and an exiting thread's entry is deleted.
//
// The times are bpf_ktime_get_ns's, and the time since is counted to
// the firing's time (now), as timestamp's, so that vtimestamp
// counts time spent in interrupts on the thread's CPU, as dtrace's
// does; the kernel's own accounting may leave that out, so a thread's
// vtimestamp may run ahead of its sum_exec_runtime.
const (
	mapVtime     = "kd_vtime" // LRU hash: thread ID (u32) → vtimeAcc, vtimeStart
	vtimeAcc     = 0          // CPU time at the last switch in, plus the slices since
	vtimeStart   = 8          // when the thread last came onto a CPU; 0 while it is off
	vtimeSize    = 16
	vtimeThreads = 1 << 15 // entries of MapVtime: threads tracked at once
)

// taskDead is TASK_DEAD, sched_switch's prev_state of an exiting thread.
const taskDead = 0x80

// usesVtime reports whether o reads vtimestamp.
func usesVtime(o *dif.Object) bool {
	for _, in := range o.Code {
		if in.Op() == dif.LDGS && in.Var() == dif.VarVtimestamp {
			return true
		}
	}
	return false
}

// now leaves the firing's time in R0: CLOCK_MONOTONIC (bpf_ktime_get_ns,
// nanoseconds since boot not counting suspend, as dtrace's gethrtime),
// taken once as the firing starts if any of the probe program's
// clauses reads it or records (readsTime), and kept at stateNow. As
// dtrace's dtms_timestamp, it is one time for all the clauses of a
// firing: timestamp, vtimestamp, walltimestamp and the records' headers
// agree, and timestamp - timestamp is 0.
func (t *translator) now() {
	t.emit(asm.LoadMem(asm.R0, rState, stateNow, asm.DWord))
}

// readsTime reports whether a firing of p needs its time: a clause
// records (each record's header has it), or one of its DIFOs reads
// timestamp, vtimestamp or walltimestamp. The records of ERROR's
// clauses, which run only when a clause faults, take it then.
func readsTime(p *ProbeProgram) bool {
	var os []*dif.Object
	for i, cs := range [][]Clause{p.Clauses, p.Error} {
		for _, c := range cs {
			if i == 0 && c.EP.Size > 0 {
				return true
			}
			os = append(os, difos(c.ECB)...)
		}
	}
	for _, st := range p.Sites {
		os = append(os, st.difos()...)
	}
	for _, o := range os {
		for _, in := range o.Code {
			if in.Op() != dif.LDGS {
				continue
			}
			switch in.Var() {
			case dif.VarTimestamp, dif.VarVtimestamp, dif.VarWalltimestamp:
				return true
			}
		}
	}
	return false
}

// vtimestamp translates a load of vtimestamp into R0.
func (t *translator) vtimestamp(pc int, in dif.Instr, local func(string) string) error {
	o, err := kernelTask()
	if err != nil {
		return &Error{pc, in, fmt.Sprintf("vtimestamp needs the kernel's struct task_struct: %v", err)}
	}
	// The thread's id is the key; 0, each CPU's idle task, has none.
	t.half(asm.FnGetCurrentPidTgid, false)
	t.emit(asm.JEq.Imm(asm.R0, 0, local("sum")))
	t.emit(asm.StoreMem(asm.R10, bufSlot, asm.R0, asm.DWord))
	t.mapPtr(asm.R1, mapVtime)
	t.emit(asm.Mov.Reg(asm.R2, asm.R10))
	t.emit(asm.Add.Imm(asm.R2, bufSlot))
	t.helper(asm.FnMapLookupElem)
	t.emit(asm.JEq.Imm(asm.R0, 0, local("sum")))
	t.emit(asm.LoadMem(asm.R1, asm.R0, vtimeAcc, asm.DWord))
	t.emit(asm.StoreMem(asm.R10, keySlot, asm.R1, asm.DWord))
	t.emit(asm.LoadMem(asm.R1, asm.R0, vtimeStart, asm.DWord))
	t.emit(asm.StoreMem(asm.R10, keySlot+8, asm.R1, asm.DWord))
	t.emit(asm.Mov.Reg(asm.R0, asm.R1))
	t.emit(asm.JEq.Imm(asm.R1, 0, local("acc")))
	t.now()
	t.emit(asm.LoadMem(asm.R1, asm.R10, keySlot+8, asm.DWord))
	t.emit(asm.Sub.Reg(asm.R0, asm.R1))
	t.mark(local("acc"))
	t.emit(asm.LoadMem(asm.R1, asm.R10, keySlot, asm.DWord))
	t.emit(asm.Add.Reg(asm.R0, asm.R1))
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("sum"))
	t.emit(asm.FnGetCurrentTask.Call())
	t.emit(asm.Mov.Reg(asm.R3, asm.R0))
	t.emit(asm.Add.Imm(asm.R3, int32(o.sumExec)))
	t.emit(storeImm64(asm.R10, bufSlot, 0))
	t.emit(asm.Mov.Reg(asm.R1, asm.R10))
	t.emit(asm.Add.Imm(asm.R1, bufSlot))
	t.emit(asm.Mov.Imm(asm.R2, 8))
	t.emit(asm.FnProbeReadKernel.Call())
	t.emit(asm.LoadMem(asm.R0, asm.R10, bufSlot, asm.DWord))
	t.mark(local("done"))
	return nil
}

// VtimeProgram returns the raw tracepoint program for sched_switch
// that keeps MapVtime (see vtimestamp). Its context is the
// tracepoint's arguments: preempt, prev, next, prev_state.
func VtimeProgram() (asm.Instructions, error) {
	o, err := kernelTask()
	if err != nil {
		return nil, fmt.Errorf("bpf: vtimestamp needs the kernel's struct task_struct: %w", err)
	}
	const (
		now  = -8  // the time of the switch
		key  = -16 // a thread's id, a u32 in 8 bytes
		elem = -32 // a new entry: vtimeAcc, vtimeStart
	)
	// readTask reads size bytes at off in the task of context word w
	// into the stack at dst, zeroed first.
	readTask := func(w int16, off int16, size int32, dst int16) asm.Instructions {
		return asm.Instructions{
			storeImm64(asm.R10, dst, 0),
			asm.LoadMem(asm.R3, asm.R6, 8*w, asm.DWord),
			asm.Add.Imm(asm.R3, int32(off)),
			asm.Mov.Reg(asm.R1, asm.R10),
			asm.Add.Imm(asm.R1, int32(dst)),
			asm.Mov.Imm(asm.R2, size),
			asm.FnProbeReadKernel.Call(),
		}
	}
	lookup := asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference(mapVtime),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, key),
		asm.FnMapLookupElem.Call(),
	}
	var insns asm.Instructions
	insns = append(insns,
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.R10, now, asm.R0, asm.DWord),
	)
	// prev leaves the CPU: its slice is added to its entry, or its
	// entry is deleted if it is exiting.
	insns = append(insns, readTask(1, o.pid, 4, key)...)
	insns = append(insns,
		asm.LoadMem(asm.R1, asm.R6, 8*3, asm.DWord),
		asm.And.Imm(asm.R1, taskDead),
		asm.JEq.Imm(asm.R1, 0, "prev"),
		asm.LoadMapPtr(asm.R1, 0).WithReference(mapVtime),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, key),
		asm.FnMapDeleteElem.Call(),
		asm.Ja.Label("next"),
	)
	insns = append(insns, lookup...)
	insns[len(insns)-len(lookup)] = insns[len(insns)-len(lookup)].WithSymbol("prev")
	insns = append(insns,
		asm.JEq.Imm(asm.R0, 0, "next"),
		asm.LoadMem(asm.R1, asm.R0, vtimeStart, asm.DWord),
		asm.JEq.Imm(asm.R1, 0, "next"),
		asm.LoadMem(asm.R2, asm.R10, now, asm.DWord),
		asm.Sub.Reg(asm.R2, asm.R1),
		asm.LoadMem(asm.R1, asm.R0, vtimeAcc, asm.DWord),
		asm.Add.Reg(asm.R1, asm.R2),
		asm.StoreMem(asm.R0, vtimeAcc, asm.R1, asm.DWord),
		storeImm64(asm.R0, vtimeStart, 0),
	)
	// next comes onto the CPU: its entry starts a slice, or a new one
	// starts from the CPU time the kernel counted for it.
	next := readTask(2, o.pid, 4, key)
	next[0] = next[0].WithSymbol("next")
	insns = append(insns, next...)
	insns = append(insns,
		asm.LoadMem(asm.R1, asm.R10, key, asm.DWord),
		asm.JEq.Imm(asm.R1, 0, "out"),
	)
	insns = append(insns, lookup...)
	insns = append(insns,
		asm.JEq.Imm(asm.R0, 0, "new"),
		asm.LoadMem(asm.R1, asm.R10, now, asm.DWord),
		asm.StoreMem(asm.R0, vtimeStart, asm.R1, asm.DWord),
		asm.Ja.Label("out"),
	)
	fresh := readTask(2, o.sumExec, 8, elem+vtimeAcc)
	fresh[0] = fresh[0].WithSymbol("new")
	insns = append(insns, fresh...)
	insns = append(insns,
		asm.LoadMem(asm.R1, asm.R10, now, asm.DWord),
		asm.StoreMem(asm.R10, elem+vtimeStart, asm.R1, asm.DWord),
		asm.LoadMapPtr(asm.R1, 0).WithReference(mapVtime),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, key),
		asm.Mov.Reg(asm.R3, asm.R10),
		asm.Add.Imm(asm.R3, elem),
		asm.Mov.Imm(asm.R4, 0), // BPF_ANY
		asm.FnMapUpdateElem.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	)
	return insns, nil
}

// LoadVtime loads VtimeProgram with the runtime's MapVtime, for the
// caller to attach to the sched_switch tracepoint; nil if no DIFO of
// the runtime's Layout reads vtimestamp.
func (r *Runtime) LoadVtime() (*ebpf.Program, error) {
	if r.Vtime == nil {
		return nil, nil
	}
	insns, err := VtimeProgram()
	if err != nil {
		return nil, err
	}
	return r.load("kdt_vtime", CtxRawTP, insns, nil, ebpf.AttachNone)
}
