package dtrace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// ErrNoCatalog is the error of listing probes where the system's
// catalog of probes is not available.
var ErrNoCatalog = errors.New("no probes can be listed here: this system's catalog of probes is not available")

// ListProbes writes, in dtrace -l's format, the probes each probe
// description of the programs' clauses matches, in order, or every
// probe when no program is given; with verbose (-lv) each probe's
// attributes and argument types follow it. The programs are compiled
// with NoCode. A description that matches nothing is reported on
// Config.Stderr, as dtrace does, and the rest listed.
//
// Probes are numbered by Catalog.ID, so a probe has the same ID in every
// listing of one system, and -i or a description by ID names it.
func (h *Handle) ListProbes(out io.Writer, verbose bool, progs ...*Program) error {
	if err := h.setup(); err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	defer w.Flush()
	fmt.Fprintf(w, "%5s %10s %17s %33s %s\n", "ID", "PROVIDER", "MODULE", "FUNCTION", "NAME")
	if h.catalog == nil {
		return ErrNoCatalog
	}
	list := func(d probe.Desc) (int, error) {
		n := 0
		err := h.catalog.Walk(d, func(p *probe.Probe) bool {
			n++
			fmt.Fprintf(w, "%5d %10s %17s %33s %s\n", h.catalog.ID(p), p.Provider, p.Module, p.Function, p.Name)
			if verbose {
				h.writeProbeInfo(w, p)
			}
			return true
		})
		return n, err
	}
	if len(progs) == 0 {
		if _, err := list(probe.Desc{}); err != nil {
			return fmt.Errorf("failed to list probes: %v", err)
		}
		return nil
	}
	// As dtrace's stdio: the listing is line-buffered on a terminal,
	// so an error comes after the lines before it, and fully buffered
	// elsewhere, so errors come first.
	lines := false
	if f, ok := out.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			lines = true
		}
	}
	unmatched := func(d string, msg string) {
		if lines {
			w.Flush()
		}
		fmt.Fprintf(h.cfg.Stderr, "%s: failed to match %s: %s\n", h.cfg.Name, d, msg)
	}
	for _, prog := range progs {
		for _, d := range prog.tree.Decls {
			cl, ok := d.(*ast.Clause)
			if !ok {
				continue
			}
			for _, pd := range cl.Probes {
				desc := probe.Desc{Provider: pd.Provider, Module: pd.Module, Function: pd.Function, Name: pd.Name}
				if pd.ID != 0 {
					p := h.catalog.ByID(pd.ID)
					if p == nil {
						unmatched(fmt.Sprint(pd.ID), "No probe matches description")
						continue
					}
					desc = p.Desc()
				}
				n, err := list(desc)
				// dtrace's message for a description that matches
				// nothing is its EDT_NOPROBE text.
				switch {
				case err != nil:
					unmatched(desc.String(), err.Error())
				case n == 0:
					unmatched(desc.String(), "No probe matches description")
				}
			}
		}
	}
	return nil
}

// writeProbeInfo writes what dtrace -lv writes after a probe: the
// stability of its description and of its arguments, and their types,
// translated ones as programs see them.
func (h *Handle) writeProbeInfo(w io.Writer, p *probe.Probe) {
	var attr, arga probe.Attr
	if pv := h.catalog.Provider(p.Provider); pv != nil {
		a := pv.Attributes()
		// The fields a description gives lower its stability, as
		// dtrace_probe_info takes the least of them.
		attr, arga = a.Provider, a.Args
		for _, f := range []struct {
			s string
			a probe.Attr
		}{{p.Module, a.Module}, {p.Function, a.Function}, {p.Name, a.Name}} {
			if f.s != "" {
				attr = minAttr(attr, f.a)
			}
		}
	}
	fmt.Fprintf(w, "\n\tProbe Description Attributes\n")
	writeAttr(w, attr)
	fmt.Fprintf(w, "\n\tArgument Attributes\n")
	writeAttr(w, arga)
	fmt.Fprintf(w, "\n\tArgument Types\n")
	args, err := p.Args()
	if err != nil {
		args = nil
	}
	for i, t := range args {
		name := "(unknown)"
		if i < len(p.XArgs) && p.XArgs[i] != "" {
			name = p.XArgs[i]
		} else if t != nil {
			name = t.String()
		}
		fmt.Fprintf(w, "\t\targs[%d]: %s\n", i, name)
	}
	if len(args) == 0 {
		fmt.Fprintf(w, "\t\tNone\n")
	}
	h.writeLocals(w, p)
	fmt.Fprintf(w, "\n")
}

// writeLocals writes, for a kinst probe or a pid probe in a function
// (not a return), the variables locals-> may read there, with their
// types, and why each that it may not is not available.
func (h *Handle) writeLocals(w io.Writer, p *probe.Probe) {
	if p.Frame() != nil || h.locals == nil {
		return
	}
	fmt.Fprintf(w, "\n\tLocal Variables\n")
	f, err := h.locals.probeFrame(p)
	if err != nil {
		fmt.Fprintf(w, "\t\tNone: %v\n", err)
		return
	}
	for i, l := range f.Locals {
		var notes []string
		if f.Lookup(l.Name) != f.Locals[i] {
			notes = append(notes, "hidden by another of its name")
		}
		if l.Param {
			notes = append(notes, "parameter")
		}
		if l.Inlined != "" {
			notes = append(notes, "of inlined "+l.Inlined)
		}
		if l.Source != "" {
			notes = append(notes, l.Source)
		}
		if l.Unavailable != "" {
			notes = append(notes, l.Unavailable)
		}
		typ := "(unknown)"
		if l.Type != nil {
			typ = l.Type.String()
		}
		fmt.Fprintf(w, "\t\tlocals->%s: %s", l.Name, typ)
		if len(notes) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(notes, "; "))
		}
		fmt.Fprintf(w, "\n")
	}
	if len(f.Locals) == 0 {
		fmt.Fprintf(w, "\t\tNone\n")
	}
}

func writeAttr(w io.Writer, a probe.Attr) {
	fmt.Fprintf(w, "\t\tIdentifier Names: %s\n", a.Name)
	fmt.Fprintf(w, "\t\tData Semantics:   %s\n", a.Data)
	fmt.Fprintf(w, "\t\tDependency Class: %s\n", a.Class)
}

// minAttr is dt_attr_min: the lesser of each part.
func minAttr(a, b probe.Attr) probe.Attr {
	return probe.Attr{Name: min(a.Name, b.Name), Data: min(a.Data, b.Data), Class: min(a.Class, b.Class)}
}
