package emit

import (
	"encoding/binary"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
)

// locals->x is generated from the variable's DWARF location at the
// probe: the expression's stack machine is run at compile time on DIF
// registers, a register operand becoming a load of regs[] (uregs[] at
// pid probes), a memory read a load (a user load at pid probes). So the
// variable is ordinary DIF, and DOF carries nothing new.

// dwarfRegs maps amd64's DWARF register numbers (System V psABI: rax,
// rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, then the return address)
// to the regs[] index regs.d gives the register.
var dwarfRegs = [...]uint64{33, 31, 32, 30, 28, 27, 29, 39, 26, 25, 24, 23, 22, 21, 20, 19, 36}

// dwarfRIP is the DWARF number of the return address column, which
// dwarfRegs maps to the instruction pointer: at a probe, the probe's
// address.
const dwarfRIP = 16

// uint64Type is what a register holds before it is narrowed to the
// variable's type.
var uint64Type = &types.Int{Name: "uint64_t", Bytes: 8}

// locPiece is what a location gives for one piece of a variable.
type locPiece uint8

const (
	pieceMem      locPiece = iota // the top of the stack is its address
	pieceReg                      // register reg holds it
	pieceValue                    // the top of the stack is its value
	pieceImplicit                 // the bytes of DW_OP_implicit_value are its value
)

// localGen runs one location expression.
type localGen struct {
	g     *gen
	l     *check.Local
	place *check.Place
	stack []uint8
}

// local generates locals->name: its value in a register, or its address
// for a variable passed by reference (a struct, an array).
func (g *gen) local(v *check.Value) uint8 {
	l := v.Local
	lg := &localGen{g: g, l: l, place: &l.Frame.Place}
	return lg.variable(v.Type)
}

// variable generates the whole variable of type t.
func (lg *localGen) variable(t types.Type) uint8 {
	g := lg.g
	size := t.Size()
	ref := typedRef(t)
	ops := lg.l.Loc
	if ref && !check.InMemory(ops) {
		return lg.scratch(uint64(size), false)
	}
	var acc uint8 // the pieces assembled so far
	var accBytes uint64
	start := 0
	for i, op := range ops {
		if op.Code != dwarfexpr.OpPiece {
			continue
		}
		kind, reg, blk := lg.run(ops[start:i])
		r := lg.pieceValue(kind, reg, blk, op.Uint)
		lg.drop()
		if accBytes+op.Uint > 8 {
			lg.fail("has pieces of %d bytes and more (%s): only values of 8 bytes at most are assembled", accBytes+op.Uint, ops)
		}
		if op.Uint < 8 {
			mask := g.setInt(1<<(8*op.Uint) - 1)
			g.ir.Emit(dif.ALU(dif.AND, r, mask, r))
			g.regs.free(mask)
		}
		if accBytes == 0 {
			acc = r
		} else {
			n := g.setInt(8 * accBytes)
			g.ir.Emit(dif.ALU(dif.SLL, r, n, r))
			g.ir.Emit(dif.ALU(dif.OR, acc, r, acc))
			g.regs.free(n)
			g.regs.free(r)
		}
		accBytes += op.Uint
		start = i + 1
	}
	if start > 0 {
		if start != len(ops) {
			lg.fail("has operations after its last piece (%s)", ops)
		}
		g.cast(uint64Type, t, acc)
		return acc
	}
	kind, reg, blk := lg.run(ops)
	if ref {
		r := lg.pop()
		lg.drop()
		return r
	}
	if kind == pieceMem {
		r := lg.pop()
		lg.drop()
		g.load(t, lg.place.User, r)
		return r
	}
	r := lg.pieceValue(kind, reg, blk, uint64(size))
	lg.drop()
	g.cast(uint64Type, t, r)
	return r
}

