package bpf

import (
	"encoding/binary"
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/record"
)

// Speculations. MapSpec's value holds a state word for each
// speculation, 1 … nspec (word 0 unused). speculation() takes an
// inactive one, atomically; speculate(id) sends the rest of its
// clause's records to the ring buffer marked with the id in their
// prefix; commit(id) and discard(id) mark the speculation as committing
// or discarding and send a control sample (SpecCommit or SpecDiscard
// and the id in the prefix, no records). The backend keeps a
// speculation's records until its control sample comes, then prints or
// drops them and makes the speculation inactive again: the ring
// buffer's order is the order the kernel's speculation buffers keep.
const (
	specInactive   = 0
	specActive     = 1
	specCommitting = 2
	specDiscarding = 3
)

// Marks of a control sample's speculation word (RecPrefix's second).
const (
	SpecCommit  = 1 << 31
	SpecDiscard = 1 << 30
)

// Counters in MapCtl of speculation() calls that found no speculation:
// none inactive, or only some being committed or discarded.
const (
	ctlSpecUnavail = 16
	ctlSpecBusy    = 24
)

// maxNSpec bounds the nspec option: speculation() tries each in turn.
const maxNSpec = 256

// speculation translates speculation(): the first inactive speculation
// made active, or 0 when none is, counted as dtrace counts failed
// speculations.
func (t *translator) speculation(pc int, in dif.Instr, local func(string) string) {
	n := int(t.l.nspec)
	t.emit(storeImm64(asm.R10, bufSlot, 0)) // whether one was busy
	for i := 1; i <= n; i++ {
		next := local(fmt.Sprintf("try%d", i+1))
		t.specEntry(int32(i), next)
		t.emit(asm.Mov.Reg(asm.R1, asm.R0))
		t.emit(asm.Mov.Imm(asm.R0, specInactive))
		t.emit(asm.Mov.Imm(asm.R2, specActive))
		t.emit(atomic(asm.CmpXchg, asm.R1, asm.R2, 0))
		t.emit(asm.JEq.Imm(asm.R0, specInactive, local(fmt.Sprintf("got%d", i))))
		t.emit(asm.JEq.Imm(asm.R0, specActive, next))
		t.emit(storeImm64(asm.R10, bufSlot, 1))
		t.emit(asm.Ja.Label(next))
		t.mark(local(fmt.Sprintf("got%d", i)))
		t.emit(asm.Mov.Imm(asm.R0, int32(i)))
		t.emit(asm.Ja.Label(local("done")))
		t.mark(next)
		t.emit(asm.Mov.Imm(asm.R0, 0))
	}
	// None: counted as busy if one was being committed or discarded.
	t.lookupTo(asm.R1, mapCtl, local("ctl"))
	t.emit(asm.Mov.Imm(asm.R2, 1))
	t.emit(asm.LoadMem(asm.R3, asm.R10, bufSlot, asm.DWord))
	t.emit(asm.JNE.Imm(asm.R3, 0, local("busy")))
	t.emit(atomic(asm.AddAtomic, asm.R1, asm.R2, ctlSpecUnavail))
	t.emit(asm.Ja.Label(local("none")))
	t.mark(local("busy"))
	t.emit(atomic(asm.AddAtomic, asm.R1, asm.R2, ctlSpecBusy))
	t.mark(local("none"))
	t.emit(asm.Mov.Imm(asm.R0, 0))
	t.mark(local("done"))
	t.set(in.RD(), asm.R0)
}

// specEntry leaves in R0 the state word of speculation i (a constant),
// or goes to missing.
func (t *translator) specEntry(i int32, missing string) {
	t.emit(asm.StoreImm(asm.R10, keySlot, int64(i), asm.Word))
	t.mapPtr(asm.R1, mapSpec)
	t.emit(asm.Mov.Reg(asm.R2, asm.R10))
	t.emit(asm.Add.Imm(asm.R2, keySlot))
	t.helper(asm.FnMapLookupElem)
	t.emit(asm.JEq.Imm(asm.R0, 0, missing))
}

