package printer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/printer"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/internal/corpus"
	"github.com/kdtrace/kdtrace/internal/dlang/cpp"
)

// typeSet answers IsType for the type names a program declares or uses,
// so that a reparse of its -d output knows the same types, as it would
// with the same kernel and libraries.
type typeSet map[string]bool

func (s typeSet) IsType(name string) bool { return s[name] }

func typeNames(prog *ast.Program) typeSet {
	s := typeSet{}
	for _, d := range prog.Decls {
		if d, ok := d.(*ast.Declaration); ok && d.Spec.Class == ast.Typedef {
			for _, dd := range d.Decls {
				s[dd.Name] = true
			}
		}
		ast.Inspect(d, func(n ast.Node) bool {
			if t, ok := n.(*ast.NamedType); ok {
				s[t.Name] = true
			}
			return true
		})
	}
	// -d output has no declarations: a name the script declares or uses
	// as a variable cannot also be a type in the world the output is read
	// in.
	for _, d := range prog.Decls {
		if c, ok := d.(*ast.Clause); ok {
			ast.Inspect(c, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					ast.Inspect(n.X, func(m ast.Node) bool {
						if id, ok := m.(*ast.Ident); ok {
							delete(s, id.Name)
						}
						return true
					})
					return false // member names are not variables
				case *ast.Ident:
					delete(s, n.Name)
				}
				return true
			})
		}
		switch d := d.(type) {
		case *ast.Declaration:
			if d.Spec.Class != ast.Typedef {
				for _, dd := range d.Decls {
					delete(s, dd.Name)
				}
			}
		case *ast.InlineDecl:
			delete(s, d.Decl.Name)
		}
		ast.Inspect(d, func(n ast.Node) bool {
			if e, ok := n.(*ast.EnumType); ok {
				for _, en := range e.Enumerators {
					delete(s, en.Name.Name)
				}
			}
			return true
		})
	}
	return s
}

func clauses(prog *ast.Program) []*ast.Clause {
	var cs []*ast.Clause
	for _, d := range prog.Decls {
		if c, ok := d.(*ast.Clause); ok {
			cs = append(cs, c)
		}
	}
	return cs
}

func hasIf(prog *ast.Program) bool {
	for _, c := range clauses(prog) {
		for _, s := range c.Body {
			if _, ok := s.(*ast.IfStmt); ok {
				return true
			}
		}
	}
	return false
}

// parseTwice parses src, then parses it again knowing every type name the
// first parse found, as a kernel's type information would know them, so
// that the program and a reparse of its -d output see one world.
func parseTwice(name string, src []byte) (*ast.Program, typeSet, error) {
	cfg := &parser.Config{DefaultArgs: true, ArgRefs: true, AllowEmpty: true,
		Macros: map[string]string{"pid": "1", "target": "1", "ppid": "1", "uid": "0", "gid": "0"}}
	prog, err := parser.ParseFile(name, src, cfg)
	if err != nil {
		return nil, nil, err
	}
	cfg.Types = typeNames(prog)
	if prog, err = parser.ParseFile(name, src, cfg); err != nil {
		return nil, nil, err
	}
	// The output is read in the world the second parse ended in: names
	// it took as variables (dtrace keeps a type name used as a variable
	// a variable) are not types there.
	return prog, typeNames(prog), nil
}

// roundTrip prints prog's clauses, parses the output, and checks that the
// tree and a second printing are the same.
func roundTrip(t *testing.T, name string, prog *ast.Program, types parser.TypeNames) {
	t.Helper()
	var out bytes.Buffer
	if err := printer.Fprint(&out, prog); err != nil {
		t.Fatal(err)
	}
	cfg := &parser.Config{Types: types, AllowEmpty: true}
	again, err := parser.ParseFile(name, out.Bytes(), cfg)
	var de *diag.Error
	if errors.As(err, &de) && strings.Contains(de.Msg, fmt.Sprintf("nesting exceeds %d levels", parser.MaxNesting)) {
		// Every operator prints with parentheses of its own, which
		// nest too: a tree near the limit prints past it.
		return
	}
	if err != nil {
		t.Errorf("%s: -d output does not parse: %v\n%s", name, err, out.String())
		return
	}
	// Constants compare by value and signedness: -d output, like
	// dt_printd's, does not keep the width of a constant's type.
	sameConst := cmp.Comparer(func(a, b *ast.IntLit) bool {
		return a.Value == b.Value && a.Type.Signed() == b.Type.Signed()
	})
	opts := cmp.Options{cmpopts.IgnoreTypes(token.Pos{}), cmpopts.EquateEmpty(), sameConst}
	// go-cmp compares nested slices (a[b[…]], f(g(…)), if blocks) in time
	// exponential in their nesting, and takes seconds over thousands of
	// clauses: deep or large programs are compared by their second
	// printing only.
	if bracketDepth(out.String()) <= 16 && out.Len() <= 64<<10 {
		if diff := cmp.Diff(clauses(prog), clauses(again), opts); diff != "" {
			t.Errorf("%s: reparsed tree differs (-original +reparsed):\n%s", name, diff)
			return
		}
	}
	var out2 bytes.Buffer
	printer.Fprint(&out2, again)
	if out.String() != out2.String() {
		t.Errorf("%s: second printing differs:\n%s", name, cmp.Diff(out.String(), out2.String()))
	}
}

// bracketDepth returns the deepest nesting of brackets, braces and
// parentheses in s.
func bracketDepth(s string) int {
	d, deepest := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			d++
			deepest = max(deepest, d)
		case ')', ']', '}':
			d--
		}
	}
	return deepest
}

// TestCorpusRoundTrip checks, for every corpus script that parses and has
// no if, that the -d output parses to the same tree and prints the same.
func TestCorpusRoundTrip(t *testing.T) {
	dir, ok := corpus.DTraceTests()
	if !ok {
		t.Skipf("DTrace test corpus not present at %s", dir)
	}
	var files []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".d") {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	checked := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cpp.Preprocess(context.Background(), f, src, cpp.Options{})
		if err != nil {
			continue
		}
		prog, types, err := parseTwice(f, res.Text)
		if err != nil || hasIf(prog) {
			continue
		}
		checked++
		roundTrip(t, f, prog, types)
	}
	t.Logf("%d corpus scripts round-tripped", checked)
}
