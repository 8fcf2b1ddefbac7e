package bpf

import (
	"github.com/cilium/ebpf/asm"

	"github.com/kdtrace/kdtrace/dif"
)

// substr translates substr(s, index[, length]) as dtrace_dif_subr does:
// the string's length read up to strsize; a negative index counts from
// the end (and, still negative, eats into the length); an index past
// the end gives ""; a negative length leaves that many bytes off the
// end; the result, at most strsize bytes and a NUL, in strsize+1 bytes
// of scratch.
func (t *translator) substr(pc int, in dif.Instr, nargs int, arg func(asm.Register, int), badAddr func(int), local func(string) string) error {
	strsize, scratch := int32(t.l.strsize), int32(t.l.scratch)
	if strsize >= scratch {
		return &Error{pc, in, "substr with strsize not under the scratch size"}
	}
	t.emit(asm.LoadMem(asm.R1, rState, stateScratch, asm.DWord))
	t.emit(asm.Add.Imm(asm.R1, 7))
	t.emit(asm.And.Imm(asm.R1, -8))
	t.emit(asm.JLE.Imm(asm.R1, scratch-strsize-1, local("room")))
	t.mark(local("noscratch"))
	t.faultAt(pc, faultNoScratch, 0, false)
	t.mark(local("room"))
	// The string, and its length without the NUL, kept at keySlot.
	t.readString(0, 0, arg, badAddr, local("read"))
	t.emit(asm.Add.Imm(asm.R0, -1))
	t.emit(asm.StoreMem(asm.R10, keySlot, asm.R0, asm.DWord))
	// R1 index, R2 remaining, R3 len.
	arg(asm.R1, 1)
	if nargs > 2 {
		arg(asm.R2, 2)
	} else {
		t.emit(asm.Mov.Imm(asm.R2, strsize))
	}
	t.emit(asm.LoadMem(asm.R3, asm.R10, keySlot, asm.DWord))
	t.emit(asm.JSGE.Imm(asm.R1, 0, local("nonneg")))
	t.emit(asm.Add.Reg(asm.R1, asm.R3))
	t.emit(asm.JSGE.Imm(asm.R1, 0, local("nonneg")))
	t.emit(asm.Mov.Reg(asm.R4, asm.R1))
	t.emit(asm.Add.Reg(asm.R4, asm.R2))
	t.emit(asm.JSLE.Imm(asm.R4, 0, local("nonneg")))
	t.emit(asm.Add.Reg(asm.R2, asm.R1))
	t.emit(asm.Mov.Imm(asm.R1, 0))
	t.mark(local("nonneg"))
	// Past the end, or still before the start: nothing.
	t.emit(asm.JSLT.Imm(asm.R1, 0, local("empty")))
	t.emit(asm.JSGE.Reg(asm.R1, asm.R3, local("empty")))
	t.emit(asm.JSGE.Imm(asm.R2, 0, local("posrem")))
	t.emit(asm.Add.Reg(asm.R2, asm.R3))
	t.emit(asm.Sub.Reg(asm.R2, asm.R1))
	t.mark(local("posrem"))
	// The copy stops at the string's end: at most len - index bytes.
	t.emit(asm.Mov.Reg(asm.R4, asm.R3))
	t.emit(asm.Sub.Reg(asm.R4, asm.R1))
	t.emit(asm.JSLE.Reg(asm.R2, asm.R4, local("fits")))
	t.emit(asm.Mov.Reg(asm.R2, asm.R4))
	t.mark(local("fits"))
	t.emit(asm.JSGE.Imm(asm.R2, 0, local("count")))
	t.mark(local("empty"))
	t.emit(asm.Mov.Imm(asm.R1, 0))
	t.emit(asm.Mov.Imm(asm.R2, 0))
	t.mark(local("count"))
	// R1 index and R2 count, both in [0, strsize].
	t.emit(asm.JGT.Imm(asm.R1, strsize, local("empty")))
	t.emit(asm.JGT.Imm(asm.R2, strsize, local("empty")))
	t.emit(asm.StoreMem(asm.R10, bufSlot, asm.R2, asm.DWord))
	t.emit(asm.LoadMem(asm.R3, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.Add.Reg(asm.R3, asm.R1))
	t.emit(asm.LoadMem(asm.R4, rState, stateScratch, asm.DWord))
	t.emit(asm.Add.Imm(asm.R4, 7))
	t.emit(asm.And.Imm(asm.R4, -8))
	t.emit(asm.JGT.Imm(asm.R4, scratch-strsize-1, local("noscratch")))
	t.emit(asm.Mov.Reg(asm.R1, rScratch))
	t.emit(asm.Add.Reg(asm.R1, asm.R4))
	t.emit(asm.FnProbeReadKernel.Call())
	// The NUL, the result's address, the scratch taken.
	t.emit(asm.LoadMem(asm.R4, rState, stateScratch, asm.DWord))
	t.emit(asm.Add.Imm(asm.R4, 7))
	t.emit(asm.And.Imm(asm.R4, -8))
	t.emit(asm.JGT.Imm(asm.R4, scratch-strsize-1, local("noscratch")))
	t.emit(asm.LoadMem(asm.R2, asm.R10, bufSlot, asm.DWord))
	t.emit(asm.JGT.Imm(asm.R2, strsize, local("noscratch")))
	t.emit(asm.Mov.Reg(asm.R1, rScratch))
	t.emit(asm.Add.Reg(asm.R1, asm.R4))
	t.emit(asm.Add.Reg(asm.R1, asm.R2))
	t.emit(asm.StoreImm(asm.R1, 0, 0, asm.Byte))
	t.emit(asm.LoadMem(asm.R0, rState, stateScrBase, asm.DWord))
	t.emit(asm.Add.Reg(asm.R0, asm.R4))
	t.set(in.RD(), asm.R0)
	t.emit(asm.Add.Imm(asm.R4, strsize+1))
	t.emit(asm.StoreMem(rState, stateScratch, asm.R4, asm.DWord))
	return nil
}