// lookupTo puts entry 0 of the named map in dst; a missing entry (never:
// every map has it) jumps to the DIFO's fault.
func (t *translator) lookupTo(dst asm.Register, name, label string) {
	t.mapPtr(asm.R1, name)
	t.emit(asm.Mov.Reg(asm.R2, asm.R10))
	t.emit(asm.Add.Imm(asm.R2, zeroSlot))
	t.helper(asm.FnMapLookupElem)
	t.emit(asm.JNE.Imm(asm.R0, 0, label))
	t.emit(storeImm64(rState, stateFault, faultIllOp))
	t.emit(storeImm64(rState, stateFaultPC, -1))
	t.emit(asm.Ja.Label(t.fault))
	t.faults[t.fault] = true
	t.mark(label)
	t.emit(asm.Mov.Reg(dst, asm.R0))
}

// specAction appends speculate(), commit() or discard() of the action
// just run, whose id is at StateRet. An id over nspec faults ILLOP, as
// the kernel's; 0 and inactive speculations do nothing (speculate()
// then drops the clause's records).
func (b *builder) specAction(ra *record.Action, lp string) {
	t := b.t
	b.emit(asm.LoadMem(asm.R1, rState, StateRet, asm.DWord))
	b.emit(asm.JEq.Imm(asm.R1, 0, lp+"spec_none"))
	b.emit(asm.JLE.Imm(asm.R1, int32(b.l.nspec), lp+"spec_ok"))
	b.emit(asm.StoreMem(rState, stateFaultAddr, asm.R1, asm.DWord))
	b.emit(storeImm64(rState, stateFault, faultIllOp))
	b.emit(storeImm64(rState, stateFaultPC, -1))
	b.emit(asm.Ja.Label(t.fault))
	t.faults[t.fault] = true
	b.mark(lp + "spec_none")
	if ra.Action == dof.ActSpeculate {
		// No speculation: the clause's records go nowhere.
		b.emit(asm.LoadMem(asm.R1, asm.R10, recPtr, asm.DWord))
		b.emit(asm.StoreImm(asm.R1, 4, specNone, asm.Word))
	}
	b.emit(asm.Ja.Label(lp + "spec_done"))
	b.mark(lp + "spec_ok")
	if ra.Action == dof.ActSpeculate {
		b.emit(asm.LoadMem(asm.R2, asm.R10, recPtr, asm.DWord))
		b.emit(asm.StoreMem(asm.R2, 4, asm.R1, asm.Word))
		b.emit(asm.Ja.Label(lp + "spec_done"))
	} else {
		// Active → committing or discarding, then the control
		// sample; a speculation in another state is left alone.
		to, mark := int32(specCommitting), int64(SpecCommit)
		if ra.Action == dof.ActDiscard {
			to, mark = specDiscarding, SpecDiscard
		}
		b.emit(asm.StoreMem(asm.R10, bufSlot, asm.R1, asm.DWord))
		b.emit(asm.StoreMem(asm.R10, keySlot, asm.R1, asm.Word))
		b.t.mapPtr(asm.R1, mapSpec)
		b.emit(asm.Mov.Reg(asm.R2, asm.R10))
		b.emit(asm.Add.Imm(asm.R2, keySlot))
		b.t.helper(asm.FnMapLookupElem)
		b.emit(asm.JEq.Imm(asm.R0, 0, lp+"spec_done"))
		b.emit(asm.Mov.Reg(asm.R3, asm.R0))
		b.emit(asm.Mov.Imm(asm.R0, specActive))
		b.emit(asm.Mov.Imm(asm.R2, to))
		b.emit(atomic(asm.CmpXchg, asm.R3, asm.R2, 0))
		b.emit(asm.JNE.Imm(asm.R0, specActive, lp+"spec_done"))
		b.emit(asm.LoadMem(asm.R1, asm.R10, bufSlot, asm.DWord))
		b.emit(asm.LoadImm(asm.R2, mark, asm.DWord))
		b.emit(asm.Or.Reg(asm.R1, asm.R2))
		b.emit(asm.LoadMem(asm.R2, asm.R10, recPtr, asm.DWord))
		b.emit(asm.LoadMem(asm.R3, asm.R2, 4, asm.Word))
		b.emit(asm.StoreMem(asm.R10, keySlot, asm.R3, asm.DWord))
		b.emit(asm.StoreMem(asm.R2, 4, asm.R1, asm.Word))
		b.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(mapRing))
		b.emit(asm.Mov.Imm(asm.R3, RecPrefix))
		b.emit(asm.Mov.Imm(asm.R4, 0))
		b.emit(asm.FnRingbufOutput.Call())
		b.emit(asm.JEq.Imm(asm.R0, 0, lp+"ctl_out"))
		b.count(stateBufDrops)
		b.mark(lp + "ctl_out")
		// The prefix's speculation as it was.
		b.emit(asm.LoadMem(asm.R2, asm.R10, recPtr, asm.DWord))
		b.emit(asm.LoadMem(asm.R3, asm.R10, keySlot, asm.DWord))
		b.emit(asm.StoreMem(asm.R2, 4, asm.R3, asm.Word))
	}
	b.mark(lp + "spec_done")
	b.emit(asm.Mov.Imm(asm.R0, 0))
}

