package guest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExtract streams one member out of a .deb built here, as FetchDebug
// does out of the -dbg package, and fails on a member it lacks.
func TestExtract(t *testing.T) {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("dpkg-deb not found")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "pkg")
	files := map[string]string{
		"DEBIAN/control":                 "Package: kdtrace-test\nVersion: 1\nArchitecture: all\nMaintainer: kdtrace\nDescription: test\n",
		"usr/lib/debug/boot/vmlinux-x":   "the image",
		"usr/lib/debug/lib/modules/m.ko": "a module",
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deb := filepath.Join(dir, "x.deb")
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", root, deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := extract(ctx, out, deb, "./usr/lib/debug/boot/vmlinux-x"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "usr/lib/debug/boot/vmlinux-x")); err != nil || string(b) != "the image" {
		t.Errorf("extracted %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(out, "usr/lib/debug/lib")); err == nil {
		t.Error("extracted more than the member")
	}
	err := extract(ctx, out, deb, "./usr/lib/debug/boot/vmlinux-y")
	if err == nil || !strings.Contains(err.Error(), "vmlinux-y") {
		t.Errorf("a missing member: %v", err)
	}
}

func TestDropStale(t *testing.T) {
	dir := t.TempDir()
	stale, fresh := filepath.Join(dir, "fetch-1"), filepath.Join(dir, "fetch-2")
	for _, d := range []string{stale, fresh} {
		if err := os.MkdirAll(filepath.Join(d, "root"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, long, long); err != nil {
		t.Fatal(err)
	}
	dropStale(dir)
	if _, err := os.Stat(stale); err == nil {
		t.Error("a fetch directory two hours old was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fetch under way was dropped: %v", err)
	}
}
