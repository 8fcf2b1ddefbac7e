// Package sugar performs the syntactic rewrites dtrace does between
// parsing and compiling (libdtrace's dt_sugar), so that every later pass
// sees only clauses with a predicate and a flat list of statements:
//
//   - if/else statements become a sequence of clauses guarded by
//     clause-local condition variables (this->%condition_N) and a
//     thread-local error flag (self->%error), exactly as dt_sugar builds
//     them;
//   - kinst::f:entry and kinst::f:return descriptions of inline
//     functions become one kinst::caller:offset description per inline
//     copy, guarded as the pid provider's below, and kinst::f:N
//     descriptions are checked to name an instruction (see Kinst);
//   - pidN:object:f:entry and :return descriptions of a function the
//     compiler inlined or cloned become one pidN:object:caller:off
//     description per inline site, off in hex as the pid provider names
//     offset probes, plus the function's own out-of-line body and its
//     clones (see Pid); the return sites of a copy that can be reached
//     without running its entry fire only after it, through a
//     thread-local flag (see Guard).
//
// An Expander carries the state dtrace keeps per handle: the
// dtrace:::ERROR clause that sets self->%error is emitted once per run,
// before the first clause that needed splitting. Expand replaces each
// clause of a program by its expansion, in place, and leaves every other
// top-level item as it is.
package sugar

import (
	"fmt"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/constant"
	"github.com/kdtrace/kdtrace/dlang/token"
)

// An Expander rewrites the clauses of the programs of one run.
type Expander struct {
	// Kinst resolves kinst entry and return probes of inline functions
	// and checks kinst offsets. When nil, kinst descriptions are left as
	// written.
	Kinst Kinst
	// Pid finds the inline copies and clones of the functions that
	// pid entry and return descriptions name. When nil, pid
	// descriptions are left as written.
	Pid pid

	errorClause bool // the dtrace:::ERROR clause has been emitted

	guards   map[string]int // the inline rewrites' guards, by entry site
	decls    []ast.Decl     // the declarations of guards' flags, not yet emitted
	prologue []*ast.Clause  // the clauses keeping guards' flags, not yet emitted
	oks      int            // the guarded clauses so far
}

// Expand rewrites prog's clauses in place.
func (e *Expander) Expand(prog *ast.Program) error {
	var out []ast.Decl
	for _, d := range prog.Decls {
		c, ok := d.(*ast.Clause)
		if !ok {
			out = append(out, d)
			continue
		}
		cs, err := e.ExpandClause(c)
		if err != nil {
			return err
		}
		for _, c := range cs {
			out = append(out, c)
		}
	}
	// The guards' flags are kept before any clause of the program
	// reads them.
	first := e.decls
	for _, c := range e.prologue {
		first = append(first, c)
	}
	e.decls, e.prologue = nil, nil
	prog.Decls = append(first, out...)
	return nil
}

// ExpandClause returns the clauses that replace c, as dt_compile_sugar
// does.
func (e *Expander) ExpandClause(c *ast.Clause) ([]*ast.Clause, error) {
	probes := c.Probes
	var shared []guarded
	if e.Kinst != nil {
		var err error
		if probes, shared, err = e.expandKinst(probes); err != nil {
			return nil, err
		}
	}
	if e.Pid != nil {
		var pidShared []guarded
		var err error
		if probes, pidShared, err = e.expandPid(probes); err != nil {
			return nil, err
		}
		shared = append(shared, pidShared...)
	}
	pred := c.Pred
	var guards []*ast.Clause
	if len(shared) > 0 {
		guards, pred = e.guardClauses(probes, shared, pred)
	}
	if !hasIf(c.Body) {
		return append(guards, &ast.Clause{Probes: probes, Pred: pred, Body: c.Body, DiagPos: c.DiagPos}), nil
	}
	s := &splitter{probes: probes, pos: c.Pos()}
	cond := 0
	if pred != nil {
		cond = s.newCondition(pred, 0)
	}
	s.visitStmts(c.Body, cond)
	if s.conditions != 0 {
		clear := &ast.Clause{Probes: probes, Body: []ast.Stmt{s.setError(0)}}
		s.out = append([]*ast.Clause{clear}, s.out...)
	}
	if len(s.out) > 1 && !e.errorClause {
		e.errorClause = true
		errc := &ast.Clause{
			Probes: []*ast.ProbeDesc{{DescPos: s.pos, Provider: "dtrace", Name: "ERROR"}},
			Body:   []ast.Stmt{s.setError(1)},
		}
		s.out = append([]*ast.Clause{errc}, s.out...)
	}
	return append(guards, s.out...), nil
}

