package check

import (
	"errors"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dlang/printf"
)

// The checks of this file are those dtrace makes while it compiles each
// statement of a clause into actions (dt_cc.c's dt_compile_agg and
// dt_compile_fun), and the rules on the order of speculative actions
// (dt_stmt_append).

// actionKind classifies a statement for the ordering rules.
type actionKind uint8

const (
	actNone      actionKind = iota // records nothing (an assignment)
	actData                        // records data
	actAgg                         // an aggregation
	actSpeculate                   // speculate()
	actCommit                      // commit()
	actDiscard                     // discard()
	actExit                        // exit()
	actDestruct                    // a destructive action
)

// statement checks one statement of an action list, whose types are
// checked, as dtrace compiles it into actions.
func (c *Checker) statement(x ast.Expr) {
	pos := ast.DiagPos(x)
	v := c.value(x)
	switch e := x.(type) {
	case *ast.Ident:
		if strings.HasPrefix(e.Name, "@") {
			c.errorf(pos, diag.D_AGG_NULL, "expression has null effect: %s\n", e.Name)
		}
	case *ast.IndexExpr:
		if id, ok := e.X.(*ast.Ident); ok && strings.HasPrefix(id.Name, "@") {
			c.errorf(pos, diag.D_AGG_NULL, "expression has null effect: %s\n", id.Name)
		}
	}
	kind := actData
	call, isCall := x.(*ast.CallExpr)
	switch {
	case v.Ident != nil && v.Ident.Kind == Agg:
		if b, ok := x.(*ast.BinaryExpr); ok && b.Op == token.ASGN {
			c.aggregation(b)
			kind = actAgg
		}
	case isCall && v.Ident != nil && v.Ident.Kind == ActFunc:
		// An action whatever its arguments call: its own kind says
		// whether it is destructive, as dt_action_destructive.
		kind = c.action(call, v.Ident)
	case c.destructive(x):
		kind = actDestruct
	case isAssignment(x):
		kind = actNone
	}
	c.programContext(x)
	if kind == actData && v.Ident != nil && v.Ident.Kind == XlatePtr {
		c.errorf(pos, diag.D_CG_DYN, "expression cannot evaluate to result of a translated pointer\n")
	}
	c.order(pos, kind)
}

// programContext reports an action or aggregating function called where
// a value is needed: only a statement, an aggregation's function, and
// some actions as aggregation keys (stack(), sym() …) are places where
// dtrace's code generator can record what they produce.
func (c *Checker) programContext(stmt ast.Expr) {
	allowed := map[*ast.CallExpr]bool{}
	if call, ok := stmt.(*ast.CallExpr); ok {
		allowed[call] = true
	}
	if b, ok := stmt.(*ast.BinaryExpr); ok && b.Op == token.ASGN {
		if v := c.value(b); v != nil && v.Ident != nil && v.Ident.Kind == Agg {
			if call, ok := b.Y.(*ast.CallExpr); ok {
				allowed[call] = true
			}
			if ix, ok := b.X.(*ast.IndexExpr); ok {
				for _, k := range ix.Index {
					if call, ok := k.(*ast.CallExpr); ok && isKeyAction(call.Fun.Name) {
						allowed[call] = true
					}
				}
			}
		}
	}
	ast.Inspect(stmt, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || allowed[call] {
			return true
		}
		if v := c.value(call); v != nil && v.Ident != nil && (v.Ident.Kind == ActFunc || v.Ident.Kind == AggFunc) {
			c.errorf(ast.DiagPos(call), diag.D_CG_EXPR, "%s %s( ) may not be called from a D expression (D program context required)\n", v.Ident.Kind, v.Ident.Name)
		}
		return true
	})
}

// isKeyAction reports whether name is an action whose results may key
// an aggregation.
func isKeyAction(name string) bool {
	switch name {
	case "stack", "ustack", "jstack", "sym", "func", "mod", "usym", "ufunc", "umod", "uaddr":
		return true
	}
	return false
}

