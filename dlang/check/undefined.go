package check

import (
	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/dlang/printf"
)

// OnUndefined sets a function the checker calls with a name that is no
// identifier or type it knows, before it reports the name undefined. If
// the function then defines the name (it may check more programs with
// this checker: a library that defines it), it returns true and the
// name is looked up again. Package library uses it to compile the
// libraries that depend on the kernel's types only when a script needs
// them, which keeps compiling a script that needs none fast.
func (c *Checker) OnUndefined(f func(name string) bool) {
	c.undefined = f
}

// Refuse names identifiers that the system's libraries leave undefined
// on purpose, each with why (why returns a name's reason, and whether
// it is refused): a program that names one fails to resolve it, as
// dtrace says of any undefined name, and the message adds the reason.
// It is asked only when a name is undefined. Package library gives the
// names kdtrace's own libraries leave out on Linux, such as illumos's
// /proc flags Linux has no counterpart for.
func (c *Checker) Refuse(why func(name string) (string, bool)) {
	c.refused = why
}

// checkState is what checking a program holds, saved while the
// undefined-name function checks others.
type checkState struct {
	prog       *ast.Program
	info       *Info
	declared   map[ast.Decl]bool
	locals     *scope
	file       string
	inClause   bool
	probeArgs  []types.Type
	probeXArgs []string
	probeDesc  string
	clauseActs clauseActions
	inlineArgs map[string]*Ident
	label      string
	err        *diag.Error
	values     map[ast.Expr]*Value
	formats    map[*ast.CallExpr]*printf.Format
	scratch    Variant
}

// define asks the undefined-name function to define name, and reports
// whether it did.
func (c *Checker) define(name string) bool {
	if c.undefined == nil || c.defining {
		return false
	}
	st := checkState{c.prog, c.info, c.declared, c.locals, c.file, c.inClause, c.probeArgs,
		c.probeXArgs, c.probeDesc, c.clauseActs, c.inlineArgs, c.label, c.err, c.values, c.formats, c.scratch}
	c.defining = true
	c.inClause, c.inlineArgs, c.scratch = false, nil, Variant{}
	ok := c.undefined(name)
	c.defining = false
	c.prog, c.info, c.declared, c.locals, c.file, c.inClause = st.prog, st.info, st.declared, st.locals, st.file, st.inClause
	c.probeArgs, c.probeXArgs, c.probeDesc, c.clauseActs = st.probeArgs, st.probeXArgs, st.probeDesc, st.clauseActs
	c.inlineArgs, c.label, c.err = st.inlineArgs, st.label, st.err
	c.values, c.formats, c.scratch = st.values, st.formats, st.scratch
	return ok
}

// lookup finds a type by name, giving the undefined-name function its
// chance when there is none.
func (c *Checker) lookup(name string) (types.Type, error) {
	t, _, err := c.universe.Lookup(name)
	if err != nil && c.define(name) {
		t, _, err = c.universe.Lookup(name)
	}
	return t, err
}
