package emit

import (
	"fmt"
	"io"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/dof"
)

// Config holds what code generation needs beyond the checked program.
type Config struct {
	// StringSize is the size of D's string type; 0 means 256.
	StringSize int64
	// Types numbers the types of print()'s values: the format of its
	// record is the reference to its type, which the consumer resolves
	// in the same table. Nil gives the emitter a table of its own,
	// whose references no consumer resolves: print() then prints as
	// trace() does.
	Types *types.Table
}

// Program generates the ECBs of a checked program: one per clause and
// probe description, in program order. It returns the first error, a
// *diag.Error.
func Program(prog *ast.Program, info *check.Info, cfg *Config) (*dof.Program, error) {
	e := NewEmitter(prog, cfg)
	for _, d := range prog.Decls {
		if cl, ok := d.(*ast.Clause); ok {
			if err := e.Clause(cl, info); err != nil {
				return nil, err
			}
		}
	}
	return e.Finish(info)
}

// An Emitter generates a program's ECBs clause by clause, in the order
// the clauses are given, so that code can be generated as each clause is
// checked (check.Checker.CheckClauses) and a large program never holds
// the checker's results for all its clauses at once.
type Emitter struct {
	e    emitter
	prog *dof.Program
	// deferred are the clauses whose code spilled registers before the
	// program's clause-local variables were all known: spill slots are
	// numbered after them (check.Info.NextLocal), so these are
	// generated again by Finish. Few expressions need a spill.
	deferred []deferredClause
}

type deferredClause struct {
	cl   *ast.Clause
	info *check.Info // the clause's results, kept (check.Info.Clone)
	ecb  int         // its first ECB in the program
}

// NewEmitter returns an emitter of the clauses of prog, which it counts
// so that the list of ECBs of a program of many clauses is made to size.
func NewEmitter(prog *ast.Program, cfg *Config) *Emitter {
	ecbs := 0
	for _, d := range prog.Decls {
		if cl, ok := d.(*ast.Clause); ok {
			ecbs += len(cl.Probes)
		}
	}
	if cfg == nil {
		cfg = &Config{}
	}
	strsize := cfg.StringSize
	if strsize == 0 {
		strsize = 256
	}
	tb := cfg.Types
	if tb == nil {
		tb = new(types.Table)
	}
	return &Emitter{e: emitter{strsize: strsize, types: tb}, prog: &dof.Program{ECBs: make([]dof.ECB, 0, ecbs)}}
}

// Clause generates the ECBs of clause cl, checked with the results in
// info, and adds them to the program. It returns the first error, a
// *diag.Error.
func (m *Emitter) Clause(cl *ast.Clause, info *check.Info) error {
	e := &m.e
	e.info, e.spilled = info, false
	ecbs, err := e.clause(cl)
	e.info = nil
	if err != nil {
		return err
	}
	if e.spilled && info.NextLocal == 0 {
		m.deferred = append(m.deferred, deferredClause{cl, info.Clone(), len(m.prog.ECBs)})
	}
	m.prog.ECBs = append(m.prog.ECBs, ecbs...)
	return nil
}

// Finish returns the program, once info, the checker's results for the
// whole program, gives its clause-local variables.
func (m *Emitter) Finish(info *check.Info) (*dof.Program, error) {
	e := &m.e
	for _, d := range m.deferred {
		d.info.NextLocal = info.NextLocal
		e.info = d.info
		ecbs, err := e.clause(d.cl)
		if err != nil {
			return nil, err
		}
		copy(m.prog.ECBs[d.ecb:], ecbs)
	}
	e.info, m.deferred = nil, nil
	return m.prog, nil
}

type emitter struct {
	info    *check.Info
	strsize int64
	types   *types.Table // the types print() records (Config.Types)
	// variant is the clause's variant being generated, nil for what
	// checking it for its first probe description gave (check.Variant).
	variant *check.Variant
	gen     gen          // the DIFO's generator (newGen)
	ir      dif.IR       // the DIFO being generated (newGen)
	obj     dif.Object   // the DIFO assembled (gen.finish)
	conv    dof.DIFO     // the DIFO converted (toDOF)
	acts    []dof.Action // the clause's actions (body)
	difos   dof.Pool     // the program's DIFOs (toDOF)
	consts  map[[2]uint64]*dof.DIFO
	// printas numbers the program's printa statements: their actions
	// carry it, as dtrace's carry their statement (dtad_uarg), so that
	// the consumer knows which aggregations one printa prints.
	printas uint64
	// spilled is set when the clause being generated uses a spill slot.
	spilled bool
}

