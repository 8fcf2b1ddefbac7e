package bpf

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/kdtrace/kdtrace/dif"
)

// The string subroutines below follow dtrace_dif_subr as dif/vm
// runs it. Each copies its strings into MapStrBuf (readString), where
// a fault is taken as the kernel takes it, and scans the copies in a
// bpf_loop callback.

// putLoop stores src at the callbacks' word i.
func (t *translator) putLoop(i int, src asm.Register) {
	t.emit(asm.StoreMem(rState, loopWord(i), src, asm.DWord))
}

func (t *translator) putLoopImm(i int, v int32) { t.emit(storeImm64(rState, loopWord(i), v)) }

// getLoop loads the callbacks' word i into dst: rState in the caller,
// cState in a callback.
func (t *translator) getLoop(dst, state asm.Register, i int) {
	t.emit(asm.LoadMem(dst, state, loopWord(i), asm.DWord))
}

// strstr translates strstr(s, sub), index(s, sub[, start]) and
// rindex(s, sub[, start]): the first (last) place from start where sub
// is in s; strstr gives its address or NULL, index and rindex its
// offset or -1.
func (t *translator) strstr(pc int, in dif.Instr, nargs int, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	subr := in.Subr()
	half := int32(t.l.strBufHalf())
	// Words: 0 len(s), 1 len(sub), 2 the place, 3 where the search
	// ends, 4 its step, 5 the bytes of sub matched there, 6 found.
	for i, off := range []int32{0, half} {
		t.readString(off, i, arg, badAddr, local("read"+string(rune('0'+i))))
		t.emit(asm.Add.Imm(asm.R0, -1))
		t.putLoop(i, asm.R0)
	}
	notFound := func() {
		if subr == dif.SubrStrstr {
			t.emit(asm.Mov.Imm(asm.R0, 0))
		} else {
			t.emit(asm.Mov.Imm(asm.R0, -1))
		}
		t.emit(asm.Ja.Label(local("done")))
	}
	t.getLoop(asm.R1, rState, 0)
	t.getLoop(asm.R2, rState, 1)
	// Both empty: found at 0.
	t.emit(asm.JNE.Imm(asm.R1, 0, local("search")))
	t.emit(asm.JNE.Imm(asm.R2, 0, local("search")))
	t.emit(asm.Mov.Imm(asm.R0, 0))
	if subr == dif.SubrStrstr {
		arg(asm.R0, 0)
	}
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("search"))
	// R3 the place, R4 the end, R5 the step.
	t.emit(asm.Mov.Imm(asm.R3, 0))
	t.emit(asm.Mov.Reg(asm.R4, asm.R1))
	t.emit(asm.Mov.Imm(asm.R5, 1))
	if subr == dif.SubrRindex {
		t.emit(asm.Mov.Reg(asm.R3, asm.R1))
		t.emit(asm.Mov.Imm(asm.R4, -1))
		t.emit(asm.Mov.Imm(asm.R5, -1))
	}
	if subr != dif.SubrStrstr && nargs == 3 {
		arg(asm.R3, 2)
		if subr == dif.SubrRindex {
			// Before the start: only "" is found, at 0.
			t.emit(asm.JSGE.Imm(asm.R3, 0, local("start")))
			t.emit(asm.JNE.Imm(asm.R2, 0, local("none")))
			t.emit(asm.Mov.Imm(asm.R0, 0))
			t.emit(asm.Ja.Label(local("done")))
			t.mark(local("start"))
			t.emit(asm.JSLE.Reg(asm.R3, asm.R1, local("from")))
			t.emit(asm.Mov.Reg(asm.R3, asm.R1))
		} else {
			// From the end on: only "" is found, at the end.
			t.emit(asm.JSGE.Imm(asm.R3, 0, local("start")))
			t.emit(asm.Mov.Imm(asm.R3, 0))
			t.mark(local("start"))
			t.emit(asm.JSLT.Reg(asm.R3, asm.R1, local("from")))
			t.emit(asm.JNE.Imm(asm.R2, 0, local("none")))
			t.emit(asm.Mov.Reg(asm.R0, asm.R1))
			t.emit(asm.Ja.Label(local("done")))
		}
		t.mark(local("from"))
	}
	t.putLoop(2, asm.R3)
	t.putLoop(3, asm.R4)
	t.putLoop(4, asm.R5)
	t.putLoopImm(5, 0)
	t.putLoopImm(6, 0)
	// At most len(sub)+1 steps at each of len(s)+1 places, and one to
	// find the search over.
	t.emit(asm.Add.Imm(asm.R1, 2))
	t.emit(asm.Add.Imm(asm.R2, 1))
	t.emit(asm.Mul.Reg(asm.R1, asm.R2))
	t.loop(t.callback("strstr", t.strstrStep))
	t.getLoop(asm.R1, rState, 6)
	t.emit(asm.JEq.Imm(asm.R1, 0, local("none")))
	t.getLoop(asm.R0, rState, 2)
	if subr == dif.SubrStrstr {
		arg(asm.R1, 0)
		t.emit(asm.Add.Reg(asm.R0, asm.R1))
	}
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("none"))
	notFound()
	t.mark(local("done"))
	t.set(in.RD(), asm.R0)
}

