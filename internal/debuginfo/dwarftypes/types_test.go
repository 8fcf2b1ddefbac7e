package dwarftypes

import (
	"bufio"
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
	"github.com/kdtrace/kdtrace/internal/guest"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// The type tests compile testdata/types (a.c and b.c into a program,
// b.c alone into an object file like a kernel module) with each
// compiler and DWARF version, and check the converted types against
// what probe.c, compiled by the same compiler, prints of their sizes
// and offsets.

// typeConfigs are the compilers and flags the fixtures are built with.
var typeConfigs = []struct {
	name  string
	cc    string
	flags []string
}{
	{"gcc-dwarf4", "gcc", []string{"-gdwarf-4"}},
	{"gcc-dwarf5", "gcc", []string{"-gdwarf-5"}},
	{"clang-dwarf4", "clang", []string{"-gdwarf-4"}},
	{"clang-dwarf5", "clang", []string{"-gdwarf-5"}},
	// DWARF 5 type units in .debug_info, referred to by signature.
	{"gcc-dwarf5-type-units", "gcc", []string{"-gdwarf-5", "-fdebug-types-section"}},
	{"clang-dwarf5-type-units", "clang", []string{"-gdwarf-5", "-fdebug-types-section"}},
}

// typeFixture is the fixture compiled one way.
type typeFixture struct {
	prog, obj string
	probe     []string // probe.c's lines
}

func buildTypeFixture(t *testing.T, cc string, flags []string) typeFixture {
	t.Helper()
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("%s not installed: %v", cc, err)
	}
	src, err := filepath.Abs("testdata/types")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := typeFixture{prog: filepath.Join(dir, "prog"), obj: filepath.Join(dir, "b.o")}
	compile := func(args ...string) {
		t.Helper()
		args = append(append([]string{"-w", "-I", src}, flags...), args...)
		cmd := exec.Command(cc, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
		}
	}
	compile("-g", "-O0", "-Wl,--build-id=sha1", "-o", f.prog, filepath.Join(src, "a.c"), filepath.Join(src, "b.c"))
	compile("-g", "-O0", "-c", "-o", f.obj, filepath.Join(src, "b.c"))
	probe := filepath.Join(dir, "probe")
	compile("-o", probe, filepath.Join(src, "probe.c"))
	out, err := exec.Command(probe).Output()
	if err != nil {
		t.Fatalf("running probe: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f.probe = append(f.probe, sc.Text())
	}
	return f
}

func testTypes(t *testing.T, path string) *Types {
	t.Helper()
	img, err := debuginfo.OpenImage(path, debuginfo.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	ty, err := Open(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ty.Close() })
	return ty
}

func mustType(t *testing.T, ty *Types, name string) types.Type {
	t.Helper()
	typ, err := ty.LookupType(name)
	if err != nil {
		t.Fatalf("LookupType(%q): %v", name, err)
	}
	if typ == nil {
		t.Fatalf("LookupType(%q) found nothing", name)
	}
	return typ
}

// member finds a member by a dotted path, as offsetof names it, and
// returns it with its offset from the start of s.
func member(s *types.Struct, path string) (types.Member, bool) {
	var off int64
	for {
		first, rest, more := strings.Cut(path, ".")
		m, ok := s.Member(first)
		if !ok {
			return m, false
		}
		off += m.Offset
		if !more {
			m.Offset = off
			return m, true
		}
		if s, ok = types.Resolve(m.Type).(*types.Struct); !ok {
			return m, false
		}
		path = rest
	}
}

func TestTypesLayout(t *testing.T) {
	for _, c := range typeConfigs {
		t.Run(c.name, func(t *testing.T) {
			fx := buildTypeFixture(t, c.cc, c.flags)
			ty := testTypes(t, fx.prog)
			for _, line := range fx.probe {
				f := strings.Split(line, "|")
				typ := mustType(t, ty, f[1])
				nums := make([]int64, 0, 2)
				for _, s := range f[2:] {
					if n, err := strconv.ParseInt(s, 10, 64); err == nil {
						nums = append(nums, n)
					}
				}
				switch f[0] {
				case "size":
					if got := typ.Size(); got != nums[0] {
						t.Errorf("sizeof(%s) = %d, compiler says %d", f[1], got, nums[0])
					}
					continue
				}
				s, ok := types.Resolve(typ).(*types.Struct)
				if !ok {
					t.Errorf("%s is a %T, not a struct", f[1], typ)
					continue
				}
				m, ok := member(s, f[2])
				if !ok {
					t.Errorf("%s has no member %s", f[1], f[2])
					continue
				}
				switch f[0] {
				case "off":
					if m.Offset != nums[0]*8 || m.BitSize != 0 {
						t.Errorf("%s.%s: offset %d bits, width %d; compiler says byte %d", f[1], f[2], m.Offset, m.BitSize, nums[0])
					}
				case "bits":
					if m.Offset != nums[0] || m.BitSize != nums[1] {
						t.Errorf("%s.%s: bits [%d, +%d); compiler says [%d, +%d)", f[1], f[2], m.Offset, m.BitSize, nums[0], nums[1])
					}
				}
			}
		})
	}
}

func TestTypesNames(t *testing.T) {
	// The types of members, as D writes them.
	members := []struct{ typ, member, want string }{
		{"struct anon", "kind", "int"},
		{"struct anon", "i", "int"},
		{"struct anon", "named", "struct (anon)"},
		{"struct anon", "named.tag", "char [3]"},
		{"struct anon", "cv", "const volatile int"},
		{"struct anon", "name", "const char *const"},
		{"struct anon", "rp", "char *restrict"},
		{"struct anon", "matrix", "int [3][4]"},
		{"struct anon", "lists", "struct list *[2]"},
		{"struct anon", "cmp", "int (*)()"},
		{"struct anon", "vfn", "void (*)()"},
		{"struct anon", "ch", "chain_t"},
		{"struct anon", "color", "enum color"},
		{"struct anon", "fp", "struct fwd_only *"},
		{"struct anon", "self", "struct anon *"},
		{"struct anon", "flex", "int [0]"},
		{"struct zero", "z", "char [0]"},
		{"struct bits", "f", "_Bool"},
		{"struct bits", "h", "enum color"},
		{"anon_td", "c", "char"},
	}
	vars := []struct{ name, want string }{
		{"g_anon", "struct anon"},
		{"names", "const char *[4]"},
		{"g_zero", "struct zero *"},
		{"g_td", "anon_td"},
		{"fwd_def", "struct fwd_only"},
		{"s_counter", "int"},
	}
	for _, c := range typeConfigs {
		t.Run(c.name, func(t *testing.T) {
			fx := buildTypeFixture(t, c.cc, c.flags)
			ty := testTypes(t, fx.prog)
			if got := ty.ModuleName(); got != "prog" {
				t.Errorf("ModuleName() = %q, want prog", got)
			}
			for _, tt := range members {
				s := types.Resolve(mustType(t, ty, tt.typ)).(*types.Struct)
				m, ok := member(s, tt.member)
				if !ok {
					t.Errorf("%s has no member %s", tt.typ, tt.member)
					continue
				}
				if got := m.Type.String(); got != tt.want {
					t.Errorf("%s.%s is %q, want %q", tt.typ, tt.member, got, tt.want)
				}
			}
			for _, tt := range vars {
				typ, err := ty.LookupVar(tt.name)
				if err != nil || typ == nil {
					t.Errorf("LookupVar(%q) = %v, %v", tt.name, typ, err)
					continue
				}
				if got := typ.String(); got != tt.want {
					t.Errorf("LookupVar(%q) is %q, want %q", tt.name, got, tt.want)
				}
			}
			// A typedef chain keeps each name.
			var chain []string
			for typ := mustType(t, ty, "chain_t"); ; {
				chain = append(chain, typ.String())
				td, ok := typ.(*types.Typedef)
				if !ok {
					break
				}
				typ = td.Type
			}
			if want := []string{"chain_t", "my_u32", "u32", "unsigned int"}; !slices.Equal(chain, want) {
				t.Errorf("chain_t resolves through %q, want %q", chain, want)
			}
			// Integer types are found by any spelling; base types keep
			// the compiler's.
			for _, tt := range []struct {
				name          string
				size          int64
				signed, char_ bool
			}{
				{"unsigned long", 8, false, false},
				{"long unsigned int", 8, false, false},
				{"unsigned", 4, false, false},
				{"char", 1, true, true},
				{"unsigned char", 1, false, true},
				{"signed char", 1, true, true},
				{"long long", 8, true, false},
			} {
				i, ok := mustType(t, ty, tt.name).(*types.Int)
				if !ok || i.Bytes != tt.size || i.Signed != tt.signed || i.Char != tt.char_ {
					t.Errorf("LookupType(%q) = %#v", tt.name, mustType(t, ty, tt.name))
				}
			}
			if b, ok := mustType(t, ty, "_Bool").(*types.Int); !ok || !b.Bool {
				t.Errorf("_Bool is %#v", mustType(t, ty, "_Bool"))
			}
			for _, name := range []string{"struct nosuch", "nosuch_t", "union list", "enum list", ""} {
				if typ, err := ty.LookupType(name); typ != nil || err != nil {
					t.Errorf("LookupType(%q) = %v, %v; want nothing", name, typ, err)
				}
			}
		})
	}
}

func TestTypesEnums(t *testing.T) {
	tests := []struct {
		name, enum string
		value      int64
	}{
		{"RED", "enum color", -2},
		{"GREEN", "enum color", 0},
		{"BLUE", "enum color", 7},
		{"BIG", "enum color", 0x7fffffff},
		{"U_A", "enum uns", 1},
		{"U_B", "enum uns", 0xfffffff0},
		{"S_NEG", "enum small", -128},
		{"S_POS", "enum small", 127},
	}
	for _, c := range typeConfigs {
		t.Run(c.name, func(t *testing.T) {
			fx := buildTypeFixture(t, c.cc, c.flags)
			ty := testTypes(t, fx.prog)
			for _, tt := range tests {
				e, v, ok := ty.LookupEnumerator(tt.name)
				if !ok {
					t.Errorf("LookupEnumerator(%q) found nothing", tt.name)
					continue
				}
				if e.String() != tt.enum || v != tt.value {
					t.Errorf("LookupEnumerator(%q) = %s, %d; want %s, %d", tt.name, e, v, tt.enum, tt.value)
				}
				if e != mustType(t, ty, tt.enum) {
					t.Errorf("%s's enum is not the one LookupType(%q) gives", tt.name, tt.enum)
				}
			}
			if _, _, ok := ty.LookupEnumerator("NOSUCH"); ok {
				t.Error("LookupEnumerator(NOSUCH) found an enumerator")
			}
		})
	}
}

func TestTypesFuncs(t *testing.T) {
	tests := []struct {
		name     string
		result   string
		params   []string
		names    []string
		variadic bool
	}{
		{"f", "int", []string{"int", "const char *", "struct list *"}, []string{"a", "b", "l"}, false},
		{"vf", "int", []string{"const char *"}, []string{"fmt"}, true},
		{"b_fn", "int", []string{"struct fwd_only *", "struct anon *"}, []string{"p", "q"}, false},
		{"main", "int", nil, nil, false},
	}
	for _, c := range typeConfigs {
		t.Run(c.name, func(t *testing.T) {
			fx := buildTypeFixture(t, c.cc, c.flags)
			ty := testTypes(t, fx.prog)
			for _, tt := range tests {
				f, names, err := ty.LookupFunc(tt.name)
				if err != nil || f == nil {
					t.Errorf("LookupFunc(%q) = %v, %v", tt.name, f, err)
					continue
				}
				var params []string
				for _, p := range f.Params {
					params = append(params, p.String())
				}
				got := []any{f.Result.String(), params, names, f.Variadic}
				want := []any{tt.result, tt.params, tt.names, tt.variadic}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("LookupFunc(%q): result, params, names, variadic (-want +got):\n%s", tt.name, diff)
				}
			}
			if f, _, err := ty.LookupFunc("nosuch"); f != nil || err != nil {
				t.Errorf("LookupFunc(nosuch) = %v, %v", f, err)
			}
			// A definition without a prototype: gcc and clang mark it
			// with no DW_AT_prototyped; D may pass it anything.
			if f, _, err := ty.LookupFunc("knr"); err != nil || f == nil || len(f.Params) != 0 {
				t.Errorf("LookupFunc(knr) = %v, %v", f, err)
			}
		})
	}
}