// value returns what the checker gave x in the clause being generated.
func (e *emitter) value(x ast.Expr) *check.Value { return e.info.Value(e.variant, x) }

// difo generates a DIFO that returns the value of x.
func (e *emitter) difo(x ast.Expr) (*dof.DIFO, error) {
	g := e.newGen()
	obj, err := g.build(func() (*dif.Object, error) {
		r := g.expr(x)
		v := g.value(x)
		t := v.Type
		if v.Ident != nil && v.Ident.Kind == check.XlateSOU {
			// *xlate<T *>(x) is the struct T, built in scratch
			// memory, as dt_cook_op1 types it.
			t = v.Ident.Type
		}
		return g.finish(r, g.difType(t, v.Flags))
	})
	if err != nil {
		return nil, err
	}
	return e.toDOF(obj), nil
}

// difoSized generates a DIFO that returns the value of x as an integer
// of size bytes, what the kernel requires of the actions that take an
// integer: exit()'s status (32 bits), sym()'s address (64).
func (e *emitter) difoSized(x ast.Expr, size uint32) (*dof.DIFO, error) {
	g := e.newGen()
	obj, err := g.build(func() (*dif.Object, error) {
		r := g.expr(x)
		return g.finish(r, dif.IntType(size))
	})
	if err != nil {
		return nil, err
	}
	return e.toDOF(obj), nil
}

// effect generates a DIFO for a statement whose value is not recorded
// (an assignment): it returns a value of size 0.
func (e *emitter) effect(x ast.Expr) (*dof.DIFO, error) {
	g := e.newGen()
	obj, err := g.build(func() (*dif.Object, error) {
		r := g.expr(x)
		return g.finish(r, dif.Type{Kind: dif.TypeCTF})
	})
	if err != nil {
		return nil, err
	}
	return e.toDOF(obj), nil
}

// constant generates a DIFO that returns n (dt_action_difconst).
func (e *emitter) constant(n uint64) *dof.DIFO { return e.constantOf(n, 8) }

// constant32 is a constant of int's size (dt_int_rtype).
func (e *emitter) constant32(n uint64) *dof.DIFO { return e.constantOf(n, 4) }

func (e *emitter) constantOf(n uint64, size uint32) *dof.DIFO {
	// Aggregations and actions need the same few constants in every
	// clause: each is generated once.
	key := [2]uint64{n, uint64(size)}
	if d, ok := e.consts[key]; ok {
		return d
	}
	if e.consts == nil {
		e.consts = make(map[[2]uint64]*dof.DIFO)
	}
	e.consts[key] = e.genConstant(n, size)
	return e.consts[key]
}

func (e *emitter) genConstant(n uint64, size uint32) *dof.DIFO {
	g := e.newGen()
	obj, err := g.build(func() (*dif.Object, error) {
		return g.finish(g.setInt(n), dif.IntType(size))
	})
	if err != nil {
		panic(err) // a constant always assembles
	}
	return e.toDOF(obj)
}

// clause generates the ECBs of a clause, one per probe description, as
// dt_compile_one_clause does for each: a description's predicate and
// actions come from the clause as checked for that description. Those
// checked alike share their DIFOs.
func (e *emitter) clause(cl *ast.Clause) ([]dof.ECB, error) {
	type code struct {
		variant *check.Variant
		pred    *dof.DIFO
		acts    []dof.Action
	}
	// A clause has few variants: most have one.
	var buf [2]code
	done := buf[:0]
	ecbs := make([]dof.ECB, 0, len(cl.Probes))
	for i, d := range cl.Probes {
		e.variant = e.info.Variant(cl, i)
		j := 0
		for j < len(done) && done[j].variant != e.variant {
			j++
		}
		if j == len(done) {
			pred, acts, err := e.body(cl)
			if err != nil {
				return nil, err
			}
			done = append(done, code{e.variant, pred, acts})
		}
		ecbs = append(ecbs, dof.ECB{
			Probe:   dof.ProbeSpec{ID: d.ID, Provider: d.Provider, Module: d.Module, Function: d.Function, Name: d.Name},
			Pred:    done[j].pred,
			Actions: done[j].acts,
		})
	}
	e.variant = nil
	return ecbs, nil
}

