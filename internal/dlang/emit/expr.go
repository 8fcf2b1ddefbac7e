package emit

import (
	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// maxDepth bounds the nesting of the expressions gen generates: twice
// the parser's limit leaves room for a tree at that limit and the levels
// the sugar pass adds, and stops a chain of inlines or translators each
// expanding the next, which no parser limit sees.
const maxDepth = 2 * parser.MaxNesting

// maxInstrs bounds the instructions of one DIFO: sixteen times what the
// kernel accepts by default (dtrace_difo_maxsize, 256 KiB), so that only
// inlines that expand exponentially (i1 = i0 + i0, i2 = i1 + i1, …) reach
// it, before they exhaust memory.
const maxInstrs = 16 * dif.DefaultMaxSize / 4

// expr generates code that leaves the value of e in a register it
// returns; the caller frees it. By-reference values (strings, structs,
// arrays) are left as their address, as in dt_cg_node.
func (g *gen) expr(e ast.Expr) uint8 {
	if g.depth++; g.depth > maxDepth {
		g.pos = e.Pos()
		g.fail(diag.D_SYNTAX, "expression nests more than %d levels once its inlines and translators are expanded", maxDepth)
	}
	if g.ir.Len() > maxInstrs {
		g.pos = e.Pos()
		g.fail(diag.D_UNKNOWN, "DIF program exceeds maximum program size: more than %d instructions", maxInstrs)
	}
	r := g.node(e)
	g.depth--
	return r
}

// node generates the code of e, at its nesting level.
func (g *gen) node(e ast.Expr) uint8 {
	v := g.value(e)
	g.pos = e.Pos()
	if v.Const && types.IsInteger(v.Type) {
		return g.setInt(v.Int)
	}
	switch e := e.(type) {
	case *ast.StringLit:
		r := g.regs.alloc()
		g.ir.Sets(e.Value, r)
		return r
	case *ast.Ident:
		return g.ident(e, v)
	case *ast.UnaryExpr:
		return g.unary(e, v)
	case *ast.BinaryExpr:
		return g.binary(e, v)
	case *ast.CondExpr:
		return g.cond(e)
	case *ast.IndexExpr:
		return g.index(e, v)
	case *ast.SelectorExpr:
		return g.selector(e, v)
	case *ast.CallExpr:
		return g.call(e, v)
	case *ast.CastExpr:
		r := g.expr(e.X)
		g.cast(g.value(e.X).Type, v.Type, r)
		return r
	case *ast.SizeofExpr:
		return g.setInt(v.Int)
	case *ast.XlateExpr:
		if v.Ident != nil && v.Ident.Kind == check.XlateSOU {
			return g.translateAll(v.Ident)
		}
	}
	g.fail(diag.D_UNKNOWN, "the code generator does not support this expression yet")
	return 0
}

// ident loads a variable, builtin or translator input.
func (g *gen) ident(e *ast.Ident, v *check.Value) uint8 {
	id := v.Ident
	if id == nil {
		g.fail(diag.D_UNKNOWN, "internal error: %s has no identifier", e.Name)
	}
	if b, ok := g.bound[id]; ok {
		out := g.regs.alloc()
		if b.spilled {
			g.ir.LoadVar(dif.LDLS, b.slot, out)
		} else {
			g.ir.Emit(dif.Mov(b.reg, out))
		}
		return out
	}
	if id.Inline != nil {
		return g.expr(id.Inline.Value)
	}
	if id.Kind == check.Symbol {
		// As dt_cg_node's DT_NODE_SYM: the address, and the load of
		// a value that is not passed by reference.
		r := g.symbol(id)
		g.load(v.Type, false, r)
		return r
	}
	r := g.regs.alloc()
	g.ir.LoadVar(loadOp(id), g.varRef(id), r)
	return r
}

// symbol loads the address of a kernel symbol, a constant that
// dif.Assemble relocates when the link mode makes the symbol dynamic.
func (g *gen) symbol(id *check.Ident) uint8 {
	s := id.Sym
	switch {
	case s.PerCPU:
		g.fail(diag.D_UNKNOWN, "cannot read per-CPU variable %s`%s: its address is an offset into each CPU's area, which DIF cannot locate", s.Module, s.Name)
	case !s.HasAddr:
		g.fail(diag.D_UNKNOWN, "the address of %s`%s is not known: %s", s.Module, s.Name, s.NoAddr)
	}
	r := g.regs.alloc()
	g.ir.SetxSym(dif.Symbol{Name: s.Name, Object: s.Module, Primary: s.Primary}, s.Addr, r)
	return r
}

// loadOp and storeOp choose the instruction for a scalar variable's
// scope.
func loadOp(id *check.Ident) dif.Op {
	switch id.Space {
	case check.ThreadLocal:
		return dif.LDTS
	case check.ClauseLocal:
		return dif.LDLS
	}
	return dif.LDGS
}

func storeOp(id *check.Ident) dif.Op {
	switch id.Space {
	case check.ThreadLocal:
		return dif.STTS
	case check.ClauseLocal:
		return dif.STLS
	}
	return dif.STGS
}

// cast converts the scalar in r from type from to type to, as
// dt_cg_typecast does. Widening a signed value extends its sign up to
// the destination's width (and no further when the destination is
// unsigned); widening an unsigned value keeps it. Narrowing, or a change
// of signedness at one width, shifts the value to the top of the
// register and back, extending by the destination's sign.
func (g *gen) cast(from, to types.Type, r uint8) {
	if from == nil || !types.IsScalar(to) || !types.IsScalar(from) {
		return
	}
	fs, ts := from.Size(), to.Size()
	switch {
	case fs == ts && signed(from) == signed(to), ts > fs && !signed(from):
		return
	case ts > fs:
		n, s := 64-8*fs, 8*(ts-fs)
		nr := g.setInt(uint64(n))
		g.ir.Emit(dif.ALU(dif.SLL, r, nr, r))
		if signed(to) || n == s {
			g.ir.Emit(dif.ALU(dif.SRA, r, nr, r))
		} else {
			g.ir.Setx(uint64(s), nr)
			g.ir.Emit(dif.ALU(dif.SRA, r, nr, r))
			g.ir.Setx(uint64(n-s), nr)
			g.ir.Emit(dif.ALU(dif.SRL, r, nr, r))
		}
		g.regs.free(nr)
	case ts != 8:
		nr := g.setInt(uint64(64 - 8*ts))
		g.ir.Emit(dif.ALU(dif.SLL, r, nr, r))
		g.ir.Emit(dif.ALU(pick(signed(to), dif.SRA, dif.SRL), r, nr, r))
		g.regs.free(nr)
	}
}

// signed is DT_NF_SIGNED: a signed integer (not an enum or pointer).
func signed(t types.Type) bool {
	i, ok := types.Resolve(t).(*types.Int)
	return ok && i.Signed
}

// ----------------------------------------------------------------------------
// Operators

func (g *gen) unary(e *ast.UnaryExpr, v *check.Value) uint8 {
	switch e.Op {
	case token.INEG:
		r := g.expr(e.X)
		g.ir.Emit(dif.ALU(dif.SUB, 0, r, r))
		return r
	case token.IPOS:
		return g.expr(e.X)
	case token.BNEG:
		r := g.expr(e.X)
		g.ir.Emit(dif.Not(r, r))
		return r
	case token.LNEG:
		r := g.expr(e.X)
		g.ir.Emit(dif.Tst(r))
		return g.boolean(dif.BE, r)
	case token.DEREF:
		if v.Ident != nil && v.Ident.Kind == check.XlateSOU {
			return g.translateAll(v.Ident)
		}
		r := g.expr(e.X)
		g.load(v.Type, v.Flags&check.Userland != 0, r)
		return r
	case token.ADDROF:
		return g.address(e.X)
	case token.STRINGOF:
		return g.expr(e.X)
	case token.PREINC, token.PREDEC, token.POSTINC, token.POSTDEC:
		return g.incdec(e, v)
	}
	g.fail(diag.D_UNKNOWN, "the code generator does not support operator %s yet", e.Op)
	return 0
}

// boolean turns the condition codes into 0 or 1 in r: 1 when branch op
// is taken.
func (g *gen) boolean(op dif.Op, r uint8) uint8 {
	yes, done := g.ir.NewLabel(), g.ir.NewLabel()
	g.ir.Branch(op, yes)
	g.ir.Emit(dif.Mov(0, r))
	g.ir.Branch(dif.BA, done)
	g.ir.Mark(yes)
	g.ir.Setx(1, r)
	g.ir.Mark(done)
	return r
}

// incdec generates ++ and -- on a variable or an lvalue in memory.
func (g *gen) incdec(e *ast.UnaryExpr, v *check.Value) uint8 {
	step := uint64(1)
	if p, ok := types.Elem(v.Type); ok && types.IsPointer(v.Type) {
		step = uint64(max(p.Size(), 1))
	}
	op := dif.ADD
	if e.Op == token.PREDEC || e.Op == token.POSTDEC {
		op = dif.SUB
	}
	post := e.Op == token.POSTINC || e.Op == token.POSTDEC
	old := g.expr(e.X)
	n := g.setInt(step)
	nv := g.regs.alloc()
	g.ir.Emit(dif.ALU(op, old, n, nv))
	g.regs.free(n)
	g.assignTo(e.X, nv)
	if post {
		g.regs.free(nv)
		return old
	}
	g.regs.free(old)
	return nv
}

func (g *gen) binary(e *ast.BinaryExpr, v *check.Value) uint8 {
	switch e.Op {
	case token.LAND, token.LOR, token.LXOR:
		return g.logical(e)
	case token.EQU, token.NEQ, token.LT, token.LE, token.GT, token.GE:
		return g.compare(e)
	case token.ASGN:
		if v.Ident != nil && v.Ident.Kind == check.Agg {
			g.fail(diag.D_UNKNOWN, "internal error: aggregation in an expression")
		}
		// As dt_cg_asgn_op, the value is stored as it is: dt_assign_common
		// folded a constant to the left's type, and no other value is cast.
		r := g.expr(e.Y)
		g.assignTo(e.X, r)
		return r
	case token.COMMA:
		g.regs.free(g.expr(e.X))
		return g.expr(e.Y)
	}
	if e.Op.IsAssign() {
		return g.compound(e, v)
	}
	l, r := g.hold(g.expr(e.X), func() uint8 { return g.expr(e.Y) })
	g.arith(e.Op, g.value(e.X), g.value(e.Y), v, l, r)
	g.regs.free(r)
	return l
}

// arith computes l op r into l, for the value types of both sides and of
// the result.
func (g *gen) arith(op token.Token, lv, rv, res *check.Value, l, r uint8) {
	signed := res.Flags&check.Signed != 0
	// Pointer arithmetic scales the integer by the size of what the
	// pointer points to.
	lptr, rptr := isPtr(lv.Type), isPtr(rv.Type)
	switch {
	case (op == token.ADD || op == token.SUB || op == token.ADD_ASGN || op == token.SUB_ASGN) && lptr && !rptr:
		g.scale(lv.Type, r)
	case op == token.ADD && rptr && !lptr:
		g.scale(rv.Type, l)
	}
	var dop dif.Op
	switch op {
	case token.ADD, token.ADD_ASGN:
		dop = dif.ADD
	case token.SUB, token.SUB_ASGN:
		dop = dif.SUB
	case token.MUL, token.MUL_ASGN:
		dop = dif.MUL
	case token.DIV, token.DIV_ASGN:
		dop = pick(signed, dif.SDIV, dif.UDIV)
	case token.MOD, token.MOD_ASGN:
		dop = pick(signed, dif.SREM, dif.UREM)
	case token.BAND, token.AND_ASGN:
		dop = dif.AND
	case token.BOR, token.OR_ASGN:
		dop = dif.OR
	case token.XOR, token.XOR_ASGN:
		dop = dif.XOR
	case token.SHL, token.SHL_ASGN:
		dop = dif.SLL
	case token.SHR, token.SHR_ASGN:
		dop = pick(lv.Flags&check.Signed != 0, dif.SRA, dif.SRL)
	default:
		g.fail(diag.D_UNKNOWN, "the code generator does not support operator %s yet", op)
	}
	g.ir.Emit(dif.ALU(dop, l, r, l))
	if op == token.SUB && lptr && rptr {
		g.unscale(lv.Type, l)
	}
}

func isPtr(t types.Type) bool {
	if t == nil || types.IsString(t) {
		return false
	}
	return types.IsPointer(t) || types.IsArray(t)
}

// scale multiplies the index in r by the size of t's elements.
func (g *gen) scale(t types.Type, r uint8) {
	elem, _ := types.Elem(t)
	if size := elemSize(elem); size != 1 {
		n := g.setInt(uint64(size))
		g.ir.Emit(dif.ALU(dif.MUL, r, n, r))
		g.regs.free(n)
	}
}

func (g *gen) unscale(t types.Type, r uint8) {
	elem, _ := types.Elem(t)
	if size := elemSize(elem); size != 1 {
		n := g.setInt(uint64(size))
		g.ir.Emit(dif.ALU(dif.SDIV, r, n, r))
		g.regs.free(n)
	}
}

func elemSize(t types.Type) int64 {
	if t == nil || t.Size() == 0 {
		return 1
	}
	return t.Size()
}

func (g *gen) compound(e *ast.BinaryExpr, v *check.Value) uint8 {
	l, r := g.hold(g.expr(e.X), func() uint8 { return g.expr(e.Y) })
	g.arith(e.Op, g.value(e.X), g.value(e.Y), v, l, r)
	g.regs.free(r)
	g.assignTo(e.X, l)
	return l
}

// compare generates a comparison, of strings by content (scmp).
func (g *gen) compare(e *ast.BinaryExpr) uint8 {
	lv, rv := g.value(e.X), g.value(e.Y)
	l, r := g.hold(g.expr(e.X), func() uint8 { return g.expr(e.Y) })
	if types.IsString(lv.Type) || types.IsString(rv.Type) {
		g.ir.Emit(dif.Cmp(dif.SCMP, l, r))
	} else {
		g.ir.Emit(dif.Cmp(dif.CMP, l, r))
	}
	g.regs.free(r)
	// As dt_cg_compare_signed: integers compare by the sign of their
	// promoted type, anything else unsigned.
	signed := types.IsInteger(lv.Type) && types.IsInteger(rv.Type) && signed(types.Promote(lv.Type, rv.Type))
	if types.IsString(lv.Type) || types.IsString(rv.Type) {
		// scmp sets only the sign: strings compare signed.
		signed = true
	}
	var op dif.Op
	switch e.Op {
	case token.EQU:
		op = dif.BE
	case token.NEQ:
		op = dif.BNE
	case token.LT:
		op = pick(signed, dif.BL, dif.BLU)
	case token.LE:
		op = pick(signed, dif.BLE, dif.BLEU)
	case token.GT:
		op = pick(signed, dif.BG, dif.BGU)
	case token.GE:
		op = pick(signed, dif.BGE, dif.BGEU)
	}
	return g.boolean(op, l)
}

// logical generates &&, || and ^^, evaluating the right side of && and
// || only when needed.
func (g *gen) logical(e *ast.BinaryExpr) uint8 {
	l := g.expr(e.X)
	if e.Op == token.LXOR {
		var r uint8
		l, r = g.hold(l, func() uint8 { return g.expr(e.Y) })
		g.ir.Emit(dif.Tst(l))
		g.boolean(dif.BNE, l)
		g.ir.Emit(dif.Tst(r))
		g.boolean(dif.BNE, r)
		g.ir.Emit(dif.ALU(dif.XOR, l, r, l))
		g.regs.free(r)
		return l
	}
	// The left side's register is free once tested: the result is set
	// on each path, in a register taken after the right side's.
	short, done := g.ir.NewLabel(), g.ir.NewLabel()
	g.ir.Emit(dif.Tst(l))
	g.regs.free(l)
	g.ir.Branch(pick(e.Op == token.LAND, dif.BE, dif.BNE), short)
	r := g.expr(e.Y)
	g.ir.Emit(dif.Tst(r))
	g.regs.free(r)
	g.ir.Branch(pick(e.Op == token.LAND, dif.BE, dif.BNE), short)
	l = g.regs.alloc()
	g.ir.Setx(boolValue(e.Op == token.LAND), l)
	g.ir.Branch(dif.BA, done)
	g.ir.Mark(short)
	g.ir.Setx(boolValue(e.Op != token.LAND), l)
	g.ir.Mark(done)
	return l
}

func boolValue(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func (g *gen) cond(e *ast.CondExpr) uint8 {
	c := g.expr(e.Cond)
	g.ir.Emit(dif.Tst(c))
	g.regs.free(c)
	other, done := g.ir.NewLabel(), g.ir.NewLabel()
	g.ir.Branch(dif.BE, other)
	r := g.expr(e.X)
	g.ir.Branch(dif.BA, done)
	g.ir.Mark(other)
	g.regs.free(r)
	r2 := g.expr(e.Y)
	if r2 != r {
		g.ir.Emit(dif.Mov(r2, r))
		g.regs.free(r2)
		g.regs.used[r] = true
	}
	g.ir.Mark(done)
	return r
}

// ----------------------------------------------------------------------------
// Lvalues

// assignTo stores the value in r into the lvalue e.
func (g *gen) assignTo(e ast.Expr, r uint8) {
	v := g.value(e)
	g.pos = e.Pos()
	switch x := e.(type) {
	case *ast.Ident, *ast.SelectorExpr:
		if v.Ident != nil && (v.Ident.Kind == check.Scalar) && !isMember(x) {
			g.ir.StoreVar(storeOp(v.Ident), g.varRef(v.Ident), r)
			return
		}
	case *ast.IndexExpr:
		if v.Ident != nil && v.Ident.Kind == check.Array && !isBuiltinArray(v.Ident) {
			g.keys(x.Index)
			op := dif.STGAA
			if v.Ident.Space == check.ThreadLocal {
				op = dif.STTAA
			}
			g.ir.StoreVar(op, g.varRef(v.Ident), r)
			return
		}
	}
	if sel, ok := e.(*ast.SelectorExpr); ok && isMember(sel) && v.Flags&check.BitField != 0 {
		g.storeBitfield(sel, r)
		return
	}
	addr := g.address(e)
	g.store(v.Type, r, addr)
	g.regs.free(addr)
}

// storeBitfield stores the value in r into a bit-field member: the unit
// that holds it (fieldUnit) is read, the field's bits are replaced, and
// the unit is written back.
func (g *gen) storeBitfield(e *ast.SelectorExpr, r uint8) {
	addr, m := g.member(e)
	start, size := fieldUnit(m)
	if off := uint64(start / 8); off != 0 {
		n := g.setInt(off)
		g.ir.Emit(dif.ALU(dif.ADD, addr, n, addr))
		g.regs.free(n)
	}
	shift := uint64(m.Offset - start)
	mask := (uint64(1)<<uint64(m.BitSize) - 1) << shift
	old := g.regs.alloc()
	g.ir.Emit(dif.Mov(addr, old))
	g.load(&types.Int{Name: "unit", Bytes: size}, false, old)
	n := g.setInt(^mask)
	g.ir.Emit(dif.ALU(dif.AND, old, n, old))
	val := g.regs.alloc()
	g.ir.Emit(dif.Mov(r, val))
	g.ir.Setx(shift, n)
	g.ir.Emit(dif.ALU(dif.SLL, val, n, val))
	g.ir.Setx(mask, n)
	g.ir.Emit(dif.ALU(dif.AND, val, n, val))
	g.ir.Emit(dif.ALU(dif.OR, old, val, old))
	g.store(&types.Int{Name: "unit", Bytes: size}, old, addr)
	g.regs.free(n)
	g.regs.free(val)
	g.regs.free(old)
	g.regs.free(addr)
}

// isMember reports whether e is a struct member access rather than a
// self-> or this-> variable.
func isMember(e ast.Expr) bool {
	s, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	base, ok := s.X.(*ast.Ident)
	return !ok || s.Op != token.ARROW || base.Name != "self" && base.Name != "this"
}

func isBuiltinArray(id *check.Ident) bool {
	return id.Builtin && (id.Name == "args" || id.Name == "regs" || id.Name == "uregs")
}

// address generates the address of an lvalue in memory.
func (g *gen) address(e ast.Expr) uint8 {
	g.pos = e.Pos()
	switch x := e.(type) {
	case *ast.UnaryExpr:
		if x.Op == token.DEREF {
			return g.expr(x.X)
		}
	case *ast.SelectorExpr:
		if v := g.value(e); v.Local != nil {
			return g.localAddress(v)
		}
		if isMember(x) {
			r, _ := g.member(x)
			return r
		}
	case *ast.Ident:
		if v := g.value(e); v.Ident != nil && v.Ident.Kind == check.Symbol {
			return g.symbol(v.Ident)
		}
	case *ast.IndexExpr:
		if v := g.value(e); v.Ident != nil && v.Ident.Kind == check.Array && !isBuiltinArray(v.Ident) {
			// A by-reference element of an associative array is
			// loaded as its address; written through, it is marked
			// modified so that the kernel allocates it.
			g.ir.Touch(g.varRef(v.Ident), dif.FlagMod)
			return g.index(x, v)
		}
		return g.element(x)
	}
	if v := g.value(e); byRef(v) {
		return g.expr(e)
	}
	g.fail(diag.D_UNKNOWN, "the code generator cannot take this address yet")
	return 0
}

// ----------------------------------------------------------------------------
// Members, subscripts

// member generates the address of x.m or x->m and returns it with the
// member.
func (g *gen) member(e *ast.SelectorExpr) (uint8, types.Member) {
	xv := g.value(e.X)
	var base uint8
	var st types.Type = xv.Type
	if e.Op == token.ARROW {
		base = g.expr(e.X)
		st, _ = types.Elem(xv.Type)
	} else {
		base = g.address(e.X)
	}
	s, ok := types.Resolve(st).(*types.Struct)
	if !ok {
		g.fail(diag.D_UNKNOWN, "internal error: member of a non-struct")
	}
	m, _ := s.Member(e.Sel.Name)
	if off := uint64(m.Offset / 8); off != 0 && m.BitSize == 0 {
		n := g.setInt(off)
		g.ir.Emit(dif.ALU(dif.ADD, base, n, base))
		g.regs.free(n)
	}
	return base, m
}

// selector loads x.m or x->m, or a self-> or this-> variable.
func (g *gen) selector(e *ast.SelectorExpr, v *check.Value) uint8 {
	if v.Local != nil {
		return g.local(v)
	}
	if !isMember(e) {
		r := g.regs.alloc()
		g.ir.LoadVar(loadOp(v.Ident), g.varRef(v.Ident), r)
		return r
	}
	if xv := g.value(e.X); xv.Ident != nil && (xv.Ident.Kind == check.XlateSOU || xv.Ident.Kind == check.XlatePtr) {
		return g.translated(e, xv.Ident)
	}
	if ix, ok := e.X.(*ast.IndexExpr); ok {
		if r, ok := g.inlineArrayMember(e, ix); ok {
			return r
		}
	}
	r, m := g.member(e)
	user := v.Flags&check.Userland != 0 || g.value(e.X).Flags&check.Userland != 0
	if m.BitSize != 0 {
		return g.bitfield(r, m, user)
	}
	g.load(m.Type, user, r)
	return r
}

// translated generates a member of translated data: the translator's
// expression for the member, with the translator's input bound to the
// value translated, as dt_cg_xlate_expand does.
func (g *gen) translated(e *ast.SelectorExpr, id *check.Ident) uint8 {
	xl := id.Translator()
	mexpr := xl.Member(e.Sel.Name)
	if mexpr == nil || id.Input == nil || xl.Arg == nil {
		g.fail(diag.D_UNKNOWN, "internal error: translated member %s without its translation", e.Sel.Name)
	}
	unbind := g.bind(xl.Arg, g.input(id.Input))
	r := g.expr(mexpr)
	if s, ok := types.Resolve(xl.To).(*types.Struct); ok {
		if m, ok := s.Member(e.Sel.Name); ok {
			r = g.xlateValue(m.Type, g.value(mexpr).Type, r)
		}
	}
	unbind()
	g.pos = e.Pos()
	return r
}

// A binding is where a translator's input is while its members are
// generated: in a register, or, when registers run short, in a spill
// slot, so that translators whose members translate again (xlate in a
// member's expression) do not hold a register for each.
type binding struct {
	reg     uint8
	spilled bool
	slot    dif.VarRef
}

// bind binds the translator input arg to the value in r, and returns
// the function that undoes it and frees r.
func (g *gen) bind(arg *check.Ident, r uint8) (unbind func()) {
	if g.bound == nil {
		g.bound = map[*check.Ident]binding{}
	}
	old, had := g.bound[arg]
	b := binding{reg: r}
	if g.regs.nfree() < spillReserve {
		b = binding{spilled: true, slot: g.spillSlot()}
		g.spills++
		*g.spilled = true
		g.ir.StoreVar(dif.STLS, b.slot, r)
		g.regs.free(r)
	}
	g.bound[arg] = b
	return func() {
		if had {
			g.bound[arg] = old
		} else {
			delete(g.bound, arg)
		}
		if b.spilled {
			g.spills--
		} else {
			g.regs.free(b.reg)
		}
	}
}

// translateAll generates a whole translated struct in scratch memory,
// member by member, as dt_cg_xlate_expand does for *xlate<T *>(x) and
// xlate<T>(x).
func (g *gen) translateAll(id *check.Ident) uint8 {
	xl := id.Translator()
	s, ok := types.Resolve(xl.To).(*types.Struct)
	if !ok || id.Input == nil {
		g.fail(diag.D_UNKNOWN, "internal error: translation without its struct")
	}
	size := g.setInt(uint64(s.Size()))
	buf := g.regs.alloc()
	g.ir.Emit(dif.Allocs(size, buf))
	g.regs.free(size)
	unbind := g.bind(xl.Arg, g.input(id.Input))
	for _, m := range xl.Decl.Members {
		mem, ok := s.Member(m.Name.Name)
		if !ok || mem.BitSize != 0 {
			continue
		}
		val := g.expr(m.Value)
		addr := g.regs.alloc()
		g.ir.Emit(dif.Mov(buf, addr))
		if off := uint64(mem.Offset / 8); off != 0 {
			n := g.setInt(off)
			g.ir.Emit(dif.ALU(dif.ADD, addr, n, addr))
			g.regs.free(n)
		}
		// A string is copied up to its NUL: stringof(a) of a shorter
		// array has the type string.
		if vt := g.value(m.Value).Type; g.xlateNeedsCopy(mem.Type, vt) || types.IsString(vt) {
			g.xlateCopy(mem.Type, vt, val, addr)
		} else {
			g.store(mem.Type, val, addr)
		}
		g.regs.free(addr)
		g.regs.free(val)
	}
	unbind()
	return buf
}

// input generates the value a translator translates: its operand, or a
// probe's native argument for a translated args[N].
func (g *gen) input(x ast.Expr) uint8 {
	if ix, ok := x.(*ast.IndexExpr); ok {
		if base, ok := ix.X.(*ast.Ident); ok && base.Name == "args" {
			idx := g.expr(ix.Index[0])
			r := g.regs.alloc()
			g.ir.LoadArray(dif.LDGA, dif.VarRef{Name: "args", ID: dif.VarArgs, Kind: dif.KindArray, Type: dif.IntType(8)}, idx, r)
			g.regs.free(idx)
			return r
		}
	}
	return g.expr(x)
}

// fieldUnit returns where the memory that holds bit-field m starts, in
// bits, and its size in bytes: as dt_cg_field_get loads it, the power of
// two bytes that hold the field from the byte it starts in (a field of
// a D struct starts a byte: ctf_add_member); a field that such a load
// cannot hold is loaded by the unit of its type that holds it.
func fieldUnit(m types.Member) (start, size int64) {
	span := (m.Offset%8 + m.BitSize + 7) / 8
	size = 1
	for size < span {
		size *= 2
	}
	if size <= 8 {
		return m.Offset / 8 * 8, size
	}
	unit := m.Type.Size() * 8
	return m.Offset / unit * unit, m.Type.Size()
}

// bitfield loads a bit-field member from the struct at r: the unit that
// holds it (fieldUnit), shifted and masked.
func (g *gen) bitfield(r uint8, m types.Member, user bool) uint8 {
	start, size := fieldUnit(m)
	if off := uint64(start / 8); off != 0 {
		n := g.setInt(off)
		g.ir.Emit(dif.ALU(dif.ADD, r, n, r))
		g.regs.free(n)
	}
	u := &types.Int{Name: "unit", Bytes: size}
	g.load(u, user, r)
	// Move the field to the top of the register, then down to bit 0,
	// extending its sign when its type is signed.
	top := uint64(64 - (m.Offset - start) - m.BitSize)
	n := g.setInt(top)
	g.ir.Emit(dif.ALU(dif.SLL, r, n, r))
	g.ir.Setx(uint64(64-m.BitSize), n)
	g.ir.Emit(dif.ALU(pick(types.IsSigned(m.Type), dif.SRA, dif.SRL), r, n, r))
	g.regs.free(n)
	return r
}

// keys pushes the keys of an associative array reference on the tuple
// stack.
func (g *gen) keys(keys []ast.Expr) {
	g.arglist(keys)
}

// arglist puts the values of a call's arguments or an array's keys on
// the tuple stack, as dt_cg_arglist does: every value is computed
// first, since computing one may use the tuple stack itself (a call),
// then the stack is flushed and the values pushed in order. A value
// held while registers run short waits in a spill slot.
func (g *gen) arglist(list []ast.Expr) {
	type held struct {
		reg     uint8
		spilled bool
		slot    dif.VarRef
	}
	vals := make([]held, len(list))
	base := g.spills
	for i, a := range list {
		if g.regs.nfree() < spillReserve {
			// Spill the values held so far to make room.
			for j := range vals[:i] {
				if !vals[j].spilled {
					vals[j].slot = g.spillSlot()
					g.spills++
					g.ir.StoreVar(dif.STLS, vals[j].slot, vals[j].reg)
					g.regs.free(vals[j].reg)
					vals[j].spilled = true
				}
			}
		}
		vals[i].reg = g.expr(a)
	}
	g.ir.Emit(dif.Instr(dif.FLUSHTS) << 24)
	for i, a := range list {
		r := vals[i].reg
		if vals[i].spilled {
			r = g.regs.alloc()
			g.ir.LoadVar(dif.LDLS, vals[i].slot, r)
		}
		v := g.value(a)
		if byRef(v) {
			size := uint64(v.Type.Size())
			typ := uint8(dif.TypeCTF)
			if types.IsString(v.Type) {
				typ, size = dif.TypeString, uint64(g.strsize)
			}
			n := g.setInt(size)
			g.ir.Emit(dif.Pushtr(typ, n, r))
			g.regs.free(n)
		} else {
			g.ir.Emit(dif.Pushtv(dif.TypeCTF, r))
		}
		g.regs.free(r)
	}
	g.spills = base
}

func (g *gen) index(e *ast.IndexExpr, v *check.Value) uint8 {
	id := v.Ident
	if id != nil && isBuiltinArray(id) {
		idx := g.expr(e.Index[0])
		r := g.regs.alloc()
		g.ir.LoadArray(dif.LDGA, dif.VarRef{Name: id.Name, ID: id.ID, Kind: dif.KindArray, Type: dif.IntType(8)}, idx, r)
		g.regs.free(idx)
		if v.Type != nil && id.Name == "args" {
			g.cast(types.LongLong, v.Type, r)
		}
		return r
	}
	if id != nil && id.Inline != nil {
		return g.inlineArray(e, id)
	}
	if id != nil && id.Kind == check.Array {
		g.keys(e.Index)
		ld, st := dif.LDGAA, dif.STGAA
		if id.Space == check.ThreadLocal {
			ld, st = dif.LDTAA, dif.STTAA
		}
		ref := g.varRef(id)
		r := g.regs.alloc()
		g.ir.LoadVar(ld, ref, r)
		if id.Type != nil && typedRef(id.Type) && !types.IsString(id.Type) {
			// An element of structs or arrays that does not exist yet
			// is made, zeroed, so that it reads as zeroes and members
			// can be stored into it; the keys are still on the tuple
			// stack.
			done := g.ir.NewLabel()
			g.ir.Emit(dif.Tst(r))
			g.ir.Branch(dif.BNE, done)
			n := g.setInt(uint64(id.Type.Size()))
			g.ir.Emit(dif.Allocs(n, r))
			g.regs.free(n)
			g.ir.StoreVar(st, ref, r)
			g.ir.LoadVar(ld, ref, r)
			g.ir.Mark(done)
		}
		return r
	}
	r := g.element(e)
	g.load(v.Type, v.Flags&check.Userland != 0, r)
	return r
}

// inlineArray expands an array inline, i[k1, k2]: its definition with
// its parameters bound to the keys.
func (g *gen) inlineArray(e *ast.IndexExpr, id *check.Ident) uint8 {
	unbind := g.bindKeys(e, id)
	out := g.expr(id.Inline.Value)
	unbind()
	return out
}

// bindKeys binds the parameters of the array inline id to the keys of
// e, and returns the function that unbinds them.
func (g *gen) bindKeys(e *ast.IndexExpr, id *check.Ident) func() {
	if g.bound == nil {
		g.bound = map[*check.Ident]binding{}
	}
	var regs []uint8
	for i, k := range e.Index {
		r := g.expr(k)
		regs = append(regs, r)
		if i < len(id.InlineParams) {
			g.bound[id.InlineParams[i]] = binding{reg: r}
		}
	}
	return func() {
		for i, r := range regs {
			if i < len(id.InlineParams) {
				delete(g.bound, id.InlineParams[i])
			}
			g.regs.free(r)
		}
	}
}

// inlineArrayMember generates i[k].m where i is an array inline of a
// translation by value, as io.d's fds[fd].fi_name: the translator's
// expression for m alone, with the inline's parameters bound to the
// keys, rather than the whole struct in scratch.
func (g *gen) inlineArrayMember(e *ast.SelectorExpr, ix *ast.IndexExpr) (uint8, bool) {
	id := g.value(ix).Ident
	if id == nil || id.Inline == nil || len(id.InlineParams) == 0 {
		return 0, false
	}
	xe, ok := id.Inline.Value.(*ast.XlateExpr)
	if !ok {
		return 0, false
	}
	xv := g.value(xe)
	if xv.Ident == nil || xv.Ident.Kind != check.XlateSOU {
		return 0, false
	}
	unbind := g.bindKeys(ix, id)
	out := g.translated(e, xv.Ident)
	unbind()
	return out, true
}

// element generates the address of p[i] for a pointer or array p.
func (g *gen) element(e *ast.IndexExpr) uint8 {
	xv := g.value(e.X)
	base, idx := g.hold(g.expr(e.X), func() uint8 { return g.expr(e.Index[0]) })
	if types.IsString(xv.Type) {
		// A string is an array of char.
	} else {
		g.scale(xv.Type, idx)
	}
	g.ir.Emit(dif.ALU(dif.ADD, base, idx, base))
	g.regs.free(idx)
	return base
}

// ----------------------------------------------------------------------------
// Calls

func (g *gen) call(e *ast.CallExpr, v *check.Value) uint8 {
	id := v.Ident
	if id == nil || id.Kind != check.Func {
		kind, name := "function", e.Fun.Name
		if id != nil {
			kind = id.Kind.String()
		}
		g.fail(diag.D_CG_EXPR, "%s %s( ) may not be called from a D expression (D program context required)", kind, name)
	}
	g.arglist(e.Args)
	r := g.regs.alloc()
	g.ir.Emit(dif.Call(uint16(id.ID), r))
	return r
}
