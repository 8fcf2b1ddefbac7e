//go:build unix

package cachedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nobody is the other user of the tests that need two.
const nobody = 65534

// TestOpen: which cache directories are used and which refused, and
// where a trusted link leads.
func TestOpen(t *testing.T) {
	root := os.Geteuid() == 0
	tests := []struct {
		name string
		// setup prepares base and returns the cache directory to open.
		setup func(t *testing.T, base string) string
		// refused is the directory Open refuses, relative to base;
		// "" when Open succeeds.
		refused string
		// real is where the directory is found, relative to base,
		// when a link leads there.
		real     string
		needRoot bool
	}{
		{name: "created", setup: func(t *testing.T, base string) string {
			return filepath.Join(base, "a", "b", "kdtrace")
		}},
		{name: "existing", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "kdtrace"), 0o755)
			return filepath.Join(base, "kdtrace")
		}},
		{name: "group-writable parent", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "home"), 0o775)
			return filepath.Join(base, "home", ".cache", "kdtrace")
		}, refused: "home"},
		{name: "sticky parent", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "tmp"), 0o777|os.ModeSticky)
			return filepath.Join(base, "tmp", "kdtrace")
		}},
		{name: "sticky cache", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "kdtrace"), 0o777|os.ModeSticky)
			return filepath.Join(base, "kdtrace")
		}, refused: "kdtrace"},
		{name: "own link", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "real"), 0o700)
			symlink(t, filepath.Join(base, "real"), filepath.Join(base, "home", ".cache"))
			return filepath.Join(base, "home", ".cache", "kdtrace")
		}, real: "real/kdtrace"},
		{name: "own relative link", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "real"), 0o700)
			symlink(t, "../real", filepath.Join(base, "home", ".cache"))
			return filepath.Join(base, "home", ".cache", "kdtrace")
		}, real: "real/kdtrace"},
		{name: "link to an unsafe directory", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "shared"), 0o777)
			symlink(t, filepath.Join(base, "shared"), filepath.Join(base, "home", ".cache"))
			return filepath.Join(base, "home", ".cache", "kdtrace")
		}, refused: "shared"},
		{name: "foreign parent", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "home"), 0o755)
			chown(t, filepath.Join(base, "home"))
			return filepath.Join(base, "home", ".cache", "kdtrace")
		}, refused: "home", needRoot: true},
		{name: "foreign cache", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "kdtrace"), 0o700)
			chown(t, filepath.Join(base, "kdtrace"))
			return filepath.Join(base, "kdtrace")
		}, refused: "kdtrace", needRoot: true},
		{name: "foreign link in a sticky directory", setup: func(t *testing.T, base string) string {
			mkdir(t, filepath.Join(base, "real"), 0o700)
			mkdir(t, filepath.Join(base, "tmp"), 0o777|os.ModeSticky)
			symlink(t, filepath.Join(base, "real"), filepath.Join(base, "tmp", ".cache"))
			chown(t, filepath.Join(base, "tmp", ".cache"))
			return filepath.Join(base, "tmp", ".cache", "kdtrace")
		}, refused: "tmp/.cache", needRoot: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needRoot && !root {
				t.Skip("needs root, to give a file to another user")
			}
			base := t.TempDir()
			path := tt.setup(t, base)
			d, err := Open(path)
			if tt.refused != "" {
				var unsafe *UnsafeError
				if !errors.As(err, &unsafe) || unsafe.Path != filepath.Join(base, tt.refused) {
					t.Fatalf("Open: %v, want %s refused", err, filepath.Join(base, tt.refused))
				}
				if _, err := os.Lstat(path); err == nil && unsafe.Path != path {
					t.Errorf("%s was created", path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.Path != path {
				t.Errorf("Path %s, want %s", d.Path, path)
			}
			// What is written is found where the links lead.
			if err := d.WriteFile("f", []byte("x")); err != nil {
				t.Fatal(err)
			}
			real := path
			if tt.real != "" {
				real = filepath.Join(base, tt.real)
			}
			if b, err := os.ReadFile(filepath.Join(real, "f")); err != nil || string(b) != "x" {
				t.Errorf("%s/f: %q, %v", real, b, err)
			}
		})
	}
}