// body generates a clause's predicate and actions.
func (e *emitter) body(cl *ast.Clause) (*dof.DIFO, []dof.Action, error) {
	var pred *dof.DIFO
	if cl.Pred != nil {
		var err error
		if pred, err = e.difo(cl.Pred); err != nil {
			return nil, nil, err
		}
	}
	// The actions are gathered in a list that serves every clause; the
	// clause keeps a copy made to size.
	acts := e.acts[:0]
	for _, s := range cl.Body {
		es, ok := s.(*ast.ExprStmt)
		if !ok {
			return nil, nil, diag.Errorf(s.Pos(), diag.D_UNKNOWN, "internal error: if statement left by the sugar pass")
		}
		as, err := e.statement(es.X)
		if err != nil {
			return nil, nil, err
		}
		acts = append(acts, as...)
	}
	e.acts = acts
	if len(acts) == 0 {
		return pred, nil, nil
	}
	return pred, append(make([]dof.Action, 0, len(acts)), acts...), nil
}

// statement generates the actions of one statement, as
// dt_compile_one_clause dispatches it.
func (e *emitter) statement(x ast.Expr) ([]dof.Action, error) {
	v := e.value(x)
	if v != nil && v.Ident != nil && v.Ident.Kind == check.Agg {
		if b, ok := x.(*ast.BinaryExpr); ok {
			return e.aggregation(b, v.Ident)
		}
	}
	if call, ok := x.(*ast.CallExpr); ok && v != nil && v.Ident != nil && v.Ident.Kind == check.ActFunc {
		return e.action(call, v.Ident)
	}
	// Any other expression is evaluated for its effects and its value
	// dropped: dt_compile_exp gives its DIFO the void return type, so
	// the Toolkit's "cond ? printf(...) : 1;" records nothing when the
	// condition folds to 0.
	d, err := e.effect(x)
	return []dof.Action{{Kind: dof.ActDIFExpr, DIFO: d}}, err
}

// aggregation generates @a[keys] = f(args): the aggregation's id and
// each key as tuple actions, then the aggregating action with its
// value, as dt_compile_agg does.
func (e *emitter) aggregation(b *ast.BinaryExpr, agg *check.Ident) ([]dof.Action, error) {
	call := b.Y.(*ast.CallExpr)
	fn := e.value(call).Ident
	acts := []dof.Action{{Kind: dof.ActDIFExpr, DIFO: e.constant(aggID(agg))}}
	if ix, ok := b.X.(*ast.IndexExpr); ok {
		for _, k := range ix.Index {
			// stack(), sym() and their kin record their own kind of
			// data in the tuple.
			if kc, ok := k.(*ast.CallExpr); ok {
				if kv := e.value(kc); kv != nil && kv.Ident != nil && kv.Ident.Kind == check.ActFunc {
					as, err := e.action(kc, kv.Ident)
					if err != nil {
						return nil, err
					}
					acts = append(acts, as...)
					continue
				}
			}
			d, err := e.difo(k)
			if err != nil {
				return nil, err
			}
			acts = append(acts, dof.Action{Kind: dof.ActDIFExpr, DIFO: d})
		}
	}
	// quantize()'s increment and lquantize()'s and llquantize()'s
	// weight end the tuple as an action of type void, whose value the
	// kernel passes to the aggregating function (dt_compile_agg).
	if n := weightArg(fn.ID); n > 0 && len(call.Args) > n {
		d, err := e.effect(call.Args[n])
		if err != nil {
			return nil, err
		}
		acts = append(acts, dof.Action{Kind: dof.ActDIFExpr, DIFO: d})
	}
	a := dof.Action{Kind: dof.ActKind(fn.ID), NTuple: uint32(len(acts)), UArg: aggID(agg)}
	if len(call.Args) > 0 {
		d, err := e.difo(call.Args[0])
		if err != nil {
			return nil, err
		}
		a.DIFO = d
	}
	switch dof.ActKind(fn.ID) {
	case dof.AggLQuantize:
		base, _ := e.intArg(call.Args[1])
		limit, _ := e.intArg(call.Args[2])
		step := int64(1)
		if len(call.Args) > 3 {
			step, _ = e.intArg(call.Args[3])
		}
		levels := (limit - base) / step
		// DTRACE_LQUANTIZE_STEP/LEVELS/BASE packed as dtrace packs them.
		a.Arg = uint64(step)<<48 | uint64(levels)<<32 | uint64(uint32(int32(base)))
	case dof.AggLLQuantize:
		var p [4]int64
		for i := range p {
			p[i], _ = e.intArg(call.Args[i+1])
		}
		a.Arg = uint64(p[0])<<48 | uint64(p[1])<<32 | uint64(p[2])<<16 | uint64(p[3])
	}
	return append(acts, a), nil
}