// strstrStep compares one byte of sub with s at the place, or moves
// to the next place.
func (t *translator) strstrStep() {
	const l = "cb_strstr_"
	half := int32(t.l.strBufHalf())
	t.getLoop(asm.R1, cState, 2)
	t.getLoop(asm.R2, cState, 3)
	t.emit(asm.JNE.Reg(asm.R1, asm.R2, l+"place"))
	t.stop()
	t.mark(l + "place")
	t.getLoop(asm.R3, cState, 5)
	t.getLoop(asm.R4, cState, 1)
	t.emit(asm.JNE.Reg(asm.R3, asm.R4, l+"cmp"))
	t.putLoopImmIn(cState, 6, 1)
	t.stop()
	t.mark(l + "cmp")
	t.emit(asm.Add.Reg(asm.R1, asm.R3))
	t.bufByte(asm.R4, asm.R1, 0, l+"c1")
	t.bufByte(asm.R5, asm.R3, half, l+"c2")
	t.emit(asm.JNE.Reg(asm.R4, asm.R5, l+"differ"))
	t.emit(asm.Add.Imm(asm.R3, 1))
	t.emit(asm.StoreMem(cState, loopWord(5), asm.R3, asm.DWord))
	t.more()
	t.mark(l + "differ")
	t.getLoop(asm.R1, cState, 2)
	t.getLoop(asm.R2, cState, 4)
	t.emit(asm.Add.Reg(asm.R1, asm.R2))
	t.emit(asm.StoreMem(cState, loopWord(2), asm.R1, asm.DWord))
	t.emit(storeImm64(cState, loopWord(5), 0))
	t.more()
}

func (t *translator) putLoopImmIn(state asm.Register, i int, v int32) {
	t.emit(storeImm64(state, loopWord(i), v))
}

// strtoll translates strtoll(s[, base]) as dtrace_strtoll reads s:
// blanks, a sign, 0x before a hexadecimal digit in base 16, then the
// digits of the base, up to strsize bytes; a base outside 2 … 36
// faults ILLOP.
func (t *translator) strtoll(pc int, in dif.Instr, nargs int, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	// Words: 0 the place, 1 the base, 2 the value, 3 the phase (0
	// blanks, 1 sign, 2 prefix, 3 digits), 4 negative.
	t.emit(asm.Mov.Imm(asm.R1, 10))
	if nargs > 1 {
		arg(asm.R1, 1)
		t.emit(asm.JSLE.Imm(asm.R1, 1, local("badbase")))
		t.emit(asm.JLE.Imm(asm.R1, 36, local("base")))
		t.mark(local("badbase"))
		t.faultAt(pc, faultIllOp, 0, false)
		t.mark(local("base"))
	}
	t.putLoop(1, asm.R1)
	t.readString(0, 0, arg, badAddr, local("read"))
	for _, i := range []int{0, 2, 3, 4} {
		t.putLoopImm(i, 0)
	}
	t.emit(asm.Mov.Imm(asm.R1, 2*int32(t.l.strsize)+8))
	t.loop(t.callback("strtoll", t.strtollStep))
	t.getLoop(asm.R0, rState, 2)
	t.getLoop(asm.R1, rState, 4)
	t.emit(asm.JEq.Imm(asm.R1, 0, local("pos")))
	t.emit(asm.Neg.Imm(asm.R0, 0))
	t.mark(local("pos"))
	t.set(in.RD(), asm.R0)
}

func (t *translator) strtollStep() {
	const l = "cb_strtoll_"
	strsize := int32(t.l.strsize)
	t.getLoop(asm.R1, cState, 0)
	t.getLoop(asm.R2, cState, 3)
	t.bufByte(asm.R3, asm.R1, 0, l+"c")
	t.emit(asm.JNE.Imm(asm.R2, 0, l+"sign"))
	// Blanks.
	t.emit(asm.JEq.Imm(asm.R3, ' ', l+"blank"))
	t.emit(asm.JEq.Imm(asm.R3, '\t', l+"blank"))
	t.putLoopImmIn(cState, 3, 1)
	t.more()
	t.mark(l + "blank")
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(cState, loopWord(0), asm.R1, asm.DWord))
	t.more()
	t.mark(l + "sign")
	t.emit(asm.JNE.Imm(asm.R2, 1, l+"prefix"))
	t.putLoopImmIn(cState, 3, 2)
	t.emit(asm.JEq.Imm(asm.R3, '+', l+"signed"))
	t.emit(asm.JNE.Imm(asm.R3, '-', l+"unsigned"))
	t.putLoopImmIn(cState, 4, 1)
	t.mark(l + "signed")
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(cState, loopWord(0), asm.R1, asm.DWord))
	t.mark(l + "unsigned")
	t.more()
	t.mark(l + "prefix")
	t.emit(asm.JNE.Imm(asm.R2, 2, l+"digit"))
	t.putLoopImmIn(cState, 3, 3)
	// "0x" or "0X" and a hexadecimal digit, in base 16.
	t.getLoop(asm.R2, cState, 1)
	t.emit(asm.JNE.Imm(asm.R2, 16, l+"noprefix"))
	t.emit(asm.JNE.Imm(asm.R3, '0', l+"noprefix"))
	t.bufByte(asm.R3, asm.R1, 1, l+"x")
	t.emit(asm.Or.Imm(asm.R3, 0x20))
	t.emit(asm.JNE.Imm(asm.R3, 'x', l+"noprefix"))
	t.bufByte(asm.R3, asm.R1, 2, l+"xd")
	t.emit(asm.Mov.Reg(asm.R4, asm.R3))
	t.emit(asm.Add.Imm(asm.R4, -'0'))
	t.emit(asm.JLE.Imm(asm.R4, 9, l+"hex"))
	t.emit(asm.Or.Imm(asm.R3, 0x20))
	t.emit(asm.Add.Imm(asm.R3, -'a'))
	t.emit(asm.JGT.Imm(asm.R3, 5, l+"noprefix"))
	t.mark(l + "hex")
	t.emit(asm.Add.Imm(asm.R1, 2))
	t.emit(asm.StoreMem(cState, loopWord(0), asm.R1, asm.DWord))
	t.mark(l + "noprefix")
	t.more()
	// A digit of the base, or the end.
	t.mark(l + "digit")
	t.emit(asm.JLT.Imm(asm.R1, strsize, l+"more"))
	t.stop()
	t.mark(l + "more")
	t.emit(asm.Mov.Reg(asm.R4, asm.R3))
	t.emit(asm.Add.Imm(asm.R4, -'0'))
	t.emit(asm.JLE.Imm(asm.R4, 9, l+"value"))
	t.emit(asm.Mov.Reg(asm.R4, asm.R3))
	t.emit(asm.Add.Imm(asm.R4, -'a'))
	t.emit(asm.JLE.Imm(asm.R4, 25, l+"letter"))
	t.emit(asm.Mov.Reg(asm.R4, asm.R3))
	t.emit(asm.Add.Imm(asm.R4, -'A'))
	t.emit(asm.JLE.Imm(asm.R4, 25, l+"letter"))
	t.stop()
	t.mark(l + "letter")
	t.emit(asm.Add.Imm(asm.R4, 10))
	t.mark(l + "value")
	t.getLoop(asm.R2, cState, 1)
	t.emit(asm.JLT.Reg(asm.R4, asm.R2, l+"add"))
	t.stop()
	t.mark(l + "add")
	t.getLoop(asm.R5, cState, 2)
	t.emit(asm.Mul.Reg(asm.R5, asm.R2))
	t.emit(asm.Add.Reg(asm.R5, asm.R4))
	t.emit(asm.StoreMem(cState, loopWord(2), asm.R5, asm.DWord))
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(cState, loopWord(0), asm.R1, asm.DWord))
	t.more()
}