// scratch generates a struct or array of size bytes that is not in
// memory (in registers, or in pieces) as a copy in scratch memory,
// piece by piece, whose address it returns: its members are then read
// as any struct's. With partial, the pieces optimised out are zeros:
// the checker lets only members of the others be read
// (Checker.localMember).
func (lg *localGen) scratch(size uint64, partial bool) uint8 {
	g := lg.g
	ops := lg.l.Loc
	// Each piece is stored as 8 bytes, masked to its size, the next
	// storing over what lies past it: room for 8 past the end.
	n := g.setInt((size+7)/8*8 + 8)
	buf := g.regs.alloc()
	g.ir.Emit(dif.Allocs(n, buf))
	g.regs.free(n)
	store := func(v uint8, off uint64) {
		addr := g.regs.alloc()
		g.ir.Emit(dif.Mov(buf, addr))
		lg.addConst(addr, off)
		g.ir.Emit(dif.Store(dif.STX, v, addr))
		g.regs.free(addr)
		g.regs.free(v)
	}
	var off uint64
	start := 0
	for i, op := range ops {
		if op.Code != dwarfexpr.OpPiece {
			continue
		}
		if op.Uint > 8 {
			lg.fail("has a piece of %d bytes (%s): only pieces of 8 bytes at most are assembled", op.Uint, ops)
		}
		switch {
		case i > start:
			kind, reg, blk := lg.run(ops[start:i])
			r := lg.pieceValue(kind, reg, blk, op.Uint)
			lg.drop()
			if op.Uint < 8 {
				mask := g.setInt(1<<(8*op.Uint) - 1)
				g.ir.Emit(dif.ALU(dif.AND, r, mask, r))
				g.regs.free(mask)
			}
			store(r, off)
		case partial:
			store(g.setInt(0), off)
		default:
			lg.fail("is in part optimised out at the probe (%s)", ops)
		}
		off += op.Uint
		start = i + 1
	}
	switch {
	case start == 0 && len(ops) == 1 && ops[0].Code == dwarfexpr.OpImplicitValue:
		// A constant, 8 bytes at a time.
		blk := ops[0].Block
		for o := 0; o < len(blk) && uint64(o) < size; o += 8 {
			var b [8]byte
			copy(b[:], blk[o:])
			store(g.setInt(binary.LittleEndian.Uint64(b[:])), uint64(o))
		}
	case start == 0 && size <= 8:
		// One register, or a value, holds the whole.
		kind, reg, blk := lg.run(ops)
		r := lg.pieceValue(kind, reg, blk, size)
		lg.drop()
		store(r, 0)
	case start == 0:
		lg.fail("is of %d bytes, in one register or value (%s)", size, ops)
	case start != len(ops):
		lg.fail("has operations after its last piece (%s)", ops)
	case off < size && partial:
		for ; off < size; off += 8 {
			store(g.setInt(0), off)
		}
	case off < size:
		lg.fail("is in part optimised out at the probe (%s): its pieces hold %d of its %d bytes", ops, off, size)
	}
	return buf
}

// localAddress generates the address of locals->name, which must be in
// memory, or be a struct or array, read then from its copy (scratch)
// for its members.
func (g *gen) localAddress(v *check.Value) uint8 {
	l := v.Local
	lg := &localGen{g: g, l: l, place: &l.Frame.Place}
	if !check.InMemory(l.Loc) && typedRef(v.Type) {
		return lg.scratch(uint64(v.Type.Size()), true)
	}
	if kind, _, _ := lg.run(l.Loc); kind != pieceMem {
		lg.fail("is not in memory (%s): its address cannot be taken", l.Loc)
	}
	r := lg.pop()
	lg.drop()
	return r
}

// pieceValue returns, in a register, the value of a piece of n bytes
// that run left as kind.
func (lg *localGen) pieceValue(kind locPiece, reg int, blk []byte, n uint64) uint8 {
	g := lg.g
	switch kind {
	case pieceMem:
		r := lg.pop()
		if !lg.load(r, n) {
			lg.fail("has a piece of %d bytes in memory: only pieces of 1, 2, 4 or 8 bytes are read", n)
		}
		return r
	case pieceReg:
		return lg.register(reg)
	case pieceValue:
		return lg.pop()
	}
	if len(blk) > 8 {
		lg.fail("has an implicit value of %d bytes: only values of 8 bytes at most are read", len(blk))
	}
	var b [8]byte
	copy(b[:], blk)
	return g.setInt(binary.LittleEndian.Uint64(b[:]))
}