// weightArg returns the index of the argument of an aggregating
// function that is its increment or weight, 0 if it has none.
func weightArg(id uint32) int {
	switch dof.ActKind(id) {
	case dof.AggQuantize:
		return 1
	case dof.AggLQuantize:
		return 4
	case dof.AggLLQuantize:
		return 5
	}
	return 0
}

// aggID is an aggregation's id: dtrace numbers them from 1.
func aggID(agg *check.Ident) uint64 { return uint64(agg.ID) + 1 }

func (e *emitter) intArg(x ast.Expr) (int64, bool) {
	v := e.value(x)
	if v == nil || !v.Const {
		return 0, false
	}
	return int64(v.Int), true
}

// action generates the actions of a call of a D action.
func (e *emitter) action(call *ast.CallExpr, fn *check.Ident) ([]dof.Action, error) {
	one := func(kind dof.ActKind, arg ast.Expr) ([]dof.Action, error) {
		a := dof.Action{Kind: kind}
		if arg != nil {
			d, err := e.difo(arg)
			if err != nil {
				return nil, err
			}
			a.DIFO = d
		}
		return []dof.Action{a}, nil
	}
	args := call.Args
	first := func() ast.Expr {
		if len(args) > 0 {
			return args[0]
		}
		return nil
	}
	switch fn.ID {
	case dof.DActTrace:
		return one(dof.ActDIFExpr, args[0])
	case dof.DActExit:
		d, err := e.difoSized(args[0], 4)
		return []dof.Action{{Kind: dof.ActExit, DIFO: d}}, err
	case dof.DActSpeculate, dof.DActCommit, dof.DActDiscard, dof.DActRaise, dof.DActChill:
		return one(dof.ActionRecord(fn.ID), args[0])
	case dof.DActStop, dof.DActBreakpoint, dof.DActPanic:
		// dt_action_difconst: their DIFO returns 0.
		return []dof.Action{{Kind: dof.ActionRecord(fn.ID), DIFO: e.constant(0)}}, nil
	case dof.DActStack:
		frames := int64(0)
		if len(args) > 0 {
			frames, _ = e.intArg(args[0])
		}
		return []dof.Action{{Kind: dof.ActStack, Arg: uint64(frames)}}, nil
	case dof.DActUstack, dof.DActJstack:
		var frames, strsize int64
		if len(args) > 0 {
			frames, _ = e.intArg(args[0])
		}
		if len(args) > 1 {
			strsize, _ = e.intArg(args[1])
		}
		return []dof.Action{{Kind: dof.ActionRecord(fn.ID), Arg: uint64(strsize)<<32 | uint64(uint32(frames))}}, nil
	case dof.DActSym, dof.DActMod, dof.DActUsym, dof.DActUmod, dof.DActUaddr:
		d, err := e.difoSized(first(), 8)
		return []dof.Action{{Kind: dof.ActionRecord(fn.ID), DIFO: d}}, err
	case dof.DActPrint:
		// The type travels as dt_action_print sends it: a reference in
		// the format of the DIFEXPR record.
		acts, err := one(dof.ActDIFExpr, args[0])
		if err == nil {
			v := e.value(args[0])
			t := v.Type
			if v.Ident != nil && v.Ident.Kind == check.XlateSOU {
				t = v.Ident.Translator().Out
			}
			acts[0].Format = e.types.Ref(t)
		}
		return acts, err
	case dof.DActTracemem:
		acts, err := one(dof.ActTraceMem, args[0])
		if err != nil {
			return nil, err
		}
		size, _ := e.intArg(args[1])
		acts[0].Arg = uint64(size)
		if len(args) > 2 {
			dyn, err := one(dof.ActTraceMemDynSize, args[2])
			if err != nil {
				return nil, err
			}
			acts = append(acts, dyn...)
		}
		return acts, nil
	case dof.DActPrinta:
		return e.printa(call)
	case dof.DActClear, dof.DActDenormalize:
		return e.libact(fn.ID, args[0], nil)
	case dof.DActNormalize:
		return e.libact(fn.ID, args[0], args[1])
	case dof.DActTrunc:
		var n ast.Expr
		if len(args) > 1 {
			n = args[1]
		}
		return e.libact(fn.ID, args[0], n)
	case dof.DActSetopt:
		return e.setopt(args)
	case dof.DActFtruncate:
		// A library action needs a DIFO; ftruncate's returns a 0 the
		// library ignores.
		return []dof.Action{{Kind: dof.ActLibAct, Arg: dof.DActFtruncate, DIFO: e.constant(0)}}, nil
	case dof.DActPrintm:
		acts, err := one(dof.ActPrintm, args[1])
		if err != nil {
			return nil, err
		}
		size, _ := e.intArg(args[0])
		acts[0].Arg = uint64(size)
		return acts, nil
	case dof.DActPrintf, dof.DActSystem, dof.DActFreopen:
		return e.printf(call, dof.ActionRecord(fn.ID))
	}
	return nil, diag.Errorf(call.Pos(), diag.D_UNKNOWN, "tracing function %s( ) is not yet supported", fn.Name)
}

