package check

import (
	"testing"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
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

// TestActionBase checks that D's action codes follow the subroutines,
// as DT_ACT_BASE does, and that the builtins table's action functions
// are numbered from it.
func TestActionBase(t *testing.T) {
	if dof.DActBase != dif.SubrMax+1 {
		t.Errorf("DT_ACT_BASE is %d, want DIF_SUBR_MAX+1 = %d", dof.DActBase, dif.SubrMax+1)
	}
	for _, b := range builtins {
		if b.kind == ActFunc && (b.id < dof.DActBase || b.id > dof.DActPrintm) {
			t.Errorf("action %s has code %d, outside DT_ACT_*", b.name, b.id)
		}
	}
}
