package bpf

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"

	"github.com/kdtrace/kdtrace/dif"
)

// Fault codes a translated DIFO writes at StateFault, numbered as dtrace.h
// numbers them (DTRACEFLT_*).
const (
	faultBadAddr   = 1 // DTRACEFLT_BADADDR
	faultBadAlign  = 2 // DTRACEFLT_BADALIGN
	faultIllOp     = 3 // DTRACEFLT_ILLOP
	faultDivZero   = 4 // DTRACEFLT_DIVZERO
	faultNoScratch = 5 // DTRACEFLT_NOSCRATCH
)

// An Error is the translator's refusal of a DIFO: the instruction it
// cannot translate (yet), and why.
type Error struct {
	PC     int // index of the instruction, -1 for the DIFO as a whole
	Instr  dif.Instr
	Reason string
}

func (e *Error) Error() string {
	if e.PC < 0 {
		return "bpf: " + e.Reason
	}
	return fmt.Sprintf("bpf: cannot translate DIF instruction %d (%v): %s", e.PC, e.Instr, e.Reason)
}

// The stack frame of a translated DIFO, offsets from R10. DIF register
// %ri lives at regSlot(i); %r0 always reads zero and has no slot.
const (
	ccA       = -64  // condition codes: the operands of the last cmp, or (tst's r1 != 0, 0)
	ccB       = -72  //
	bufSlot   = -80  // destination of bpf_probe_read_kernel; value of a thread-local store
	keySlot   = -96  // a thread key, 16 bytes: variable ID, padding, TID
	zeroSlot  = -104 // the 4-byte key 0 of the single-entry maps
	ctxSlot   = -112 // the program's context
	strBufPtr = -120 // MapStrBuf's value on this CPU, for scmp
	elemPtr   = -184 // the by-reference element of an associative array looked up last, or 0
	// The tuple stack, below the probe program's frame: entry i's value
	// at tupleSlot-16·i, its size 8 bytes below.
	tupleSlot = -200
)

func tupleValue(i int) int16 { return int16(tupleSlot - 16*i) }
func tupleSize(i int) int16  { return tupleValue(i) - 8 }

func regSlot(r uint8) int16 { return -8 * int16(r) }

// BPF registers that hold the same thing throughout a program.
const (
	rScratch = asm.R6 // MapScratch's value on this CPU
	rState   = asm.R7 // MapState's value on this CPU
	rGlobals = asm.R8 // MapGlobals' value
	rLocals  = asm.R9 // MapLocals' value on this CPU
)

// Translate returns a whole BPF program that runs o, as a raw tracepoint
// program (its context unused): it writes o's return value at StateRet
// of MapState, or the fault that stopped it at StateFault, StateFaultPC
// and StateFaultAddr, and returns 0, or 1 after a fault. o must have
// been added to l. An instruction the translator cannot translate yet is
// refused with an *Error naming it.
func Translate(o *dif.Object, l *Layout) (asm.Instructions, error) {
	t := newTranslator(l)
	if err := t.use(o); err != nil {
		return nil, err
	}
	t.prologue()
	if err := t.difo(o, "", "ret", "fault"); err != nil {
		return nil, err
	}
	t.mark("ret")
	t.emit(asm.Mov.Imm(asm.R0, 0))
	t.emit(asm.Return())
	if t.faults["fault"] {
		t.mark("fault")
		t.emit(asm.Mov.Imm(asm.R0, 1))
		t.emit(asm.Return())
	}
	t.functions()
	return relax(t.out), nil
}

// A translator appends the BPF code of one program: its prologue, then
// DIFOs, each translated in place where the program runs it.
type translator struct {
	l     *Layout
	ctx   Context // what the program runs on: errno needs it
	uses  struct{ globals, locals, strings, scratch, strbuf, args bool }
	out   asm.Instructions
	label string // symbol for the next instruction emitted

	// The DIFO being translated.
	o       *dif.Object
	strBase uint32
	targets map[uint32]bool // DIF instructions that are branch targets
	reach   []bool          // DIF instructions that can run
	tuples  []int           // depth of the tuple stack before each instruction
	prefix  string          // of the DIFO's labels, unique in the program
	ret     string          // label a ret jumps to, its value at StateRet
	fault   string          // label a fault jumps to, recorded in MapState

	// faults are the fault labels jumped to: the verifier refuses
	// code that cannot run, so a fault path is emitted only if used.
	faults map[string]bool

	// The callbacks of bpf_loop the code calls, emitted after it.
	funcs  []string
	bodies map[string]func()
	loops  int // bpf_loop calls so far, for unique labels

	// subs are the functions of a chain's program (builder.chained),
	// lp the prefix of the labels of the prologue of the one emitted.
	subs []subprog
	lp   string
	// shared says the program is one of a chain's, whose map lookups
	// and reads of the CPU's number go through functions of its own
	// (helper): helpers are those made so far.
	shared  bool
	helpers []asm.BuiltinFunc
}

// A subprog is a function of a program other than a callback: its name
// and where it starts.
type subprog struct {
	name string
	at   int
}

func newTranslator(l *Layout) *translator { return &translator{l: l, faults: map[string]bool{}} }

// use checks o as scan does and notes the maps it needs: every DIFO of
// a program is used before the prologue is emitted.
func (t *translator) use(o *dif.Object) error {
	base, ok := t.l.StringBase(o)
	if !ok {
		return &Error{PC: -1, Reason: "DIFO not added to the layout"}
	}
	t.o, t.strBase = o, base
	return t.scan()
}

// difo appends the code of o: its ret stores the value at StateRet and
// jumps to ret, a fault records itself in MapState and jumps to fault.
// prefix makes its labels unique in the program.
func (t *translator) difo(o *dif.Object, prefix, ret, fault string) error {
	if err := t.use(o); err != nil {
		return err
	}
	t.prefix, t.ret, t.fault = prefix, ret, fault
	// The condition codes start clear for each DIFO, as the kernel's
	// dtrace_dif_emulate starts them: no condition holds for (1, 0),
	// neither equal, nor negative in difference, nor unsigned less.
	t.emit(storeImm64(asm.R10, ccA, 1))
	t.emit(storeImm64(asm.R10, ccB, 0))
	for pc, in := range o.Code {
		if !t.reach[pc] {
			continue
		}
		if t.targets[uint32(pc)] {
			t.mark(t.difLabel(uint32(pc)))
		}
		if err := t.instr(pc, in); err != nil {
			return err
		}
	}
	return nil
}

func (t *translator) difLabel(pc uint32) string { return fmt.Sprintf("%sdif%d", t.prefix, pc) }

// scan checks what the code needs before any is emitted: registers in
// range, branches forward, the maps it uses, and which instructions can
// run, as the verifier refuses code that cannot.
func (t *translator) scan() error {
	t.targets = map[uint32]bool{}
	// As the kernel requires, the last instruction is a ret, so no
	// path falls off the end.
	if n := len(t.o.Code); n == 0 || t.o.Code[n-1].Op() != dif.RET {
		return &Error{PC: -1, Reason: "the last DIF instruction is not ret"}
	}
	t.reach = make([]bool, len(t.o.Code))
	t.reach[0] = true
	// The tuple stack's depth is known where each instruction runs, as
	// the compiler pushes a call's arguments in straight-line code: its
	// entries live at fixed places in the frame. Where paths of
	// different depths meet (a call in one arm of ?:), the depth is
	// unknown until the next flushts, and the stack cannot be used.
	const unset, unknown = -1, -2
	t.tuples = make([]int, len(t.o.Code))
	for i := range t.tuples {
		t.tuples[i] = unset
	}
	t.tuples[0] = 0
	depth := func(target, d int) {
		if t.tuples[target] != unset && t.tuples[target] != d {
			d = unknown
		}
		t.tuples[target] = d
	}
	for pc, in := range t.o.Code {
		if !t.reach[pc] {
			continue
		}
		op := in.Op()
		d := t.tuples[pc]
		switch op {
		case dif.FLUSHTS:
			d = 0
		case dif.PUSHTR, dif.PUSHTV, dif.POPTS, dif.CALL, dif.LDGAA, dif.STGAA, dif.LDTAA, dif.STTAA:
			if d == unknown {
				return &Error{pc, in, "the tuple stack's depth differs on the paths that lead here"}
			}
			switch op {
			case dif.PUSHTR, dif.PUSHTV:
				// A push beyond faults TUPOFLOW and leaves the depth.
				d = min(d+1, dif.NTupleRegs)
			case dif.POPTS:
				d = max(d-1, 0)
			}
		}
		if op != dif.RET && op != dif.BA && pc+1 < len(t.o.Code) {
			t.reach[pc+1] = true
			depth(pc+1, d)
		}
		switch op.Form() {
		case dif.FormBranch:
			target := in.Label()
			if target <= uint32(pc) || target >= uint32(len(t.o.Code)) {
				return &Error{pc, in, fmt.Sprintf("branch to %d is not forward within the DIFO", target)}
			}
			t.targets[target] = true
			t.reach[target] = true
			depth(int(target), d)
		case dif.FormStore:
			// As the kernel's dtrace_difo_validate refuses it.
			if in.RD() == 0 {
				return &Error{pc, in, "store to %r0, address 0"}
			}
			fallthrough
		default:
			for _, r := range regsOf(in) {
				if r >= dif.NRegs {
					return &Error{pc, in, fmt.Sprintf("register %%r%d out of range", r)}
				}
			}
		}
		switch op {
		case dif.LDGS, dif.STGS:
			t.uses.globals = true
			if in.Var() == dif.VarExecname {
				t.uses.scratch = true
			}
			if v := in.Var(); v >= dif.VarArg0 && v <= dif.VarArg9 {
				t.uses.args = true
			}
		case dif.LDLS, dif.STLS:
			t.uses.locals = true
		case dif.SETS:
			t.uses.strings = true
		case dif.ALLOCS:
			t.uses.scratch = true
		case dif.STB, dif.STH, dif.STW, dif.STX, dif.COPYS:
			// Stores may go to by-reference variables' storage.
			t.uses.scratch = true
			t.uses.globals = t.uses.globals || t.l.grefSize > 0
			t.uses.locals = t.uses.locals || t.l.lrefSize > 0

		case dif.SCMP, dif.PUSHTR:
			t.uses.strbuf = true
		case dif.STGAA, dif.STTAA, dif.LDGAA, dif.LDTAA:
			t.uses.scratch = true // for its zeroes
		case dif.CALL:
			t.uses.strbuf = true
			t.uses.scratch = true
		case dif.LDGA:
			t.uses.args = true
		}
		if op == dif.LDGS {
			switch in.Var() {
			case dif.VarErrno:
				// Read from the registers the prologue copies with
				// the arguments.
				t.uses.args = true
			case dif.VarStackdepth, dif.VarUstackdepth, dif.VarCaller, dif.VarUcaller:
				// bpf_get_stack writes the frames there.
				t.uses.strbuf = true
			case dif.VarExecargs:
				// The arguments are read into MapStrBuf, then scratch.
				t.uses.strbuf = true
				t.uses.scratch = true
			}
		}
	}
	return nil
}

// regsOf returns the register fields of an instruction.
func regsOf(in dif.Instr) []uint8 {
	switch in.Op().Form() {
	case dif.FormALU:
		return []uint8{in.R1(), in.R2(), in.RD()}
	case dif.FormR1RD, dif.FormLoad, dif.FormStore:
		return []uint8{in.R1(), in.RD()}
	case dif.FormCmp:
		return []uint8{in.R1(), in.R2()}
	case dif.FormTst:
		return []uint8{in.R1()}
	case dif.FormRet, dif.FormSetx, dif.FormSets, dif.FormLdv, dif.FormStv, dif.FormCall:
		return []uint8{in.RD()}
	case dif.FormPush:
		return []uint8{in.R2(), in.RD()}
	}
	return nil
}

