package sugar

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
)

// pid answers what the pid rewrite needs to know about a process's
// objects: where a function of one of them was inlined, and which
// clones of it the compiler made. The dtrace package implements it
// over the objects a process maps and their DWARF, with package kinst's
// rules.
type pid interface {
	// Sites returns the probe sites of pidPID:module:fn:entry (ret
	// false) or :return (ret true). Nil Sites leave the description as
	// written: an object without debug information, a function its
	// DWARF does not know, a module the process does not map (which
	// the pid provider then reports).
	Sites(pid int, module, fn string, ret bool) (*Sites, error)
}

// pidFunction returns the process and function d names when it is a pid
// entry or return description of one function of one object: the
// provider is pid and a process ID (after $target's expansion), and the
// module and function are names, not patterns. A pattern is left to the
// pid provider, which matches it against the objects' symbols.
func pidFunction(d *ast.ProbeDesc) (pid int, ok bool) {
	if d.Name != "entry" && d.Name != "return" || d.Module == "" || d.Function == "" || isPattern(d.Module) || isPattern(d.Function) {
		return 0, false
	}
	digits, ok := strings.CutPrefix(d.Provider, "pid")
	if !ok || digits == "" || digits[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil || n <= 0 {
		return 0, false
	}
	return int(n), true
}

// expandPid rewrites the pid entry and return descriptions of functions
// the compiler inlined or cloned: each inline site becomes a
// pidN:module:caller:off description, off in hex as the pid provider
// names offset probes; the function's own out-of-line body keeps the
// description; each clone adds pidN:module:clone:entry or :return. The
// first description replaces the original, later ones are appended. A
// function neither inlined nor cloned is left as written.
func (e *Expander) expandPid(probes []*ast.ProbeDesc) ([]*ast.ProbeDesc, []guarded, error) {
	out := probes
	copied := false
	var shared []guarded
	for i, d := range probes {
		pid, ok := pidFunction(d)
		if !ok {
			continue
		}
		sites, err := e.Pid.Sites(pid, d.Module, d.Function, d.Name == "return")
		if err != nil {
			return nil, nil, diag.Errorf(d.DescPos, diag.D_PDESC_ZERO, "probe description %s does not match any probes: %v", d, err)
		}
		if sites == nil || !sites.Inline && len(sites.Clones) == 0 {
			continue
		}
		var descs []*ast.ProbeDesc
		if sites.OutOfLine {
			descs = append(descs, d)
		}
		for _, c := range sites.Clones {
			descs = append(descs, &ast.ProbeDesc{DescPos: d.DescPos, Provider: d.Provider, Module: d.Module, Function: c, Name: d.Name})
		}
		for _, s := range sites.Sites {
			descs = append(descs, commented(pidSite(d, s), s))
		}
		if len(descs) == 0 {
			return nil, nil, diag.Errorf(d.DescPos, diag.D_PDESC_ZERO, "probe description %s does not match any probes: no inline copy of %s can be probed", d, d.Function)
		}
		if !copied {
			out = append([]*ast.ProbeDesc(nil), probes...)
			copied = true
		}
		out[i] = descs[0]
		out = append(out, descs[1:]...)
		shared = e.guard(d, sites.Guards, pidSite, shared)
	}
	return out, shared, nil
}

// guarded is a site that fires only for a call in progress (a return
// site that code outside its inline calls also reaches) or only for
// none (an entry that a path from another entry of its call reaches),
// with the guards (flag numbers) of those calls.
type guarded struct {
	desc   *ast.ProbeDesc
	guards []int
	entry  bool // counts when no call is in progress
}

// pidSite is the description of a site of the process and object d
// names.
func pidSite(d *ast.ProbeDesc, s Site) *ast.ProbeDesc {
	return &ast.ProbeDesc{DescPos: d.DescPos, Provider: d.Provider, Module: d.Module, Function: s.Func, Name: strconv.FormatUint(s.Offset, 16)}
}

// guard numbers the guards of a description d, making the clauses
// that keep each guard's flag the first time it is met, and adds d's
// guarded sites to shared: for a return, its shared sites; for an
// entry, its repeated entries. site names a site as d's provider does
// (pidSite, kinstSite), so that the pid and kinst rewrites guard alike.
//
// The flag of guard N is self->%inl_N: the call's entries set it; at
// each of the call's exits, before any clause of the program, it moves
// into this->%inl_N, so that every clause of that firing sees whether
// the thread came through an entry, and the flag is clear for the next
// call. A repeated entry first copies the flag into this->%ine_N, so
// that it counts only when no call was in progress. The exits' clause
// comes first: a site can end one call and begin the next.
func (e *Expander) guard(d *ast.ProbeDesc, guards []Guard, site func(*ast.ProbeDesc, Site) *ast.ProbeDesc, shared []guarded) []guarded {
	pos := d.DescPos
	entry := d.Name == "entry"
	for _, g := range guards {
		if entry && len(g.Repeat) == 0 {
			continue // its entries count whatever the flag says
		}
		first := site(d, g.Entry)
		key := first.String()
		n, ok := e.guards[key]
		if !ok {
			if e.guards == nil {
				e.guards = map[string]int{}
			}
			n = len(e.guards) + 1
			e.guards[key] = n
			flag := func() ast.Expr { return selfVar(pos, fmt.Sprintf("%%inl_%d", n)) }
			descs := func(sites []Site) []*ast.ProbeDesc {
				var out []*ast.ProbeDesc
				for _, x := range sites {
					out = append(out, site(d, x))
				}
				return out
			}
			// The flag is declared first: the exits read it before
			// the entries set it.
			e.decls = append(e.decls, &ast.Declaration{
				Spec:    &ast.DeclSpec{SpecPos: pos, Class: ast.Self, Type: &ast.BasicType{WordPos: pos, Words: []string{"int"}}},
				Decls:   []*ast.Declarator{{NamePos: pos, Name: fmt.Sprintf("%%inl_%d", n), DiagPos: pos}},
				DiagPos: pos})
			if len(g.Exits) > 0 {
				e.prologue = append(e.prologue, &ast.Clause{Probes: descs(g.Exits), Body: []ast.Stmt{
					assign(pos, thisVar(pos, fmt.Sprintf("%%inl_%d", n)), flag()),
					assign(pos, flag(), intLit(pos, 0))}})
			}
			if len(g.Repeat) > 0 {
				e.prologue = append(e.prologue, &ast.Clause{Probes: descs(g.Repeat), Body: []ast.Stmt{
					assign(pos, thisVar(pos, fmt.Sprintf("%%ine_%d", n)), flag())}})
			}
			e.prologue = append(e.prologue, &ast.Clause{Probes: append([]*ast.ProbeDesc{first}, descs(g.Also)...), Body: []ast.Stmt{
				assign(pos, flag(), intLit(pos, 1))}})
		}
		list := g.Shared
		if entry {
			list = g.Repeat
		}
	next:
		for _, x := range list {
			sd := site(d, x)
			for k := range shared {
				if shared[k].desc.String() == sd.String() && shared[k].entry == entry {
					shared[k].guards = append(shared[k].guards, n)
					continue next
				}
			}
			shared = append(shared, guarded{desc: sd, guards: []int{n}, entry: entry})
		}
	}
	return shared
}

// guardClauses returns the clauses that compute this->%ok_K for the
// probes of one clause, 1 unless the probe is a guarded site whose
// guards all say no (a shared return site that the thread did not
// reach through its call's entry; a repeated entry reached while its
// call was in progress), and the clause's predicate with this->%ok_K
// added.
func (e *Expander) guardClauses(probes []*ast.ProbeDesc, shared []guarded, pred ast.Expr) ([]*ast.Clause, ast.Expr) {
	pos := shared[0].desc.DescPos
	e.oks++
	ok := func() ast.Expr { return thisVar(pos, fmt.Sprintf("%%ok_%d", e.oks)) }
	var sharedDescs []*ast.ProbeDesc
	for _, g := range shared {
		sharedDescs = append(sharedDescs, g.desc)
	}
	out := []*ast.Clause{
		{Probes: probes, Body: []ast.Stmt{assign(pos, ok(), intLit(pos, 1))}},
		{Probes: sharedDescs, Body: []ast.Stmt{assign(pos, ok(), intLit(pos, 0))}},
	}
	// One clause per guard, over its guarded sites among the clause's.
	type key struct {
		n     int
		entry bool
	}
	byGuard := map[key][]*ast.ProbeDesc{}
	var order []key
	for _, g := range shared {
		for _, n := range g.guards {
			k := key{n, g.entry}
			if _, seen := byGuard[k]; !seen {
				order = append(order, k)
			}
			byGuard[k] = append(byGuard[k], g.desc)
		}
	}
	for _, k := range order {
		var cond ast.Expr = thisVar(pos, fmt.Sprintf("%%inl_%d", k.n))
		if k.entry {
			cond = &ast.UnaryExpr{OpPos: pos, Op: token.LNEG, X: thisVar(pos, fmt.Sprintf("%%ine_%d", k.n))}
		}
		or := &ast.BinaryExpr{X: ok(), OpPos: pos, Op: token.LOR, Y: cond}
		out = append(out, &ast.Clause{Probes: byGuard[k], Body: []ast.Stmt{assign(pos, ok(), or)}})
	}
	if pred == nil {
		return out, ok()
	}
	return out, &ast.BinaryExpr{X: ok(), OpPos: pos, Op: token.LAND, Y: pred}
}

func selfVar(pos token.Pos, name string) ast.Expr {
	return &ast.SelectorExpr{X: &ast.Ident{NamePos: pos, Name: "self"}, Op: token.ARROW, Sel: &ast.Ident{NamePos: pos, Name: name}}
}

func thisVar(pos token.Pos, name string) ast.Expr {
	return &ast.SelectorExpr{X: &ast.Ident{NamePos: pos, Name: "this"}, Op: token.ARROW, Sel: &ast.Ident{NamePos: pos, Name: name}}
}

func intLit(pos token.Pos, v uint64) ast.Expr {
	return &ast.IntLit{ValuePos: pos, Value: v, Type: ast.Int}
}

func assign(pos token.Pos, x, y ast.Expr) ast.Stmt {
	return &ast.ExprStmt{X: &ast.BinaryExpr{X: x, OpPos: pos, Op: token.ASGN, Y: y}}
}
