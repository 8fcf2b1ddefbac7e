package parser_test

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/printer"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
)

// compile runs src through the whole compiler, as kdtrace -e does: parser,
// sugar, checker, code generator, DOF writer, and the printer of -d.
func compile(src []byte) error {
	c := check.NewChecker(&check.Config{})
	prog, err := parser.ParseFile("nest.d", src, &parser.Config{Types: c, Declare: c.Declare, DefineTag: c.DefineTag})
	if err != nil {
		return err
	}
	if err := (&sugar.Expander{}).Expand(prog); err != nil {
		return err
	}
	var b strings.Builder
	if err := printer.Fprint(&b, prog); err != nil {
		return err
	}
	info, err := c.Check(prog)
	if err != nil {
		return err
	}
	p, err := emit.Program(prog, info, nil)
	if err != nil {
		return err
	}
	_, err = dof.Write(p, nil)
	return err
}

// repeat is strings.Repeat for building deep scripts.
func repeat(s string, n int) string { return strings.Repeat(s, n) }

// nestingShape is a program that nests one construct n levels deep. per
// is how many levels of nesting one repetition takes.
type nestingShape struct {
	name string
	per  int
	src  func(n int) string
	// under and over are the depths tried under and far over the
	// limit; 0 means (MaxNesting-10)/per and 300,000.
	under, over int
	// expand marks a shape that nests only once the code generator
	// expands inlines or translators, which bounds it with errors of
	// its own.
	expand bool
	// syntax marks a shape that is a syntax error at any depth: &&&y is
	// && &y, as in C.
	syntax bool
}

// decls declares what the shapes' clauses use.
const decls = "int y; int *p; struct st { int a; } s; int a[int];\n"

func clause(expr string) string { return decls + "BEGIN { x = " + expr + "; }\n" }

