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

		// Type keywords are checked as dtrace takes each one, so the
		// error is on the line of the word that spoils the combination.
		{"type combination", "int\nchar x;", `[D_DECL_COMBO] line 2: invalid type combination`},
		{"char attribute", "char\nlong\nx;", `[D_DECL_CHARATTR] line 2: invalid type declaration: short and long may not be used with char type`},
		{"void attribute", "long\n\nvoid x;", `[D_DECL_VOIDATTR] line 3: invalid type declaration: attributes may not be used with void type`},

		// Syntax errors are on the line of the token yacc could not
		// take, and after the blanks the lexer read past.
		{"syntax error", "BEGIN\n{\n\tx = 1 +\n\t;\n}", `[D_SYNTAX] line 4: syntax error near ";"`},
		{"syntax error at end", "BEGIN\n{\n\tx = 1 +\n", `[D_SYNTAX] line 4: syntax error near end of input`},
		{"predicate bracket", "BEGIN\n/args[0/\n{\n}", `[D_SYNTAX] line 3: closing ] expected in predicate before /`},
		{"extra paren", "BEGIN\n{\n\tx = (1))\n;\n}", `[D_SYNTAX] line 3: extra ) in input stream`},
		// dtrace's grammar takes a scoped tag, so an empty member
		// list is first a syntax error near its "}".
		{"scoped struct tag", "struct foo`bar {\n\n};", `[D_SYNTAX] line 3: syntax error near "}"`},
		{"scoped enum tag", "enum foo`bar\n{\n\n};", `[D_SYNTAX] line 4: syntax error near "}"`},
		{"scoped struct definition", "struct foo`bar\n{ int a; };", `[D_SYNTAX] line 2: syntax error near "{"`},
		{"division by zero", "BEGIN\n{\n\tx = 1 /\n\n\t0;\n}", `[D_DIV_ZERO] line 5: expression contains division by zero`},
		{"enumerator constant", "enum e {\n\tTAG = \"x\"\n};", `[D_DECL_ENCONST] line 3: enumerator 'TAG' must be assigned to an integral constant expression`},
		// dnerror on the predicate: its ">" ended when yacc saw the
		// "/", whose lexing read to the end of the input.
		{"expected actions", "BEGIN\n/x >\n 1/\n\n", `[D_SYNTAX] line 5: expected actions { } following probe description and predicate`},
		{"expected actions constant", "BEGIN\n/1\n/\n\n", `[D_SYNTAX] line 2: expected actions { } following probe description and predicate`},
		{"division not predicate end", "BEGIN\n/1/\n\nEND {}", `[D_SYNTAX] line 4: syntax error near "{"`},
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
