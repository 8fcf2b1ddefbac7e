// Package kdtracebin builds the kdtrace command for the tests that run
// it in another process, such as in the QEMU guest or under the DTrace
// test suite's harness.
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
	"path/filepath"
	"strings"
	"testing"
)

// Build builds kdtrace as the file bin, with env added to the
// environment of the go command.
func Build(tb testing.TB, bin string, env ...string) {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatalf("finding kdtrace's module: %v", err)
	}
	if err := consultSources(root); err != nil {
		tb.Fatalf("reading kdtrace's sources: %v", err)
	}
	build := exec.Command("go", "build", "-o", bin, "github.com/kdtrace/kdtrace/cmd/kdtrace")
	build.Dir = root
	build.Env = append(os.Environ(), env...)
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("building kdtrace: %v\n%s", err, out)
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