var nestingShapes = []nestingShape{
	{name: "parens", per: 1, over: 3_000_000, src: func(n int) string { return clause(repeat("(", n) + "1" + repeat(")", n)) }},
	{name: "parens-var", per: 1, src: func(n int) string { return clause(repeat("(", n) + "y" + repeat(")", n)) }},
	{name: "predicate-parens", per: 1, src: func(n int) string { return decls + "BEGIN /" + repeat("(", n) + "y" + repeat(")", n) + "/ { }\n" }},
	{name: "casts", per: 1, src: func(n int) string { return clause(repeat("(long)", n) + "y") }},
	{name: "lneg", per: 1, src: func(n int) string { return clause(repeat("!", n) + "y") }},
	{name: "ineg", per: 1, src: func(n int) string { return clause(repeat("- ", n) + "y") }},
	{name: "ipos", per: 1, src: func(n int) string { return clause(repeat("+ ", n) + "y") }},
	{name: "bneg", per: 1, src: func(n int) string { return clause(repeat("~", n) + "y") }},
	{name: "deref", per: 1, src: func(n int) string { return clause(repeat("*", n) + "p") }},
	{name: "addrof", per: 1, src: func(n int) string { return clause(repeat("& ", n) + "y") }},
	{name: "land-addrof", syntax: true, src: func(n int) string { return clause(repeat("&", n) + "y") }},
	{name: "preinc", per: 1, src: func(n int) string { return clause(repeat("++", n) + "y") }},
	{name: "sizeof", per: 1, src: func(n int) string { return clause(repeat("sizeof ", n) + "y") }},
	{name: "sizeof-parens", per: 1, src: func(n int) string { return clause(repeat("sizeof(", n) + "y" + repeat(")", n)) }},
	{name: "stringof", per: 1, src: func(n int) string { return clause(repeat("stringof ", n) + "y") }},
	{name: "cond-right", per: 1, src: func(n int) string { return clause(repeat("y ? 1 : ", n) + "0") }},
	{name: "cond-middle", per: 1, src: func(n int) string { return clause(repeat("y ? ", n) + "1" + repeat(" : 0", n)) }},
	{name: "cond-left", per: 1, src: func(n int) string { return clause(repeat("(", n) + "y" + repeat(" ? 1 : 0)", n)) }},
	{name: "assign", per: 1, src: func(n int) string { return clause(repeat("y = ", n) + "1") }},
	{name: "add-chain", per: 1, src: func(n int) string { return clause("y" + repeat(" + y", n)) }},
	{name: "lor-chain", per: 1, src: func(n int) string { return clause("y" + repeat(" || y", n)) }},
	{name: "const-chain", per: 0, src: func(n int) string { return clause("1" + repeat(" + 1", n)) }},
	{name: "comma-chain", per: 1, src: func(n int) string { return clause("y" + repeat(", y", n)) }},
	{name: "mixed-chain", per: 2, src: func(n int) string { return clause(repeat("(y + ", n) + "y" + repeat(") * y", n)) }},
	{name: "index-chain", per: 1, src: func(n int) string { return clause("a[1]" + repeat("[1]", n)) }},
	{name: "index-nested", per: 1, src: func(n int) string { return clause(repeat("a[", n) + "1" + repeat("]", n)) }},
	{name: "call-nested", per: 1, src: func(n int) string { return clause(repeat("strlen(", n) + "\"\"" + repeat(")", n)) }},
	{name: "selector-chain", per: 1, src: func(n int) string { return clause("s" + repeat(".a", n)) }},
	{name: "postinc-chain", per: 1, src: func(n int) string { return clause("y" + repeat("++", n)) }},
	{name: "xlate", per: 1, src: func(n int) string { return clause(repeat("xlate<int>(", n) + "y" + repeat(")", n)) }},
	{name: "if", per: 1, src: func(n int) string { return decls + "BEGIN { " + repeat("if (y) ", n) + "x = 1; }\n" }},
	{name: "if-braces", per: 1, src: func(n int) string {
		return decls + "BEGIN { " + repeat("if (y) { x = 1; ", n) + repeat("}", n) + " }\n"
	}},
	{name: "else-if", per: 1, src: func(n int) string { return decls + "BEGIN { " + repeat("if (y) x = 1; else ", n) + "x = 2; }\n" }},
	{name: "struct", per: 1, src: func(n int) string { return nestedSOU("struct", n) }},
	{name: "union", per: 1, src: func(n int) string { return nestedSOU("union", n) }},
	// Structs that each hold the one before by value nest through
	// their definitions, not their syntax: no limit applies, and the
	// layout must take linear time.
	{name: "struct-chain", per: 0, over: 20_000, src: func(n int) string {
		var b strings.Builder
		b.WriteString("struct s0 { int a; };\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "struct s%d { struct s%d a; char c; };\n", i, i-1)
		}
		fmt.Fprintf(&b, "struct s%d v;\nBEGIN { x = sizeof(v); }\n", n)
		return b.String()
	}},
	{name: "pointer-declarator", per: 1, src: func(n int) string { return "int " + repeat("*", n) + "q;\nBEGIN { x = q; }\n" }},
	{name: "pointer-cast", per: 1, src: func(n int) string { return clause("(int " + repeat("*", n) + ")0") }},
	{name: "array-declarator", per: 1, src: func(n int) string {
		return "int q" + repeat("[1]", n) + ";\nBEGIN { x = q" + repeat("[0]", min(n, 3)) + "; }\n"
	}},
	{name: "array-sizeof", per: 1, src: func(n int) string { return clause("sizeof(int" + repeat("[1]", n) + ")") }},
	{name: "paren-declarator", per: 1, src: func(n int) string { return "int " + repeat("(", n) + "q" + repeat(")", n) + ";\nBEGIN { x = q; }\n" }},
	{name: "func-declarator", per: 3, src: func(n int) string {
		return "int f(" + repeat("int (*)(", n) + "int" + repeat(")", n+1) + ";\nBEGIN { x = 1; }\n"
	}},
	{name: "translator-member", per: 1, src: func(n int) string {
		return decls + "struct tr { int a; };\ntranslator struct tr < int *v > { a = " + repeat("(", n) + "*v" + repeat(")", n) + "; };\n" +
			"BEGIN { x = xlate<struct tr>(p).a; }\n"
	}},
	{name: "inline-value", per: 1, src: func(n int) string {
		return decls + "inline int iv = " + repeat("- ", n) + "y;\nBEGIN { x = iv; }\n"
	}},
	// Each inline names the one before: the code generator expands
	// them into one expression as deep as the chain is long.
	{name: "inline-chain", per: 1, over: 100_000, expand: true, src: func(n int) string {
		return inlineChain(n, "i%[1]d + y")
	}},
	// Each translator's member translates with the one before; the
	// registers that hold the inputs run out first.
	{name: "translator-chain", under: 100, over: 10_000, expand: true, src: func(n int) string {
		var b strings.Builder
		b.WriteString(decls + "struct t0 { int a; };\ntranslator struct t0 < int *v > { a = *v; };\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "struct t%d { int a; };\ntranslator struct t%d < int *v > { a = xlate<struct t%d>(v).a + 1; };\n", i, i, i-1)
		}
		fmt.Fprintf(&b, "BEGIN { x = xlate<struct t%d>(p).a; }\n", n)
		return b.String()
	}},
	// Each inline names the one before twice: expanded, the last one is
	// 2^n leaves.
	{name: "inline-doubling", per: 0, over: 100, expand: true, src: func(n int) string {
		return inlineChain(n, "i%[1]d + i%[1]d")
	}},
}

