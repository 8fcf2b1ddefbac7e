package btf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// writeFile writes data to a file called name in a temporary directory
// and returns its path.
func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// open opens data as a file called name.
func open(t testing.TB, name string, data []byte, base *Module) *Module {
	t.Helper()
	m, err := Open(writeFile(t, name, data), base)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// lookup looks up a type that must exist.
func lookup(t testing.TB, m *Module, name string) types.Type {
	t.Helper()
	typ, err := m.LookupType(name)
	if err != nil || typ == nil {
		t.Fatalf("LookupType(%q) = %v, %v", name, typ, err)
	}
	return typ
}

// layout describes the members of a struct or union, one a line: name
// ("-" if anonymous), type and offset in bits, with a bit-field's width
// after a colon.
func layout(t types.Type) []string {
	var out []string
	for _, m := range types.Resolve(t).(*types.Struct).Members() {
		name := m.Name
		if name == "" {
			name = "-"
		}
		l := fmt.Sprintf("%s %v @%d", name, m.Type, m.Offset)
		if m.BitSize != 0 {
			l += fmt.Sprintf(":%d", m.BitSize)
		}
		out = append(out, l)
	}
	return out
}

// kinds builds BTF with a record of every kind.
func kinds() *builder {
	b := newBuilder()
	int_ := b.int("int", 4, intSigned<<24|32)
	uint_ := b.int("unsigned int", 4, 32)
	char := b.int("char", 1, intSigned<<24|8)
	b.int("unsigned char", 1, 8)
	b.int("_Bool", 1, intBool<<24|8)
	ulong := b.int("long unsigned int", 8, 64)
	b.add("double", kindFloat, false, 0, 8)
	pid := b.typedef("pid_t", b.typedef("__kernel_pid_t", int_))
	cint := b.add("", kindConst, false, 0, int_)
	b.typedef("cv_int", b.add("", kindVolatile, false, 0, cint))
	comm := b.array(char, int_, 16)

	lh := b.next + 1
	next := b.ptr(lh)
	b.struct_(kindStruct, "list_head", 16, false, field{"next", next, 0}, field{"prev", next, 64})

	opaque := b.ptr(b.add("opaque", kindFwd, false, 0, 0))
	b.add("ou", kindFwd, true, 0, 0)
	color := b.add("color", kindEnum, true, 2, 4, b.str("RED"), 0xffffffff, b.str("BLUE"), 2)
	b.add("mask", kindEnum, false, 1, 4, b.str("HIGH"), 0x80000000)
	b.add("wide", kindEnum64, true, 1, 8, b.str("WIDE"), 0xfffffffe, 0xffffffff)
	b.add("uwide", kindEnum64, false, 1, 8, b.str("UWIDE"), 0, 1<<8)
	b.add("later", kindEnum, false, 0, 4)

	u := b.struct_(kindUnion, "", 4, false, field{"i", int_, 0}, field{"u", uint_, 0})
	user := b.ptr(b.add("user", kindTypeTag, false, 0, char))
	cchar := b.ptr(b.add("", kindConst, false, 0, char))
	b.add("printk", kindFunc, false, 1, b.proto(int_, param{"fmt", cchar}, param{"", 0}))
	cb := b.proto(0, param{"a", int_}, param{"", ulong})
	b.add("f", kindFunc, false, 1, cb)
	cbp := b.ptr(cb)
	// struct task refers to itself through a typedef of a restrict
	// pointer; it follows the three records that make that.
	task := b.next + 3
	self := b.typedef("task_ptr", b.add("", kindRestrict, false, 0, b.ptr(task)))
	b.struct_(kindStruct, "task", 64, true,
		field{"x", uint_, 3 << 24},
		field{"y", uint_, 5<<24 | 3},
		field{"", u, 32},
		field{"comm", comm, 64},
		field{"pid", pid, 192},
		field{"color", color, 224},
		field{"user", user, 256},
		field{"cb", cbp, 320},
		field{"op", opaque, 384},
		field{"self", self, 448},
	)
	jiffies := b.add("jiffies", kindVar, false, 0, ulong, 1)
	b.add("tagged", kindDeclTag, false, 0, task, 0xffffffff)
	b.add(".data", kindDatasec, false, 1, 8, jiffies, 0, 8)
	return b
}

func TestKinds(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(bo.String(), func(t *testing.T) { testKinds(t, kinds().bytes(bo)) })
	}
}

