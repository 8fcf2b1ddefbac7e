package parser_test

import (
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
)

// TestErrors checks the message and the line of lexer and parser errors,
// as dtrace prints them with -x errtags. The lines follow dtrace's rule:
// the line its lexer has reached when the error is found, which is after
// any text the lexer read ahead.
func TestErrors(t *testing.T) {
	long := strings.Repeat("0", 63)
	tests := []struct {
		name string
		src  string
		want string
	}{
		// Probe description components that do not fit the kernel's
		// dtrace_probedesc_t: dtrace_xstr2desc's ENAMETOOLONG.
		{"pdesc name 64 bytes", ":::A" + long, `[D_PDESC_INVAL] line 1: invalid probe description ":::A` + long + `": File name too long`},
		{"pdesc name 63 bytes", ":::" + long + " {}", ""},
		{"pdesc function 192 bytes", "::" + strings.Repeat("f", 192) + ": {}", `[D_PDESC_INVAL] line 1: invalid probe description "::` + strings.Repeat("f", 192) + `:": File name too long`},
		{"pdesc function 191 bytes", "::" + strings.Repeat("f", 191) + ": {}", ""},
		{"pdesc module 64 bytes", "\n:" + strings.Repeat("m", 64) + ":: {}", `[D_PDESC_INVAL] line 2: invalid probe description ":` + strings.Repeat("m", 64) + `::": File name too long`},
		{"pdesc provider 64 bytes", strings.Repeat("p", 64) + "::: {}", `[D_PDESC_INVAL] line 1: invalid probe description "` + strings.Repeat("p", 64) + `:::": File name too long`},
		// The name is taken first, so its length is refused before the
		// description is found overspecified.
		{"pdesc overspecified", "a:b:c:d:e {}", `[D_PDESC_INVAL] line 1: invalid probe description "a:b:c:d:e": Overspecified probe description`},
		{"pdesc overspecified long name", "a:b:c:d:" + long + "0 {}", `[D_PDESC_INVAL] line 1: invalid probe description "a:b:c:d:` + long + `0": File name too long`},

		// Scripts that are not text.
		{"NUL byte", "BEGIN\n{ x = 1;\n\x00 }", `[D_SYNTAX] line 3: invalid character '\0': the script is not text`},
		{"ELF header", "\x7fELF\x02\x01\x01\x00", `[D_SYNTAX] line 1: invalid character '\x7f': the script is not text`},
		{"invalid UTF-8", "BEGIN { x = 1 \xff 2; }", `[D_SYNTAX] line 1: invalid character '\xff': the script is not text`},
		{"control character", "BEGIN { x = 1;\n y = \x01; }", `[D_SYNTAX] line 2: invalid character '\x01'`},
		{"non-ASCII letter", "BEGIN { x = 1 \u00e9 2; }", `[D_SYNTAX] line 1: syntax error near "é"`},

		// Strings and character constants that a newline ends are
		// reported on the line after it, where flex has counted the
		// newline it matched as trailing context.
		{"string newline", "BEGIN\n{\n\tx = \"abc\n\";\n}", `[D_STR_NL] line 4: newline encountered in string literal`},
		{"char newline", "BEGIN\n{\n\th = '\n\t\t';\n}", `[D_CHR_NL] line 4: newline encountered in character constant`},
		{"string at end of input", "BEGIN\n{\n\ttrace(\"abc)}", `[D_SYNTAX] line 3: unterminated string literal: end of input before its closing quote`},
		{"char at end of input", "BEGIN { trace('a", `[D_SYNTAX] line 1: unterminated character constant: end of input before its closing quote`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parser.ParseFile("t.d", []byte(tt.src), &parser.Config{AllowEmpty: true})
			got := ""
			if err != nil {
				de, ok := err.(*diag.Error)
				if !ok {
					t.Fatalf("error %T, not *diag.Error: %v", err, err)
				}
				got = de.Format("t.d", true)
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
