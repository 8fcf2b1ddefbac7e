package ksym_test

import (
	"debug/elf"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/btf"
	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarftypes"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
	"github.com/kdtrace/kdtrace/internal/ksym"
)

// compile checks and generates src with the kernel symbols of r.
func compile(r check.Symbols, src string) (*dof.Program, error) {
	c := check.NewChecker(&check.Config{Symbols: r})
	prog, err := parser.ParseFile("t.d", []byte(src), &parser.Config{Types: c, Declare: c.Declare})
	if err != nil {
		return nil, err
	}
	info, err := c.Check(prog)
	if err != nil {
		return nil, err
	}
	return emit.Program(prog, info, nil)
}

// traced runs the actions of p's first ECB on a machine reading mem and
// returns what each records: an integer, or a string.
func traced(t *testing.T, p *dof.Program, mem vm.Memory) []string {
	t.Helper()
	m := vm.New(&vm.Config{Kernel: mem})
	m.BeginFiring()
	m.BeginClause()
	var out []string
	for _, a := range p.ECBs[0].Actions {
		o := emit.Object(a.DIFO)
		v, err := m.Run(o, &vm.Context{})
		if err != nil {
			t.Fatal(err)
		}
		if o.Ret.Kind == dif.TypeString {
			s, err := m.ReadString(v)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
			continue
		}
		if o.Ret.Size < 8 {
			v &= 1<<(8*o.Ret.Size) - 1
		}
		out = append(out, fmt.Sprintf("%#x", v))
	}
	return out
}

// imageMemory is the image's data as the kernel's memory: its loaded
// sections at their addresses.
func imageMemory(t *testing.T, path string) vm.Segments {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mem vm.Segments
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS {
			continue
		}
		b, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		mem = append(mem, vm.Segment{Addr: s.Addr, Data: b, ReadOnly: true})
	}
	return mem
}

// imageResolver resolves the symbols of the image at path, typed by its
// DWARF when withTypes is set.
func imageResolver(t *testing.T, path string, withTypes bool) *ksym.Resolver {
	r := &ksym.Resolver{Load: func() (*ksym.Table, error) { return ksym.ReadELF(path) }}
	if withTypes {
		img, err := debuginfo.OpenImage(path, debuginfo.Options{NoCache: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { img.Close() })
		tys, err := dwarftypes.Open(img)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tys.Close() })
		r.Types = func(mod string) ([]ksym.VarTypes, error) {
			if mod == ksym.KernelModule {
				return []ksym.VarTypes{tys}, nil
			}
			return nil, nil
		}
	}
	return r
}

func addrOf(t *testing.T, tab *ksym.Table, name string) uint64 {
	s, err := tab.Lookup("", name)
	if err != nil {
		t.Fatal(err)
	}
	return s[0].Addr
}

// TestSymbolValues reads an image's data through `sym in the in-process
// DIF machine, whose kernel memory is the image's sections.
func TestSymbolValues(t *testing.T) {
	path := buildKernel(t, "-g")
	mem := imageMemory(t, path)
	r := imageResolver(t, path, true)
	tab, err := r.Table()
	if err != nil {
		t.Fatal(err)
	}
	addr := func(name string) string { return fmt.Sprintf("%#x", addrOf(t, tab, name)) }
	for _, tt := range []struct {
		src  string
		want []string
	}{
		{"trace(`max_pfn_like); trace(*&`max_pfn_like);", []string{"0x12345", "0x12345"}},
		{"trace((uint64_t)&`max_pfn_like); trace((uint64_t)&vmlinux`vfs_read_like);", []string{addr("max_pfn_like"), addr("vfs_read_like")}},
		{"trace(stringof(vmlinux`linux_banner)); trace(`linux_banner[6]);", []string{"Linux version 9.9-test", "0x76"}},
		{"trace(`file_ops.open); trace(`file_ops.flags); trace((&`file_ops)->flags);", []string{"0x7", "0xfffffff7", "0xfffffff7"}},
		{"trace(`small); trace(`small + 1);", []string{"0xc8", "0xc9"}},
	} {
		p, err := compile(r, "BEGIN { "+tt.src+" }")
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if got := traced(t, p, mem); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: got %q, want %q", tt.src, got, tt.want)
		}
	}
}

