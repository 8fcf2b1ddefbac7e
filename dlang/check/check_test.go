package check_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// checkSource parses and checks src with D's builtin types only.
func checkSource(src string) (*check.Info, error) {
	return checkWith(&check.Config{}, src)
}

// checkWith parses and checks src with a checker configured by cfg.
func checkWith(cfg *check.Config, src string) (*check.Info, error) {
	c := check.NewChecker(cfg)
	prog, err := parser.ParseFile("t.d", []byte(src), &parser.Config{Types: c, Declare: c.Declare, DefineTag: c.DefineTag, AllowEmpty: true})
	if err != nil {
		return nil, err
	}
	return c.Check(prog)
}

// isError reports whether err is a diagnostic tagged tag and, unless msg
// is empty, saying msg.
func isError(err error, tag diag.Tag, msg string) bool {
	var de *diag.Error
	return errors.As(err, &de) && de.Tag == tag && (msg == "" || de.Format("t.d", false) == msg)
}

// wantFormatted checks that checking src fails with the diagnostic
// want, formatted with its tag.
func wantFormatted(t *testing.T, src, want string) {
	t.Helper()
	_, err := checkSource(src)
	de, ok := err.(*diag.Error)
	if !ok {
		t.Errorf("%q: got %v (%T), want %s", src, err, err, want)
		return
	}
	if got := de.Format("t.d", true); got != want {
		t.Errorf("%q:\ngot  %s\nwant %s", src, got, want)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		src string
		tag diag.Tag
		msg string // the message, when it matters
	}{
		{"BEGIN { trace(x); }", diag.D_IDENT_UNDEF, "line 1: failed to resolve x: Unknown variable name"},
		{"BEGIN { trace(self->x); }", diag.D_VAR_UNDEF, "line 1: self->x has not yet been declared or assigned"},
		{"BEGIN { x = \"a\"; y = x * 1; }", diag.D_OP_ARITH, "line 1: operator * requires operands of arithmetic type"},
		{"struct s { char b[8]; }; BEGIN { this->s = (struct s *)0; x = this->s->b; }", diag.D_OP_ARRFUN, "line 1: operator = may not be applied to operand of type \"char [8]\""},
		{"BEGIN { x = 1; x = \"s\"; }", diag.D_OP_INCOMPAT, "line 1: operands have incompatible types: \"int\" = \"string\""},
		{"BEGIN { trace(); }", diag.D_PROTO_LEN, "line 1: trace( ) prototype mismatch: 0 args passed, 1 expected"},
		{"BEGIN { substr(\"a\", 1, 2, 3); }", diag.D_PROTO_LEN, "line 1: substr( ) prototype mismatch: 4 args passed, at least 2 expected"},
		{"BEGIN { chill(\"badarg\"); }", diag.D_PROTO_ARG, "line 1: chill( ) argument #1 is incompatible with prototype:\n\tprototype: int\n\t argument: string"},
		{"BEGIN { x[1, 2] = 3; x[1] = 4; }", diag.D_PROTO_LEN, "line 1: x[ ] prototype mismatch: 1 key passed, 2 expected"},
		{"BEGIN { @a = count(); @a = sum(1); }", diag.D_AGG_REDEF, ""},
		{"BEGIN { @a = 1; }", diag.D_AGG_FUNC, "line 1: @a must be assigned the result of an aggregating function"},
		{"BEGIN { pid = 1; }", diag.D_OP_WRITE, "line 1: operator = can only be applied to a writable variable"},
		{"BEGIN { trace(timestamp(1)); }", diag.D_FUNC_IDKIND, "line 1: scalar 'timestamp' may not be referenced as a function"},
		{"BEGIN { x = trace; }", diag.D_IDENT_BADREF, "line 1: tracing function 'trace' may not be referenced as scalar"},
		{"BEGIN { nosuch(1); }", diag.D_FUNC_UNDEF, "line 1: undefined function name: nosuch"},
		{"BEGIN { pritnf(\"x\"); }", diag.D_FUNC_UNDEF, "line 1: undefined function name: pritnf (did you mean printf?)"},
		{"BEGIN { trace(exename); }", diag.D_IDENT_UNDEF, "line 1: failed to resolve exename: Unknown variable name (did you mean execname?)"},
		{"struct s { int count; }; BEGIN { this->p = (struct s *)0; trace(this->p->cnt); }", diag.D_TYPE_MEMBER, "line 1: cnt is not a member of struct s"},
		{"struct s { int count; }; BEGIN { this->p = (struct s *)0; trace(this->p->coumt); }", diag.D_TYPE_MEMBER, "line 1: coumt is not a member of struct s (did you mean count?)"},
		{"struct s { int a; }; BEGIN { this->p = (struct s *)0; trace(this->p->b); }", diag.D_TYPE_MEMBER, "line 1: b is not a member of struct s"},
		{"BEGIN { x = 1; trace(x->a); }", diag.D_OP_PTR, ""},
		{"BEGIN { trace(*1); }", diag.D_DEREF_NONPTR, ""},
		{"BEGIN { x = &pid; }", diag.D_ADDROF_VAR, ""},
		{"BEGIN { speculate(1); speculate(2); }", diag.D_SPEC_SPEC, ""},
		{"BEGIN { commit(1); trace(1); }", diag.D_DREC_COMM, ""},
		{"BEGIN { trace(1); commit(1); }", diag.D_COMM_DREC, ""},
		{"BEGIN { @a = lquantize(1, 10, 0, 1); }", diag.D_LQUANT_MISMATCH, ""},
		{"BEGIN { printf(\"%d\\n\"); }", diag.D_PRINTF_ARG_PROTO, ""},
		{"BEGIN { printf(\"%d %d\\n\", 1); }", diag.D_PRINTF_ARG_PROTO, ""},
		{"BEGIN { printf(\"%s\\n\", 1); }", diag.D_PRINTF_ARG_TYPE, ""},
		{"int x; int x[int];", diag.D_DECL_IDRED, ""},
		{"typedef int foo_t; typedef long foo_t;", diag.D_DECL_IDRED, ""},
		// The redefinition is found at its '{', before the members' syntax error.
		{"struct s { int a; }; struct s { int b }", diag.D_DECL_TYPERED, "line 1: type redeclared: struct s"},
		{"struct s { int a : 0; };", diag.D_DECL_BFCONST, ""},
		{"enum e { A = 1, B = 0x100000000 };", diag.D_DECL_ENOFLOW, ""},
		{"int pid;", diag.D_DECL_IDRED, "line 1: built-in identifier redeclared: pid"},
		{"BEGIN { trace((struct nosuch *)0 == 0 ? 1 : 2); x = sizeof (struct nosuch); }", diag.D_SIZEOF_TYPE, ""},
		{"int x;", diag.D_EMPTY, ""},
		{"BEGIN { x = stack(); }", diag.D_CG_EXPR, "line 1: tracing function stack( ) may not be called from a D expression (D program context required)"},
		{"BEGIN { @a = count(); clear(count()); }", diag.D_CLEAR_AGGARG, ""},
	}
	for _, tt := range tests {
		_, err := checkSource(tt.src)
		var de *diag.Error
		if !errors.As(err, &de) {
			t.Errorf("%s: got %v, want %s", tt.src, err, tt.tag)
			continue
		}
		if de.Tag != tt.tag {
			t.Errorf("%s: got %s, want %s", tt.src, de.Format("t.d", true), tt.tag)
			continue
		}
		if tt.msg != "" && de.Format("t.d", false) != tt.msg {
			t.Errorf("%s:\n got %q\nwant %q", tt.src, de.Format("t.d", false), tt.msg)
		}
	}
}

