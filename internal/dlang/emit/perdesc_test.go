package emit_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dtracetest"
)

// structOf makes a struct whose members are at the given byte offsets.
func structOf(name string, size int64, ms ...types.Member) *types.Struct {
	s := &types.Struct{Module: "t", Name: name, Bytes: size}
	for i := range ms {
		ms[i].Offset *= 8
	}
	s.SetMembers(ms)
	return s
}

// perDescProbes are fbt probes of functions taking pointers to structs
// whose member y differs in offset, size and sign:
//
//	fa(struct a *), fa2(struct a *): struct a { int x; long y; }       y: long at 8
//	fb(struct b *):                  struct b { char pad[32]; char y; } y: char at 32
//	fc(struct c *):                  struct c { int x; unsigned short y; } y: at 4
//	fd(struct d *):                  struct d { int y; }                y: int at 0
//
// fbt::f*:entry matches several of them, which dtrace does not vouch
// are typed alike.
func perDescProbes() dtracetest.Probes {
	sa := structOf("a", 16, types.Member{Name: "x", Type: types.IntType}, types.Member{Name: "y", Type: types.Long, Offset: 8})
	sb := structOf("b", 33, types.Member{Name: "pad", Type: &types.Array{Elem: types.Char, Len: 32}},
		types.Member{Name: "y", Type: types.Char, Offset: 32})
	sc := structOf("c", 8, types.Member{Name: "x", Type: types.IntType}, types.Member{Name: "y", Type: types.UShort, Offset: 4})
	sd := structOf("d", 4, types.Member{Name: "y", Type: types.IntType})
	typed := func(t types.Type) check.ProbeMatch {
		// Each probe gets its own pointer type, as a catalog makes them.
		return check.ProbeMatch{Count: 1, Typed: true, Args: []types.Type{&types.Pointer{Elem: t}, types.Long}}
	}
	return dtracetest.Probes{
		"fbt::fa:entry":  typed(sa),
		"fbt::fa2:entry": typed(sa),
		"fbt::fb:entry":  typed(sb),
		"fbt::fc:entry":  typed(sc),
		"fbt::fd:entry":  typed(sd),
		"fbt::f*:entry":  {Count: 2},
		":::BEGIN":       {Count: 1, Typed: true},
		"dtrace:::ERROR": {Count: 1, Typed: true},
	}
}

// compileWith compiles src with probes, returning the checker's result
// and the generated program.
func compileWith(probes check.Probes, src string) (*check.Info, *ast.Program, *dof.Program, error) {
	return dtracetest.CompileWith("t.d", []byte(src), nil, &check.Config{Probes: probes})
}

// loads describes how a DIFO reads memory: each load instruction and
// the integer constants (offsets) of its table, as "ldsb 0x20".
func loads(d *dof.DIFO) string {
	if d == nil {
		return ""
	}
	var parts []string
	for _, w := range d.Code {
		op := dif.Instr(w).Op()
		if op >= dif.LDSB && op <= dif.LDX || op >= dif.ULDSB && op <= dif.ULDX {
			parts = append(parts, op.String())
		}
	}
	for _, n := range d.Ints {
		parts = append(parts, fmt.Sprintf("%#x", n))
	}
	return strings.Join(parts, " ")
}

