//go:build linux

package probe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/cachedir"
)

// TestCachedKernelFuncs checks that the running kernel's function list
// read back from the cache is the one its BTF gives: every name, in
// order, found by lookup at its index, and the string section's size.
func TestCachedKernelFuncs(t *testing.T) {
	const vmlinux = "/sys/kernel/btf/vmlinux"
	want, wantStrLen, err := loadBTFFuncs(vmlinux, KernelModule, 0, nil)
	if err != nil {
		t.Skipf("the running kernel's BTF cannot be read: %v", err)
	}
	if _, err := os.ReadFile("/sys/kernel/notes"); err != nil {
		t.Skipf("the running kernel's build-id cannot be read: %v", err)
	}
	cache := t.TempDir()
	dir, err := cachedir.Open(cache)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	names := func(l *funcList) []string {
		ns := make([]string, l.len())
		for i := range ns {
			ns[i] = l.name(i)
			if j, ok := l.lookup(ns[i]); !ok || j != i {
				t.Fatalf("lookup(%q) = %d, %v; want %d", ns[i], j, ok, i)
			}
		}
		return ns
	}
	wantNames := names(want)
	fromCache := func(l *funcList) bool { return uint64(len(l.strs)) < uint64(wantStrLen) }
	for _, run := range []string{"first", "cached"} {
		l, strLen, err := cachedKernelFuncs(newKernelCache(dir, "/"), vmlinux, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strLen != wantStrLen {
			t.Errorf("%s run: string section of %d bytes, want %d", run, strLen, wantStrLen)
		}
		if diff := cmp.Diff(wantNames, names(l)); diff != "" {
			t.Errorf("%s run: the functions differ (-BTF +%s):\n%s", run, run, diff)
		}
		if got := fromCache(l); got != (run == "cached") {
			t.Errorf("%s run: from the cache %v", run, got)
		}
		if _, ok := l.lookup("no_such_function_anywhere"); ok {
			t.Errorf("%s run: lookup of a missing function succeeds", run)
		}
	}
	// A damaged file, or one of BTF of another size, is not used.
	files, _ := filepath.Glob(filepath.Join(cache, "*"+funcsSuffix))
	if len(files) != 1 {
		t.Fatalf("cache holds %d function lists, want 1", len(files))
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(vmlinux)
	if _, _, ok := decodeFuncs(raw, uint64(st.Size())+1); ok {
		t.Error("a list of BTF of another size was used")
	}
	raw[len(raw)/3] ^= 1
	if _, _, ok := decodeFuncs(raw, uint64(st.Size())); ok {
		t.Error("a damaged list was used")
	}
}