// destructive reports whether x calls a destructive subroutine (copyout,
// copyoutstr), which makes its statement destructive.
func (c *Checker) destructive(x ast.Expr) bool {
	found := false
	ast.Inspect(x, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if v := c.value(call); v != nil && v.Ident != nil && v.Ident.Kind == Func && v.Ident.Flags&FlagDestruct != 0 {
				found = true
			}
		}
		return !found
	})
	return found
}

func isAssignment(x ast.Expr) bool {
	switch e := x.(type) {
	case *ast.BinaryExpr:
		return e.Op.IsAssign()
	case *ast.UnaryExpr:
		switch e.Op {
		case token.PREINC, token.PREDEC, token.POSTINC, token.POSTDEC:
			return true
		}
	}
	return false
}

// order applies dt_stmt_append's rules: what may follow speculate()
// and commit().
func (c *Checker) order(pos token.Pos, kind actionKind) {
	if kind == actNone {
		return
	}
	st := &c.clauseActs
	switch kind {
	case actCommit:
		if st.commit {
			c.errorf(pos, diag.D_COMM_COMM, "commit( ) may not follow commit( )\n")
		}
		if st.data {
			c.errorf(pos, diag.D_COMM_DREC, "commit( ) may not follow data-recording action(s)\n")
		}
		st.commit = true
	case actAgg:
		if st.commit {
			c.errorf(pos, diag.D_AGG_COMM, "aggregating actions may not follow commit( )\n")
		}
		if st.speculate {
			c.errorf(pos, diag.D_AGG_SPEC, "aggregating actions may not follow speculate( )\n")
		}
		st.data = true
	case actSpeculate:
		if st.speculate {
			c.errorf(pos, diag.D_SPEC_SPEC, "speculate( ) may not follow speculate( )\n")
		}
		if st.commit {
			c.errorf(pos, diag.D_SPEC_COMM, "speculate( ) may not follow commit( )\n")
		}
		if st.data {
			c.errorf(pos, diag.D_SPEC_DREC, "speculate( ) may not follow data-recording action(s)\n")
		}
		st.speculate = true
	case actDestruct:
		if st.speculate {
			c.errorf(pos, diag.D_ACT_SPEC, "destructive actions may not follow speculate( )\n")
		}
	case actExit, actData:
		if kind == actExit && st.speculate {
			c.errorf(pos, diag.D_EXIT_SPEC, "exit( ) may not follow speculate( )\n")
		}
		if st.commit {
			c.errorf(pos, diag.D_DREC_COMM, "data-recording actions may not follow commit( )\n")
		}
		st.data = true
	}
}

// clauseActions is what a clause's statements so far have done.
type clauseActions struct {
	commit, speculate, data bool
}

// aggregation checks the arguments of an aggregating function, as
// dt_compile_agg does.
func (c *Checker) aggregation(b *ast.BinaryExpr) {
	call := b.Y.(*ast.CallExpr)
	fn := c.value(call).Ident
	args := call.Args
	pos := ast.DiagPos(call)
	argv := func(i int) *Value { return c.value(args[i]) }
	if len(args) > 0 && dof.ActKind(fn.ID) != dof.AggCount {
		if !types.IsScalar(argv(0).Type) {
			c.errorf(ast.DiagPos(args[0]), diag.D_AGG_SCALAR, "%s( ) argument #1 must be of scalar type\n", fn.Name)
		}
	}
	incr := -1
	switch dof.ActKind(fn.ID) {
	case dof.AggQuantize:
		incr = 1
	case dof.AggLQuantize:
		c.lquantize(pos, b, args)
		incr = 4
	case dof.AggLLQuantize:
		c.llquantize(pos, b, args)
		incr = 5
	}
	if incr >= 0 {
		if len(args) > incr {
			if !types.IsScalar(argv(incr).Type) {
				c.errorf(ast.DiagPos(args[incr]), diag.D_PROTO_ARG, "%s( ) increment value (argument #%d) must be of scalar type\n", fn.Name, incr+1)
			}
		}
		if len(args) > incr+1 {
			c.errorf(pos, diag.D_PROTO_LEN, "%s( ) prototype mismatch: %d args passed, at most %d expected", fn.Name, len(args), incr+1)
		}
	}
}