func hasIf(list []ast.Stmt) bool {
	for _, s := range list {
		if _, ok := s.(*ast.IfStmt); ok {
			return true
		}
	}
	return false
}

// splitter turns one clause with if statements into basic-block clauses.
type splitter struct {
	probes     []*ast.ProbeDesc
	pos        token.Pos
	conditions int // condition variables made so far
	out        []*ast.Clause
}

func (s *splitter) ident(name string) *ast.Ident { return &ast.Ident{NamePos: s.pos, Name: name} }

func (s *splitter) intLit(v uint64) *ast.IntLit {
	return &ast.IntLit{ValuePos: s.pos, Value: v, Type: ast.Int}
}

// errorVar is self->%error.
func (s *splitter) errorVar() ast.Expr {
	return &ast.SelectorExpr{X: s.ident("self"), Op: token.ARROW, Sel: s.ident("%error")}
}

// condVar is this->%condition_n.
func (s *splitter) condVar(n int) ast.Expr {
	return &ast.SelectorExpr{X: s.ident("this"), Op: token.ARROW, Sel: s.ident(fmt.Sprintf("%%condition_%d", n))}
}

// noError is !self->%error.
func (s *splitter) noError() ast.Expr {
	return &ast.UnaryExpr{OpPos: s.pos, Op: token.LNEG, X: s.errorVar()}
}

// setError is the statement self->%error = v.
func (s *splitter) setError(v uint64) ast.Stmt {
	return &ast.ExprStmt{X: &ast.BinaryExpr{X: s.errorVar(), OpPos: s.pos, Op: token.ASGN, Y: s.intLit(v)}}
}

// land builds x && y, folding two constants as dt_node_op2 would.
func (s *splitter) land(x, y ast.Expr) ast.Expr {
	if l, ok := x.(*ast.IntLit); ok {
		if r, ok := y.(*ast.IntLit); ok {
			v, _ := constant.Binary(token.LAND, l, r)
			v.ValuePos = s.pos
			return v
		}
	}
	return &ast.BinaryExpr{X: x, OpPos: s.pos, Op: token.LAND, Y: y}
}

// newCondition emits the clause that sets the next condition variable to
// pred under the enclosing condition cond (0 for none), and returns the
// variable's number.
func (s *splitter) newCondition(pred ast.Expr, cond int) int {
	s.conditions++
	n := s.conditions
	var v ast.Expr
	if cond == 0 {
		// The 1 && makes the value an int whatever pred's type: a
		// this-> variable may not change type between probes.
		v = s.land(s.intLit(1), pred)
	} else {
		v = s.land(s.condVar(cond), pred)
	}
	s.out = append(s.out, &ast.Clause{
		Probes: s.probes,
		Pred:   s.noError(),
		Body:   []ast.Stmt{&ast.ExprStmt{X: &ast.BinaryExpr{X: s.condVar(n), OpPos: s.pos, Op: token.ASGN, Y: v}}},
	})
	return n
}

// newBasicBlock emits a clause running stmts under condition cond.
func (s *splitter) newBasicBlock(cond int, stmts []ast.Stmt) {
	var pred ast.Expr
	switch {
	case cond > 0:
		pred = s.land(s.noError(), s.condVar(cond))
	case s.conditions > 0:
		pred = s.noError()
	}
	s.out = append(s.out, &ast.Clause{Probes: s.probes, Pred: pred, Body: stmts})
}

// visitStmts splits list into basic blocks at its if statements.
func (s *splitter) visitStmts(list []ast.Stmt, cond int) {
	var block []ast.Stmt
	for _, st := range list {
		ifs, ok := st.(*ast.IfStmt)
		if !ok {
			block = append(block, st)
			continue
		}
		if len(block) > 0 {
			s.newBasicBlock(cond, block)
			block = nil
		}
		s.doIf(ifs, cond)
	}
	if len(block) > 0 {
		s.newBasicBlock(cond, block)
	}
}

func (s *splitter) doIf(st *ast.IfStmt, cond int) {
	id := s.newCondition(st.Cond, cond)
	s.visitStmts(st.Then.List, id)
	if st.Else != nil && len(st.Else.List) > 0 {
		neg := &ast.UnaryExpr{OpPos: s.pos, Op: token.LNEG, X: s.condVar(id)}
		s.visitStmts(st.Else.List, s.newCondition(neg, cond))
	}
}
