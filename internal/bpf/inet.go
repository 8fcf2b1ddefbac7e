package bpf

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/kdtrace/kdtrace/dif"
)

// Address families inet_ntop() takes: AF_INET, and AF_INET6 as Linux
// numbers it (the kernel's sockets carry it) or as FreeBSD does.
const (
	afInet       = 2
	afInet6      = 10
	afInet6BSD   = 28
	inetStrLen   = 16 // INET_ADDRSTRLEN, the scratch an IPv4 address takes
	inet6StrLen  = 46 // INET6_ADDRSTRLEN
	inet6Size    = 16 // the bytes of struct in6_addr
	in6GroupLast = 14 // the offset of an IPv6 address's last 16-bit group
)

// inetNtop translates inet_ntoa(addr), inet_ntoa6(addr) and
// inet_ntop(af, addr) as dtrace_dif_subr writes them: backwards from the
// end of INET_ADDRSTRLEN or INET6_ADDRSTRLEN bytes of scratch, an IPv4
// address in dotted decimal, an IPv6 one in groups of hexadecimal
// digits with its longest run of zero groups as "::" and an IPv4-mapped
// or -compatible address's last 4 bytes in dotted decimal (only those
// for inet_ntoa6); another family faults ILLOP.
func (t *translator) inetNtop(pc int, in dif.Instr, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	switch in.Subr() {
	case dif.SubrInetNtoa:
		t.inet4(pc, in, 0, arg, badAddr, local)
	case dif.SubrInetNtoa6:
		t.inet6(pc, in, 0, true, arg, badAddr, local)
	default:
		arg(asm.R1, 0)
		t.emit(asm.JEq.Imm(asm.R1, afInet, local("v4")))
		t.emit(asm.JEq.Imm(asm.R1, afInet6, local("v6")))
		t.emit(asm.JEq.Imm(asm.R1, afInet6BSD, local("v6")))
		t.faultAt(pc, faultIllOp, 0, false)
		t.mark(local("v4"))
		t.inet4(pc, in, 1, arg, badAddr, func(s string) string { return local("v4_" + s) })
		t.emit(asm.Ja.Label(local("done")))
		t.mark(local("v6"))
		t.inet6(pc, in, 1, false, arg, badAddr, func(s string) string { return local("v6_" + s) })
		t.mark(local("done"))
		t.emit(asm.Mov.Imm(asm.R0, 0))
	}
}