// emit appends ins, carrying the pending label.
func (t *translator) emit(ins asm.Instruction) {
	if t.label != "" {
		ins = ins.WithSymbol(t.label)
		t.label = ""
	}
	t.out = append(t.out, ins)
}

// mark labels the next instruction emitted. Two labels at one place
// are separated by a harmless instruction: R0 is dead between DIF
// instructions.
func (t *translator) mark(label string) {
	if n := len(t.out); t.label == "" && n > 0 && isJumpTo(t.out[n-1], label) {
		// A jump to the next instruction: the verifier would remove
		// it, moving the whole program. Labelled, it becomes the
		// separator of two labels.
		if sym := t.out[n-1].Symbol(); sym != "" {
			t.out[n-1] = asm.Mov.Imm(asm.R0, 0).WithSymbol(sym)
		} else {
			t.out = t.out[:n-1]
		}
	}
	if t.label != "" {
		t.emit(asm.Mov.Imm(asm.R0, 0))
	}
	t.label = label
}

// isJumpTo reports whether ins is an unconditional jump to label.
func isJumpTo(ins asm.Instruction, label string) bool {
	return ins.OpCode.Class() == asm.JumpClass && ins.OpCode.JumpOp() == asm.Ja && ins.Reference() == label
}

func (t *translator) mapPtr(dst asm.Register, name string) {
	t.emit(asm.LoadMapPtr(dst, 0).WithReference(name))
}

// lookup puts the value of entry 0 of the named map in dst, or ends the
// program if it has none.
func (t *translator) lookup(dst asm.Register, name string) {
	t.mapPtr(asm.R1, name)
	t.emit(asm.Mov.Reg(asm.R2, asm.R10))
	t.emit(asm.Add.Imm(asm.R2, zeroSlot))
	t.helper(asm.FnMapLookupElem)
	t.emit(asm.JNE.Imm(asm.R0, 0, t.lp+"have_"+name))
	t.emit(asm.Mov.Imm(asm.R0, 0))
	t.emit(asm.Return())
	t.mark(t.lp + "have_" + name)
	t.emit(asm.Mov.Reg(dst, asm.R0))
}

func (t *translator) prologue() {
	t.emit(asm.StoreMem(asm.R10, ctxSlot, asm.R1, asm.DWord))
	t.emit(storeImm64(asm.R10, zeroSlot, 0))
	t.lookup(rState, MapState)
	if t.uses.globals {
		t.lookup(rGlobals, mapGlobals)
	}
	if t.uses.locals {
		t.lookup(rLocals, mapLocals)
	}
	// A by-reference variable's load yields its storage's address as
	// a scalar, as sets does.
	if t.uses.globals {
		t.emit(asm.StoreMem(rState, stateGlobBase, rGlobals, asm.DWord))
	}
	if t.uses.locals {
		t.emit(asm.StoreMem(rState, stateLocBase, rLocals, asm.DWord))
	}
	if t.uses.strings {
		// sets yields the string's address as a scalar, as DIF
		// addresses are: the map value's address is stored and read
		// back, which a privileged program may do.
		t.lookup(asm.R1, mapStrings)
		t.emit(asm.StoreMem(rState, stateStrBase, asm.R1, asm.DWord))
	}
	if t.uses.scratch {
		t.lookup(rScratch, mapScratch)
		t.emit(asm.StoreMem(rState, stateScrBase, rScratch, asm.DWord))
	}
	if t.uses.strbuf {
		t.lookup(asm.R1, MapStrBuf)
		t.emit(asm.StoreMem(asm.R10, strBufPtr, asm.R1, asm.DWord))
	}
	for r := uint8(1); r < dif.NRegs; r++ {
		t.emit(storeImm64(asm.R10, regSlot(r), 0))
	}
	t.emit(storeImm64(asm.R10, elemPtr, 0))
	t.emit(storeImm64(rState, stateElem, 0))
	t.emit(storeImm64(rState, stateFault, 0))
	t.emit(storeImm64(rState, stateFaultPC, 0))
	t.emit(storeImm64(rState, stateFaultAddr, 0))
}

// get loads DIF register r into dst.
func (t *translator) get(dst asm.Register, r uint8) {
	if r == 0 {
		t.emit(asm.Mov.Imm(dst, 0))
		return
	}
	t.emit(asm.LoadMem(dst, asm.R10, regSlot(r), asm.DWord))
}

// set stores src into DIF register r; a write to %r0 is lost, as
// %r0 always reads zero.
func (t *translator) set(r uint8, src asm.Register) {
	if r == 0 {
		return
	}
	t.emit(asm.StoreMem(asm.R10, regSlot(r), src, asm.DWord))
}

// faultAt records a fault of instruction pc with the address in addr if
// hasAddr (0 otherwise), and jumps to the DIFO's fault label.
func (t *translator) faultAt(pc int, code int32, addr asm.Register, hasAddr bool) {
	t.emit(storeImm64(rState, stateFault, code))
	t.emit(storeImm64(rState, stateFaultPC, int32(pc)))
	if hasAddr {
		t.emit(asm.StoreMem(rState, stateFaultAddr, addr, asm.DWord))
	}
	t.emit(asm.Ja.Label(t.fault))
	t.faults[t.fault] = true
}

// aluOps and loadSizes are arrays by DIF operation, not maps, so
// that they are static data, made at no cost at start-up.
var aluOps = [256]asm.ALUOp{
	dif.OR: asm.Or, dif.XOR: asm.Xor, dif.AND: asm.And, dif.SUB: asm.Sub,
	dif.ADD: asm.Add, dif.MUL: asm.Mul,
	dif.SLL: asm.LSh, dif.SRL: asm.RSh, dif.SRA: asm.ArSh,
	dif.UDIV: asm.Div, dif.UREM: asm.Mod,
}

var loadSizes = [256]struct {
	size   asm.Size
	bytes  int32
	signed bool
}{
	dif.LDSB: {asm.Byte, 1, true}, dif.LDSH: {asm.Half, 2, true}, dif.LDSW: {asm.Word, 4, true},
	dif.LDUB: {asm.Byte, 1, false}, dif.LDUH: {asm.Half, 2, false}, dif.LDUW: {asm.Word, 4, false},
	dif.LDX: {asm.DWord, 8, false},
}

// loadOf returns the plain load a user (uld*) or restricted (rld*) load
// reads as, and whether it reads user memory. The runtime is privileged,
// so rld* reads as ld* does (dtrace_canload lets a privileged consumer
// read anything).
func loadOf(op dif.Op) (dif.Op, bool) {
	switch {
	case op >= dif.ULDSB && op <= dif.ULDX:
		return dif.LDSB + (op - dif.ULDSB), true
	case op >= dif.RLDSB && op <= dif.RLDX:
		return dif.LDSB + (op - dif.RLDSB), false
	}
	return op, false
}

