package enabling_test

import (
	"errors"
	"testing"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/doftest"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

// difCases are DIFOs that are well formed as DOF but whose DIF the
// kernel refuses (dtrace_difo_validate), with the section the fault is
// in.
func difCases() []struct {
	name string
	difo *dof.DIFO
	sec  dof.SectType
} {
	i8 := doftest.Int(8)
	return []struct {
		name string
		difo *dof.DIFO
		sec  dof.SectType
	}{
		{"invalid opcode", &dof.DIFO{Ret: i8, Code: []uint32{0xff << 24, doftest.Ret(0)}}, dof.SectDIF},
		{"invalid register", &dof.DIFO{Ret: i8, Code: []uint32{doftest.SetX(0, 9), doftest.Ret(9)}, Ints: []uint64{1}}, dof.SectDIF},
		{"write to %r0", &dof.DIFO{Ret: i8, Code: []uint32{doftest.SetX(0, 0), doftest.Ret(0)}, Ints: []uint64{1}}, dof.SectDIF},
		{"integer table index", &dof.DIFO{Ret: i8, Code: []uint32{doftest.SetX(5, 1), doftest.Ret(1)}, Ints: []uint64{1}}, dof.SectDIF},
		{"string table offset", &dof.DIFO{Ret: doftest.String(256), Code: []uint32{doftest.SetS(10, 1), doftest.Ret(1)},
			Strs: []byte("x\x00")}, dof.SectDIF},
		{"backward branch", &dof.DIFO{Ret: i8, Code: []uint32{doftest.Ret(0), doftest.Ba(0), doftest.Ret(0)}}, dof.SectDIF},
		{"branch beyond the code", &dof.DIFO{Ret: i8, Code: []uint32{doftest.Ba(10), doftest.Ret(0)}}, dof.SectDIF},
		{"invalid subroutine", &dof.DIFO{Ret: i8, Code: []uint32{doftest.Call(200, 1), doftest.Ret(1)}}, dof.SectDIF},
		{"no final ret", &dof.DIFO{Ret: i8, Code: []uint32{doftest.SetX(0, 1)}, Ints: []uint64{1}}, dof.SectDIF},
		{"scalar load of an array id", &dof.DIFO{Ret: i8, Code: []uint32{doftest.LdGS(0x50, 1), doftest.Ret(1)}}, dof.SectDIF},
		{"variable scope", &dof.DIFO{Ret: i8, Code: []uint32{doftest.Ret(0)}, Strs: []byte("v\x00"),
			Vars: []dof.DIFVar{{ID: 0x500, Kind: dof.VarKindScalar, Scope: 7, Type: i8}}}, dof.SectVarTab},
		{"variable name offset", &dof.DIFO{Ret: i8, Code: []uint32{doftest.Ret(0)}, Strs: []byte("v\x00"),
			Vars: []dof.DIFVar{{Name: 50, ID: 0x500, Kind: dof.VarKindScalar, Type: i8}}}, dof.SectVarTab},
		{"xlate in the kernel", &dof.DIFO{Ret: i8, Code: []uint32{78<<24 | 1, doftest.Ret(1)}}, dof.SectDIF},
	}
}

// TestDIFChecks checks that Load hands each DIFO to package dif and
// places what it refuses in the DOF.
func TestDIFChecks(t *testing.T) {
	for _, c := range difCases() {
		t.Run(c.name, func(t *testing.T) {
			b := write(t, oneAction(dof.Action{Kind: dof.ActDIFExpr, DIFO: c.difo}), nil)
			_, err := enabling.Load(b, nil)
			var ke *enabling.Error
			var de *dif.Error
			if !errors.As(err, &ke) || !errors.As(err, &de) {
				t.Fatalf("got %v, want a *enabling.Error wrapping a *dif.Error", err)
			}
			if ke.Reason != de.Reason {
				t.Errorf("reason %q, dif's %q", ke.Reason, de.Reason)
			}
			f, _ := dof.Read(b, nil)
			if want := secIdx(f, c.sec, 0); ke.Section != want {
				t.Errorf("section %d (%s), want %d (%s): %v", ke.Section, ke.Type, want, c.sec, err)
			}
			if s := f.Sections[ke.Section]; ke.Offset < s.Offset || ke.Offset >= s.Offset+max(s.Size, 1) {
				t.Errorf("offset %#x outside section %d [%#x,+%#x)", ke.Offset, ke.Section, s.Offset, s.Size)
			}
		})
	}
}

// TestDIFInstructionOffset checks that a fault in the n-th instruction
// is placed at that instruction.
func TestDIFInstructionOffset(t *testing.T) {
	d := &dof.DIFO{Ret: doftest.Int(8), Ints: []uint64{1},
		Code: []uint32{doftest.SetX(0, 1), doftest.SetX(0, 2), doftest.SetX(0, 9), doftest.Ret(1)}}
	b := write(t, oneAction(dof.Action{Kind: dof.ActDIFExpr, DIFO: d}), nil)
	_, err := enabling.Load(b, nil)
	var ke *enabling.Error
	if !errors.As(err, &ke) {
		t.Fatalf("got %v", err)
	}
	f, _ := dof.Read(b, nil)
	if want := f.Sections[secIdx(f, dof.SectDIF, 0)].Offset + 8; ke.Offset != want {
		t.Errorf("offset %#x, want %#x (instruction 2): %v", ke.Offset, want, err)
	}
}

// TestDIFVariablesAcrossDIFOs checks that the DIFOs of one file share
// their user variables, as the kernel's consumer state does: a variable
// may not change its size from one DIFO to the next.
func TestDIFVariablesAcrossDIFOs(t *testing.T) {
	v := func(size uint32) *dof.DIFO {
		return &dof.DIFO{Ret: doftest.Int(8), Code: []uint32{doftest.LdGS(0x500, 1), doftest.Ret(1)},
			Strs: []byte("x\x00"), Vars: []dof.DIFVar{{ID: 0x500, Kind: dof.VarKindScalar,
				Scope: dof.VarScopeGlobal, Flags: dof.VarFlagRef, Type: dof.DIFType{Kind: dof.TypeCTF, Flags: dof.TypeByRef, Size: size}}}}
	}
	ok := oneAction(dof.Action{Kind: dof.ActDIFExpr, DIFO: v(16)}, dof.Action{Kind: dof.ActDIFExpr, DIFO: v(16)})
	if _, err := enabling.Load(write(t, ok, nil), nil); err != nil {
		t.Fatalf("same variable twice: %v", err)
	}
	bad := oneAction(dof.Action{Kind: dof.ActDIFExpr, DIFO: v(16)}, dof.Action{Kind: dof.ActDIFExpr, DIFO: v(32)})
	if _, err := enabling.Load(write(t, bad, nil), nil); err == nil {
		t.Error("a variable of two sizes taken")
	}
}

func TestDIFDestructive(t *testing.T) {
	d := &dof.DIFO{Ret: doftest.Int(8), Code: []uint32{doftest.Call(14, 1), doftest.Ret(1)}}
	got, err := enabling.Load(write(t, oneAction(dof.Action{Kind: dof.ActDIFExpr, DIFO: d}), nil),
		&enabling.Config{KernelOnlyDIF: true})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Destructive || !got.ECBs[0].Actions[0].DIFO.Destructive {
		t.Error("a DIFO calling copyoutstr is not destructive")
	}
}

// TestHelperDIF checks that helper actions are held to what a helper's
// DIF may do: no timestamp here.
func TestHelperDIF(t *testing.T) {
	p := doftest.ByName("usdt-provider")
	p.ECBs[0].Actions[0].DIFO = doftest.Builtin(0x101, "timestamp", doftest.Int(8))
	b := write(t, p, nil)
	if _, err := enabling.Load(b, &enabling.Config{Helper: true}); err == nil {
		t.Error("helper reading timestamp taken")
	}
	p.ECBs[0].Probe.Function = "other"
	got, err := enabling.Load(write(t, p, nil), &enabling.Config{Helper: true})
	if err != nil {
		t.Fatalf("a DIFO of an ECB that is no helper: %v", err)
	}
	if len(got.Warnings) != 1 {
		t.Errorf("warnings %q", got.Warnings)
	}
}
