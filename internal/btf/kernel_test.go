package btf

import (
	"errors"
	"io/fs"
	"slices"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/cachedir"
)

// kernel opens the running kernel's BTF, or skips the test saying why.
func kernel(tb testing.TB) *Module {
	tb.Helper()
	m, err := Kernel()
	if errors.Is(err, fs.ErrNotExist) {
		tb.Skipf("the running kernel has no BTF: %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// member returns the member called name of the struct or union t.
func member(tb testing.TB, t types.Type, name string) types.Member {
	tb.Helper()
	s, ok := types.Resolve(t).(*types.Struct)
	if !ok {
		tb.Fatalf("%v is not a struct or union", t)
	}
	m, ok := s.Member(name)
	if !ok {
		tb.Fatalf("%v has no member %s", t, name)
	}
	return m
}

func TestKernel(t *testing.T) {
	k := kernel(t)
	if got := k.ModuleName(); got != "vmlinux" {
		t.Errorf("ModuleName() = %q, want vmlinux", got)
	}
	task, err := k.LookupType("struct task_struct")
	if err != nil || task == nil {
		t.Fatalf(`LookupType("struct task_struct") = %v, %v`, task, err)
	}
	if s := task.(*types.Struct); s.Module != "vmlinux" || s.Incomplete || s.Bytes < 1000 {
		t.Errorf("struct task_struct: module %q, incomplete %v, %d bytes", s.Module, s.Incomplete, s.Bytes)
	}

	pid := member(t, task, "pid")
	if td, ok := pid.Type.(*types.Typedef); !ok || td.Name != "pid_t" || td.Module != "vmlinux" {
		t.Errorf("task_struct.pid has type %v, want pid_t", pid.Type)
	} else if i, ok := types.Resolve(td).(*types.Int); !ok || i.Name != "int" || i.Bytes != 4 || !i.Signed {
		t.Errorf("pid_t is %#v, want int", types.Resolve(td))
	}
	comm := member(t, task, "comm")
	if got := comm.Type.String(); got != "char [16]" {
		t.Errorf("task_struct.comm has type %s, want char [16]", got)
	}
	if a := comm.Type.(*types.Array); !a.Elem.(*types.Int).Char {
		t.Errorf("char is not a character type")
	}

	// Recursive types convert to a cycle of the same pointers.
	lh, _ := k.LookupType("struct list_head")
	next := member(t, lh, "next")
	if p, ok := next.Type.(*types.Pointer); !ok || p.Elem != lh {
		t.Errorf("list_head.next has type %v, want a pointer to the same struct list_head", next.Type)
	}
	if again, _ := k.LookupType("struct list_head"); again != lh {
		t.Errorf("struct list_head looked up twice gives two types")
	}

	// An integer is found by C's spelling and keeps BTF's name.
	ul, err := k.LookupType("unsigned long")
	if i, ok := ul.(*types.Int); err != nil || !ok || i.Name != "long unsigned int" || i.Signed || i.Bytes != 8 {
		t.Errorf(`LookupType("unsigned long") = %#v, %v; want BTF's long unsigned int`, ul, err)
	}

	for _, tc := range []struct {
		name  string
		value int64
	}{
		{"TASK_COMM_LEN", 16},
		{"GFP_KERNEL", 0}, // a macro, not an enumerator
	} {
		e, v, ok := k.LookupEnumerator(tc.name)
		if want := tc.value != 0; ok != want || ok && (v != tc.value || e == nil) {
			t.Errorf("LookupEnumerator(%s) = %v, %d, %v; want %d, %v", tc.name, e, v, ok, tc.value, want)
		}
	}

	fn, params, err := k.LookupFunc("vfs_read")
	if err != nil || fn == nil {
		t.Fatalf(`LookupFunc("vfs_read") = %v, %v`, fn, err)
	}
	var got []string
	for i, p := range fn.Params {
		got = append(got, p.String()+" "+params[i])
	}
	want := []string{"struct file * file", "char * buf", "size_t count", "loff_t * pos"}
	if fn.Result.String() != "ssize_t" || fn.Variadic || !slices.Equal(got, want) {
		t.Errorf("vfs_read: %v (%v), variadic %v; want ssize_t (%v)", fn.Result, got, fn.Variadic, want)
	}
	if fn, _, _ := k.LookupFunc("printk"); fn != nil && !fn.Variadic {
		t.Errorf("printk is not variadic")
	}
	if fn, _, err := k.LookupFunc("no_such_function"); fn != nil || err != nil {
		t.Errorf(`LookupFunc("no_such_function") = %v, %v; want nil, nil`, fn, err)
	}

	if v, err := k.LookupVar("runqueues"); err != nil || v == nil || v.String() != "struct rq" {
		t.Errorf(`LookupVar("runqueues") = %v, %v; want struct rq`, v, err)
	}
	if v, err := k.LookupType("no_such_type_t"); v != nil || err != nil {
		t.Errorf(`LookupType("no_such_type_t") = %v, %v; want nil, nil`, v, err)
	}
}

// TestKernelAll converts every type of the running kernel.
func TestKernelAll(t *testing.T) {
	if testing.Short() {
		t.Skip("converts the whole kernel")
	}
	k := kernel(t)
	if err := k.index(); err != nil {
		t.Fatal(err)
	}
	for i := range k.count {
		id := k.firstID + i
		k.mu.Lock()
		r, _ := k.record(id)
		var typ types.Type
		var err error
		switch r.kind() {
		case kindFunc, kindVar, kindDatasec, kindDeclTag:
		default:
			typ, err = k.typeByID(id)
		}
		k.mu.Unlock()
		if err != nil {
			t.Fatalf("type %d: %v", id, err)
		}
		if typ == nil {
			continue
		}
		_ = typ.String()
		typ.Size()
		typ.Align()
		if s, ok := typ.(*types.Struct); ok && s.Err() != nil {
			t.Fatalf("type %d: %v", id, s.Err())
		}
	}
}

func TestKernelModules(t *testing.T) {
	k := kernel(t)
	mods, err := modules()
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) == 0 {
		t.Skip("the running kernel has no modules with BTF")
	}
	for _, name := range mods[:min(len(mods), 5)] {
		m, err := LoadModule(k, name)
		if err != nil {
			t.Fatal(err)
		}
		if m.ModuleName() != name {
			t.Errorf("LoadModule(%s).ModuleName() = %s", name, m.ModuleName())
		}
		// The kernel's types are found through the module, and are the
		// kernel's.
		lh, err := m.LookupType("struct list_head")
		if err != nil {
			t.Fatal(err)
		}
		if klh, _ := k.LookupType("struct list_head"); lh != klh {
			t.Errorf("%s: struct list_head is not the kernel's", name)
		}
	}
}

// BenchmarkOpenLookup opens the kernel's BTF and resolves what a
// script using kernel types would: three structs and a chain of
// members.
func BenchmarkOpenLookup(b *testing.B) {
	kernel(b)
	b.ReportAllocs()
	for b.Loop() {
		k, err := Kernel()
		if err != nil {
			b.Fatal(err)
		}
		var task types.Type
		for _, name := range []string{"struct task_struct", "struct file", "struct sk_buff"} {
			t, err := k.LookupType(name)
			if err != nil || t == nil {
				b.Fatal(name, t, err)
			}
			if task == nil {
				task = t
			}
		}
		// curthread->mm->mmap_base, curthread->files->fdt->max_fds
		mm, _ := types.Elem(member(b, task, "mm").Type)
		member(b, mm, "mmap_base")
		files, _ := types.Elem(member(b, task, "files").Type)
		fdt, _ := types.Elem(member(b, files, "fdt").Type)
		member(b, fdt, "max_fds")
	}
}

// BenchmarkCachedLookup opens the kernel's BTF with its index in the
// cache, as every run of the command does, and looks up what the D
// lexer would in a small script: every identifier, most of them not a
// type.
func BenchmarkCachedLookup(b *testing.B) {
	dir, _ := cacheDir(b)
	if err := kernel(b).indexCached(dir); err != nil {
		b.Fatal(err)
	}
	names := []string{"pid", "timestamp", "uint64_t", "avg", "struct task_struct", "x", "count",
		"execname", "size_t", "walltimestamp", "arg0", "int"}
	b.ReportAllocs()
	for b.Loop() {
		k := kernel(b)
		k.UseCache(dir, "bench")
		for _, name := range names {
			if _, err := k.LookupType(name); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// indexCached indexes m, walking its types, and stores the index in
// dir under the key "bench".
func (m *Module) indexCached(dir *cachedir.Dir) error {
	m.UseCache(dir, "bench")
	return m.index()
}

// BenchmarkRecord finds the records of the kernel's types in an order
// as scattered as a conversion's.
func BenchmarkRecord(b *testing.B) {
	k := kernel(b)
	if err := k.index(); err != nil {
		b.Fatal(err)
	}
	n := k.count
	for b.Loop() {
		for i := range uint32(1 << 14) {
			if _, err := k.record(k.firstID + i*2654435761%n); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N<<14), "ns/record")
}

// BenchmarkTables builds the tables of the kernel's functions and
// enumerators, which walk every record.
func BenchmarkTables(b *testing.B) {
	k := kernel(b)
	if err := k.index(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		k.names[funcTable], k.names[enumTable] = nil, nil
		k.table(funcTable)
		k.table(enumTable)
	}
}
