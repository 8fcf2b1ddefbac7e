package check_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/cpp"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/sugar"
	"github.com/kdtrace/kdtrace/internal/dtracetest"
	"github.com/kdtrace/kdtrace/option"
)

// compileCorpusFile runs a corpus script through cpp, the parser, the
// sugar pass and the checker, as "dtrace -C -e -s" would.
func compileCorpusFile(t testing.TB, path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cpp.Preprocess(context.Background(), path, src, cpp.Options{})
	if err != nil {
		return err
	}
	c := check.NewChecker(&check.Config{})
	pcfg := dtracetest.ParserConfig(path)
	pcfg.Types = c
	pcfg.Declare = c.Declare
	pcfg.SetOption = (&option.Set{}).SetFromScript
	pcfg.AllowEmpty = true // the checker decides, after the declarations
	prog, err := parser.ParseFile(path, res.Text, pcfg)
	if err != nil {
		return err
	}
	if err := (&sugar.Expander{}).Expand(prog); err != nil {
		return err
	}
	_, err = c.Check(prog)
	return err
}

func TestCorpusErrors(t *testing.T) {
	files := dtracetest.Files(t, "err.D_*.d")
	pass, total := 0, 0
	for _, f := range files {
		want, _, ok := dtracetest.ExpectedTag(f)
		if !ok {
			continue
		}
		total++
		err := compileCorpusFile(t, f)
		var de *diag.Error
		switch {
		case err == nil:
			t.Logf("FAIL %s: compiled, want %s", dtracetest.Rel(t, f), want)
		case !errors.As(err, &de):
			t.Logf("FAIL %s: %v, want %s", dtracetest.Rel(t, f), err, want)
		case de.Tag != want:
			t.Logf("FAIL %s: %s, want %s", dtracetest.Rel(t, f), de.Format(f, true), want)
		default:
			pass++
		}
	}
	t.Logf("err.D_*.d: %d of %d fail with the expected tag", pass, total)
}

func TestCorpusCompiles(t *testing.T) {
	files := dtracetest.Files(t, "tst.*.d")
	pass := 0
	for _, f := range files {
		if err := compileCorpusFile(t, f); err != nil {
			var de *diag.Error
			if errors.As(err, &de) {
				t.Logf("FAIL %s: %s", dtracetest.Rel(t, f), de.Format(f, true))
			} else {
				t.Logf("FAIL %s: %v", dtracetest.Rel(t, f), err)
			}
			continue
		}
		pass++
	}
	t.Logf("tst.*.d: %d of %d compile", pass, len(files))
}
