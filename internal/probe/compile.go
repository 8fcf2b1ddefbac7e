package probe

import (
	"errors"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
)

// Matcher answers the D compiler's questions about probe descriptions
// from a Catalog: it implements check.Probes, as dtrace's compiler asks
// the kernel (dtrace_probe_info) while it compiles each clause.
type Matcher struct {
	Catalog *Catalog
}

// Match reports the probes d matches, with their argument types when
// dtrace would vouch for them: native, and the types the provider
// translates them to (proc, sched and io). The pid providers' errors
// come back as *diag.Error with their D_PROC_* tags.
func (m Matcher) Match(d *ast.ProbeDesc) (check.ProbeMatch, error) {
	desc := Desc{Provider: d.Provider, Module: d.Module, Function: d.Function, Name: d.Name}
	if d.ID != 0 {
		// A probe given by its ID (Catalog.ID).
		p := m.Catalog.ByID(d.ID)
		if p == nil {
			return check.ProbeMatch{}, nil
		}
		desc = p.Desc()
	}
	info, err := m.Catalog.Info(desc)
	if err != nil {
		var pe *procError
		if errors.As(err, &pe) {
			if tag, ok := diag.LookupTag(pe.Tag); ok {
				return check.ProbeMatch{}, diag.Errorf(d.Pos(), tag, "%s", pe.Msg)
			}
		}
		return check.ProbeMatch{}, err
	}
	return check.ProbeMatch{
		Count: info.Matches,
		Typed: info.Matches > 0 && !info.Unstable,
		Args:  info.Args,
		XArgs: info.XArgs,
	}, nil
}
