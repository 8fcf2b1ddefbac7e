package header

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func parse(t *testing.T, name string, src []byte) *ast.Program {
	t.Helper()
	prog, err := parser.ParseFile(name, src, &parser.Config{})
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return prog
}

// TestGolden writes the header of each testdata/NAME.d to NAME.h, as
// dtrace -h -s NAME.d does, and compares it with testdata/NAME.h.
func TestGolden(t *testing.T) {
	scripts, err := filepath.Glob("testdata/*.d")
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) == 0 {
		t.Fatal("no test scripts")
	}
	for _, script := range scripts {
		for _, style := range []struct {
			suffix string
			style  Style
		}{{".h", Stubs}, {".notes.h", Notes}} {
			name := strings.TrimSuffix(filepath.Base(script), ".d")
			t.Run(name+style.suffix, func(t *testing.T) {
				src, err := os.ReadFile(script)
				if err != nil {
					t.Fatal(err)
				}
				out, err := OutputName(script)
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := Write(&buf, parse(t, script, src), out, style.style); err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", name+style.suffix)
				if *update {
					if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(want), buf.String()); diff != "" {
					t.Errorf("header mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestNoGuard(t *testing.T) {
	prog := parse(t, "", []byte("provider p { probe a(); };"))
	var buf bytes.Buffer
	if err := Write(&buf, prog, "", Stubs); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "#ifndef") || strings.Contains(buf.String(), "#endif\t/*") {
		t.Errorf("header has a guard:\n%s", buf.String())
	}
}

func TestGuard(t *testing.T) {
	tests := []struct{ file, want string }{
		{"foo.h", "_FOO_H"},
		{"/usr/include/my-app.probes.h", "_MY_APP_PROBES_H"},
		{"dir/Mixed_Case9.h", "_MIXED_CASE9_H"},
		{"noext", "_NOEXT"},
	}
	for _, tt := range tests {
		if got := Guard(tt.file); got != tt.want {
			t.Errorf("Guard(%q) = %q, want %q", tt.file, got, tt.want)
		}
	}
}

func TestOutputName(t *testing.T) {
	tests := []struct{ script, want string }{
		{"foo.d", "foo.h"},
		{"/src/app/probes.d", "probes.h"},
		{"a.b.d", "a.b.h"},
	}
	for _, tt := range tests {
		got, err := OutputName(tt.script)
		if err != nil || got != tt.want {
			t.Errorf("OutputName(%q) = %q, %v; want %q", tt.script, got, err, tt.want)
		}
	}
	for _, script := range []string{"foo", "foo.dd", "dir.d/foo", "-"} {
		if _, err := OutputName(script); !errors.Is(err, ErrNoOutputName) {
			t.Errorf("OutputName(%q) error = %v, want ErrNoOutputName", script, err)
		}
	}
}

func TestTypeName(t *testing.T) {
	tests := []struct{ decl, want string }{
		{"int", "int"},
		{"int x", "int"},
		{"char *", "char *"},
		{"const char *s", "char *"},
		{"char *const p", "char *"},
		{"volatile unsigned long long v", "unsigned long long"},
		{"char **argv", "char **"},
		{"long int", "long"},
		{"long unsigned int", "unsigned long"},
		{"short", "short"},
		{"unsigned", "unsigned"},
		{"signed", "signed"},
		{"signed int", "signed int"},
		{"signed char", "signed char"},
		{"long long", "long long"},
		{"long double", "long double"},
		{"unsigned char", "unsigned char"},
		{"void *", "void *"},
		{"string", "string"},
		{"struct foo *", "struct foo *"},
		{"union u *", "union u *"},
		{"enum e", "enum e"},
		{"uint32_t", "uint32_t"},
		{"userland int *", "int *"},
		{"int a[4]", "int [4]"},
		{"int a[3][5]", "int [3][5]"},
		{"int *a[4]", "int *[4]"},
		{"int (*p)[4]", "int (*)[4]"},
		{"void (*f)(int)", "int (*)()"},
		{"char *(*f)(void)", "int (*)()"},
		{"void (**f)(void)", "int (**)()"},
	}
	for _, tt := range tests {
		src := "typedef unsigned int uint32_t;\nstruct foo { int x; };\nunion u { int x; };\nenum e { E0 };\n" +
			"provider p { probe a(" + tt.decl + "); };"
		prog := parse(t, "", []byte(src))
		pd := prog.Decls[len(prog.Decls)-1].(*ast.ProviderDecl)
		prm := pd.Probes[0].Params[0]
		if got := TypeName(prm.Spec, prm.Decl); got != tt.want {
			t.Errorf("TypeName(%s) = %q, want %q", tt.decl, got, tt.want)
		}
	}
}

func TestErrors(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		src string
		tag diag.Tag
		msg string
	}{
		{"provider " + long + " { probe x(); };", diag.D_PROV_BADNAME,
			"provider name may not exceed 63 characters: " + long},
		{"provider p2 { probe x(); };", diag.D_PROV_BADNAME,
			"provider name may not end with a digit: p2"},
		{"provider p { probe " + long + "(); };", diag.D_PROV_BADNAME,
			"probe name may not exceed 63 characters: ::" + long},
		{"provider p { probe a(); probe a(int); };", diag.D_PROV_PRDUP,
			"probe redeclared: p:::a"},
		{"provider p { probe a(); };\nprovider p { probe b(); };", diag.D_PROV_INCOMPAT,
			"provider interface mismatch: p\n\t current: probe p:::b defined\n\tprevious: probe p:::b not defined"},
		{"provider p { probe a(int); };\nprovider p { probe a(int, int); };", diag.D_PROV_INCOMPAT,
			"probe p:::a output prototype mismatch:\n\t current: 2 args\n\tprevious: 1 arg"},
		{"provider p { probe a(int); };\nprovider p { probe a(long); };", diag.D_PROV_INCOMPAT,
			"probe p:::a output prototype argument #1 mismatch:\n\t current: long\n\tprevious: int"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		err := Write(&buf, parse(t, "", []byte(tt.src)), "x.h", Stubs)
		var de *diag.Error
		if !errors.As(err, &de) {
			t.Errorf("%q: error = %v, want a *diag.Error", tt.src, err)
			continue
		}
		if de.Tag != tt.tag || de.Msg != tt.msg {
			t.Errorf("%q: error = [%v] %q, want [%v] %q", tt.src, de.Tag, de.Msg, tt.tag, tt.msg)
		}
		if buf.Len() != 0 {
			t.Errorf("%q: wrote %d bytes before failing", tt.src, buf.Len())
		}
	}
}

// A name just under the limits is accepted: 63 characters, and a
// probe name whose "__" pairs bring it under the limit.
func TestNameLimits(t *testing.T) {
	n63 := strings.Repeat("a", 63)
	src := "provider " + n63 + " { probe " + n63 + "(); probe " + strings.Repeat("b__", 30) + "(); };"
	var buf bytes.Buffer
	if err := Write(&buf, parse(t, "", []byte(src)), "x.h", Stubs); err != nil {
		t.Fatal(err)
	}
}

// A redeclaration that adds an output prototype replaces the probe, as
// dt_node_provider_cmp does; one that repeats it changes nothing.
func TestRedeclare(t *testing.T) {
	src := "provider p { probe a(int); probe b(char *); };\n" +
		"provider p { probe a(long) : (int); };\n" +
		"provider p { probe b(char *); };"
	var buf bytes.Buffer
	if err := Write(&buf, parse(t, "", []byte(src)), "", Stubs); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(buf.String(), "#if _DTRACE_VERSION"); got != 1 {
		t.Errorf("%d provider blocks, want 1:\n%s", got, buf.String())
	}
}

// TestProviders checks the definitions -G links: probes sorted by
// name, each translated argument mapped to the native one of its name,
// or of its index when it has none.
func TestProviders(t *testing.T) {
	prog := parse(t, "p.d", []byte(`provider p {
	probe place(int i, int j) : (int j, int i, int i, int j);
	probe plain(int, char *);
	probe unnamed(int i, long j) : (long, int);
	probe none();
	probe with__dash(void);
};
provider q { probe x(); };
`))
	got, err := Providers(prog)
	if err != nil {
		t.Fatal(err)
	}
	want := []Provider{
		{Name: "p", Probes: []Probe{
			{Name: "none", ArgMap: []uint8{}},
			{Name: "place", Args: []string{"int", "int"}, XArgs: []string{"int", "int", "int", "int"}, ArgMap: []uint8{1, 0, 0, 1}},
			{Name: "plain", Args: []string{"int", "char *"}, XArgs: []string{"int", "char *"}, ArgMap: []uint8{0, 1}},
			{Name: "unnamed", Args: []string{"int", "long"}, XArgs: []string{"long", "int"}, ArgMap: []uint8{0, 1}},
			{Name: "with-dash", ArgMap: []uint8{}},
		}},
		{Name: "q", Probes: []Probe{{Name: "x", ArgMap: []uint8{}}}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Providers (-want +got):\n%s", d)
	}
	if got := SemaphoreName("p", "with-dash"); got != "p_with__dash_semaphore" {
		t.Errorf("SemaphoreName = %q", got)
	}
}
