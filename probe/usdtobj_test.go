package probe

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
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
