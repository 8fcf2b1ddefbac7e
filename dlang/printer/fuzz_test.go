package printer_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/internal/fuzznest"
)

// FuzzRoundTrip feeds arbitrary text to the lexer and parser: they must
// never panic, must fail only with a *diag.Error, and whatever parses
// must print as -d prints it and read back as the same tree, unless the
// printed form, parenthesised throughout, nests past parser.MaxNesting.
func FuzzRoundTrip(f *testing.F) {
	scripts, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "scripts", "*.d"))
	for _, s := range scripts {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"BEGIN { x = 1 + 2 * 3; }",
		"syscall::read:entry /pid == $1/ { @a[execname, tid] = quantize(arg2); }",
		"int *x[4]; typedef struct foo { int a : 3; char *b; } foo_t; BEGIN { p = (foo_t *)arg0; trace(p->b); }",
		"tick-1s { if (x) { y++; } else if (z) { y--; } else ; }",
		"BEGIN { s = \"a\\tb\\001\"; c = 'ab'; n = 0x7fffffffffffffffull >> 3; }",
		"inline int N = 3; translator t < int *x > { a = *x; }; provider p { probe q(int) : (int); };",
		"#pragma D option quiet\nBEGIN / x / 2 / { trace(xlate<foo>(arg0)); }",
	} {
		f.Add([]byte(s))
	}
	// Deep nesting of every construct, which inputs reach through
	// fuzznest's directive.
	for _, s := range fuzznest.Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		src = fuzznest.Expand(src)
		prog, types, err := parseTwice("fuzz.d", src)
		if err != nil {
			var de *diag.Error
			if !errors.As(err, &de) {
				t.Fatalf("error is %T, not *diag.Error: %v", err, err)
			}
			return
		}
		if typeAndVariable(prog) {
			return
		}
		roundTrip(t, "fuzz.d", prog, types)
	})
}

// typeAndVariable reports whether a clause uses a name first as a type
// and then as a variable. dtrace allows it (the name stays a variable
// from then on), but -d output has no declarations, so no one world can
// read both uses back.
func typeAndVariable(prog *ast.Program) bool {
	typeNames, varNames := map[string]bool{}, map[string]bool{}
	for _, c := range clauses(prog) {
		ast.Inspect(c, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.NamedType:
				typeNames[n.Name] = true
			case *ast.SelectorExpr:
				ast.Inspect(n.X, func(m ast.Node) bool {
					if id, ok := m.(*ast.Ident); ok {
						varNames[id.Name] = true
					}
					return true
				})
				return false
			case *ast.Ident:
				varNames[n.Name] = true
			}
			return true
		})
	}
	for name := range typeNames {
		if varNames[name] {
			return true
		}
	}
	return false
}
