package guest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCacheDir: the guest cache is made private, and refused under a
// directory others may write, where what the tests boot could be
// swapped.
func TestCacheDir(t *testing.T) {
	base := t.TempDir()
	private := filepath.Join(base, "private")
	shared := filepath.Join(base, "shared")
	for _, d := range []string{private, shared} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}

	t.Setenv("XDG_CACHE_HOME", private)
	dir, err := CacheDir()
	if want := filepath.Join(private, "kdtrace", "guest"); err != nil || dir != want {
		t.Fatalf("CacheDir() = %q, %v; want %q", dir, err, want)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v; want a directory mode 0700", dir, st, err)
	}

	t.Setenv("XDG_CACHE_HOME", shared)
	if dir, err := CacheDir(); err == nil {
		t.Errorf("CacheDir() under a directory all may write = %q, want an error", dir)
	}
	if _, err := os.Stat(filepath.Join(shared, "kdtrace")); err == nil {
		t.Error("created under a directory all may write")
	}
}
