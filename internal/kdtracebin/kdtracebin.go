// Package kdtracebin builds the kdtrace command, and the
// kdtrace-debuginfod it runs, for the tests that run it in another
// process, such as in the QEMU guest or under the DTrace test suite's
// harness.
//
// go test caches a package's result while the package and the files
// and environment its test consulted are unchanged. A build run with
// exec consults kdtrace's sources where go test cannot see it, so a test
// that only builds the command would be answered from the cache after
// the command changed. Build therefore opens each source file of the
// module itself, which records them among the files the test consulted:
// a change to any of them reruns the test.
package kdtracebin

import (
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// Build builds kdtrace as the file bin, and kdtrace-debuginfod, which
// makes its downloads, beside it, with env added to the environment of
// the go command.
func Build(tb testing.TB, bin string, env ...string) {
	tb.Helper()
	root := consulted(tb)
	build(tb, root, bin, "cmd/kdtrace", env)
	build(tb, root, filepath.Join(filepath.Dir(bin), "kdtrace-debuginfod"), "cmd/kdtrace-debuginfod", env)
}

// BuildHelper builds kdtrace-debuginfod alone into dir, and returns its
// path, for the tests of the client that runs it.
func BuildHelper(tb testing.TB, dir string, env ...string) string {
	tb.Helper()
	bin := filepath.Join(dir, "kdtrace-debuginfod")
	build(tb, consulted(tb), bin, "cmd/kdtrace-debuginfod", env)
	return bin
}

// consulted returns the module's root, having consulted its sources.
func consulted(tb testing.TB) string {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatalf("finding kdtrace's module: %v", err)
	}
	if err := consultSources(root); err != nil {
		tb.Fatalf("reading kdtrace's sources: %v", err)
	}
	return root
}

// build builds the command cmd of the module as the file bin.
func build(tb testing.TB, root, bin, cmd string, env []string) {
	tb.Helper()
	b := exec.Command("go", "build", "-o", bin, "github.com/kdtrace/kdtrace/"+cmd)
	b.Dir = root
	b.Env = append(os.Environ(), env...)
	if out, err := b.CombinedOutput(); err != nil {
		tb.Fatalf("building %s: %v\n%s", path.Base(cmd), err, out)
	}
}

// moduleRoot returns the directory of kdtrace's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// consultSources opens the files of root that a build of the command
// may read: go.mod, go.sum and the packages' sources, but not tests,
// test data or other repositories' files.
func consultSources(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case name == "go.mod", name == "go.sum":
		case strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go"):
		case strings.HasSuffix(name, ".d") && strings.Contains(path, string(filepath.Separator)+"library"+string(filepath.Separator)):
			// The D libraries kdtrace embeds.
		default:
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		return f.Close()
	})
}