// room faults NOSCRATCH unless scratch has n bytes free; it leaves
// the offset of the free bytes in R1.
func (t *translator) room(pc int, n int32, label string) {
	t.emit(asm.LoadMem(asm.R1, rState, stateScratch, asm.DWord))
	t.emit(asm.JLE.Imm(asm.R1, int32(t.l.scratch)-n, label))
	t.faultAt(pc, faultNoScratch, 0, false)
	t.mark(label)
}

// takeString returns in DIF register rd the string of R2 bytes of
// MapStrBuf from the offset in R3, copied into scratch with a NUL, and
// takes n bytes of scratch. R2 is at most n-1, R3 at most strsize, and
// scratch has n bytes free.
func (t *translator) takeString(rd uint8, n int32, label string) {
	strsize, scratch := int32(t.l.strsize), int32(t.l.scratch)
	t.emit(asm.StoreMem(asm.R10, bufSlot, asm.R2, asm.DWord))
	t.emit(asm.JGT.Imm(asm.R2, n-1, label+"_nul"))
	t.emit(asm.JGT.Imm(asm.R3, strsize, label+"_nul"))
	t.emit(asm.JEq.Imm(asm.R2, 0, label+"_nul"))
	t.emit(asm.LoadMem(asm.R1, rState, stateScratch, asm.DWord))
	t.emit(asm.JGT.Imm(asm.R1, scratch-n, label+"_nul"))
	t.emit(asm.Add.Reg(asm.R1, rScratch))
	t.emit(asm.LoadMem(asm.R4, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.Add.Reg(asm.R3, asm.R4))
	t.emit(asm.FnProbeReadKernel.Call())
	t.mark(label + "_nul")
	t.emit(asm.LoadMem(asm.R1, rState, stateScratch, asm.DWord))
	t.emit(asm.LoadMem(asm.R2, asm.R10, bufSlot, asm.DWord))
	t.emit(asm.JGT.Imm(asm.R1, scratch-n, label+"_done"))
	t.emit(asm.JGT.Imm(asm.R2, n-1, label+"_done"))
	t.emit(asm.Add.Reg(asm.R2, asm.R1))
	t.emit(asm.Add.Reg(asm.R2, rScratch))
	t.emit(asm.StoreImm(asm.R2, 0, 0, asm.Byte))
	t.emit(asm.LoadMem(asm.R0, rState, stateScrBase, asm.DWord))
	t.emit(asm.Add.Reg(asm.R0, asm.R1))
	t.set(rd, asm.R0)
	t.emit(asm.Add.Imm(asm.R1, n))
	t.emit(asm.StoreMem(rState, stateScratch, asm.R1, asm.DWord))
	t.mark(label + "_done")
	t.emit(asm.Mov.Imm(asm.R0, 0))
}

// basename translates basename(s) and dirname(s): from the end of s,
// the last byte that is not a slash ends the base name, the slash
// before it starts it, and the last byte before that which is not a
// slash ends the directory; "" is ".", a path of slashes "/", a name
// without a slash has the directory ".".
func (t *translator) basename(pc int, in dif.Instr, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	strsize := int32(t.l.strsize)
	dirname := in.Subr() == dif.SubrDirname
	// Words: 0 the place, 1 the phase, 2 the base's last byte, 3 its
	// first, 4 the directory's last; -1 where not found.
	t.readString(0, 0, arg, badAddr, local("read"))
	t.emit(asm.Add.Imm(asm.R0, -1))
	t.emit(asm.StoreMem(asm.R10, keySlot, asm.R0, asm.DWord))
	t.room(pc, strsize, local("room"))
	t.emit(asm.LoadMem(asm.R1, asm.R10, keySlot, asm.DWord))
	t.emit(asm.JEq.Imm(asm.R1, 0, local("dot")))
	t.emit(asm.Add.Imm(asm.R1, -1))
	t.putLoop(0, asm.R1)
	t.putLoopImm(1, 0)
	for i := 2; i <= 4; i++ {
		t.putLoopImm(i, -1)
	}
	t.emit(asm.Add.Imm(asm.R1, 5))
	t.loop(t.callback("basename", t.basenameStep))
	// R2 the base's last byte, R3 its first, R4 the directory's last.
	t.getLoop(asm.R2, rState, 2)
	t.getLoop(asm.R3, rState, 3)
	t.getLoop(asm.R4, rState, 4)
	t.emit(asm.JNE.Imm(asm.R2, -1, local("base")))
	t.emit(asm.Mov.Imm(asm.R2, 0))
	t.emit(asm.Mov.Imm(asm.R3, 0))
	t.emit(asm.Mov.Imm(asm.R4, 0))
	t.mark(local("base"))
	if dirname {
		t.emit(asm.JEq.Imm(asm.R3, -1, local("dot")))
		t.emit(asm.JNE.Imm(asm.R4, -1, local("dir")))
		t.emit(asm.Mov.Imm(asm.R4, 0))
		t.mark(local("dir"))
		t.emit(asm.Mov.Imm(asm.R3, 0))
		t.emit(asm.Mov.Reg(asm.R2, asm.R4))
	} else {
		t.emit(asm.JNE.Imm(asm.R3, -1, local("first")))
		t.emit(asm.Mov.Imm(asm.R3, 0))
		t.mark(local("first"))
	}
	// The bytes from R3 to R2, strsize-1 at most.
	t.emit(asm.Sub.Reg(asm.R2, asm.R3))
	t.emit(asm.Add.Imm(asm.R2, 1))
	t.emit(asm.JSLE.Imm(asm.R2, strsize-1, local("fits")))
	t.emit(asm.Mov.Imm(asm.R2, strsize-1))
	t.mark(local("fits"))
	t.emit(asm.JSGE.Imm(asm.R2, 0, local("copy")))
	t.emit(asm.Mov.Imm(asm.R2, 0))
	t.emit(asm.Ja.Label(local("copy")))
	t.mark(local("dot"))
	// ".", in the string table's place of MapStrBuf.
	t.emit(asm.LoadMem(asm.R1, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.StoreImm(asm.R1, 0, '.', asm.Byte))
	t.emit(asm.Mov.Imm(asm.R2, 1))
	t.emit(asm.Mov.Imm(asm.R3, 0))
	t.mark(local("copy"))
	t.takeString(in.RD(), strsize, local("take"))
}

func (t *translator) basenameStep() {
	const l = "cb_basename_"
	t.getLoop(asm.R1, cState, 0)
	t.emit(asm.JSGE.Imm(asm.R1, 0, l+"in"))
	t.stop()
	t.mark(l + "in")
	t.bufByte(asm.R3, asm.R1, 0, l+"c")
	t.getLoop(asm.R2, cState, 1)
	// R4 = 1 where the phase ends: a slash in phase 1, else not one.
	t.emit(asm.Mov.Imm(asm.R4, 0))
	t.emit(asm.JEq.Imm(asm.R3, '/', l+"slash"))
	t.emit(asm.JEq.Imm(asm.R2, 1, l+"go"))
	t.emit(asm.Mov.Imm(asm.R4, 1))
	t.emit(asm.Ja.Label(l + "go"))
	t.mark(l + "slash")
	t.emit(asm.JNE.Imm(asm.R2, 1, l+"go"))
	t.emit(asm.Mov.Imm(asm.R4, 1))
	t.mark(l + "go")
	t.emit(asm.JNE.Imm(asm.R4, 0, l+"end"))
	t.emit(asm.Add.Imm(asm.R1, -1))
	t.emit(asm.StoreMem(cState, loopWord(0), asm.R1, asm.DWord))
	t.more()
	t.mark(l + "end")
	t.emit(asm.JNE.Imm(asm.R2, 0, l+"p1"))
	t.emit(asm.StoreMem(cState, loopWord(2), asm.R1, asm.DWord))
	t.putLoopImmIn(cState, 1, 1)
	t.more()
	t.mark(l + "p1")
	t.emit(asm.JNE.Imm(asm.R2, 1, l+"p2"))
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(cState, loopWord(3), asm.R1, asm.DWord))
	t.putLoopImmIn(cState, 1, 2)
	t.more()
	t.mark(l + "p2")
	t.emit(asm.StoreMem(cState, loopWord(4), asm.R1, asm.DWord))
	t.stop()
}

// Phases of cleanpath's callback: the byte c is looked at after
// nothing, a slash, "/.", "/.."; then a step back over the output to
// its last slash, or the next byte read.
const (
	cleanNext = iota
	cleanSlash
	cleanSlashDot
	cleanDotDot
	cleanBack
	cleanRead
)

// cleanpath translates cleanpath(s) as dtrace_dif_subr's: "//" and
// "/./" become "/", "dir/.." goes, its output of strsize bytes in
// scratch stops 5 bytes short of their end.
func (t *translator) cleanpath(pc int, in dif.Instr, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	strsize := int32(t.l.strsize)
	// Words: 0 the place in s, 1 in the output, 2 the phase, 3 the
	// byte c, 4 the output's offset in scratch.
	t.readString(0, 0, arg, badAddr, local("read"))
	t.room(pc, strsize, local("room"))
	t.putLoop(4, asm.R1)
	t.putLoopImm(0, 0)
	t.putLoopImm(1, 0)
	t.putLoopImm(2, cleanRead)
	t.putLoopImm(3, 1)
	t.emit(asm.Mov.Imm(asm.R1, 8*strsize+16))
	t.loop(t.callback("cleanpath", t.cleanpathStep))
	t.getLoop(asm.R2, rState, 1)
	t.emit(asm.Mov.Imm(asm.R3, 0))
	t.emit(asm.LoadMem(asm.R1, rState, stateScratch, asm.DWord))
	t.emit(asm.JGT.Imm(asm.R1, int32(t.l.scratch)-strsize, local("done")))
	t.emit(asm.JGT.Imm(asm.R2, strsize-1, local("done")))
	t.emit(asm.Add.Reg(asm.R2, asm.R1))
	t.emit(asm.Add.Reg(asm.R2, rScratch))
	t.emit(asm.StoreImm(asm.R2, 0, 0, asm.Byte))
	t.emit(asm.LoadMem(asm.R0, rState, stateScrBase, asm.DWord))
	t.emit(asm.Add.Reg(asm.R0, asm.R1))
	t.set(in.RD(), asm.R0)
	t.emit(asm.Add.Imm(asm.R1, strsize))
	t.emit(asm.StoreMem(rState, stateScratch, asm.R1, asm.DWord))
	t.mark(local("done"))
}

func (t *translator) cleanpathStep() {
	const l = "cb_cleanpath_"
	strsize, scratch := int32(t.l.strsize), int32(t.l.scratch)
	// R1 the place in s, R2 in the output, R3 the phase, R4 c.
	t.getLoop(asm.R1, cState, 0)
	t.getLoop(asm.R2, cState, 1)
	t.getLoop(asm.R3, cState, 2)
	t.getLoop(asm.R4, cState, 3)
	n := 0
	// put writes a byte (R5 if c < 0) at the output's place.
	put := func(c int32) {
		n++
		skip := fmt.Sprintf("%sput%d", l, n)
		if c >= 0 {
			t.emit(asm.Mov.Imm(asm.R5, c))
		}
		t.getLoop(asm.R0, cState, 4)
		t.emit(asm.JGT.Imm(asm.R0, scratch-strsize, skip))
		t.emit(asm.JGT.Imm(asm.R2, strsize-1, skip))
		t.emit(asm.Add.Reg(asm.R0, asm.R2))
		t.emit(asm.Add.Reg(asm.R0, cScratch))
		t.emit(asm.StoreMem(asm.R0, 0, asm.R5, asm.Byte))
		t.mark(skip)
		t.emit(asm.Add.Imm(asm.R2, 1))
	}
	putC := func() {
		t.emit(asm.Mov.Reg(asm.R5, asm.R4))
		put(-1)
	}
	// get reads the next byte of s into c, 0 past strsize bytes.
	get := func() {
		n++
		end := fmt.Sprintf("%sget%d", l, n)
		t.emit(asm.Mov.Imm(asm.R4, 0))
		t.emit(asm.JGE.Imm(asm.R1, strsize, end))
		t.bufByte(asm.R4, asm.R1, 0, end+"_c")
		t.emit(asm.Add.Imm(asm.R1, 1))
		t.mark(end)
	}
	phase := func(p int32) {
		t.emit(asm.Mov.Imm(asm.R3, p))
		t.emit(asm.Ja.Label(l + "save"))
	}
	t.emit(asm.JNE.Imm(asm.R3, cleanNext, l+"slash"))
	t.emit(asm.Mov.Reg(asm.R0, asm.R2))
	t.emit(asm.Add.Imm(asm.R0, 5))
	t.emit(asm.JLT.Imm(asm.R0, strsize, l+"next"))
	t.stop()
	t.mark(l + "next")
	t.emit(asm.JEq.Imm(asm.R4, '/', l+"next_slash"))
	putC()
	phase(cleanRead)
	t.mark(l + "next_slash")
	get()
	phase(cleanSlash)

	t.mark(l + "slash")
	t.emit(asm.JNE.Imm(asm.R3, cleanSlash, l+"slashdot"))
	t.emit(asm.JNE.Imm(asm.R4, '/', l+"slash_other"))
	phase(cleanNext)
	t.mark(l + "slash_other")
	t.emit(asm.JEq.Imm(asm.R4, '.', l+"slash_dot"))
	put('/')
	putC()
	phase(cleanRead)
	t.mark(l + "slash_dot")
	get()
	phase(cleanSlashDot)

	t.mark(l + "slashdot")
	t.emit(asm.JNE.Imm(asm.R3, cleanSlashDot, l+"dotdot"))
	t.emit(asm.JNE.Imm(asm.R4, '/', l+"slashdot_other"))
	phase(cleanNext)
	t.mark(l + "slashdot_other")
	t.emit(asm.JEq.Imm(asm.R4, '.', l+"slashdot_dot"))
	put('/')
	put('.')
	putC()
	phase(cleanRead)
	t.mark(l + "slashdot_dot")
	get()
	phase(cleanDotDot)

	t.mark(l + "dotdot")
	t.emit(asm.JNE.Imm(asm.R3, cleanDotDot, l+"back"))
	t.emit(asm.JEq.Imm(asm.R4, '/', l+"dotdot_up"))
	t.emit(asm.JEq.Imm(asm.R4, 0, l+"dotdot_up"))
	put('/')
	put('.')
	put('.')
	putC()
	phase(cleanRead)
	t.mark(l + "dotdot_up")
	// "/../" or "/..": c is read again after the step back.
	t.emit(asm.Add.Imm(asm.R1, -1))
	phase(cleanBack)

	t.mark(l + "back")
	t.emit(asm.JNE.Imm(asm.R3, cleanBack, l+"read"))
	t.emit(asm.JEq.Imm(asm.R2, 0, l+"back_done"))
	t.emit(asm.Add.Imm(asm.R2, -1))
	t.getLoop(asm.R0, cState, 4)
	t.emit(asm.JGT.Imm(asm.R0, scratch-strsize, l+"back_done"))
	t.emit(asm.JGT.Imm(asm.R2, strsize-1, l+"back_done"))
	t.emit(asm.Add.Reg(asm.R0, asm.R2))
	t.emit(asm.Add.Reg(asm.R0, cScratch))
	t.emit(asm.LoadMem(asm.R0, asm.R0, 0, asm.Byte))
	t.emit(asm.JEq.Imm(asm.R0, '/', l+"back_done"))
	phase(cleanBack)
	t.mark(l + "back_done")
	t.emit(asm.JNE.Imm(asm.R4, 0, l+"back_read"))
	// The slash found stays, and the NUL follows it.
	t.emit(asm.Add.Imm(asm.R2, 1))
	put('/')
	t.emit(asm.Add.Imm(asm.R2, -1))
	t.mark(l + "back_read")
	phase(cleanRead)

	t.mark(l + "read")
	t.emit(asm.JNE.Imm(asm.R4, 0, l+"get"))
	t.stop()
	t.mark(l + "get")
	get()
	phase(cleanNext)

	t.mark(l + "save")
	t.emit(asm.StoreMem(cState, loopWord(0), asm.R1, asm.DWord))
	t.emit(asm.StoreMem(cState, loopWord(1), asm.R2, asm.DWord))
	t.emit(asm.StoreMem(cState, loopWord(2), asm.R3, asm.DWord))
	t.emit(asm.StoreMem(cState, loopWord(3), asm.R4, asm.DWord))
	t.more()
}

// strtok translates strtok(s, delims): s's first token, its bytes up
// to a delimiter, copied into strsize bytes of scratch, or NULL if
// only delimiters are left; strtok(NULL, delims) goes on where the last
// call of the firing stopped (StateStrtok), up to the same end.
func (t *translator) strtok(pc int, in dif.Instr, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	strsize := int32(t.l.strsize)
	half := int32(t.l.strBufHalf())
	// Words: 0 the phase (0 delimiters, 1 those before the token, 2
	// the token), 1 the place in s, 2 the bytes of s left, 3 the place
	// in the delimiters or the token, 4 the token's offset in scratch,
	// 5 no token, 6 … 9 the delimiters' bitmap.
	t.room(pc, strsize, local("room"))
	t.putLoop(4, asm.R1)
	t.readString(half, 1, arg, badAddr, local("delims"))
	// s's address at keySlot, its end at keySlot+8.
	arg(asm.R1, 0)
	t.emit(asm.JEq.Imm(asm.R1, 0, local("again")))
	t.emit(asm.Mov.Reg(asm.R2, asm.R1))
	t.emit(asm.Add.Imm(asm.R2, strsize))
	t.emit(asm.Ja.Label(local("s")))
	t.mark(local("again"))
	t.emit(asm.LoadMem(asm.R1, rState, stateStrtok, asm.DWord))
	t.emit(asm.LoadMem(asm.R2, rState, stateStrtokEnd, asm.DWord))
	t.mark(local("s"))
	t.emit(asm.StoreMem(asm.R10, keySlot, asm.R1, asm.DWord))
	t.emit(asm.StoreMem(asm.R10, keySlot+8, asm.R2, asm.DWord))
	t.emit(asm.Sub.Reg(asm.R2, asm.R1))
	t.putLoop(2, asm.R2)
	t.emit(asm.JEq.Imm(asm.R2, 0, local("null")))
	at := func(dst asm.Register, _ int) { t.emit(asm.LoadMem(dst, asm.R10, keySlot, asm.DWord)) }
	bad := func(int) {
		at(asm.R1, 0)
		t.faultAt(pc, faultBadAddr, asm.R1, true)
	}
	t.readString(0, 0, at, bad, local("read"))
	for _, i := range []int{0, 1, 3, 5, 6, 7, 8, 9} {
		t.putLoopImm(i, 0)
	}
	t.emit(asm.Mov.Imm(asm.R1, 3*strsize+8))
	t.loop(t.callback("strtok", t.strtokStep))
	t.getLoop(asm.R1, rState, 5)
	t.emit(asm.JNE.Imm(asm.R1, 0, local("null")))
	// The token, with its NUL; where the next call goes on.
	t.getLoop(asm.R1, rState, 4)
	t.getLoop(asm.R2, rState, 3)
	t.emit(asm.JGT.Imm(asm.R1, int32(t.l.scratch)-strsize, local("null")))
	t.emit(asm.JGT.Imm(asm.R2, strsize-1, local("null")))
	t.emit(asm.Add.Reg(asm.R2, asm.R1))
	t.emit(asm.Add.Reg(asm.R2, rScratch))
	t.emit(asm.StoreImm(asm.R2, 0, 0, asm.Byte))
	t.emit(asm.LoadMem(asm.R0, rState, stateScrBase, asm.DWord))
	t.emit(asm.Add.Reg(asm.R0, asm.R1))
	t.set(in.RD(), asm.R0)
	t.emit(asm.Add.Imm(asm.R1, strsize))
	t.emit(asm.StoreMem(rState, stateScratch, asm.R1, asm.DWord))
	t.emit(asm.LoadMem(asm.R1, asm.R10, keySlot, asm.DWord))
	t.getLoop(asm.R2, rState, 1)
	t.emit(asm.Add.Reg(asm.R1, asm.R2))
	t.emit(asm.StoreMem(rState, stateStrtok, asm.R1, asm.DWord))
	t.emit(asm.LoadMem(asm.R1, asm.R10, keySlot+8, asm.DWord))
	t.emit(asm.StoreMem(rState, stateStrtokEnd, asm.R1, asm.DWord))
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("null"))
	t.emit(asm.Mov.Imm(asm.R0, 0))
	t.set(in.RD(), asm.R0)
	t.emit(storeImm64(rState, stateStrtok, 0))
	t.emit(storeImm64(rState, stateStrtokEnd, 0))
	t.mark(local("done"))
}