func TestAccepts(t *testing.T) {
	for _, src := range []string{
		"BEGIN { @a[stack()] = count(); @b[sym(0), ustack(5)] = sum(1); }",
		"BEGIN { x = \"abc\"; y = x[1]; }",
		"BEGIN { a[1, \"x\"] = 2; trace(a[2, \"y\"]); }",
		"BEGIN { self->t = timestamp; } END /self->t/ { @d = quantize(timestamp - self->t); self->t = 0; }",
		"BEGIN { this->p = (int *)alloca(8); *this->p = 1; }",
		"struct s { int a; }; translator struct s < int x > { a = x; }; BEGIN { trace(xlate<struct s>(1).a); }",
		"BEGIN { speculation(); printf(\"%d %s %p\\n\", 1, \"s\", (void *)0); }",
		"inline int N = 3; BEGIN { @q = lquantize(N, 0, 10, 1); @q = lquantize(1, 0, 10, 1); }",
		// A forward declaration may be completed; a union may share a struct's tag.
		"struct s; struct s { int a; }; union s { long b; }; BEGIN { trace(sizeof (struct s) + sizeof (union s)); }",
	} {
		if _, err := checkSource(src); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

func TestTypes(t *testing.T) {
	tests := []struct {
		src, want string // want is the type of the last statement's expression
	}{
		{"BEGIN { x = 1; }", "int"},
		{"BEGIN { x = 1 + 2L; }", "long"},
		{"BEGIN { x = 1U + 2; }", "unsigned int"},
		{"BEGIN { x = execname; }", "string"},
		{"BEGIN { x = timestamp; }", "uint64_t"},
		{"BEGIN { x = (char)1 + (char)2; }", "char"},
		{"BEGIN { x = strlen(\"a\"); }", "size_t"},
		{"BEGIN { x = stringof(1); }", "string"},
		{"BEGIN { x = (int *)0; y = x + 1; }", "int *"},
		{"BEGIN { x = (int *)0; y = x - x; }", "ptrdiff_t"},
		{"struct s { int a; char b[8]; }; BEGIN { this->s = (struct s *)0; x = this->s->a; }", "int"},
		{"BEGIN { x = \"a\"; y = x + 1; }", "string"},
		{"BEGIN { x = 1 ? \"a\" : \"b\"; }", "string"},
		{"BEGIN { y = 1; x = sizeof (y); }", "size_t"},
		// Every function pointer D declares is CTF's int (*)().
		{"struct s { void (*g)(int); }; BEGIN { this->s = (struct s *)0; x = this->s->g; }", "int (*)()"},
		{"BEGIN { x = (char *(*)(void))0; }", "int (*)()"},
		// A folded constant keeps the typedef or enum it came from.
		{"BEGIN { x = (ulong_t)3; }", "ulong_t"},
		{"enum e { A }; BEGIN { x = A; }", "enum e"},
		{"inline uint64_t N = 10; BEGIN { x = N; }", "uint64_t"},
		{"BEGIN { x = (unsigned long)3; }", "unsigned long"},
	}
	for _, tt := range tests {
		info, err := checkSource(tt.src)
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		// The assignment's type is the type of its left side.
		var got types.Type
		for e, v := range info.Values {
			if p := e.Pos(); p.Line == 1 && int(p.Col) == lastAssign(tt.src) {
				got = v.Type
			}
		}
		if got == nil || got.String() != tt.want {
			t.Errorf("%s: type %v, want %s", tt.src, got, tt.want)
		}
	}
}

// lastAssign returns the column of the last statement's first token.
func lastAssign(src string) int {
	semi := -1
	for i := len(src) - 1; i >= 0; i-- {
		if src[i] == ';' {
			if semi >= 0 {
				break
			}
			semi = i
			continue
		}
		if semi >= 0 && (src[i] == '{') {
			break
		}
	}
	// Find the start of the statement that ends at the last ';'.
	end := semi
	start := end - 1
	for start > 0 && src[start] != ';' && src[start] != '{' {
		start--
	}
	start++
	for start < end && src[start] == ' ' {
		start++
	}
	return start + 1
}

// TestFailedTranslatorScope checks that a translator's parameter is not
// left defined when its definition fails.
func TestFailedTranslatorScope(t *testing.T) {
	c := check.NewChecker(&check.Config{})
	cfg := &parser.Config{Types: c, Declare: c.Declare, AllowEmpty: true}
	if _, err := parser.ParseFile("a.d", []byte(`struct s { int a; }; translator struct s < int x > { a = "foo"; };`), cfg); err == nil {
		t.Fatal("translator with a bad member compiled")
	}
	prog, err := parser.ParseFile("b.d", []byte("BEGIN { y = x; }"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var de *diag.Error
	if _, err := c.Check(prog); !errors.As(err, &de) || de.Tag != diag.D_IDENT_UNDEF {
		t.Errorf("x after a failed translator: %v, want D_IDENT_UNDEF", err)
	}
}

// TestRegion checks that errors say which part of a clause they lie in,
// which dtrace prints for programs without lines.
func TestRegion(t *testing.T) {
	for src, want := range map[string]string{
		"BEGIN { trace(x); }":     "action list",
		"BEGIN /y/ { trace(1); }": "predicate",
		"BEGIN /1/ { trace(); }":  "action list",
		"int x; int x[int];":      "",
	} {
		_, err := checkSource(src)
		var de *diag.Error
		if !errors.As(err, &de) || de.Region != want {
			t.Errorf("%s: %v, region %q; want %q", src, err, de.Region, want)
		}
	}
}

// TestMemberLoadError checks that a kernel struct whose members its type
// source could not read is reported as such, not as a missing member.
func TestMemberLoadError(t *testing.T) {
	kernel := types.NewScope("vmlinux")
	bad := &types.Struct{Module: "vmlinux", Name: "bad", Bytes: 8}
	bad.LoadMembers(func() ([]types.Member, error) {
		return nil, errors.New("vmlinux: type 7 contains itself")
	})
	kernel.Insert("struct bad", bad)
	c := check.NewChecker(&check.Config{Modules: []types.Module{kernel}})
	src := "BEGIN { this->p = (struct bad *)0; trace(this->p->x); }"
	prog, err := parser.ParseFile("t.d", []byte(src), &parser.Config{Types: c, Declare: c.Declare})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Check(prog)
	var de *diag.Error
	want := "line 1: failed to read the members of struct bad: vmlinux: type 7 contains itself"
	if !errors.As(err, &de) || de.Tag != diag.D_TYPE_ERR || !strings.HasSuffix(de.Error(), want) {
		t.Errorf("got %v, want D_TYPE_ERR %q", err, want)
	}
}
