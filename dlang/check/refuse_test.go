package check_test

import (
	"testing"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
)

// TestRefuse checks that a refused name fails to resolve as any
// undefined name does, with its reason added in place of a suggestion,
// and that a name the program defines is not refused.
func TestRefuse(t *testing.T) {
	tests := []struct {
		src string
		msg string // the error, formatted; "" for none
	}{
		{"BEGIN { trace(PR_FORK); }",
			`"t.d", line 1: failed to resolve PR_FORK: Unknown variable name (PR_FORK means nothing here)`},
		{"BEGIN { trace(PR_FORKS); }",
			`"t.d", line 1: failed to resolve PR_FORKS: Unknown variable name`},
		{"inline int PR_FORK = 1; BEGIN { trace(PR_FORK); }", ""},
	}
	for _, tt := range tests {
		c := check.NewChecker(&check.Config{})
		c.Refuse(func(name string) (string, bool) { return "PR_FORK means nothing here", name == "PR_FORK" })
		prog, err := parser.ParseFile("t.d", []byte(tt.src), &parser.Config{Types: c, Declare: c.Declare, DefineTag: c.DefineTag})
		if err == nil {
			_, err = c.Check(prog)
		}
		switch {
		case tt.msg == "" && err != nil:
			t.Errorf("%s: %v", tt.src, err)
		case tt.msg != "" && (!isError(err, diag.D_IDENT_UNDEF, "") || err.Error() != tt.msg):
			t.Errorf("%s: got %v, want %s", tt.src, err, tt.msg)
		}
	}
}
