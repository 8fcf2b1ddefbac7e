package emit

import (
	"fmt"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// gen builds one DIFO.
type gen struct {
	ir      *dif.IR
	obj     *dif.Object // emitter.obj
	info    *check.Info
	variant *check.Variant // the clause's variant (emitter.variant)
	regs    regset
	strsize int64
	pos     token.Pos // the expression being generated, for errors
	err     *diag.Error
	// bound holds where translator inputs are while a translator
	// member's expression is generated (and an inline array's keys
	// while its definition is).
	bound map[*check.Ident]binding
	// spills counts the spill slots in use; the first one's id is
	// spillBase.
	spills    int
	spillBase uint32
	depth     int   // nesting of the expression being generated
	spilled   *bool // emitter.spilled
}

// spillReserve is how many registers an operand may need before the
// value held for it is spilled: enough for any leaf and its operator.
const spillReserve = 3

// hold keeps the value in r while gen generates another operand, and
// returns both. When registers run short the held value goes to a
// clause-local spill slot and comes back after: DIF has no stack, and
// its clause-local variables are the per-probe-firing memory dtrace has.
func (g *gen) hold(r uint8, gen func() uint8) (uint8, uint8) {
	if g.regs.nfree() >= spillReserve {
		return r, gen()
	}
	slot := g.spillSlot()
	g.spills++
	*g.spilled = true
	g.ir.StoreVar(dif.STLS, slot, r)
	g.regs.free(r)
	o := gen()
	r = g.regs.alloc()
	g.ir.LoadVar(dif.LDLS, slot, r)
	g.spills--
	return r, o
}

// spillSlot names the next spill slot: a clause-local variable beyond
// the program's own.
func (g *gen) spillSlot() dif.VarRef {
	return dif.VarRef{Name: fmt.Sprintf("%%spill%d", g.spills), ID: g.spillBase + uint32(g.spills),
		Kind: dif.KindScalar, Scope: dif.ScopeLocal, Type: dif.IntType(8)}
}

// bailout unwinds a DIFO's generation at its first error.
type bailout struct{}

// newGen returns the generator of the emitter's next DIFO. The DIFOs
// are made one at a time, in one IR and one gen: each is assembled and
// converted before the next starts.
func (e *emitter) newGen() *gen {
	e.ir.Reset()
	g := &e.gen
	*g = gen{ir: &e.ir, obj: &e.obj, info: e.info, variant: e.variant, strsize: e.strsize, spillBase: e.info.NextLocal, spilled: &e.spilled}
	g.regs.g = g
	return g
}

func (g *gen) fail(tag diag.Tag, format string, args ...any) {
	g.err = diag.Errorf(g.pos, tag, format, args...)
	panic(bailout{})
}

// value returns what the checker recorded for e.
func (g *gen) value(e ast.Expr) *check.Value {
	v := g.info.Value(g.variant, e)
	if v == nil {
		g.pos = e.Pos()
		g.fail(diag.D_UNKNOWN, "internal error: expression was not checked")
	}
	return v
}

// difType is the DIF type of a D type, as dt_node_diftype gives it.
func (g *gen) difType(t types.Type, flags check.Flags) dif.Type {
	if t == nil {
		return dif.IntType(8)
	}
	if types.IsString(t) {
		dt := dif.StringType(uint32(g.strsize))
		if flags&check.Userland != 0 {
			// A string in user memory (stringof a userland
			// pointer), copied in where it is recorded.
			dt.Flags = dif.TFByURef
		}
		return dt
	}
	var ck uint8
	switch r := types.Resolve(t).(type) {
	case *types.Int:
		ck = dif.CTFInteger
	case *types.Float:
		ck = dif.CTFFloat
	case *types.Pointer:
		ck = dif.CTFPointer
	case *types.Array:
		ck = dif.CTFArray
	case *types.Func:
		ck = dif.CTFFunction
	case *types.Struct:
		ck = dif.CTFStruct
		if r.Union {
			ck = dif.CTFUnion
		}
	case *types.Enum:
		ck = dif.CTFEnum
	}
	dt := dif.Type{Kind: dif.TypeCTF, CtfKind: ck, Size: uint32(t.Size())}
	if flags&check.Ref != 0 {
		dt.Flags |= dif.TFByRef
		if flags&check.Userland != 0 {
			dt.Flags = dif.TFByURef
		}
	}
	return dt
}

// byRef reports whether values of the expression are addresses of
// memory rather than the values themselves: strings, structs, arrays.
func byRef(v *check.Value) bool { return v.Flags&check.Ref != 0 }

// varRef names a variable for the DIFO's variable table.
func (g *gen) varRef(id *check.Ident) dif.VarRef {
	kind := uint8(dif.KindScalar)
	if id.Kind == check.Array {
		kind = dif.KindArray
	}
	var scope uint8
	switch id.Space {
	case check.ThreadLocal:
		scope = dif.ScopeThread
	case check.ClauseLocal:
		scope = dif.ScopeLocal
	}
	flags := check.Flags(0)
	if id.Type != nil && typedRef(id.Type) {
		flags |= check.Ref
	}
	return dif.VarRef{Name: id.Name, ID: id.ID, Kind: kind, Scope: scope, Type: g.difType(id.Type, flags)}
}

// typedRef reports whether a type's values are passed by reference.
func typedRef(t types.Type) bool {
	switch types.Resolve(t).(type) {
	case *types.Struct, *types.Array, *types.String, *types.Func:
		return true
	}
	return false
}

// load emits the load of a value of type t from the address in reg,
// replacing it, as dt_cg_load chooses the instruction.
func (g *gen) load(t types.Type, user bool, reg uint8) {
	if typedRef(t) {
		return
	}
	op, ok := loadInst(t.Size(), types.IsSigned(t) && !types.IsPointer(t), user)
	if !ok {
		g.fail(diag.D_UNKNOWN, "internal error: cannot load a value of %d bytes", t.Size())
	}
	g.ir.Emit(dif.Load(op, reg, reg))
}

// loadInst returns the instruction that loads size bytes, sign-extended
// or not, from kernel or user memory; false for a size DIF has none for.
func loadInst(size int64, signed, user bool) (dif.Op, bool) {
	var op dif.Op
	switch size {
	case 1:
		op = pick(signed, dif.LDSB, dif.LDUB)
	case 2:
		op = pick(signed, dif.LDSH, dif.LDUH)
	case 4:
		op = pick(signed, dif.LDSW, dif.LDUW)
	case 8:
		op = dif.LDX
	default:
		return 0, false
	}
	if user {
		op += dif.ULDSB - dif.LDSB
	}
	return op, true
}

func pick(cond bool, a, b dif.Op) dif.Op {
	if cond {
		return a
	}
	return b
}

// store emits the store of the value in rs, of type t, to the address
// in rd.
func (g *gen) store(t types.Type, rs, rd uint8) {
	if typedRef(t) {
		// Strings, structs and arrays are copied.
		n := g.setInt(uint64(g.size(t)))
		g.ir.Emit(dif.Copys(rs, n, rd))
		g.regs.free(n)
		return
	}
	var op dif.Op
	switch t.Size() {
	case 1:
		op = dif.STB
	case 2:
		op = dif.STH
	case 4:
		op = dif.STW
	case 8:
		op = dif.STX
	default:
		g.fail(diag.D_UNKNOWN, "internal error: cannot store a value of %d bytes", t.Size())
	}
	g.ir.Emit(dif.Store(op, rs, rd))
}

// size is the size of a type's values; a string's is strsize.
func (g *gen) size(t types.Type) int64 {
	if types.IsString(t) {
		return g.strsize
	}
	return t.Size()
}

// setInt loads a constant into a new register; 0 needs no table entry.
func (g *gen) setInt(v uint64) uint8 {
	r := g.regs.alloc()
	if v == 0 {
		g.ir.Emit(dif.Mov(0, r))
	} else {
		g.ir.Setx(v, r)
	}
	return r
}

// finish assembles the DIFO, returning the value in reg, into the
// emitter's object, valid until the next DIFO is assembled.
func (g *gen) finish(reg uint8, ret dif.Type) (*dif.Object, error) {
	g.ir.Emit(dif.Ret(reg))
	g.ir.Ret = ret
	if err := dif.AssembleTo(g.obj, g.ir); err != nil {
		return nil, err
	}
	return g.obj, nil
}

// build runs f, which generates code, and turns a failure into an error.
func (g *gen) build(f func() (*dif.Object, error)) (obj *dif.Object, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			obj, err = nil, g.err
		}
	}()
	return f()
}
