package dwarftypes

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/kdtrace/kdtrace/internal/cachefile"
	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
)

// openCachedTypes opens the types of path with the cache in dir ("" for
// none).
func openCachedTypes(t *testing.T, path, dir string) *Types {
	t.Helper()
	ty, err := openTypes("m", path, "", "", debuginfo.Options{CacheDir: dir, NoCache: dir == ""})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ty.Close() })
	return ty
}

// cachedTables returns the index and the unit table of ty, building or
// loading them.
func cachedTables(t *testing.T, ty *Types) (*nameIndex, *unitTable) {
	t.Helper()
	ty.mu.Lock()
	defer ty.mu.Unlock()
	if err := ty.index(); err != nil {
		t.Fatal(err)
	}
	ty.unitsAt(0)
	return ty.x, ty.units
}

var cmpTables = cmp.Options{cmp.AllowUnexported(nameIndex{}, cachefile.Table{}, typeIndexStats{}, unitTable{}, unitSpan{}), cmpopts.EquateEmpty()}

// TestTypesCacheRoundTrip: what is read back from a cache file is what
// was built, for each compiler and DWARF version of the type fixtures
// (type units give the signatures) and for an object file.
func TestTypesCacheRoundTrip(t *testing.T) {
	for _, c := range typeConfigs {
		t.Run(c.name, func(t *testing.T) {
			fx := buildTypeFixture(t, c.cc, c.flags)
			for _, path := range []string{fx.prog, fx.obj} {
				ty := openCachedTypes(t, path, "")
				_, u := cachedTables(t, ty)
				x, err := buildTypeIndex(ty.r.secs, ty.r.units, 0)
				if err != nil {
					t.Fatal(err)
				}
				// An object file keeps its type units in sections
				// of their own, which Types does not read.
				if path == fx.prog && (len(x.names[classStruct]) == 0 || len(x.enums) == 0) {
					t.Fatalf("%s: index without structs or enumerators", path)
				}
				e := cachefile.Encoder{}
				encodeTypeIndex(&e, x)
				got, err := decodeTypeIndex(&cachefile.Decoder{B: e.B})
				if err != nil {
					t.Fatal(err)
				}
				for kind, m := range x.names {
					if got.names[kind].Len() != len(m) {
						t.Errorf("%s: %d names of kind %d read back, %d built", path, got.names[kind].Len(), kind, len(m))
					}
					for k, want := range m {
						if r, ok := got.lookup(kind, k); !ok || r != want {
							t.Errorf("%s: name %q of kind %d read back as %v, %v, built %v", path, k, kind, r, ok, want)
						}
					}
					if r, ok := got.lookup(kind, "no such name"); ok {
						t.Errorf("%s: a name never built is read back as %v", path, r)
					}
				}
				for k, want := range x.enums {
					if off, ok := got.enum(k); !ok || off != want {
						t.Errorf("%s: enumerator %q read back as %#x, %v, built %#x", path, k, off, ok, want)
					}
				}
				for k, want := range x.sigs {
					if off, ok := got.sig(k); !ok || off != want {
						t.Errorf("%s: signature %#x read back as %#x, %v, built %#x", path, k, off, ok, want)
					}
				}
				if got.sigs.Len() != len(x.sigs) || got.enums.Len() != len(x.enums) || got.stats != x.stats {
					t.Errorf("%s: %d signatures, %d enumerators, %+v read back; %d, %d, %+v built", path,
						got.sigs.Len(), got.enums.Len(), got.stats, len(x.sigs), len(x.enums), x.stats)
				}
				for n := range e.B {
					if _, err := decodeTypeIndex(&cachefile.Decoder{B: e.B[:n]}); err == nil {
						t.Errorf("index truncated to %d bytes decoded", n)
					}
				}
				e = cachefile.Encoder{}
				units := openCachedTypes(t, path, "").r.units
				encodeUnits(&e, units, u)
				gotUnits, gotU, err := decodeUnits(&cachefile.Decoder{B: e.B}, 1<<30)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(units, gotUnits, cmp.AllowUnexported(dwarfread.Unit{})); diff != "" {
					t.Errorf("%s: unit headers read back differ (-built +read):\n%s", path, diff)
				}
				if diff := cmp.Diff(u, gotU, cmpTables); diff != "" {
					t.Errorf("%s: unit table read back differs (-built +read):\n%s", path, diff)
				}
				// Every truncation is an error, not a panic.
				for n := range e.B {
					if _, _, err := decodeUnits(&cachefile.Decoder{B: e.B[:n]}, 1<<30); err == nil {
						t.Errorf("units truncated to %d bytes decoded", n)
					}
				}
				// Units past the end of .debug_info are refused.
				if _, _, err := decodeUnits(&cachefile.Decoder{B: e.B}, units[len(units)-1].End-1); err == nil {
					t.Error("units past the end of .debug_info decoded")
				}
			}
		})
	}
}