func TestPerDescription(t *testing.T) {
	tests := []struct {
		src string
		// want gives, for each ECB, its probe and the loads of its
		// predicate (if any) and of each action.
		want []string
		// shared lists pairs of ECBs whose DIFOs must be the same.
		shared [][2]int
	}{
		{
			src: "fbt::fa:entry, fbt::fb:entry, fbt::fc:entry, fbt::fd:entry { trace(args[0]->y); }",
			want: []string{
				"fbt::fa:entry | ldx 0x8",
				"fbt::fb:entry | ldsb 0x20",
				"fbt::fc:entry | lduh 0x4",
				"fbt::fd:entry | ldsw",
			},
		},
		{
			// The predicate too; descriptions of alike types share code.
			src: "fbt::fb:entry, fbt::fa:entry, fbt::fa2:entry /args[0]->y > 2/ { @[args[0]->y] = sum(args[0]->y); }",
			want: []string{
				"fbt::fb:entry | pred ldsb 0x20 0x2 0x1 | 0x1 | ldsb 0x20 | ldsb 0x20",
				"fbt::fa:entry | pred ldx 0x8 0x2 0x1 | 0x1 | ldx 0x8 | ldx 0x8",
				"fbt::fa2:entry | pred ldx 0x8 0x2 0x1 | 0x1 | ldx 0x8 | ldx 0x8",
			},
			shared: [][2]int{{1, 2}},
		},
		{
			src:    "fbt::fa:entry, fbt::fa2:entry { trace(args[0]->y); trace(args[1]); }",
			want:   []string{"fbt::fa:entry | ldx 0x8 | 0x1", "fbt::fa2:entry | ldx 0x8 | 0x1"},
			shared: [][2]int{{0, 1}},
		},
		{
			// A variable created by the first description's checking is
			// the later ones': x is a long, assigned a char in fb.
			src: "fbt::fa:entry, fbt::fb:entry { x = args[0]->y; trace(x); }",
			want: []string{
				"fbt::fa:entry | ldx 0x8 | ",
				"fbt::fb:entry | ldsb 0x20 | ",
			},
		},
		{
			// printf's arguments and sizeof follow each description's types.
			src: "fbt::fa:entry, fbt::fc:entry { printf(\"%d %d\\n\", args[0]->y, sizeof (args[0]->y)); }",
			want: []string{
				"fbt::fa:entry | ldx 0x8 | 0x8",
				"fbt::fc:entry | lduh 0x4 | 0x2",
			},
		},
		{
			// *args[0] is each description's struct (and does not make
			// args an int64_t, as a variable first used would be).
			src:  "fbt::fa:entry, fbt::fb:entry { trace(sizeof (*args[0])); trace(*args[0]); }",
			want: []string{"fbt::fa:entry | 0x10 | ", "fbt::fb:entry | 0x21 | "},
		},
		{
			// The if/else rewrite's clauses each have both descriptions.
			src: "fbt::fa:entry, fbt::fb:entry { if (args[0]->y) { trace(1); } else { trace(args[0]->y); } }",
			want: []string{
				"dtrace:::ERROR | 0x1",
				"fbt::fa:entry | ",
				"fbt::fb:entry | ",
				"fbt::fa:entry | pred 0x1 | ldx 0x1 0x8 0x0",
				"fbt::fb:entry | pred 0x1 | ldsb 0x1 0x20 0x0",
				"fbt::fa:entry | pred 0x1 0x0 | 0x1",
				"fbt::fb:entry | pred 0x1 0x0 | 0x1",
				"fbt::fa:entry | pred 0x1 | 0x1 0x0",
				"fbt::fb:entry | pred 0x1 | 0x1 0x0",
				"fbt::fa:entry | pred 0x1 0x0 | ldx 0x8",
				"fbt::fb:entry | pred 0x1 0x0 | ldsb 0x20",
			},
		},
	}
	for _, tt := range tests {
		_, _, p, err := compileWith(perDescProbes(), tt.src)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		validate(t, tt.src, p)
		var got []string
		for _, ecb := range p.ECBs {
			parts := []string{ecb.Probe.String()}
			if ecb.Pred != nil {
				parts = append(parts, "pred "+loads(ecb.Pred))
			}
			for _, a := range ecb.Actions {
				parts = append(parts, loads(a.DIFO))
			}
			got = append(got, strings.Join(parts, " | "))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: ECBs (-want +got):\n%s", tt.src, diff)
		}
		for _, s := range tt.shared {
			a, b := p.ECBs[s[0]], p.ECBs[s[1]]
			if a.Pred != b.Pred || len(a.Actions) == 0 || &a.Actions[0] != &b.Actions[0] {
				t.Errorf("%s: ECBs %d and %d do not share their DIFOs", tt.src, s[0], s[1])
			}
		}
		// Descriptions that differ never share.
		for i := range p.ECBs {
			for j := i + 1; j < len(p.ECBs); j++ {
				if got[i][strings.Index(got[i], " |"):] != got[j][strings.Index(got[j], " |"):] &&
					len(p.ECBs[i].Actions) > 0 && &p.ECBs[i].Actions[0] == &p.ECBs[j].Actions[0] {
					t.Errorf("%s: ECBs %d and %d share DIFOs but differ", tt.src, i, j)
				}
			}
		}
	}
}

