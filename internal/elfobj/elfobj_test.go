package elfobj

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
)

// hostMachine is the ELF machine of the tests' host, whose linker must
// take the objects.
func hostMachine(t *testing.T) elf.Machine {
	switch runtime.GOARCH {
	case "amd64":
		return elf.EM_X86_64
	case "arm64":
		return elf.EM_AARCH64
	}
	t.Skipf("no ELF machine for %s", runtime.GOARCH)
	return 0
}

// sample is an object with data, a writable counter, a zeroed area, a
// local and global, weak and hidden symbols.
func sample(m elf.Machine) *Object {
	data := &Section{Name: ".rodata.answer", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Align: 4, Data: []byte{42, 0, 0, 0}}
	counter := &Section{Name: ".probes", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Align: 2, Data: make([]byte, 4)}
	zero := &Section{Name: ".bss.zero", Type: elf.SHT_NOBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Align: 8, Size: 64}
	note := &Section{Name: ".note.GNU-stack", Type: elf.SHT_PROGBITS}
	return &Object{
		Machine:   m,
		ByteOrder: binary.LittleEndian,
		Sections:  []*Section{data, counter, zero, note},
		Symbols: []Symbol{
			{Name: "answer", Section: data, Size: 4, Bind: elf.STB_GLOBAL, Type: elf.STT_OBJECT},
			{Name: "first", Section: counter, Size: 2, Bind: elf.STB_WEAK, Type: elf.STT_OBJECT},
			{Name: "second", Section: counter, Value: 2, Size: 2, Bind: elf.STB_GLOBAL, Type: elf.STT_OBJECT, Visibility: elf.STV_HIDDEN},
			{Name: "zeroes", Section: zero, Size: 64, Bind: elf.STB_GLOBAL, Type: elf.STT_OBJECT},
			{Name: "private", Section: data, Size: 4, Bind: elf.STB_LOCAL, Type: elf.STT_OBJECT},
			{Name: "elsewhere", Bind: elf.STB_GLOBAL, Type: elf.STT_NOTYPE},
		},
	}
}

