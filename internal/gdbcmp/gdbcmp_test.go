package gdbcmp

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCompare runs Compare against a kdtrace of its own: it refuses the
// clauses of one variable, prints the others' values, one of them
// wrong and one sign-extended, and the prologue's parameter is taken
// from the stop past the prologue.
func TestCompare(t *testing.T) {
	frames := []Frame{
		{Stop: Stop{"work", 0}, Hit: true, Prologue: 8, Vars: []Var{
			{Name: "n", Size: 4, Value: 0xdead, Param: true}, // the frame slot's garbage
			{Name: "sum", Size: 8, Value: 1},
		}},
		{Stop: Stop{"work", 8}, Hit: true, Prologue: 8, Vars: []Var{
			{Name: "n", Size: 4, Value: 0xffffffff, Param: true},
			{Name: "gone", Size: 8, Value: 3},
			{Name: "p", Size: 8, Value: 0x7fff0000},
		}},
		{Stop: Stop{"work", 16}, Prologue: 8, Vars: nil}, // not reached
	}
	// What kdtrace reads, by stop and name.
	reads := map[string]string{"work+0x0 n": "ffffffffffffffff", "work+0x0 sum": "1", "work+0x8 n": "ffffffffffffffff", "work+0x8 p": "7fff0001"}
	clause := regexp.MustCompile(`^pid\$target:a.out:(\w+):([0-9a-f]+) /!gdbcmp(\d+)/ .*locals->(\w+)\); }$`)
	runs := 0
	run := func(args ...string) (string, string, int) {
		runs++
		b, err := os.ReadFile(args[2])
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			m := clause.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("clause %q", l)
			}
			if m[4] == "gone" && args[0] == "-e" {
				return "", fmt.Sprintf("kdtrace: failed to compile script %s: line %d: locals->gone is not available\n", args[2], i+1), 1
			}
			var off uint64
			fmt.Sscanf(m[2], "%x", &off)
			fmt.Fprintf(&out, "@@ %s %s\n", m[3], reads[fmt.Sprintf("%s+%#x %s", m[1], off, m[4])])
		}
		return out.String(), "", 0
	}
	res, err := Compare(run, []string{"/bin/prog"}, frames)
	if err != nil {
		t.Fatal(err)
	}
	want := &Result{
		Figures: Figures{Read: 5, Equal: 3, Differ: 1, Missing: 1, Prologue: 1},
		Differ:  []string{"work+0x8 p: gdb 0x7fff0000, kdtrace 0x7fff0001"},
		Missing: []string{"work+0x8 gone: locals->gone is not available"},
	}
	if d := cmp.Diff(want, res); d != "" {
		t.Errorf("Compare (-want +got):\n%s", d)
	}
	if runs != 3 {
		t.Errorf("%d runs of kdtrace, want 3 (-e refused, -e, the run)", runs)
	}
}