// intConst returns the value of a constant integer argument.
func (c *Checker) intConst(e ast.Expr) (int64, bool) {
	v := c.value(e)
	if v == nil || !v.Const || !types.IsInteger(v.Type) {
		return 0, false
	}
	return int64(v.Int), true
}

func (c *Checker) lquantize(pos token.Pos, b *ast.BinaryExpr, args []ast.Expr) {
	base, ok := c.intConst(args[1])
	if !ok {
		c.errorf(ast.DiagPos(args[1]), diag.D_LQUANT_BASETYPE, "lquantize( ) argument #1 must be an integer constant\n")
	}
	if base != int64(int32(base)) {
		c.errorf(ast.DiagPos(args[1]), diag.D_LQUANT_BASEVAL, "lquantize( ) argument #1 must be a 32-bit quantity\n")
	}
	limit, ok := c.intConst(args[2])
	if !ok {
		c.errorf(ast.DiagPos(args[2]), diag.D_LQUANT_LIMTYPE, "lquantize( ) argument #2 must be an integer constant\n")
	}
	if limit != int64(int32(limit)) {
		c.errorf(ast.DiagPos(args[2]), diag.D_LQUANT_LIMVAL, "lquantize( ) argument #2 must be a 32-bit quantity\n")
	}
	if limit < base {
		c.errorf(pos, diag.D_LQUANT_MISMATCH, "lquantize( ) base (argument #1) must be less than limit (argument #2)\n")
	}
	step := int64(1)
	if len(args) > 3 {
		var ok bool
		step, ok = c.intConst(args[3])
		if !ok || step <= 0 {
			c.errorf(ast.DiagPos(args[3]), diag.D_LQUANT_STEPTYPE, "lquantize( ) argument #3 must be a non-zero positive integer constant\n")
		}
		if step > 1<<16-1 {
			c.errorf(ast.DiagPos(args[3]), diag.D_LQUANT_STEPVAL, "lquantize( ) argument #3 must be a 16-bit quantity\n")
		}
	}
	levels := (limit - base) / step
	if levels == 0 {
		c.errorf(pos, diag.D_LQUANT_STEPLARGE, "lquantize( ) step (argument #3) too large: must have at least one quantization level\n")
	}
	if levels > 1<<16-1 {
		c.errorf(pos, diag.D_LQUANT_STEPSMALL, "lquantize( ) step (argument #3) too small: number of quantization levels must be a 16-bit quantity\n")
	}
	agg := c.value(b).Ident
	params := []int64{base, limit, step}
	if agg.aggParams == nil {
		agg.aggParams = params
		return
	}
	for i, what := range []string{"base (argument #1)", "limit (argument #2)", "step (argument #3)"} {
		if agg.aggParams[i] != params[i] {
			tag := [...]diag.Tag{diag.D_LQUANT_MATCHBASE, diag.D_LQUANT_MATCHLIM, diag.D_LQUANT_MATCHSTEP}[i]
			c.errorf(pos, tag, "lquantize( ) %s doesn't match previous declaration: expected %d, found %d\n", what, agg.aggParams[i], params[i])
		}
	}
}