// run runs the operations of one piece (no DW_OP_piece among them) and
// says what they leave.
func (lg *localGen) run(ops dwarfexpr.Expr) (kind locPiece, reg int, blk []byte) {
	g := lg.g
	kind = pieceMem
	for i, op := range ops {
		last := i == len(ops)-1
		switch op.Code {
		case dwarfexpr.OpReg:
			if !last {
				lg.fail("names a register in the middle of its location (%s)", ops)
			}
			return pieceReg, op.Reg, nil
		case dwarfexpr.OpImplicitValue:
			if !last {
				lg.fail("has operations after an implicit value (%s)", ops)
			}
			return pieceImplicit, 0, op.Block
		case dwarfexpr.OpStackValue:
			if !last {
				lg.fail("has operations after DW_OP_stack_value (%s)", ops)
			}
			lg.need(1, ops)
			return pieceValue, 0, nil
		case dwarfexpr.OpBreg:
			r := lg.register(op.Reg)
			lg.addConst(r, uint64(op.Int))
			lg.push(r)
		case dwarfexpr.OpFbreg:
			r := lg.frameBase()
			lg.addConst(r, uint64(op.Int))
			lg.push(r)
		case dwarfexpr.OpCallFrameCFA:
			lg.push(lg.cfa())
		case dwarfexpr.OpAddr:
			r := g.setInt(op.Uint + lg.place.Bias)
			if lg.place.PCBias {
				pc := lg.register(dwarfRIP)
				link := g.setInt(lg.place.PC)
				g.ir.Emit(dif.ALU(dif.SUB, pc, link, pc))
				g.ir.Emit(dif.ALU(dif.ADD, r, pc, r))
				g.regs.free(link)
				g.regs.free(pc)
			}
			lg.push(r)
		case dwarfexpr.OpConstu, dwarfexpr.OpLit:
			lg.push(g.setInt(op.Uint))
		case dwarfexpr.OpConsts:
			lg.push(g.setInt(uint64(op.Int)))
		case dwarfexpr.OpPlusUconst:
			lg.need(1, ops)
			lg.addConst(lg.top(0), op.Uint)
		case dwarfexpr.OpPlus, dwarfexpr.OpMinus, dwarfexpr.OpMul, dwarfexpr.OpDiv, dwarfexpr.OpMod,
			dwarfexpr.OpAnd, dwarfexpr.OpOr, dwarfexpr.OpXor, dwarfexpr.OpShl, dwarfexpr.OpShr, dwarfexpr.OpShra:
			lg.need(2, ops)
			b := lg.pop()
			a := lg.top(0)
			g.ir.Emit(dif.ALU(aluOps[op.Code], a, b, a))
			g.regs.free(b)
		case dwarfexpr.OpNeg:
			lg.need(1, ops)
			g.ir.Emit(dif.ALU(dif.SUB, 0, lg.top(0), lg.top(0)))
		case dwarfexpr.OpNot:
			lg.need(1, ops)
			g.ir.Emit(dif.Not(lg.top(0), lg.top(0)))
		case dwarfexpr.OpDup, dwarfexpr.OpOver, dwarfexpr.OpPick:
			n := 0
			switch op.Code {
			case dwarfexpr.OpOver:
				n = 1
			case dwarfexpr.OpPick:
				n = int(op.Uint)
			}
			lg.need(n+1, ops)
			r := g.regs.alloc()
			g.ir.Emit(dif.Mov(lg.top(n), r))
			lg.push(r)
		case dwarfexpr.OpDrop:
			lg.need(1, ops)
			g.regs.free(lg.pop())
		case dwarfexpr.OpSwap:
			lg.need(2, ops)
			s := lg.stack
			s[len(s)-1], s[len(s)-2] = s[len(s)-2], s[len(s)-1]
		case dwarfexpr.OpRot:
			lg.need(3, ops)
			s := lg.stack
			n := len(s)
			s[n-1], s[n-2], s[n-3] = s[n-2], s[n-3], s[n-1]
		case dwarfexpr.OpDeref, dwarfexpr.OpDerefSize:
			lg.need(1, ops)
			n := uint64(8)
			if op.Code == dwarfexpr.OpDerefSize {
				n = op.Uint
			}
			lg.deref(lg.top(0), n)
		case dwarfexpr.OpEntryValue:
			lg.push(lg.entryValue(op))
		case dwarfexpr.OpNop:
		default:
			lg.fail("has a location this compiler cannot read: %s in %s", op, ops)
		}
	}
	if len(ops) == 0 {
		lg.fail("is in part optimised out at the probe (%s)", lg.l.Loc)
	}
	lg.need(1, ops)
	return kind, 0, nil
}

