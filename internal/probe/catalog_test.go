package probe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/corpus"
	"github.com/kdtrace/kdtrace/internal/ksym"
)

// testKallsyms is a small kernel: functions of vmlinux and of module
// ext4, syscall handlers, and symbols that are not functions.
const testKallsyms = `ffffffff81000000 T vfs_read
ffffffff81000100 T vfs_write
ffffffff81000200 t do_sys_open
ffffffff81000300 T __x64_sys_read
ffffffff81000400 T __x64_sys_openat
ffffffff81000500 T __x64_sys_wait4
ffffffff81000600 T __x64_sys_waitid
ffffffff81000680 T __x64_sys_ni_syscall
ffffffff81000700 T vfs_read
ffffffff81000800 D jiffies
ffffffff81000900 t ext4_file_read_iter	[ext4]
ffffffff81000a00 t ext4_file_write_iter	[ext4]
`

// testTypes is the types of testKallsyms's kernel.
type testTypes map[string]*types.Func

var (
	testFile   = &types.Struct{Module: "vmlinux", Name: "file", Incomplete: true}
	testSizeT  = &types.Typedef{Module: "vmlinux", Name: "size_t", Type: types.ULong}
	testSSizeT = &types.Typedef{Module: "vmlinux", Name: "ssize_t", Type: types.Long}
)

func (tt testTypes) LookupFunc(name string) (*types.Func, []string, error) {
	f := tt[name]
	if f == nil {
		return nil, nil, nil
	}
	return f, make([]string, len(f.Params)), nil
}

func (tt testTypes) LookupType(name string) (types.Type, error) {
	switch name {
	case "size_t":
		return testSizeT, nil
	case "char":
		return types.Char, nil
	case "unsigned int":
		return types.UInt, nil
	case "int":
		return types.IntType, nil
	}
	return nil, nil
}

var testKernelTypes = testTypes{
	"vfs_read": {Result: testSSizeT, Params: []types.Type{
		&types.Pointer{Elem: testFile}, &types.Pointer{Elem: types.Char}, testSizeT, &types.Pointer{Elem: types.LongLong}}},
	"vfs_write":           {Result: types.Void{}, Params: []types.Type{&types.Pointer{Elem: testFile}}},
	"__do_sys_openat":     {Result: types.Long, Params: []types.Type{types.IntType, &types.Pointer{Elem: types.Char}, types.IntType, types.UShort}},
	"ext4_file_read_iter": {Result: testSSizeT},
}

// testCatalog returns a hermetic catalog over testKallsyms.
func testCatalog(t testing.TB) *Catalog {
	k := testKernel(t)
	return New(Dtrace(), profile(), &syscallProvider{k: k}, &fbtProvider{k: k}, &kinstProvider{k})
}

func testKernel(t testing.TB) *kernel {
	return &kernel{
		syscallPrefix: "__x64_sys_",
		load: func() ([]*funcList, error) {
			t, err := ksym.ReadKallsyms(strings.NewReader(testKallsyms))
			if err != nil {
				return nil, err
			}
			return tableFuncs(t, nil), nil
		},
		types: func(module string) (KernelTypes, error) {
			if module == KernelModule {
				return testKernelTypes, nil
			}
			return nil, nil
		},
	}
}

func names(ps []*Probe) []string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return s
}

