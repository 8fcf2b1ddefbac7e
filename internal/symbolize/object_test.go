package symbolize

import (
	"debug/elf"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBias(t *testing.T) {
	const base = 0x7f0000000000
	pie := &objFile{loads: []elf.ProgHeader{
		{Type: elf.PT_LOAD, Flags: elf.PF_R, Off: 0, Vaddr: 0, Filesz: 0x5e0, Memsz: 0x5e0},
		{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Off: 0x1000, Vaddr: 0x1000, Filesz: 0x141, Memsz: 0x141},
		{Type: elf.PT_LOAD, Flags: elf.PF_R, Off: 0x2000, Vaddr: 0x2000, Filesz: 0xdc, Memsz: 0xdc},
		// Data's address is a page past its offset.
		{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x2e00, Vaddr: 0x3e00, Filesz: 0x214, Memsz: 0x5218},
	}}
	// An old layout: text and data share a page of the file.
	exec := &objFile{loads: []elf.ProgHeader{
		{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Off: 0, Vaddr: 0x400000, Filesz: 0x1234, Memsz: 0x1234},
		{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x1e10, Vaddr: 0x601e10, Filesz: 0x200, Memsz: 0x400},
	}}
	m := func(start uint64, perms string, off uint64) Mapping {
		return Mapping{Start: start, End: start + 0x1000, Perms: perms, Offset: off}
	}
	tests := []struct {
		name string
		f    *objFile
		maps []Mapping
		bias uint64
		ok   bool
	}{
		{"pie", pie, []Mapping{
			m(base, "r--p", 0),
			m(base+0x1000, "r-xp", 0x1000),
			m(base+0x2000, "r--p", 0x2000),
			m(base+0x3000, "r--p", 0x2000), // data's RELRO, at the offset of the segment before
			m(base+0x4000, "rw-p", 0x3000),
		}, base, true},
		{"pie's RELRO and data alone", pie, []Mapping{m(base+0x3000, "r--p", 0x2000), m(base+0x4000, "rw-p", 0x3000)}, base, true},
		{"past the file", pie, []Mapping{m(base+0x9000, "rw-p", 0x9000)}, 0, false},
		{"exec", exec, []Mapping{m(0x400000, "r-xp", 0), m(0x601000, "rw-p", 0x1000)}, 0, true},
	}
	for _, tt := range tests {
		bias, ok := tt.f.loadBias(tt.maps)
		if bias != tt.bias || ok != tt.ok {
			t.Errorf("%s: bias = %#x, %v; want %#x, %v", tt.name, bias, ok, tt.bias, tt.ok)
		}
	}
	if lo, hi, _ := pie.extent(base); lo != base || hi != base+0x3e00+0x5218 {
		t.Errorf("pie extent = [%#x, %#x)", lo, hi)
	}
}

func TestSymtabLookup(t *testing.T) {
	sym := func(name string, value, size uint64, typ elf.SymType, bind elf.SymBind) elf.Symbol {
		return elf.Symbol{Name: name, Value: value, Size: size, Info: elf.ST_INFO(bind, typ), Section: 1}
	}
	tab := newSymtab([]elf.Symbol{
		sym("__libc_read", 0x100, 0x20, elf.STT_FUNC, elf.STB_LOCAL),
		sym("__read", 0x100, 0x20, elf.STT_FUNC, elf.STB_GLOBAL),
		sym("read", 0x100, 0x20, elf.STT_FUNC, elf.STB_WEAK),
		sym("big", 0x200, 0x1000, elf.STT_OBJECT, elf.STB_GLOBAL),
		sym("inner", 0x400, 0x10, elf.STT_FUNC, elf.STB_GLOBAL),
		sym("label", 0x500, 0, elf.STT_FUNC, elf.STB_GLOBAL), // size 0: holds nothing
		sym("tls", 0x600, 8, elf.STT_TLS, elf.STB_GLOBAL),
		sym("$x", 0x2000, 8, elf.STT_NOTYPE, elf.STB_GLOBAL),
		sym("x", 0x2000, 8, elf.STT_NOTYPE, elf.STB_GLOBAL),
		sym("ifunc", 0x3000, 8, elf.STT_GNU_IFUNC, elf.STB_GLOBAL),
		sym("section", 0x4000, 8, elf.STT_SECTION, elf.STB_LOCAL),
	})
	tests := []struct {
		v    uint64
		want string
	}{
		{0x100, "read"}, // a global, then fewest underscores
		{0x11f, "read"},
		{0x120, "-"},
		{0x1ff, "-"},
		{0x300, "big"},
		{0x408, "inner"}, // the symbol starting last
		{0x410, "big"},   // past inner, still in big
		{0x500, "big"},   // label holds nothing
		{0x1200, "-"},
		{0x2004, "x"}, // no leading $
		{0x3000, "ifunc"},
		{0x4000, "-"},
		{0, "-"},
		{^uint64(0), "-"},
	}
	for _, tt := range tests {
		s, ok := tab.lookup(tt.v)
		got := s.name
		if !ok {
			got = "-"
		}
		if got != tt.want {
			t.Errorf("lookup(%#x) = %s, want %s", tt.v, got, tt.want)
		}
	}
}

func TestSymtabSkipsUndefined(t *testing.T) {
	tab := newSymtab([]elf.Symbol{
		{Name: "undef", Value: 0x700, Size: 8, Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), Section: elf.SHN_UNDEF},
		{Name: "abs", Value: 0x800, Size: 8, Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_OBJECT), Section: elf.SHN_ABS},
	})
	if len(tab.syms) != 0 {
		t.Errorf("kept %v", tab.syms)
	}
}

func TestGroup(t *testing.T) {
	m := func(start uint64, off uint64, path string, inode uint64) Mapping {
		return Mapping{Start: start, End: start + 0x1000, Perms: "r--p", Offset: off, Dev: "fe:01", Inode: inode, Path: path}
	}
	maps := []Mapping{
		m(0x400000, 0, "/bin/a", 1),
		m(0x401000, 0x1000, "/bin/a", 1),
		{Start: 0x402000, End: 0x403000, Perms: "rw-p"}, // .bss
		m(0x500000, 0, "[heap]", 0),
		m(0x7f0000000000, 0, "/lib/libc.so.6", 2),
		m(0x7f0000001000, 0x1000, "/lib/libc.so.6", 2),
		m(0x7f0000002000, 0x1000, "/lib/libc.so.6", 2), // a gap's and a relro's offsets may be equal
		m(0x7f0000003000, 0, "/lib/libc.so.6", 2),      // loaded again
		m(0x7f0000004000, 0, "[vdso]", 0),
		m(0x7f0000005000, 0x1000, "/lib/other.so", 3),
	}
	got := group(maps)
	want := [][]Mapping{maps[0:2], maps[4:7], maps[7:8], maps[8:9], maps[9:10]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("group (-want +got):\n%s", diff)
	}
}
