package sugar_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/printer"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
)

// fakePid answers from a table: "pid module fn" to entry and return
// sites; it records the questions asked.
type fakePid struct {
	funcs map[string][2]*sugar.Sites
	asked []string
}

func (f *fakePid) Sites(pid int, module, fn string, ret bool) (*sugar.Sites, error) {
	key := fmt.Sprintf("%d %s %s", pid, module, fn)
	f.asked = append(f.asked, key)
	if fn == "broken" {
		return nil, errors.New("inline copy of broken in main: no function symbol holds 0x1234 in prog")
	}
	s, ok := f.funcs[key]
	if !ok {
		return nil, nil
	}
	if ret {
		return s[1], nil
	}
	return s[0], nil
}

func TestPidRewrite(t *testing.T) {
	inl := [2]*sugar.Sites{
		{Inline: true, OutOfLine: true, Sites: []sugar.Site{{Module: "prog", Func: "get", Offset: 12}, {Module: "prog", Func: "put", Offset: 0x1f0}}},
		{Inline: true, OutOfLine: true, Sites: []sugar.Site{{Func: "get", Offset: 0x43}, {Func: "get.cold", Offset: 3}}},
	}
	onlyInline := [2]*sugar.Sites{{Inline: true, Sites: []sugar.Site{{Func: "main", Offset: 0x10}}}, {Inline: true}}
	cloned := [2]*sugar.Sites{{Clones: []string{"g.constprop.0.isra.0", "g.constprop.1.isra.0"}}, {Clones: []string{"g.constprop.0.isra.0"}}}
	plain := [2]*sugar.Sites{{OutOfLine: true}, {OutOfLine: true}}
	p := &fakePid{funcs: map[string][2]*sugar.Sites{
		"123 a.out valid":     inl,
		"123 a.out inl":       onlyInline,
		"123 a.out g":         cloned,
		"123 a.out main":      plain,
		"123 libfoo.so valid": inl,
		"123 a.out clonedinl": {{Inline: true, OutOfLine: true, Clones: []string{"clonedinl.isra.0"}, Sites: []sugar.Site{{Func: "x", Offset: 1}}}, {}},
	}}
	tests := []struct {
		name, src string
		want      []string
		err       string
	}{
		{"entry: out of line, then each copy, hex offsets", "pid123:a.out:valid:entry {}",
			[]string{"pid123:a.out:valid:entry", "pid123:a.out:get:c", "pid123:a.out:put:1f0"}, ""},
		{"return: cold parts by their symbol", "pid123:a.out:valid:return {}",
			[]string{"pid123:a.out:valid:return", "pid123:a.out:get:43", "pid123:a.out:get.cold:3"}, ""},
		{"a library keeps its module", "pid123:libfoo.so:valid:entry {}",
			[]string{"pid123:libfoo.so:valid:entry", "pid123:libfoo.so:get:c", "pid123:libfoo.so:put:1f0"}, ""},
		{"only inline", "pid123:a.out:inl:entry {}", []string{"pid123:a.out:main:10"}, ""},
		{"clones are the function", "pid123:a.out:g:entry {}",
			[]string{"pid123:a.out:g.constprop.0.isra.0:entry", "pid123:a.out:g.constprop.1.isra.0:entry"}, ""},
		{"out of line, clones, copies", "pid123:a.out:clonedinl:entry {}",
			[]string{"pid123:a.out:clonedinl:entry", "pid123:a.out:clonedinl.isra.0:entry", "pid123:a.out:x:1"}, ""},
		{"first replaces, rest appended", "BEGIN, pid123:a.out:valid:entry, END {}",
			[]string{":::BEGIN", "pid123:a.out:valid:entry", ":::END", "pid123:a.out:get:c", "pid123:a.out:put:1f0"}, ""},
		{"not inlined: as written", "pid123:a.out:main:entry {}", []string{"pid123:a.out:main:entry"}, ""},
		{"unknown to the DWARF: as written", "pid123:a.out:nosuch:entry {}", []string{"pid123:a.out:nosuch:entry"}, ""},
		{"patterns and offsets: as written", "pid123:a.out:val*:entry, pid123::valid:entry, pid123:lib*:valid:entry, pid123:a.out:valid:, pid123:a.out:valid:c, pid*:a.out:valid:entry {}",
			[]string{"pid123:a.out:val*:entry", "pid123::valid:entry", "pid123:lib*:valid:entry", "pid123:a.out:valid:", "pid123:a.out:valid:c", "pid*:a.out:valid:entry"}, ""},
		{"other providers", "kinst::valid:entry, fbt::valid:entry, pidx:a.out:valid:entry, pid0:a.out:valid:entry, pid012:a.out:valid:entry {}",
			[]string{"kinst::valid:entry", "fbt::valid:entry", "pidx:a.out:valid:entry", "pid0:a.out:valid:entry", "pid012:a.out:valid:entry"}, ""},
		{"inline but no site", "pid123:a.out:inl:return {}", nil,
			"[D_PDESC_ZERO] line 1: probe description pid123:a.out:inl:return does not match any probes: no inline copy of inl can be probed"},
		{"a site that cannot be named", "pid123:a.out:broken:entry {}", nil,
			"[D_PDESC_ZERO] line 1: probe description pid123:a.out:broken:entry does not match any probes: inline copy of broken in main: no function symbol holds 0x1234 in prog"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog, err := parser.ParseFile("t.d", []byte(tt.src), nil)
			if err != nil {
				t.Fatal(err)
			}
			e := &sugar.Expander{Pid: p}
			err = e.Expand(prog)
			if tt.err != "" {
				if err == nil || !strings.Contains(errorText(err), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range prog.Decls[0].(*ast.Clause).Probes {
				got = append(got, d.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("probes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPidTarget checks that $target is expanded before the rewrite asks
// about the process.
func TestPidTarget(t *testing.T) {
	p := &fakePid{funcs: map[string][2]*sugar.Sites{}}
	prog, err := parser.ParseFile("t.d", []byte("pid$target:a.out:valid:entry {}"), &parser.Config{Macros: map[string]string{"target": "4567"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&sugar.Expander{Pid: p}).Expand(prog); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"4567 a.out valid"}, p.asked); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
}

// TestPidGuards checks the clauses that make a shared return site fire
// only after its copy's entry: the flag set at the entry and moved into
// a clause-local at every exit before the program's clauses, and the
// guarded clause's predicate, for two clauses on the same sites.
func TestPidGuards(t *testing.T) {
	entry := sugar.Site{Func: "alloc", Offset: 0x3f}
	p := &fakePid{funcs: map[string][2]*sugar.Sites{
		"123 a.out perturb": {
			{Inline: true, Sites: []sugar.Site{entry}},
			{Inline: true, Sites: []sugar.Site{{Func: "alloc", Offset: 0x50}, {Func: "alloc", Offset: 0x5a}},
				Guards: []sugar.Guard{{Entry: entry, Exits: []sugar.Site{{Func: "alloc", Offset: 0x50}, {Func: "alloc", Offset: 0x5a}}, Shared: []sugar.Site{{Func: "alloc", Offset: 0x5a}}}}},
		},
	}}
	src := `pid123:a.out:perturb:return /arg1 > 0/ { @r = count(); }
BEGIN, pid123:a.out:perturb:return { @n = count(); }
`
	prog, err := parser.ParseFile("t.d", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&sugar.Expander{Pid: p}).Expand(prog); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	printer.Fprint(&out, prog)
	want := `pid123:a.out:alloc:50,
pid123:a.out:alloc:5a
{
        ((this->%inl_1) = (self->%inl_1));
        ((self->%inl_1) = 0x0);
}

pid123:a.out:alloc:3f
{
        ((self->%inl_1) = 0x1);
}

pid123:a.out:alloc:50,
pid123:a.out:alloc:5a
{
        ((this->%ok_1) = 0x1);
}

pid123:a.out:alloc:5a
{
        ((this->%ok_1) = 0x0);
}

pid123:a.out:alloc:5a
{
        ((this->%ok_1) = ((this->%ok_1) || (this->%inl_1)));
}

pid123:a.out:alloc:50,
pid123:a.out:alloc:5a
/((this->%ok_1) && (arg1 > 0x0))/
{
        (@r = count());
}

:::BEGIN,
pid123:a.out:alloc:50,
pid123:a.out:alloc:5a
{
        ((this->%ok_2) = 0x1);
}

pid123:a.out:alloc:5a
{
        ((this->%ok_2) = 0x0);
}

pid123:a.out:alloc:5a
{
        ((this->%ok_2) = ((this->%ok_2) || (this->%inl_1)));
}

:::BEGIN,
pid123:a.out:alloc:50,
pid123:a.out:alloc:5a
/(this->%ok_2)/
{
        (@n = count());
}

`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("-d (-want +got):\n%s", diff)
	}
}

// TestPidEntryGuards checks a call entered at two sites of one path:
// the later entry copies the flag before the entries set it, and counts
// only when it was clear; the exits' clause comes first, since the loop
// head at 0x20 ends one iteration's call and may begin the next.
func TestPidEntryGuards(t *testing.T) {
	first, later := sugar.Site{Func: "work", Offset: 0x10, Rule: "entry edge"}, sugar.Site{Func: "work", Offset: 0x20, Rule: "entry edge, counted when no call is in progress"}
	exit := sugar.Site{Func: "work", Offset: 0x20, Rule: "exit edge"}
	g := sugar.Guard{Entry: first, Also: []sugar.Site{later}, Exits: []sugar.Site{exit}, Repeat: []sugar.Site{later}}
	p := &fakePid{funcs: map[string][2]*sugar.Sites{
		"123 a.out f": {
			{Inline: true, Sites: []sugar.Site{first, later}, Guards: []sugar.Guard{g}},
			{Inline: true, Sites: []sugar.Site{exit}, Guards: []sugar.Guard{g}},
		},
	}}
	prog, err := parser.ParseFile("t.d", []byte("pid123:a.out:f:entry { @e = count(); }\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&sugar.Expander{Pid: p}).Expand(prog); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	printer.Fprint(&out, prog)
	want := `pid123:a.out:work:20
{
        ((this->%inl_1) = (self->%inl_1));
        ((self->%inl_1) = 0x0);
}

pid123:a.out:work:20
{
        ((this->%ine_1) = (self->%inl_1));
}

pid123:a.out:work:10,
pid123:a.out:work:20
{
        ((self->%inl_1) = 0x1);
}

pid123:a.out:work:10, /* entry edge */
pid123:a.out:work:20 /* entry edge, counted when no call is in progress */
{
        ((this->%ok_1) = 0x1);
}

pid123:a.out:work:20
{
        ((this->%ok_1) = 0x0);
}

pid123:a.out:work:20
{
        ((this->%ok_1) = ((this->%ok_1) || !((this->%ine_1))));
}

pid123:a.out:work:10, /* entry edge */
pid123:a.out:work:20 /* entry edge, counted when no call is in progress */
/(this->%ok_1)/
{
        (@e = count());
}

`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("-d (-want +got):\n%s", diff)
	}
}
