//go:build unix

package dwarftypes

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/cachefile"
	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"golang.org/x/sys/unix"
)

// demo is the bundled example binary, with DWARF and a build-id.
var demo = filepath.Join("..", "..", "..", "examples", "kinst", "demo")

const demoBuildID = "69d9a71761894b585adbf7ba2654e65b2dd766f3"

// victim is a file of the running user's outside the cache, which no
// run may change.
type victim struct {
	path  string
	mtime time.Time
}

func newVictim(t *testing.T, path string) victim {
	t.Helper()
	if err := os.WriteFile(path, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Old, so that a trim that took the link's target for its mark
	// would find it due.
	old := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	return victim{path, old}
}

func (v victim) check(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(v.path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(v.path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "secret\n" || !st.ModTime().Equal(v.mtime) || st.Mode().Perm() != 0o600 {
		t.Errorf("%s changed: %q, mode %v, modified %v", v.path, b, st.Mode(), st.ModTime())
	}
}

// openDemo opens the demo image and its types with opts, and looks up
// a type, so that every cache file is read and written.
func openDemo(t *testing.T, opts debuginfo.Options) *debuginfo.Image {
	t.Helper()
	img, err := debuginfo.OpenImage(demo, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { img.Close() })
	ty, err := Open(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ty.Close() })
	mustType(t, ty, "struct req")
	return img
}

// TestCacheNoFollow: links planted in the cache under each name kdtrace
// reads or writes lead nowhere: the files they point to are left as
// they were (the trim's mark once truncated its target), and the cache
// works, each link replaced by a file.
func TestCacheNoFollow(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "cache")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	names := []string{cachefile.TrimFile, demoBuildID + ".idx", demoBuildID + ".types", demoBuildID + ".units"}
	var victims []victim
	for _, name := range names {
		v := newVictim(t, filepath.Join(base, "victim-"+name))
		victims = append(victims, v)
		link := filepath.Join(dir, name)
		if err := os.Symlink(v.path, link); err != nil {
			t.Fatal(err)
		}
		// The link old too: the trim, which looks at the mark and not
		// its target, is due.
		ts := unix.NsecToTimespec(v.mtime.UnixNano())
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, link, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatal(err)
		}
	}
	var warnings []string
	opts := debuginfo.Options{CacheDir: dir, Warn: func(w debuginfo.Warning) { warnings = append(warnings, w.Error()) }}
	if img := openDemo(t, opts); img.Cached {
		t.Error("the first open read a cache")
	}
	if img := openDemo(t, opts); !img.Cached {
		t.Error("the second open did not read the cache")
	}
	for _, v := range victims {
		v.check(t)
	}
	for _, name := range names[:3] { // .units: only for Scope
		if st, err := os.Lstat(filepath.Join(dir, name)); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s is not a regular file (%v)", name, err)
		}
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %q", warnings)
	}
}

// TestCacheRefused: a cache under a directory another user owns (a
// HOME kept by sudo -E) is not used, with one warning however many
// images are opened, and nothing is written there.
func TestCacheRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give a directory to another user")
	}
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".cache", "kdtrace")
	var warnings []string
	opts := debuginfo.Options{CacheDir: dir, Warn: func(w debuginfo.Warning) { warnings = append(warnings, w.Error()) }}
	for range 2 {
		if img := openDemo(t, opts); img.Cached {
			t.Error("a refused cache was read")
		}
	}
	want := "not using the cache " + dir + ": " + home + ": owned by another user (uid 65534)"
	if len(warnings) != 1 || warnings[0] != want {
		t.Errorf("warnings %q, want one: %q", warnings, want)
	}
	if ents, err := os.ReadDir(home); err != nil || len(ents) != 0 {
		t.Errorf("%s holds %v (%v), want nothing", home, ents, err)
	}
}
