package check_test

import (
	"errors"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
)

// countingProbes matches every description, counting the questions.
type countingProbes map[string]int

func (p countingProbes) Match(d *ast.ProbeDesc) (check.ProbeMatch, error) {
	p[d.String()]++
	return check.ProbeMatch{Count: 1}, nil
}

// TestCheckClauses checks that CheckClauses hands over each clause once,
// in order, with its own results only, that the errors raised after the
// last clause are still raised, that an error of the caller's stops
// checking, and that a description is matched once per program.
func TestCheckClauses(t *testing.T) {
	parse := func(c *check.Checker, src string) *ast.Program {
		t.Helper()
		prog, err := parser.ParseFile("t.d", []byte(src), &parser.Config{Types: c, Declare: c.Declare, AllowEmpty: true})
		if err != nil {
			t.Fatal(err)
		}
		return prog
	}
	probes := countingProbes{}
	c := check.NewChecker(&check.Config{Probes: probes})
	prog := parse(c, `BEGIN { this->a = 1; trace(this->a); }
BEGIN, END { x = 2; this->b = x; }
END { trace(x + 1); }
`)
	var seen []*ast.Clause
	info, err := c.CheckClauses(prog, func(cl *ast.Clause, info *check.Info) error {
		seen = append(seen, cl)
		if info.NextLocal != 0 {
			t.Errorf("clause %d: NextLocal %#x before the last clause is checked", len(seen), info.NextLocal)
		}
		for e := range info.Values {
			if e.Pos().Line != ast.DiagPos(cl).Line {
				t.Errorf("clause %d: a value of line %d", len(seen), e.Pos().Line)
			}
		}
		s := cl.Body[0].(*ast.ExprStmt)
		if info.Value(nil, s.X) == nil {
			t.Errorf("clause %d: its first statement has no value", len(seen))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || seen[0] != prog.Decls[0] || seen[2] != prog.Decls[2] {
		t.Errorf("clauses handed over: %d, not the program's 3 in order", len(seen))
	}
	if info.NextLocal != 0x502 || len(info.Values) != 0 {
		t.Errorf("after the last clause: NextLocal %#x, %d values; want 0x502, none", info.NextLocal, len(info.Values))
	}
	if probes[":::BEGIN"] != 1 || probes[":::END"] != 1 {
		t.Errorf("descriptions matched %v times; want once each", probes)
	}

	stop := errors.New("stop")
	n := 0
	c = check.NewChecker(&check.Config{})
	if _, err := c.CheckClauses(parse(c, "BEGIN { trace(1); } BEGIN { trace(2); }"), func(*ast.Clause, *check.Info) error {
		n++
		return stop
	}); err != stop || n != 1 {
		t.Errorf("yield's error: got %v after %d clauses; want stop after 1", err, n)
	}

	c = check.NewChecker(&check.Config{})
	_, err = c.CheckClauses(parse(c, "int x;"), func(*ast.Clause, *check.Info) error { return nil })
	var de *diag.Error
	if !errors.As(err, &de) || de.Tag != diag.D_EMPTY {
		t.Errorf("empty program: got %v; want D_EMPTY", err)
	}
}
