package dtrace

import (
	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dof"
)

// Parts returns what a program keeps of its compilation, for the
// package's external tests.
func Parts(p *Program) (*ast.Program, *check.Info, *dof.Program) {
	return p.tree, p.info, p.object
}