func TestTypesIdentity(t *testing.T) {
	for _, c := range typeConfigs {
		t.Run(c.name, func(t *testing.T) {
			fx := buildTypeFixture(t, c.cc, c.flags)
			ty := testTypes(t, fx.prog)

			// A recursive struct refers to itself, and the same name
			// gives the same pointer, from either unit.
			list := mustType(t, ty, "struct list").(*types.Struct)
			if p, ok := list.Members()[0].Type.(*types.Pointer); !ok || p.Elem != list {
				t.Errorf("struct list's next is %v, not a pointer to struct list itself", list.Members()[0].Type)
			}
			if again := mustType(t, ty, "struct list"); again != list {
				t.Error("two lookups of struct list gave different types")
			}
			if b, _ := ty.LookupVar("b_list"); b != list {
				t.Errorf("b.c's struct list (%p) is not a.c's (%p)", b, list)
			}
			anon := mustType(t, ty, "struct anon").(*types.Struct)
			if m, _ := anon.Member("self"); m.Type.(*types.Pointer).Elem != anon {
				t.Error("struct anon's self does not point to struct anon")
			}

			// A forward declaration in a.c becomes b.c's definition.
			m, _ := anon.Member("fp")
			fwd := m.Type.(*types.Pointer).Elem
			def := mustType(t, ty, "struct fwd_only")
			if fwd != def || !types.IsComplete(def) || def.Size() != 16 {
				t.Errorf("a.c's struct fwd_only is %#v, b.c's %#v", fwd, def)
			}

			// Same-named structs that differ stay apart; the name finds
			// the first.
			dup := mustType(t, ty, "struct dup")
			bdup, _ := ty.LookupVar("b_dup")
			if dup.Size() != 4 || bdup == nil || bdup.Size() != 16 || bdup == dup {
				t.Errorf("struct dup: a.c's is %#v, b.c's %#v", dup, bdup)
			}
			if adup, _ := ty.LookupVar("a_dup"); adup != dup {
				t.Errorf("a_dup is %#v, not struct dup", adup)
			}

			// An object file, as a kernel module is, is relocated. Not
			// with type units, which an object file keeps in sections
			// of their own, all called .debug_info, of which the
			// package reads one.
			if slices.Contains(c.flags, "-fdebug-types-section") {
				return
			}
			obj := testTypes(t, fx.obj)
			if got := obj.ModuleName(); got != "b" {
				t.Errorf("ModuleName() = %q, want b", got)
			}
			if d, _ := obj.LookupVar("b_dup"); d == nil || d.Size() != 16 {
				t.Errorf("b.o's b_dup is %v", d)
			}
			if f, names, _ := obj.LookupFunc("b_fn"); f == nil || !slices.Equal(names, []string{"p", "q"}) {
				t.Errorf("b.o's b_fn is %v, %q", f, names)
			}
		})
	}
}

