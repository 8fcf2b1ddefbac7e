package sugar_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/printer"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
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

// TestKinstGuards checks that kinst return sites other paths reach are
// guarded as the pid provider's are, with the same numbering across
// both providers, and that a copy without such a site, or sites given
// without guards (-x kinstcompat), come out as they did unguarded.
func TestKinstGuards(t *testing.T) {
	entry := sugar.Site{Func: "vfs_read", Offset: 241}
	modEntry := sugar.Site{Module: "ext4", Func: "ext4_read", Offset: 10}
	guarded := &sugar.Sites{Inline: true,
		Sites: []sugar.Site{{Func: "vfs_read", Offset: 250}, {Func: "vfs_read", Offset: 300}, {Module: "ext4", Func: "ext4_read", Offset: 30}},
		Guards: []sugar.Guard{
			{Entry: entry, Exits: []sugar.Site{{Func: "vfs_read", Offset: 250}, {Func: "vfs_read", Offset: 300}}, Shared: []sugar.Site{{Func: "vfs_read", Offset: 300}}},
			{Entry: modEntry, Exits: []sugar.Site{{Module: "ext4", Func: "ext4_read", Offset: 30}}, Shared: []sugar.Site{{Module: "ext4", Func: "ext4_read", Offset: 30}}},
		}}
	unguarded := &sugar.Sites{Inline: true, Sites: []sugar.Site{{Func: "vfs_read", Offset: 250}, {Func: "vfs_read", Offset: 300}}}
	k := &fakeKinst{funcs: map[string][2]*sugar.Sites{
		"acc":    {{Inline: true, Sites: []sugar.Site{entry, modEntry}}, guarded},
		"compat": {{Inline: true, Sites: []sugar.Site{entry}}, unguarded},
	}}
	p := &fakePid{funcs: map[string][2]*sugar.Sites{
		"9 a.out perturb": {nil, {Inline: true, Sites: []sugar.Site{{Func: "alloc", Offset: 0x5a}},
			Guards: []sugar.Guard{{Entry: sugar.Site{Func: "alloc", Offset: 0x3f}, Exits: []sugar.Site{{Func: "alloc", Offset: 0x5a}}, Shared: []sugar.Site{{Func: "alloc", Offset: 0x5a}}}}}},
	}}
	tests := []struct {
		name, src, want string
	}{
		{"unguarded as before", "kinst::compat:return /arg0/ { @ = count(); }", `kinst::vfs_read:250,
kinst::vfs_read:300
/arg0/
{
        (@_ = count());
}

`},
		{"entry never guarded", "kinst::acc:entry { @ = count(); }", `kinst::vfs_read:241,
kinst:ext4:ext4_read:10
{
        (@_ = count());
}

`},
		{"guarded, module kept", "kinst::acc:return { @ = count(); }", `kinst::vfs_read:250,
kinst::vfs_read:300
{
        ((this->%inl_1) = (self->%inl_1));
        ((self->%inl_1) = 0x0);
}

kinst::vfs_read:241
{
        ((self->%inl_1) = 0x1);
}

kinst:ext4:ext4_read:30
{
        ((this->%inl_2) = (self->%inl_2));
        ((self->%inl_2) = 0x0);
}

kinst:ext4:ext4_read:10
{
        ((self->%inl_2) = 0x1);
}

kinst::vfs_read:250,
kinst::vfs_read:300,
kinst:ext4:ext4_read:30
{
        ((this->%ok_1) = 0x1);
}

kinst::vfs_read:300,
kinst:ext4:ext4_read:30
{
        ((this->%ok_1) = 0x0);
}

kinst::vfs_read:300
{
        ((this->%ok_1) = ((this->%ok_1) || (this->%inl_1)));
}

kinst:ext4:ext4_read:30
{
        ((this->%ok_1) = ((this->%ok_1) || (this->%inl_2)));
}

kinst::vfs_read:250,
kinst::vfs_read:300,
kinst:ext4:ext4_read:30
/(this->%ok_1)/
{
        (@_ = count());
}

`},
		{"kinst and pid in one clause", "kinst::compat:return, pid9:a.out:perturb:return { @ = count(); }", `pid9:a.out:alloc:5a
{
        ((this->%inl_1) = (self->%inl_1));
        ((self->%inl_1) = 0x0);
}

pid9:a.out:alloc:3f
{
        ((self->%inl_1) = 0x1);
}

kinst::vfs_read:250,
pid9:a.out:alloc:5a,
kinst::vfs_read:300
{
        ((this->%ok_1) = 0x1);
}

pid9:a.out:alloc:5a
{
        ((this->%ok_1) = 0x0);
}

pid9:a.out:alloc:5a
{
        ((this->%ok_1) = ((this->%ok_1) || (this->%inl_1)));
}

kinst::vfs_read:250,
pid9:a.out:alloc:5a,
kinst::vfs_read:300
/(this->%ok_1)/
{
        (@_ = count());
}

`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog, err := parser.ParseFile("t.d", []byte(tt.src), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := (&sugar.Expander{Kinst: k, Pid: p}).Expand(prog); err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			printer.Fprint(&out, prog)
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("-d (-want +got):\n%s", diff)
			}
		})
	}
}