func (t *translator) strtokStep() {
	const l = "cb_strtok_"
	strsize, scratch := int32(t.l.strsize), int32(t.l.scratch)
	half := int32(t.l.strBufHalf())
	t.getLoop(asm.R1, cState, 1)
	t.getLoop(asm.R2, cState, 3)
	t.getLoop(asm.R0, cState, 0)
	// bit leaves in R4 the bitmap's bit for the byte in R3, its
	// word's address in R5.
	bit := func() {
		t.emit(asm.Mov.Reg(asm.R5, asm.R3))
		t.emit(asm.RSh.Imm(asm.R5, 6))
		t.emit(asm.And.Imm(asm.R5, 3))
		t.emit(asm.LSh.Imm(asm.R5, 3))
		t.emit(asm.Add.Reg(asm.R5, cState))
		t.emit(asm.Mov.Imm(asm.R4, 1))
		t.emit(asm.And.Imm(asm.R3, 63))
		t.emit(asm.LSh.Reg(asm.R4, asm.R3))
	}
	word := int16(loopWord(6))
	t.emit(asm.JNE.Imm(asm.R0, 0, l+"skip"))
	// The delimiters into the bitmap.
	t.bufByte(asm.R3, asm.R2, half, l+"d")
	t.emit(asm.JEq.Imm(asm.R3, 0, l+"delims"))
	t.emit(asm.JGE.Imm(asm.R2, strsize, l+"delims"))
	bit()
	t.emit(asm.LoadMem(asm.R0, asm.R5, word, asm.DWord))
	t.emit(asm.Or.Reg(asm.R0, asm.R4))
	t.emit(asm.StoreMem(asm.R5, word, asm.R0, asm.DWord))
	t.emit(asm.Add.Imm(asm.R2, 1))
	t.emit(asm.StoreMem(cState, loopWord(3), asm.R2, asm.DWord))
	t.more()
	t.mark(l + "delims")
	t.putLoopImmIn(cState, 0, 1)
	t.more()

	// isDelim jumps to label if the byte of s at R1 is a delimiter,
	// else leaves the byte in R3 (and R2 unchanged).
	isDelim := func(label, name string) {
		t.bufByte(asm.R3, asm.R1, 0, l+name)
		t.emit(asm.StoreMem(asm.R10, -16, asm.R3, asm.DWord))
		bit()
		t.emit(asm.LoadMem(asm.R0, asm.R5, word, asm.DWord))
		t.emit(asm.And.Reg(asm.R0, asm.R4))
		t.emit(asm.LoadMem(asm.R3, asm.R10, -16, asm.DWord))
		t.emit(asm.JNE.Imm(asm.R0, 0, label))
	}
	t.mark(l + "skip")
	t.emit(asm.JNE.Imm(asm.R0, 1, l+"token"))
	t.getLoop(asm.R0, cState, 2)
	t.emit(asm.JGE.Reg(asm.R1, asm.R0, l+"start"))
	isDelim(l+"next", "s")
	t.emit(asm.JNE.Imm(asm.R3, 0, l+"start"))
	t.putLoopImmIn(cState, 5, 1)
	t.stop()
	t.mark(l + "next")
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(cState, loopWord(1), asm.R1, asm.DWord))
	t.more()
	t.mark(l + "start")
	t.putLoopImmIn(cState, 0, 2)
	t.putLoopImmIn(cState, 3, 0)
	t.more()

	t.mark(l + "token")
	t.getLoop(asm.R0, cState, 2)
	t.emit(asm.JGE.Reg(asm.R1, asm.R0, l+"end"))
	t.emit(asm.JGE.Imm(asm.R2, strsize-1, l+"end"))
	isDelim(l+"end", "t")
	t.emit(asm.JEq.Imm(asm.R3, 0, l+"end"))
	t.getLoop(asm.R0, cState, 4)
	t.emit(asm.JGT.Imm(asm.R0, scratch-strsize, l+"end"))
	t.emit(asm.Add.Reg(asm.R0, asm.R2))
	t.emit(asm.Add.Reg(asm.R0, cScratch))
	t.emit(asm.StoreMem(asm.R0, 0, asm.R3, asm.Byte))
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(cState, loopWord(1), asm.R1, asm.DWord))
	t.emit(asm.Add.Imm(asm.R2, 1))
	t.emit(asm.StoreMem(cState, loopWord(3), asm.R2, asm.DWord))
	t.more()
	t.mark(l + "end")
	t.stop()
}

