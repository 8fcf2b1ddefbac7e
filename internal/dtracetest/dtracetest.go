// Package dtracetest finds the DTrace test suite beside the repository
// (../shared/corpus/dtrace-tst, through package corpus) and sets up a script the way its harness
// runs it, for the conformance tests of the compiler's passes, and
// compiles D for the tests of the passes after them.
package dtracetest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/corpus"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
)

// Dir returns the suite's common tests, skipping the test when the
// suite is absent.
func Dir(t testing.TB) string {
	t.Helper()
	dir, ok := corpus.DTraceTests()
	if !ok {
		t.Skipf("DTrace test corpus not present at %s (a link to ../shared/corpus beside the repository: see README.md)", dir)
	}
	return dir
}

// Files returns the suite's files whose base name matches pattern, sorted.
func Files(t testing.TB, pattern string) []string {
	var files []string
	filepath.WalkDir(Dir(t), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if ok, _ := filepath.Match(pattern, d.Name()); ok {
				files = append(files, path)
			}
		}
		return nil
	})
	sort.Strings(files)
	return files
}

// Rel returns path relative to the suite's common tests.
func Rel(t testing.TB, path string) string {
	rel, err := filepath.Rel(Dir(t), path)
	if err != nil {
		return path
	}
	return rel
}

// ExpectedTag returns the tag an err.D_TAG.name.d test must fail with,
// and false when the tag is not one of FreeBSD's (illumos only).
func ExpectedTag(path string) (diag.Tag, string, bool) {
	name := strings.TrimPrefix(filepath.Base(path), "err.")
	name = name[:strings.IndexAny(name, "abcdefghijklmnopqrstuvwxyz.")]
	tag, ok := diag.LookupTag(name)
	return tag, name, ok
}

// ParserConfig returns the parse configuration the harness gives a
// test: the script's name as $0 and, when a helper program is built
// beside it, that program's pid as $1.
func ParserConfig(path string) *parser.Config {
	cfg := &parser.Config{
		Args:   []string{path},
		Macros: map[string]string{"pid": "4242", "ppid": "1", "target": "0", "uid": "0", "gid": "0", "euid": "0", "egid": "0", "pgid": "4242", "sid": "4242", "projid": "0", "taskid": "0"},
	}
	if NeedsHelper(path) {
		cfg.Args = append(cfg.Args, "4243")
	}
	return cfg
}

// NeedsHelper reports whether the harness runs a helper program beside
// the test (a .c or .exe of the same name) and passes its pid as $1.
func NeedsHelper(path string) bool {
	base := strings.TrimSuffix(path, ".d")
	for _, ext := range []string{".c", ".exe"} {
		if _, err := os.Stat(base + ext); err == nil {
			return true
		}
	}
	return false
}

// Compile runs a program through the compiler's passes that need no
// kernel, as kdtrace does: parse, sugar, check, and generate its ECBs.
// cfg is the parser's configuration, nil for none; the checker's hooks
// are set on it.
func Compile(name string, src []byte, cfg *parser.Config) (*dof.Program, error) {
	_, _, p, err := CompileWith(name, src, cfg, nil)
	return p, err
}

// CompileWith is Compile with the checker configured by ccfg, nil for
// none; it also returns the checked program and what the checker found.
func CompileWith(name string, src []byte, cfg *parser.Config, ccfg *check.Config) (*check.Info, *ast.Program, *dof.Program, error) {
	if ccfg == nil {
		ccfg = &check.Config{}
	}
	c := check.NewChecker(ccfg)
	if cfg == nil {
		cfg = &parser.Config{}
	}
	cfg.Types, cfg.Declare, cfg.DefineTag, cfg.AllowEmpty = c, c.Declare, c.DefineTag, true
	prog, err := parser.ParseFile(name, src, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := (&sugar.Expander{}).Expand(prog); err != nil {
		return nil, nil, nil, err
	}
	info, err := c.Check(prog)
	if err != nil {
		return nil, nil, nil, err
	}
	p, err := emit.Program(prog, info, nil)
	return info, prog, p, err
}

// Probes matches probe descriptions by their text, as a catalog would.
type Probes map[string]check.ProbeMatch

// Match returns the match of d's text.
func (p Probes) Match(d *ast.ProbeDesc) (check.ProbeMatch, error) { return p[d.String()], nil }
