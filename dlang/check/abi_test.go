package check

import (
	"testing"

	"github.com/kdtrace/kdtrace/dif"
)

// TestBuiltinSubroutines checks the builtins table against dif's
// subroutine table, the one definition of DIF_SUBR_*: each subroutine
// D names is the one dif names by its code.
func TestBuiltinSubroutines(t *testing.T) {
	n := 0
	for _, b := range builtins {
		if b.kind != Func {
			continue
		}
		n++
		if got := dif.SubrName(uint16(b.id)); got != b.name {
			t.Errorf("%s has code %d, which dif names %q", b.name, b.id, got)
		}
	}
	// Linux has no mutex_*, rw_* or sx_* subroutines of its own, and
	// typeref is gone from FreeBSD: the other 48 are D's.
	if n != 48 {
		t.Errorf("%d subroutines in the builtins table, want 48", n)
	}
}
