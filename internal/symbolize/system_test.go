package symbolize_test

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/gcctest"
	"github.com/kdtrace/kdtrace/internal/symbolize"
)

// TestFakeProc reads a /proc made for the test: kallsyms and modules,
// and the maps of a process that maps a gcc-built PIE where the test
// says, at addresses no process has, so it runs as any user.
func TestFakeProc(t *testing.T) {
	proc := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(proc, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("kallsyms", kallsyms)
	write("modules", "ext4 4096 2 - Live 0xffffffffc0a00000\n")

	path := gcctest.Build(t, t.TempDir(), "fixture", fixtureProgram, "-fpie", "-pie")
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	// The maps a loader makes: each PT_LOAD from its page, at base.
	const base = 0x555500000000
	var maps strings.Builder
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		perms := []byte("---p")
		if p.Flags&elf.PF_R != 0 {
			perms[0] = 'r'
		}
		if p.Flags&elf.PF_W != 0 {
			perms[1] = 'w'
		}
		if p.Flags&elf.PF_X != 0 {
			perms[2] = 'x'
		}
		start, end := base+p.Vaddr&^0xfff, base+(p.Vaddr+p.Filesz+0xfff)&^0xfff
		fmt.Fprintf(&maps, "%x-%x %s %08x fe:01 77 %s\n", start, end, perms, p.Off&^0xfff, path)
	}
	maps.WriteString("7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n")
	write("4242/maps", maps.String())
	syms, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	addr := map[string]uint64{}
	for _, s := range syms {
		addr[s.Name] = base + s.Value
	}

	s := symbolize.New(symbolize.Config{Proc: proc})
	defer s.Close()
	check(t, s, 4242, []lookup{
		{"a function", addr["leaf"] + 1, "fixture", "leaf", addr["leaf"]},
		{"a static function", addr["helper"], "fixture", "helper", addr["helper"]},
		{"a .bss variable", addr["counter"], "fixture", "counter", addr["counter"]},
		{"the stack", 0x7ffd00000010, "", "-", 0},
		{"below every object", 0x1000, "", "-", 0},
	})
	// The same file mapped as data, one page at offset 0, claims that
	// page only.
	write("4244/maps", fmt.Sprintf("7f0000000000-7f0000001000 r--p 00000000 fe:01 77 %s\n", path))
	check(t, s, 4244, []lookup{
		{"its header", 0x7f0000000010, "fixture", "", 0},
		{"past its page", 0x7f0000001010, "", "-", 0},
	})
	if _, ok := s.User(4243, addr["leaf"]); ok {
		t.Error("a process without maps was found")
	}
	for a, want := range map[uint64]consumer.Symbol{
		0xffffffff81000062: {Object: "kernel", Name: "vfs_read", Value: 0xffffffff81000050},
		0xffffffffc0a00f00: {Object: "ext4", Name: "ext4_read", Value: 0xffffffffc0a00100},
	} {
		if got, ok := s.Kernel(a); !ok || got != want {
			t.Errorf("Kernel(%#x) = %+v, %v; want %+v", a, got, ok, want)
		}
	}
	if got, ok := s.Kernel(0xffffffffc0a01000); ok {
		t.Errorf("Kernel past ext4's memory = %+v", got)
	}
}

// TestNoKallsyms checks that a kernel whose table cannot be read finds
// nothing and says why.
func TestNoKallsyms(t *testing.T) {
	s := symbolize.New(symbolize.Config{Proc: t.TempDir()})
	if got, ok := s.Kernel(0xffffffff81000062); ok {
		t.Errorf("Kernel = %+v", got)
	}
	if _, err := s.KernelTable(); err == nil || !strings.Contains(err.Error(), "kallsyms") {
		t.Errorf("KernelTable error = %v, want one naming kallsyms", err)
	}
}