func (c *Checker) llquantize(pos token.Pos, b *ast.BinaryExpr, args []ast.Expr) {
	names := []string{"factor", "low magnitude", "high magnitude", "linear steps per magnitude"}
	typeTags := []diag.Tag{diag.D_LLQUANT_FACTORTYPE, diag.D_LLQUANT_LOWTYPE, diag.D_LLQUANT_HIGHTYPE, diag.D_LLQUANT_NSTEPTYPE}
	valTags := []diag.Tag{diag.D_LLQUANT_FACTORVAL, diag.D_LLQUANT_LOWVAL, diag.D_LLQUANT_HIGHVAL, diag.D_LLQUANT_NSTEPVAL}
	var p [4]int64
	for i := range 4 {
		v, ok := c.intConst(args[i+1])
		if !ok {
			c.errorf(ast.DiagPos(args[i+1]), typeTags[i], "llquantize( ) argument #%d (%s) must be an integer constant\n", i+1, names[i])
		}
		if v < 0 || v > 1<<16-1 {
			c.errorf(ast.DiagPos(args[i+1]), valTags[i], "llquantize( ) argument #%d (%s) must be an unsigned 16-bit quantity\n", i+1, names[i])
		}
		p[i] = v
	}
	factor, low, high, nsteps := p[0], p[1], p[2], p[3]
	if factor < 2 {
		c.errorf(pos, diag.D_LLQUANT_FACTORSMALL, "llquantize( ) factor (argument #1) must be two or more\n")
	}
	if low >= high {
		c.errorf(pos, diag.D_LLQUANT_MAGRANGE, "llquantize( ) high magnitude (argument #3) must be greater than low magnitude (argument #2)\n")
	}
	if nsteps < factor {
		c.errorf(pos, diag.D_LLQUANT_FACTORNSTEPS, "llquantize( ) factor (argument #1) must be less than or equal to the number of linear steps per magnitude (argument #4)\n")
	}
	if !evenSteps(factor, nsteps) {
		c.errorf(pos, diag.D_LLQUANT_FACTOREVEN, "llquantize( ) factor (argument #1) must evenly divide the number of steps per magnitude (argument #4), and the number of steps per magnitude must evenly divide a power of the factor\n")
	}
	pow := uint64(1)
	for range high + 1 {
		next := pow * uint64(factor)
		if next/uint64(factor) != pow {
			c.errorf(pos, diag.D_LLQUANT_MAGTOOBIG, "llquantize( ) factor (%d) raised to power of high magnitude (%d) overflows 64-bits\n", factor, high)
		}
		pow = next
	}
	agg := c.value(b).Ident
	params := p[:]
	if agg.aggParams == nil {
		agg.aggParams = params
		return
	}
	for i := range 4 {
		if agg.aggParams[i] != params[i] {
			tag := [...]diag.Tag{diag.D_LLQUANT_FACTORMATCH, diag.D_LLQUANT_LOWMATCH, diag.D_LLQUANT_HIGHMATCH, diag.D_LLQUANT_NSTEPMATCH}[i]
			c.errorf(pos, tag, "llquantize( ) %s (argument #%d) doesn't match previous declaration: expected %d, found %d\n", names[i], i+1, agg.aggParams[i], params[i])
		}
	}
}

// evenSteps is llquantize's rule: the factor divides the steps per
// magnitude, and the steps divide a power of the factor.
func evenSteps(factor, nsteps int64) bool {
	if factor <= 0 || nsteps%factor != 0 {
		return false
	}
	for p := factor; p > 0 && p < 1<<40; p *= factor {
		if p%nsteps == 0 {
			return true
		}
	}
	return false
}