// inetStart reads n bytes of the address, argument i, into MapStrBuf
// and takes size bytes of scratch for the string, its NUL written. Words:
// 0 the place of the next byte written, 2 the string's offset in
// scratch.
func (t *translator) inetStart(pc, i int, n, size int32, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	t.emit(asm.LoadMem(asm.R1, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.Mov.Imm(asm.R2, n))
	arg(asm.R3, i)
	t.emit(asm.FnProbeReadKernel.Call())
	t.emit(asm.JEq.Imm(asm.R0, 0, local("read")))
	badAddr(i)
	t.mark(local("read"))
	t.room(pc, size, local("room"))
	t.putLoop(2, asm.R1)
	t.emit(asm.Add.Reg(asm.R1, rScratch))
	t.emit(asm.StoreImm(asm.R1, int16(size-1), 0, asm.Byte))
	t.putLoopImm(0, size-2)
}

// inetEnd returns the string, which starts after the place, and takes
// its size bytes of scratch.
func (t *translator) inetEnd(rd uint8, size int32) {
	t.getLoop(asm.R1, rState, 2)
	t.getLoop(asm.R2, rState, 0)
	t.emit(asm.LoadMem(asm.R0, rState, stateScrBase, asm.DWord))
	t.emit(asm.Add.Reg(asm.R0, asm.R1))
	t.emit(asm.Add.Reg(asm.R0, asm.R2))
	t.emit(asm.Add.Imm(asm.R0, 1))
	t.set(rd, asm.R0)
	t.emit(asm.Add.Imm(asm.R1, size))
	t.emit(asm.StoreMem(rState, stateScratch, asm.R1, asm.DWord))
}

// inet4 writes the IPv4 address that is argument i.
func (t *translator) inet4(pc int, in dif.Instr, i int, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	t.inetStart(pc, i, 4, inetStrLen, arg, badAddr, local)
	t.emit(asm.LoadMem(asm.R1, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.LoadMem(asm.R1, asm.R1, 0, asm.Word))
	t.putLoop(1, asm.R1)
	t.emit(asm.Mov.Imm(asm.R1, 4))
	t.loop(t.callback("inet4", t.dottedStep(inetStrLen)))
	t.inetEnd(in.RD(), inetStrLen)
}

// inet6 writes the IPv6 address that is argument i; v4only leaves an
// IPv4-mapped or -compatible address as its IPv4 part.
func (t *translator) inet6(pc int, in dif.Instr, i int, v4only bool, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	// Words: 3 the first zero group of the longest run, 4 the one of
	// the run being looked at, 5 the run's bytes, 6 the group written.
	t.inetStart(pc, i, inet6Size, inet6StrLen, arg, badAddr, local)
	t.putLoopImm(3, -1)
	t.putLoopImm(4, -1)
	t.putLoopImm(5, 1)
	t.emit(asm.Mov.Imm(asm.R1, inet6Size))
	t.loop(t.callback("inet6_zeroes", t.zeroRunStep))
	// Mapped (::ffff:a.b.c.d) or compatible (::a.b.c.d, but not :: or
	// ::1): the first 10 bytes zero.
	t.putLoopImm(6, in6GroupLast)
	t.emit(asm.LoadMem(asm.R3, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.LoadMem(asm.R1, asm.R3, 0, asm.DWord))
	t.emit(asm.LoadMem(asm.R2, asm.R3, 8, asm.Half))
	t.emit(asm.Or.Reg(asm.R1, asm.R2))
	t.emit(asm.JNE.Imm(asm.R1, 0, local("groups")))
	t.emit(asm.LoadMem(asm.R2, asm.R3, 10, asm.Half))
	t.emit(asm.LoadMem(asm.R1, asm.R3, 12, asm.Word))
	t.emit(asm.JEq.Imm(asm.R2, 0xffff, local("v4")))
	t.emit(asm.JNE.Imm(asm.R2, 0, local("groups")))
	t.emit(asm.JEq.Imm(asm.R1, 0, local("groups")))
	t.emit(asm.JEq.Imm(asm.R1, 0x01000000, local("groups"))) // ::1, its bytes read in the host's order
	t.mark(local("v4"))
	t.putLoop(1, asm.R1)
	t.emit(asm.Mov.Imm(asm.R1, 4))
	t.loop(t.callback("inet6_v4", t.dottedStep(inet6StrLen)))
	if v4only {
		t.emit(asm.Ja.Label(local("end")))
	} else {
		t.putLoopImm(6, 10)
	}
	t.mark(local("groups"))
	t.emit(asm.Mov.Imm(asm.R1, in6GroupLast/2+1))
	t.loop(t.callback("inet6_groups", t.groupStep))
	t.mark(local("end"))
	t.inetEnd(in.RD(), inet6StrLen)
}

// inetPut returns a function that writes R5 at the place (R4) of the
// string of size bytes and moves back; a place out of it, which no
// address reaches, writes nothing: the verifier's bound.
func (t *translator) inetPut(l string, size int32) func() {
	n := 0
	scratch := int32(t.l.scratch)
	return func() {
		n++
		skip := fmt.Sprintf("%sput%d", l, n)
		t.getLoop(asm.R0, cState, 2)
		t.emit(asm.JGT.Imm(asm.R0, scratch-size, skip))
		t.emit(asm.JGT.Imm(asm.R4, size-1, skip))
		t.emit(asm.Add.Reg(asm.R0, asm.R4))
		t.emit(asm.Add.Reg(asm.R0, cScratch))
		t.emit(asm.StoreMem(asm.R0, 0, asm.R5, asm.Byte))
		t.mark(skip)
		t.emit(asm.Add.Imm(asm.R4, -1))
	}
}

// dottedStep returns a callback that writes byte 3-i of the IPv4
// address in word 1 (in memory's order) in decimal, and the dot before
// it, in a string of size bytes.
func (t *translator) dottedStep(size int32) func() {
	return func() {
		l := fmt.Sprintf("cb_dotted%d_", size)
		put := t.inetPut(l, size)
		t.getLoop(asm.R4, cState, 0)
		// R3 the byte: the word's bits 8·(3-i) on.
		t.getLoop(asm.R3, cState, 1)
		t.emit(asm.Mov.Imm(asm.R1, 3))
		t.emit(asm.Sub.Reg(asm.R1, cIndex))
		t.emit(asm.And.Imm(asm.R1, 3))
		t.emit(asm.LSh.Imm(asm.R1, 3))
		t.emit(asm.RSh.Reg(asm.R3, asm.R1))
		t.emit(asm.And.Imm(asm.R3, 0xff))
		t.emit(asm.JNE.Imm(asm.R3, 0, l+"digits"))
		t.emit(asm.Mov.Imm(asm.R5, '0'))
		put()
		t.emit(asm.Ja.Label(l + "dot"))
		t.mark(l + "digits")
		for d := range 3 {
			t.emit(asm.Mov.Reg(asm.R5, asm.R3))
			t.emit(asm.Mod.Imm(asm.R5, 10))
			t.emit(asm.Add.Imm(asm.R5, '0'))
			put()
			t.emit(asm.Div.Imm(asm.R3, 10))
			if d < 2 {
				t.emit(asm.JEq.Imm(asm.R3, 0, l+"dot"))
			}
		}
		t.mark(l + "dot")
		t.emit(asm.JEq.Imm(cIndex, 3, l+"save"))
		t.emit(asm.Mov.Imm(asm.R5, '.'))
		put()
		t.mark(l + "save")
		t.emit(asm.StoreMem(cState, loopWord(0), asm.R4, asm.DWord))
		t.more()
	}
}

// zeroRunStep looks at byte i of the IPv6 address as the kernel's scan
// for the longest run of zero groups does, quirks and all.
func (t *translator) zeroRunStep() {
	const l = "cb_inet6_zeroes_"
	t.bufByte(asm.R3, cIndex, 0, l+"c")
	t.getLoop(asm.R4, cState, 4)
	t.emit(asm.JNE.Imm(asm.R3, 0, l+"run"))
	t.emit(asm.JNE.Imm(asm.R4, -1, l+"run"))
	t.emit(asm.Mov.Reg(asm.R1, cIndex))
	t.emit(asm.And.Imm(asm.R1, 1))
	t.emit(asm.JNE.Imm(asm.R1, 0, l+"run"))
	t.emit(asm.StoreMem(cState, loopWord(4), cIndex, asm.DWord))
	t.more()
	t.mark(l + "run")
	t.emit(asm.JEq.Imm(asm.R4, -1, l+"more"))
	t.emit(asm.JNE.Imm(asm.R3, 0, l+"ends"))
	t.emit(asm.JNE.Imm(cIndex, inet6Size-1, l+"more"))
	t.mark(l + "ends")
	t.putLoopImmIn(cState, 4, -1)
	// R1 = i - tryzero; no longer than the longest: forgotten.
	t.emit(asm.Mov.Reg(asm.R1, cIndex))
	t.emit(asm.Sub.Reg(asm.R1, asm.R4))
	t.getLoop(asm.R2, cState, 5)
	t.emit(asm.JSLE.Reg(asm.R1, asm.R2, l+"more"))
	t.emit(asm.StoreMem(cState, loopWord(3), asm.R4, asm.DWord))
	t.emit(asm.Mov.Reg(asm.R1, cIndex))
	t.emit(asm.And.Imm(asm.R1, -2))
	t.emit(asm.Sub.Reg(asm.R1, asm.R4))
	t.emit(asm.JNE.Imm(asm.R3, 0, l+"store"))
	t.emit(asm.JNE.Imm(cIndex, inet6Size-1, l+"store"))
	t.emit(asm.Add.Imm(asm.R1, 2))
	t.mark(l + "store")
	t.emit(asm.StoreMem(cState, loopWord(5), asm.R1, asm.DWord))
	t.mark(l + "more")
	t.more()
}

// groupStep writes the 16-bit group at word 6's offset, from the last
// back: "::" for the longest run of zero groups, a colon after each
// other group but the last and the one before the run, its hexadecimal
// digits without leading zeroes.
func (t *translator) groupStep() {
	const l = "cb_inet6_groups_"
	put := t.inetPut(l, inet6StrLen)
	t.getLoop(asm.R1, cState, 6)
	t.emit(asm.JSGE.Imm(asm.R1, 0, l+"group"))
	t.stop()
	t.mark(l + "group")
	t.getLoop(asm.R4, cState, 0)
	// R2 firstzero, R3 numzero.
	t.getLoop(asm.R2, cState, 3)
	t.getLoop(asm.R3, cState, 5)
	t.emit(asm.Mov.Reg(asm.R0, asm.R2))
	t.emit(asm.Add.Reg(asm.R0, asm.R3))
	t.emit(asm.Add.Imm(asm.R0, -2))
	t.emit(asm.JNE.Reg(asm.R1, asm.R0, l+"colon"))
	t.emit(asm.Mov.Imm(asm.R5, ':'))
	put()
	put()
	t.emit(asm.Sub.Reg(asm.R1, asm.R3))
	t.emit(asm.Add.Imm(asm.R1, 2))
	t.emit(asm.Ja.Label(l + "next"))
	t.mark(l + "colon")
	t.emit(asm.JSGE.Imm(asm.R1, in6GroupLast, l+"digits"))
	t.emit(asm.Add.Imm(asm.R2, -2))
	t.emit(asm.JEq.Reg(asm.R1, asm.R2, l+"digits"))
	t.emit(asm.Mov.Imm(asm.R5, ':'))
	put()
	t.mark(l + "digits")
	// R3 the group's value.
	t.bufByte(asm.R3, asm.R1, 0, l+"hi")
	t.emit(asm.LSh.Imm(asm.R3, 8))
	t.bufByte(asm.R2, asm.R1, 1, l+"lo")
	t.emit(asm.Or.Reg(asm.R3, asm.R2))
	t.emit(asm.JNE.Imm(asm.R3, 0, l+"hex"))
	t.emit(asm.Mov.Imm(asm.R5, '0'))
	put()
	t.emit(asm.Ja.Label(l + "next"))
	t.mark(l + "hex")
	for d := range 4 {
		alpha, digit := fmt.Sprintf("%salpha%d", l, d), fmt.Sprintf("%sdigit%d", l, d)
		t.emit(asm.Mov.Reg(asm.R5, asm.R3))
		t.emit(asm.And.Imm(asm.R5, 15))
		t.emit(asm.JGT.Imm(asm.R5, 9, alpha))
		t.emit(asm.Add.Imm(asm.R5, '0'))
		t.emit(asm.Ja.Label(digit))
		t.mark(alpha)
		t.emit(asm.Add.Imm(asm.R5, 'a'-10))
		t.mark(digit)
		put()
		t.emit(asm.RSh.Imm(asm.R3, 4))
		if d < 3 {
			t.emit(asm.JEq.Imm(asm.R3, 0, l+"next"))
		}
	}
	t.mark(l + "next")
	t.emit(asm.Add.Imm(asm.R1, -2))
	t.emit(asm.StoreMem(cState, loopWord(6), asm.R1, asm.DWord))
	t.emit(asm.StoreMem(cState, loopWord(0), asm.R4, asm.DWord))
	t.more()
}