func testKinds(t *testing.T, data []byte) {
	m := open(t, "vmlinux", data, nil)

	// Names and how the types print.
	for _, tc := range []struct {
		name, want string // want "" for no such type
	}{
		{"int", "int"},
		{"signed int", "int"},
		{"  int  ", "int"},
		{"unsigned", "unsigned int"},
		{"unsigned long", "long unsigned int"},
		{"long unsigned int", "long unsigned int"},
		{"unsigned long int", "long unsigned int"},
		{"char", "char"},
		{"double", "double"},
		{"pid_t", "pid_t"},
		{"cv_int", "cv_int"},
		{"task_ptr", "task_ptr"},
		{"struct list_head", "struct list_head"},
		{"struct opaque", "struct opaque"},
		{"union ou", "union ou"},
		{"enum color", "enum color"},
		{"enum wide", "enum wide"},
		{"enum later", "enum later"},
		{"struct task", "struct task"},
		{"long", ""},
		{"unsigned unsigned", ""},
		{"struct ou", ""},
		{"union opaque", ""},
		{"union task", ""},
		{"enum task", ""},
		{"task", ""},
		{"struct", ""},
		{"struct task *", ""},
		{"printk", ""},
		{"jiffies", ""},
		{"", ""},
	} {
		typ, err := m.LookupType(tc.name)
		if err != nil {
			t.Errorf("LookupType(%q): %v", tc.name, err)
			continue
		}
		got := ""
		if typ != nil {
			got = typ.String()
		}
		if got != tc.want {
			t.Errorf("LookupType(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}

	// The same ID always gives the same pointer.
	lh := lookup(t, m, "struct list_head")
	if p := lh.(*types.Struct).Members()[0].Type.(*types.Pointer); p.Elem != lh {
		t.Errorf("list_head.next points to %p, not to struct list_head %p", p.Elem, lh)
	}
	if lookup(t, m, "struct list_head") != lh {
		t.Errorf("struct list_head looked up twice gives two types")
	}

	task := lookup(t, m, "struct task").(*types.Struct)
	want := []string{
		"x unsigned int @0:3",
		"y unsigned int @3:5",
		"- union (anon) @32",
		"comm char [16] @64",
		"pid pid_t @192",
		"color enum color @224",
		"user char * @256",
		"cb void (*)() @320",
		"op struct opaque * @384",
		"self task_ptr @448",
	}
	if diff := cmp.Diff(want, layout(task)); diff != "" {
		t.Errorf("struct task (-want +got):\n%s", diff)
	}
	if task.Module != "vmlinux" || task.Bytes != 64 || task.Incomplete {
		t.Errorf("struct task: module %q, %d bytes, incomplete %v", task.Module, task.Bytes, task.Incomplete)
	}
	if m, ok := task.Member("u"); !ok || m.Offset != 32 || m.Type.String() != "unsigned int" {
		t.Errorf("task.u through the anonymous union: %+v, %v", m, ok)
	}
	self, _ := task.Member("self")
	rp := self.Type.(*types.Typedef).Type
	if got := rp.String(); got != "struct task *restrict" {
		t.Errorf("task_ptr is %s", got)
	}
	if p := rp.(*types.Qualified).Type.(*types.Pointer); p.Elem != task {
		t.Errorf("task.self does not point to struct task")
	}
	pid, _ := task.Member("pid")
	if td := pid.Type.(*types.Typedef); td.Module != "vmlinux" || td.Type.String() != "__kernel_pid_t" || types.Resolve(td) != lookup(t, m, "int") {
		t.Errorf("pid_t is %#v", td)
	}
	if got := types.Resolve(lookup(t, m, "cv_int")).String(); got != "int" {
		t.Errorf("cv_int resolves to %s", got)
	}
	if q := types.Quals(lookup(t, m, "cv_int")); q != types.Const|types.Volatile {
		t.Errorf("cv_int has qualifiers %v, want const volatile", q)
	}
	if op, _ := task.Member("op"); !op.Type.(*types.Pointer).Elem.(*types.Struct).Incomplete {
		t.Errorf("struct opaque is complete")
	}
	if e := lookup(t, m, "enum later").(*types.Enum); !e.Incomplete {
		t.Errorf("enum later without values is complete")
	}

	// Integers: encodings and character types.
	for _, tc := range []struct {
		name                string
		signed, char, bool_ bool
	}{
		{"int", true, false, false},
		{"unsigned int", false, false, false},
		{"char", true, true, false},
		{"unsigned char", false, true, false},
		{"_Bool", false, false, true},
	} {
		i := lookup(t, m, tc.name).(*types.Int)
		if i.Signed != tc.signed || i.Char != tc.char || i.Bool != tc.bool_ {
			t.Errorf("%s: %+v", tc.name, i)
		}
	}

	// Enumerators: signed when kind_flag says so.
	for _, tc := range []struct {
		name, enum string
		value      int64
	}{
		{"RED", "enum color", -1},
		{"BLUE", "enum color", 2},
		{"HIGH", "enum mask", 0x80000000},
		{"WIDE", "enum wide", -2},
		{"UWIDE", "enum uwide", 1 << 40},
	} {
		e, v, ok := m.LookupEnumerator(tc.name)
		if !ok || v != tc.value || e.String() != tc.enum || e.Module != "vmlinux" {
			t.Errorf("LookupEnumerator(%s) = %v, %d, %v; want %s, %d", tc.name, e, v, ok, tc.enum, tc.value)
		}
	}
	if e, _, ok := m.LookupEnumerator("GREEN"); ok {
		t.Errorf("LookupEnumerator(GREEN) = %v", e)
	}

	// Functions and variables.
	for _, tc := range []struct {
		name, result string
		params       []string
		variadic     bool
	}{
		{"printk", "int", []string{"const char * fmt"}, true},
		{"f", "void", []string{"int a", "long unsigned int "}, false},
	} {
		f, names, err := m.LookupFunc(tc.name)
		if err != nil || f == nil {
			t.Errorf("LookupFunc(%s) = %v, %v", tc.name, f, err)
			continue
		}
		var params []string
		for i, p := range f.Params {
			params = append(params, p.String()+" "+names[i])
		}
		if f.Result.String() != tc.result || f.Variadic != tc.variadic || !cmp.Equal(params, tc.params) {
			t.Errorf("LookupFunc(%s) = %v %v variadic %v, want %v %v variadic %v", tc.name, f.Result, params, f.Variadic, tc.result, tc.params, tc.variadic)
		}
	}
	if f, _, err := m.LookupFunc("int"); f != nil || err != nil {
		t.Errorf("LookupFunc(int) = %v, %v; want nothing", f, err)
	}
	if v, err := m.LookupVar("jiffies"); err != nil || v != lookup(t, m, "unsigned long") {
		t.Errorf("LookupVar(jiffies) = %v, %v", v, err)
	}
	if v, err := m.LookupVar("f"); v != nil || err != nil {
		t.Errorf("LookupVar(f) = %v, %v; want nothing", v, err)
	}
}

// TestLegacyBitfields reads bit-fields as BTF had them before
// kind_flag: an INT whose encoding narrows or shifts it.
func TestLegacyBitfields(t *testing.T) {
	b := newBuilder()
	three := b.int("int", 4, intSigned<<24|3)
	shifted := b.typedef("u4", b.add("", kindConst, false, 0, b.int("unsigned int", 4, 2<<16|4)))
	full := b.int("int", 4, intSigned<<24|32)
	b.struct_(kindStruct, "legacy", 8, false,
		field{"a", three, 0},
		field{"b", shifted, 0},
		field{"c", full, 32},
	)
	m := open(t, "vmlinux", b.bytes(binary.LittleEndian), nil)
	want := []string{"a int @0:3", "b u4 @2:4", "c int @32"}
	if diff := cmp.Diff(want, layout(lookup(t, m, "struct legacy"))); diff != "" {
		t.Errorf("struct legacy (-want +got):\n%s", diff)
	}
}

// TestSplit reads a module's split BTF on top of the kernel's.
func TestSplit(t *testing.T) {
	b := newBuilder()
	int_ := b.int("int", 4, intSigned<<24|32)
	u32 := b.typedef("u32", b.int("unsigned int", 4, 32))
	lh := b.next + 1
	b.struct_(kindStruct, "list_head", 16, false, field{"next", b.ptr(lh), 0})
	b.add("dev", kindFwd, false, 0, 0)
	proto := b.proto(int_, param{"x", int_})
	b.add("kernel_fn", kindFunc, false, 1, proto)
	kernel := open(t, "vmlinux", b.bytes(binary.LittleEndian), nil)

	s := b.split()
	s.add("list_head", kindFwd, false, 0, 0)
	dev := s.next + 2 // after the pointer to it and mod_only
	s.struct_(kindStruct, "mod_only", 16, false, field{"d", s.ptr(dev), 0}, field{"x", u32, 64})
	s.struct_(kindStruct, "dev", 24, false, field{"id", int_, 0}, field{"node", lh, 64})
	s.add("mod_e", kindEnum, false, 1, 4, s.str("MOD_X"), 3)
	s.add("mod_fn", kindFunc, false, 1, proto)
	mod := open(t, "my-mod.ko", s.bytes(binary.LittleEndian), kernel)

	if got := mod.ModuleName(); got != "my_mod" {
		t.Errorf("ModuleName() = %q, want my_mod", got)
	}
	only := lookup(t, mod, "struct mod_only").(*types.Struct)
	if diff := cmp.Diff([]string{"d struct dev * @0", "x u32 @64"}, layout(only)); diff != "" {
		t.Errorf("struct mod_only (-want +got):\n%s", diff)
	}
	d := only.Members()[0].Type.(*types.Pointer).Elem.(*types.Struct)
	if d.Module != "my_mod" || d.Incomplete || d != lookup(t, mod, "struct dev") {
		t.Errorf("mod_only.d points to %+v, not to the module's struct dev", d)
	}
	if u := only.Members()[1].Type; u != lookup(t, kernel, "u32") || u.(*types.Typedef).Module != "vmlinux" {
		t.Errorf("mod_only.x is not the kernel's u32")
	}
	// The module's forward declaration gives way to the kernel's
	// definition; the kernel's to the module's, but only in the module.
	if got := lookup(t, mod, "struct list_head"); got != lookup(t, kernel, "struct list_head") {
		t.Errorf("module's struct list_head is %+v, not the kernel's", got)
	}
	if dev := lookup(t, kernel, "struct dev").(*types.Struct); !dev.Incomplete {
		t.Errorf("the kernel's struct dev is complete")
	}
	if dev, _ := d.Member("node"); dev.Type != lookup(t, kernel, "struct list_head") {
		t.Errorf("dev.node is not the kernel's struct list_head")
	}
	if lookup(t, mod, "int") != lookup(t, kernel, "int") {
		t.Errorf("the module's int is not the kernel's")
	}
	if e, v, ok := mod.LookupEnumerator("MOD_X"); !ok || v != 3 || e.Module != "my_mod" {
		t.Errorf("LookupEnumerator(MOD_X) = %v, %d, %v", e, v, ok)
	}
	if _, _, ok := kernel.LookupEnumerator("MOD_X"); ok {
		t.Errorf("the kernel has the module's enumerator")
	}
	f, names, err := mod.LookupFunc("mod_fn")
	if err != nil || f == nil || !cmp.Equal(names, []string{"x"}) {
		t.Errorf("LookupFunc(mod_fn) = %v, %v, %v", f, names, err)
	}
	if f, _, _ := mod.LookupFunc("kernel_fn"); f != nil {
		t.Errorf("the module has the kernel's function")
	}
}

// loaded returns t and err, or if t is a struct or union, the error of
// loading its members: they are converted when first asked for.
func loaded(t types.Type, err error) (types.Type, error) {
	if s, ok := t.(*types.Struct); ok && err == nil {
		err = s.Err()
	}
	return t, err
}

// TestCycles checks that types containing themselves by value are
// errors, that those containing themselves through pointers are not, and
// that an error leaves nothing half-built behind.
func TestCycles(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(b *builder) // adds the type called bad
		bad  string
	}{
		{"typedef", func(b *builder) { b.typedef("bad", b.next) }, "bad"},
		{"const", func(b *builder) { b.typedef("bad", b.add("", kindConst, false, 0, b.next)) }, "bad"},
		{"type tag", func(b *builder) { b.typedef("bad", b.add("t", kindTypeTag, false, 0, b.next)) }, "bad"},
		{"array", func(b *builder) { b.typedef("bad", b.array(b.next, 1, 2)) }, "bad"},
		{"pointer", func(b *builder) { b.typedef("bad", b.ptr(b.next)) }, "bad"},
		{"function type", func(b *builder) {
			// A function type returning a pointer to itself.
			f := b.proto(b.next + 2)
			b.typedef("bad", f)
			b.ptr(f)
		}, "bad"},
		{"struct through an array met first behind a pointer", func(b *builder) {
			// struct bad { struct x *p; a_t a; }; struct x { a_t m; };
			// a_t is struct bad[2].
			s := b.next
			b.struct_(kindStruct, "bad", 8, false, field{"p", s + 1, 0}, field{"a", s + 3, 64})
			b.ptr(s + 2)
			b.struct_(kindStruct, "x", 8, false, field{"m", s + 3, 0})
			b.array(s, 1, 2)
		}, "struct bad"},
		{"struct", func(b *builder) { b.struct_(kindStruct, "bad", 4, false, field{"self", b.next, 0}) }, "struct bad"},
		{"struct through typedef and array", func(b *builder) {
			s := b.next
			b.struct_(kindStruct, "bad", 4, false, field{"a", s + 1, 0})
			b.typedef("t", s+2)
			b.array(s, 1, 2)
		}, "struct bad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder()
			b.int("int", 4, intSigned<<24|32)
			tc.make(b)
			m := open(t, "vmlinux", b.bytes(binary.LittleEndian), nil)
			for range 2 {
				typ, err := loaded(m.LookupType(tc.bad))
				if err == nil || !strings.Contains(err.Error(), "itself") {
					t.Fatalf("LookupType(%q) = %v, %v; want an error", tc.bad, typ, err)
				}
			}
			if typ, err := m.LookupType("int"); err != nil || typ == nil {
				t.Errorf("after the error, LookupType(int) = %v, %v", typ, err)
			}
		})
	}

	// Cycles through a struct and a pointer or function type are C's.
	b := newBuilder()
	b.ptr(3)                                                                 // 1
	b.struct_(kindStruct, "a", 8, false, field{"b", 1, 0})                   // 2
	b.struct_(kindStruct, "b", 8, false, field{"a", 2, 0}, field{"f", 4, 0}) // 3
	b.ptr(5)                                                                 // 4
	b.proto(3, param{"", 1})                                                 // 5: struct b (*)(struct b *)
	m := open(t, "vmlinux", b.bytes(binary.LittleEndian), nil)
	for _, name := range []string{"struct a", "struct b"} {
		lookup(t, m, name)
	}
	if got := layout(lookup(t, m, "struct b")); !cmp.Equal(got, []string{"a struct a @0", "f struct b (*)() @0"}) {
		t.Errorf("struct b: %v", got)
	}
}

// TestErrors checks that malformed BTF gives an *Error naming the file,
// from Open or from the lookup that meets it.
func TestErrors(t *testing.T) {
	valid := func() *builder {
		b := newBuilder()
		b.int("int", 4, intSigned<<24|32)
		return b
	}
	le := binary.LittleEndian
	for _, tc := range []struct {
		name   string
		data   func() []byte
		lookup string // the lookup that fails, "" if Open does
		want   string
	}{
		{"empty", func() []byte { return nil }, "", "shorter than a header"},
		{"magic", func() []byte { d := valid().bytes(le); d[0] = 0; return d }, "", "not BTF: magic"},
		{"version", func() []byte { d := valid().bytes(le); d[2] = 2; return d }, "", "version 2"},
		{"header length", func() []byte { d := valid().bytes(le); le.PutUint32(d[4:], 8); return d }, "", "header length 8"},
		{"type section", func() []byte { d := valid().bytes(le); le.PutUint32(d[12:], 1<<30); return d }, "", "type section"},
		{"string section", func() []byte { d := valid().bytes(le); le.PutUint32(d[16:], 1<<31); return d }, "", "string section"},
		{"type length", func() []byte { d := valid().bytes(le); le.PutUint32(d[12:], 15); return d }, "", "not a multiple of 4"},
		{"first string", func() []byte { d := valid().bytes(le); d[len(d)-5] = 'x'; return d }, "", "does not start with an empty string"},
		{"last string", func() []byte { d := valid().bytes(le); d[len(d)-1] = 'x'; return d }, "", "does not end in NUL"},
		{"unknown kind", func() []byte {
			b := valid()
			b.add("x", 25, false, 0, 0)
			return b.bytes(le)
		}, "int", "type 2: unknown kind 25"},
		{"truncated record", func() []byte {
			b := valid()
			b.add("s", kindStruct, false, 5, 4, 0, 1, 0)
			return b.bytes(le)
		}, "int", "runs past the end"},
		{"missing type", func() []byte {
			b := valid()
			b.typedef("t", 99)
			return b.bytes(le)
		}, "t", "no type 99"},
		{"name offset", func() []byte {
			b := valid()
			b.add("s", kindStruct, false, 1, 4, 9999, 1, 0)
			return b.bytes(le)
		}, "struct s", "string offset 9999"},
		{"void parameter", func() []byte {
			b := valid()
			b.typedef("fn", b.proto(1, param{"", 0}, param{"x", 1}))
			return b.bytes(le)
		}, "fn", "parameter 1 of a function type is void"},
		{"not a type", func() []byte {
			b := valid()
			b.typedef("t", b.add("f", kindFunc, false, 0, 1))
			return b.bytes(le)
		}, "t", "FUNC is not a type"},
		{"function type", func() []byte {
			b := valid()
			b.add("f", kindFunc, false, 0, 1)
			return b.bytes(le)
		}, "func f", "type 1 is a INT, not a FUNC_PROTO"},
		{"nesting", func() []byte {
			b := valid()
			for range maxDepth + 1 {
				b.ptr(b.next + 1)
			}
			b.typedef("deep", 2)
			return b.bytes(le)
		}, "deep", "nested more than"},
		{"no .BTF", func() []byte {
			exe, err := os.ReadFile(os.Args[0]) // the test binary, an ELF file on Linux and FreeBSD
			if err != nil {
				t.Fatal(err)
			}
			return exe
		}, "", "without a .BTF section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, "vmlinux", tc.data())
			m, err := Open(file, nil)
			if tc.lookup != "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				if name, ok := strings.CutPrefix(tc.lookup, "func "); ok {
					_, _, err = m.LookupFunc(name)
				} else {
					_, err = loaded(m.LookupType(tc.lookup))
				}
			}
			var e *Error
			if !errors.As(err, &e) || e.File != file || !strings.HasPrefix(err.Error(), file+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want an *Error for %s saying %q", err, file, tc.want)
			}
		})
	}

	dir := t.TempDir()
	for _, tc := range []struct {
		file, want string
		is         error
	}{
		{filepath.Join(dir, "missing"), "no such file", fs.ErrNotExist},
		{dir, "is a directory", nil},
	} {
		_, err := Open(tc.file, nil)
		if err == nil || err.Error() != tc.file+": "+tc.want && !strings.HasPrefix(err.Error(), tc.file+": "+tc.want) || tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("Open(%s) = %v, want %s: %s", tc.file, err, tc.file, tc.want)
		}
	}
	if _, err := LoadModule(nil, "../etc"); err == nil || !strings.Contains(err.Error(), `bad module name "../etc"`) {
		t.Errorf("LoadModule(../etc) = %v", err)
	}
	if _, err := LoadModule(nil, "ext4"); err == nil || !strings.Contains(err.Error(), "/sys/kernel/btf/ext4: no kernel BTF") {
		t.Errorf("LoadModule(nil, ext4) = %v", err)
	}
}
