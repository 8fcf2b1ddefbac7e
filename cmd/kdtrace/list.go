package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/probe"
)

// specProgram returns the program that -P, -m or -f gives: a probe
// description and, optionally, a predicate and actions. As
// dtrace_xstr2desc, the description's fields are read from the right,
// the last one being the provider (-P), the module (-m) or the function
// (-f).
func specProgram(kind byte, arg string) (string, error) {
	spec, rest := arg, ""
	if i := strings.IndexAny(arg, "/{"); i >= 0 {
		spec, rest = arg[:i], arg[i:]
	}
	spec = strings.TrimSpace(spec)
	after := map[byte]int{'P': 3, 'm': 2, 'f': 1}[kind]
	if strings.Count(spec, ":") > 3-after {
		return "", diag.Errorf(token.Pos{}, diag.D_PDESC_INVAL, "invalid probe description \"%s\": Overspecified probe description", spec)
	}
	return spec + strings.Repeat(":", after) + " " + rest, nil
}

// listProbes is -l: for each clause of progs, in order, the probes that
// each of its descriptions matches, or every probe when no program was
// given, in dtrace -l's format; with -v each probe's attributes and
// argument types follow it. A description that matches nothing is
// reported, as dtrace does, without failing the command.
//
// Probes are numbered by Catalog.ID, so a probe has the same ID in every
// listing of one system, and -i or a description by ID names it.
func (c *config) listProbes(progs []*ast.Program, stdout, stderr io.Writer) int {
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	fmt.Fprintf(w, "%5s %10s %17s %33s %s\n", "ID", "PROVIDER", "MODULE", "FUNCTION", "NAME")
	if c.catalog == nil {
		w.Flush()
		fmt.Fprintf(stderr, "%s: no probes can be listed here: this system's catalog of probes is not available\n", c.progName)
		return 1
	}
	list := func(d probe.Desc) (int, error) {
		n := 0
		err := c.catalog.Walk(d, func(p *probe.Probe) bool {
			n++
			fmt.Fprintf(w, "%5d %10s %17s %33s %s\n", c.catalog.ID(p), p.Provider, p.Module, p.Function, p.Name)
			if c.verbose {
				c.printProbeInfo(w, p)
			}
			return true
		})
		return n, err
	}
	if len(progs) == 0 {
		if _, err := list(probe.Desc{}); err != nil {
			w.Flush()
			fmt.Fprintf(stderr, "%s: failed to list probes: %v\n", c.progName, err)
			return 1
		}
		return 0
	}
	for _, prog := range progs {
		for _, d := range prog.Decls {
			cl, ok := d.(*ast.Clause)
			if !ok {
				continue
			}
			for _, pd := range cl.Probes {
				desc := probe.Desc{Provider: pd.Provider, Module: pd.Module, Function: pd.Function, Name: pd.Name}
				if pd.ID != 0 {
					p := c.catalog.ByID(pd.ID)
					if p == nil {
						w.Flush()
						fmt.Fprintf(stderr, "%s: failed to match %d: No probe matches description\n", c.progName, pd.ID)
						continue
					}
					desc = p.Desc()
				}
				n, err := list(desc)
				// dtrace's message for a description that matches
				// nothing is its EDT_NOPROBE text.
				msg := "No probe matches description"
				if err != nil {
					msg = err.Error()
				}
				if err != nil || n == 0 {
					w.Flush()
					fmt.Fprintf(stderr, "%s: failed to match %s:%s:%s:%s: %s\n", c.progName,
						desc.Provider, desc.Module, desc.Function, desc.Name, msg)
				}
			}
		}
	}
	return 0
}

// printProbeInfo writes what dtrace -lv writes after a probe: the
// stability of its description and of its arguments, and their types,
// translated ones as the program sees them.
func (c *config) printProbeInfo(w io.Writer, p *probe.Probe) {
	var attr, arga probe.Attr
	if pv := c.catalog.Provider(p.Provider); pv != nil {
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
	fmt.Fprintf(w, "\n")
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
