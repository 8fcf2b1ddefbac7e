package sugar_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/sugar"
)

// fakeKinst answers from a table: function name to entry and return
// sites.
type fakeKinst struct {
	funcs     map[string][2]*sugar.Sites // [entry, return]
	zeroMatch bool
	bad       map[uint64]bool // offsets that are not instructions
}

func (f *fakeKinst) Sites(fn string, ret bool) (*sugar.Sites, error) {
	s, ok := f.funcs[fn]
	if !ok {
		if f.zeroMatch {
			return nil, nil
		}
		return nil, errors.New("function " + fn + " not found")
	}
	if ret {
		return s[1], nil
	}
	return s[0], nil
}

func (f *fakeKinst) CheckOffset(fn string, off uint64) error {
	if f.bad[off] {
		return errors.New("offset is not an instruction boundary")
	}
	return nil
}

func probes(t *testing.T, src string, k sugar.Kinst) ([]string, error) {
	t.Helper()
	prog, err := parser.ParseFile("t.d", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &sugar.Expander{Kinst: k}
	if err := e.Expand(prog); err != nil {
		return nil, err
	}
	var out []string
	for _, d := range prog.Decls[0].(*ast.Clause).Probes {
		out = append(out, d.String())
	}
	return out, nil
}

func TestKinstRewrite(t *testing.T) {
	inl := &sugar.Sites{Inline: true, Sites: []sugar.Site{{Func: "a", Offset: 4}, {Func: "b", Offset: 13}, {Module: "mod", Func: "c", Offset: 40}}}
	ret := &sugar.Sites{Inline: true, OutOfLine: true, Sites: []sugar.Site{{Func: "a", Offset: 20}}}
	k := &fakeKinst{
		funcs: map[string][2]*sugar.Sites{
			"inl":   {inl, ret},
			"plain": {{}, {}},
			"gone":  {{Inline: true}, {Inline: true, OutOfLine: true}},
		},
		bad: map[uint64]bool{7: true},
	}
	tests := []struct {
		name, src string
		want      []string
		err       string
	}{
		{"entry", "kinst::inl:entry {}", []string{"kinst::a:4", "kinst::b:13", "kinst:mod:c:40"}, ""},
		{"return and out of line", "kinst::inl:return {}", []string{"kinst::a:20", "fbt::inl:return"}, ""},
		{"first replaces, rest appended", "BEGIN, kinst::inl:entry, END {}", []string{":::BEGIN", "kinst::a:4", ":::END", "kinst::b:13", "kinst:mod:c:40"}, ""},
		{"not inlined is fbt", "kinst::plain:entry {}", []string{"fbt::plain:entry"}, ""},
		{"module kept", "kinst:kernel:inl:entry {}", []string{"kinst:kernel:a:4", "kinst:kernel:b:13", "kinst:mod:c:40"}, ""},
		{"patterns untouched", "kinst::in*:entry, kinst::inl:, fbt::inl:entry {}", []string{"kinst::in*:entry", "kinst::inl:", "fbt::inl:entry"}, ""},
		{"good offset", "kinst::plain:5 {}", []string{"kinst::plain:5"}, ""},
		{"bad offset", "kinst::plain:7 {}", nil, "[D_PDESC_INVAL] line 1: invalid probe description \"kinst::plain:7\": offset is not an instruction boundary"},
		{"inline but no site", "kinst::gone:entry {}", nil, "[D_PDESC_ZERO] line 1: probe description kinst::gone:entry does not match any probes: no inline copy of gone can be probed"},
		{"no site but out of line", "kinst::gone:return {}", []string{"fbt::gone:return"}, ""},
		{"unknown", "kinst::nosuch:entry {}", nil, "[D_PDESC_ZERO] line 1: probe description kinst::nosuch:entry does not match any probes: function nosuch not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := probes(t, tt.src, k)
			if tt.err != "" {
				if err == nil || !strings.Contains(errorText(err), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("probes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKinstZeroMatch(t *testing.T) {
	got, err := probes(t, "kinst::nosuch:entry {}", &fakeKinst{zeroMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"kinst::nosuch:entry"}, got); diff != "" {
		t.Errorf("-Z must leave the description (-want +got):\n%s", diff)
	}
}
