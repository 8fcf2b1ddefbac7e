package sugar

import (
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
)

// Inlines answers, for the kinst rewrite, where a function's inline
// copies are. The debug-info package implements it over kernel images
// and their DWARF; tests implement it over fixtures.
type Inlines interface {
	// Lookup returns the probe sites for kinst::fn:entry (ret false) or
	// kinst::fn:return (ret true). An unknown function is an error that
	// names the images searched.
	Lookup(fn string, ret bool) (*Sites, error)
}

// Sites describes where a function can be probed.
type Sites struct {
	// Inline reports whether the function has inline copies; when false
	// the function is traced through fbt.
	Inline bool
	// OutOfLine reports whether the function also has an out-of-line
	// body, which fbt traces.
	OutOfLine bool
	// Sites are the instruction sites, in a deterministic order.
	Sites []Site
}

// Site is one instruction to probe: Offset bytes into function Func of
// module Module.
type Site struct {
	Module string
	Func   string
	Offset uint64
}

// isInlineKinst reports whether d asks for the entry or return of a
// function by kinst: the provider is exactly "kinst", the name "entry"
// or "return", and the function a plain name.
func isInlineKinst(d *ast.ProbeDesc) bool {
	if d.Provider != "kinst" || (d.Name != "entry" && d.Name != "return") {
		return false
	}
	return d.Function != "" && !strings.ContainsAny(d.Function, "*?[]\\!")
}

// expandKinst rewrites kinst entry and return descriptions: the first
// site replaces the description, later sites are appended to the list,
// and a function that is also out of line adds its fbt probe; a function
// that is not inlined becomes fbt::f:entry or fbt::f:return.
func (e *Expander) expandKinst(probes []*ast.ProbeDesc) ([]*ast.ProbeDesc, error) {
	out := probes
	copied := false
	for i, d := range probes {
		if !isInlineKinst(d) {
			continue
		}
		sites, err := e.Inlines.Lookup(d.Function, d.Name == "return")
		if err != nil {
			return nil, err
		}
		if sites == nil {
			continue // left as written (-Z)
		}
		if !copied {
			out = append([]*ast.ProbeDesc(nil), probes...)
			copied = true
		}
		if !sites.Inline || len(sites.Sites) == 0 {
			fbt := *d
			fbt.Provider = "fbt"
			out[i] = &fbt
			continue
		}
		for j, s := range sites.Sites {
			nd := &ast.ProbeDesc{DescPos: d.DescPos, Provider: "kinst", Module: s.Module, Function: s.Func, Name: strconv.FormatUint(s.Offset, 10)}
			if j == 0 {
				out[i] = nd
			} else {
				out = append(out, nd)
			}
		}
		if sites.OutOfLine {
			out = append(out, &ast.ProbeDesc{DescPos: d.DescPos, Provider: "fbt", Module: d.Module, Function: d.Function, Name: d.Name})
		}
	}
	return out, nil
}