// TestPerDescriptionErrors checks the errors that come of checking a
// clause for each description: those of a later description, and
// D_ARGS_MULTI for a description whose probes dtrace does not vouch for.
func TestPerDescriptionErrors(t *testing.T) {
	tests := []struct {
		src string
		tag diag.Tag
		msg string
	}{
		{"fbt::f*:entry { trace(args[0]->y); }", diag.D_ARGS_MULTI,
			"\"t.d\", line 1: args[ ] may not be referenced because probe description fbt::f*:entry matches an unstable set of probes"},
		{"fbt::fa:entry, fbt::f*:entry { trace(args[0]->y); }", diag.D_ARGS_MULTI,
			"\"t.d\", line 1: args[ ] may not be referenced because probe description fbt::f*:entry matches an unstable set of probes"},
		// arg0 needs no types.
		{"fbt::f*:entry { trace(arg0); }", 0, ""},
		// As in dtrace, self->p is a struct a * from the first
		// description's checking; the second assigns it a struct b *.
		{"fbt::fa:entry, fbt::fb:entry { self->p = args[0]; }", diag.D_OP_INCOMPAT,
			"\"t.d\", line 1: operands have incompatible types: \"struct a *\" = \"struct b *\""},
		{"fbt::fa:entry, fbt::fb:entry { trace(args[0]->pad[0]); }", diag.D_TYPE_MEMBER,
			"\"t.d\", line 1: pad is not a member of struct a"},
		{"fbt::fb:entry, fbt::fa:entry { trace(args[0]->pad[0]); }", diag.D_TYPE_MEMBER,
			"\"t.d\", line 1: pad is not a member of struct a"},
	}
	for _, tt := range tests {
		_, _, _, err := compileWith(perDescProbes(), tt.src)
		if tt.tag == 0 {
			if err != nil {
				t.Errorf("%s: %v", tt.src, err)
			}
			continue
		}
		var de *diag.Error
		if !errors.As(err, &de) || de.Tag != tt.tag || err.Error() != tt.msg {
			t.Errorf("%s: got %v, want %s %q", tt.src, err, tt.tag, tt.msg)
		}
	}
}

// TestVariants checks what the checker gives the code generator: no
// variant for single descriptions and descriptions alike, one per set
// of descriptions alike otherwise.
func TestVariants(t *testing.T) {
	src := "BEGIN { trace(1); } fbt::fa:entry, fbt::fb:entry, fbt::fa2:entry, fbt::fc:entry, fbt::fb:entry { trace(args[0]->y); }"
	info, prog, _, err := compileWith(perDescProbes(), src)
	if err != nil {
		t.Fatal(err)
	}
	begin, cl := prog.Decls[0].(*ast.Clause), prog.Decls[1].(*ast.Clause)
	if v := info.Variant(begin, 0); v != nil {
		t.Errorf("BEGIN has variant %+v", v)
	}
	vs := make([]*check.Variant, len(cl.Probes))
	for i := range vs {
		vs[i] = info.Variant(cl, i)
	}
	if vs[0] != nil || vs[2] != nil || vs[1] == nil || vs[3] == nil || vs[1] == vs[3] || vs[4] != vs[1] {
		t.Errorf("variants %v: want nil, b, nil, c, b", vs)
	}
	y := cl.Body[0].(*ast.ExprStmt).X.(*ast.CallExpr).Args[0]
	for i, want := range []string{"long", "char", "long", "unsigned short", "char"} {
		if got := info.Value(vs[i], y).Type.String(); got != want {
			t.Errorf("args[0]->y for %s: %s, want %s", cl.Probes[i], got, want)
		}
	}
}

// TestVariantsShared checks that descriptions whose probes have alike
// argument types (each its own pointer type to one struct) check alike
// whatever the clause does, so that they share one ECB's code.
func TestVariantsShared(t *testing.T) {
	srcs := []string{
		`fbt::fa:entry, fbt::fa2:entry { printf("%d %s %d\n", pid, execname, args[0]->y); self->ts = timestamp; this->p = args[0]; trace(this->p->x); }`,
		`BEGIN { self->ts = 1; } fbt::fa:entry, fbt::fa2:entry /self->ts/ { @a[probefunc, stringof(execname)] = quantize(timestamp - self->ts); self->ts = 0; }`,
		`fbt::fa:entry, fbt::fa2:entry { x = (int *)arg0; trace(*x); trace(sizeof (*args[0])); trace(copyinstr(arg1)); trace(args[0] == NULL ? 1 : 2); }`,
		`inline int foo = 3; fbt::fa:entry, fbt::fa2:entry { trace(foo + args[1]); a["k", args[0]->x] = 1; trace(strjoin("a", "b")); }`,
		`fbt::fa:entry, fbt::fa2:entry { trace(*args[0]); print(*args[0]); trace(&args[0]->y); trace(args[0]->y ? "s" : "t"); }`,
	}
	for _, src := range srcs {
		info, prog, p, err := compileWith(perDescProbes(), src)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		for _, d := range prog.Decls {
			cl, ok := d.(*ast.Clause)
			if !ok {
				continue
			}
			for i := range cl.Probes {
				if v := info.Variant(cl, i); v != nil {
					for e, x := range v.Values {
						t.Errorf("%s: %s checks %T at %v to %+v, %s to %+v", src, cl.Probes[i], e, e.Pos(), x, cl.Probes[0], info.Values[e])
					}
				}
			}
		}
		last := p.ECBs[len(p.ECBs)-2:]
		if len(last[0].Actions) == 0 || &last[0].Actions[0] != &last[1].Actions[0] {
			t.Errorf("%s: the ECBs of fa and fa2 do not share their code", src)
		}
	}
}