// action checks an action's arguments beyond its prototype, as
// dt_compile_fun does, and returns its kind for the ordering rules.
func (c *Checker) action(call *ast.CallExpr, fn *Ident) actionKind {
	args := call.Args
	pos := ast.DiagPos(call)
	argv := func(i int) *Value { return c.value(args[i]) }
	kind := actData
	if fn.Flags&FlagDestruct != 0 {
		kind = actDestruct
	}
	switch fn.ID {
	case dof.DActTrace, dof.DActPrint:
		a := argv(0)
		voidTag, dynTag, aggTag, hint := diag.D_TRACE_VOID, diag.D_TRACE_DYN, diag.D_TRACE_AGG, ""
		if fn.ID == dof.DActPrint {
			voidTag, dynTag, aggTag, hint = diag.D_PRINT_VOID, diag.D_PRINT_DYN, diag.D_PRINT_AGG, " -- did you mean printa()?"
		}
		switch {
		case types.IsVoid(a.Type):
			c.errorf(ast.DiagPos(args[0]), voidTag, "%s( ) may not be applied to a void expression\n", fn.Name)
		case a.Ident != nil && a.Ident.Kind == XlatePtr:
			c.errorf(ast.DiagPos(args[0]), dynTag, "%s( ) may not be applied to a translated pointer\n", fn.Name)
		case a.Ident != nil && a.Ident.Kind == Agg:
			c.errorf(ast.DiagPos(args[0]), aggTag, "%s( ) may not be applied to an aggregation%s\n", fn.Name, hint)
		}
	case dof.DActTracemem:
		a := argv(0)
		if !types.IsInteger(a.Type) && !isPointer(a.Type) {
			c.errorf(ast.DiagPos(args[0]), diag.D_TRACEMEM_ADDR, "tracemem( ) argument #1 is incompatible with prototype:\n\tprototype: pointer or integer\n\t argument: %s\n", typeName(a))
		}
		if n, ok := c.intConst(args[1]); !ok || n <= 0 {
			c.errorf(ast.DiagPos(args[1]), diag.D_TRACEMEM_SIZE, "tracemem( ) argument #2 must be a non-zero positive integral constant expression\n")
		}
		if len(args) > 3 {
			c.errorf(pos, diag.D_TRACEMEM_ARGS, "tracemem ( ) prototype mismatch: expected at most 3 args\n")
		}
		if len(args) == 3 && !types.IsScalar(argv(2).Type) {
			c.errorf(ast.DiagPos(args[2]), diag.D_TRACEMEM_DYNSIZE, "tracemem ( ) dynamic size (argument #3) must be of scalar type\n")
		}
	case dof.DActPrintf, dof.DActSystem, dof.DActFreopen, dof.DActPrinta:
		c.printf(call, fn)
	case dof.DActStack:
		if len(args) > 1 {
			c.errorf(pos, diag.D_STACK_PROTO, "stack( ) prototype mismatch: too many arguments\n")
		}
		if len(args) == 1 {
			if n, ok := c.intConst(args[0]); !ok || n <= 0 {
				c.errorf(ast.DiagPos(args[0]), diag.D_STACK_SIZE, "stack( ) size must be a non-zero positive integral constant expression\n")
			}
		}
	case dof.DActUstack, dof.DActJstack:
		if len(args) > 2 {
			c.errorf(pos, diag.D_USTACK_PROTO, "%s( ) prototype mismatch: too many arguments\n", fn.Name)
		}
		if len(args) > 0 {
			if n, ok := c.intConst(args[0]); !ok || n <= 0 {
				c.errorf(ast.DiagPos(args[0]), diag.D_USTACK_FRAMES, "%s( ) argument #1 must be a non-zero positive integer constant\n", fn.Name)
			}
		}
		if len(args) > 1 {
			if n, ok := c.intConst(args[1]); !ok || n < 0 {
				c.errorf(ast.DiagPos(args[1]), diag.D_USTACK_STRSIZE, "%s( ) argument #2 must be a positive integer constant\n", fn.Name)
			}
		}
	case dof.DActClear:
		if len(args) != 1 {
			c.errorf(pos, diag.D_CLEAR_PROTO, "%s( ) prototype mismatch: %d args passed, 1 expected\n", fn.Name, len(args))
		}
		c.aggArg(args[0], fn, diag.D_CLEAR_AGGARG, diag.D_CLEAR_AGGBAD)
	case dof.DActNormalize, dof.DActDenormalize:
		want := 2
		if fn.ID == dof.DActDenormalize {
			want = 1
		}
		if len(args) != want {
			c.errorf(pos, diag.D_NORMALIZE_PROTO, "%s( ) prototype mismatch: %d args passed, %d expected\n", fn.Name, len(args), want)
		}
		c.aggArg(args[0], fn, diag.D_NORMALIZE_AGGARG, diag.D_NORMALIZE_AGGBAD)
		if want == 2 && !types.IsScalar(argv(1).Type) {
			c.errorf(ast.DiagPos(args[1]), diag.D_NORMALIZE_SCALAR, "%s( ) argument #2 must be of scalar type\n", fn.Name)
		}
	case dof.DActTrunc:
		switch {
		case len(args) == 0:
			c.errorf(pos, diag.D_TRUNC_PROTO, "%s( ) prototype mismatch: %d args passed, %s expected\n", fn.Name, len(args), "at least 1")
		case len(args) > 2:
			c.errorf(pos, diag.D_TRUNC_PROTO, "%s( ) prototype mismatch: %d args passed, %s expected\n", fn.Name, len(args), "no more than 2")
		}
		c.aggArg(args[0], fn, diag.D_TRUNC_AGGARG, diag.D_TRUNC_AGGBAD)
		if len(args) == 2 && !types.IsScalar(argv(1).Type) {
			c.errorf(ast.DiagPos(args[1]), diag.D_TRUNC_SCALAR, "%s( ) argument #2 must be of scalar type\n", fn.Name)
		}
	case dof.DActSpeculate:
		kind = actSpeculate
	case dof.DActCommit:
		kind = actCommit
	case dof.DActDiscard:
		kind = actDiscard
	case dof.DActExit:
		kind = actExit
	}
	if kind == actDiscard {
		return actNone
	}
	return kind
}