// TestUntypedSymbols follows dtrace's rules where the kernel has no
// type for a symbol: a function is int (*)(), data is D_SYM_NOTYPES,
// though its address may be taken.
func TestUntypedSymbols(t *testing.T) {
	path := buildKernel(t) // no DWARF
	mem := imageMemory(t, path)
	r := imageResolver(t, path, false)
	p, err := compile(r, "BEGIN { trace(*(int *)&`max_pfn_like); trace(*(uint8_t *)&`vfs_read_like); }")
	if err != nil {
		t.Fatal(err)
	}
	tab, _ := r.Table()
	code, err := tab.Code(mustLookup(t, tab, "vfs_read_like"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0x12345", fmt.Sprintf("%#x", code[0])}
	if got := traced(t, p, mem); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %q, want %q", got, want)
	}
	checkErrors(t, r, []errorCase{
		{"trace(`max_pfn_like);", diag.D_SYM_NOTYPES, "no symbolic type information is available for vmlinux`max_pfn_like: No type information available for symbol"},
		{"x = `vfs_read_like; x = \"s\";", diag.D_OP_INCOMPAT, `operands have incompatible types: "int (*)()" = "string"`},
	})
}

func mustLookup(t *testing.T, tab *ksym.Table, name string) ksym.Symbol {
	s, err := tab.Lookup("", name)
	if err != nil {
		t.Fatal(err)
	}
	return s[0]
}

type errorCase struct {
	src string
	tag diag.Tag
	msg string
}

func checkErrors(t *testing.T, r check.Symbols, cases []errorCase) {
	t.Helper()
	for _, tt := range cases {
		_, err := compile(r, "BEGIN { "+tt.src+" }")
		var de *diag.Error
		if !errors.As(err, &de) {
			t.Errorf("%s: got %v, want %s", tt.src, err, tt.tag)
			continue
		}
		msg := strings.TrimPrefix(de.Format("t.d", false), "line 1: ")
		if de.Tag != tt.tag || msg != tt.msg {
			t.Errorf("%s:\n got [%s] %s\nwant [%s] %s", tt.src, de.Tag, msg, tt.tag, tt.msg)
		}
	}
}

func TestSymbolErrors(t *testing.T) {
	path := buildKernel(t, "-g")
	r := imageResolver(t, path, true)
	checkErrors(t, r, []errorCase{
		{"trace(`nosuch);", diag.D_IDENT_UNDEF, "failed to resolve `nosuch: Unknown symbol name"},
		{"trace(nosuchmod`max_pfn_like);", diag.D_IDENT_UNDEF, "failed to resolve nosuchmod`max_pfn_like: Unknown module name"},
		{"trace(``max_pfn_like);", diag.D_IDENT_UNDEF, "failed to resolve ``max_pfn_like: Unknown symbol name"},
		{"trace(vmlinux``max_pfn_like);", diag.D_SYM_BADREF, "kernel module 'vmlinux' symbol 'max_pfn_like' may not be referenced as a user symbol"},
		{"`max_pfn_like = 1;", diag.D_OP_WRITE, "operator = can only be applied to a writable variable"},
	})
	// Without a symbol table nothing resolves.
	checkErrors(t, nil, []errorCase{
		{"trace(`max_pfn_like);", diag.D_IDENT_UNDEF, "failed to resolve `max_pfn_like: Unknown symbol name"},
	})
}

// varTypes is a module's variables: their types and sections.
type varTypes map[string]struct {
	t   types.Type
	sec string
}

func (v varTypes) LookupVar(name string) (types.Type, error) { return v[name].t, nil }
func (v varTypes) VarSection(name string) (string, uint32, error) {
	return v[name].sec, 0, nil
}

// TestModuleSymbols resolves symbols from kallsyms, a module's among
// them, typed by the modules' types.
func TestModuleSymbols(t *testing.T) {
	ops := &types.Struct{Name: "file_operations", Bytes: 16}
	ops.SetMembers([]types.Member{{Name: "owner", Type: types.Long}, {Name: "flags", Type: types.IntType, Offset: 64}})
	kernel := varTypes{
		"max_pfn":   {types.ULong, ".bss"},
		"runqueues": {types.IntType, ".data..percpu"},
		"jiffies":   {types.ULong, ".data"},
	}
	ext4 := varTypes{"ext4_file_operations": {ops, ".data"}}
	r := &ksym.Resolver{
		Load: func() (*ksym.Table, error) {
			return ksym.ReadKallsyms(strings.NewReader(
				"0000000000000000 A __per_cpu_start\n0000000000001000 D fixed_percpu_data\n" +
					"0000000000032d40 D runqueues\n0000000000040000 A __per_cpu_end\n" +
					"ffffffff816d5b70 T vfs_read\nffffffff83100000 B max_pfn\n" +
					"ffffffffc0a2c000 d ext4_file_operations\t[ext4]\n"))
		},
		Types: func(mod string) ([]ksym.VarTypes, error) {
			switch mod {
			case ksym.KernelModule:
				return []ksym.VarTypes{kernel}, nil
			case "ext4":
				return []ksym.VarTypes{ext4}, nil
			}
			return nil, nil
		},
	}
	mem := vm.Segments{
		{Addr: 0xffffffff83100000, Data: []byte{0x00, 0x00, 0x24, 0, 0, 0, 0, 0}},
		{Addr: 0xffffffffc0a2c000, Data: []byte{1, 0, 0, 0, 0, 0, 0, 0, 0x2a, 0, 0, 0, 0, 0, 0, 0}},
	}
	p, err := compile(r, "BEGIN { trace(`max_pfn); trace(ext4`ext4_file_operations.flags); trace((uint64_t)&ext4`ext4_file_operations); trace((uint64_t)&`vfs_read); }")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0x240000", "0x2a", "0xffffffffc0a2c000", "0xffffffff816d5b70"}
	if got := traced(t, p, mem); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %q, want %q", got, want)
	}
	checkErrors(t, r, []errorCase{
		{"trace(ext4`max_pfn);", diag.D_IDENT_UNDEF, "failed to resolve ext4`max_pfn: Unknown symbol name"},
		// Typed, but the code generator has no address to read.
		{"trace(`runqueues);", diag.D_UNKNOWN, "cannot read per-CPU variable vmlinux`runqueues: its address is an offset into each CPU's area, which DIF cannot locate"},
		// Per-CPU by kallsyms's section bounds, though its types do
		// not say.
		{"trace(*(int *)&`fixed_percpu_data);", diag.D_UNKNOWN, "cannot read per-CPU variable vmlinux`fixed_percpu_data: its address is an offset into each CPU's area, which DIF cannot locate"},
		{"trace(`jiffies);", diag.D_UNKNOWN, "the address of vmlinux`jiffies is not known: kallsyms does not list it (without CONFIG_KALLSYMS_ALL the kernel lists only its functions there)"},
	})
}