// TestTypesCacheUsed: a second Types of the same file reads the tables
// from the cache files the first wrote, and gives the same answers as
// a Types without the cache.
func TestTypesCacheUsed(t *testing.T) {
	fx := buildTypeFixture(t, "gcc", []string{"-gdwarf-5", "-fdebug-types-section"})
	dir := t.TempDir()
	ref := openCachedTypes(t, fx.prog, "")
	refX, refU := cachedTables(t, ref)
	cold := openCachedTypes(t, fx.prog, dir)
	cachedTables(t, cold)
	types, _ := filepath.Glob(filepath.Join(dir, "*.types"))
	units, _ := filepath.Glob(filepath.Join(dir, "*.units"))
	if files := append(types, units...); len(files) != 2 {
		t.Fatalf("cache files %q, want a .types and a .units", files)
	}
	// A current file is believed: a name added to it is found.
	typesFile := cacheFile(t, dir, ".types")
	d, ok := cold.loadTypesCache(".types", typesCacheMagic)
	if !ok {
		t.Fatal("the cache file just written is not current")
	}
	if _, err := decodeTypeIndex(d); err != nil {
		t.Fatal(err)
	}
	x, err := buildTypeIndex(cold.r.secs, cold.r.units, 0)
	if err != nil {
		t.Fatal(err)
	}
	x.names[classOther]["only_in_the_cache"] = x.names[classOther]["chain_t"]
	var e cachefile.Encoder
	encodeTypeIndex(&e, x)
	cold.storeTypesCache(".types", typesCacheMagic, e.B)
	warm := openCachedTypes(t, fx.prog, dir)
	if typ, err := warm.LookupType("only_in_the_cache"); err != nil || typ == nil {
		t.Fatalf("a name of the cache file is not found: %v, %v", typ, err)
	}
	os.Remove(typesFile)

	warm = openCachedTypes(t, fx.prog, dir)
	cx, u := cachedTables(t, warm)
	if diff := cmp.Diff(refX, cx, cmpTables); diff != "" {
		t.Errorf("index from the cache differs (-built +cached):\n%s", diff)
	}
	if diff := cmp.Diff(refU, u, cmpTables); diff != "" {
		t.Errorf("unit table from the cache differs (-built +cached):\n%s", diff)
	}
	if diff := cmp.Diff(ref.r.units, warm.r.units, cmp.AllowUnexported(dwarfread.Unit{})); diff != "" {
		t.Errorf("unit headers from the cache differ (-parsed +cached):\n%s", diff)
	}
	for _, name := range []string{"struct list", "struct anon", "enum color", "chain_t", "unsigned long"} {
		want, got := mustType(t, ref, name), mustType(t, warm, name)
		if want.String() != got.String() || want.Size() != got.Size() {
			t.Errorf("%s: %v (%d bytes) from the cache, %v (%d bytes) without", name, got, got.Size(), want, want.Size())
		}
	}
	for _, name := range []string{"f", "main"} {
		want, _, err1 := ref.LookupFunc(name)
		got, _, err2 := warm.LookupFunc(name)
		if fmt.Sprint(want, err1) != fmt.Sprint(got, err2) {
			t.Errorf("LookupFunc(%s): %v, %v from the cache, %v, %v without", name, got, err2, want, err1)
		}
	}
}

// cacheFile returns the one cache file in dir with suffix ext.
func cacheFile(t *testing.T, dir, ext string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*"+ext))
	if len(m) != 1 {
		t.Fatalf("cache files *%s: %q", ext, m)
	}
	return m[0]
}

