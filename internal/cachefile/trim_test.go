package cachefile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/cachedir"
)

// openCacheDir opens dir as a cache directory.
func openCacheDir(t *testing.T, dir string) *cachedir.Dir {
	t.Helper()
	d, err := cachedir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestTrimCache(t *testing.T) {
	now := time.Now()
	files := []struct {
		name string
		age  time.Duration
		kept bool
	}{
		{"a.idx", time.Hour, true},
		{"b.idx", 31 * 24 * time.Hour, false},
		{"b.types", 31 * 24 * time.Hour, false},
		{"b.units", 31 * 24 * time.Hour, false},
		{"c.types", 29 * 24 * time.Hour, true},
		{".tmp-123.idx", 2 * time.Hour, false}, // a write that did not finish
		{".tmp-456.idx", time.Minute, true},    // one under way
		{"vmlinuz", 365 * 24 * time.Hour, true},
	}
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
			t.Fatal(err)
		}
	}
	old := filepath.Join(dir, "old")
	if err := os.Mkdir(old, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(old, now.Add(-400*24*time.Hour), now.Add(-400*24*time.Hour))

	d := openCacheDir(t, dir)
	trimCache(d, now)
	for _, f := range files {
		_, err := os.Stat(filepath.Join(dir, f.name))
		if kept := err == nil; kept != f.kept {
			t.Errorf("%s (unused for %v): kept %v, want %v", f.name, f.age, kept, f.kept)
		}
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("a directory was removed: %v", err)
	}

	// A trim a day at most: a file gone stale since is left until then.
	stale := filepath.Join(dir, "d.idx")
	os.WriteFile(stale, []byte("x"), 0o644)
	os.Chtimes(stale, now.Add(-40*24*time.Hour), now.Add(-40*24*time.Hour))
	trimCache(d, now.Add(time.Hour))
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("trimmed again within a day: %v", err)
	}
	trimCache(d, now.Add(25*time.Hour))
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("%s not trimmed a day later", stale)
	}
}

func TestCacheUsed(t *testing.T) {
	now := time.Now()
	d := openCacheDir(t, t.TempDir())
	p := filepath.Join(d.Path, "a.idx")
	os.WriteFile(p, []byte("x"), 0o644)
	var times []time.Time
	for _, age := range []time.Duration{10 * time.Minute, 3 * time.Hour} {
		os.Chtimes(p, now.Add(-age), now.Add(-age))
		Used(d, "a.idx", now.Add(-age), now)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, st.ModTime())
	}
	// Used 10 minutes after its last mark, the file keeps it; 3 hours
	// after, it is marked anew.
	want := []time.Time{now.Add(-10 * time.Minute), now}
	if !slices.EqualFunc(times, want, func(a, b time.Time) bool { return a.Sub(b).Abs() < time.Second }) {
		t.Errorf("times %v, want %v", times, want)
	}
}
