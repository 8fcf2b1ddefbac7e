package check_test

import (
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/diag"
)

// TestErrorLines checks that errors in scripts spanning lines are
// reported on the line dtrace reports them: the line its lexer had
// reached when its parser built the node at fault (after the node's last
// token, or after the token yacc needed to see to end the node), or the
// line it had reached when a declaration's action ran.
func TestErrorLines(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the first line of the error, with its tag
	}{
		{"syntax error", "BEGIN\n{\n\tx = 1 +\n\t;\n}", `[D_SYNTAX] line 4: syntax error near ";"`},
		// dt_lex.l reads past the blanks after "/" to tell the end of a
		// predicate from a division.
		{"predicate paren", "BEGIN\n/(x > 1/\n{\n}", `[D_SYNTAX] line 3: closing ) expected in predicate before /`},
		{"undefined identifier", "BEGIN\n{\n\tx = 1 +\n\t    y;\n}", `[D_IDENT_UNDEF] line 4: failed to resolve y: Unknown variable name`},
		// A binary operator ends when yacc sees the token after its
		// right operand.
		{"operator types", "BEGIN\n{\n\tx = \"a\" *\n\t    2\n\t;\n}", `[D_OP_ARITH] line 5: operator * requires operands of arithmetic type`},
		{"operator in predicate", "BEGIN\n/\"char\" & \"foo\"/\n{\n\texit(1);\n}", `[D_OP_INT] line 3: operator & requires operands of integral type`},
		// A call ends at its ")", which needs no lookahead.
		{"call arguments", "BEGIN\n{\n\ttrace(\n\t)\n\t;\n}", `[D_PROTO_LEN] line 4: trace( ) prototype mismatch: 0 args passed, 1 expected`},
		{"predicate scalar", "int a[4];\nBEGIN\n/a/\n{\n\texit(0);\n}\n", `[D_PRED_SCALAR] line 6: predicate result must be of scalar type`},
		{"printf format", "BEGIN\n{\n\tprintf(\"%d\\n\",\n\t    \"s\"\n\t);\n}", `[D_PRINTF_ARG_TYPE] line 5: printf( ) argument #2 is incompatible with conversion #1 prototype:`},
		// Declarations are checked once yacc sees the token after the
		// declarator.
		{"declaration", "int x;\nstring\nx\n;", `[D_DECL_IDRED] line 4: identifier redeclared: x`},
		// dt_decl_array runs once the "]" is shifted.
		{"array dimension", "int x[\n0\n];", `[D_DECL_ARRSUB] line 3: positive integral constant expression or tuple signature expected as array declaration subscript`},
		{"array of void", "void\nx[\n2\n]\n;", `[D_DECL_VOIDOBJ] line 4: cannot declare array of void`},
		// dt_decl_prototype's dnerror names the parameter's node, built
		// once yacc sees the "," or the closing bracket after it.
		{"key prototype", "int a[string,\n void\n];", `[D_DECL_PROTO_TYPE] line 3: array prototype may not use parameter of type void: (anonymous), parameter #2`},
		{"useless declaration", "int\n;\nBEGIN {}", `[D_DECL_USELESS] line 2: useless declaration`},
		{"struct member", "struct s {\n\tint a;\n\tvoid\n\t  b\n\t;\n};", `[D_DECL_VOIDOBJ] line 5: cannot have void member: b`},
		{"struct specifiers", "long struct mystruct\n{\n\tint i;\n};", `[D_DECL_LONGINT] line 2: invalid type declaration: long and long long may only be used with integer or floating-point type`},
		{"struct redefined", "struct s { int a; };\nstruct s\n{\n\tint b;\n};", `[D_DECL_TYPERED] line 3: type redeclared: struct s`},
		{"enumerator value", "enum e {\n\ttoobig = 2147483648\n};", `[D_DECL_ENOFLOW] line 3: enumerator 'toobig' value overflows INT_MAX (2147483647)`},
		{"enumerator constant", "enum e {\n\tTAG = \"x\"\n};", `[D_DECL_ENCONST] line 3: enumerator 'TAG' must be assigned to an integral constant expression`},
		// dt_node_xlator and dt_cook_xlator report at the translator's
		// final ";".
		{"translator member", "struct out { int o; };\ntranslator struct out < int *p >\n{\n\tnosuch = *p;\n}\n;", `[D_XLATE_MEMB] line 6: translator member nosuch is not a member of struct out`},
		{"translator output", "translator int < int *p >\n{\n}\n;", `[D_XLATE_SOU] line 4: translator output type must be a struct or union`},
		{"character constant", "BEGIN\n{\n\tc = 'ab\n';\n}", `[D_CHR_NL] line 4: newline encountered in character constant`},
		{"string literal", "BEGIN\n{\n\ts = \"ab\n\";\n}", `[D_STR_NL] line 4: newline encountered in string literal`},
		{"probe description", "BEGIN\n{\n}\n\n:::" + strings.Repeat("n", 64) + "\n{\n}", `[D_PDESC_INVAL] line 5: invalid probe description ":::` + strings.Repeat("n", 64) + `": File name too long`},
		{"division by zero", "BEGIN\n{\n\tx = 1 /\n\t    0\n\t;\n}", `[D_DIV_ZERO] line 5: expression contains division by zero`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkSource(tt.src)
			de, ok := err.(*diag.Error)
			if !ok {
				t.Fatalf("got %v (%T), want %s", err, err, tt.want)
			}
			got, _, _ := strings.Cut(de.Format("t.d", true), "\n")
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestTypeWording checks that types are named in messages as dt_decl_type
// names them, in its fixed order of keywords, and that a name that is no
// type where only a type may stand is a syntax error, as in dtrace's
// grammar.
func TestTypeWording(t *testing.T) {
	tests := []struct{ src, want string }{
		{"long short x;", `[D_UNKNOWN] line 1: failed to resolve type short long : Invalid type name`},
		{"short long int x;", `[D_UNKNOWN] line 1: failed to resolve type short long : Invalid type name`},
		{"long unsigned short int y;", `[D_UNKNOWN] line 1: failed to resolve type unsigned short long : Invalid type name`},
		{"long long short w;", `[D_UNKNOWN] line 1: failed to resolve type short long long : Invalid type name`},
		// dt_open.c's C container has signed, unsigned, signed int …
		// as types of their own, named as written.
		{"unsigned x; BEGIN { x = \"a\"; }", `[D_OP_INCOMPAT] line 1: operands have incompatible types: "unsigned" = "string"`},
		{"signed short y; BEGIN { y = \"a\"; }", `[D_OP_INCOMPAT] line 1: operands have incompatible types: "signed short" = "string"`},
		{"unsigned long int z; BEGIN { z = \"a\"; }", `[D_OP_INCOMPAT] line 1: operands have incompatible types: "unsigned long" = "string"`},
		{"long int q; BEGIN { q = \"a\"; }", `[D_OP_INCOMPAT] line 1: operands have incompatible types: "long" = "string"`},
		{"int x;\nsigned int x;", "[D_DECL_IDRED] line 2: identifier redeclared: x\n\t current: scalar signed int\n\tprevious: scalar int"},
		{"BEGIN\n{\n\ttrace(offsetof(vnode_t, v_no_such_member));\n}", `[D_SYNTAX] line 3: syntax error near "vnode_t"`},
		{"BEGIN { trace(xlate<nosuch_t>(0)); }", `[D_SYNTAX] line 1: syntax error near "nosuch_t"`},
		{"struct s { int a; };\nBEGIN { trace(offsetof(struct s,\n b)); }", `[D_UNKNOWN] line 3: failed to determine offset of b: Member name not found`},
	}
	for _, tt := range tests {
		wantFormatted(t, tt.src, tt.want)
	}
}

// TestAggRedefLine checks the line an aggregation redefinition names for
// the first definition: where dtrace created the aggregation's
// identifier, which is the line of the node that first used it.
func TestAggRedefLine(t *testing.T) {
	tests := []struct{ src, want string }{
		{"BEGIN\n{\n\t@a[1] = count();\n}\nEND\n{\n\t@a[2] = sum(1);\n}",
			"[D_AGG_REDEF] line 7: aggregation redefined: @a\n\t current: @a = sum( )\n\tprevious: @a = count( ) : line 3"},
		// The assignment @a = count() ends at the ";" after it.
		{"BEGIN\n{\n\t@a = count()\n\t;\n\t@a = sum(1);\n}",
			"[D_AGG_REDEF] line 5: aggregation redefined: @a\n\t current: @a = sum( )\n\tprevious: @a = count( ) : line 4"},
	}
	for _, tt := range tests {
		wantFormatted(t, tt.src, tt.want)
	}
}
