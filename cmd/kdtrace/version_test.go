package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/version"
)

// TestVersionStamped builds kdtrace the ways its manual names and checks
// the commit --version and -V report: the one the linker is given, the
// one the go command records from the git checkout, and none.
func TestVersionStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kdtrace three times")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Each binary is named kdtrace, the name -V prints, in a directory
	// of its own.
	build := func(name string, flags ...string) string {
		bin := filepath.Join(dir, name, "kdtrace")
		args := append(append([]string{"build", "-o", bin}, flags...), "./cmd/kdtrace")
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return bin
	}
	check := func(bin, commit string) {
		t.Helper()
		want := "kdtrace " + version.Version + ", commit " + commit
		out, err := exec.Command(bin, "--version").Output()
		if err != nil || string(out) != want+"\n" {
			t.Errorf("%s --version: %q, %v; want %q", bin, out, err, want+"\n")
		}
		out, err = exec.Command(bin, "-V").Output()
		if want := "kdtrace: Sun D 1.13 (" + want + ")\n"; err != nil || string(out) != want {
			t.Errorf("%s -V: %q, %v; want %q", bin, out, err, want)
		}
	}
	const given = "0123456789abcdef0123456789abcdef01234567"
	check(build("ldflags", "-buildvcs=false", "-ldflags", "-X github.com/kdtrace/kdtrace/internal/version.commit="+given), given)
	check(build("none", "-buildvcs=false"), "unknown")

	// The go command finds a repository by a .git directory: in a git
	// worktree, where .git is a file, it records nothing.
	if st, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skipf("not a git checkout, for -buildvcs: %v", err)
	} else if !st.IsDir() {
		check(build("worktree", "-buildvcs=true"), "unknown")
		return
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(head))
	status, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		t.Fatal(err)
	}
	if len(status) > 0 {
		want += " (modified)"
	}
	check(build("buildvcs", "-buildvcs=true"), want)
}