func (t *translator) instr(pc int, in dif.Instr) error {
	r1, r2, rd := in.R1(), in.R2(), in.RD()
	local := func(s string) string { return fmt.Sprintf("%si%d_%s", t.prefix, pc, s) }
	switch op := in.Op(); op {
	case dif.OR, dif.XOR, dif.AND, dif.SUB, dif.ADD, dif.MUL:
		t.get(asm.R1, r1)
		t.get(asm.R2, r2)
		t.emit(aluOps[op].Reg(asm.R1, asm.R2))
		t.set(rd, asm.R1)
	case dif.SLL, dif.SRL, dif.SRA:
		// The count is taken modulo 64, as the amd64 kernel's shifts
		// take it; BPF leaves larger counts undefined.
		t.get(asm.R1, r1)
		t.get(asm.R2, r2)
		t.emit(asm.And.Imm(asm.R2, 63))
		t.emit(aluOps[op].Reg(asm.R1, asm.R2))
		t.set(rd, asm.R1)
	case dif.SDIV, dif.UDIV, dif.SREM, dif.UREM:
		// BPF divides by zero giving 0 (or the dividend); DIF faults.
		t.get(asm.R2, r2)
		t.emit(asm.JNE.Imm(asm.R2, 0, local("div")))
		t.faultAt(pc, faultDivZero, 0, false)
		t.mark(local("div"))
		t.get(asm.R1, r1)
		if op == dif.UDIV || op == dif.UREM {
			t.emit(aluOps[op].Reg(asm.R1, asm.R2))
			t.set(rd, asm.R1)
			break
		}
		// Signed division on magnitudes, as BPF's signed division
		// needs Linux 6.6 and the test guests run 6.1. The quotient is
		// negative if the signs differ, the remainder if the dividend
		// is; INT64_MIN / -1 gives INT64_MIN and INT64_MIN % -1 gives
		// 0, as amd64's kernel and dif/vm give them.
		t.emit(asm.Mov.Imm(asm.R3, 0))
		t.emit(asm.JSGE.Imm(asm.R1, 0, local("pos1")))
		t.emit(asm.Neg.Imm(asm.R1, 0))
		t.emit(asm.Mov.Imm(asm.R3, 1))
		t.mark(local("pos1"))
		t.emit(asm.JSGE.Imm(asm.R2, 0, local("pos2")))
		t.emit(asm.Neg.Imm(asm.R2, 0))
		if op == dif.SDIV {
			t.emit(asm.Xor.Imm(asm.R3, 1))
		}
		t.mark(local("pos2"))
		if op == dif.SDIV {
			t.emit(asm.Div.Reg(asm.R1, asm.R2))
		} else {
			t.emit(asm.Mod.Reg(asm.R1, asm.R2))
		}
		t.emit(asm.JEq.Imm(asm.R3, 0, local("sign")))
		t.emit(asm.Neg.Imm(asm.R1, 0))
		t.mark(local("sign"))
		t.set(rd, asm.R1)
	case dif.NOT:
		t.get(asm.R1, r1)
		t.emit(asm.Xor.Imm(asm.R1, -1))
		t.set(rd, asm.R1)
	case dif.MOV:
		t.get(asm.R1, r1)
		t.set(rd, asm.R1)

	case dif.CMP:
		t.get(asm.R1, r1)
		t.get(asm.R2, r2)
		t.emit(asm.StoreMem(asm.R10, ccA, asm.R1, asm.DWord))
		t.emit(asm.StoreMem(asm.R10, ccB, asm.R2, asm.DWord))
	case dif.TST:
		// tst sets only Z: kept as (r1 != 0, 0), whose difference is
		// never negative and whose unsigned order never "less".
		t.get(asm.R1, r1)
		t.emit(asm.JEq.Imm(asm.R1, 0, local("tst")))
		t.emit(asm.Mov.Imm(asm.R1, 1))
		t.mark(local("tst"))
		t.emit(asm.StoreMem(asm.R10, ccA, asm.R1, asm.DWord))
		t.emit(storeImm64(asm.R10, ccB, 0))

	case dif.SCMP:
		t.scmp(pc, in, local)

	case dif.BA:
		t.emit(asm.Ja.Label(t.difLabel(in.Label())))
	case dif.BE, dif.BNE, dif.BGU, dif.BGEU, dif.BLU, dif.BLEU:
		t.emit(asm.LoadMem(asm.R1, asm.R10, ccA, asm.DWord))
		t.emit(asm.LoadMem(asm.R2, asm.R10, ccB, asm.DWord))
		j := map[dif.Op]asm.JumpOp{dif.BE: asm.JEq, dif.BNE: asm.JNE, dif.BGU: asm.JGT,
			dif.BGEU: asm.JGE, dif.BLU: asm.JLT, dif.BLEU: asm.JLE}[op]
		t.emit(j.Reg(asm.R1, asm.R2, t.difLabel(in.Label())))
	case dif.BG, dif.BGE, dif.BL, dif.BLE:
		// The kernel takes the signed conditions from the sign of
		// the difference alone (cc_v is always 0), which differs from
		// a signed compare when the subtraction overflows.
		t.emit(asm.LoadMem(asm.R1, asm.R10, ccA, asm.DWord))
		t.emit(asm.LoadMem(asm.R2, asm.R10, ccB, asm.DWord))
		t.emit(asm.Sub.Reg(asm.R1, asm.R2))
		j := map[dif.Op]asm.JumpOp{dif.BG: asm.JSGT, dif.BGE: asm.JSGE, dif.BL: asm.JSLT, dif.BLE: asm.JSLE}[op]
		t.emit(j.Imm(asm.R1, 0, t.difLabel(in.Label())))

	case dif.LDSB, dif.LDSH, dif.LDSW, dif.LDUB, dif.LDUH, dif.LDUW, dif.LDX,
		dif.ULDSB, dif.ULDSH, dif.ULDSW, dif.ULDUB, dif.ULDUH, dif.ULDUW, dif.ULDX,
		dif.RLDSB, dif.RLDSH, dif.RLDSW, dif.RLDUB, dif.RLDUH, dif.RLDUW, dif.RLDX:
		plain, user := loadOf(op)
		w := loadSizes[plain]
		read := asm.FnProbeReadKernel
		if user {
			read = asm.FnProbeReadUser
		}
		t.get(asm.R3, r1)
		t.emit(asm.Mov.Reg(asm.R1, asm.R10))
		t.emit(asm.Add.Imm(asm.R1, bufSlot))
		t.emit(asm.Mov.Imm(asm.R2, w.bytes))
		t.emit(read.Call())
		t.emit(asm.JEq.Imm(asm.R0, 0, local("ld")))
		t.get(asm.R1, r1)
		t.faultAt(pc, faultBadAddr, asm.R1, true)
		t.mark(local("ld"))
		t.emit(asm.LoadMem(asm.R1, asm.R10, bufSlot, w.size))
		if w.signed {
			shift := int32(64 - 8*w.bytes)
			t.emit(asm.LSh.Imm(asm.R1, shift))
			t.emit(asm.ArSh.Imm(asm.R1, shift))
		}
		t.set(rd, asm.R1)

	case dif.RET:
		t.get(asm.R1, rd)
		t.emit(asm.StoreMem(rState, StateRet, asm.R1, asm.DWord))
		t.emit(asm.Ja.Label(t.ret))
	case dif.NOP:
		t.emit(asm.Mov.Imm(asm.R0, 0))
	case dif.SETX:
		i := int(in.Index())
		if i >= len(t.o.Ints) {
			return &Error{pc, in, fmt.Sprintf("integer table index %d out of range", i)}
		}
		t.emit(asm.LoadImm(asm.R1, int64(t.o.Ints[i]), asm.DWord))
		t.set(rd, asm.R1)
	case dif.SETS:
		off := uint32(in.Index())
		if off >= uint32(len(t.o.Strs)) {
			return &Error{pc, in, fmt.Sprintf("string table offset %d out of range", off)}
		}
		t.emit(asm.LoadMem(asm.R1, rState, stateStrBase, asm.DWord))
		t.emit(asm.LoadImm(asm.R2, int64(t.strBase+off), asm.DWord))
		t.emit(asm.Add.Reg(asm.R1, asm.R2))
		t.set(rd, asm.R1)

	case dif.LDGS, dif.STGS, dif.LDLS, dif.STLS:
		return t.static(pc, in)
	case dif.ALLOCS:
		t.allocs(pc, in, local)
	case dif.COPYS:
		return t.copys(pc, in, local)
	case dif.STB, dif.STH, dif.STW, dif.STX:
		t.store(pc, in, local)
	case dif.LDGA:
		if v := uint32(r1); v == dif.VarRegs || v == dif.VarUregs {
			if err := t.regs(pc, in, local); err != nil {
				return err
			}
			break
		}
		if uint32(r1) != dif.VarArgs {
			return &Error{pc, in, fmt.Sprintf("built-in array %s not translated yet", t.varName(uint32(r1), dif.ScopeGlobal))}
		}
		// args[i] beyond the tenth reads 0, as dif/vm reads it.
		t.get(asm.R2, r2)
		t.emit(asm.Mov.Imm(asm.R1, 0))
		t.emit(asm.JGE.Imm(asm.R2, NArgs, local("args")))
		t.emit(asm.LSh.Imm(asm.R2, 3))
		t.emit(asm.Add.Reg(asm.R2, rState))
		t.emit(asm.LoadMem(asm.R1, asm.R2, StateArgs, asm.DWord))
		t.mark(local("args"))
		t.set(rd, asm.R1)
	case dif.LDTS, dif.STTS:
		return t.thread(pc, in, local)

	case dif.LDGAA, dif.STGAA, dif.LDTAA, dif.STTAA:
		return t.assoc(pc, in, local)
	case dif.FLUSHTS, dif.POPTS:
		// The depth is the translator's: nothing runs.
		t.emit(asm.Mov.Imm(asm.R0, 0))
	case dif.PUSHTR, dif.PUSHTV:
		return t.push(pc, in, local)
	case dif.CALL:
		return t.call(pc, in, local)

	default:
		return &Error{pc, in, "not translated yet"}
	}
	return nil
}

// static translates a load or store of a scalar global or clause-local.
func (t *translator) static(pc int, in dif.Instr) error {
	op := in.Op()
	id := uint32(in.Var())
	scope, slots, base := uint8(dif.ScopeGlobal), t.l.globals, rGlobals
	if op == dif.LDLS || op == dif.STLS {
		scope, slots, base = dif.ScopeLocal, t.l.locals, rLocals
	}
	if id < dif.VarOtherUBase {
		if op == dif.LDLS {
			// No built-in clause-local exists; the kernel reads 0.
			t.emit(asm.Mov.Imm(asm.R1, 0))
			t.set(in.RD(), asm.R1)
			return nil
		}
		if op != dif.LDGS {
			return &Error{pc, in, fmt.Sprintf("built-in variable %s cannot be assigned", t.varName(id, scope))}
		}
		return t.builtin(pc, in, id, func(s string) string { return fmt.Sprintf("%si%d_%s", t.prefix, pc, s) })
	}
	if v, ok := t.o.LookupVar(id, scope); ok && byRef(v.Type) {
		return t.staticRef(pc, in, scope, base)
	}
	off, ok := slots[id]
	if !ok {
		return &Error{pc, in, fmt.Sprintf("variable %#x is not in the variable table", id)}
	}
	if op == dif.LDGS || op == dif.LDLS {
		t.emit(asm.LoadMem(asm.R1, base, off, asm.DWord))
		t.set(in.RD(), asm.R1)
	} else {
		t.get(asm.R1, in.RS())
		t.emit(asm.StoreMem(base, off, asm.R1, asm.DWord))
	}
	return nil
}

// thread translates a load or store of a scalar thread-local, kept in
// MapThreads under (id, tid); a store of zero deletes it, as the
// kernel frees a dynamic variable set to zero, and a store the map has
// no room for is counted as a drop.
func (t *translator) thread(pc int, in dif.Instr, local func(string) string) error {
	id := uint32(in.Var())
	if v, ok := t.o.LookupVar(id, dif.ScopeThread); !ok {
		return &Error{pc, in, fmt.Sprintf("variable %#x is not in the variable table", id)}
	} else if byRef(v.Type) {
		return t.threadRef(pc, in, t.l.newVarRef(v.Type), local)
	}
	t.threadKey(id)
	key := func() {
		t.mapPtr(asm.R1, mapThreads)
		t.emit(asm.Mov.Reg(asm.R2, asm.R10))
		t.emit(asm.Add.Imm(asm.R2, keySlot))
	}
	if in.Op() == dif.LDTS {
		key()
		t.helper(asm.FnMapLookupElem)
		t.emit(asm.Mov.Imm(asm.R1, 0))
		t.emit(asm.JEq.Imm(asm.R0, 0, local("ldts")))
		t.emit(asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord))
		t.mark(local("ldts"))
		t.emit(asm.Mov.Reg(asm.R0, asm.R1))
		t.set(in.RD(), asm.R0)
		return nil
	}
	t.get(asm.R1, in.RS())
	t.emit(asm.JEq.Imm(asm.R1, 0, local("del")))
	t.emit(asm.StoreMem(asm.R10, bufSlot, asm.R1, asm.DWord))
	key()
	t.emit(asm.Mov.Reg(asm.R3, asm.R10))
	t.emit(asm.Add.Imm(asm.R3, bufSlot))
	t.emit(asm.Mov.Imm(asm.R4, 0)) // BPF_ANY
	t.emit(asm.FnMapUpdateElem.Call())
	t.emit(asm.JEq.Imm(asm.R0, 0, local("done")))
	t.emit(asm.LoadMem(asm.R1, rState, stateDrops, asm.DWord))
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(rState, stateDrops, asm.R1, asm.DWord))
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("del"))
	key()
	t.emit(asm.FnMapDeleteElem.Call())
	t.mark(local("done"))
	t.emit(asm.Mov.Imm(asm.R0, 0))
	return nil
}

// threadKey writes the ThreadKey of thread-local id at keySlot.
func (t *translator) threadKey(id uint32) {
	t.emit(asm.StoreImm(asm.R10, keySlot, int64(id), asm.Word))
	t.emit(asm.StoreImm(asm.R10, keySlot+4, 0, asm.Word))
	t.emit(asm.FnGetCurrentPidTgid.Call())
	t.emit(asm.LSh.Imm(asm.R0, 32))
	t.emit(asm.RSh.Imm(asm.R0, 32))
	t.emit(asm.StoreMem(asm.R10, keySlot+8, asm.R0, asm.DWord))
}

// staticRef translates a load or store of a by-reference global or
// clause-local, as the kernel's ldgs and stgs do: the load yields the
// address of the variable's data, or 0 after a store of NULL (the
// header word set); a store copies the bytes (a string up to its NUL).
func (t *translator) staticRef(pc int, in dif.Instr, scope uint8, base asm.Register) error {
	id := uint32(in.Var())
	off, r, ok := t.l.ref(scope, id)
	if !ok {
		return &Error{pc, in, fmt.Sprintf("variable %s is not in the layout", t.varName(id, scope))}
	}
	local := func(s string) string { return fmt.Sprintf("%si%d_%s", t.prefix, pc, s) }
	// R1: the header, in the map value; its offset may be beyond a
	// load's 16 bits.
	header := func() {
		t.emit(asm.Mov.Reg(asm.R1, base))
		t.emit(asm.Mov.Imm(asm.R2, int32(off)))
		t.emit(asm.Add.Reg(asm.R1, asm.R2))
	}
	if op := in.Op(); op == dif.LDGS || op == dif.LDLS {
		addrAt := int16(stateGlobBase)
		if scope == dif.ScopeLocal {
			addrAt = stateLocBase
		}
		header()
		t.emit(asm.LoadMem(asm.R2, asm.R1, 0, asm.DWord))
		t.emit(asm.Mov.Imm(asm.R0, 0))
		t.emit(asm.JNE.Imm(asm.R2, 0, local("null")))
		t.emit(asm.LoadMem(asm.R0, rState, addrAt, asm.DWord))
		t.emit(asm.Add.Imm(asm.R0, int32(off+refHeader)))
		t.mark(local("null"))
		t.set(in.RD(), asm.R0)
		return nil
	}
	t.get(asm.R3, in.RS())
	header()
	t.emit(asm.JNE.Imm(asm.R3, 0, local("copy")))
	t.emit(storeImm64(asm.R1, 0, 1))
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("copy"))
	t.emit(storeImm64(asm.R1, 0, 0))
	t.emit(asm.Add.Imm(asm.R1, refHeader))
	t.copyRef(pc, r, local)
	t.mark(local("done"))
	t.emit(asm.Mov.Imm(asm.R0, 0))
	return nil
}

