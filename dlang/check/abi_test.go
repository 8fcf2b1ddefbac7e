package check

import (
	"strings"
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
	// typeref is gone from FreeBSD: the other 48 are D's, Oracle's
	// d_path for Linux, and kdtrace's d_path_dentry.
	if n != 50 {
		t.Errorf("%d subroutines in the builtins table, want 50", n)
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

// TestActionRecords checks the builtins table against dof's tables of
// record kinds: each aggregating function's code is the record kind
// dtrace.h names after it, and each action function that writes a
// record of its own writes the kind named after it (func and ufunc are
// sym's and usym's other names).
func TestActionRecords(t *testing.T) {
	aggs, acts := 0, 0
	for _, b := range builtins {
		var kind dof.ActKind
		switch b.kind {
		case AggFunc:
			aggs++
			kind = dof.ActKind(b.id)
		case ActFunc:
			kind = dof.ActionRecord(b.id)
			if kind == dof.ActNone || kind == dof.ActLibAct {
				continue
			}
			acts++
		default:
			continue
		}
		want := strings.ToUpper(b.name)
		switch b.name {
		case "func":
			want = "SYM"
		case "ufunc":
			want = "USYM"
		}
		if kind.String() != want {
			t.Errorf("%s writes %s records, want %s", b.name, kind, want)
		}
	}
	if aggs != 9 || acts != 23 {
		t.Errorf("%d aggregating and %d recording action functions, want 9 and 23", aggs, acts)
	}
}
