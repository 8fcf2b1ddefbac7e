package probe

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/elfobj"
)

// TestObjectProbes compiles probes into a relocatable object, in a
// static function, a global one and main, which gcc -O2 puts in
// .text.startup, and finds each in its function.
func TestObjectProbes(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the notes' argument locations are amd64's")
	}
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		t.Skip("no <sys/sdt.h> (systemtap-sdt-dev)")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	os.WriteFile(src, []byte(`#include <sys/sdt.h>
static __attribute__((noinline)) int local(int a) { DTRACE_PROBE1(prov, in__local, a); return a + 1; }
__attribute__((noinline)) int global(int a) { DTRACE_PROBE(prov, first); DTRACE_PROBE1(other, second, a); return local(a); }
int main(int argc, char **argv) { DTRACE_PROBE(prov, first); return global(argc); }
`), 0o644)
	obj := filepath.Join(dir, "p.o")
	if out, err := exec.Command(gcc, "-O2", "-c", "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ObjectProbes(f)
	if err != nil {
		t.Fatal(err)
	}
	// The offsets are where gcc put the nops: check each is one.
	for _, p := range got {
		var sec *elf.Section
		syms, _ := f.Symbols()
		for _, s := range syms {
			if s.Name == p.Func && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
				sec = f.Sections[s.Section]
				b, _ := sec.Data()
				if at := s.Value + p.Offset; at >= uint64(len(b)) || b[at] != 0x90 {
					t.Errorf("%s:%s is at %s+%#x, which is no nop", p.Provider, p.Name, p.Func, p.Offset)
				}
			}
		}
		if sec == nil {
			t.Errorf("%s:%s is in %s, which the object does not define", p.Provider, p.Name, p.Func)
		}
	}
	type probe struct{ Provider, Name, Func, Args string }
	var names []probe
	for _, p := range got {
		names = append(names, probe{p.Provider, p.Name, p.Func, p.Args})
	}
	want := []probe{
		{"prov", "in-local", "local", "-4@%edi"},
		{"prov", "first", "global", ""},
		{"other", "second", "global", "-4@%edi"},
		{"prov", "first", "main", ""},
	}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("probes (-want +got):\n%s", d)
	}
}

// TestObjectProbesNone: an object without notes has no probes.
func TestObjectProbesNone(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "n.c")
	os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644)
	obj := filepath.Join(dir, "n.o")
	if out, err := exec.Command(gcc, "-c", "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, err := ObjectProbes(f); err != nil || got != nil {
		t.Errorf("ObjectProbes = %v, %v; want none", got, err)
	}
}

// TestReadDOFArgs reads the providers' declarations from a .SUNW_dof
// section that holds two DOF objects, as a program linked with two -G
// objects has.
func TestReadDOFArgs(t *testing.T) {
	var sec []byte
	for _, p := range []dof.Provider{
		{Name: "test_prov", Probes: []dof.Probe{{Func: "main", Name: "place", NArgs: []string{"int", "int"},
			XArgs: []string{"int", "int", "int", "int"}, ArgMap: []uint8{1, 0, 0, 1}, Offs: []uint32{4}}}},
		{Name: "other", Probes: []dof.Probe{{Func: "f", Name: "go", NArgs: []string{"char *"},
			XArgs: []string{"char *"}, ArgMap: []uint8{0}, Offs: []uint32{0, 8}}}},
	} {
		b, err := dof.Write(&dof.Program{Providers: []dof.Provider{p}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for len(sec)%8 != 0 {
			sec = append(sec, 0)
		}
		sec = append(sec, b...)
	}
	obj := &elfobj.Object{Machine: elf.EM_X86_64, ByteOrder: binary.LittleEndian, Sections: []*elfobj.Section{
		{Name: ".SUNW_dof", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Align: 8, Data: sec},
	}}
	b, err := obj.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	got := readDOFArgs(f)
	want := map[provProbe]dofArgs{
		{"test_prov", "place"}: {[]string{"int", "int"}, []string{"int", "int", "int", "int"}, []uint8{1, 0, 0, 1}},
		{"other", "go"}:        {[]string{"char *"}, []string{"char *"}, []uint8{0}},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(dofArgs{})); d != "" {
		t.Errorf("readDOFArgs (-want +got):\n%s", d)
	}
}

func TestMapArgs(t *testing.T) {
	place := dofArgs{[]string{"int", "int"}, []string{"int", "int", "int", "int"}, []uint8{1, 0, 0, 1}}
	for _, tt := range []struct {
		a    dofArgs
		spec string
		want string
		ok   bool
	}{
		{place, "-4@$10 -4@$4", "-4@$4 -4@$10 -4@$10 -4@$4", true},
		{place, "-4@%edi", "", false}, // a note of other arguments
		{dofArgs{nil, nil, nil}, "", "", true},
		{dofArgs{[]string{"int"}, []string{"int"}, []uint8{3}}, "-4@%edi", "", false},
	} {
		got, ok := tt.a.mapArgs(tt.spec)
		if got != tt.want || ok != tt.ok {
			t.Errorf("mapArgs(%q) = %q, %v; want %q, %v", tt.spec, got, ok, tt.want, tt.ok)
		}
	}
}

// TestObjectReferences finds where functions read a semaphore, as the
// is-enabled tests of a notes header do, and not where data refers to
// it.
func TestObjectReferences(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "r.c")
	os.WriteFile(src, []byte(`__attribute__((weak)) volatile unsigned short p_go_semaphore, p_other_semaphore;
volatile unsigned short *pointer = &p_go_semaphore;
int f(void) { return p_go_semaphore != 0; }
int g(void) { return p_go_semaphore + p_other_semaphore; }
`), 0o644)
	obj := filepath.Join(dir, "r.o")
	if out, err := exec.Command(gcc, "-O1", "-c", "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	refs, err := ObjectReferences(f, map[string]bool{"p_go_semaphore": true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, r.Symbol+" in "+r.Func)
		if r.Offset == 0 {
			t.Errorf("%s is read at the start of %s, where no instruction's field is", r.Symbol, r.Func)
		}
	}
	if d := cmp.Diff([]string{"p_go_semaphore in f", "p_go_semaphore in g"}, got); d != "" {
		t.Errorf("references (-want +got):\n%s", d)
	}
}