// copyRef copies a by-reference value from R3 to R1, as dtrace_vcopy:
// a string up to its NUL, anything else whole. An address it cannot read
// faults BADADDR.
func (t *translator) copyRef(pc int, r varRef, local func(string) string) {
	t.emit(asm.Mov.Imm(asm.R2, int32(r.limit)))
	if r.str {
		t.emit(asm.FnProbeReadKernelStr.Call())
		t.emit(asm.JSGE.Imm(asm.R0, 0, local("copied")))
	} else {
		t.emit(asm.FnProbeReadKernel.Call())
		t.emit(asm.JEq.Imm(asm.R0, 0, local("copied")))
	}
	t.get(asm.R1, t.o.Code[pc].RS())
	t.faultAt(pc, faultBadAddr, asm.R1, true)
	t.mark(local("copied"))
}

// threadRef translates a load or store of a by-reference thread-local,
// kept in MapThreadRefs under (id, tid): the load yields the address of
// its bytes, or 0 if it has none; a store of 0 deletes it, any other
// copies the bytes, making it zeroed first if missing (or counting a
// drop when the map has no room).
func (t *translator) threadRef(pc int, in dif.Instr, r varRef, local func(string) string) error {
	t.threadKey(uint32(in.Var()))
	find := func() {
		t.mapPtr(asm.R1, mapThreadRefs)
		t.emit(asm.Mov.Reg(asm.R2, asm.R10))
		t.emit(asm.Add.Imm(asm.R2, keySlot))
		t.helper(asm.FnMapLookupElem)
	}
	if in.Op() == dif.LDTS {
		find()
		// The pointer is read back as a scalar, as DIF addresses are.
		t.emit(asm.StoreMem(rState, stateTmp, asm.R0, asm.DWord))
		t.emit(asm.LoadMem(asm.R0, rState, stateTmp, asm.DWord))
		t.set(in.RD(), asm.R0)
		return nil
	}
	t.get(asm.R1, in.RS())
	t.emit(asm.JNE.Imm(asm.R1, 0, local("store")))
	t.mapPtr(asm.R1, mapThreadRefs)
	t.emit(asm.Mov.Reg(asm.R2, asm.R10))
	t.emit(asm.Add.Imm(asm.R2, keySlot))
	t.emit(asm.FnMapDeleteElem.Call())
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("store"))
	find()
	t.emit(asm.JNE.Imm(asm.R0, 0, local("have")))
	t.mapPtr(asm.R1, mapZero)
	t.emit(asm.Mov.Reg(asm.R2, asm.R10))
	t.emit(asm.Add.Imm(asm.R2, zeroSlot))
	t.helper(asm.FnMapLookupElem)
	t.emit(asm.JEq.Imm(asm.R0, 0, local("drop")))
	t.emit(asm.Mov.Reg(asm.R3, asm.R0))
	t.mapPtr(asm.R1, mapThreadRefs)
	t.emit(asm.Mov.Reg(asm.R2, asm.R10))
	t.emit(asm.Add.Imm(asm.R2, keySlot))
	t.emit(asm.Mov.Imm(asm.R4, 1)) // BPF_NOEXIST
	t.emit(asm.FnMapUpdateElem.Call())
	find()
	t.emit(asm.JNE.Imm(asm.R0, 0, local("have")))
	t.mark(local("drop"))
	t.emit(asm.LoadMem(asm.R1, rState, stateDrops, asm.DWord))
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(rState, stateDrops, asm.R1, asm.DWord))
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("have"))
	t.emit(asm.Mov.Reg(asm.R1, asm.R0))
	t.get(asm.R3, in.RS())
	t.copyRef(pc, r, local)
	t.mark(local("done"))
	t.emit(asm.Mov.Imm(asm.R0, 0))
	return nil
}

// varName names a variable for a message: its name in the variable
// table, or its id.
func (t *translator) varName(id uint32, scope uint8) string {
	if v, ok := t.o.LookupVar(id, scope); ok {
		if n := t.o.VarName(v); n != "" {
			return n
		}
	}
	return fmt.Sprintf("%#x", id)
}

// storeImm64 is *(u64 *)(dst + off) = imm, the immediate sign-extended
// from 32 bits; cilium's asm.StoreImm refuses the DWord size because its
// constant could be wider than the instruction's immediate.
func storeImm64(dst asm.Register, off int16, imm int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: dst, Offset: off, Constant: int64(imm)}
}

// builtin translates a load of a built-in scalar variable.
func (t *translator) builtin(pc int, in dif.Instr, id uint32, local func(string) string) error {
	switch {
	case id >= dif.VarArg0 && id <= dif.VarArg9:
		t.emit(asm.LoadMem(asm.R0, rState, int16(StateArgs+8*(id-dif.VarArg0)), asm.DWord))
	case id == dif.VarPID || id == dif.VarTID:
		// The ids of the initial PID namespace, as dtrace reports them
		// for the whole system.
		t.half(asm.FnGetCurrentPidTgid, id == dif.VarPID)
	case id == dif.VarUID || id == dif.VarGID:
		t.half(asm.FnGetCurrentUidGid, id == dif.VarGID)
	case id == dif.VarCPU:
		t.helper(asm.FnGetSmpProcessorId)
	case id == dif.VarExecname:
		t.execname(pc, local)
	case id == dif.VarExecargs:
		if err := t.execargs(pc, in, local); err != nil {
			return err
		}
	case id == dif.VarTimestamp:
		t.now()
	case id == dif.VarVtimestamp:
		if err := t.vtimestamp(pc, in, local); err != nil {
			return err
		}
	case id == dif.VarWalltimestamp:
		// CLOCK_MONOTONIC plus the offset to CLOCK_REALTIME the
		// runtime keeps in MapCtl.
		t.mapPtr(asm.R1, mapCtl)
		t.emit(asm.Mov.Reg(asm.R2, asm.R10))
		t.emit(asm.Add.Imm(asm.R2, zeroSlot))
		t.helper(asm.FnMapLookupElem)
		t.emit(asm.JEq.Imm(asm.R0, 0, local("wall")))
		t.emit(asm.LoadMem(asm.R1, asm.R0, ctlWallOff, asm.DWord))
		t.emit(asm.StoreMem(asm.R10, bufSlot, asm.R1, asm.DWord))
		t.now()
		t.emit(asm.LoadMem(asm.R1, asm.R10, bufSlot, asm.DWord))
		t.emit(asm.Add.Reg(asm.R0, asm.R1))
		t.mark(local("wall"))
	case id == dif.VarID:
		t.emit(asm.LoadMem(asm.R0, rState, StateProbeID, asm.DWord))
	case id == dif.VarEPID:
		t.emit(asm.LoadMem(asm.R0, rState, StateEPID, asm.DWord))
	case id == dif.VarCurthread:
		t.emit(asm.FnGetCurrentTask.Call())
	case id == dif.VarPPID:
		if err := t.ppid(pc, in, local); err != nil {
			return err
		}
	case id == dif.VarErrno:
		t.errno(local)
	case id == dif.VarStackdepth, id == dif.VarUstackdepth:
		flags := t.ctx.trampolineFrames()
		if id == dif.VarUstackdepth {
			flags = userStack
		}
		t.stack(maxFrames, flags)
		// A refusal (a negative error) is no frame.
		t.emit(asm.JSGE.Imm(asm.R0, 0, local("depth")))
		t.emit(asm.Mov.Imm(asm.R0, 0))
		t.mark(local("depth"))
		t.emit(asm.RSh.Imm(asm.R0, 3))
	case id == dif.VarCaller, id == dif.VarUcaller:
		// The second frame of the stack: the first is where the probe
		// fired. 0 if there is none.
		flags := t.ctx.trampolineFrames()
		if id == dif.VarUcaller {
			flags = userStack
		}
		t.stack(2, flags)
		t.emit(asm.Mov.Reg(asm.R1, asm.R0))
		t.emit(asm.Mov.Imm(asm.R0, 0))
		t.emit(asm.JSLT.Imm(asm.R1, 16, local("caller")))
		t.emit(asm.LoadMem(asm.R1, asm.R10, strBufPtr, asm.DWord))
		t.emit(asm.LoadMem(asm.R0, asm.R1, 8, asm.DWord))
		t.mark(local("caller"))
	case id >= dif.VarProbeprov && id <= dif.VarProbename:
		t.probeName(id, local)
	default:
		return &Error{pc, in, fmt.Sprintf("built-in variable %s not translated yet", t.varName(id, dif.ScopeGlobal))}
	}
	t.set(in.RD(), asm.R0)
	return nil
}

// Stacks as bpf_get_stack reads them: at most maxFrames frames (the
// kernel's default perf_event_max_stack), of the user's stack with
// userStack (BPF_F_USER_STACK).
const (
	maxFrames = 127
	userStack = 1 << 8
)

