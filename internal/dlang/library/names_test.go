package library

import (
	"strings"
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

// TestDefinesTag checks definesTag against the tags scanNames finds,
// in every embedded library and in texts that define a tag or do not.
func TestDefinesTag(t *testing.T) {
	texts := map[string]string{
		"typedef": "typedef struct s { int x; } s_t;",
		"anon":    "typedef struct { int x; } s_t;",
		"enum":    "enum e { A };",
		"inline":  "inline int x = 1;\nstruct s;\n",
		"comment": "/* struct s { int x; }; */ inline int y = 2;",
		"nested":  "translator t < int x > { a = x; };",
	}
	for _, f := range Files("linux") {
		texts[f.Name] = string(f.Text)
	}
	for name, text := range texts {
		names := map[string]bool{}
		scanNames([]byte(text), names)
		want := false
		for n := range names {
			if i := strings.IndexByte(n, ' '); i > 0 && isTag(n[:i]) {
				want = true
			}
		}
		if got := definesTag([]byte(text)); got != want {
			t.Errorf("%s: definesTag = %t, want %t", name, got, want)
		}
	}
}

// TestLibraryDeps checks the libraries a text depends on: only control
// lines that say so, wherever they are.
func TestLibraryDeps(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"inline int x = 1;\n", nil},
		{"#pragma D depends_on library a.d\n#pragma D depends_on module vmlinux\n  #pragma D depends_on library b.d", []string{"a.d", "b.d"}},
		{"/* depends_on library c.d */\n# pragma D depends_on library d.d\n", []string{"d.d"}},
		{"inline string s = \"#pragma D depends_on library e.d\";\n#pragma D depends_on library f.d extra\n", nil},
	} {
		if got := libraryDeps([]byte(tt.text)); !cmp.Equal(got, tt.want) {
			t.Errorf("libraryDeps(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
