package printf

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/internal/corpus"
)

// corpusDir returns the DTrace test suite's common tests in ../shared
// beside the repository, skipping the test when it is absent.
func corpusDir(t *testing.T) string {
	t.Helper()
	dir, ok := corpus.DTraceTests()
	if !ok {
		t.Skipf("DTrace test corpus not present at %s", dir)
	}
	return dir
}

// formatCall finds a call of a printf-like action whose first argument
// is a string literal, up to the literal's opening quote.
var formatCall = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(?:printf|printa|system|freopen)\s*\(\s*"`)

// literal is a format found in a test program.
type literal struct {
	line   int
	format string
}

// scanFormats returns the format string literals of src's printf-like
// calls, escapes processed as D's lexer does. A literal left open at
// the end of its line is skipped.
func scanFormats(src string) []literal {
	var lits []literal
	for i, line := range strings.Split(src, "\n") {
		for _, m := range formatCall.FindAllStringIndex(line, -1) {
			if s, ok := unquote(line[m[1]:]); ok {
				lits = append(lits, literal{i + 1, s})
			}
		}
	}
	return lits
}

// unquote reads a D string literal's body from s, just past its opening
// quote, up to the closing one.
func unquote(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), true
		case c != '\\' || i+1 == len(s):
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := 0
			for n := 0; n < 3 && i < len(s) && '0' <= s[i] && s[i] <= '7'; n++ {
				v = v*8 + int(s[i]-'0')
				i++
			}
			i--
			b.WriteByte(byte(v))
		case 'x':
			v := 0
			for n := 0; n < 2 && i+1 < len(s) && isHex(s[i+1]); n++ {
				i++
				v = v*16 + hexVal(s[i])
			}
			b.WriteByte(byte(v))
		default: // \\ \" \' \? and the rest stand for themselves
			b.WriteByte(c)
		}
	}
	return "", false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c <= '9':
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// TestCorpusFormats parses the format of every printf, printa, system
// and freopen call of the suite's tst.*.d programs, which dtrace
// accepts.
func TestCorpusFormats(t *testing.T) {
	dir := corpusDir(t)
	files, formats := 0, 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "tst.") || !strings.HasSuffix(d.Name(), ".d") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lits := scanFormats(string(src))
		if len(lits) > 0 {
			files++
		}
		for _, lit := range lits {
			formats++
			if _, err := Parse(lit.format); err != nil {
				rel, _ := filepath.Rel(dir, path)
				t.Errorf("%s:%d: Parse(%q): %v", rel, lit.line, lit.format, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if formats == 0 {
		t.Fatal("no formats found")
	}
	t.Logf("parsed %d formats in %d tst.*.d files", formats, files)
}

// TestCorpusSyntaxErrors checks that the formats of the suite's
// err.D_SYNTAX.badconv*.d programs fail to parse with D_SYNTAX.
func TestCorpusSyntaxErrors(t *testing.T) {
	dir := corpusDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "printf", "err.D_SYNTAX.badconv*.d"))
	if len(files) == 0 {
		t.Skip("no err.D_SYNTAX.badconv*.d programs")
	}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lits := scanFormats(string(src))
		if len(lits) != 1 {
			t.Fatalf("%s: found %d formats, want 1", path, len(lits))
		}
		_, err = Parse(lits[0].format)
		if e := (*Error)(nil); !errors.As(err, &e) || e.Tag != diag.D_SYNTAX {
			t.Errorf("%s: Parse(%q) = %v, want a D_SYNTAX error", filepath.Base(path), lits[0].format, err)
		}
	}
}

func TestUnquote(t *testing.T) {
	tests := []struct{ in, want string }{
		{`abc"`, "abc"},
		{`a\tb\n" x`, "a\tb\n"},
		{`\"%s\""`, `"%s"`},
		{`\101\0x"`, "A\x00x"},
		{`\x41\x4g"`, "A\x04g"},
		{`\\%d"`, `\%d`},
	}
	for _, tt := range tests {
		if got, ok := unquote(tt.in); !ok || got != tt.want {
			t.Errorf("unquote(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	if _, ok := unquote(`open`); ok {
		t.Error("unquote accepted an unterminated literal")
	}
}
