package check

import (
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/constant"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// The expression checker follows dt_cook_*: each expression is checked
// once, children first (with the order of checks dtrace has, since the
// first error wins), and gets a Value with its type and flags. idflags
// are the identifier flags the context adds to a variable it names
// (FlagRef for a read, FlagMod for a write); reading a variable that is
// neither declared nor assigned is an error.

func (c *Checker) record(e ast.Expr, v *Value) *Value {
	c.values[e] = v
	if !c.inClause {
		c.declValues[e] = v
	}
	return v
}

// typed returns a value of type t with the flags the type implies, as
// dt_node_type_assign sets them.
func typed(t types.Type, user bool) *Value {
	v := &Value{Type: t}
	v.setType(t, user)
	return v
}

func (v *Value) setType(t types.Type, user bool) {
	v.Type = t
	v.Flags &^= Signed | Ref | BitField | Userland
	switch r := types.Resolve(t).(type) {
	case *types.Int:
		if r.Signed {
			v.Flags |= Signed
		}
	case *types.Float:
		if r.Bytes > 8 {
			v.Flags |= Ref
		}
	case *types.Struct, *types.Array, *types.Func, *types.String:
		v.Flags |= Ref
	}
	if t == types.Dyn {
		v.Flags |= Ref
	}
	if user {
		v.Flags |= Userland
	}
}

// propagate copies v's type and flags without its lvalue-ness, as
// dt_node_type_propagate.
func propagate(v *Value) *Value {
	return &Value{Type: v.Type, Flags: v.Flags &^ LValue}
}

func (c *Checker) intValue(t types.Type, n uint64) *Value {
	v := typed(t, false)
	v.Const, v.Int = true, n
	return v
}

// litNamed returns the type of a constant: the typedef or enum it was
// folded from when that names an integer of its size, else its C type.
func (c *Checker) litNamed(e *ast.IntLit) types.Type {
	t := litType(e.Type)
	if e.Named == "" {
		return t
	}
	nt, _, err := c.universe.Lookup(e.Named)
	if err != nil || nt == nil || !types.IsInteger(nt) || nt.Size() != t.Size() {
		return t
	}
	return nt
}

// litType maps a literal's type to the C type.
func litType(t ast.IntType) types.Type {
	return [...]types.Type{types.IntType, types.UInt, types.Long, types.ULong, types.LongLong,
		types.ULongLong, types.Char, types.UChar, types.Short, types.UShort}[t]
}

func (c *Checker) expr(e ast.Expr, idflags IdentFlags) *Value {
	switch e := e.(type) {
	case *ast.IntLit:
		return c.record(e, c.intValue(c.litNamed(e), e.Value))
	case *ast.StringLit:
		return c.record(e, typed(c.strType, false))
	case *ast.Ident:
		return c.record(e, c.ident(e, idflags))
	case *ast.UnaryExpr:
		return c.record(e, c.unary(e))
	case *ast.BinaryExpr:
		return c.record(e, c.binary(e, idflags))
	case *ast.CondExpr:
		return c.record(e, c.cond(e))
	case *ast.IndexExpr:
		return c.record(e, c.index(e, idflags))
	case *ast.SelectorExpr:
		return c.record(e, c.selector(e, idflags))
	case *ast.CallExpr:
		return c.record(e, c.call(e, idflags))
	case *ast.CastExpr:
		return c.record(e, c.cast(e))
	case *ast.SizeofExpr:
		return c.record(e, c.sizeof(e))
	case *ast.OffsetofExpr:
		return c.record(e, c.offsetof(e))
	case *ast.XlateExpr:
		return c.record(e, c.xlate(e))
	}
	c.errorf(ast.DiagPos(e), diag.D_UNKNOWN, "invalid expression node\n")
	return nil
}

// ----------------------------------------------------------------------------
// Identifiers

// varValue types a reference to a variable identifier, as dt_xcook_ident
// and dt_cook_var do.
func (c *Checker) varValue(pos token.Pos, id *Ident, idflags IdentFlags) *Value {
	if idflags&FlagRef != 0 && id.unref() {
		c.errorf(pos, diag.D_VAR_UNDEF, "%s%s has not yet been declared or assigned\n", spacePrefix(id), id.Name)
	}
	var v *Value
	switch {
	case id.Kind == Array || id.Kind == Agg:
		v = typed(types.Dyn, false)
	case id.Type != nil:
		v = typed(id.Type, id.Flags&FlagUser != 0)
	default:
		v = &Value{}
	}
	v.Ident = id
	if id.Kind == Enumerator {
		v.Const, v.Int = true, uint64(id.Value)
		return v
	}
	v.Flags |= LValue
	if id.Flags&FlagWrite != 0 {
		v.Flags |= Writable
	}
	id.Flags |= idflags
	return v
}

func spacePrefix(id *Ident) string {
	switch id.Space {
	case ThreadLocal:
		return "self->"
	case ClauseLocal:
		return "this->"
	}
	return ""
}

// ident checks a bare identifier: a variable, builtin, inline,
// enumerator, or a kernel symbol written with a backquote.
func (c *Checker) ident(e *ast.Ident, idflags IdentFlags) *Value {
	name := e.Name
	if strings.HasPrefix(name, "@") {
		id := c.aggs.lookup(name[1:])
		if id == nil {
			c.errorf(ast.DiagPos(e), diag.D_IDENT_UNDEF, "failed to resolve %s: %s\n", name, errNoVar)
		}
		v := c.varValue(ast.DiagPos(e), id, 0)
		v.setType(types.Dyn, false)
		return v
	}
	if strings.Contains(name, "`") {
		return c.symbol(e)
	}
	id := c.lookupGlobal(name)
	if id == nil && c.define(name) {
		id = c.lookupGlobal(name)
	}
	if id == nil {
		more := suggestion(name, c.globalNames(Scalar, Enumerator, Array))
		if c.refused != nil {
			if why, ok := c.refused(name); ok {
				more = " (" + why + ")"
			}
		}
		c.errorf(ast.DiagPos(e), diag.D_IDENT_UNDEF, "failed to resolve %s: %s%s\n", name, errNoVar, more)
	}
	if id.Kind != Scalar && id.Kind != Enumerator {
		c.errorf(ast.DiagPos(e), diag.D_IDENT_BADREF, "%s '%s' may not be referenced as %s\n", id.Kind, name, Scalar)
	}
	if id.Inline != nil {
		return c.inlineValue(e, id)
	}
	if id.Builtin {
		c.builtinType(ast.DiagPos(e), id)
	}
	return c.varValue(ast.DiagPos(e), id, idflags)
}

// errNoVar is dtrace's message for EDT_NOVAR.
const errNoVar = "Unknown variable name"

func (c *Checker) lookupGlobal(name string) *Ident {
	if c.inlineArgs != nil {
		if id := c.inlineArgs[name]; id != nil {
			return id
		}
	}
	return c.globals.lookup(name)
}

// inlineValue is a reference to an inline: its definition's value.
func (c *Checker) inlineValue(e *ast.Ident, id *Ident) *Value {
	v := typed(id.Type, id.Flags&FlagUser != 0)
	v.Ident = id
	if lit, ok := id.Inline.Value.(*ast.IntLit); ok {
		v.Const, v.Int = true, lit.Value
	}
	if id.xlator != nil {
		// An inline of a translation stands for the translated data.
		kind := XlateSOU
		if types.IsPointer(id.Type) {
			kind = XlatePtr
		}
		v.setType(types.Dyn, false)
		v.Ident = &Ident{Name: id.Name, Kind: kind, xlator: id.xlator, Type: id.xlator.To, Flags: id.Flags & FlagUser}
		if xe, ok := id.Inline.Value.(*ast.XlateExpr); ok {
			v.Ident.Input = xe.X
		}
	}
	return v
}

// symbol checks `sym, mod`sym and the user symbols “sym and
// mod“sym, as dt_xcook_ident does: the symbol must exist, a kernel
// one may not be referenced as a user symbol, and it must have a type.
// A function is typed int (*)(), as dtrace types every function symbol.
// A data symbol without a type is dtrace's D_SYM_NOTYPES, except as the
// operand of &: &`sym is then a void *, so that a kernel whose types
// leave out its globals (BTF without VARs) can still be read as
// *(T *)&`sym.
func (c *Checker) symbol(e *ast.Ident) *Value {
	addrOf := c.symAddrOf
	c.symAddrOf = false
	i := strings.LastIndexByte(e.Name, '`')
	mod, name := e.Name[:i], e.Name[i+1:]
	mark := "`"
	if strings.HasSuffix(mod, "`") {
		mod, mark = mod[:len(mod)-1], "``"
	}
	if c.cfg.Symbols == nil || mark == "``" && mod == "" {
		// No symbol table; or the user modules of a process, of which
		// the checker has none.
		c.errorf(ast.DiagPos(e), diag.D_IDENT_UNDEF, "failed to resolve %s%s%s: %s\n", mod, mark, name, errNoSym)
	}
	sym, err := c.cfg.Symbols.Symbol(mod, name)
	if err != nil {
		c.errorf(ast.DiagPos(e), diag.D_IDENT_UNDEF, "failed to resolve %s%s%s: %v\n", mod, mark, name, err)
	}
	if mark == "``" {
		c.errorf(ast.DiagPos(e), diag.D_SYM_BADREF, "kernel module '%s' symbol '%s' may not be referenced as a user symbol\n", sym.Module, sym.Name)
	}
	t := sym.Type
	switch {
	case sym.Func:
		t = &types.Pointer{Elem: &types.Func{Result: types.IntType}}
	case t == nil && addrOf:
		t = types.Void{}
	case t == nil:
		// dtrace's text for CTF's ECTF_NOTYPEDAT.
		c.errorf(ast.DiagPos(e), diag.D_SYM_NOTYPES, "no symbolic type information is available for %s%s%s: %s\n",
			sym.Module, mark, sym.Name, "No type information available for symbol")
	}
	v := typed(t, false)
	v.Flags |= LValue
	v.Ident = &Ident{Name: name, Kind: Symbol, Type: t, Sym: sym}
	return v
}

// errNoSym is dtrace's message for EDT_NOSYM.
const errNoSym = "Unknown symbol name"

// ----------------------------------------------------------------------------
// Unary operators

func (c *Checker) unary(e *ast.UnaryExpr) *Value {
	op := e.Op
	incdec := op == token.PREINC || op == token.PREDEC || op == token.POSTINC || op == token.POSTDEC
	idflags := FlagRef
	if incdec {
		idflags |= FlagMod
		if id, ok := e.X.(*ast.Ident); ok {
			c.createGlobal(id.Name)
		}
	}
	if id, ok := e.X.(*ast.Ident); ok && op == token.ADDROF && strings.Contains(id.Name, "`") {
		c.symAddrOf = true
	}
	x := c.expr(e.X, 0)
	if x.Ident != nil && isVar(x.Ident) {
		if x.Ident.unref() {
			c.assignType(x, x.Ident, c.mustType("int64_t"))
		}
		x.Ident.Flags |= idflags
	}
	pos := ast.DiagPos(e)
	switch op {
	case token.DEREF:
		return c.deref(pos, x)
	case token.IPOS, token.INEG:
		if !types.IsArith(x.Type) {
			c.errorf(pos, diag.D_OP_ARITH, "operator %s requires an operand of arithmetic type\n", op)
		}
		v := propagate(x)
		if x.Const && op == token.INEG {
			v.Const, v.Int = true, -x.Int
		}
		return v
	case token.BNEG:
		if !types.IsInteger(x.Type) {
			c.errorf(pos, diag.D_OP_INT, "operator %s requires an operand of integral type\n", op)
		}
		return propagate(x)
	case token.LNEG:
		if !types.IsScalar(x.Type) {
			c.errorf(pos, diag.D_OP_SCALAR, "operator %s requires an operand of scalar type\n", op)
		}
		return typed(types.IntType, false)
	case token.ADDROF:
		switch {
		case x.Ident != nil && (isVar(x.Ident) || x.Ident.Kind == Agg):
			c.errorf(pos, diag.D_ADDROF_VAR, "cannot take address of dynamic variable\n")
		case x.Type == types.Dyn:
			c.errorf(pos, diag.D_ADDROF_VAR, "cannot take address of dynamic object\n")
		case x.Flags&LValue == 0:
			c.errorf(pos, diag.D_ADDROF_LVAL, "unacceptable operand for unary & operator\n")
		case x.Flags&BitField != 0:
			c.errorf(pos, diag.D_ADDROF_BITFIELD, "cannot take address of bit-field\n")
		}
		return typed(&types.Pointer{Elem: x.Type}, x.Flags&Userland != 0)
	case token.STRINGOF:
		if !types.IsScalar(x.Type) && !isPointer(x.Type) && !isStrCompat(x.Type) {
			c.errorf(pos, diag.D_STRINGOF_TYPE, "cannot apply stringof to a value of type %s\n", typeName(x))
		}
		return typed(c.strType, x.Flags&Userland != 0)
	}
	// ++ and --
	switch {
	case !types.IsScalar(x.Type):
		c.errorf(pos, diag.D_OP_SCALAR, "operator %s requires operand of scalar type\n", op)
	case isVFPtr(x.Type):
		c.errorf(pos, diag.D_OP_VFPTR, "operator %s requires an operand of known size\n", op)
	case x.Flags&LValue == 0:
		c.errorf(pos, diag.D_OP_LVAL, "operator %s requires modifiable lvalue as an operand\n", op)
	case x.Flags&Writable == 0:
		c.errorf(pos, diag.D_OP_WRITE, "operator %s can only be applied to a writable variable\n", op)
	}
	return propagate(x)
}

// isVar reports whether id is a variable the program defines or a
// builtin variable (dtrace's VAR nodes).
func isVar(id *Ident) bool {
	return id.Kind == Scalar || id.Kind == Array
}

// deref checks *x.
func (c *Checker) deref(pos token.Pos, x *Value) *Value {
	if x.Ident != nil && x.Ident.Kind == XlatePtr {
		v := typed(x.Ident.xlator.To, x.Flags&Userland != 0)
		v.Ident = &Ident{Name: x.Ident.Name, Kind: XlateSOU, xlator: x.Ident.xlator, Type: x.Ident.xlator.To, Input: x.Ident.Input}
		v.setType(types.Dyn, false)
		return v
	}
	// D's string is an array of char, so *s and s[i] are chars.
	elem, ok := refOf(x.Type)
	if !ok {
		c.errorf(pos, diag.D_DEREF_NONPTR, "cannot dereference non-pointer type\n")
	}
	v := typed(elem, x.Flags&Userland != 0)
	switch {
	case types.IsVoid(elem):
		c.errorf(pos, diag.D_DEREF_VOID, "cannot dereference pointer to void\n")
	case types.IsFunc(elem):
		c.errorf(pos, diag.D_DEREF_FUNC, "cannot dereference pointer to function\n")
	}
	if !types.IsArray(elem) || types.IsString(elem) {
		v.Flags |= LValue
	}
	if x.Flags&Writable != 0 {
		v.Flags |= Writable
	}
	return v
}

// ----------------------------------------------------------------------------
// Binary operators

func (c *Checker) binary(e *ast.BinaryExpr, idflags IdentFlags) *Value {
	op, pos := e.Op, ast.DiagPos(e)
	switch op {
	case token.BAND, token.XOR, token.BOR, token.SHL, token.SHR, token.MOD:
		l, r := c.expr(e.X, FlagRef), c.expr(e.Y, FlagRef)
		if !types.IsInteger(l.Type) || !types.IsInteger(r.Type) {
			c.errorf(pos, diag.D_OP_INT, "operator %s requires operands of integral type\n", op)
		}
		if op == token.SHL || op == token.SHR {
			return propagate(l)
		}
		return typed(types.Promote(l.Type, r.Type), false)
	case token.MUL, token.DIV:
		l, r := c.expr(e.X, FlagRef), c.expr(e.Y, FlagRef)
		if !types.IsInteger(l.Type) || !types.IsInteger(r.Type) {
			c.errorf(pos, diag.D_OP_ARITH, "operator %s requires operands of arithmetic type\n", op)
		}
		return typed(types.Promote(l.Type, r.Type), false)
	case token.LAND, token.LXOR, token.LOR:
		l, r := c.expr(e.X, FlagRef), c.expr(e.Y, FlagRef)
		if !types.IsScalar(l.Type) || !types.IsScalar(r.Type) {
			c.errorf(pos, diag.D_OP_SCALAR, "operator %s requires operands of scalar type\n", op)
		}
		return typed(types.IntType, false)
	case token.LT, token.LE, token.GT, token.GE, token.EQU, token.NEQ:
		return c.compare(e)
	case token.ADD, token.SUB:
		l, r := c.expr(e.X, FlagRef), c.expr(e.Y, FlagRef)
		return c.addSub(pos, op, l, r)
	case token.OR_ASGN, token.XOR_ASGN, token.AND_ASGN, token.SHL_ASGN, token.SHR_ASGN, token.MOD_ASGN,
		token.MUL_ASGN, token.DIV_ASGN:
		if id, ok := e.X.(*ast.Ident); ok {
			c.createGlobal(id.Name)
		}
		l, r := c.expr(e.X, FlagRef|FlagMod), c.expr(e.Y, FlagRef|FlagMod)
		if op == token.MUL_ASGN || op == token.DIV_ASGN {
			if !types.IsInteger(l.Type) || !types.IsInteger(r.Type) {
				c.errorf(pos, diag.D_OP_ARITH, "operator %s requires operands of arithmetic type\n", op)
			}
		} else if !types.IsInteger(l.Type) || !types.IsInteger(r.Type) {
			c.errorf(pos, diag.D_OP_INT, "operator %s requires operands of integral type\n", op)
		}
		return c.assignCommon(pos, op, l, e.Y, r)
	case token.ADD_ASGN, token.SUB_ASGN:
		if id, ok := e.X.(*ast.Ident); ok {
			c.createGlobal(id.Name)
		}
		l, r := c.expr(e.X, FlagRef|FlagMod), c.expr(e.Y, FlagRef|FlagMod)
		if types.IsString(l.Type) || types.IsString(r.Type) {
			c.incompatible(pos, op, l, r)
		}
		if !types.IsInteger(l.Type) || !types.IsInteger(r.Type) {
			if !isPointer(l.Type) || isVFPtr(l.Type) {
				c.errorf(pos, diag.D_OP_VFPTR, "operator %s requires left-hand scalar operand of known size\n", op)
			}
			if !types.IsInteger(r.Type) && !c.ptrCompat(l, r) {
				c.incompatible(pos, op, l, r)
			}
		}
		return c.assignCommon(pos, op, l, e.Y, r)
	case token.ASGN:
		return c.assign(e)
	case token.COMMA:
		l, r := c.expr(e.X, FlagRef), c.expr(e.Y, FlagRef)
		if l.Type == types.Dyn || r.Type == types.Dyn {
			c.errorf(pos, diag.D_OP_DYN, "operator %s operands cannot be of dynamic type\n", op)
		}
		if isAction(l) || isAction(r) {
			c.errorf(pos, diag.D_OP_ACT, "operator %s operands cannot be actions\n", op)
		}
		return propagate(r)
	}
	c.errorf(pos, diag.D_UNKNOWN, "invalid binary op %s\n", op)
	return nil
}

func isAction(v *Value) bool {
	return v.Ident != nil && v.Ident.Kind == ActFunc && v.Type == types.Void{}
}

func (c *Checker) incompatible(pos token.Pos, op token.Token, l, r *Value) {
	c.errorf(pos, diag.D_OP_INCOMPAT, "operands have incompatible types: \"%s\" %s \"%s\"\n", typeName(l), op, typeName(r))
}

func (c *Checker) compare(e *ast.BinaryExpr) *Value {
	op, pos := e.Op, ast.DiagPos(e)
	l := c.expr(e.X, FlagRef)
	var r *Value
	// An enum on the left lets the right name one of its enumerators.
	if en, ok := types.Resolve(l.Type).(*types.Enum); ok {
		if id, ok := e.Y.(*ast.Ident); ok && !strings.Contains(id.Name, "`") {
			if val, ok := en.Value(id.Name); ok {
				if g := c.globals.lookup(id.Name); g != nil {
					c.errorf(pos, diag.D_IDENT_AMBIG, "ambiguous use of operator %s: %s is both a %s enum tag and a global %s\n",
						op, id.Name, typeName(l), g.Kind)
				}
				r = c.record(id, c.intValue(l.Type, uint64(val)))
			}
		}
	}
	if r == nil {
		r = c.expr(e.Y, FlagRef)
	}
	switch {
	case types.Compatible(l.Type, r.Type) && l.Type != nil:
	case types.IsInteger(l.Type) && types.IsInteger(r.Type):
	case isStrCompat(l.Type) && isStrCompat(r.Type) && (types.IsString(l.Type) || types.IsString(r.Type)):
	case c.ptrCompat(l, r):
	default:
		c.incompatible(pos, op, l, r)
	}
	return typed(types.IntType, false)
}

// addSub checks + and -, also for x[i] on pointers and arrays.
func (c *Checker) addSub(pos token.Pos, op token.Token, l, r *Value) *Value {
	lptr := types.IsString(l.Type) || isPointer(l.Type) && !isVFPtr(l.Type)
	rptr := types.IsString(r.Type) || isPointer(r.Type) && !isVFPtr(r.Type)
	lint, rint := types.IsInteger(l.Type), types.IsInteger(r.Type)
	switch {
	case lint && rint:
		v := typed(types.Promote(l.Type, r.Type), false)
		if l.Const && r.Const {
			v.Const = true
			if op == token.ADD {
				v.Int = l.Int + r.Int
			} else {
				v.Int = l.Int - r.Int
			}
		}
		return v
	case lptr && rint:
		return typed(l.Type, l.Flags&Userland != 0)
	case lint && rptr && op == token.ADD:
		return typed(r.Type, r.Flags&Userland != 0)
	case lptr && rptr && op == token.SUB && c.ptrCompat(l, r):
		t, _, _ := c.universe.Lookup("ptrdiff_t")
		return typed(t, false)
	}
	c.incompatible(pos, op, l, r)
	return nil
}

// assignCommon ends every assignment: the left side must be a writable
// lvalue, and the result has its type. An integer constant on the right,
// y, is cast to the left's type as dt_assign_common folds it (dt_cast),
// so that the register holds the value the left's width and the
// constant's sign make of it.
func (c *Checker) assignCommon(pos token.Pos, op token.Token, l *Value, y ast.Expr, r *Value) *Value {
	if r != nil && r.Const && types.IsInteger(r.Type) && types.IsScalar(l.Type) {
		nr := *r
		nr.Int = castConst(r, l.Type)
		c.record(y, &nr)
	}
	if l.Flags&LValue == 0 {
		c.errorf(pos, diag.D_OP_LVAL, "operator %s requires modifiable lvalue as an operand\n", op)
	}
	if l.Flags&Writable == 0 {
		c.errorf(pos, diag.D_OP_WRITE, "operator %s can only be applied to a writable variable\n", op)
	}
	return propagate(l)
}

// assign checks x = y, including @a[k] = f(args).
func (c *Checker) assign(e *ast.BinaryExpr) *Value {
	pos := ast.DiagPos(e)
	if id, ok := e.X.(*ast.Ident); ok {
		if strings.HasPrefix(id.Name, "@") {
			c.createAgg(id.Name[1:], pos)
		} else {
			c.createGlobal(id.Name)
		}
	}
	l := c.expr(e.X, 0)
	if l.Ident != nil && l.Ident.Kind == Agg {
		return c.aggAssign(e, l)
	}
	r := c.expr(e.Y, FlagRef)
	cand, user := r.Type, r.Flags&Userland != 0
	if r.Ident != nil && r.Ident.Kind == XlateSOU {
		cand, user = r.Ident.xlator.To, r.Ident.Flags&FlagUser != 0
	}
	if l.Ident != nil && isVar(l.Ident) {
		if l.Ident.unref() {
			if cand == nil {
				c.errorf(pos, diag.D_TYPE_ERR, "cannot assign a value of unknown type to %s%s\n", spacePrefix(l.Ident), l.Ident.Name)
			}
			c.assignType(l, l.Ident, cand)
			if user {
				l.Flags |= Userland
				l.Ident.Flags |= FlagUser
			}
		}
		l.Ident.Flags |= FlagMod
	}
	if !types.IsString(l.Type) && (types.IsArray(l.Type) || types.IsFunc(l.Type)) {
		c.errorf(pos, diag.D_OP_ARRFUN, "operator %s may not be applied to operand of type \"%s\"\n", token.ASGN, typeName(l))
	}
	if r.Ident != nil && r.Ident.Kind == XlateSOU && types.Compatible(l.Type, cand) {
		return c.assignCommon(pos, token.ASGN, l, e.Y, r)
	}
	if !c.argCompat(l, r) {
		c.incompatible(pos, token.ASGN, l, r)
	}
	return c.assignCommon(pos, token.ASGN, l, e.Y, r)
}

// assignType gives a variable that has none the type of its first
// assignment.
func (c *Checker) assignType(v *Value, id *Ident, t types.Type) {
	if id.Kind == Array {
		id.Type = t
		v.setType(t, false)
		return
	}
	id.Type = t
	flags := v.Flags & (LValue | Writable)
	v.setType(t, false)
	v.Flags |= flags
}

// createGlobal makes name a global scalar when it is not yet an
// identifier: an assignment or ++ instantiates it.
func (c *Checker) createGlobal(name string) {
	if strings.Contains(name, "`") || c.lookupGlobal(name) != nil {
		return
	}
	c.globals.create(name, Scalar, FlagWrite)
}

// createAgg returns aggregation @name, creating it at pos, the node
// being checked, where dt_xcook_ident creates it (its di_lineno).
func (c *Checker) createAgg(name string, pos token.Pos) *Ident {
	if id := c.aggs.lookup(name); id != nil {
		return id
	}
	id := c.aggs.create(name, Agg, FlagWrite)
	id.AggLine = int(pos.Line)
	return id
}

// ----------------------------------------------------------------------------
// ?:

func (c *Checker) cond(e *ast.CondExpr) *Value {
	x := c.expr(e.Cond, FlagRef)
	l := c.expr(e.X, FlagRef)
	r := c.expr(e.Y, FlagRef)
	pos := ast.DiagPos(e)
	if !types.IsScalar(x.Type) {
		c.errorf(pos, diag.D_OP_SCALAR, "operator ?: expression must be of scalar type\n")
	}
	if l.Type == types.Dyn || r.Type == types.Dyn {
		c.errorf(pos, diag.D_OP_DYN, "operator ?: operands cannot be of dynamic type\n")
	}
	var v *Value
	switch {
	case l.Type != nil && r.Type != nil && types.Compatible(l.Type, r.Type):
		v = propagate(l)
	case types.IsInteger(l.Type) && types.IsInteger(r.Type):
		v = typed(types.Promote(l.Type, r.Type), false)
	case isStrCompat(l.Type) && isStrCompat(r.Type) && (types.IsString(l.Type) || types.IsString(r.Type)):
		v = typed(c.strType, false)
	case c.ptrCompat(l, r):
		v = typed(c.ptrResult(l, r), false)
	default:
		c.errorf(pos, diag.D_OP_INCOMPAT, "operator ?: operands must have compatible types\n")
	}
	if isAction(l) || isAction(r) {
		c.errorf(pos, diag.D_OP_ACT, "action cannot be used in a conditional context\n")
	}
	v.Flags &^= LValue
	return v
}

// ----------------------------------------------------------------------------
// Subscripts

func (c *Checker) index(e *ast.IndexExpr, idflags IdentFlags) *Value {
	if inner, ok := e.X.(*ast.IndexExpr); ok {
		if id, ok := inner.X.(*ast.Ident); ok && strings.HasPrefix(id.Name, "@") {
			c.expr(inner, 0)
			c.errorf(ast.DiagPos(e), diag.D_AGG_MDIM, "improper attempt to reference %s as a multi-dimensional array\n", id.Name)
		}
	}
	if id, ok := e.X.(*ast.Ident); ok && !strings.Contains(id.Name, "`") {
		if strings.HasPrefix(id.Name, "@") {
			agg := c.createAgg(id.Name[1:], ast.DiagPos(e))
			c.keys(e.Index)
			v := c.aggRef(e, agg, idflags)
			c.record(id, v)
			return v
		}
		g := c.lookupGlobal(id.Name)
		if g == nil && c.define(id.Name) {
			// A library's array inline, as fds[].
			g = c.lookupGlobal(id.Name)
		}
		if g == nil || g.unref() && g.Kind == Scalar {
			if g == nil {
				g = c.globals.create(id.Name, Array, FlagWrite)
			} else {
				g.Kind = Array
			}
		}
		if g.Kind == Array && g.cook != cookPlain {
			c.record(id, &Value{Type: types.Dyn, Ident: g})
			return c.builtinArray(e, g)
		}
		if g.Kind == Array {
			c.record(id, &Value{Type: types.Dyn, Ident: g})
			return c.arrayRef(e, g, idflags)
		}
	}
	if sel, ok := e.X.(*ast.SelectorExpr); ok && sel.Op == token.ARROW {
		if base, ok := sel.X.(*ast.Ident); ok && (base.Name == "self" || base.Name == "this") {
			id := c.selfThis(sel, base.Name)
			if id.Kind == Scalar && id.unref() {
				if id.Space == ClauseLocal {
					c.errorf(ast.DiagPos(e), diag.D_ARR_LOCAL, "local variables may not be used as associative arrays: %s\n", id.Name)
				}
				id.Kind = Array
			}
			if id.Kind == Array {
				c.record(sel, &Value{Type: types.Dyn, Ident: id})
				return c.arrayRef(e, id, idflags)
			}
		}
	}
	// x[i] on a pointer or array is *(x + i).
	x := c.expr(e.X, 0)
	i := c.expr(e.Index[0], FlagRef)
	sum := c.addSub(ast.DiagPos(e), token.ADD, x, i)
	if len(e.Index) > 1 {
		c.errorf(ast.DiagPos(e), diag.D_ARR_BADREF, "cannot access %s as an associative array\n", c.nodeName(e.X, x))
	}
	if x.Flags&Writable != 0 {
		sum.Flags |= Writable
	}
	return c.deref(ast.DiagPos(e), sum)
}

// keys checks the keys of a subscript.
func (c *Checker) keys(list []ast.Expr) []*Value {
	vals := make([]*Value, len(list))
	for i, k := range list {
		vals[i] = c.expr(k, FlagRef)
	}
	return vals
}

// arrayRef checks a reference to an associative array element.
func (c *Checker) arrayRef(e *ast.IndexExpr, id *Ident, idflags IdentFlags) *Value {
	keys := c.keys(e.Index)
	if idflags&FlagRef != 0 && id.unref() {
		c.errorf(ast.DiagPos(e), diag.D_VAR_UNDEF, "%s%s has not yet been declared or assigned\n", spacePrefix(id), id.Name)
	}
	c.signature(ast.DiagPos(e), id, keys, "", "[ ]")
	var v *Value
	if id.Type != nil {
		v = typed(id.Type, id.Flags&FlagUser != 0)
	} else {
		v = &Value{}
	}
	v.Ident = id
	v.Flags |= LValue
	if id.Flags&FlagWrite != 0 {
		v.Flags |= Writable
	}
	id.Flags |= idflags
	return v
}

// signature checks keys against the signature their first use fixed,
// or fixes it, as dt_idcook_assc.
func (c *Checker) signature(pos token.Pos, id *Ident, keys []*Value, prefix, suffix string) {
	if id.Keys == nil {
		id.Keys = make([]types.Type, len(keys))
		for i, k := range keys {
			if k.Type == types.Dyn || k.Type == nil || types.IsVoid(k.Type) {
				c.errorf(pos, diag.D_KEY_TYPE, "%s expression may not be used as %s index: key #%d\n", typeName(k), id.Kind, i+1)
			}
			id.Keys[i] = k.Type
		}
		return
	}
	if len(keys) != len(id.Keys) {
		s := "s "
		if len(keys) == 1 {
			s = " "
		}
		c.errorf(pos, diag.D_PROTO_LEN, "%s%s%s prototype mismatch: %d key%spassed, %d expected\n",
			prefix, id.Name, suffix, len(keys), s, len(id.Keys))
	}
	for i, k := range keys {
		if !c.argCompat(typed(id.Keys[i], false), k) {
			c.errorf(pos, diag.D_PROTO_ARG, "%s%s%s key #%d is incompatible with prototype:\n\tprototype: %s\n\t%9s: %s\n",
				prefix, id.Name, suffix, i+1, typeString(id.Keys[i]), "key", typeName(k))
		}
	}
}

// ----------------------------------------------------------------------------
// Members, self-> and this->

// selfThis resolves self->name or this->name, creating the variable.
func (c *Checker) selfThis(e *ast.SelectorExpr, base string) *Ident {
	sc := c.tls
	flags := FlagWrite | FlagTLS
	if base == "this" {
		sc, flags = c.locals, FlagWrite|FlagLocal
	}
	if id := sc.lookup(e.Sel.Name); id != nil {
		return id
	}
	return sc.create(e.Sel.Name, Scalar, flags)
}

func (c *Checker) selector(e *ast.SelectorExpr, idflags IdentFlags) *Value {
	op := e.Op
	if base, ok := e.X.(*ast.Ident); ok && op == token.ARROW && base.Name == "locals" {
		return c.local(e)
	}
	if base, ok := e.X.(*ast.Ident); ok && op == token.ARROW && (base.Name == "self" || base.Name == "this") {
		id := c.selfThis(e, base.Name)
		v := c.varValue(ast.DiagPos(e), id, idflags)
		c.record(e.Sel, v)
		return v
	}
	x := c.expr(e.X, FlagRef)
	pos := ast.DiagPos(e)
	var base types.Type
	user := x.Flags&Userland != 0
	if x.Ident != nil && (x.Ident.Kind == XlateSOU || x.Ident.Kind == XlatePtr) {
		xl := x.Ident.xlator
		m := xl.member(e.Sel.Name)
		if m == nil {
			c.errorf(pos, diag.D_XLATE_NOCONV, "translator does not define conversion for member: %s\n", e.Sel.Name)
		}
		base = xl.To
		if x.Ident.Kind == XlatePtr {
			base = &types.Pointer{Elem: xl.To}
		}
		user = x.Ident.Flags&FlagUser != 0
	} else {
		base = x.Type
	}
	r := types.Resolve(base)
	if op == token.ARROW {
		p, ok := r.(*types.Pointer)
		if !ok {
			c.errorf(pos, diag.D_OP_PTR, "operator %s must be applied to a pointer\n", op)
		}
		r = types.Resolve(p.Elem)
	}
	if s, ok := r.(*types.Struct); ok && s.Incomplete {
		r = c.completeStruct(pos, op, s)
	}
	if e, ok := r.(*types.Enum); ok && e.Incomplete {
		c.errorf(pos, diag.D_OP_INCOMPLETE, "operator %s cannot be applied to a forward declaration: no %s definition is available\n", op, e)
	}
	s, ok := r.(*types.Struct)
	if !ok {
		if op == token.ARROW {
			c.errorf(pos, diag.D_OP_SOU, "operator -> cannot be applied to pointer to type \"%s\"; must be applied to a struct or union pointer\n", typeString(r))
		}
		c.errorf(pos, diag.D_OP_SOU, "operator %s cannot be applied to type \"%s\"; must be applied to a struct or union\n", op, typeString(r))
	}
	m, ok := c.member(pos, s, e.Sel.Name)
	if !ok {
		c.errorf(pos, diag.D_TYPE_MEMBER, "%s is not a member of %s%s\n", e.Sel.Name, s, suggestion(e.Sel.Name, memberNames(s)))
	}
	if x.Local != nil {
		c.localMember(pos, x.Local, m)
	}
	v := typed(m.Type, false)
	if m.BitSize != 0 {
		v.Flags |= BitField
	}
	mr := types.Resolve(m.Type)
	if user && (isPointerKind(mr) || v.Flags&Ref != 0) {
		v.Flags |= Userland
	}
	notArray := !types.IsArray(mr) || types.IsString(mr)
	if notArray && (op == token.ARROW || x.Flags&LValue != 0) {
		v.Flags |= LValue
	}
	if x.Flags&Writable != 0 {
		v.Flags |= Writable
	}
	c.record(e.Sel, v)
	return v
}

func isPointerKind(t types.Type) bool {
	_, ok := t.(*types.Pointer)
	return ok
}

// completeStruct finds the definition of a forward-declared struct in
// any module.
func (c *Checker) completeStruct(pos token.Pos, op token.Token, s *types.Struct) *types.Struct {
	t, _, err := c.universe.Lookup(s.String())
	if err == nil {
		if d, ok := types.Resolve(t).(*types.Struct); ok && !d.Incomplete {
			return d
		}
	}
	for _, m := range c.universe.Modules {
		if t, err := m.LookupType(s.String()); err == nil && t != nil {
			if d, ok := types.Resolve(t).(*types.Struct); ok && !d.Incomplete {
				return d
			}
		}
	}
	c.errorf(pos, diag.D_OP_INCOMPLETE, "operator %s cannot be applied to a forward declaration: no %s definition is available\n", op, s)
	return nil
}

// ----------------------------------------------------------------------------
// Casts, sizeof, offsetof, xlate

func (c *Checker) cast(e *ast.CastExpr) *Value {
	t, user := c.typeName(e.Type)
	x := c.expr(e.X, FlagRef)
	tv := typed(t, user)
	ok := x.Type != nil && types.Compatible(t, x.Type) ||
		types.IsScalar(t) && (types.IsScalar(x.Type) || types.IsFunc(x.Type)) ||
		types.IsVoid(t) ||
		types.IsPointer(t) && isPointer(x.Type) ||
		types.IsString(t) && (types.IsScalar(x.Type) || isPointer(x.Type) || isStrCompat(x.Type))
	if !ok {
		c.errorf(ast.DiagPos(e), diag.D_CAST_INVAL, "invalid cast expression: \"%s\" to \"%s\"\n", typeName(x), typeName(tv))
	}
	if types.IsPointer(t) {
		tv.Flags |= Writable
	}
	if x.Const && types.IsInteger(t) {
		tv.Const, tv.Int = true, castConst(x, t)
	}
	return tv
}

// castConst is dt_cast: the integer constant v converted to type to.
func castConst(v *Value, to types.Type) uint64 {
	from, size := v.Type.Size(), to.Size()
	if from < 1 || from > 8 || size < 1 || size > 8 {
		return v.Int
	}
	return constant.Cast(v.Int, int(8*from), v.Flags&Signed != 0, int(8*size))
}

func (c *Checker) sizeof(e *ast.SizeofExpr) *Value {
	sizeT, _, _ := c.universe.Lookup("size_t")
	if e.Type != nil {
		t, _ := c.typeName(e.Type)
		if !types.IsComplete(t) && !types.IsString(t) {
			c.errorf(ast.DiagPos(e), diag.D_SIZEOF_TYPE, "cannot apply sizeof to an operand of unknown size\n")
		}
		return c.intValue(sizeT, uint64(t.Size()))
	}
	x := c.expr(e.X, FlagRef)
	if x.Flags&BitField != 0 {
		c.errorf(ast.DiagPos(e), diag.D_SIZEOF_BITFIELD, "cannot apply sizeof to a bit-field\n")
	}
	if c.sizeOf(x) == 0 {
		c.errorf(ast.DiagPos(e), diag.D_SIZEOF_TYPE, "cannot apply sizeof to an operand of unknown size\n")
	}
	return c.intValue(sizeT, uint64(c.sizeOf(x)))
}

// sizeOf is dt_node_type_size.
func (c *Checker) sizeOf(v *Value) int64 {
	if v.Type == nil {
		return 0
	}
	if s, ok := types.Resolve(v.Type).(*types.Struct); ok && s.Incomplete {
		return 0
	}
	return v.Type.Size()
}

// member looks up the member called name of s. A struct whose members
// its type source could not read is an error of its own, rather than
// one without the member.
func (c *Checker) member(pos token.Pos, s *types.Struct, name string) (types.Member, bool) {
	m, ok := s.Member(name)
	if err := s.Err(); !ok && err != nil {
		c.errorf(pos, diag.D_TYPE_ERR, "failed to read the members of %s: %v\n", s, err)
	}
	return m, ok
}

func (c *Checker) offsetof(e *ast.OffsetofExpr) *Value {
	t, _ := c.typeName(e.Type)
	s, ok := types.Resolve(t).(*types.Struct)
	if !ok || s.Incomplete {
		c.errorf(ast.DiagPos(e), diag.D_OFFSETOF_TYPE, "offsetof operand must be a struct or union type\n")
	}
	m, ok := c.member(e.Offsetof, s, e.Member.Name)
	if !ok {
		c.errorf(ast.DiagPos(e), diag.D_UNKNOWN, "failed to determine offset of %s: %s\n", e.Member.Name, "Member name not found")
	}
	if m.BitSize != 0 || isBitFieldType(m.Type) {
		c.errorf(ast.DiagPos(e), diag.D_OFFSETOF_BITFIELD, "cannot take offset of a bit-field: %s\n", e.Member.Name)
	}
	return c.intValue(litTypeFor(uint64(m.Offset/8)), uint64(m.Offset/8))
}

func isBitFieldType(t types.Type) bool {
	return typed(t, false).Flags&BitField != 0
}

// litTypeFor is the type dt_node_int gives a decimal constant.
func litTypeFor(n uint64) types.Type {
	switch {
	case n <= 0x7fffffff:
		return types.IntType
	case n <= 0x7fffffffffffffff:
		return types.Long
	}
	return types.ULong
}

func (c *Checker) xlate(e *ast.XlateExpr) *Value {
	to, _ := c.typeName(e.Type)
	x := c.expr(e.X, FlagRef)
	xl := c.lookupXlator(x.Type, to)
	if xl == nil {
		c.errorf(ast.DiagPos(e), diag.D_XLATE_NONE, "cannot translate from \"%s\" to \"%s\"\n", typeName(x), typeString(to))
	}
	kind := XlateSOU
	if types.IsPointer(to) {
		kind = XlatePtr
	}
	v := typed(types.Dyn, false)
	v.Ident = &Ident{Name: "xlate", Kind: kind, xlator: xl, Type: xl.To, Input: e.X}
	return v
}

// ----------------------------------------------------------------------------
// Type predicates that depend on D's rules beyond the type

// isPointer is dt_node_is_pointer: pointers and arrays, but not strings.
func isPointer(t types.Type) bool {
	if t == nil || types.IsString(t) {
		return false
	}
	switch types.Resolve(t).(type) {
	case *types.Pointer, *types.Array:
		return true
	}
	return false
}

// isVFPtr reports whether t is a pointer to void or to a function.
func isVFPtr(t types.Type) bool {
	if t == nil {
		return false
	}
	p, ok := types.Resolve(t).(*types.Pointer)
	if !ok {
		return false
	}
	return types.IsVoid(p.Elem) || types.IsFunc(p.Elem)
}

// isStrCompat reports whether t is a string, a pointer to char or an
// array of char.
func isStrCompat(t types.Type) bool {
	if t == nil {
		return false
	}
	switch r := types.Resolve(t).(type) {
	case *types.String:
		return true
	case *types.Pointer:
		return isChar(r.Elem)
	case *types.Array:
		return isChar(r.Elem)
	}
	return false
}

func isChar(t types.Type) bool {
	i, ok := types.Resolve(t).(*types.Int)
	return ok && i.Bytes == 1 && (i.Char || i.Signed)
}

// isNullConst reports whether v is the integer constant 0.
func isNullConst(v *Value) bool { return v.Const && v.Int == 0 && types.IsInteger(v.Type) }

// refOf returns what a pointer or array refers to.
func refOf(t types.Type) (types.Type, bool) {
	if t == nil {
		return nil, false
	}
	if types.IsString(t) {
		return types.Char, true
	}
	return types.Elem(t)
}

// ptrCompat is dt_node_is_ptrcompat.
func (c *Checker) ptrCompat(l, r *Value) bool {
	if l.Type == nil || r.Type == nil || l.Type == types.Dyn || r.Type == types.Dyn {
		return false
	}
	li, ri := types.IsInteger(l.Type), types.IsInteger(r.Type)
	if li && ri || li && !isNullConst(l) || ri && !isNullConst(r) {
		return false
	}
	if !li && !ri && (l.Flags&Userland != 0) != (r.Flags&Userland != 0) {
		return false
	}
	lt, rt := l.Type, r.Type
	if li {
		lt = rt
	}
	if ri {
		rt = lt
	}
	if !isPointer(lt) && !types.IsString(lt) || !isPointer(rt) && !types.IsString(rt) {
		return false
	}
	lref, _ := refOf(lt)
	rref, _ := refOf(rt)
	return types.IsVoid(lref) || types.IsVoid(rref) || types.Compatible(lref, rref)
}

// ptrResult is the type ptrCompat gives the result of ?: on pointers.
func (c *Checker) ptrResult(l, r *Value) types.Type {
	if types.IsInteger(r.Type) {
		return l.Type
	}
	if ref, _ := refOf(r.Type); types.IsVoid(ref) && !types.IsInteger(l.Type) {
		return l.Type
	}
	return r.Type
}

// argCompat is dt_node_is_argcompat: proto is the expected type.
func (c *Checker) argCompat(proto, arg *Value) bool {
	if proto.Type == nil || arg.Type == nil {
		return false
	}
	switch {
	case types.IsInteger(proto.Type) && types.IsInteger(arg.Type),
		isStrCompat(proto.Type) && isStrCompat(arg.Type),
		proto.Type == types.Stack && arg.Type == types.Stack,
		proto.Type == types.SymAddr && arg.Type == types.SymAddr,
		proto.Type == types.USymAddr && arg.Type == types.USymAddr:
		return true
	}
	switch types.Resolve(proto.Type).(type) {
	case *types.Func, *types.Struct:
		return types.Compatible(proto.Type, arg.Type)
	}
	return c.ptrCompat(proto, arg)
}

// typeName is dt_node_type_name: the type of a value as messages write
// it.
func typeName(v *Value) string {
	if v.Type == types.Dyn && v.Ident != nil {
		return v.Ident.Kind.String()
	}
	name := typeString(v.Type)
	if v.Flags&Userland != 0 {
		return "userland " + name
	}
	return name
}

// nodeName is dt_node_name, for messages that name an expression.
func (c *Checker) nodeName(e ast.Expr, v *Value) string {
	switch e := e.(type) {
	case *ast.IntLit:
		return "integer constant 0x" + uhex(e.Value)
	case *ast.Ident:
		if v != nil && v.Ident != nil {
			prefix, suffix := "", ""
			switch v.Ident.Kind {
			case Agg:
				prefix = "@"
			case Func, AggFunc, ActFunc:
				suffix = "( )"
			case Symbol:
				return "symbol " + e.Name
			}
			return v.Ident.Kind.String() + " " + prefix + v.Ident.Name + suffix
		}
		return "identifier " + e.Name
	case *ast.UnaryExpr:
		return "operator " + e.Op.String()
	case *ast.BinaryExpr:
		return "operator " + e.Op.String()
	case *ast.IndexExpr:
		return "operator ["
	case *ast.SelectorExpr:
		return "operator " + e.Op.String()
	case *ast.CallExpr:
		return c.nodeName(e.Fun, c.value(e))
	}
	return "expression"
}

func uhex(n uint64) string {
	const digits = "0123456789abcdef"
	if n == 0 {
		return "0"
	}
	var b [16]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = digits[n&15]
		n >>= 4
	}
	return string(b[i:])
}
