package sugar

import (
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
)

// Pid answers what the pid rewrite needs to know about a process's
// objects: where a function of one of them was inlined, and which
// clones of it the compiler made. The dtrace package implements it
// over the objects a process maps and their DWARF, with package kinst's
// rules.
type Pid interface {
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
func (e *Expander) expandPid(probes []*ast.ProbeDesc) ([]*ast.ProbeDesc, error) {
	out := probes
	copied := false
	for i, d := range probes {
		pid, ok := pidFunction(d)
		if !ok {
			continue
		}
		sites, err := e.Pid.Sites(pid, d.Module, d.Function, d.Name == "return")
		if err != nil {
			return nil, diag.Errorf(d.DescPos, diag.D_PDESC_ZERO, "probe description %s does not match any probes: %v", d, err)
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
			descs = append(descs, &ast.ProbeDesc{DescPos: d.DescPos, Provider: d.Provider, Module: d.Module, Function: s.Func, Name: strconv.FormatUint(s.Offset, 16)})
		}
		if len(descs) == 0 {
			return nil, diag.Errorf(d.DescPos, diag.D_PDESC_ZERO, "probe description %s does not match any probes: no inline copy of %s can be probed", d, d.Function)
		}
		if !copied {
			out = append([]*ast.ProbeDesc(nil), probes...)
			copied = true
		}
		out[i] = descs[0]
		out = append(out, descs[1:]...)
	}
	return out, nil
}
