package btf

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// TestClang reads the BTF that clang writes for testdata/fixture.c into
// an ELF object's .BTF section.
func TestClang(t *testing.T) {
	if _, err := exec.LookPath("clang"); err != nil {
		t.Skip("clang is not installed")
	}
	obj := filepath.Join(t.TempDir(), "fixture.o")
	out, err := exec.Command("clang", "-g", "-O2", "-target", "bpf", "-c", "-o", obj, filepath.Join("testdata", "fixture.c")).CombinedOutput()
	if err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	m, err := Open(obj, nil)
	if err != nil {
		t.Fatal(err)
	}

	flags := lookup(t, m, "struct flags").(*types.Struct)
	want := []string{
		"a unsigned int @0:3",
		"b unsigned int @3:5",
		"c int @8:10",
		"- union (anon) @32",
		"pair struct (anon) @64",
		"cv const volatile int @96",
		"name char [16] @128",
		"op struct opaque * @256",
		"uop union uopaque * @320",
		"next struct flags * @384",
		"id my_u32 @448",
		"color enum color @480",
		"mask enum mask @512",
		"cb void (*)() @576",
		"user char * @640",
		"d double @704",
		"ok _Bool @768",
		"uc unsigned char @776",
		"sc signed char @784",
		"ul unsigned long @832",
	}
	if diff := cmp.Diff(want, layout(flags)); diff != "" {
		t.Errorf("struct flags (-want +got):\n%s", diff)
	}
	if flags.Bytes != 112 || flags.Incomplete || flags.Module != "vmlinux" {
		t.Errorf("struct flags: %d bytes, incomplete %v, module %q", flags.Bytes, flags.Incomplete, flags.Module)
	}

	// Anonymous members are searched through.
	for name, want := range map[string]string{"i": "int @32", "f": "float @32"} {
		if mem, ok := flags.Member(name); !ok || fmt.Sprintf("%v @%d", mem.Type, mem.Offset) != want {
			t.Errorf("flags.%s = %+v, %v; want %s", name, mem, ok, want)
		}
	}
	pair, _ := flags.Member("pair")
	if got := layout(pair.Type); !cmp.Equal(got, []string{"x char @0", "y char @8"}) {
		t.Errorf("flags.pair: %v", got)
	}

	// A chain of typedefs; forward declarations.
	id, _ := flags.Member("id")
	if td := id.Type.(*types.Typedef); td.Type.String() != "u32" || types.Resolve(td).String() != "unsigned int" {
		t.Errorf("my_u32 is %v, resolving to %v", td.Type, types.Resolve(td))
	}
	for _, name := range []string{"struct opaque", "union uopaque"} {
		if s := lookup(t, m, name).(*types.Struct); !s.Incomplete || types.IsComplete(s) {
			t.Errorf("%s is complete", name)
		}
	}
	if c := lookup(t, m, "char").(*types.Int); !c.Char || !c.Signed {
		t.Errorf("char: %+v", c)
	}
	if l := lookup(t, m, "long unsigned int"); l.String() != "unsigned long" {
		t.Errorf(`LookupType("long unsigned int") = %v, want clang's unsigned long`, l)
	}

	// clang 14 marks no enum signed, as BTF did before kind_flag said
	// so: RED reads as unsigned there.
	for _, tc := range []struct {
		name  string
		value []int64
	}{
		{"RED", []int64{-1, 1<<32 - 1}},
		{"GREEN", []int64{0}},
		{"BLUE", []int64{7}},
		{"HIGH", []int64{0x80000000}},
	} {
		_, v, ok := m.LookupEnumerator(tc.name)
		if !ok || !slices.Contains(tc.value, v) {
			t.Errorf("LookupEnumerator(%s) = %d, %v; want one of %v", tc.name, v, ok, tc.value)
		}
	}

	for _, tc := range []struct {
		name, result string
		params       []string
		variadic     bool
	}{
		{"handle", "int", []string{"struct flags * f", "const char * msg", "unsigned long n"}, false},
		{"printk", "int", []string{"const char * "}, true},
	} {
		f, names, err := m.LookupFunc(tc.name)
		if err != nil || f == nil {
			t.Fatalf("LookupFunc(%s) = %v, %v", tc.name, f, err)
		}
		var params []string
		for i, p := range f.Params {
			params = append(params, p.String()+" "+names[i])
		}
		if f.Result.String() != tc.result || f.Variadic != tc.variadic || !cmp.Equal(params, tc.params) {
			t.Errorf("%s: %v %v variadic %v; want %v %v variadic %v", tc.name, f.Result, params, f.Variadic, tc.result, tc.params, tc.variadic)
		}
	}
	if p, _, _ := m.LookupFunc("handle"); p.Params[0].(*types.Pointer).Elem != flags {
		t.Errorf("handle's first parameter does not point to struct flags")
	}

	for name, want := range map[string]types.Type{"g_flags": flags, "counter": lookup(t, m, "s64")} {
		if v, err := m.LookupVar(name); err != nil || v != want {
			t.Errorf("LookupVar(%s) = %v, %v; want %v", name, v, err, want)
		}
	}
}