// specNone marks a clause's records as speculated to no speculation:
// they are dropped.
const specNone = 1<<30 - 1

// specCheck appends the check before a speculated clause's records go
// out: to an active speculation, else nowhere.
func (b *builder) specCheck(skip string, lp string) {
	b.emit(asm.LoadMem(asm.R1, asm.R10, recPtr, asm.DWord))
	b.emit(asm.LoadMem(asm.R1, asm.R1, 4, asm.Word))
	b.emit(asm.JEq.Imm(asm.R1, 0, lp+"spec_out"))
	b.emit(asm.JGT.Imm(asm.R1, int32(b.l.nspec), skip))
	b.emit(asm.StoreMem(asm.R10, keySlot, asm.R1, asm.Word))
	b.t.mapPtr(asm.R1, mapSpec)
	b.emit(asm.Mov.Reg(asm.R2, asm.R10))
	b.emit(asm.Add.Imm(asm.R2, keySlot))
	b.t.helper(asm.FnMapLookupElem)
	b.emit(asm.JEq.Imm(asm.R0, 0, skip))
	b.emit(asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord))
	b.emit(asm.JNE.Imm(asm.R1, specActive, skip))
	b.mark(lp + "spec_out")
	b.emit(asm.Mov.Imm(asm.R0, 0))
}

// SpecStates reads the speculations' states, by id (0 unused).
func (r *Runtime) SpecStates() ([]uint64, error) {
	s := make([]uint64, r.Spec.MaxEntries())
	for i := range s {
		if err := r.Spec.Lookup(uint32(i), &s[i]); err != nil {
			return nil, fmt.Errorf("bpf: reading the speculations: %w", err)
		}
	}
	return s, nil
}

// FreeSpeculation makes speculation id inactive again, once its
// records are committed or discarded.
func (r *Runtime) FreeSpeculation(id uint32) error {
	if err := r.Spec.Put(id, uint64(specInactive)); err != nil {
		return fmt.Errorf("bpf: freeing speculation %d: %w", id, err)
	}
	return nil
}

// SpecFailures returns the speculation() calls that found none, as
// dtrace counts them: none inactive, or some still busy.
func (r *Runtime) SpecFailures() (unavail, busy uint64, err error) {
	var b [ctlSize]byte
	if err := r.Ctl.Lookup(uint32(0), &b); err != nil {
		return 0, 0, fmt.Errorf("bpf: reading the control map: %w", err)
	}
	return binary.NativeEndian.Uint64(b[ctlSpecUnavail:]), binary.NativeEndian.Uint64(b[ctlSpecBusy:]), nil
}

// atomic is op on the 64-bit word at dst+off with src. Its immediate is
// set here: cilium/ebpf v0.22.0 encodes the operation after it has
// taken the immediate, so that every atomic marshals as an add.
func atomic(op asm.AtomicOp, dst, src asm.Register, off int16) asm.Instruction {
	ins := op.Mem(dst, src, asm.DWord, off)
	ins.Constant = int64(op >> 8)
	return ins
}
