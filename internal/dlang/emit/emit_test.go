package emit_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
	"github.com/kdtrace/kdtrace/internal/dtracetest"
)

// compile parses, checks and generates src.
func compile(t *testing.T, src string) *dof.Program {
	t.Helper()
	p, err := dtracetest.Compile("t.d", []byte(src), nil)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return p
}

// validate checks every DIFO of p as the kernel would.
func validate(t *testing.T, src string, p *dof.Program) {
	t.Helper()
	v := dif.NewValidator(dif.Limits{})
	check := func(d *dof.DIFO) {
		if d == nil {
			return
		}
		if err := v.Validate(emit.Object(d)); err != nil {
			t.Errorf("%s: DIFO refused: %v", src, err)
		}
	}
	for _, ecb := range p.ECBs {
		check(ecb.Pred)
		for _, a := range ecb.Actions {
			check(a.DIFO)
		}
	}
}

func TestPrograms(t *testing.T) {
	tests := []struct {
		src   string
		kinds []dof.ActKind // the actions of the first ECB
	}{
		{"BEGIN { trace(1 + 2 * pid); }", []dof.ActKind{dof.ActDIFExpr}},
		{"BEGIN /pid == 1 && execname == \"init\"/ { exit(0); }", []dof.ActKind{dof.ActExit}},
		{"BEGIN { x = 1; self->y = x << 3; this->z = self->y ? -x : ~x; trace(this->z); }",
			[]dof.ActKind{dof.ActDIFExpr, dof.ActDIFExpr, dof.ActDIFExpr, dof.ActDIFExpr}},
		{"BEGIN { a[1, \"k\"] = 2; trace(a[1, \"k\"]); }", []dof.ActKind{dof.ActDIFExpr, dof.ActDIFExpr}},
		{"BEGIN { @c[execname, pid] = count(); @q = lquantize(timestamp, 0, 100, 10); }",
			[]dof.ActKind{dof.ActDIFExpr, dof.ActDIFExpr, dof.ActDIFExpr, dof.AggCount, dof.ActDIFExpr, dof.AggLQuantize}},
		{"BEGIN { printf(\"%d %s\\n\", pid, execname); printf(\"hi\\n\"); }", []dof.ActKind{dof.ActPrintf, dof.ActPrintf, dof.ActPrintf}},
		{"struct s { int a; char b; int c : 3; }; BEGIN { this->p = (struct s *)alloca(sizeof (struct s)); this->p->a = 5; trace(this->p->a + this->p->c); }",
			[]dof.ActKind{dof.ActDIFExpr, dof.ActDIFExpr, dof.ActDIFExpr}},
		{"BEGIN { x = (char)arg0; y = (unsigned short)x; trace(strlen(execname) + x + y); }",
			[]dof.ActKind{dof.ActDIFExpr, dof.ActDIFExpr, dof.ActDIFExpr}},
		{"BEGIN { x++; --x; x += 3; trace(x); }",
			[]dof.ActKind{dof.ActDIFExpr, dof.ActDIFExpr, dof.ActDIFExpr, dof.ActDIFExpr}},
		{"BEGIN { a = 4; trace((a + a) * ((a + a) * ((a + a) * ((a + a) * ((a + a) * ((a + a) * (a + a))))))); }",
			[]dof.ActKind{dof.ActDIFExpr, dof.ActDIFExpr}},
		{"struct s { int a : 3; int b : 5; }; BEGIN { this->p = (struct s *)alloca(4); this->p->b = 7; trace(this->p->b); }",
			[]dof.ActKind{dof.ActDIFExpr, dof.ActDIFExpr, dof.ActDIFExpr}},
		{"BEGIN { ftruncate(); printm(8, (uintptr_t *)alloca(8)); }", []dof.ActKind{dof.ActLibAct, dof.ActPrintm}},
		{"BEGIN { s = speculation(); } BEGIN { speculate(s); trace(1); } BEGIN { commit(s); }", []dof.ActKind{dof.ActDIFExpr}},
		// Translators that translate again in a member, four deep,
		// under sums and ||: each input beyond the registers waits in
		// a spill slot.
		{`struct n4 { int v; }; struct n3 { struct n4 *p; int w; };
struct n2 { struct n3 *p; int w; }; struct n1 { struct n2 *p; int w; };
typedef struct t { int v; } t_t;
translator t_t < struct n4 *P > { v = P == NULL || P->v == 0 || P->v == 99 ? -1 : P->v + 1; };
translator t_t < struct n3 *P > { v = P == NULL || P->w == 0 ? -1 : xlate <t_t> (P->p).v + P->w; };
translator t_t < struct n2 *P > { v = P == NULL || P->w == 0 ? -1 : xlate <t_t> (P->p).v + P->w; };
translator t_t < struct n1 *P > { v = P == NULL || P->w == 0 ? -1 : xlate <t_t> (P->p).v + P->w; };
BEGIN { trace(1 + (2 + (3 + xlate <t_t> ((struct n1 *)arg0).v))); }`, []dof.ActKind{dof.ActDIFExpr}},
	}
	for _, tt := range tests {
		p := compile(t, tt.src)
		validate(t, tt.src, p)
		var got []dof.ActKind
		for _, a := range p.ECBs[0].Actions {
			got = append(got, a.Kind)
		}
		if len(got) != len(tt.kinds) {
			t.Errorf("%s: actions %v, want %v", tt.src, got, tt.kinds)
			continue
		}
		for i := range got {
			if got[i] != tt.kinds[i] {
				t.Errorf("%s: actions %v, want %v", tt.src, got, tt.kinds)
				break
			}
		}
		if _, err := dof.Write(p, nil); err != nil {
			t.Errorf("%s: dof.Write: %v", tt.src, err)
		}
	}
}