// inlineChain defines inlines i0 = y and i1 … in, each as def, whose
// %[1]d is the number of the inline before, and a BEGIN clause that
// assigns in to x.
func inlineChain(n int, def string) string {
	var b strings.Builder
	b.WriteString(decls + "inline int i0 = y;\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "inline int i%[2]d = "+def+";\n", i-1, i)
	}
	fmt.Fprintf(&b, "BEGIN { x = i%d; }\n", n)
	return b.String()
}

// nestedSOU is kw s0 { kw s1 { … int x; } m1; … } nested n deep.
func nestedSOU(kw string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s s%d { ", kw, i)
	}
	b.WriteString("int x; ")
	for i := n - 1; i > 0; i-- {
		fmt.Fprintf(&b, "} m%d; ", i)
	}
	b.WriteString("};\nBEGIN { x = 1; }\n")
	return b.String()
}

// isNestingError reports whether err is the error of nesting too deeply.
func isNestingError(err error) bool {
	var de *diag.Error
	return errors.As(err, &de) && de.Tag == diag.D_SYNTAX &&
		strings.Contains(de.Msg, fmt.Sprintf("nesting exceeds %d levels", parser.MaxNesting))
}

// TestNesting compiles every recursive construct nested just under
// parser.MaxNesting, which must compile or fail with an ordinary error,
// and far over it, which must fail with the nesting error, at once and
// without exhausting a stack much smaller than Go's default.
func TestNesting(t *testing.T) {
	// Every pass together must fit in 64 MiB of stack at the limit;
	// exceeding it crashes the test, as exceeding Go's 1 GiB would crash
	// kdtrace.
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	for _, s := range nestingShapes {
		t.Run(s.name, func(t *testing.T) {
			if s.syntax {
				for _, n := range []int{3, 300_000} {
					var de *diag.Error
					if err := compile([]byte(s.src(n))); !errors.As(err, &de) || !strings.HasPrefix(de.Msg, "syntax error") {
						t.Errorf("%d levels: got %v, want a syntax error", n, err)
					}
				}
				return
			}
			if under := s.under; s.per > 0 || under > 0 {
				if under == 0 {
					under = (parser.MaxNesting - 10) / s.per
				}
				err := compile([]byte(s.src(under)))
				t.Logf("%d levels: %v", under, err)
				if isNestingError(err) {
					t.Errorf("%d levels: %v", under, err)
				}
				var de *diag.Error
				if err != nil && !errors.As(err, &de) {
					t.Errorf("%d levels: error is %T, not *diag.Error: %v", under, err, err)
				}
			}
			over := s.over
			if over == 0 {
				over = 300_000
			}
			err := compile([]byte(s.src(over)))
			var de *diag.Error
			switch {
			case s.expand:
				if !errors.As(err, &de) || !strings.Contains(de.Msg, "once its inlines and translators are expanded") &&
					!strings.HasPrefix(de.Msg, "DIF program exceeds maximum program size") && de.Tag != diag.D_NOREG {
					t.Errorf("%d levels: got %v, want the code generator's limit", over, err)
				}
			case s.per == 0:
				if err != nil {
					t.Errorf("%d levels: %v", over, err)
				}
			case !isNestingError(err):
				t.Errorf("%d levels: got %v, want the nesting error", over, err)
			}
		})
	}
}
