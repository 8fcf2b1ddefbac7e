package btf

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/cachedir"
)

// cacheDir opens a fresh cache directory.
func cacheDir(t testing.TB) (*cachedir.Dir, string) {
	t.Helper()
	path := t.TempDir()
	dir, err := cachedir.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	return dir, path
}

// describe looks up every name and describes what it finds: the type,
// or the error.
func describe(m *Module, names []string) []string {
	var out []string
	for _, name := range names {
		typ, err := m.LookupType(name)
		switch {
		case err != nil:
			out = append(out, name+": "+err.Error())
		case typ == nil:
			out = append(out, name+": none")
		default:
			d := name + ": " + typ.String()
			if _, ok := types.Resolve(typ).(*types.Struct); ok {
				d += " {" + strings.Join(layout(typ), "; ") + "}"
			}
			out = append(out, d)
		}
	}
	return out
}

// cached reports whether m's index came from the cache: a walk records
// the named records, which a cached index does not need.
func cached(m *Module) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.indexed && m.err == nil && m.named == nil
}

func TestIndexCache(t *testing.T) {
	names := []string{"int", "unsigned int", "pid_t", "struct list_head", "struct task", "enum color",
		"union ou", "struct opaque", "cv_int", "task_ptr", "struct nothing", "long unsigned int"}
	data := kinds().bytes(binary.LittleEndian)
	file := writeFile(t, "vmlinux", data)
	dir, path := cacheDir(t)
	cacheFile := filepath.Join(path, "k1"+cacheSuffix)

	// Without a cache: the reference.
	plain, err := Open(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := describe(plain, names)

	openCached := func(file string) *Module {
		t.Helper()
		m, err := Open(file, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.UseCache(dir, "k1")
		return m
	}

	first := openCached(file)
	if diff := cmp.Diff(want, describe(first, names)); diff != "" {
		t.Errorf("first run (walked) differs from no cache (-want +got):\n%s", diff)
	}
	if cached(first) {
		t.Fatal("first run read an index from an empty cache")
	}
	if _, err := os.Stat(cacheFile); err != nil {
		t.Fatalf("first run left no index in the cache: %v", err)
	}

	second := openCached(file)
	if diff := cmp.Diff(want, describe(second, names)); diff != "" {
		t.Errorf("second run (cached) differs from no cache (-want +got):\n%s", diff)
	}
	if !cached(second) {
		t.Fatal("second run walked the types again")
	}

	// Other BTF under the same key (a kernel rebuilt without a new
	// build-id) is not taken for the cached one, and replaces it.
	b := kinds()
	b.int("extra", 4, 32)
	other := writeFile(t, "other", b.bytes(binary.LittleEndian))
	m := openCached(other)
	if got := describe(m, []string{"extra", "struct task"}); got[0] == "extra: none" {
		t.Errorf("other BTF under the same key: %q", got)
	}
	if cached(m) {
		t.Error("other BTF under the same key used the cached index")
	}
	if m := openCached(other); describe(m, names) == nil || !cached(m) {
		t.Error("the other BTF's index did not replace the first's")
	}

	// A damaged file is rebuilt.
	openCached(file).index() // back to file's index
	raw, err := os.ReadFile(cacheFile)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0xff
	if err := os.WriteFile(cacheFile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if m := openCached(file); cmp.Diff(want, describe(m, names)) != "" || cached(m) {
		t.Errorf("a damaged cache file was used")
	}
	// A foreign file whose checksum holds, with an offset past the type
	// section and a full type table, is read without a fault: the
	// types walked to from that offset are errors, and the others are
	// found.
	bad, err := Open(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad.index() // walked: its offsets are its own to change
	bad.UseCache(dir, "k1")
	bad.mu.Lock()
	tt := bad.table(typeTable) // built from the right offsets
	for i := range tt.slots {
		if tt.slots[i] == 0 {
			tt.slots[i] = 1
		}
	}
	badID := uint32(len(bad.offs)-1) * stride
	bad.offs[len(bad.offs)-1] = uint32(len(bad.types)) // past the end
	bad.storeIndex()
	bad.mu.Unlock()
	m = openCached(file)
	got := describe(m, names)
	if !cached(m) {
		t.Fatal("the foreign cache file was not read")
	}
	for i := range got {
		if got[i] != want[i] && !strings.Contains(got[i], "past the end of the type section") &&
			!strings.HasSuffix(got[i], ": no type 0") { // the full table's
			t.Errorf("from the foreign file: %s, want %s", got[i], want[i])
		}
	}
	if _, err := m.record(m.firstID + badID); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Errorf("type %d past the end: %v", m.firstID+badID, err)
	}
}

// TestKernelIndexCache compares every named type of the running kernel
// looked up through a cached index with the same through a walk.
func TestKernelIndexCache(t *testing.T) {
	walked := kernel(t)
	if err := walked.index(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, r := range walked.named {
		if i%40 != 0 {
			continue
		}
		rec, _ := walked.record(r.id)
		name, _ := walked.nameAt(rec.nameOff)
		names = append(names, tagged(rec, name))
	}
	want := describe(walked, names)

	dir, _ := cacheDir(t)
	for _, run := range []string{"first", "cached"} {
		m := kernel(t)
		m.UseCache(dir, "running")
		if diff := cmp.Diff(want, describe(m, names)); diff != "" {
			t.Errorf("%s run: %d names differ (-walked +%s):\n%s", run, len(names), run, diff)
		}
		if got := cached(m); got != (run == "cached") {
			t.Errorf("%s run: index from the cache %v", run, got)
		}
	}
}
