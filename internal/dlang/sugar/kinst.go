package sugar

import (
	"strconv"

	"github.com/kdtrace/kdtrace/dlang/diag"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
)

// Kinst answers what the kinst rewrite needs to know about the traced
// images: where a function's inline copies are, and which offsets of a
// function are instructions. Package kinst implements it over kernel
// images and their DWARF; tests implement it over fixtures.
type Kinst interface {
	// Sites returns the probe sites for kinst::fn:entry (ret false) or
	// kinst::fn:return (ret true). An unknown function is an error that
	// names the images searched, or nil Sites when such descriptions are
	// to be left as written (-Z).
	Sites(fn string, ret bool) (*Sites, error)
	// CheckOffset checks that kinst::fn:off names an instruction.
	CheckOffset(fn string, off uint64) error
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
	// Guards are the inline copies some of whose return sites code
	// outside the copy also reaches (a join after an if without an
	// else, a common epilogue): a return probe there alone would also
	// fire on paths that did not just leave the copy. The pid and
	// kinst rewrites guard them with a thread-local flag that the
	// copy's entry sets and its exits clear.
	Guards []Guard
	// Clones are the function symbols of the compiler's clones of the
	// function (f.constprop.0, f.isra.0), out-of-line bodies called in
	// its place, in a deterministic order. The pid rewrite traces
	// them as the function.
	Clones []string
}

// A Guard is one inline call whose sites need the thread's mark that
// the call is in progress: return sites that code outside the call
// also reaches, or entries that a path from another of its entries
// reaches.
type Guard struct {
	Entry  Site   // the call's entry site
	Also   []Site // its other entry sites
	Exits  []Site // all its return sites
	Shared []Site // those that code outside the call also reaches
	// Repeat are the entries (of Entry and Also) that may run while
	// the call is in progress: they count only when it is not.
	Repeat []Site
}

// Site is one instruction to probe: Offset bytes into function Func of
// module Module; an empty Module keeps the description's own.
type Site struct {
	Module string
	Func   string
	Offset uint64
	// Rule says which rule placed the site, for -d; "" for none.
	Rule string
}

// Same reports whether s and t name the same instruction.
func (s Site) Same(t Site) bool {
	return s.Module == t.Module && s.Func == t.Func && s.Offset == t.Offset
}

// kinstFunction returns the function d names when it is a kinst
// description of one function: the provider is exactly "kinst" and the
// function a plain name, not a pattern.
func kinstFunction(d *ast.ProbeDesc) (string, bool) {
	if d.Provider != "kinst" || d.Function == "" || isPattern(d.Function) {
		return "", false
	}
	return d.Function, true
}

// isPattern reports whether a description's field is a glob pattern.
func isPattern(s string) bool { return strings.ContainsAny(s, "*?[]\\!") }

// expandKinst rewrites kinst entry and return descriptions: the first
// site replaces the description, later sites are appended to the list,
// and a function that is also out of line adds its fbt probe; a function
// with no inline site becomes fbt::f:entry or fbt::f:return, or is an
// error when it has no out-of-line body either. The return sites other
// paths also reach are guarded as the pid rewrite's are (see guard).
func (e *Expander) expandKinst(probes []*ast.ProbeDesc) ([]*ast.ProbeDesc, []guarded, error) {
	out := probes
	copied := false
	var shared []guarded
	for i, d := range probes {
		fn, ok := kinstFunction(d)
		if !ok {
			continue
		}
		if off, err := strconv.ParseUint(d.Name, 0, 64); err == nil {
			if err := e.Kinst.CheckOffset(fn, off); err != nil {
				return nil, nil, diag.Errorf(d.DescPos, diag.D_PDESC_INVAL, "invalid probe description \"%s\": %v", d, err)
			}
			continue
		}
		if d.Name != "entry" && d.Name != "return" {
			continue
		}
		sites, err := e.Kinst.Sites(fn, d.Name == "return")
		if err != nil {
			return nil, nil, diag.Errorf(d.DescPos, diag.D_PDESC_ZERO, "probe description %s does not match any probes: %v", d, err)
		}
		if sites == nil {
			continue // left as written (-Z)
		}
		if !copied {
			out = append([]*ast.ProbeDesc(nil), probes...)
			copied = true
		}
		if len(sites.Sites) == 0 {
			if sites.Inline && !sites.OutOfLine {
				return nil, nil, diag.Errorf(d.DescPos, diag.D_PDESC_ZERO, "probe description %s does not match any probes: no inline copy of %s can be probed", d, fn)
			}
			fbt := *d
			fbt.Provider = "fbt"
			out[i] = &fbt
			continue
		}
		for j, s := range sites.Sites {
			if j == 0 {
				out[i] = commented(kinstSite(d, s), s)
			} else {
				out = append(out, commented(kinstSite(d, s), s))
			}
		}
		if sites.OutOfLine {
			out = append(out, &ast.ProbeDesc{DescPos: d.DescPos, Provider: "fbt", Module: d.Module, Function: d.Function, Name: d.Name})
		}
		shared = e.guard(d, sites.Guards, kinstSite, shared)
	}
	return out, shared, nil
}

// commented gives d, the description of site s in a rewritten clause,
// the rule that placed s as its comment, which -d prints.
func commented(d *ast.ProbeDesc, s Site) *ast.ProbeDesc {
	d.Comment = s.Rule
	return d
}

// kinstSite is the description of a site, in the site's module or else
// the one d names, its offset in decimal as kinst names offset probes.
func kinstSite(d *ast.ProbeDesc, s Site) *ast.ProbeDesc {
	mod := s.Module
	if mod == "" {
		mod = d.Module
	}
	return &ast.ProbeDesc{DescPos: d.DescPos, Provider: "kinst", Module: mod, Function: s.Func, Name: strconv.FormatUint(s.Offset, 10)}
}
