package locals

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
)

// TestMerge checks what a description's probes agree on: a local keeps
// its location only where every probe reads it with the same code.
func TestMerge(t *testing.T) {
	reg := func(r int) dwarfexpr.Expr { return dwarfexpr.Expr{{Code: dwarfexpr.OpReg, Reg: r}} }
	fbreg := dwarfexpr.Expr{{Code: dwarfexpr.OpFbreg, Int: -20}}
	cfaBase := dwarfexpr.Expr{{Code: dwarfexpr.OpCallFrameCFA}}
	local := func(name string, ty types.Type, loc dwarfexpr.Expr, unavailable string) *check.Local {
		return &check.Local{Name: name, Type: ty, Loc: loc, Unavailable: unavailable}
	}
	frame := func(cfaOff int64, entry bool, ls ...*check.Local) *check.Frame {
		return &check.Frame{Locals: ls, Place: check.Place{Entry: entry, FrameBase: cfaBase, CFA: check.CFA{Reg: 7, Off: cfaOff}}}
	}
	tests := []struct {
		name  string
		f, g  *check.Frame
		want  map[string]string // name: Unavailable ("" where kept)
		entry bool
	}{{
		name:  "same places",
		f:     frame(16, true, local("a", types.IntType, reg(5), ""), local("b", types.Long, fbreg, "")),
		g:     frame(16, true, local("a", types.IntType, reg(5), ""), local("b", types.Long, fbreg, "")),
		want:  map[string]string{"a": "", "b": ""},
		entry: true,
	}, {
		name: "another register",
		f:    frame(16, true, local("a", types.IntType, reg(5), "")),
		g:    frame(16, false, local("a", types.IntType, reg(4), "")),
		want: map[string]string{"a": "it lives elsewhere at P than at the description's first probe: name the probes in descriptions of their own"},
	}, {
		name: "another type",
		f:    frame(16, false, local("a", types.IntType, reg(5), "")),
		g:    frame(16, false, local("a", types.Long, reg(5), "")),
		want: map[string]string{"a": "it lives elsewhere at P than at the description's first probe: name the probes in descriptions of their own"},
	}, {
		name: "frame slot with another CFA",
		f:    frame(16, false, local("b", types.Long, fbreg, "")),
		g:    frame(24, false, local("b", types.Long, fbreg, "")),
		want: map[string]string{"b": "it lives elsewhere at P than at the description's first probe: name the probes in descriptions of their own"},
	}, {
		name: "register with another CFA",
		f:    frame(16, false, local("a", types.IntType, reg(5), "")),
		g:    frame(24, false, local("a", types.IntType, reg(5), "")),
		want: map[string]string{"a": ""},
	}, {
		name: "optimized out at the other",
		f:    frame(16, false, local("a", types.IntType, reg(5), "")),
		g:    frame(16, false, local("a", types.IntType, nil, "optimized out at f+0x10")),
		want: map[string]string{"a": "at P: optimized out at f+0x10"},
	}, {
		name: "not in scope at the other",
		f:    frame(16, false, local("a", types.IntType, reg(5), ""), local("c", types.IntType, nil, "optimized out")),
		g:    frame(16, false),
		want: map[string]string{"a": "it is not in scope or optimized out at P", "c": "optimized out"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Merge(tt.f, tt.g, "P")
			got := map[string]string{}
			for _, l := range m.Locals {
				got[l.Name] = l.Unavailable
				if (l.Unavailable == "") != (len(l.Loc) > 0) {
					t.Errorf("%s: location %v with %q", l.Name, l.Loc, l.Unavailable)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unavailable (-want +got):\n%s", diff)
			}
			if m.Place.Entry != tt.entry {
				t.Errorf("Entry = %t, want %t", m.Place.Entry, tt.entry)
			}
		})
	}
}