func TestReadBack(t *testing.T) {
	b, err := sample(elf.EM_X86_64).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if f.Type != elf.ET_REL || f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 {
		t.Errorf("header: %v %v %v", f.Type, f.Machine, f.Class)
	}
	type sec struct {
		Name  string
		Type  elf.SectionType
		Flags elf.SectionFlag
		Size  uint64
	}
	var secs []sec
	for _, s := range f.Sections[1:] {
		secs = append(secs, sec{s.Name, s.Type, s.Flags, s.Size})
	}
	want := []sec{
		{".rodata.answer", elf.SHT_PROGBITS, elf.SHF_ALLOC, 4},
		{".probes", elf.SHT_PROGBITS, elf.SHF_ALLOC | elf.SHF_WRITE, 4},
		{".bss.zero", elf.SHT_NOBITS, elf.SHF_ALLOC | elf.SHF_WRITE, 64},
		{".note.GNU-stack", elf.SHT_PROGBITS, 0, 0},
		{".symtab", elf.SHT_SYMTAB, 0, 7 * symSize},
		{".strtab", elf.SHT_STRTAB, 0, 46},
		{".shstrtab", elf.SHT_STRTAB, 0, 76},
	}
	if d := cmp.Diff(want, secs); d != "" {
		t.Errorf("sections (-want +got):\n%s", d)
	}
	if d, _ := f.Sections[1].Data(); !bytes.Equal(d, []byte{42, 0, 0, 0}) {
		t.Errorf(".rodata.answer holds %v", d)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	type sym struct {
		Name        string
		Info, Other byte
		Shndx       elf.SectionIndex
		Value, Size uint64
	}
	var got []sym
	for _, s := range syms {
		got = append(got, sym{s.Name, s.Info, s.Other, s.Section, s.Value, s.Size})
	}
	info := func(b elf.SymBind, t elf.SymType) byte { return elf.ST_INFO(b, t) }
	wantSyms := []sym{
		{"private", info(elf.STB_LOCAL, elf.STT_OBJECT), 0, 1, 0, 4},
		{"answer", info(elf.STB_GLOBAL, elf.STT_OBJECT), 0, 1, 0, 4},
		{"first", info(elf.STB_WEAK, elf.STT_OBJECT), 0, 2, 0, 2},
		{"second", info(elf.STB_GLOBAL, elf.STT_OBJECT), byte(elf.STV_HIDDEN), 2, 2, 2},
		{"zeroes", info(elf.STB_GLOBAL, elf.STT_OBJECT), 0, 3, 0, 64},
		{"elsewhere", info(elf.STB_GLOBAL, elf.STT_NOTYPE), 0, elf.SHN_UNDEF, 0, 0},
	}
	if d := cmp.Diff(wantSyms, got); d != "" {
		t.Errorf("symbols (-want +got):\n%s", d)
	}
	if info := f.Sections[5].Info; info != 2 {
		t.Errorf(".symtab's sh_info is %d, want 2: the null symbol and one local", info)
	}
}

func TestErrors(t *testing.T) {
	orphan := &Section{Name: ".orphan", Type: elf.SHT_PROGBITS}
	s := &Section{Name: ".s", Type: elf.SHT_PROGBITS}
	for _, tt := range []struct {
		name string
		o    *Object
		want string
	}{
		{"no byte order", &Object{}, "elfobj: no byte order"},
		{"unnamed", &Object{ByteOrder: binary.LittleEndian, Sections: []*Section{{Type: elf.SHT_PROGBITS}}}, "elfobj: section 1 has no name"},
		{"twice", &Object{ByteOrder: binary.LittleEndian, Sections: []*Section{s, s}}, "elfobj: section .s listed twice"},
		{"nobits data", &Object{ByteOrder: binary.LittleEndian, Sections: []*Section{{Name: ".b", Type: elf.SHT_NOBITS, Data: []byte{1}}}}, "elfobj: SHT_NOBITS section .b has data"},
		{"orphan symbol", &Object{ByteOrder: binary.LittleEndian, Symbols: []Symbol{{Name: "x", Section: orphan}}}, "elfobj: symbol x is in section .orphan, which the object does not list"},
	} {
		if _, err := tt.o.Bytes(); err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestLink links an object with a C program, which reads its data and
// writes its counters, and runs the program.
func TestLink(t *testing.T) {
	m := hostMachine(t)
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("no gcc: %v", err)
	}
	dir := t.TempDir()
	b, err := sample(m).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "sample.o")
	if err := os.WriteFile(obj, b, 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "main.c")
	if err := os.WriteFile(src, []byte(`#include <stdio.h>
extern const int answer;
extern volatile unsigned short first, second;
extern char zeroes[64];
int elsewhere;
int main(void) {
	first++;
	second += 2;
	for (int i = 0; i < 64; i++)
		if (zeroes[i] != 0)
			return 1;
	printf("%d %d %d\n", answer, first, second);
	return 0;
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flags := range [][]string{{"-no-pie"}, {"-pie", "-fPIE"}} {
		exe := filepath.Join(dir, "main")
		args := append(append([]string{"-Wl,--fatal-warnings", "-o", exe}, flags...), src, obj)
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %q: %v\n%s", args, err, out)
		}
		out, err := exec.Command(exe).CombinedOutput()
		if err != nil || string(out) != "42 1 2\n" {
			t.Errorf("%v: the program says %q (%v), want \"42 1 2\\n\"", flags, out, err)
		}
	}
	// A shared library takes it too.
	lib := filepath.Join(dir, "lib.so")
	if out, err := exec.Command(gcc, "-shared", "-Wl,--fatal-warnings", "-o", lib, obj).CombinedOutput(); err != nil {
		t.Fatalf("gcc -shared: %v\n%s", err, out)
	}
}
