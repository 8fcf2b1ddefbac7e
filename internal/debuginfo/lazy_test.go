package debuginfo

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/internal/gcctest"
	"github.com/kdtrace/kdtrace/internal/guest"
)

// lookup is a Lookup's answer, compared whole.
type lookup struct {
	Fn  function
	Err string
}

func lookupOf(s *Set, name string) lookup {
	fn, err := s.Lookup(name)
	l := lookup{Fn: fn}
	if err != nil {
		l.Err = err.Error()
	}
	return l
}

// compareLazy checks that a set opened Lazy answers Lookup for each
// name as the whole index does; fresh opens a set for each name, so
// that each answer comes from an index built for that name alone.
func compareLazy(t *testing.T, whole *Set, open func() *Set, names []string, fresh bool) {
	t.Helper()
	lazy := open()
	for _, name := range names {
		if fresh {
			lazy.Close()
			lazy = open()
		}
		want, got := lookupOf(whole, name), lookupOf(lazy, name)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(Copy{})); diff != "" {
			t.Errorf("Lookup(%s) lazily (-whole +lazy):\n%s", name, diff)
		}
	}
	lazy.Close()
}

func openSet(t *testing.T, kernel string, modules []string, opts Options) *Set {
	t.Helper()
	s, err := Open(kernel, modules, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLazy checks that a lazy set's lookups equal the whole index's for
// every function of the fixture, the module's included, one name per
// set and all names in one.
func TestLazy(t *testing.T) {
	f := build(t, "gcc", "-gdwarf-5")
	whole := openSet(t, f.prog, []string{f.mod}, Options{NoCache: true})
	defer whole.Close()
	names, err := whole.InlinedFunctions()
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range whole.Images() {
		x := img.x
		for i := range x.Funcs.Len() {
			names = append(names, x.Str(x.Function(i).Name))
		}
	}
	names = append(names, "no_such_function", "")
	open := func() *Set { return openSet(t, f.prog, []string{f.mod}, Options{NoCache: true, Lazy: true}) }
	compareLazy(t, whole, open, names, true)
	compareLazy(t, whole, open, names, false)

}

// TestLazyUnits checks that a lazy lookup reads only the units that hold
// the function: in a program of 24 units, an inline function of
// one of them, one of a header two of them use, an extern function
// defined in one and called from another, and one of none. And that a
// partial index in the cache answers for its functions, is extended for
// others, the index cached then answering for both, and is not taken
// for a whole one.
func TestLazyUnits(t *testing.T) {
	gcctest.Need(t, "gcc")
	dir := t.TempDir()
	files := map[string]string{
		"h.h": "extern volatile int sink;\nstatic inline int shared(int x) { return x * sink + 1; }\nint fb(int), fc(int);\n",
		"a.c": "#include \"h.h\"\nvolatile int sink;\nstatic inline int only_a(int x) { return x ^ sink; }\nint main(void) { return only_a(fb(1)) + fc(2); }\n",
		"b.c": "#include \"h.h\"\nint fb(int x) { return shared(x) + 2; }\n",
		"c.c": "#include \"h.h\"\nint fc(int x) { return shared(x) * 3; }\n",
	}
	// The names of pad.c come first in .debug_str, so that the others'
	// offsets there are above 64 KiB: small offsets are also common
	// values of other attributes, which would make the search of their
	// bytes find units that do not name the function (it would still
	// be right, but read more units).
	var pad strings.Builder
	for i := range 300 {
		fmt.Fprintf(&pad, "int pad_%s_%d;\n", strings.Repeat("x", 250), i)
	}
	files["pad.c"] = pad.String()
	args := []string{"-O2", "-g", "-o", filepath.Join(dir, "prog"), "pad.c", "a.c", "b.c", "c.c"}
	// Units enough that those of a lookup are under the quarter of
	// .debug_info above which BuildFor builds the whole index.
	for i := range 20 {
		name := fmt.Sprintf("f%d.c", i)
		files[name] = fmt.Sprintf("int f%d(int x) { return x + %d; }\n", i, i)
		args = append(args, name)
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prog := filepath.Join(dir, "prog")
	gcctest.Run(t, dir, "gcc", args...)
	whole := openSet(t, prog, nil, Options{NoCache: true})
	defer whole.Close()
	tests := []struct {
		name   string
		walked int
	}{
		{"only_a", 1},
		{"shared", 2},
		{"fc", 2}, // defined in c.c and declared in a.c, which calls it
		{"no_such_function", 0},
	}
	for _, tt := range tests {
		s := openSet(t, prog, nil, Options{NoCache: true, Lazy: true})
		got := lookupOf(s, tt.name)
		if diff := cmp.Diff(lookupOf(whole, tt.name), got, cmp.AllowUnexported(Copy{})); diff != "" {
			t.Errorf("Lookup(%s) (-whole +lazy):\n%s", tt.name, diff)
		}
		if st := s.Images()[0].Stats; st.Walked != tt.walked || st.Units < 24 {
			t.Errorf("Lookup(%s) read %d of %d units, want %d of at least 24", tt.name, st.Walked, st.Units, tt.walked)
		}
		s.Close()
	}

	// Every function in turn on one set: each index built takes in
	// those before it.
	var names []string
	for _, img := range whole.Images() {
		for i := range img.x.Funcs.Len() {
			names = append(names, img.x.Str(img.x.Function(i).Name))
		}
	}
	compareLazy(t, whole, func() *Set { return openSet(t, prog, nil, Options{NoCache: true, Lazy: true}) }, names, false)

	cache := t.TempDir()
	s := openSet(t, prog, nil, Options{CacheDir: cache, Lazy: true})
	if st := s.Images()[0].Stats; st.Walked != 0 || st.Units != 0 {
		t.Errorf("lazy open: %+v, want nothing read", st)
	}
	want := lookupOf(whole, "only_a")
	if diff := cmp.Diff(want, lookupOf(s, "only_a"), cmp.AllowUnexported(Copy{})); diff != "" {
		t.Errorf("Lookup(only_a) (-whole +lazy):\n%s", diff)
	}
	s.Close()
	s = openSet(t, prog, nil, Options{CacheDir: cache, Lazy: true})
	if img := s.Images()[0]; !img.Cached || !img.x.Partial || !img.x.Covers("only_a") || img.x.Covers("shared") {
		t.Errorf("reopened: cached %v, partial %v, covers only_a %v, shared %v; want a partial index of only_a", img.Cached, img.x.Partial, img.x.Covers("only_a"), img.x.Covers("shared"))
	}
	if diff := cmp.Diff(want, lookupOf(s, "only_a"), cmp.AllowUnexported(Copy{})); diff != "" {
		t.Errorf("Lookup(only_a) from the cache (-whole +lazy):\n%s", diff)
	}
	if diff := cmp.Diff(lookupOf(whole, "shared"), lookupOf(s, "shared"), cmp.AllowUnexported(Copy{})); diff != "" {
		t.Errorf("Lookup(shared) beside a partial cache (-whole +lazy):\n%s", diff)
	}
	s.Close()
	// The index cached for shared took in only_a's.
	s = openSet(t, prog, nil, Options{CacheDir: cache, Lazy: true})
	if img := s.Images()[0]; !img.Cached || !img.x.Partial || !img.x.Covers("only_a") || !img.x.Covers("shared") || img.x.Covers("fc") {
		t.Errorf("reopened: cached %v, partial %v, covers only_a %v, shared %v, fc %v; want a partial index of only_a and shared",
			img.Cached, img.x.Partial, img.x.Covers("only_a"), img.x.Covers("shared"), img.x.Covers("fc"))
	}
	for _, name := range []string{"only_a", "shared"} {
		if diff := cmp.Diff(lookupOf(whole, name), lookupOf(s, name), cmp.AllowUnexported(Copy{})); diff != "" {
			t.Errorf("Lookup(%s) from the merged cache (-whole +lazy):\n%s", name, diff)
		}
	}
	s.Close()
	s = openSet(t, prog, nil, Options{CacheDir: cache})
	if img := s.Images()[0]; img.Cached || img.x.Partial || img.Stats.Walked != img.Stats.Units {
		t.Errorf("not lazy, beside a partial cache: cached %v, partial %v, stats %+v; want the whole index built", img.Cached, img.x.Partial, img.Stats)
	}
	s.Close()
}

// TestLazyVmlinux compares lazy lookups with the whole index's on
// Debian's 6.1 vmlinux, for functions chosen at random among those
// inlined, and some chosen for their kind: a header's inline function,
// a function declared in most units (whose lookup builds the whole
// index), one that exists nowhere.
func TestLazyVmlinux(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes a 630 MB vmlinux")
	}
	path, ok := guest.CachedDebug()
	if !ok {
		t.Skip("no Debian 6.1 vmlinux with DWARF: set KDTRACE_VMLINUX, or run the guest test once")
	}
	whole := openSet(t, path, nil, Options{NoCache: true})
	defer whole.Close()
	all, err := whole.InlinedFunctions()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(25, 1))
	names := []string{"kmap_local_page", "get_current", "kfree", "no_such_function"}
	for range 100 {
		names = append(names, all[r.IntN(len(all))])
	}
	open := func() *Set { return openSet(t, path, nil, Options{NoCache: true, Lazy: true}) }
	compareLazy(t, whole, open, names, true)
}
