package library

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/parser"
)

// TestScanNames checks the names scanNames finds in every embedded
// library against those the parser finds declared.
func TestScanNames(t *testing.T) {
	for _, f := range Files("linux") {
		got := map[string]bool{}
		scanNames(f.Text, got)
		prog, err := parser.ParseFile(f.Name, f.Text, &parser.Config{AllowEmpty: true})
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		want := map[string]bool{}
		for _, d := range prog.Decls {
			switch d := d.(type) {
			case *ast.InlineDecl:
				want[d.Decl.Name] = true
			case *ast.Declaration:
				for _, dd := range d.Decls {
					want[dd.Name] = true
				}
			}
			ast.Inspect(d, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.StructType:
					if n.Members != nil && n.Name != "" {
						kw := "struct "
						if n.Union {
							kw = "union "
						}
						want[kw+n.Name] = true
					}
				case *ast.EnumType:
					if n.Enumerators != nil {
						if n.Name != "" {
							want["enum "+n.Name] = true
						}
						for _, e := range n.Enumerators {
							want[e.Name.Name] = true
						}
					}
				}
				return true
			})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: names (-parsed +scanned):\n%s", f.Name, diff)
		}
	}
	got := map[string]bool{}
	scanNames([]byte("enum e { A, B = 2, C };\ntypedef struct s { int x; } s_t;\ninline int N[int k] = k;\n/* inline int X = 1; */"), got)
	if diff := cmp.Diff(map[string]bool{"enum e": true, "A": true, "B": true, "C": true, "struct s": true, "s_t": true, "N": true}, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}