// toupper translates toupper(s) and tolower(s) as dtrace_dif_subr's:
// s's letters of one case turned into the other, the rest kept, in
// strsize bytes of scratch. A callback changes the copy in MapStrBuf
// a byte an iteration.
func (t *translator) toupper(pc int, in dif.Instr, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	strsize := int32(t.l.strsize)
	name, lower, upper, convert := "toupper", int32('a'), int32('z'), int32('A')
	if in.Subr() == dif.SubrTolower {
		name, lower, upper, convert = "tolower", 'A', 'Z', 'a'
	}
	t.readString(0, 0, arg, badAddr, local("read"))
	// The length without the NUL, strsize-1 at most.
	t.emit(asm.Add.Imm(asm.R0, -1))
	t.emit(asm.JSLE.Imm(asm.R0, strsize-1, local("fits")))
	t.emit(asm.Mov.Imm(asm.R0, strsize-1))
	t.mark(local("fits"))
	t.emit(asm.StoreMem(asm.R10, keySlot, asm.R0, asm.DWord))
	t.room(pc, strsize, local("room"))
	t.emit(asm.LoadMem(asm.R1, asm.R10, keySlot, asm.DWord))
	t.loop(t.callback(name, func() { t.caseStep(name, lower, upper, convert) }))
	t.emit(asm.LoadMem(asm.R2, asm.R10, keySlot, asm.DWord))
	t.emit(asm.JSGE.Imm(asm.R2, 0, local("len")))
	t.emit(asm.Mov.Imm(asm.R2, 0))
	t.mark(local("len"))
	t.emit(asm.Mov.Imm(asm.R3, 0))
	t.takeString(in.RD(), strsize, local("take"))
}

