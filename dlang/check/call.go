package check

import (
	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// call checks a call of a subroutine, action or aggregating function
// against its prototype, as dt_node_func and dt_idcook_func do.
func (c *Checker) call(e *ast.CallExpr, idflags IdentFlags) *Value {
	name := e.Fun.Name
	id := c.lookupGlobal(name)
	if id == nil {
		c.errorf(ast.DiagPos(e), diag.D_FUNC_UNDEF, "undefined function name: %s%s\n", name,
			suggestion(name, c.globalNames(Func, ActFunc, AggFunc)))
	}
	if id.Kind != Func && id.Kind != AggFunc && id.Kind != ActFunc {
		c.errorf(ast.DiagPos(e), diag.D_FUNC_IDKIND, "%s '%s' may not be referenced as a function\n", id.Kind, name)
	}
	args := make([]*Value, len(e.Args))
	for i, a := range e.Args {
		args[i] = c.expr(a, FlagRef)
	}
	p := c.funcProto(ast.DiagPos(e), id)
	c.checkArgs(ast.DiagPos(e), id, p, args)
	v := typed(id.Type, false)
	v.Ident = id
	c.record(e.Fun, v)
	return v
}

// checkArgs is dt_idcook_sign for functions: the count, then the types
// of the fixed parameters.
func (c *Checker) checkArgs(pos token.Pos, id *Ident, p *Proto, args []*Value) {
	argc, n := len(args), len(p.Params)
	limit := n
	bad := false
	switch {
	case p.Varargs >= 0:
		bad, limit = argc < p.Varargs, p.Varargs
	case p.Optional >= 0:
		bad, limit = argc < p.Optional || argc > n, argc
	default:
		bad = argc != n
	}
	if bad {
		s := "s "
		if argc == 1 {
			s = " "
		}
		atLeast, want := "", limit
		if p.Optional >= 0 {
			atLeast, want = "at least ", p.Optional
		}
		c.errorf(pos, diag.D_PROTO_LEN, "%s( ) prototype mismatch: %d arg%spassed, %s%d expected\n", id.Name, argc, s, atLeast, want)
	}
	for i := 0; i < limit && i < argc; i++ {
		if p.Params[i] == nil {
			continue
		}
		if !c.argCompat(typed(p.Params[i], false), args[i]) {
			c.errorf(pos, diag.D_PROTO_ARG, "%s( ) argument #%d is incompatible with prototype:\n\tprototype: %s\n\t%9s: %s\n",
				id.Name, i+1, typeString(p.Params[i]), "argument", typeName(args[i]))
		}
	}
}

// builtinArray checks args[N], regs[N] and uregs[N].
func (c *Checker) builtinArray(e *ast.IndexExpr, id *Ident) *Value {
	keys := c.keys(e.Index)
	pos := ast.DiagPos(e)
	if len(keys) != 1 {
		s := "s "
		if len(keys) == 1 {
			s = " "
		}
		c.errorf(pos, diag.D_PROTO_LEN, "%s[ ] prototype mismatch: %d arg%spassed, 1 expected\n", id.Name, len(keys), s)
	}
	k := keys[0]
	if !k.Const || !types.IsInteger(k.Type) {
		c.errorf(pos, diag.D_PROTO_ARG, "%s[ ] argument #1 is incompatible with prototype:\n\tprototype: %s\n\t argument: %s\n",
			id.Name, "integer constant", typeString(k.Type))
	}
	if id.cook == cookRegs {
		if k.Flags&Signed != 0 && int64(k.Int) < 0 {
			c.errorf(pos, diag.D_REGS_IDX, "index %d is out of range for array %s\n", int64(k.Int), id.Name)
		}
		v := typed(c.mustType("uint64_t"), false)
		v.Ident = id
		return v
	}
	if !c.inClause {
		c.errorf(pos, diag.D_ARGS_NONE, "%s[ ] may not be referenced outside of a probe clause\n", id.Name)
	}
	if c.probeArgs == nil {
		c.errorf(pos, diag.D_ARGS_MULTI, "%s[ ] may not be referenced because probe description %s matches an unstable set of probes\n",
			id.Name, c.probeDesc)
	}
	if k.Int >= uint64(len(c.probeArgs)) {
		c.errorf(pos, diag.D_ARGS_IDX, "index %d is out of range for %s %s[ ]\n", int64(k.Int), c.probeDesc, id.Name)
	}
	t := c.probeArgs[k.Int]
	if t == nil {
		c.errorf(pos, diag.D_ARGS_TYPE, "failed to resolve native type for %s[%d]\n", id.Name, int64(k.Int))
	}
	if k.Int < uint64(len(c.probeXArgs)) && c.probeXArgs[k.Int] != "" {
		return c.translatedArg(e, id, int64(k.Int), t, c.probeXArgs[k.Int])
	}
	v := typed(t, false)
	v.Ident = id
	return v
}

// translatedArg is args[n] of a probe whose provider translates the
// argument from its native type t to the type named xname, as
// dt_idcook_args does: by the type itself when the two are compatible,
// else through the translator from one to the other.
func (c *Checker) translatedArg(e *ast.IndexExpr, id *Ident, n int64, t types.Type, xname string) *Value {
	pos := ast.DiagPos(e)
	xt, err := c.parseType(xname)
	if err != nil {
		c.errorf(pos, diag.D_ARGS_TYPE, "failed to resolve translated type for %s[%d]\n", id.Name, n)
	}
	if types.Compatible(t, xt) || c.argCompat(typed(xt, false), typed(t, false)) {
		v := typed(t, false)
		v.Ident = id
		return v
	}
	xl := c.lookupXlator(t, xt)
	if xl == nil {
		c.errorf(pos, diag.D_ARGS_XLATOR, "translator for %s[%d] from %s to %s is not defined\n", id.Name, n, typeString(t), typeString(xt))
	}
	kind := XlateSOU
	if types.IsPointer(xt) {
		kind = XlatePtr
	}
	v := typed(types.Dyn, false)
	// The input is the native argument: args[N] as the probe gives it.
	v.Ident = &Ident{Name: id.Name, Kind: kind, xlator: xl, Type: xl.To, Input: e}
	return v
}

// ----------------------------------------------------------------------------
// Aggregations

// aggAssign checks @a[keys] = f(args).
func (c *Checker) aggAssign(e *ast.BinaryExpr, l *Value) *Value {
	agg := l.Ident
	call, ok := e.Y.(*ast.CallExpr)
	var fn *Value
	if ok {
		fn = c.expr(call, FlagRef)
	}
	if !ok || fn.Ident == nil || fn.Ident.Kind != AggFunc {
		if !ok {
			c.expr(e.Y, FlagRef)
		}
		c.errorf(ast.DiagPos(e), diag.D_AGG_FUNC, "@%s must be assigned the result of an aggregating function\n", agg.Name)
	}
	if agg.AggFunc != nil && agg.AggFunc != fn.Ident {
		c.errorf(ast.DiagPos(e), diag.D_AGG_REDEF, "aggregation redefined: @%s\n\t current: @%s = %s( )\n\tprevious: @%s = %s( ) : line %d\n",
			agg.Name, agg.Name, fn.Ident.Name, agg.Name, agg.AggFunc.Name, agg.AggLine)
	}
	if agg.AggFunc == nil {
		agg.AggFunc = fn.Ident
	}
	var keys []*Value
	if ix, ok := e.X.(*ast.IndexExpr); ok {
		for _, k := range ix.Index {
			keys = append(keys, c.value(k))
		}
	}
	c.signature(e.OpPos, agg, keys, "@", "[ ]")
	agg.Flags |= FlagMod
	v := typed(types.Dyn, false)
	v.Ident = agg
	return v
}

// aggRef checks @a[keys] outside an assignment: only the keys are
// checked, as dt_cook_aggregation does.
func (c *Checker) aggRef(e *ast.IndexExpr, agg *Ident, idflags IdentFlags) *Value {
	v := typed(types.Dyn, false)
	v.Ident = agg
	v.Flags |= LValue | Writable
	return v
}