func TestList(t *testing.T) {
	p := compile(t, "BEGIN /pid != 0/ { trace(execname); }")
	var b strings.Builder
	if err := emit.List(&b, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"predicate", "ldgs DT_VAR(278), %r1", "ret", "execname"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("listing lacks %q:\n%s", want, b.String())
		}
	}
}

// TestEmitterClauses checks that generating each clause as the checker
// hands it over (check.Checker.CheckClauses) gives the program that
// generating it after checking the whole gives: spill slots, numbered
// after every clause-local variable of the program, are numbered so
// even in a clause before the last variable is known.
func TestEmitterClauses(t *testing.T) {
	const src = `BEGIN { this->a = 1; }
BEGIN { a = 4; trace((a + a) * ((a + a) * ((a + a) * ((a + a) * ((a + a) * ((a + a) * (a + a))))))); }
BEGIN { this->b = 2; this->c = 3; trace(this->b + this->c); }
BEGIN { printf("%d %s\n", a, execname); @[execname] = count(); }
`
	stream := func() (*dof.Program, *check.Info) {
		c := check.NewChecker(&check.Config{})
		prog, err := parser.ParseFile("t.d", []byte(src), &parser.Config{Types: c, Declare: c.Declare, AllowEmpty: true})
		if err != nil {
			t.Fatal(err)
		}
		em := emit.NewEmitter(prog, nil)
		info, err := c.CheckClauses(prog, em.Clause)
		if err != nil {
			t.Fatal(err)
		}
		p, err := em.Finish(info)
		if err != nil {
			t.Fatal(err)
		}
		return p, info
	}
	got, info := stream()
	want := compile(t, src)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("clause by clause (-whole +clauses):\n%s", diff)
	}
	// The test is worth something only if the second clause spills
	// past the locals the third defines.
	spilled := false
	for _, a := range got.ECBs[1].Actions {
		if a.DIFO == nil {
			continue
		}
		for _, v := range a.DIFO.Vars {
			if v.Scope == dif.ScopeLocal && v.ID >= info.NextLocal && info.NextLocal > 0x501 {
				spilled = true
			}
		}
	}
	if !spilled {
		t.Errorf("the second clause has no spill slot after the program's locals (NextLocal %#x)", info.NextLocal)
	}
	validate(t, src, got)
}

// TestInlineArrayMember checks that a member of an array inline's
// translation, as io.d's fds[fd].fi_name, is its member's expression
// alone, as dtrace gives it: no scratch for the whole struct (allocs),
// and the member's value.
func TestInlineArrayMember(t *testing.T) {
	src := `typedef struct st { int a; string s; int b; } st_t;
		translator st_t < int K > { a = K + 1; s = "x"; b = K * 10; };
		inline st_t X[int k] = xlate <st_t> (k * 2);
		BEGIN { trace(X[3].b); }`
	p := compile(t, src)
	validate(t, src, p)
	o := emit.Object(p.ECBs[0].Actions[0].DIFO)
	for pc, in := range o.Code {
		if in.Op() == dif.ALLOCS {
			t.Errorf("instruction %d allocates scratch: %v", pc, in)
		}
	}
	v, err := vm.New(nil).Run(o, nil)
	if err != nil || v != 60 {
		t.Errorf("X[3].b = %d, %v; want 60", v, err)
	}
}

// TestExpressionStatementVoid checks that an expression used as a
// statement records nothing, as dt_compile_exp gives its DIFO the void
// return type, while trace() records its argument: the Toolkit's
// "cond ? printf(...) : 1;" leaves a bare 1 when cond folds to 0.
func TestExpressionStatementVoid(t *testing.T) {
	tests := []struct {
		src  string
		size uint32 // the first action's return size
	}{
		{"BEGIN { 1; }", 0},
		{"BEGIN { pid + 1; }", 0},
		{`BEGIN { "str"; }`, 0},
		{"BEGIN { execname; }", 0},
		{"BEGIN { x = 1; }", 0},
		{"inline int OPT = 0; BEGIN { OPT ? printf(\"x\") : 1; }", 0},
		{"BEGIN { trace(1); }", 4},
		{"BEGIN { trace((char)1); }", 1},
	}
	for _, tt := range tests {
		p := compile(t, tt.src)
		validate(t, tt.src, p)
		a := p.ECBs[0].Actions[0]
		if a.Kind != dof.ActDIFExpr || a.DIFO.Ret.Size != tt.size || a.DIFO.Ret.Kind != dif.TypeCTF {
			t.Errorf("%s: action %v returning %+v; want a DIFEXPR of a CTF type of size %d", tt.src, a.Kind, a.DIFO.Ret, tt.size)
		}
	}
}