func TestTypesClosed(t *testing.T) {
	fx := buildTypeFixture(t, "gcc", nil)
	ty := testTypes(t, fx.prog)
	list := mustType(t, ty, "struct list")
	if err := ty.Close(); err != nil {
		t.Fatal(err)
	}
	if list.String() != "struct list" || list.Size() != 16 {
		t.Errorf("after Close, struct list reads as %v of size %d", list, list.Size())
	}
	if _, err := ty.LookupType("struct list"); err == nil {
		t.Error("LookupType after Close did not fail")
	}
}

func TestTypesMemberBits(t *testing.T) {
	// DWARF 2's bit-field rule: DW_AT_bit_offset counts from the most
	// significant bit of the storage unit.
	m := &die{
		memberLoc: dwarfread.Attr{Form: dwarfread.FormData1, Val: 4},
		byteSize:  dwarfread.Attr{Form: dwarfread.FormData1, Val: 4},
		bitSize:   dwarfread.Attr{Form: dwarfread.FormData1, Val: 3},
		bitOffset: dwarfread.Attr{Form: dwarfread.FormData1, Val: 29},
	}
	if off, w := memberBits(m, 0, false); off != 32 || w != 3 {
		t.Errorf("little-endian: bits [%d, +%d), want [32, +3)", off, w)
	}
	if off, w := memberBits(m, 0, true); off != 32+29 || w != 3 {
		t.Errorf("big-endian: bits [%d, +%d), want [61, +3)", off, w)
	}
	// DW_OP_plus_uconst, as DWARF 2 writes locations.
	m = &die{memberLoc: dwarfread.Attr{Form: dwarfread.FormBlock1, Val: 0}, locExpr: []byte{opPlusUconst, 0x90, 0x01}}
	if got := memberLocation(m); got != 0x90 {
		t.Errorf("DW_OP_plus_uconst 0x90 gives %#x", got)
	}
}