// aggArg checks that an action's argument names an aggregation that
// exists.
func (c *Checker) aggArg(arg ast.Expr, fn *Ident, argTag, badTag diag.Tag) {
	v := c.value(arg)
	if v.Ident == nil || v.Ident.Kind != Agg {
		c.errorf(ast.DiagPos(arg), argTag, "%s( ) argument #1 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: %s\n", fn.Name, typeName(v))
	}
	if v.Ident.AggFunc == nil {
		c.errorf(ast.DiagPos(arg), badTag, "undefined aggregation: @%s\n", v.Ident.Name)
	}
}

// printf checks the calls of printf, printa, system and freopen with
// package printf, which knows dt_printf's rules, and records the
// checked format for the code generator.
func (c *Checker) printf(call *ast.CallExpr, fn *Ident) {
	args := make([]printf.Arg, len(call.Args))
	for i, a := range call.Args {
		v := c.value(a)
		args[i] = printf.Arg{Type: v.Type, TypeName: typeName(v)}
		if s, ok := a.(*ast.StringLit); ok {
			args[i].Const, args[i].Value = true, s.Value
		}
		if id := v.Ident; id != nil && id.Kind == Agg {
			agg := &printf.Aggregation{Name: id.Name, Undefined: id.AggFunc == nil}
			if id.AggFunc != nil {
				agg.Func = id.AggFunc.Name
			}
			for _, k := range id.Keys {
				agg.Keys = append(agg.Keys, printf.Arg{Type: k, TypeName: typeString(k)})
			}
			args[i].Agg = agg
		}
	}
	f, err := printf.CheckCall(printf.Action{Name: fn.Name, Target: c.cfg.Target}, args)
	if err != nil {
		// dt_action_printflike sets dtrace's line to the call's before
		// it checks the format, whichever argument is at fault.
		pos := ast.DiagPos(call)
		var pe *printf.Error
		if errors.As(err, &pe) {
			c.errorf(pos, pe.Tag, "%s", pe.Msg)
		}
		c.errorf(pos, diag.D_UNKNOWN, "%v", err)
	}
	if f != nil {
		c.formats[call] = f
	}
}
