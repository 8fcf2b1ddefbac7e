package sugar_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/printer"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
)

func errorText(err error) string {
	var de *diag.Error
	if errors.As(err, &de) {
		return de.Format("t.d", true)
	}
	return err.Error()
}

// TestExpandIfElse checks the clause shapes of dt_sugar on the worked
// example of a predicate and an if (reference §4.6 (c)), and that the
// ERROR clause comes once per Expander.
func TestExpandIfElse(t *testing.T) {
	const want = `dtrace:::ERROR
{
        ((self->%error) = 0x1);
}

:::tick-1s
{
        ((self->%error) = 0x0);
}

:::tick-1s
/!((self->%error))/
{
        ((this->%condition_1) = (0x1 && (x > 0x2)));
}

:::tick-1s
/!((self->%error))/
{
        ((this->%condition_2) = ((this->%condition_1) && y));
}

:::tick-1s
/(!((self->%error)) && (this->%condition_2))/
{
        trace(0x1);
}

`
	e := &sugar.Expander{}
	for i, w := range []string{want, want[len("dtrace:::ERROR\n{\n        ((self->%error) = 0x1);\n}\n\n"):]} {
		prog, err := parser.ParseFile("t.d", []byte("tick-1s /x > 2/ { if (y) trace(1); }"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Expand(prog); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		printer.Fprint(&out, prog)
		if diff := cmp.Diff(w, out.String()); diff != "" {
			t.Errorf("program %d (-want +got):\n%s", i+1, diff)
		}
	}
}

// TestExpandNoIf checks that a clause without if statements is kept as it
// is, predicate included, and brings no ERROR clause.
func TestExpandNoIf(t *testing.T) {
	prog, err := parser.ParseFile("t.d", []byte("BEGIN /x/ { y = 1; }"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&sugar.Expander{}).Expand(prog); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printer.Fprint(&out, prog)
	if diff := cmp.Diff(":::BEGIN\n/x/\n{\n        (y = 0x1);\n}\n\n", out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
