package bpf

import (
	"github.com/cilium/ebpf/asm"

	"github.com/kdtrace/kdtrace/dif"
)

// regsOffsets gives, for each index of regs[] and uregs[] as regs.d
// numbers them on amd64 (dtrace_getreg's: the i386 names first, mapped
// to their amd64 registers, then the amd64 ones from R_R15 = 19), the
// register's offset in Linux's pt_regs; -1 for the segment registers,
// the trap number and error code and the segment bases, which pt_regs
// does not hold.
var regsOffsets = [...]int16{
	-1, -1, -1, -1, // GS FS ES DS
	regDI, regSI, 32, 152, 40, regDX, regCX, regAX, // EDI ESI EBP ESP EBX EDX ECX EAX
	-1, -1, regIP, regCS, 144, 152, 160, // TRAPNO ERR EIP CS EFL UESP SS
	0, 8, 16, 24, 48, regR10, regR9, regR8, // R15 … R8
	regDI, regSI, 32, 40, regDX, regCX, regAX, // RDI RSI RBP RBX RDX RCX RAX
	-1, -1, regIP, regCS, 144, 152, 160, // TRAPNO ERR RIP CS RFL RSP SS
	-1, -1, -1, -1, -1, -1, // FS GS ES DS FSBASE GSBASE
}

// regs translates a load of regs[i] or uregs[i]: the register of the
// thread's registers at the probe, as dtrace_getreg reads them. regs[]
// are those the probe's context holds (a kprobe's or uprobe's, a perf
// event's interrupted ones); uregs[], and regs[] where the context
// holds none, are the thread's user registers (task_pt_regs). An index
// out of range, or of a register pt_regs lacks, faults ILLOP. regs[]
// is refused at an fentry or fexit probe, whose context has only the
// function's arguments.
func (t *translator) regs(pc int, in dif.Instr, local func(string) string) error {
	if uint32(in.R1()) == dif.VarRegs && (t.ctx == CtxFEntry || t.ctx == CtxFExit) {
		// A trampoline saves the arguments, not the registers: the
		// runtime puts a probe whose clauses read regs[] on a kprobe.
		return &Error{pc, in, "regs[] is not available at an fentry or fexit probe"}
	}
	t.get(asm.R2, in.R2())
	for i, off := range regsOffsets {
		if off < 0 {
			continue
		}
		next := local("reg" + string(rune('a'+i%26)) + string(rune('a'+i/26)))
		t.emit(asm.JNE.Imm(asm.R2, int32(i), next))
		t.emit(asm.Mov.Imm(asm.R3, int32(off)))
		t.emit(asm.Ja.Label(local("have")))
		t.mark(next)
		t.emit(asm.Mov.Imm(asm.R0, 0))
	}
	t.faultAt(pc, faultIllOp, asm.R2, true)
	t.mark(local("have"))
	t.emit(asm.StoreMem(asm.R10, bufSlot, asm.R3, asm.DWord))
	switch {
	case uint32(in.R1()) == dif.VarRegs && (t.ctx == CtxEntry || t.ctx == CtxReturn || t.ctx == CtxUSDT || t.ctx == CtxPerf):
		t.emit(asm.LoadMem(asm.R0, asm.R10, ctxSlot, asm.DWord))
	default:
		t.emit(asm.FnGetCurrentTaskBtf.Call())
		t.emit(asm.Mov.Reg(asm.R1, asm.R0))
		t.emit(asm.FnTaskPtRegs.Call())
	}
	// The address as a scalar, to add the register's offset to.
	t.emit(asm.StoreMem(rState, stateTmp, asm.R0, asm.DWord))
	t.emit(asm.LoadMem(asm.R3, rState, stateTmp, asm.DWord))
	t.emit(asm.LoadMem(asm.R1, asm.R10, bufSlot, asm.DWord))
	t.emit(asm.Add.Reg(asm.R3, asm.R1))
	t.emit(asm.Mov.Reg(asm.R1, asm.R10))
	t.emit(asm.Add.Imm(asm.R1, bufSlot))
	t.emit(asm.Mov.Imm(asm.R2, 8))
	t.emit(asm.FnProbeReadKernel.Call())
	t.emit(asm.LoadMem(asm.R1, asm.R10, bufSlot, asm.DWord))
	t.emit(asm.JEq.Imm(asm.R0, 0, local("regok")))
	t.emit(asm.Mov.Imm(asm.R1, 0))
	t.mark(local("regok"))
	t.set(in.RD(), asm.R1)
	return nil
}