// caseStep changes byte i of MapStrBuf from lower…upper to convert….
func (t *translator) caseStep(name string, lower, upper, convert int32) {
	l := "cb_" + name + "_"
	t.emit(asm.JLT.Imm(cIndex, int32(t.l.strBufSize()), l+"in"))
	t.stop()
	t.mark(l + "in")
	t.emit(asm.Mov.Reg(asm.R1, cBuf))
	t.emit(asm.Add.Reg(asm.R1, cIndex))
	t.emit(asm.LoadMem(asm.R2, asm.R1, 0, asm.Byte))
	t.emit(asm.JLT.Imm(asm.R2, lower, l+"keep"))
	t.emit(asm.JGT.Imm(asm.R2, upper, l+"keep"))
	t.emit(asm.Add.Imm(asm.R2, convert-lower))
	t.emit(asm.StoreMem(asm.R1, 0, asm.R2, asm.Byte))
	t.mark(l + "keep")
	t.more()
}

// copyout translates copyout(src, dst, size) and copyoutstr(s, dst,
// size) as dtrace_dif_subr's: size bytes of src, or s with its NUL and
// size bytes at most, written to the user's address dst. The bytes
// pass through MapStrBuf, which bounds a copy (a larger one faults
// NOSCRATCH); a source that cannot be read, or a destination that
// cannot be written, faults BADADDR.
func (t *translator) copyout(pc int, in dif.Instr, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	most := int32(t.l.strBufSize())
	if in.Subr() == dif.SubrCopyoutstr {
		t.readString(0, 0, arg, badAddr, local("read"))
		arg(asm.R2, 2)
		t.emit(asm.JLE.Reg(asm.R2, asm.R0, local("n")))
		t.emit(asm.Mov.Reg(asm.R2, asm.R0))
		t.mark(local("n"))
	} else {
		arg(asm.R2, 2)
		t.emit(asm.JEq.Imm(asm.R2, 0, local("n")))
		t.emit(asm.JLE.Imm(asm.R2, most, local("fits")))
		t.faultAt(pc, faultNoScratch, 0, false)
		t.mark(local("fits"))
		t.emit(asm.StoreMem(asm.R10, keySlot, asm.R2, asm.DWord))
		t.emit(asm.LoadMem(asm.R1, asm.R10, strBufPtr, asm.DWord))
		arg(asm.R3, 0)
		t.emit(asm.FnProbeReadKernel.Call())
		t.emit(asm.JEq.Imm(asm.R0, 0, local("read")))
		badAddr(0)
		t.mark(local("read"))
		t.emit(asm.LoadMem(asm.R2, asm.R10, keySlot, asm.DWord))
		t.mark(local("n"))
	}
	// R2 the bytes to write, bounded again for the verifier.
	t.emit(asm.JEq.Imm(asm.R2, 0, local("done")))
	t.emit(asm.JGT.Imm(asm.R2, most, local("done")))
	t.emit(asm.Mov.Reg(asm.R3, asm.R2))
	t.emit(asm.LoadMem(asm.R2, asm.R10, strBufPtr, asm.DWord))
	arg(asm.R1, 1)
	t.emit(asm.FnProbeWriteUser.Call())
	t.emit(asm.JEq.Imm(asm.R0, 0, local("done")))
	badAddr(1)
	t.mark(local("done"))
}

