package dtrace

import (
	"io"
	"runtime"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dlang/header"
)

// DOF returns the programs' ECBs as one DOF object, as dtrace -G
// writes it.
func DOF(progs ...*Program) ([]byte, error) {
	n := 0
	for _, p := range progs {
		if p.object != nil {
			n += len(p.object.ECBs)
		}
	}
	all := dof.Program{ECBs: make([]dof.ECB, 0, n)}
	for _, p := range progs {
		if p.object != nil {
			all.ECBs = append(all.ECBs, p.object.ECBs...)
		}
	}
	return dof.Write(&all, nil)
}

// WriteHeader writes the C header for the providers the programs
// define, as dtrace -h does; name is the header's file name, which
// names its include guard. The programs are compiled with Header.
func (h *Handle) WriteHeader(w io.Writer, name string, progs ...*Program) error {
	all := &ast.Program{}
	for _, p := range progs {
		all.Decls = append(all.Decls, p.tree.Decls...)
	}
	return header.Write(w, all, name, h.headerStyle())
}

// HeaderName returns the name dtrace -h gives the header when no
// output file is named: the first script's, with .h for .d.
func HeaderName(progs ...*Program) (string, error) {
	for _, p := range progs {
		if p.Spec == Script {
			return header.OutputName(p.Source)
		}
	}
	return "", header.ErrNoOutputName
}

// headerStyle returns the form of -h's probe macros: -x headerstyle, or
// by default <sys/sdt.h>'s notes on Linux, where nothing links dtrace's
// stubs into probe points, and dtrace's stubs elsewhere.
func (h *Handle) headerStyle() header.Style {
	v, ok := h.opts.Value("headerstyle")
	switch {
	case v == "stubs":
		return header.Stubs
	case ok || runtime.GOOS == "linux":
		return header.Notes
	}
	return header.Stubs
}
