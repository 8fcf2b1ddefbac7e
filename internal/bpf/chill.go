package bpf

import (
	"github.com/cilium/ebpf/asm"
)

// dtrace's limits of chill(), in nanoseconds: a CPU chills at most
// chillMax in each chillInterval (dtrace_chill_max and
// dtrace_chill_interval).
const (
	chillMax      = 500_000_000
	chillInterval = 1_000_000_000
)

// chill spins for the nanoseconds at StateRet as dtrace_action_chill
// does: the CPU's interval starts anew when the last began more than
// chillInterval ago, and a chill that would take its total over
// chillMax (or overflow it) faults ILLOP, at no DIF offset. The spin is
// a bpf_loop whose callback reads the clock, in a bpf_loop of those, as
// one takes at most maxLoops iterations.
func (b *builder) chill(lp string) {
	t := b.t
	b.emit(asm.FnKtimeGetNs.Call())
	t.putLoop(0, asm.R0)
	b.emit(asm.LoadMem(asm.R1, rState, stateChillMark, asm.DWord))
	b.emit(asm.Mov.Reg(asm.R2, asm.R0))
	b.emit(asm.Sub.Reg(asm.R2, asm.R1))
	b.emit(asm.LoadMem(asm.R3, rState, stateChilled, asm.DWord))
	b.emit(asm.JSLE.Imm(asm.R2, chillInterval, lp+"interval"))
	b.emit(asm.StoreMem(rState, stateChillMark, asm.R0, asm.DWord))
	b.emit(asm.Mov.Imm(asm.R3, 0))
	b.mark(lp + "interval")
	// R3 chilled, R4 the chill asked for, R5 their sum.
	b.emit(asm.LoadMem(asm.R4, rState, StateRet, asm.DWord))
	b.emit(asm.Mov.Reg(asm.R5, asm.R3))
	b.emit(asm.Add.Reg(asm.R5, asm.R4))
	b.emit(asm.JSGT.Imm(asm.R5, chillMax, lp+"illop"))
	b.emit(asm.JSGE.Reg(asm.R5, asm.R3, lp+"spin"))
	b.mark(lp + "illop")
	// The interval's mark is kept, as the kernel keeps it.
	b.emit(asm.StoreMem(rState, stateChilled, asm.R3, asm.DWord))
	t.faultAt(-1, faultIllOp, 0, false)
	b.mark(lp + "spin")
	b.emit(asm.StoreMem(rState, stateChilled, asm.R5, asm.DWord))
	t.putLoop(1, asm.R4)
	b.emit(asm.Mov.Imm(asm.R1, 64))
	t.loop(t.callback("chill", func() {
		const l = "cb_chill_"
		t.spun(l + "done")
		t.emit(asm.Mov.Imm(asm.R1, maxLoops))
		t.loop(t.callback("spin", func() {
			t.spun("cb_spin_done")
			t.more()
		}))
		t.more()
	}))
}

// spun ends a callback's loop, at label, when the spin asked for is
// over.
func (t *translator) spun(label string) {
	t.emit(asm.FnKtimeGetNs.Call())
	t.getLoop(asm.R1, cState, 0)
	t.emit(asm.Sub.Reg(asm.R0, asm.R1))
	t.getLoop(asm.R1, cState, 1)
	t.emit(asm.JSLT.Reg(asm.R0, asm.R1, label+"_more"))
	t.stop()
	t.mark(label + "_more")
	t.emit(asm.Mov.Imm(asm.R0, 0))
}