// stack calls bpf_get_stack for at most frames frames, written into
// MapStrBuf's value; R0 is the bytes written or a negative error.
func (t *translator) stack(frames, flags int32) {
	t.emit(asm.LoadMem(asm.R1, asm.R10, ctxSlot, asm.DWord))
	t.emit(asm.LoadMem(asm.R2, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.Mov.Imm(asm.R3, 8*frames))
	t.emit(asm.Mov.Imm(asm.R4, flags))
	t.emit(asm.FnGetStack.Call())
}

// ppid reads the current task's real_parent->tgid at the offsets the
// kernel's BTF gives; 0 if a read fails.
func (t *translator) ppid(pc int, in dif.Instr, local func(string) string) error {
	o, err := kernelTask()
	if err != nil {
		return &Error{pc, in, fmt.Sprintf("ppid needs the kernel's struct task_struct: %v", err)}
	}
	read := func(off int16, size int32) {
		t.emit(asm.Mov.Reg(asm.R3, asm.R0))
		t.emit(asm.Add.Imm(asm.R3, int32(off)))
		t.emit(storeImm64(asm.R10, bufSlot, 0))
		t.emit(asm.Mov.Reg(asm.R1, asm.R10))
		t.emit(asm.Add.Imm(asm.R1, bufSlot))
		t.emit(asm.Mov.Imm(asm.R2, size))
		t.emit(asm.FnProbeReadKernel.Call())
		t.emit(asm.LoadMem(asm.R0, asm.R10, bufSlot, asm.DWord))
	}
	t.emit(asm.FnGetCurrentTask.Call())
	read(o.realParent, 8)
	t.emit(asm.JEq.Imm(asm.R0, 0, local("ppid")))
	read(o.tgid, 4)
	t.mark(local("ppid"))
	return nil
}

// errno is the error a system call returns, at its return (sys_exit):
// the negated return value when it is an error (-4095 … -1, as the
// kernel's IS_ERR_VALUE), else 0. Elsewhere it reads 0.
func (t *translator) errno(local func(string) string) {
	t.emit(asm.Mov.Imm(asm.R0, 0))
	if t.ctx != CtxSysExit {
		return
	}
	t.emit(asm.LoadMem(asm.R1, rState, stateRegs+regAX, asm.DWord))
	t.emit(asm.JSGE.Imm(asm.R1, 0, local("errno")))
	t.emit(asm.JSLT.Imm(asm.R1, -4095, local("errno")))
	t.emit(asm.Mov.Reg(asm.R0, asm.R1))
	t.emit(asm.Neg.Imm(asm.R0, 0))
	t.mark(local("errno"))
}

// probeName leaves in R0 the address of a name of the probe that fired,
// in MapProbeNames under its ID (StateProbeID), as a scalar; a probe
// without names reads the empty string (MapZero's zeroes).
func (t *translator) probeName(id uint32, local func(string) string) {
	off := map[uint32]int32{dif.VarProbeprov: probeProvOff, dif.VarProbemod: probeModOff,
		dif.VarProbefunc: probeFuncOff, dif.VarProbename: probeNameOff}[id]
	t.emit(asm.LoadMem(asm.R1, rState, StateProbeID, asm.DWord))
	t.emit(asm.StoreMem(asm.R10, bufSlot, asm.R1, asm.Word))
	t.mapPtr(asm.R1, mapProbeNames)
	t.emit(asm.Mov.Reg(asm.R2, asm.R10))
	t.emit(asm.Add.Imm(asm.R2, bufSlot))
	t.helper(asm.FnMapLookupElem)
	t.emit(asm.JEq.Imm(asm.R0, 0, local("noname")))
	t.emit(asm.Add.Imm(asm.R0, off))
	t.emit(asm.Ja.Label(local("name")))
	t.mark(local("noname"))
	t.mapPtr(asm.R1, mapZero)
	t.emit(asm.Mov.Reg(asm.R2, asm.R10))
	t.emit(asm.Add.Imm(asm.R2, zeroSlot))
	t.helper(asm.FnMapLookupElem)
	t.mark(local("name"))
	// A pointer read back as a scalar, as DIF addresses are.
	t.emit(asm.StoreMem(rState, stateTmp, asm.R0, asm.DWord))
	t.emit(asm.LoadMem(asm.R0, rState, stateTmp, asm.DWord))
}

// half calls fn, a helper that returns two 32-bit ids in one word, and
// keeps the upper one in R0 if upper, else the lower one.
func (t *translator) half(fn asm.BuiltinFunc, upper bool) {
	t.emit(fn.Call())
	if !upper {
		t.emit(asm.LSh.Imm(asm.R0, 32))
	}
	t.emit(asm.RSh.Imm(asm.R0, 32))
}

// allocs translates allocs: size bytes of scratch, 8-aligned, zeroed,
// or DTRACEFLT_NOSCRATCH. The scratch map's value is twice the scratch
// size and its upper half is never written, so that the zeroes are
// copied from there and the verifier can bound both ends of the copy.
func (t *translator) allocs(pc int, in dif.Instr, local func(string) string) {
	t.get(asm.R1, in.R1())
	t.alloc(pc, in.RD(), local)
}

// alloc takes R1 bytes of scratch, 8-aligned and zeroed, as allocs,
// and puts their address in DIF register rd; or faults NOSCRATCH.
func (t *translator) alloc(pc int, rd uint8, local func(string) string) {
	size := int32(t.l.scratch)
	t.emit(asm.JGT.Imm(asm.R1, size, local("noscratch")))
	t.emit(asm.LoadMem(asm.R3, rState, stateScratch, asm.DWord))
	t.emit(asm.Add.Imm(asm.R3, 7))
	t.emit(asm.And.Imm(asm.R3, -8))
	t.emit(asm.Mov.Reg(asm.R4, asm.R3))
	t.emit(asm.Add.Reg(asm.R4, asm.R1))
	t.emit(asm.JGT.Imm(asm.R4, size, local("noscratch")))
	t.emit(asm.StoreMem(rState, stateScratch, asm.R4, asm.DWord))
	t.emit(asm.LoadMem(asm.R0, rState, stateScrBase, asm.DWord))
	t.emit(asm.Add.Reg(asm.R0, asm.R3))
	t.set(rd, asm.R0)
	t.emit(asm.And.Imm(asm.R3, size-1))
	t.emit(asm.Mov.Reg(asm.R2, asm.R1))
	t.emit(asm.Mov.Reg(asm.R1, rScratch))
	t.emit(asm.Add.Reg(asm.R1, asm.R3))
	t.emit(asm.Mov.Reg(asm.R3, rScratch))
	t.emit(asm.Add.Imm(asm.R3, size))
	t.emit(asm.FnProbeReadKernel.Call())
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("noscratch"))
	t.faultAt(pc, faultNoScratch, 0, false)
	t.mark(local("done"))
}

// store translates stb … stx: DIF stores only to scratch and to the
// storage of by-reference globals and clause-locals (anywhere in them,
// as the kernel's dtrace_canstore checks), aligned; elsewhere
// DTRACEFLT_BADADDR, then DTRACEFLT_BADALIGN, as the kernel checks
// them. The bytes of by-reference thread-locals, in a hash map, cannot
// be told from other kernel memory: a store to them faults.
// A region is memory DIF may store to: where its address is kept, the
// register pointing to it (R4: the pointer at elemPtr), and its bytes
// DIF may store to.
type region struct {
	addrAt     int16
	base       asm.Register
	start, end uint32
}

// regions are scratch, the by-reference elements of associative
// arrays (the last looked up) and the by-reference variables' storage.
func (t *translator) regions() []region {
	regions := []region{{stateScrBase, rScratch, 0, t.l.scratch}}
	if n := t.l.elemSize(); n > 0 {
		regions = append(regions, region{stateElem, asm.R4, 0, n})
	}
	if t.l.grefSize > 0 {
		regions = append(regions, region{stateGlobBase, rGlobals, slotsSize(len(t.l.globals)), t.l.globalsSize()})
	}
	if t.l.lrefSize > 0 {
		regions = append(regions, region{stateLocBase, rLocals, slotsSize(len(t.l.locals)), t.l.localsSize()})
	}
	return regions
}

// copys translates copys: r2 bytes from the address in r1 to the one
// in rd, which must lie in a region DIF may store to. The size must be
// set by the setx just before, as the compiler emits it: the verifier
// bounds the copy by it.
func (t *translator) copys(pc int, in dif.Instr, local func(string) string) error {
	prev := pc - 1
	if prev < 0 || t.targets[uint32(pc)] || t.o.Code[prev].Op() != dif.SETX || t.o.Code[prev].RD() != in.R2() {
		return &Error{pc, in, "copys of a size not set just before"}
	}
	i := int(t.o.Code[prev].Index())
	if i >= len(t.o.Ints) {
		return &Error{pc, in, fmt.Sprintf("integer table index %d out of range", i)}
	}
	n := t.o.Ints[i]
	if n == 0 {
		t.emit(asm.Mov.Imm(asm.R0, 0))
		return nil
	}
	var regions []region
	for _, r := range t.regions() {
		if n <= uint64(r.end-r.start) {
			regions = append(regions, r)
		}
	}
	for i, r := range regions {
		next := local(fmt.Sprintf("r%d", i+1))
		if i > 0 {
			t.mark(local(fmt.Sprintf("r%d", i)))
		}
		t.get(asm.R2, in.RD())
		t.emit(asm.LoadMem(asm.R1, rState, r.addrAt, asm.DWord))
		t.emit(asm.Sub.Reg(asm.R2, asm.R1))
		if r.start > 0 {
			t.emit(asm.JLT.Imm(asm.R2, int32(r.start), next))
		}
		t.emit(asm.JGT.Imm(asm.R2, int32(r.end)-int32(n), next))
		if r.base == asm.R4 {
			t.emit(asm.LoadMem(asm.R4, asm.R10, elemPtr, asm.DWord))
			t.emit(asm.JEq.Imm(asm.R4, 0, next))
		}
		t.emit(asm.Add.Reg(asm.R2, r.base))
		t.emit(asm.Mov.Reg(asm.R1, asm.R2))
		t.emit(asm.Mov.Imm(asm.R2, int32(n)))
		t.get(asm.R3, in.R1())
		t.emit(asm.FnProbeReadKernel.Call())
		t.emit(asm.JEq.Imm(asm.R0, 0, local("done")))
		t.get(asm.R1, in.R1())
		t.faultAt(pc, faultBadAddr, asm.R1, true)
	}
	t.mark(local(fmt.Sprintf("r%d", len(regions))))
	t.get(asm.R1, in.RD())
	t.faultAt(pc, faultBadAddr, asm.R1, true)
	t.mark(local("done"))
	return nil
}

func (t *translator) store(pc int, in dif.Instr, local func(string) string) {
	size := map[dif.Op]asm.Size{dif.STB: asm.Byte, dif.STH: asm.Half, dif.STW: asm.Word, dif.STX: asm.DWord}[in.Op()]
	n := int32(size.Sizeof())
	regions := t.regions()
	for i, r := range regions {
		next := local(fmt.Sprintf("r%d", i+1))
		if i == len(regions)-1 {
			next = local("badaddr")
		}
		if i > 0 {
			t.mark(local(fmt.Sprintf("r%d", i)))
		}
		t.get(asm.R2, in.RD())
		t.emit(asm.LoadMem(asm.R1, rState, r.addrAt, asm.DWord))
		t.emit(asm.Sub.Reg(asm.R2, asm.R1))
		if r.start > 0 {
			t.emit(asm.JLT.Imm(asm.R2, int32(r.start), next))
		}
		t.emit(asm.JGT.Imm(asm.R2, int32(r.end)-n, next))
		t.emit(asm.Mov.Reg(asm.R3, asm.R2))
		t.emit(asm.And.Imm(asm.R3, n-1))
		t.emit(asm.JNE.Imm(asm.R3, 0, local("badalign")))
		if r.base == asm.R4 {
			// Where no element was looked up, a known 0.
			t.emit(asm.LoadMem(asm.R4, asm.R10, elemPtr, asm.DWord))
			t.emit(asm.JEq.Imm(asm.R4, 0, next))
		}
		t.get(asm.R1, in.R1())
		t.emit(asm.Add.Reg(asm.R2, r.base))
		t.emit(asm.StoreMem(asm.R2, 0, asm.R1, size))
		t.emit(asm.Ja.Label(local("done")))
	}
	t.mark(local("badaddr"))
	t.get(asm.R1, in.RD())
	t.faultAt(pc, faultBadAddr, asm.R1, true)
	t.mark(local("badalign"))
	t.get(asm.R1, in.RD())
	t.faultAt(pc, faultBadAlign, asm.R1, true)
	t.mark(local("done"))
}

// scmp translates scmp: the strings at r1 and r2 compared as unsigned
// bytes up to strsize, address 0 being the empty string and equal
// addresses equal strings without a read; the condition codes take the
// sign of the difference of the first bytes that differ, as (d, 0).
// Each string is copied into MapStrBuf by bpf_probe_read_kernel_str,
// strsize bytes and a NUL, and a string it cannot read faults BADADDR at
// the string's address (the kernel faults at the byte it cannot read).
func (t *translator) scmp(pc int, in dif.Instr, local func(string) string) {
	half := int16(t.l.strBufHalf())
	t.get(asm.R1, in.R1())
	t.get(asm.R2, in.R2())
	t.emit(asm.Mov.Imm(asm.R0, 0))
	t.emit(asm.JEq.Reg(asm.R1, asm.R2, local("set")))
	for i, r := range []uint8{in.R1(), in.R2()} {
		off := int32(i) * int32(half)
		name := fmt.Sprintf("str%d", i)
		t.emit(asm.LoadMem(asm.R1, asm.R10, strBufPtr, asm.DWord))
		t.emit(asm.Add.Imm(asm.R1, off))
		t.emit(asm.StoreImm(asm.R1, 0, 0, asm.Byte))
		t.get(asm.R3, r)
		t.emit(asm.JEq.Imm(asm.R3, 0, local(name)))
		t.emit(asm.Mov.Imm(asm.R2, int32(t.l.strsize)+1))
		t.emit(asm.FnProbeReadKernelStr.Call())
		t.emit(asm.JSGE.Imm(asm.R0, 0, local(name)))
		t.get(asm.R1, r)
		t.faultAt(pc, faultBadAddr, asm.R1, true)
		t.mark(local(name))
		t.emit(asm.Mov.Imm(asm.R0, 0))
	}
	// The bytes compared by a bpf_loop callback, its difference at
	// the callbacks' word 0.
	t.putLoopImm(0, 0)
	t.emit(asm.Mov.Imm(asm.R1, int32(t.l.strsize)))
	t.loop(t.callback("scmp", t.scmpStep))
	t.getLoop(asm.R0, rState, 0)
	t.mark(local("set"))
	t.emit(asm.StoreMem(asm.R10, ccA, asm.R0, asm.DWord))
	t.emit(storeImm64(asm.R10, ccB, 0))
}

