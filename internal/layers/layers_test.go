// Package layers holds the test that keeps kdtrace's packages in the
// order of its pipeline (doc/design.md): a package imports only
// packages of its own stage or an earlier one, and the runtime half
// (from DOF loading on) reads DOF and records, never the compiler's
// passes.
package layers

import (
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/kdtrace/kdtrace/"

// stages lists the module's packages by pipeline stage, earliest first.
// A path ending in "/..." stands for the package and those below it.
var stages = [][]string{
	// The formats and the leaves every stage may use.
	{"dlang/token", "dlang/diag", "dif", "dof", "internal/mmap", "internal/cachedir", "internal/cachefile", "internal/buildid", "internal/version", "internal/elfobj"},
	// The front end, and D's type model, which declarations build.
	{"dlang/types", "dlang/ast", "dlang/constant", "dlang/parser", "dlang/printer", "internal/dlang/cpp"},
	// Debug information (and the client that fetches it) and machine
	// code.
	{"internal/amd64", "internal/debuginfod", "internal/debuginfod/wire", "internal/debuginfod/transfer", "internal/debuginfo/...", "internal/btf"},
	// The syntactic rewrites.
	{"internal/dlang/sugar"},
	// The checker, and what answers the questions the passes ask
	// through their interfaces: where a function's instructions and
	// inline copies are (kinst, for sugar), which probes exist (probe),
	// the kernel's symbols (ksym), a traced function's frame
	// (debuginfo/locals); D's library and options.
	{"internal/dlang/printf", "internal/dlang/library", "internal/option", "dlang/check", "internal/probe", "internal/ksym", "internal/kinst", "internal/debuginfo/locals", "internal/dlang/header"},
	// Code generation.
	{"internal/dlang/emit"},
	// The runtime's side of DOF.
	{"internal/enabling"},
	// The record format, the contract between a backend and the consumer.
	{"record"},
	// Backends: the Linux one, and the reference DIF machine.
	{"internal/bpf", "internal/linux/...", "dif/vm"},
	// The consumer.
	{"internal/symbolize", "internal/consumer"},
	// The library facade and the command.
	{"dtrace", "cmd/kdtrace", "cmd/kdtrace-debuginfod"},
}

// compiler is the compiler's passes, which the runtime half (stages
// from internal/enabling on, but for the facade) must not import.
var compiler = []string{"dlang/parser", "dlang/printer", "internal/dlang/cpp", "internal/dlang/sugar", "dlang/check", "internal/dlang/header", "internal/dlang/library", "internal/dlang/emit"}

// helperOnly is the packages that only kdtrace-debuginfod may import:
// the network's, kept out of kdtrace (see TestKdtraceDeps).
var helperOnly = []string{"internal/debuginfod/transfer"}

// tooling is the packages only tests and benchmarks import; they may
// import anything.
var tooling = []string{"internal/benchsrc", "internal/debuginfod/debuginfodtest", "internal/corpus", "internal/doftest", "internal/dtracetest", "internal/fuzznest", "internal/gcctest", "internal/gdbcmp", "internal/guest", "internal/harness", "internal/kdtracebin", "internal/progen", "internal/layers", "bench/..."}

// in reports whether path is one of the paths of list.
func in(list []string, path string) bool {
	return slices.ContainsFunc(list, func(p string) bool {
		dir, tree := strings.CutSuffix(p, "/...")
		return path == dir || tree && strings.HasPrefix(path, dir+"/")
	})
}

// stageOf returns the stage of a package, -1 if no stage lists it; the
// longest path that matches decides (debuginfo/locals is not
// debuginfo/...'s).
func stageOf(path string) int {
	stage, longest := -1, 0
	for i, s := range stages {
		for _, p := range s {
			if in([]string{p}, path) && len(p) > longest {
				stage, longest = i, len(p)
			}
		}
	}
	return stage
}

func TestLayers(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	runtime := stageOf("internal/enabling")
	n := 0
	err = filepath.WalkDir(root, func(dir string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); dir != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		// The imports of the package as built for Linux and for FreeBSD.
		var imports []string
		for _, goos := range []string{"linux", "freebsd"} {
			ctxt := build.Default
			ctxt.GOOS = goos
			if pkg, err := ctxt.ImportDir(dir, 0); err == nil {
				imports = append(imports, pkg.Imports...)
			}
		}
		rel, _ := filepath.Rel(root, dir)
		path := filepath.ToSlash(rel)
		if len(imports) == 0 || in(tooling, path) {
			return nil
		}
		n++
		stage := stageOf(path)
		if stage < 0 {
			t.Errorf("%s is in no stage of the pipeline: add it to stages (or tooling)", path)
			return nil
		}
		slices.Sort(imports)
		for _, imp := range slices.Compact(imports) {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			switch s := stageOf(dep); {
			case in(tooling, dep):
				t.Errorf("%s imports %s, which only tests may", path, dep)
			case in(helperOnly, dep) && path != "cmd/kdtrace-debuginfod":
				t.Errorf("%s imports %s, which only cmd/kdtrace-debuginfod may", path, dep)
			case s > stage:
				t.Errorf("%s (%s) imports %s, a later stage (%s)", path, stages[stage][0], dep, stages[s][0])
			case stage >= runtime && path != "dtrace" && path != "cmd/kdtrace" && in(compiler, dep):
				t.Errorf("%s, on the runtime's side, imports the compiler's %s", path, dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Errorf("checked %d packages; the walk missed the tree", n)
	}
}

// TestKdtraceDeps: kdtrace does not link the network's packages, whose
// size and initialisation every run would pay for; its downloads are
// kdtrace-debuginfod's.
func TestKdtraceDeps(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	forbidden := []string{"net", "net/http", "crypto/tls"}
	for _, goos := range []string{"linux", "freebsd"} {
		cmd := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", module+"cmd/kdtrace")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		n := 0
		for line := range strings.Lines(string(out)) {
			pkg, imports, _ := strings.Cut(strings.TrimSpace(line), ": ")
			n++
			for _, imp := range strings.Fields(imports) {
				if slices.Contains(forbidden, imp) {
					t.Errorf("GOOS=%s: cmd/kdtrace depends on %s, which imports %s", goos, pkg, imp)
				}
			}
		}
		if n < 100 {
			t.Errorf("GOOS=%s: cmd/kdtrace has %d dependencies; go list did not list them", goos, n)
		}
	}
}