// vmlinuxPath is a Linux kernel with DWARF and ORC for the tests that
// need one (see guest.CachedDebug), or "".
func vmlinuxPath() string {
	p, ok := guest.CachedDebug()
	if !ok {
		return ""
	}
	return p
}

func TestTypesVmlinux(t *testing.T) {
	path := vmlinuxPath()
	if path == "" {
		t.Skip("no vmlinux with DWARF: set KDTRACE_VMLINUX")
	}
	if testing.Short() {
		t.Skip("short")
	}
	img, err := debuginfo.OpenImage(path, debuginfo.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	img.Module = "kernel" // as Open and Kernel name it

	start := time.Now()
	ty, err := Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer ty.Close()
	task := mustType(t, ty, "struct task_struct").(*types.Struct)
	first := time.Since(start)
	start = time.Now()
	again := mustType(t, ty, "struct task_struct")
	later := time.Since(start)
	t.Logf("struct task_struct: first lookup %v (index and conversion), then %v; %d converted DIEs", first, later, len(ty.conv.memo))
	if again != task || task.Module != "kernel" || task.Size() < 1000 {
		t.Errorf("struct task_struct is %#v", task)
	}
	for _, tt := range []struct{ typ, member, want string }{
		{"struct task_struct", "pid", "pid_t"},
		{"struct task_struct", "comm", "char [16]"},
		{"struct task_struct", "mm", "struct mm_struct *"},
		{"struct task_struct", "__state", "unsigned int"},
		{"struct list_head", "next", "struct list_head *"},
		{"struct file", "f_op", "const struct file_operations *"},
	} {
		s := types.Resolve(mustType(t, ty, tt.typ)).(*types.Struct)
		m, ok := s.Member(tt.member)
		if !ok || m.Type.String() != tt.want {
			t.Errorf("%s.%s is %v, want %s", tt.typ, tt.member, m.Type, tt.want)
		}
	}
	// The mm_struct that task_struct points to is the one the name
	// finds, though a kernel defines it in hundreds of units.
	m, _ := task.Member("mm")
	if mm := mustType(t, ty, "struct mm_struct"); m.Type.(*types.Pointer).Elem != mm {
		t.Error("task_struct's mm_struct is not LookupType's")
	}
	f, names, err := ty.LookupFunc("vfs_read")
	if err != nil || f == nil || !slices.Equal(names, []string{"file", "buf", "count", "pos"}) {
		t.Errorf("LookupFunc(vfs_read) = %v, %q, %v", f, names, err)
	} else if p := f.Params[0].String(); p != "struct file *" {
		t.Errorf("vfs_read's file is %s", p)
	}
	if v, err := ty.LookupVar("jiffies"); err != nil || v == nil || v.Size() != 8 {
		t.Errorf("LookupVar(jiffies) = %v, %v", v, err)
	}
	if e, v, ok := ty.LookupEnumerator("TASK_COMM_LEN"); !ok || v != 16 {
		t.Errorf("LookupEnumerator(TASK_COMM_LEN) = %v, %d, %v", e, v, ok)
	}
}

func TestTypesConcurrent(t *testing.T) {
	fx := buildTypeFixture(t, "gcc", nil)
	ty := testTypes(t, fx.prog)
	names := []string{"struct anon", "struct list", "struct bits", "anon_td", "chain_t", "enum color"}
	got := make([][]types.Type, 4)
	var wg sync.WaitGroup
	for g := range got {
		wg.Go(func() {
			for _, n := range names {
				typ, err := ty.LookupType(n)
				if err != nil {
					t.Error(err)
				}
				got[g] = append(got[g], typ)
			}
			ty.LookupEnumerator("RED")
			ty.LookupFunc("f")
			ty.LookupVar("g_anon")
		})
	}
	wg.Wait()
	for g := range got[1:] {
		if !slices.Equal(got[0], got[g+1]) {
			t.Errorf("goroutines 0 and %d got different types", g+1)
		}
	}
}

// TestTypesCached checks that an image whose index came from the cache,
// and so whose debug file was not opened, finds its DWARF again.
func TestTypesCached(t *testing.T) {
	fx := buildTypeFixture(t, "gcc", nil)
	opts := debuginfo.Options{CacheDir: t.TempDir()}
	for i := range 2 {
		img, err := debuginfo.OpenImage(fx.prog, opts)
		if err != nil {
			t.Fatal(err)
		}
		if img.Cached != (i == 1) {
			t.Errorf("open %d: Cached = %v", i, img.Cached)
		}
		ty, err := Open(img)
		if err != nil {
			t.Fatal(err)
		}
		if s := mustType(t, ty, "struct list"); s.Size() != 16 {
			t.Errorf("open %d: struct list has size %d", i, s.Size())
		}
		ty.Close()
		img.Close()
	}
}

// TestTypesLazyMembers checks that a struct's members are converted
// when first asked for, and the structs they hold by value with them,
// but not those they point to.
func TestTypesLazyMembers(t *testing.T) {
	fx := buildTypeFixture(t, "gcc", nil)
	ty := testTypes(t, fx.prog)
	anon := mustType(t, ty, "struct anon").(*types.Struct)
	if n := len(ty.conv.memo); n != 1 {
		t.Errorf("struct anon: %d DIEs converted before its members are asked for, want 1", n)
	}
	if err := anon.Err(); err != nil {
		t.Fatal(err)
	}
	m, _ := anon.Member("named")
	named := m.Type.(*types.Struct)
	m, _ = anon.Member("fp")
	fwd := m.Type.(*types.Pointer).Elem.(*types.Struct)
	before := len(ty.conv.memo)
	named.Members()
	if n := len(ty.conv.memo); n != before {
		t.Errorf("struct anon's member named, held by value, was not loaded with it: %d DIEs more", n-before)
	}
	if got := len(fwd.Members()); got != 2 || len(ty.conv.memo) == before {
		t.Errorf("struct fwd_only, pointed to, had its %d members loaded with struct anon's", got)
	}
}

// TestTypesLazyVmlinux counts the DIEs vfs_read's type converts: its
// parameters' struct file has thousands of types behind its pointers.
func TestTypesLazyVmlinux(t *testing.T) {
	path := vmlinuxPath()
	if path == "" {
		t.Skip("no vmlinux with DWARF: set KDTRACE_VMLINUX")
	}
	if testing.Short() {
		t.Skip("short")
	}
	ty, err := OpenFile(path, "kernel")
	if err != nil {
		t.Fatal(err)
	}
	defer ty.Close()
	f, _, err := ty.LookupFunc("vfs_read")
	if err != nil || f == nil {
		t.Fatalf("LookupFunc(vfs_read) = %v, %v", f, err)
	}
	if n := len(ty.conv.memo); n > 40 {
		t.Errorf("vfs_read's type converted %d DIEs", n)
	}
	file := types.Resolve(f.Params[0].(*types.Pointer).Elem).(*types.Struct)
	if m, ok := file.Member("f_op"); !ok || m.Type.String() != "const struct file_operations *" {
		t.Errorf("struct file's f_op is %v", m.Type)
	}
	t.Logf("%d DIEs converted with struct file's members", len(ty.conv.memo))
}

// TestTypesContained checks the check of a struct's members loaded:
// one holding, through a typedef and an array, a struct whose members
// are loading (a struct containing itself, as only malformed DWARF
// describes) fails, and one whose member struct fails to load fails
// with its error.
func TestTypesContained(t *testing.T) {
	fx := buildTypeFixture(t, "gcc", nil)
	ty := testTypes(t, fx.prog)
	outer := &types.Struct{Name: "outer"}
	ty.conv.loading[outer] = true
	ms := []types.Member{{Name: "i", Type: types.IntType}, {Name: "a", Type: &types.Typedef{Name: "t", Type: &types.Array{Len: 2, Elem: outer}}}}
	if err := ty.checkContained(0x10, ms); err == nil || !strings.Contains(err.Error(), "type at 0x10 contains itself") {
		t.Errorf("a member holding a struct being loaded: %v", err)
	}
	delete(ty.conv.loading, outer)
	broken := &types.Struct{Name: "broken"}
	broken.LoadMembers(func() ([]types.Member, error) { return nil, errors.New("unreadable") })
	ms = []types.Member{{Name: "b", Type: &types.Qualified{Qual: types.Const, Type: broken}}, {Name: "p", Type: &types.Pointer{Elem: outer}}}
	if err := ty.checkContained(0x10, ms); err == nil || err.Error() != "unreadable" {
		t.Errorf("a member struct that fails to load: %v", err)
	}
	if err := ty.checkContained(0x10, ms[1:]); err != nil {
		t.Errorf("a pointer to a struct: %v", err)
	}
}