// printf generates printf-like actions: one per argument after the
// format, the first carrying the format, or one without a value when
// there are no arguments (dt_action_printflike).
func (e *emitter) printf(call *ast.CallExpr, kind dof.ActKind) ([]dof.Action, error) {
	format := ""
	if f := e.info.Format(e.variant, call); f != nil {
		format = f.String()
	}
	var acts []dof.Action
	for _, a := range call.Args[1:] {
		d, err := e.difo(a)
		if err != nil {
			return nil, err
		}
		acts = append(acts, dof.Action{Kind: kind, DIFO: d})
	}
	if len(acts) == 0 {
		// With no argument, dtrace's one action returns 0.
		acts = append(acts, dof.Action{Kind: kind, DIFO: e.constant32(0)})
	}
	// dt_dof gives every printf-like action of the statement its
	// format.
	for i := range acts {
		acts[i].Format = format
	}
	return acts, nil
}

// printa generates one PRINTA action per aggregation, returning its id,
// the first carrying the format (dt_action_printa).
func (e *emitter) printa(call *ast.CallExpr) ([]dof.Action, error) {
	format := ""
	if f := e.info.Format(e.variant, call); f != nil {
		format = f.String()
	}
	var acts []dof.Action
	e.printas++
	for _, a := range call.Args {
		v := e.value(a)
		if v == nil || v.Ident == nil || v.Ident.Kind != check.Agg {
			continue // the format
		}
		acts = append(acts, dof.Action{Kind: dof.ActPrinta, DIFO: e.constant(aggID(v.Ident)), Format: format, UArg: e.printas})
	}
	return acts, nil
}

// libact generates an action the library carries out (clear, trunc,
// normalize, denormalize): the aggregation's id, then its operand when
// it has one, both LIBACT with the DT_ACT_* code.
func (e *emitter) libact(code uint32, aggArg, operand ast.Expr) ([]dof.Action, error) {
	agg := e.value(aggArg).Ident
	acts := []dof.Action{{Kind: dof.ActLibAct, Arg: uint64(code), DIFO: e.constant(aggID(agg))}}
	switch {
	case operand != nil:
		d, err := e.difo(operand)
		if err != nil {
			return nil, err
		}
		acts = append(acts, dof.Action{Kind: dof.ActLibAct, Arg: uint64(code), DIFO: d})
	case code == dof.DActTrunc:
		// trunc(@a) keeps no entries.
		acts = append(acts, dof.Action{Kind: dof.ActLibAct, Arg: uint64(code), DIFO: e.constant(0)})
	}
	return acts, nil
}