// TestOpenCreatesPrivate: what Open creates is mode 0700, whatever the
// umask allows.
func TestOpenCreatesPrivate(t *testing.T) {
	base := t.TempDir()
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	d, err := Open(filepath.Join(base, "a", "kdtrace"))
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, p := range []string{"a", "a/kdtrace"} {
		st, err := os.Stat(filepath.Join(base, p))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want 0700", p, st.Mode())
		}
	}
}

func TestOpenLoop(t *testing.T) {
	base := t.TempDir()
	symlink(t, filepath.Join(base, "loop"), filepath.Join(base, "loop"))
	if _, err := Open(filepath.Join(base, "loop", "kdtrace")); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("Open through a loop: %v, want ELOOP", err)
	}
	os.WriteFile(filepath.Join(base, "file"), nil, 0o600)
	if _, err := Open(filepath.Join(base, "file", "kdtrace")); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Open through a file: %v, want ENOTDIR", err)
	}
}

// TestNoFollow: links in the cache directory are replaced or refused,
// never written, read, touched or removed through: the file they point
// to is left as it was.
func TestNoFollow(t *testing.T) {
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	if err := os.WriteFile(victim, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
	os.Chtimes(victim, old, old)
	d, err := Open(filepath.Join(base, "kdtrace"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, name := range []string{"read", "write", "touch", "remove"} {
		symlink(t, victim, filepath.Join(d.Path, name))
	}
	if f, err := d.Open("read"); err == nil {
		f.Close()
		t.Error("Open followed a link")
	}
	if err := d.WriteFile("write", []byte("new")); err != nil {
		t.Error(err)
	}
	if st, err := d.Lstat("write"); err != nil || !st.Regular {
		t.Errorf("WriteFile did not replace the link: %+v, %v", st, err)
	}
	d.Touch("touch", time.Now())
	if err := d.Remove("remove"); err != nil {
		t.Error(err)
	}
	if st, err := d.Lstat("read"); err != nil || st.Regular {
		t.Errorf("Lstat of a link: %+v, %v", st, err)
	}
	b, err := os.ReadFile(victim)
	st, _ := os.Stat(victim)
	if err != nil || string(b) != "secret\n" || !st.ModTime().Equal(old) || st.Mode().Perm() != 0o600 {
		t.Errorf("victim changed: %q, %v, mtime %v (want %v), mode %v", b, err, st.ModTime(), old, st.Mode())
	}
	names, err := d.Names()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, ".tmp-") {
			t.Errorf("temporary file %s left", n)
		}
	}
}

// TestOpenFile: only the regular files of the running user are read; a
// FIFO does not hold the open.
func TestOpenFile(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "kdtrace"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.WriteFile("f", []byte("data")); err != nil {
		t.Fatal(err)
	}
	f, err := d.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	n, _ := f.Read(b)
	f.Close()
	if string(b[:n]) != "data" {
		t.Errorf("read %q, want %q", b[:n], "data")
	}
	if st, _ := os.Stat(filepath.Join(d.Path, "f")); st.Mode().Perm() != 0o600 {
		t.Errorf("written mode %v, want 0600", st.Mode())
	}
	if err := syscall.Mkfifo(filepath.Join(d.Path, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	var unsafe *UnsafeError
	if _, err := d.Open("fifo"); !errors.As(err, &unsafe) {
		t.Errorf("Open of a FIFO: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give a file to another user")
	}
	chown(t, filepath.Join(d.Path, "f"))
	if _, err := d.Open("f"); !errors.As(err, &unsafe) {
		t.Errorf("Open of another user's file: %v", err)
	}
}

func mkdir(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// chown gives p, not what it links to, to nobody.
func chown(t *testing.T, p string) {
	t.Helper()
	if err := os.Lchown(p, nobody, nobody); err != nil {
		t.Fatal(err)
	}
}