// TestTypesCacheRebuilt: a cache file that is damaged, of another
// version or of other inputs is ignored, and written again.
func TestTypesCacheRebuilt(t *testing.T) {
	fx := buildTypeFixture(t, "gcc", nil)
	dir := t.TempDir()
	refX, refU := cachedTables(t, openCachedTypes(t, fx.prog, dir))
	good := map[string][]byte{}
	for _, ext := range []string{".types", ".units"} {
		b, err := os.ReadFile(cacheFile(t, dir, ext))
		if err != nil {
			t.Fatal(err)
		}
		good[ext] = b
	}
	for _, tt := range []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"empty", func(b []byte) []byte { return nil }},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"flipped byte", func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }},
		{"other magic", func(b []byte) []byte { b[0] = 'X'; return b }},
		{"other version", func(b []byte) []byte {
			b[8]++ // after the magic; the checksum is made right
			return rechecksum(b)
		}},
		{"short body", func(b []byte) []byte {
			// A valid checksum over a body cut inside the tables.
			return rechecksum(append(b[:len(b)-12], 0, 0, 0, 0))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for ext, b := range good {
				p := cacheFile(t, dir, ext)
				if err := os.WriteFile(p, tt.damage(append([]byte(nil), b...)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			x, u := cachedTables(t, openCachedTypes(t, fx.prog, dir))
			if diff := cmp.Diff(refX, x, cmpTables); diff != "" {
				t.Errorf("index differs (-first +after damage):\n%s", diff)
			}
			if diff := cmp.Diff(refU, u, cmpTables); diff != "" {
				t.Errorf("unit table differs (-first +after damage):\n%s", diff)
			}
			for ext, b := range good {
				if got, _ := os.ReadFile(cacheFile(t, dir, ext)); string(got) != string(b) {
					t.Errorf("%s not written again", ext)
				}
			}
		})
	}
	// A debug file changed since: its new mtime makes the cache stale.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(fx.prog, later, later); err != nil {
		t.Fatal(err)
	}
	ty := openCachedTypes(t, fx.prog, dir)
	if _, ok := ty.loadTypesCache(".types", typesCacheMagic); ok {
		t.Error("the cache of the file before its change is current")
	}
	cachedTables(t, ty)
	if _, ok := ty.loadTypesCache(".types", typesCacheMagic); !ok {
		t.Error("the cache was not written again for the changed file")
	}
}

// rechecksum replaces b's trailing checksum with that of the rest.
func rechecksum(b []byte) []byte {
	e := cachefile.Encoder{B: b[:len(b)-4]}
	e.Seal()
	return e.B
}

// TestTypesCacheScope: Scope answers the same with the unit table from
// the cache as without, at every mark of the locals fixture.
func TestTypesCacheScope(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the fixture's asm labels are amd64's")
	}
	src, err := filepath.Abs("testdata/locals.c")
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(t.TempDir(), "locals")
	args := []string{"-O2", "-g", "-fno-pie", "-no-pie", "-fcf-protection=none", "-o", prog, src}
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Skipf("gcc %v: %v\n%s", args, err, out)
	}
	marks := markAddrs(t, prog)
	dir := t.TempDir()
	cachedTables(t, openCachedTypes(t, prog, dir)) // writes the cache
	ref, warm := openCachedTypes(t, prog, ""), openCachedTypes(t, prog, dir)
	for _, m := range localsMarks {
		want, err1 := ref.Scope(marks[m.mark])
		got, err2 := warm.Scope(marks[m.mark])
		if w, g := fmt.Sprintf("%+v %v", want, err1), fmt.Sprintf("%+v %v", got, err2); w != g {
			t.Errorf("%s: scope from the cache\n%s\nwithout\n%s", m.mark, g, w)
		}
	}
}

// TestTypesCacheVmlinux builds a kernel's tables, then reads them from
// the cache, and logs the time each took.
func TestTypesCacheVmlinux(t *testing.T) {
	path := vmlinuxPath()
	if path == "" {
		t.Skip("no vmlinux with DWARF: set KDTRACE_VMLINUX")
	}
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	var xs [2]*nameIndex
	var us [2]*unitTable
	for i, run := range []string{"cold", "warm"} {
		start := time.Now()
		xs[i], us[i] = cachedTables(t, openCachedTypes(t, path, dir))
		t.Logf("%s: index of %d structs and unit table of %d spans in %v", run, xs[i].names[classStruct].Len(), len(us[i].spans), time.Since(start))
	}
	if diff := cmp.Diff(xs[0], xs[1], cmpTables); diff != "" {
		t.Errorf("index from the cache differs (-built +cached):\n%s", diff)
	}
	if diff := cmp.Diff(us[0], us[1], cmpTables); diff != "" {
		t.Errorf("unit table from the cache differs (-built +cached):\n%s", diff)
	}
}

// TestTypesCacheProcessRoot reads a program's types as locals-> of
// kdtrace -c and -p does, through the root of a process running it
// (/proc/PID/root): the tables cached for one process are current for
// the next.
func TestTypesCacheProcessRoot(t *testing.T) {
	abs, err := filepath.Abs(demo)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first := openCachedTypes(t, fmt.Sprintf("/proc/%d/root%s", os.Getpid(), abs), dir)
	cachedTables(t, first)
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	next := openCachedTypes(t, fmt.Sprintf("/proc/%d/root%s", cmd.Process.Pid, abs), dir)
	for _, ext := range []string{".types", ".units"} {
		if _, ok := next.loadTypesCache(ext, map[string]string{".types": typesCacheMagic, ".units": unitsCacheMagic}[ext]); !ok {
			t.Errorf("%s: the cache written for process %d is not current for process %d", ext, os.Getpid(), cmd.Process.Pid)
		}
	}
}
