//go:build linux

package probe

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/cachedir"
)

// gnuBuildID is the ELF note of a GNU build-id, as /sys/kernel/notes
// holds it.
func gnuBuildID(id []byte) []byte {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, 4)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(id)))
	b = binary.LittleEndian.AppendUint32(b, 3) // NT_GNU_BUILD_ID
	b = append(b, "GNU\x00"...)
	b = append(b, id...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// TestCachedHandlers checks that the kernel's syscall handlers are read
// from /proc/kallsyms once per kernel build-id, then from the cache.
func TestCachedHandlers(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kallsyms := filepath.Join(root, "proc/kallsyms")
	write("sys/kernel/notes", string(gnuBuildID([]byte{1, 2, 3, 4})))
	write("proc/kallsyms", "ffffffff81001000 T __x64_sys_read\nffffffff81002000 t __x64_sys_getpid\nffffffff81003000 W __x64_sys_init_module\nffffffff81004000 T vfs_read\n")
	cache := t.TempDir()
	dir, err := cachedir.Open(cache)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()

	handlers := func() []string {
		t.Helper()
		names, err := cachedHandlers(newKernelCache(dir, root), kallsyms, "__x64_sys_")
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	first := []string{"__x64_sys_read", "__x64_sys_getpid"}
	if diff := cmp.Diff(first, handlers()); diff != "" {
		t.Fatalf("first read (-want +got):\n%s", diff)
	}
	// The same kernel, booted again: the cache answers, not kallsyms.
	write("proc/kallsyms", "ffffffff91001000 T __x64_sys_read\n")
	if diff := cmp.Diff(first, handlers()); diff != "" {
		t.Errorf("same build-id, kallsyms changed: not the cached handlers (-want +got):\n%s", diff)
	}
	// Another kernel reads kallsyms again.
	write("sys/kernel/notes", string(gnuBuildID([]byte{5, 6, 7, 8})))
	if diff := cmp.Diff([]string{"__x64_sys_read"}, handlers()); diff != "" {
		t.Errorf("another build-id (-want +got):\n%s", diff)
	}
	// A damaged file is read again from kallsyms.
	path := filepath.Join(cache, "05060708"+handlersSuffix)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0x20
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	write("proc/kallsyms", "ffffffff91001000 T __x64_sys_write\n")
	if diff := cmp.Diff([]string{"__x64_sys_write"}, handlers()); diff != "" {
		t.Errorf("damaged cache file (-want +got):\n%s", diff)
	}
	// Without a build-id there is no cache.
	os.Remove(filepath.Join(root, "sys/kernel/notes"))
	write("proc/kallsyms", "ffffffff91001000 T __x64_sys_close\n")
	if diff := cmp.Diff([]string{"__x64_sys_close"}, handlers()); diff != "" {
		t.Errorf("no build-id (-want +got):\n%s", diff)
	}
}

// TestCachedHandlersRunning checks the running kernel's handlers, from
// its /proc/kallsyms, read back from the cache as they were read.
func TestCachedHandlersRunning(t *testing.T) {
	want, err := kallsymsHandlers("/proc/kallsyms", syscallPrefix(runtime.GOARCH))
	if err != nil || len(want) == 0 {
		t.Skipf("the running kernel's syscall handlers cannot be read: %d, %v", len(want), err)
	}
	dir, err := cachedir.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	kc := newKernelCache(dir, "/")
	if kc == nil {
		t.Skip("the running kernel has no build-id to cache its handlers under")
	}
	for _, run := range []string{"first", "cached"} {
		got, err := cachedHandlers(kc, "/proc/kallsyms", syscallPrefix(runtime.GOARCH))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s run (-kallsyms +got):\n%s", run, diff)
		}
	}
	if _, ok := loadHandlers(dir, kc.id+handlersSuffix, syscallPrefix(runtime.GOARCH)); !ok {
		t.Error("the handlers were not kept in the cache")
	}
}