func TestMatch(t *testing.T) {
	tests := []struct {
		desc Desc
		want []string
	}{
		{Desc{Name: "BEGIN"}, []string{"dtrace:::BEGIN"}},
		{Desc{"dtrace", "", "", "END"}, []string{"dtrace:::END"}},
		{Desc{"dtrace", "", "", ""}, []string{"dtrace:::BEGIN", "dtrace:::END", "dtrace:::ERROR"}},
		{Desc{"dtrace", "", "", "E*"}, []string{"dtrace:::END", "dtrace:::ERROR"}},
		{Desc{Provider: "dtr?ce", Name: "ERROR"}, []string{"dtrace:::ERROR"}},
		{Desc{Function: "BEGIN", Name: "tick-1"}, nil}, // BEGIN:tick-1
		{Desc{Provider: "BEGIN", Function: "read", Name: "entry"}, nil},
		{Desc{Name: "tick-1sec"}, []string{"profile:::tick-1sec"}},
		{Desc{Function: "profile", Name: "tick-1sec"}, nil}, // profile:tick-1sec
		{Desc{Module: "profile", Name: "tick-1sec"}, nil},   // profile::tick-1sec
		{Desc{Provider: "profile", Name: "tick-1sec"}, []string{"profile:::tick-1sec"}},
		{Desc{Provider: "profile", Name: "test"}, nil},
		{Desc{Name: "profiletick-1sec"}, nil},
		{Desc{Name: "profile-1ns"}, nil},
		{Desc{Name: "tick-n"}, nil},
		{Desc{Name: "no_such_dtrace_probe*"}, nil},
		{Desc{"profile", "", "", "profile-*"}, []string{"profile:::profile-97", "profile:::profile-199",
			"profile:::profile-499", "profile:::profile-997", "profile:::profile-1999", "profile:::profile-4001", "profile:::profile-4999"}},
		{Desc{"profile", "", "", "tick-*"}, []string{"profile:::tick-1", "profile:::tick-10", "profile:::tick-100",
			"profile:::tick-500", "profile:::tick-1000", "profile:::tick-5000",
			"profile:::tick-1sec"}}, // made by the earlier description
		{Desc{"fbt", "", "vfs_read", "entry"}, []string{"fbt:vmlinux:vfs_read:entry"}},
		{Desc{"fbt", "vmlinux", "vfs_read", ""}, []string{"fbt:vmlinux:vfs_read:entry", "fbt:vmlinux:vfs_read:return"}},
		{Desc{"fbt", "ext4", "vfs_read", ""}, nil},
		{Desc{"fbt", "", "vfs_*", "return"}, []string{"fbt:vmlinux:vfs_read:return", "fbt:vmlinux:vfs_write:return"}},
		{Desc{"fbt", "ext*", "", "entry"}, []string{"fbt:ext4:ext4_file_read_iter:entry", "fbt:ext4:ext4_file_write_iter:entry"}},
		{Desc{"fbt", "", "jiffies", ""}, nil},
		{Desc{"fbt", "", "vfs_read", "tick-1"}, nil},
		{Desc{"", "", "vfs_read", "entry"}, []string{"fbt:vmlinux:vfs_read:entry"}},
		{Desc{"", "", "read", ""}, []string{"syscall:vmlinux:read:entry", "syscall:vmlinux:read:return"}},
		{Desc{"syscall", "", "*wait*", "entry"}, []string{"syscall:vmlinux:wait4:entry", "syscall:vmlinux:waitid:entry"}},
		{Desc{"syscall", "", "?lwp?", "entry"}, nil},
		{Desc{"syscall", "", "*tick*", "entry"}, nil},
		{Desc{"syscall", "", "ni_syscall", ""}, nil},
		{Desc{"syscall", "freebsd", "read", ""}, nil},
		{Desc{"kinst", "", "vfs_read", "5"}, []string{"kinst:vmlinux:vfs_read:5"}},
		{Desc{"kinst", "", "vfs_read", ""}, []string{"kinst:vmlinux:vfs_read:0"}},
		{Desc{"kinst", "", "vfs_read", "05"}, nil},
		{Desc{"kinst", "", "vfs_read", "entry"}, nil},
		{Desc{"kinst", "", "vfs_*", "5"}, nil},
		{Desc{"kinst", "", "", ""}, nil},
		{Desc{"nosuch", "", "", ""}, nil},
		{Desc{"fbt*", "", "do_sys_open", "entry"}, []string{"fbt:vmlinux:do_sys_open:entry"}},
	}
	c := testCatalog(t)
	for _, tt := range tests {
		got, err := c.Match(tt.desc)
		if err != nil {
			t.Errorf("Match(%v): %v", tt.desc, err)
			continue
		}
		if diff := cmp.Diff(tt.want, names(got)); diff != "" {
			t.Errorf("Match(%v) (-want +got):\n%s", tt.desc, diff)
		}
		n, err := c.Count(tt.desc)
		if err != nil || n != len(tt.want) {
			t.Errorf("Count(%v) = %d, %v; want %d", tt.desc, n, err, len(tt.want))
		}
	}
}