// setopt generates the two LIBACT actions of setopt(): the option's
// name and its value ("" when none is given).
func (e *emitter) setopt(args []ast.Expr) ([]dof.Action, error) {
	var acts []dof.Action
	for i := range 2 {
		a := dof.Action{Kind: dof.ActLibAct, Arg: dof.DActSetopt}
		if i < len(args) {
			d, err := e.difo(args[i])
			if err != nil {
				return nil, err
			}
			a.DIFO = d
		} else {
			a.DIFO = e.str("")
		}
		acts = append(acts, a)
	}
	return acts, nil
}

// str generates a DIFO that returns a string constant.
func (e *emitter) str(s string) *dof.DIFO {
	g := e.newGen()
	obj, err := g.build(func() (*dif.Object, error) {
		r := g.regs.alloc()
		g.ir.Sets(s, r)
		return g.finish(r, dif.StringType(uint32(e.strsize)))
	})
	if err != nil {
		panic(err) // a string constant always assembles
	}
	return e.toDOF(obj)
}

// toDOF converts an assembled DIFO to the form DOF carries, shared with
// the equal DIFOs of the program: most of a large program's are alike.
// It is converted into e.conv, whose tables serve every DIFO, and the
// pool keeps a copy only of one it does not have.
func (e *emitter) toDOF(o *dif.Object) *dof.DIFO {
	d := &e.conv
	*d = dof.DIFO{
		Ret:   dofType(o.Ret),
		Ints:  o.Ints,
		Strs:  o.Strs,
		Code:  d.Code[:0],
		Vars:  d.Vars[:0],
		KRelo: d.KRelo[:0],
		URelo: d.URelo[:0],
	}
	for _, in := range o.Code {
		d.Code = append(d.Code, uint32(in))
	}
	for _, v := range o.Vars {
		d.Vars = append(d.Vars, dof.DIFVar{Name: v.Name, ID: v.ID, Kind: v.Kind, Scope: v.Scope, Flags: v.Flags, Type: dofType(v.Type)})
	}
	for _, r := range o.KRelo {
		d.KRelo = append(d.KRelo, dof.RelDesc{Name: r.Name, Type: dof.RelType(r.Type), Offset: r.Offset, Data: r.Data})
	}
	for _, r := range o.URelo {
		d.URelo = append(d.URelo, dof.RelDesc{Name: r.Name, Type: dof.RelType(r.Type), Offset: r.Offset, Data: r.Data})
	}
	return e.difos.Intern(d)
}

func dofType(t dif.Type) dof.DIFType {
	return dof.DIFType{Kind: t.Kind, CKind: t.CtfKind, Flags: t.Flags, Size: t.Size}
}

// Object returns a DIFO in the form package dif checks and lists.
func Object(d *dof.DIFO) *dif.Object {
	o := &dif.Object{Ints: d.Ints, Strs: d.Strs, Ret: difType(d.Ret)}
	for _, w := range d.Code {
		o.Code = append(o.Code, dif.Instr(w))
	}
	for _, v := range d.Vars {
		o.Vars = append(o.Vars, dif.Var{Name: v.Name, ID: v.ID, Kind: v.Kind, Scope: v.Scope, Flags: v.Flags, Type: difType(v.Type)})
	}
	for _, r := range d.KRelo {
		o.KRelo = append(o.KRelo, dif.Relo{Name: r.Name, Type: uint32(r.Type), Offset: r.Offset, Data: r.Data})
	}
	for _, r := range d.URelo {
		o.URelo = append(o.URelo, dif.Relo{Name: r.Name, Type: uint32(r.Type), Offset: r.Offset, Data: r.Data})
	}
	return o
}

func difType(t dof.DIFType) dif.Type {
	return dif.Type{Kind: t.Kind, CtfKind: t.CKind, Flags: t.Flags, Size: t.Size}
}

// List prints the DIF of every ECB of p as dtrace -S does: each
// predicate and action DIFO, with its tables.
func List(w io.Writer, p *dof.Program) error {
	for _, ecb := range p.ECBs {
		if ecb.Pred != nil {
			if err := dif.Disassemble(w, Object(ecb.Pred), ecb.Probe.String()+" predicate"); err != nil {
				return err
			}
		}
		for i, a := range ecb.Actions {
			if a.DIFO == nil {
				continue
			}
			title := fmt.Sprintf("%s action %d (%s)", ecb.Probe, i+1, a.Kind)
			if err := dif.Disassemble(w, Object(a.DIFO), title); err != nil {
				return err
			}
		}
	}
	return nil
}
