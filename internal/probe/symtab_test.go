package probe

import (
	"bytes"
	"debug/elf"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// TestSymtab64 reads the symbol tables of a program and of a module
// in place and through debug/elf: the two must give the same symbols.
func TestSymtab64(t *testing.T) {
	dir := t.TempDir()
	for _, exe := range []string{gcctest.Build(t, dir, "vmlinux", testProgram), gcctest.Build(t, dir, "my-mod.ko", testModule, "-c")} {
		symtabAgrees(t, exe)
	}
}

func symtabAgrees(t *testing.T, exe string) {
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		t.Skipf("%s is not a little-endian ELF64 file", exe)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	type sym struct {
		Name        string
		Info        byte
		Section     elf.SectionIndex
		Value, Size uint64
	}
	var want, got []sym
	for _, s := range syms {
		want = append(want, sym{s.Name, s.Info, s.Section, s.Value, s.Size})
	}
	if !symtab64(f, data, func(name []byte, info byte, shndx elf.SectionIndex, value, size uint64) {
		got = append(got, sym{string(name), info, shndx, value, size})
	}) {
		t.Fatal("symtab64 did not read the table")
	}
	if len(want) < 3 {
		t.Fatalf("%s: only %d symbols", exe, len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: symbols (-debug/elf +symtab64):\n%s", exe, diff)
	}
}
