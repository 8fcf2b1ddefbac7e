package parser_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/internal/dlang/cpp"
	"github.com/kdtrace/kdtrace/internal/dtracetest"
)

// parseCorpusFile preprocesses and parses one corpus script as
// "dtrace -C -s" would.
func parseCorpusFile(t testing.TB, path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cpp.Preprocess(context.Background(), path, src, cpp.Options{})
	if err != nil {
		return err
	}
	_, err = parser.ParseFile(path, res.Text, dtracetest.ParserConfig(path))
	return err
}

// TestCorpusParses checks that every tst.*.d of the DTrace test suite
// parses with no lexer or parser error.
func TestCorpusParses(t *testing.T) {
	files := dtracetest.Files(t, "tst.*.d")
	failed := 0
	for _, f := range files {
		if err := parseCorpusFile(t, f); err != nil {
			failed++
			t.Errorf("%s: %v", f, err)
		}
	}
	t.Logf("tst.*.d: %d of %d parse", len(files)-failed, len(files))
}

// TestCorpusSyntaxErrors checks that every err.D_SYNTAX.*.d fails with
// D_SYNTAX, and that every lexer- and parser-level err.D_*.d fails with
// its tag.
func TestCorpusSyntaxErrors(t *testing.T) {
	files := dtracetest.Files(t, "err.D_*.d")
	checked := 0
	for _, f := range files {
		name := filepath.Base(f)
		want, tagName, ok := dtracetest.ExpectedTag(f)
		if !ok {
			t.Logf("%s: skipped: %s is not one of FreeBSD's error tags (illumos only)", name, tagName)
			continue
		}
		if !parseTimeTags[want] {
			continue
		}
		checked++
		err := parseCorpusFile(t, f)
		de, ok := err.(*diag.Error)
		rel := dtracetest.Rel(t, f)
		if reason, ok := syntaxExceptions[rel]; ok {
			if de != nil && de.Tag == want {
				t.Errorf("%s: now fails with %s as expected; remove it from the exceptions", rel, want)
			} else {
				t.Logf("%s: exception: %s", rel, reason)
			}
			continue
		}
		switch {
		case err == nil:
			t.Errorf("%s: parsed, want %s", f, want)
		case !ok:
			t.Errorf("%s: %v, want %s", f, err, want)
		case de.Tag != want:
			t.Errorf("%s: got %s, want %s", f, de.Format(f, true), want)
		}
	}
	t.Logf("%d err.D_*.d tests with parse-time tags checked", checked)
}

// parseTimeTags are the tags the lexer and parser raise.
var parseTimeTags = map[diag.Tag]bool{
	diag.D_SYNTAX: true, diag.D_INT_OFLOW: true, diag.D_INT_DIGIT: true,
	diag.D_STR_NL: true, diag.D_CHR_NL: true, diag.D_CHR_NULL: true, diag.D_CHR_OFLOW: true,
	diag.D_PRAGERR: true, diag.D_PRAGCTL_INVAL: true, diag.D_PRAGMA_INVAL: true,
	diag.D_PRAGMA_MALFORM: true, diag.D_PRAGMA_UNUSED: true,
	diag.D_MACRO_UNDEF: true, diag.D_MACRO_OFLOW: true, diag.D_MACRO_UNUSED: true,
	diag.D_DIV_ZERO: true, diag.D_DECL_COMBO: true, diag.D_DECL_LONGINT: true,
	diag.D_DECL_CHARATTR: true, diag.D_DECL_VOIDATTR: true, diag.D_DECL_SIGNINT: true,
}

// syntaxExceptions lists the err tests with a parse-time tag that the
// parser does not fail, each with the reason.
var syntaxExceptions = map[string]string{
	"preprocessor/err.D_PRAGCTL_INVAL.tabdefine.d": "needs a cpp that ignores indented directives (Sun's); GNU and clang cpp run them, and FreeBSD's harness marks the test EXFAIL",
	"printf/err.D_SYNTAX.badconv1.d":               "raised by printf format checking (dt_printf_create), part of the type checker (issue #4)",
	"printf/err.D_SYNTAX.badconv2.d":               "raised by printf format checking (dt_printf_create), part of the type checker (issue #4)",
	"printf/err.D_SYNTAX.badconv3.d":               "raised by printf format checking (dt_printf_create), part of the type checker (issue #4)",
}