// push translates pushtr and pushtv: the value, and for pushtr its
// size, at the tuple stack's top, whose depth the translator knows. A
// string's size is its length and NUL, at most the size pushed (the
// default string size for 0) and strsize, as dtrace_strlen reads it:
// an address it cannot read faults BADADDR. pushtr's size of another
// type over INT64_MAX faults ILLOP.
func (t *translator) push(pc int, in dif.Instr, local func(string) string) error {
	d := t.tuples[pc]
	if d == dif.NTupleRegs {
		// The kernel faults TUPOFLOW; here every run would, and the
		// verifier refuses the code after a fault that always happens.
		return &Error{pc, in, fmt.Sprintf("push onto a full tuple stack (%d entries)", dif.NTupleRegs)}
	}
	t.get(asm.R1, in.RD())
	t.emit(asm.StoreMem(asm.R10, tupleValue(d), asm.R1, asm.DWord))
	t.emit(storeImm64(asm.R10, tupleSize(d), 0))
	if in.Op() == dif.PUSHTV {
		return nil
	}
	t.get(asm.R2, in.R2())
	if in.R1() != dif.TypeString {
		t.emit(asm.JSGE.Imm(asm.R2, 0, local("size")))
		t.faultAt(pc, faultIllOp, 0, false)
		t.mark(local("size"))
		t.emit(asm.StoreMem(asm.R10, tupleSize(d), asm.R2, asm.DWord))
		return nil
	}
	// The bytes read: the limit (256 for 0) up to strsize, and a NUL.
	limit := int32(t.l.strsize)
	t.emit(asm.JNE.Imm(asm.R2, 0, local("lim")))
	t.emit(asm.Mov.Imm(asm.R2, strSizeDefault))
	t.mark(local("lim"))
	t.emit(asm.JLE.Imm(asm.R2, limit, local("lim2")))
	t.emit(asm.Mov.Imm(asm.R2, limit))
	t.mark(local("lim2"))
	t.emit(asm.Add.Imm(asm.R2, 1))
	t.emit(asm.Mov.Reg(asm.R3, asm.R1))
	t.emit(asm.LoadMem(asm.R1, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.FnProbeReadKernelStr.Call())
	t.emit(asm.JSGT.Imm(asm.R0, 0, local("strlen")))
	t.emit(asm.LoadMem(asm.R1, asm.R10, tupleValue(d), asm.DWord))
	t.faultAt(pc, faultBadAddr, asm.R1, true)
	t.mark(local("strlen"))
	t.emit(asm.StoreMem(asm.R10, tupleSize(d), asm.R0, asm.DWord))
	return nil
}

// strSizeDefault is dtrace_strsize_default, the limit of a pushed
// string of size 0.
const strSizeDefault = 256

// call translates call for the subroutines translated so far, their
// arguments on the tuple stack.
func (t *translator) call(pc int, in dif.Instr, local func(string) string) error {
	subr := in.Subr()
	nargs := t.tuples[pc]
	// arg loads argument i into dst; a missing one reads 0, as
	// dif/vm reads it.
	arg := func(dst asm.Register, i int) {
		if i < nargs {
			t.emit(asm.LoadMem(dst, asm.R10, tupleValue(i), asm.DWord))
		} else {
			t.emit(asm.Mov.Imm(dst, 0))
		}
	}
	badAddr := func(i int) {
		arg(asm.R1, i)
		t.faultAt(pc, faultBadAddr, asm.R1, true)
	}
	strsize, scratch := int32(t.l.strsize), int32(t.l.scratch)
	switch subr {
	case dif.SubrStrlen:
		// strsize bytes at most, as dtrace_strlen reads them.
		t.readString(0, 0, arg, badAddr, local("len"))
		t.emit(asm.Add.Imm(asm.R0, -1))
		t.set(in.RD(), asm.R0)

	case dif.SubrAlloca, dif.SubrCopyin:
		// alloca(size), copyin(addr, size): scratch as allocs takes
		// it, then for copyin the user's bytes read into it.
		n := 0
		if subr == dif.SubrCopyin {
			n = 1
		}
		arg(asm.R1, n)
		t.emit(asm.LoadMem(asm.R2, rState, stateScratch, asm.DWord))
		t.emit(asm.StoreMem(asm.R10, bufSlot, asm.R2, asm.DWord))
		t.alloc(pc, in.RD(), local)
		if subr == dif.SubrAlloca {
			break
		}
		// The same bytes, bounded again for the verifier.
		t.get(asm.R1, in.RD())
		t.emit(asm.LoadMem(asm.R2, rState, stateScrBase, asm.DWord))
		t.emit(asm.Sub.Reg(asm.R1, asm.R2))
		t.emit(asm.And.Imm(asm.R1, scratch-1))
		t.emit(asm.Add.Reg(asm.R1, rScratch))
		arg(asm.R2, 1)
		t.emit(asm.JGT.Imm(asm.R2, scratch, local("copyfail")))
		arg(asm.R3, 0)
		t.emit(asm.FnProbeReadUser.Call())
		t.emit(asm.JEq.Imm(asm.R0, 0, local("copied")))
		t.mark(local("copyfail"))
		// As the kernel, a copy that faults takes no scratch.
		t.emit(asm.LoadMem(asm.R2, asm.R10, bufSlot, asm.DWord))
		t.emit(asm.StoreMem(rState, stateScratch, asm.R2, asm.DWord))
		badAddr(0)
		t.mark(local("copied"))

	case dif.SubrCopyinstr:
		// copyinstr(addr[, n]): strsize bytes of scratch, or n and a
		// NUL if n is less, unaligned, the string cut to fit.
		if strsize > scratch {
			return &Error{pc, in, fmt.Sprintf("copyinstr with strsize %d over the scratch size %d", strsize, scratch)}
		}
		t.emit(asm.Mov.Imm(asm.R1, strsize))
		if nargs > 1 {
			arg(asm.R2, 1)
			t.emit(asm.JGE.Imm(asm.R2, strsize, local("size")))
			t.emit(asm.Mov.Reg(asm.R1, asm.R2))
			t.emit(asm.Add.Imm(asm.R1, 1))
			t.mark(local("size"))
		}
		t.emit(asm.LoadMem(asm.R3, rState, stateScratch, asm.DWord))
		t.emit(asm.Mov.Reg(asm.R4, asm.R3))
		t.emit(asm.Add.Reg(asm.R4, asm.R1))
		t.emit(asm.JLE.Imm(asm.R4, scratch, local("room")))
		t.faultAt(pc, faultNoScratch, 0, false)
		t.mark(local("room"))
		t.emit(asm.StoreMem(asm.R10, bufSlot, asm.R4, asm.DWord))
		t.emit(asm.StoreMem(asm.R10, keySlot, asm.R3, asm.DWord))
		t.emit(asm.Mov.Reg(asm.R2, asm.R1))
		t.emit(asm.And.Imm(asm.R3, scratch-1))
		t.emit(asm.Mov.Reg(asm.R1, rScratch))
		t.emit(asm.Add.Reg(asm.R1, asm.R3))
		arg(asm.R3, 0)
		t.emit(asm.FnProbeReadUserStr.Call())
		t.emit(asm.JSGE.Imm(asm.R0, 0, local("copied")))
		badAddr(0)
		t.mark(local("copied"))
		t.emit(asm.LoadMem(asm.R1, asm.R10, bufSlot, asm.DWord))
		t.emit(asm.StoreMem(rState, stateScratch, asm.R1, asm.DWord))
		t.emit(asm.LoadMem(asm.R0, asm.R10, keySlot, asm.DWord))
		t.emit(asm.LoadMem(asm.R1, rState, stateScrBase, asm.DWord))
		t.emit(asm.Add.Reg(asm.R0, asm.R1))
		t.set(in.RD(), asm.R0)

	case dif.SubrStrjoin:
		return t.strjoin(pc, in, arg, badAddr, local)

	case dif.SubrBcopy, dif.SubrCopyinto:
		t.bcopy(pc, in, arg, local)

	case dif.SubrProgenyof:
		if err := t.progenyof(pc, in, arg, local); err != nil {
			return err
		}

	case dif.SubrSpeculation:
		t.speculation(pc, in, local)

	case dif.SubrSubstr:
		return t.substr(pc, in, nargs, arg, badAddr, local)

	case dif.SubrRand:
		// 64 random bits, from two of bpf_get_prandom_u32's 32.
		t.emit(asm.FnGetPrandomU32.Call())
		t.emit(asm.StoreMem(asm.R10, bufSlot, asm.R0, asm.DWord))
		t.emit(asm.FnGetPrandomU32.Call())
		t.emit(asm.LSh.Imm(asm.R0, 32))
		t.emit(asm.LoadMem(asm.R1, asm.R10, bufSlot, asm.DWord))
		t.emit(asm.Or.Reg(asm.R0, asm.R1))
		t.set(in.RD(), asm.R0)

	case dif.SubrHtons, dif.SubrNtohs, dif.SubrHtonl, dif.SubrNtohl, dif.SubrHtonll, dif.SubrNtohll:
		// The byte order of x86-64 is the host's: a swap of the low
		// 16, 32 or 64 bits.
		size := map[uint16]asm.Size{dif.SubrHtons: asm.Half, dif.SubrNtohs: asm.Half, dif.SubrHtonl: asm.Word,
			dif.SubrNtohl: asm.Word, dif.SubrHtonll: asm.DWord, dif.SubrNtohll: asm.DWord}[subr]
		arg(asm.R1, 0)
		t.emit(asm.HostTo(asm.BE, asm.R1, size))
		t.set(in.RD(), asm.R1)

	case dif.SubrStrchr, dif.SubrStrrchr:
		t.strchr(pc, in, arg, badAddr, local)

	case dif.SubrLltostr:
		t.lltostr(pc, in, nargs, arg, local)

	case dif.SubrStrstr, dif.SubrIndex, dif.SubrRindex:
		t.strstr(pc, in, nargs, arg, badAddr, local)

	case dif.SubrStrtoll:
		t.strtoll(pc, in, nargs, arg, badAddr, local)

	case dif.SubrBasename, dif.SubrDirname:
		t.basename(pc, in, arg, badAddr, local)

	case dif.SubrCleanpath:
		t.cleanpath(pc, in, arg, badAddr, local)

	case dif.SubrStrtok:
		t.strtok(pc, in, arg, badAddr, local)

	case dif.SubrInetNtoa, dif.SubrInetNtoa6, dif.SubrInetNtop:
		t.inetNtop(pc, in, arg, badAddr, local)

	case dif.SubrJSON:
		t.json(pc, in, arg, badAddr, local)

	case dif.SubrDPath, dif.SubrDPathDentry:
		return t.dpath(pc, in, arg, local)

	case dif.SubrToupper, dif.SubrTolower:
		t.toupper(pc, in, arg, badAddr, local)

	case dif.SubrCopyout, dif.SubrCopyoutstr:
		if err := features.HaveProgramHelper(ebpf.Kprobe, asm.FnProbeWriteUser); err != nil {
			// A kernel locked down for integrity refuses the helper.
			return &Error{pc, in, fmt.Sprintf("%s() writes the user's memory through bpf_probe_write_user, which this kernel refuses (%v)", dif.SubrName(subr), err)}
		}
		t.copyout(pc, in, arg, badAddr, local)

	default:
		return &Error{pc, in, fmt.Sprintf("subroutine %s not translated yet", dif.SubrName(subr))}
	}
	return nil
}

// strjoin translates strjoin(a, b): both copied into MapStrBuf (a fault
// BADADDR if one cannot be read), then joined into scratch, which must
// have strsize bytes free, and takes the joined string's bytes; a
// string that does not fit in strsize bytes with its NUL faults
// NOSCRATCH, as dtrace_strjoin's.
func (t *translator) strjoin(pc int, in dif.Instr, arg func(asm.Register, int), badAddr func(int), local func(string) string) error {
	strsize, scratch := int32(t.l.strsize), int32(t.l.scratch)
	half := int32(t.l.strBufHalf())
	if strsize >= scratch {
		return &Error{pc, in, fmt.Sprintf("strjoin with strsize %d not under the scratch size %d", strsize, scratch)}
	}
	t.emit(asm.LoadMem(asm.R1, rState, stateScratch, asm.DWord))
	t.emit(asm.JLE.Imm(asm.R1, scratch-strsize, local("room")))
	t.mark(local("noscratch"))
	t.faultAt(pc, faultNoScratch, 0, false)
	t.mark(local("room"))
	// Each string's length with its NUL: a at keySlot, b at bufSlot.
	for i, at := range []int16{keySlot, bufSlot} {
		t.readString(int32(i)*half, i, arg, badAddr, local(fmt.Sprintf("read%d", i)))
		// a must leave room for b's NUL.
		t.emit(asm.JGT.Imm(asm.R0, strsize, local("noscratch")))
		t.emit(asm.StoreMem(asm.R10, at, asm.R0, asm.DWord))
	}
	// len(a) + len(b) + 1 ≤ strsize.
	t.emit(asm.LoadMem(asm.R1, asm.R10, keySlot, asm.DWord))
	t.emit(asm.LoadMem(asm.R2, asm.R10, bufSlot, asm.DWord))
	t.emit(asm.Add.Reg(asm.R1, asm.R2))
	t.emit(asm.JGT.Imm(asm.R1, strsize+1, local("noscratch")))
	// a's bytes without its NUL, then b's with it.
	t.emit(asm.LoadMem(asm.R3, rState, stateScratch, asm.DWord))
	t.emit(asm.JGT.Imm(asm.R3, scratch-strsize, local("noscratch")))
	t.emit(asm.Mov.Reg(asm.R1, rScratch))
	t.emit(asm.Add.Reg(asm.R1, asm.R3))
	t.emit(asm.LoadMem(asm.R2, asm.R10, keySlot, asm.DWord))
	t.emit(asm.Add.Imm(asm.R2, -1))
	t.emit(asm.JGT.Imm(asm.R2, strsize, local("noscratch")))
	t.emit(asm.LoadMem(asm.R3, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.FnProbeReadKernel.Call())
	t.emit(asm.LoadMem(asm.R3, rState, stateScratch, asm.DWord))
	t.emit(asm.JGT.Imm(asm.R3, scratch-strsize, local("noscratch")))
	t.emit(asm.LoadMem(asm.R2, asm.R10, keySlot, asm.DWord))
	t.emit(asm.Add.Imm(asm.R2, -1))
	t.emit(asm.JGT.Imm(asm.R2, strsize, local("noscratch")))
	t.emit(asm.Add.Reg(asm.R3, asm.R2))
	t.emit(asm.Mov.Reg(asm.R1, rScratch))
	t.emit(asm.Add.Reg(asm.R1, asm.R3))
	t.emit(asm.LoadMem(asm.R2, asm.R10, bufSlot, asm.DWord))
	t.emit(asm.JGT.Imm(asm.R2, strsize, local("noscratch")))
	t.emit(asm.LoadMem(asm.R3, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.Add.Imm(asm.R3, half))
	t.emit(asm.FnProbeReadKernel.Call())
	// The result's address; the bytes taken.
	t.emit(asm.LoadMem(asm.R1, rState, stateScratch, asm.DWord))
	t.emit(asm.LoadMem(asm.R0, rState, stateScrBase, asm.DWord))
	t.emit(asm.Add.Reg(asm.R0, asm.R1))
	t.set(in.RD(), asm.R0)
	t.emit(asm.LoadMem(asm.R2, asm.R10, keySlot, asm.DWord))
	t.emit(asm.Add.Reg(asm.R1, asm.R2))
	t.emit(asm.LoadMem(asm.R2, asm.R10, bufSlot, asm.DWord))
	t.emit(asm.Add.Reg(asm.R1, asm.R2))
	t.emit(asm.Add.Imm(asm.R1, -1))
	t.emit(asm.StoreMem(rState, stateScratch, asm.R1, asm.DWord))
	return nil
}

// assoc translates a load or store of an associative array's element:
// its key is built in MapKey from the tuple stack, as the kernel's
// dtrace_dynvar keys it (strings by their bytes), and the element is
// looked up in the array's map. A missing element reads 0; a store of
// 0 deletes it, any other makes it (zeroed) if missing, or counts a
// drop when the map has no room, then stores the value or copies the
// bytes.
func (t *translator) assoc(pc int, in dif.Instr, local func(string) string) error {
	op := in.Op()
	scope := uint8(dif.ScopeGlobal)
	if op == dif.LDTAA || op == dif.STTAA {
		scope = dif.ScopeThread
	}
	id := uint32(in.Var())
	a, ok := t.l.assocs[assocID{scope, id}]
	switch {
	case !ok:
		return &Error{pc, in, fmt.Sprintf("variable %#x is not in the variable table", id)}
	case a.err != "":
		return &Error{pc, in, fmt.Sprintf("associative array %s has %s", t.varName(id, scope), a.err)}
	}
	d := t.tuples[pc]
	keys := a.keys
	if scope == dif.ScopeThread {
		keys = keys[:len(keys)-1]
	}
	if d != len(keys) {
		return &Error{pc, in, fmt.Sprintf("a key of %d entries for an associative array of %d", d, len(keys))}
	}
	name := assocMapName(a.index)
	keySize := int32(t.l.keySize(a))
	// The key buffer's address, kept at keySlot across helper calls.
	keyBuf := func(dst asm.Register) { t.emit(asm.LoadMem(dst, asm.R10, keySlot, asm.DWord)) }
	t.mapPtr(asm.R1, mapKey)
	t.emit(asm.Mov.Reg(asm.R2, asm.R10))
	t.emit(asm.Add.Imm(asm.R2, zeroSlot))
	t.helper(asm.FnMapLookupElem)
	t.emit(asm.JNE.Imm(asm.R0, 0, local("key")))
	t.emit(asm.Mov.Imm(asm.R0, 0))
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("key"))
	t.emit(asm.StoreMem(asm.R10, keySlot, asm.R0, asm.DWord))
	// Zeroes, copied from scratch's upper half.
	t.emit(asm.Mov.Reg(asm.R1, asm.R0))
	t.emit(asm.Mov.Imm(asm.R2, keySize))
	t.emit(asm.Mov.Reg(asm.R3, rScratch))
	t.emit(asm.Add.Imm(asm.R3, int32(t.l.scratch)))
	if uint32(keySize) > t.l.scratch {
		return &Error{pc, in, fmt.Sprintf("a key of %d bytes, over the scratch size %d", keySize, t.l.scratch)}
	}
	t.emit(asm.FnProbeReadKernel.Call())
	keyBuf(asm.R1)
	t.emit(asm.StoreImm(asm.R1, 0, int64(id), asm.Word))
	off := int16(8)
	for i, k := range a.keys {
		switch {
		case i == len(keys):
			// A thread-local array's implicit entry: the thread.
			t.emit(asm.FnGetCurrentPidTgid.Call())
			t.emit(asm.LSh.Imm(asm.R0, 32))
			t.emit(asm.RSh.Imm(asm.R0, 32))
			keyBuf(asm.R1)
			t.emit(asm.StoreMem(asm.R1, off, asm.R0, asm.DWord))
		case k == keyValue:
			t.emit(asm.LoadMem(asm.R2, asm.R10, tupleValue(i), asm.DWord))
			keyBuf(asm.R1)
			t.emit(asm.StoreMem(asm.R1, off, asm.R2, asm.DWord))
		default:
			keyBuf(asm.R1)
			t.emit(asm.Add.Imm(asm.R1, int32(off)))
			t.emit(asm.Mov.Imm(asm.R2, int32(t.l.strsize)+1))
			t.emit(asm.LoadMem(asm.R3, asm.R10, tupleValue(i), asm.DWord))
			t.emit(asm.FnProbeReadKernelStr.Call())
			t.emit(asm.JSGT.Imm(asm.R0, 0, local(fmt.Sprintf("k%d", i))))
			t.emit(asm.LoadMem(asm.R1, asm.R10, tupleValue(i), asm.DWord))
			t.faultAt(pc, faultBadAddr, asm.R1, true)
			t.mark(local(fmt.Sprintf("k%d", i)))
		}
		off += int16(t.l.keyEntrySize(k))
	}
	find := func() {
		t.mapPtr(asm.R1, name)
		keyBuf(asm.R2)
		t.helper(asm.FnMapLookupElem)
	}
	if op == dif.LDGAA || op == dif.LDTAA {
		find()
		t.emit(asm.JEq.Imm(asm.R0, 0, local("done")))
		if a.ref {
			// The pointer read back as a scalar; it is kept, for
			// stores into the element (elemPtr).
			t.emit(asm.StoreMem(asm.R10, elemPtr, asm.R0, asm.DWord))
			t.emit(asm.StoreMem(rState, stateTmp, asm.R0, asm.DWord))
			t.emit(asm.LoadMem(asm.R0, rState, stateTmp, asm.DWord))
			t.emit(asm.StoreMem(rState, stateElem, asm.R0, asm.DWord))
		} else {
			t.emit(asm.LoadMem(asm.R0, asm.R0, 0, asm.DWord))
		}
		t.mark(local("done"))
		t.set(in.RD(), asm.R0)
		return nil
	}
	t.get(asm.R1, in.RS())
	t.emit(asm.JNE.Imm(asm.R1, 0, local("store")))
	t.mapPtr(asm.R1, name)
	keyBuf(asm.R2)
	t.emit(asm.FnMapDeleteElem.Call())
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("store"))
	find()
	t.emit(asm.JNE.Imm(asm.R0, 0, local("have")))
	t.mapPtr(asm.R1, name)
	keyBuf(asm.R2)
	t.emit(asm.Mov.Reg(asm.R3, rScratch))
	t.emit(asm.Add.Imm(asm.R3, int32(t.l.scratch)))
	if t.l.valueSize(a) > t.l.scratch {
		return &Error{pc, in, fmt.Sprintf("an element of %d bytes, over the scratch size %d", t.l.valueSize(a), t.l.scratch)}
	}
	t.emit(asm.Mov.Imm(asm.R4, 1)) // BPF_NOEXIST
	t.emit(asm.FnMapUpdateElem.Call())
	find()
	t.emit(asm.JNE.Imm(asm.R0, 0, local("have")))
	t.emit(asm.LoadMem(asm.R1, rState, stateDrops, asm.DWord))
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(rState, stateDrops, asm.R1, asm.DWord))
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("have"))
	if a.ref {
		t.emit(asm.Mov.Reg(asm.R1, asm.R0))
		t.get(asm.R3, in.RS())
		t.copyRef(pc, a.value, local)
	} else {
		t.get(asm.R1, in.RS())
		t.emit(asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord))
	}
	t.mark(local("done"))
	t.emit(asm.Mov.Imm(asm.R0, 0))
	return nil
}