// TestSyscallHandlers checks that the syscall provider, listing the
// kernel's handlers, lists only those Config.Syscall takes for system
// calls: a kernel has handlers of the compat calls of 32-bit programs,
// which are no calls of its own.
func TestSyscallHandlers(t *testing.T) {
	tests := []struct {
		isCall func(string) bool
		want   []string
	}{
		{nil, []string{"syscall:vmlinux:openat:entry", "syscall:vmlinux:read:entry", "syscall:vmlinux:wait4:entry", "syscall:vmlinux:waitid:entry"}},
		{func(name string) bool { return name != "waitid" && name != "openat" }, []string{"syscall:vmlinux:read:entry", "syscall:vmlinux:wait4:entry"}},
	}
	for _, tt := range tests {
		c := New(&syscallProvider{k: testKernel(t), isCall: tt.isCall})
		got, err := c.Match(Desc{"syscall", "", "", "entry"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, names(got)); diff != "" {
			t.Errorf("syscall:::entry (-want +got):\n%s", diff)
		}
	}
}

func TestMatchAll(t *testing.T) {
	c := testCatalog(t)
	n, err := c.Count(Desc{})
	if err != nil {
		t.Fatal(err)
	}
	// 3 dtrace, 13 profile, 4 syscalls × 2, 10 functions × 2 fbt (the
	// second vfs_read is dropped), none from kinst (whose function must
	// be literal).
	if want := 3 + 13 + 8 + 20; n != want {
		t.Errorf("Count(:::) = %d, want %d", n, want)
	}
	stop := 0
	if err := c.Walk(Desc{}, func(*Probe) bool { stop++; return stop < 5 }); err != nil || stop != 5 {
		t.Errorf("Walk stopped after %d probes (%v), want 5", stop, err)
	}
}

func TestArgs(t *testing.T) {
	c := testCatalog(t)
	tests := []struct {
		desc     Desc
		matches  int
		unstable bool
		args     string
	}{
		{Desc{Name: "BEGIN"}, 1, false, "[]"},
		{Desc{"dtrace", "", "", ""}, 2, true, "[]"}, // the name is Stable and a glob
		{Desc{"dtrace", "*", "", "BEGIN"}, 1, false, "[]"},
		{Desc{"fbt", "", "vfs_read", "entry"}, 1, false, "[struct file * char * size_t long long *]"},
		{Desc{"fbt", "", "vfs_read", "return"}, 1, false, "[int ssize_t]"},
		{Desc{"fbt", "", "vfs_write", "return"}, 1, false, "[int]"}, // void: no args[1]
		{Desc{"fbt", "", "do_sys_open", "entry"}, 1, false, "[]"},   // no BTF
		{Desc{"fbt", "", "vfs_read", ""}, 2, true, "[]"},            // fbt's arguments are Private
		{Desc{"fbt", "", "", "entry"}, 2, true, "[]"},
		{Desc{"syscall", "", "openat", "entry"}, 1, false, "[int char * int unsigned short]"},
		{Desc{"syscall", "", "openat", "return"}, 1, false, "[long long]"},
		{Desc{"syscall", "", "read", "entry"}, 1, false, "[]"},
		{Desc{"kinst", "", "vfs_read", "7"}, 1, false, "[]"},
		{Desc{"nosuch", "", "", ""}, 0, false, "[]"},
	}
	for _, tt := range tests {
		info, err := c.Info(tt.desc)
		if err != nil {
			t.Errorf("Info(%v): %v", tt.desc, err)
			continue
		}
		var args []string
		for _, a := range info.Args {
			args = append(args, a.String())
		}
		got := "[" + strings.Join(args, " ") + "]"
		if info.Matches != tt.matches || info.Unstable != tt.unstable || got != tt.args {
			t.Errorf("Info(%v) = %d matches, unstable %v, args %s; want %d, %v, %s",
				tt.desc, info.Matches, info.Unstable, got, tt.matches, tt.unstable, tt.args)
		}
		if (info.Probe == nil) != (tt.matches == 0) {
			t.Errorf("Info(%v).Probe = %v with %d matches", tt.desc, info.Probe, tt.matches)
		}
	}
}

// errProvider fails to list its probes.
type errProvider struct{}

func (errProvider) Name() string                           { return "broken" }
func (errProvider) Attributes() attributes                 { return kernelAttr }
func (errProvider) Probes(*query, func(*Probe) bool) error { return errors.New("cannot read") }

func TestProviderError(t *testing.T) {
	c := New(Dtrace(), errProvider{})
	if _, err := c.Match(Desc{Name: "BEGIN"}); err == nil {
		t.Error("Match(:::BEGIN) over a broken provider: no error")
	}
	_, err := c.Match(Desc{Provider: "broken"})
	if pe, ok := errors.AsType[*providerError](err); !ok || pe.Provider != "broken" {
		t.Errorf("Match(broken:::) error = %v, want a *ProviderError", err)
	}
	if ps, err := c.Match(Desc{Provider: "dtrace"}); err != nil || len(ps) != 3 {
		t.Errorf("Match(dtrace:::) = %d probes, %v; want 3", len(ps), err)
	}
}

// corpusDir returns the DTrace test suite's common tests, skipping the
// test when it is absent.
func corpusDir(t *testing.T) string {
	dir, ok := corpus.DTraceTests()
	if !ok {
		t.Skipf("DTrace test corpus not present at %s", dir)
	}
	return dir
}

// corpusDescs parses a corpus script and returns its clauses'
// descriptions.
func corpusDescs(t *testing.T, path string) []Desc {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := parser.ParseFile(path, src, &parser.Config{Args: []string{path, "1"}, ArgRefs: true,
		Macros: map[string]string{"pid": "1", "ppid": "1", "target": "1"}})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var ds []Desc
	for _, d := range prog.Decls {
		if c, ok := d.(*ast.Clause); ok {
			for _, pd := range c.Probes {
				ds = append(ds, Desc{pd.Provider, pd.Module, pd.Function, pd.Name})
			}
		}
	}
	return ds
}

// checkCorpus matches the descriptions of the corpus's probe tests:
// every description of a tst.*.d script matches a probe, and some
// description of each err.D_PDESC_ZERO*.d script matches none.
func checkCorpus(t *testing.T, c *Catalog) {
	dir := corpusDir(t)
	for _, group := range []string{"profile-n", "tick-n", "begin", "providers", "probes"} {
		files, _ := filepath.Glob(filepath.Join(dir, group, "*.d"))
		if len(files) == 0 {
			t.Fatalf("no tests in %s", group)
		}
		for _, f := range files {
			base := filepath.Base(f)
			zero := strings.HasPrefix(base, "err.D_PDESC_ZERO")
			if !zero && !strings.HasPrefix(base, "tst.") {
				continue
			}
			var empty []Desc
			for _, d := range corpusDescs(t, f) {
				n, err := c.Count(d)
				if err != nil {
					t.Errorf("%s/%s: %v: %v", group, base, d, err)
				}
				if n == 0 {
					empty = append(empty, d)
				}
			}
			switch {
			case zero && len(empty) == 0:
				t.Errorf("%s/%s: every description matches a probe; want D_PDESC_ZERO", group, base)
			case !zero && len(empty) > 0:
				t.Errorf("%s/%s: %v match no probe", group, base, empty)
			}
		}
	}
}

func TestCorpus(t *testing.T) {
	checkCorpus(t, testCatalog(t))
}

func ExampleCatalog_Info() {
	c := New(Dtrace(), profile())
	for _, d := range []Desc{{Name: "BEGIN"}, {Name: "tick-1sec"}, {Name: "profile-1us"}, {"profile", "", "", "tick-*"}} {
		info, _ := c.Info(d)
		fmt.Println(d, info.Matches, info.Probe, info.Unstable)
	}
	// Output:
	// :::BEGIN 1 dtrace:::BEGIN false
	// :::tick-1sec 1 profile:::tick-1sec false
	// :::profile-1us 0 <nil> false
	// profile:::tick-* 2 profile:::tick-1 true
}

// TestID checks probe IDs: numbered from 1 in the order Walk lists every
// probe, stable between catalogs of the same probes, and found again by
// ByID; a probe made on demand is numbered after the rest.
func TestID(t *testing.T) {
	t.Run("fbt last", func(t *testing.T) { testID(t, testCatalog) })
	// fbt's IDs are found by its place in its own order, not by
	// walking: the providers after it must be numbered after it all.
	t.Run("fbt first", func(t *testing.T) {
		testID(t, func(t testing.TB) *Catalog {
			k := testKernel(t)
			return New(&fbtProvider{k: k}, Dtrace(), profile(), &syscallProvider{k: k}, &kinstProvider{k})
		})
	})
}

// TestIDProbeable checks that fbt's probe IDs are the same whether or
// not the catalog knows which functions the kernel lets fbt probe
// (tracefs's list, which only root may read): of a glob, fbt lists only
// those, and the IDs of the others are left unused.
func TestIDProbeable(t *testing.T) {
	catalog := func(limit bool) *Catalog {
		k := testKernel(t)
		if limit {
			k.probeable = func() (*probeable, error) {
				kt, err := ksym.ReadKallsyms(strings.NewReader(strings.ReplaceAll(testKallsyms, "T vfs_write\n", "D vfs_write\n")))
				if err != nil {
					return nil, err
				}
				pr := &probeable{mods: map[string]*funcList{}}
				for _, l := range tableFuncs(kt, nil) {
					pr.mods[l.module] = l
				}
				return pr, nil
			}
		}
		return New(Dtrace(), &fbtProvider{k: k}, &syscallProvider{k: k}, &kinstProvider{k})
	}
	limited, all := catalog(true), catalog(false)
	var probes []*Probe
	limited.Walk(Desc{}, func(p *Probe) bool { probes = append(probes, p); return true })
	if len(probes) < 10 {
		t.Fatalf("the test catalog has %d probes", len(probes))
	}
	skipped := false
	last := uint32(0)
	for _, p := range probes {
		if p.Function == "vfs_write" {
			t.Errorf("%v listed, though the kernel does not let fbt probe it", p)
		}
		id := limited.ID(p)
		if id <= last {
			t.Errorf("ID(%v) = %d, not after the ID %d before it", p, id, last)
		}
		skipped = skipped || id > last+1
		last = id
		var q *Probe
		all.Walk(p.Desc(), func(r *Probe) bool { q = r; return false })
		if q == nil || all.ID(q) != id {
			t.Errorf("ID(%v) = %d; without the kernel's list, %v", p, id, q)
		}
		if r := catalog(true).ByID(id); r == nil || r.Desc() != p.Desc() {
			t.Errorf("another catalog's ByID(%d) = %v, want %v", id, r, p)
		}
	}
	if !skipped {
		t.Error("no ID was left unused for vfs_write's probes")
	}
	// The IDs of vfs_write's probes hold none.
	var w *Probe
	all.Walk(Desc{"fbt", "", "vfs_write", "entry"}, func(p *Probe) bool { w = p; return false })
	if w == nil {
		t.Fatal("no fbt::vfs_write:entry without the kernel's list")
	}
	if p := limited.ByID(all.ID(w)); p != nil {
		t.Errorf("ByID(%d) = %v, want none", all.ID(w), p)
	}
}

// TestIDReadsNoLists checks that numbering a probe of fbt or kinst,
// which come after the syscall provider, reads neither the list of the
// kernel's syscall handlers (/proc/kallsyms) nor that of the functions
// the kernel lets fbt probe (tracefs's): the syscall probes hold the
// places of the architecture's calls, whether or not the kernel has
// each, and an fbt function its place whether or not it is probeable.
// ByID still finds only the probes there are.
func TestIDReadsNoLists(t *testing.T) {
	handlers, probeables := 0, 0
	k := testKernel(t)
	k.probeable = func() (*probeable, error) {
		probeables++
		kt, err := ksym.ReadKallsyms(strings.NewReader(strings.ReplaceAll(testKallsyms, "T vfs_write\n", "D vfs_write\n")))
		if err != nil {
			return nil, err
		}
		pr := &probeable{mods: map[string]*funcList{}}
		for _, l := range tableFuncs(kt, nil) {
			pr.mods[l.module] = l
		}
		return pr, nil
	}
	// The architecture's calls: read and wait4, which the kernel has,
	// and pipe, which it lacks.
	arch := []string{"pipe", "read", "wait4"}
	sys := &syscallProvider{k: k, numbered: arch,
		isCall: func(name string) bool { return slices.Contains(arch, name) },
		handlers: func() ([]string, error) {
			handlers++
			return []string{"__x64_sys_openat", "__x64_sys_read", "__x64_sys_wait4"}, nil
		}}
	c := New(Dtrace(), sys, &fbtProvider{k: k}, &kinstProvider{k})
	id := func(d Desc) uint32 {
		t.Helper()
		ps, err := c.Match(d)
		if err != nil || len(ps) != 1 {
			t.Fatalf("Match(%v) = %v, %v", d, ps, err)
		}
		return c.ID(ps[0])
	}
	dtraceProbes := uint32(3) // BEGIN, END, ERROR
	tests := []struct {
		d    Desc
		want uint32
	}{
		{Desc{"fbt", "vmlinux", "vfs_read", "entry"}, dtraceProbes + 2*uint32(len(arch)) + 1},
		// vfs_write's place, though fbt may not probe it.
		{Desc{"fbt", "vmlinux", "vfs_write", "return"}, dtraceProbes + 2*uint32(len(arch)) + 4},
	}
	for _, tt := range tests {
		if got := id(tt.d); got != tt.want {
			t.Errorf("ID(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
	id(Desc{"kinst", "", "vfs_read", "0"})
	if handlers != 0 || probeables != 0 {
		t.Errorf("numbering fbt and kinst probes read the kernel's syscall handlers %d times, the probeable functions %d times; want neither", handlers, probeables)
	}
	if got, want := id(Desc{"syscall", "", "wait4", "return"}), dtraceProbes+6; got != want {
		t.Errorf("ID(syscall::wait4:return) = %d, want %d", got, want)
	}
	for _, tt := range []struct {
		id   uint32
		want string // "" for no probe
	}{
		{dtraceProbes + 1, ""}, // pipe:entry: the kernel has no such call
		{dtraceProbes + 4, "syscall:vmlinux:read:return"},
		{dtraceProbes + 2*uint32(len(arch)) + 1, "fbt:vmlinux:vfs_read:entry"},
		{dtraceProbes + 2*uint32(len(arch)) + 4, ""}, // vfs_write:return
	} {
		got := ""
		if p := c.ByID(tt.id); p != nil {
			got = p.String()
		}
		if got != tt.want {
			t.Errorf("ByID(%d) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func testID(t *testing.T, catalog func(testing.TB) *Catalog) {
	c := catalog(t)
	var all []*Probe
	c.Walk(Desc{}, func(p *Probe) bool { all = append(all, p); return true })
	if len(all) < 10 {
		t.Fatalf("the test catalog has %d probes", len(all))
	}
	other := catalog(t)
	for i, p := range all {
		if id := c.ID(p); id != uint32(i+1) {
			t.Fatalf("ID(%v) = %d, want %d", p, id, i+1)
		}
		if q := other.ByID(uint32(i + 1)); q == nil || q.Desc() != p.Desc() {
			t.Fatalf("another catalog's ByID(%d) = %v, want %v", i+1, q, p)
		}
	}
	for _, id := range []uint32{0, uint32(len(all) + 1)} {
		if p := c.ByID(id); p != nil {
			t.Errorf("ByID(%d) = %v, want none", id, p)
		}
	}
	// kinst probes exist once a description names them.
	ps, err := c.Match(Desc{"kinst", "", "vfs_read", "0"})
	if err != nil || len(ps) != 1 {
		t.Fatalf("Match(kinst::vfs_read:0) = %v, %v", ps, err)
	}
	if id := c.ID(ps[0]); id != uint32(len(all)+1) || c.ByID(id).Desc() != ps[0].Desc() {
		t.Errorf("a probe made on demand has ID %d, want %d", id, len(all)+1)
	}
}
