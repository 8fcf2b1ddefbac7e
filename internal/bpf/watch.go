package bpf

import (
	"fmt"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// The programs that stop a process where the probes it will run into
// must be made first, as dtrace stops a process at its run-time
// linker's events and at exec: each stops the current process (SIGSTOP,
// taken on its way back to user space) and puts its ID, a 32-bit word,
// in a ring buffer, for the consumer to make the probes and set the
// process running again (SIGCONT).

// stopAndTell appends the code that stops the current process and puts
// its ID in ring; then returns 0. A process whose ID finds no room in
// the ring, which the consumer would not know to set running, is set
// running at once (SIGCONT undoes the pending SIGSTOP). The stop comes
// first, so that the consumer's SIGCONT cannot come before it.
func stopAndTell(insns asm.Instructions, ring *ebpf.Map) asm.Instructions {
	return append(insns,
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.Word),
		asm.Mov.Imm(asm.R1, int32(syscall.SIGSTOP)),
		asm.FnSendSignal.Call(),
		asm.LoadMapPtr(asm.R1, ring.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.Mov.Imm(asm.R3, 4),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnRingbufOutput.Call(),
		asm.JEq.Imm(asm.R0, 0, "told"),
		asm.Mov.Imm(asm.R1, int32(syscall.SIGCONT)),
		asm.FnSendSignal.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("told"),
		asm.Return(),
	)
}

// RtldWatch returns a uprobe's program that stops the process it fires
// in, for a probe on the run-time linker's _dl_debug_state.
func RtldWatch(ring *ebpf.Map) asm.Instructions {
	return stopAndTell(nil, ring)
}

// ExecWatch returns a raw tracepoint's program for sched_process_exec
// that stops the process that execs if it descends from process
// ancestor, found as progenyof() finds it: walking real_parent up
// maxAncestors processes at most, unrolled.
func ExecWatch(ring *ebpf.Map, ancestor uint32) (asm.Instructions, error) {
	o, err := kernelTask()
	if err != nil {
		return nil, fmt.Errorf("following the processes that exec needs the kernel's struct task_struct: %w", err)
	}
	insns := asm.Instructions{asm.FnGetCurrentTask.Call(), asm.Mov.Reg(asm.R6, asm.R0)}
	read := func(off int16, size int32) {
		insns = append(insns,
			storeImm64(asm.RFP, -16, 0),
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, -16),
			asm.Mov.Imm(asm.R2, size),
			asm.Mov.Reg(asm.R3, asm.R6),
			asm.Add.Imm(asm.R3, int32(off)),
			asm.FnProbeReadKernel.Call(),
			asm.LoadMem(asm.R0, asm.RFP, -16, asm.DWord),
		)
	}
	for range maxAncestors {
		insns = append(insns, asm.JEq.Imm(asm.R6, 0, "no"))
		read(o.tgid, 4)
		insns = append(insns, asm.JEq.Imm(asm.R0, int32(ancestor), "yes"))
		read(o.realParent, 8)
		// The idle task is its own parent.
		insns = append(insns, asm.JEq.Reg(asm.R0, asm.R6, "no"), asm.Mov.Reg(asm.R6, asm.R0))
	}
	insns = append(insns,
		asm.Mov.Imm(asm.R0, 0).WithSymbol("no"),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("yes"),
	)
	return stopAndTell(insns, ring), nil
}