// bcopy translates bcopy(src, dst, size) and copyinto(src, size, dst)
// as dtrace_dif_subr's: size bytes at src, of the kernel's memory or
// for copyinto the user's, copied to dst, which must lie in scratch
// (alloca's); a dst outside it faults BADADDR on dst, a src that
// cannot be read BADADDR on src.
func (t *translator) bcopy(pc int, in dif.Instr, arg func(asm.Register, int), local func(string) string) {
	scratch := int32(t.l.scratch)
	src, dst, size, read := 0, 1, 2, asm.FnProbeReadKernel
	if in.Subr() == dif.SubrCopyinto {
		src, size, dst, read = 0, 1, 2, asm.FnProbeReadUser
	}
	// R1 dst's offset in scratch, R2 the size: both at most scratch,
	// the map's value holding twice as much.
	arg(asm.R1, dst)
	t.emit(asm.LoadMem(asm.R2, rState, stateScrBase, asm.DWord))
	t.emit(asm.Sub.Reg(asm.R1, asm.R2))
	arg(asm.R2, size)
	t.emit(asm.JGT.Imm(asm.R2, scratch, local("dst")))
	t.emit(asm.JGT.Imm(asm.R1, scratch, local("dst")))
	t.emit(asm.Mov.Reg(asm.R3, asm.R1))
	t.emit(asm.Add.Reg(asm.R3, asm.R2))
	t.emit(asm.JLE.Imm(asm.R3, scratch, local("in")))
	t.mark(local("dst"))
	arg(asm.R1, dst)
	t.faultAt(pc, faultBadAddr, asm.R1, true)
	t.mark(local("in"))
	t.emit(asm.JEq.Imm(asm.R2, 0, local("done")))
	t.emit(asm.Add.Reg(asm.R1, rScratch))
	arg(asm.R3, src)
	t.emit(read.Call())
	t.emit(asm.JEq.Imm(asm.R0, 0, local("done")))
	arg(asm.R1, src)
	t.faultAt(pc, faultBadAddr, asm.R1, true)
	t.mark(local("done"))
}