// aluOps are the DIF operations of DWARF's binary arithmetic, by
// DWARF operation: an array, not a map, so that it is static data.
var aluOps = [256]dif.Op{
	dwarfexpr.OpPlus: dif.ADD, dwarfexpr.OpMinus: dif.SUB, dwarfexpr.OpMul: dif.MUL,
	dwarfexpr.OpDiv: dif.SDIV, dwarfexpr.OpMod: dif.UREM, dwarfexpr.OpAnd: dif.AND,
	dwarfexpr.OpOr: dif.OR, dwarfexpr.OpXor: dif.XOR, dwarfexpr.OpShl: dif.SLL,
	dwarfexpr.OpShr: dif.SRL, dwarfexpr.OpShra: dif.SRA,
}

// deref replaces the address in r by the n bytes there.
func (lg *localGen) deref(r uint8, n uint64) {
	if !lg.load(r, n) {
		lg.fail("reads %d bytes with DW_OP_deref_size: only 1, 2, 4 or 8 are read", n)
	}
}

// load replaces the address in r by the n bytes there, zero-extended,
// from user memory at pid probes; it reports false for a size DIF has
// no load of.
func (lg *localGen) load(r uint8, n uint64) bool {
	op, ok := loadInst(int64(n), false, lg.place.User)
	if ok {
		lg.g.ir.Emit(dif.Load(op, r, r))
	}
	return ok
}

// register loads DWARF register n from regs[] or uregs[].
func (lg *localGen) register(n int) uint8 {
	g := lg.g
	if n < 0 || n >= len(dwarfRegs) {
		lg.fail("lives in DWARF register %d, which regs[] does not hold", n)
	}
	idx := g.setInt(dwarfRegs[n])
	r := g.regs.alloc()
	ref := dif.VarRef{Name: "regs", ID: dif.VarRegs, Kind: dif.KindArray, Type: dif.IntType(8)}
	if lg.place.User {
		ref.Name, ref.ID = "uregs", dif.VarUregs
	}
	g.ir.LoadArray(dif.LDGA, ref, idx, r)
	g.regs.free(idx)
	return r
}

// frameBase loads the function's frame base, which DW_OP_fbreg is
// relative to.
func (lg *localGen) frameBase() uint8 {
	fb := lg.place.FrameBase
	switch {
	case len(fb) == 1 && fb[0].Code == dwarfexpr.OpReg:
		// The register's value is the frame base (DWARF 5, 2.5.1.2).
		return lg.register(fb[0].Reg)
	case len(fb) == 1 && fb[0].Code == dwarfexpr.OpBreg:
		r := lg.register(fb[0].Reg)
		lg.addConst(r, uint64(fb[0].Int))
		return r
	case len(fb) == 1 && fb[0].Code == dwarfexpr.OpCallFrameCFA:
		return lg.cfa()
	case len(fb) == 0:
		lg.fail("is relative to the frame base, which the function does not give")
	}
	lg.fail("is relative to a frame base this compiler cannot read: %s", fb)
	return 0
}