// readString copies the string that is subroutine argument i into
// MapStrBuf at off, strsize bytes and a NUL at most, and leaves its
// length with the NUL in R0; an address it cannot read faults, and the
// code goes on at label.
func (t *translator) readString(off int32, i int, arg func(asm.Register, int), badAddr func(int), label string) {
	t.emit(asm.LoadMem(asm.R1, asm.R10, strBufPtr, asm.DWord))
	if off != 0 {
		t.emit(asm.Add.Imm(asm.R1, off))
	}
	t.emit(asm.Mov.Imm(asm.R2, int32(t.l.strsize)+1))
	arg(asm.R3, i)
	t.emit(asm.FnProbeReadKernelStr.Call())
	t.emit(asm.JSGT.Imm(asm.R0, 0, label))
	badAddr(i)
	t.mark(label)
}

// strchr translates strchr(s, c) and strrchr(s, c): the address of the
// first (last) byte of s equal to c, its NUL included, or 0; s is
// scanned in a copy in MapStrBuf, strsize bytes at most.
func (t *translator) strchr(pc int, in dif.Instr, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	strsize := int32(t.l.strsize)
	t.readString(0, 0, arg, badAddr, local("read"))
	// R1 the byte sought, R4 the copy, R5 the index, R0 the result.
	arg(asm.R1, 1)
	t.emit(asm.And.Imm(asm.R1, 0xff))
	t.emit(asm.LoadMem(asm.R4, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.Mov.Imm(asm.R5, 0))
	t.emit(asm.Mov.Imm(asm.R0, 0))
	t.emit(storeImm64(asm.R10, bufSlot, 0)) // strrchr's match
	t.mark(local("loop"))
	t.emit(asm.Mov.Reg(asm.R2, asm.R4))
	t.emit(asm.Add.Reg(asm.R2, asm.R5))
	t.emit(asm.LoadMem(asm.R2, asm.R2, 0, asm.Byte))
	if in.Subr() == dif.SubrStrchr {
		t.emit(asm.JNE.Reg(asm.R2, asm.R1, local("other")))
		arg(asm.R0, 0)
		t.emit(asm.Add.Reg(asm.R0, asm.R5))
		t.emit(asm.Ja.Label(local("done")))
		t.mark(local("other"))
	} else {
		// The last match so far, without a branch: the verifier
		// would follow each outcome at each byte.
		// R3 = 1 if the byte matches (its xor, less 1, is negative).
		t.emit(asm.Mov.Reg(asm.R3, asm.R2))
		t.emit(asm.Xor.Reg(asm.R3, asm.R1))
		t.emit(asm.Add.Imm(asm.R3, -1))
		t.emit(asm.RSh.Imm(asm.R3, 63))
		arg(asm.R0, 0)
		t.emit(asm.Add.Reg(asm.R0, asm.R5))
		t.emit(asm.LoadMem(asm.R1, asm.R10, bufSlot, asm.DWord))
		t.emit(asm.Sub.Reg(asm.R0, asm.R1))
		t.emit(asm.Mul.Reg(asm.R0, asm.R3))
		t.emit(asm.Add.Reg(asm.R0, asm.R1))
		t.emit(asm.StoreMem(asm.R10, bufSlot, asm.R0, asm.DWord))
		arg(asm.R1, 1)
		t.emit(asm.And.Imm(asm.R1, 0xff))
	}
	t.emit(asm.JEq.Imm(asm.R2, 0, local("done")))
	t.emit(asm.Add.Imm(asm.R5, 1))
	t.emit(asm.JLT.Imm(asm.R5, strsize, local("loop")))
	t.mark(local("done"))
	if in.Subr() == dif.SubrStrrchr {
		t.emit(asm.LoadMem(asm.R0, asm.R10, bufSlot, asm.DWord))
	}
	t.set(in.RD(), asm.R0)
}

// lltostrSize is the scratch lltostr takes: room for 2^64 in binary
// and a NUL.
const lltostrSize = 65

// lltostr translates lltostr(i[, base]) as dtrace_dif_subr writes it:
// digits from the end of 65 bytes of scratch backwards, then 0x for
// base 16, 0 for base 8 or 16 or for 0, - for a negative decimal; a
// base outside 2 … 36 faults ILLOP.
func (t *translator) lltostr(pc int, in dif.Instr, nargs int, arg func(asm.Register, int), local func(string) string) {
	scratch := int32(t.l.scratch)
	// keySlot: i; keySlot+8: the base; bufSlot: the scratch offset.
	arg(asm.R1, 0)
	t.emit(asm.StoreMem(asm.R10, keySlot, asm.R1, asm.DWord))
	t.emit(asm.Mov.Imm(asm.R2, 10))
	if nargs > 1 {
		arg(asm.R2, 1)
		t.emit(asm.JSLE.Imm(asm.R2, 1, local("badbase")))
		t.emit(asm.JLE.Imm(asm.R2, 36, local("base")))
		t.mark(local("badbase"))
		t.faultAt(pc, faultIllOp, 0, false)
		t.mark(local("base"))
	}
	t.emit(asm.StoreMem(asm.R10, keySlot+8, asm.R2, asm.DWord))
	t.emit(asm.LoadMem(asm.R4, rState, stateScratch, asm.DWord))
	t.emit(asm.JLE.Imm(asm.R4, scratch-lltostrSize, local("room")))
	t.faultAt(pc, faultNoScratch, 0, false)
	t.mark(local("room"))
	t.emit(asm.StoreMem(asm.R10, bufSlot, asm.R4, asm.DWord))
	// R1 the value left, R2 the base, R3 the index of the next byte.
	t.emit(asm.JNE.Imm(asm.R2, 10, local("unsigned")))
	t.emit(asm.JSGE.Imm(asm.R1, 0, local("unsigned")))
	t.emit(asm.Neg.Imm(asm.R1, 0))
	t.mark(local("unsigned"))
	t.emit(asm.Mov.Imm(asm.R3, lltostrSize-1))
	// put writes R5 at index R3 and moves back; an index out of the
	// 65 bytes, which no value reaches, writes nothing: the verifier's
	// bound.
	n := 0
	put := func() {
		n++
		skip := local(fmt.Sprintf("put%d", n))
		t.emit(asm.JGT.Imm(asm.R3, lltostrSize-1, skip))
		t.emit(asm.LoadMem(asm.R0, asm.R10, bufSlot, asm.DWord))
		t.emit(asm.JGT.Imm(asm.R0, scratch-lltostrSize, skip))
		t.emit(asm.Add.Reg(asm.R0, rScratch))
		t.emit(asm.Add.Reg(asm.R0, asm.R3))
		t.emit(asm.StoreMem(asm.R0, 0, asm.R5, asm.Byte))
		t.mark(skip)
		t.emit(asm.Add.Imm(asm.R3, -1))
	}
	char := func(c byte) {
		t.emit(asm.Mov.Imm(asm.R5, int32(c)))
		put()
	}
	char(0)
	t.mark(local("digit"))
	t.emit(asm.JEq.Imm(asm.R1, 0, local("digits")))
	t.emit(asm.JGT.Imm(asm.R3, lltostrSize-1, local("digits")))
	t.emit(asm.Mov.Reg(asm.R5, asm.R1))
	t.emit(asm.Mod.Reg(asm.R5, asm.R2))
	t.emit(asm.Div.Reg(asm.R1, asm.R2))
	t.emit(asm.JGT.Imm(asm.R5, 9, local("alpha")))
	t.emit(asm.Add.Imm(asm.R5, '0'))
	t.emit(asm.Ja.Label(local("putd")))
	t.mark(local("alpha"))
	t.emit(asm.Add.Imm(asm.R5, 'a'-10))
	t.mark(local("putd"))
	put()
	t.emit(asm.Ja.Label(local("digit")))
	t.mark(local("digits"))
	// The prefixes, from i (R1) and the base (R2).
	t.emit(asm.LoadMem(asm.R1, asm.R10, keySlot, asm.DWord))
	t.emit(asm.LoadMem(asm.R2, asm.R10, keySlot+8, asm.DWord))
	t.emit(asm.JNE.Imm(asm.R2, 16, local("p1")))
	t.emit(asm.JNE.Imm(asm.R1, 0, local("x")))
	char('0')
	t.mark(local("x"))
	char('x')
	t.mark(local("p1"))
	t.emit(asm.JEq.Imm(asm.R1, 0, local("zero")))
	t.emit(asm.JEq.Imm(asm.R2, 8, local("zero")))
	t.emit(asm.JNE.Imm(asm.R2, 16, local("p2")))
	t.mark(local("zero"))
	char('0')
	t.mark(local("p2"))
	t.emit(asm.JNE.Imm(asm.R2, 10, local("p3")))
	t.emit(asm.JSGE.Imm(asm.R1, 0, local("p3")))
	char('-')
	t.mark(local("p3"))
	// The string starts after the index; the 65 bytes are taken.
	t.emit(asm.LoadMem(asm.R1, asm.R10, bufSlot, asm.DWord))
	t.emit(asm.LoadMem(asm.R0, rState, stateScrBase, asm.DWord))
	t.emit(asm.Add.Reg(asm.R0, asm.R1))
	t.emit(asm.Add.Reg(asm.R0, asm.R3))
	t.emit(asm.Add.Imm(asm.R0, 1))
	t.set(in.RD(), asm.R0)
	t.emit(asm.Add.Imm(asm.R1, lltostrSize))
	t.emit(asm.StoreMem(rState, stateScratch, asm.R1, asm.DWord))
}

// commLen is TASK_COMM_LEN, the size of a task's name with its NUL.
const commLen = 16

// execname copies the current task's name (bpf_get_current_comm) into
// scratch and leaves its address in R0, or faults NOSCRATCH. It takes
// the whole commLen bytes of scratch, where dif/vm takes the name's
// length and a NUL: only the scratch left differs.
func (t *translator) execname(pc int, local func(string) string) {
	size := int32(t.l.scratch)
	t.emit(asm.LoadMem(asm.R3, rState, stateScratch, asm.DWord))
	t.emit(asm.JGT.Imm(asm.R3, size-commLen, local("nocomm")))
	t.emit(asm.Mov.Reg(asm.R4, asm.R3))
	t.emit(asm.Add.Imm(asm.R4, commLen))
	t.emit(asm.StoreMem(rState, stateScratch, asm.R4, asm.DWord))
	t.emit(asm.Mov.Reg(asm.R1, rScratch))
	t.emit(asm.Add.Reg(asm.R1, asm.R3))
	t.emit(asm.Mov.Imm(asm.R2, commLen))
	t.emit(asm.FnGetCurrentComm.Call())
	t.emit(asm.LoadMem(asm.R0, rState, stateScratch, asm.DWord))
	t.emit(asm.Add.Imm(asm.R0, -commLen))
	t.emit(asm.LoadMem(asm.R1, rState, stateScrBase, asm.DWord))
	t.emit(asm.Add.Reg(asm.R0, asm.R1))
	t.emit(asm.Ja.Label(local("comm")))
	t.mark(local("nocomm"))
	t.faultAt(pc, faultNoScratch, 0, false)
	t.mark(local("comm"))
}

// scmpStep compares byte i of the two strings in MapStrBuf: at a
// difference, or at their NUL, the loop ends.
func (t *translator) scmpStep() {
	const l = "cb_scmp_"
	half := int32(t.l.strBufHalf())
	t.bufByte(asm.R2, cIndex, 0, l+"a")
	t.bufByte(asm.R3, cIndex, half, l+"b")
	t.emit(asm.JNE.Reg(asm.R2, asm.R3, l+"diff"))
	t.emit(asm.JEq.Imm(asm.R2, 0, l+"end"))
	t.more()
	t.mark(l + "diff")
	t.emit(asm.Sub.Reg(asm.R2, asm.R3))
	t.emit(asm.StoreMem(cState, loopWord(0), asm.R2, asm.DWord))
	t.mark(l + "end")
	t.stop()
}
