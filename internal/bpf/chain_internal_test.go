package bpf

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSplit checks how clauses are cut into a chain's programs: in
// order, within the budget but for a clause larger alone, and into
// MaxChain programs at most, the budget raised as little as that takes.
func TestSplit(t *testing.T) {
	parts := func(bounds ...int) []part {
		var ps []part
		for i := 0; i+1 < len(bounds); i++ {
			ps = append(ps, part{lo: bounds[i], hi: bounds[i+1], place: i, links: len(bounds) - 1})
		}
		return ps
	}
	for _, c := range []struct {
		name   string
		sizes  []int
		budget int
		want   []part
	}{
		{"fits", []int{10, 20, 30}, 60, parts(0, 3)},
		{"cut", []int{30, 30, 30, 30}, 60, parts(0, 2, 4)},
		{"large alone", []int{10, 100, 10, 10}, 60, parts(0, 1, 2, 4)},
		{"large first", []int{100, 10}, 60, parts(0, 1, 2)},
		// 70 clauses of 10 in budgets of 10 would be 70 programs: 34
		// hold them in budgets of 30, three clauses each but the last.
		{"raised", slices.Repeat([]int{10}, 70), 10, parts(0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45, 48, 51, 54, 57, 60, 63, 66, 69, 70)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, split(c.sizes, c.budget), cmp.AllowUnexported(part{})); diff != "" {
				t.Errorf("split(%v, %d) (-want +got):\n%s", c.sizes, c.budget, diff)
			}
		})
	}
	// 10,000 clauses of 93 instructions: MaxChain programs of a 34th
	// of them at most each.
	ps := split(slices.Repeat([]int{93}, 10000), chainBudget)
	if len(ps) != MaxChain {
		t.Fatalf("10,000 clauses in %d programs, want %d", len(ps), MaxChain)
	}
	for _, p := range ps {
		if n := p.hi - p.lo; n > 10000/MaxChain+1 {
			t.Errorf("program %d has %d clauses", p.place, n)
		}
	}
}
