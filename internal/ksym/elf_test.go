package ksym_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/amd64"
	"github.com/kdtrace/kdtrace/internal/ksym"
)

func TestELF(t *testing.T) {
	tab, err := ksym.ReadELF(buildKernel(t, "-g"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		size uint64
		fn   bool
	}{
		{"max_pfn_like", 4, false},
		{"linux_banner", uint64(len("Linux version 9.9-test") + 1), false},
		{"file_ops", 16, false},
		{"vfs_read_like", 0, true},
	} {
		syms, err := tab.Lookup(ksym.KernelModule, tt.name)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		s := syms[0]
		if s.Func != tt.fn || tt.size != 0 && s.Size != tt.size || s.Addr == 0 {
			t.Errorf("%s: %+v, want size %d, function %v", tt.name, s, tt.size, tt.fn)
		}
	}
	syms, err := tab.Lookup("", "vfs_read_like")
	if err != nil {
		t.Fatal(err)
	}
	code, err := tab.Code(syms[0])
	if err != nil {
		t.Fatal(err)
	}
	insts, err := amd64.Decode(code, syms[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	// x * 3 + 1 is an lea and a ret at -O1.
	if len(code) != int(syms[0].Size) || len(insts) < 2 || code[len(code)-1] != 0xc3 {
		t.Errorf("code of vfs_read_like: % x, %d instructions", code, len(insts))
	}
	if _, err := tab.Code(ksym.Symbol{Name: "max_pfn_like", Func: false}); err == nil {
		t.Error("Code of data succeeded")
	}
}

func TestELFErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "passwd")
	os.WriteFile(text, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644)
	if _, err := ksym.ReadELF(text); err == nil || !strings.Contains(err.Error(), "not an ELF file") {
		t.Errorf("ReadELF of a text file: %v", err)
	}
	if _, err := ksym.ReadELF(filepath.Join(dir, "nosuch")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadELF of a missing file: %v", err)
	}
}