// cfa loads the canonical frame address at the probe.
func (lg *localGen) cfa() uint8 {
	c := lg.place.CFA
	if c.Err != nil {
		lg.fail("is relative to the call frame address, which is not known at the probe: %v", c.Err)
	}
	r := lg.register(c.Reg)
	lg.addConst(r, uint64(c.Off))
	return r
}

// entryValue loads what DW_OP_entry_value asks for: a register's value
// on entry to the function, which the register still holds at its
// first instruction only; further in, the value the call site the
// function was called from gives (callSiteValue).
func (lg *localGen) entryValue(op dwarfexpr.Op) uint8 {
	if len(op.Sub) != 1 || op.Sub[0].Code != dwarfexpr.OpReg {
		lg.fail("has an entry value this compiler cannot read: %s", op)
	}
	if !lg.place.Entry {
		if len(lg.l.CallValues) == 0 {
			lg.fail("is available here only as its value on entry to the function (%s), which is not kept after the function's first instruction", op)
		}
		return lg.callSiteValue()
	}
	return lg.register(op.Sub[0].Reg)
}

// callSiteValue computes a parameter's value on entry as the call site
// the function was called from gives it: the return address, at CFA-8,
// selects the call site. Called from elsewhere (another unit, a
// pointer), the value is not known: the clause then reads address 0,
// and faults as dtrace does on a bad address.
func (lg *localGen) callSiteValue() uint8 {
	g := lg.g
	ra := lg.cfa()
	lg.addConst(ra, ^uint64(7)) // -8
	lg.deref(ra, 8)
	// The return addresses are link-time ones: add the image's bias.
	var bias uint8
	if lg.place.PCBias {
		bias = lg.register(dwarfRIP)
		link := g.setInt(lg.place.PC)
		g.ir.Emit(dif.ALU(dif.SUB, bias, link, bias))
		g.regs.free(link)
		g.ir.Emit(dif.ALU(dif.SUB, ra, bias, ra))
		g.regs.free(bias)
	}
	out := g.regs.alloc()
	done := g.ir.NewLabel()
	for _, cv := range lg.l.CallValues {
		k := g.setInt(cv.ReturnPC + lg.place.Bias)
		g.ir.Emit(dif.Cmp(dif.CMP, ra, k))
		g.regs.free(k)
		next := g.ir.NewLabel()
		g.ir.Branch(dif.BNE, next)
		sub := &localGen{g: g, l: lg.l, place: lg.place}
		sub.run(cv.Value)
		v := sub.pop()
		sub.drop()
		g.ir.Emit(dif.Mov(v, out))
		g.regs.free(v)
		g.ir.Branch(dif.BA, done)
		g.ir.Mark(next)
	}
	g.ir.Setx(0, out)
	lg.deref(out, 8)
	g.ir.Mark(done)
	g.regs.free(ra)
	return out
}

func (lg *localGen) addConst(r uint8, n uint64) {
	if n == 0 {
		return
	}
	k := lg.g.setInt(n)
	lg.g.ir.Emit(dif.ALU(dif.ADD, r, k, r))
	lg.g.regs.free(k)
}

// drop frees what the stack holds: values a location left below its
// result.
func (lg *localGen) drop() {
	for _, r := range lg.stack {
		lg.g.regs.free(r)
	}
	lg.stack = lg.stack[:0]
}

func (lg *localGen) push(r uint8) { lg.stack = append(lg.stack, r) }

func (lg *localGen) pop() uint8 {
	r := lg.stack[len(lg.stack)-1]
	lg.stack = lg.stack[:len(lg.stack)-1]
	return r
}

// top returns the register n below the top of the stack.
func (lg *localGen) top(n int) uint8 { return lg.stack[len(lg.stack)-1-n] }

// need fails unless the stack holds n values.
func (lg *localGen) need(n int, ops dwarfexpr.Expr) {
	if len(lg.stack) < n {
		lg.fail("has a location that pops an empty stack (%s)", ops)
	}
}

func (lg *localGen) fail(format string, args ...any) {
	args = append([]any{lg.l.Name}, args...)
	lg.g.fail(diag.D_LOCALS_LOC, "locals->%s "+format, args...)
}