// TestBTFTypes types an image's symbols by its BTF (gcc -gbtf): VARs,
// and DATASEC for the per-CPU section.
func TestBTFTypes(t *testing.T) {
	path := buildKernel(t, "-gbtf")
	m, err := btf.Open(path, nil)
	if err != nil {
		t.Skipf("gcc's BTF: %v", err)
	}
	r := &ksym.Resolver{
		Load:  func() (*ksym.Table, error) { return ksym.ReadELF(path) },
		Types: func(string) ([]ksym.VarTypes, error) { return []ksym.VarTypes{m}, nil },
	}
	for _, tt := range []struct {
		name, typ string // typ ends the type's name
		perCPU    bool
	}{
		{"max_pfn_like", "int", false},
		{"linux_banner", "char [23]", false}, // gcc's BTF makes the array and its elements const
		{"file_ops", "struct ops", false},
		{"pcpu_counter", "long int", true},
	} {
		ks, err := r.Symbol("", tt.name)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if ks.Type == nil || !strings.HasSuffix(ks.Type.String(), tt.typ) || ks.PerCPU != tt.perCPU || !ks.HasAddr {
			t.Errorf("%s: %+v, want type %s, per-CPU %v", tt.name, ks, tt.typ, tt.perCPU)
		}
	}
	mem := imageMemory(t, path)
	p, err := compile(r, "BEGIN { trace(`max_pfn_like); trace(`file_ops.flags); }")
	if err != nil {
		t.Fatal(err)
	}
	if got := traced(t, p, mem); strings.Join(got, " ") != "0x12345 0xfffffff7" {
		t.Errorf("got %q", got)
	}
	checkErrors(t, r, []errorCase{
		{"trace(`pcpu_counter);", diag.D_UNKNOWN, "cannot read per-CPU variable vmlinux`pcpu_counter: its address is an offset into each CPU's area, which DIF cannot locate"},
	})
}
