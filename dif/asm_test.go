package dif

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	i64     = IntType(8)
	str256  = StringType(256)
	vTS     = VarRef{Name: "timestamp", ID: VarTimestamp, Kind: KindScalar, Scope: ScopeGlobal, Type: i64}
	vExec   = VarRef{Name: "execname", ID: VarExecname, Kind: KindScalar, Scope: ScopeGlobal, Type: str256}
	vArgs   = VarRef{Name: "args", ID: VarArgs, Kind: KindArray, Scope: ScopeGlobal, Type: i64}
	vSelfTS = VarRef{Name: "ts", ID: VarOtherUBase, Kind: KindScalar, Scope: ScopeThread, Type: i64}
	vGlob   = VarRef{Name: "total", ID: VarOtherUBase + 1, Kind: KindScalar, Scope: ScopeGlobal, Type: i64}
	vAssoc  = VarRef{Name: "seen", ID: VarOtherUBase, Kind: KindArray, Scope: ScopeGlobal, Type: i64}
	vThis   = VarRef{Name: "x", ID: VarOtherUBase, Kind: KindScalar, Scope: ScopeLocal, Type: i64}
)

func assemble(t testing.TB, ir *IR) *Object {
	t.Helper()
	o, err := Assemble(ir)
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	if err := Validate(o, Limits{}); err != nil {
		t.Fatalf("Validate of assembled object: %v", err)
	}
	return o
}

// TestAssembleLabels: forward branches resolve to the index of the
// instruction after the label; labels placed together share it; label
// declarations take no room.
func TestAssembleLabels(t *testing.T) {
	var ir IR
	ir.Ret = i64
	lTrue, lPost, lUnused := ir.NewLabel(), ir.NewLabel(), ir.NewLabel()
	ir.LoadVar(LDGS, vExec, 1) // 0
	ir.Sets("sshd", 2)         // 1
	ir.Emit(Cmp(SCMP, 1, 2))   // 2
	ir.Branch(BE, lTrue)       // 3
	ir.Emit(Mov(0, 1))         // 4
	ir.Branch(BA, lPost)       // 5
	ir.Mark(lTrue)             //
	ir.Setx(1, 1)              // 6
	ir.Mark(lPost)             //
	ir.Mark(lUnused)           //
	ir.Emit(Ret(1))            // 7
	if ir.Len() != 8 {
		t.Errorf("Len = %d", ir.Len())
	}
	o := assemble(t, &ir)
	want := []Instr{
		Ldv(LDGS, VarExecname, 1), Sets(1, 2), Cmp(SCMP, 1, 2), Branch(BE, 6),
		Mov(0, 1), Branch(BA, 7), Setx(0, 1), Ret(1),
	}
	if diff := cmp.Diff(want, o.Code); diff != "" {
		t.Errorf("code (-want +got):\n%s", diff)
	}
	if string(o.Strs) != "\x00sshd\x00execname\x00" {
		t.Errorf("strtab %q", o.Strs)
	}
	if diff := cmp.Diff([]uint64{1}, o.Ints); diff != "" {
		t.Errorf("ints: %s", diff)
	}
}

func TestAssembleLabelErrors(t *testing.T) {
	var ir IR
	l := ir.NewLabel()
	ir.Branch(BA, l)
	ir.Emit(Ret(0))
	if _, err := Assemble(&ir); err == nil || !strings.Contains(err.Error(), "never placed") {
		t.Errorf("undefined label: %v", err)
	}

	var ir2 IR
	l = ir2.NewLabel()
	ir2.Mark(l)
	ir2.Mark(l)
	if _, err := Assemble(&ir2); err == nil || !strings.Contains(err.Error(), "placed twice") {
		t.Errorf("label placed twice: %v", err)
	}

	var ir3 IR
	ir3.Mark(7)
	if _, err := Assemble(&ir3); err == nil {
		t.Error("foreign label accepted")
	}

	var ir4 IR
	ir4.Branch(ADD, 1)
	if ir4.Err() == nil {
		t.Error("add accepted as a branch")
	}
}

// TestAssembleTables: equal integers share an entry, symbol loads get
// their own; equal strings share, "" is offset 0; the string table holds
// the code's strings in order of first use, then variable names, then
// relocated symbols; each stays under 16 bits.
func TestAssembleTables(t *testing.T) {
	var ir IR
	ir.Ret = str256
	ir.Link = LinkDynamic
	ir.KNoDefs = true
	ir.Setx(42, 1)
	ir.Setx(7, 2)
	ir.Setx(42, 3)
	ir.SetxSym(Symbol{Name: "ticks", Object: "kernel"}, 42, 4)
	ir.Sets("b", 5)
	ir.Sets("a", 6)
	ir.Sets("b", 7)
	ir.Sets("", 1)
	ir.LoadVar(LDGS, vTS, 2)
	ir.StoreVar(STTS, vSelfTS, 2)
	ir.Sets("ts", 3) // already there as a code string: the name reuses it
	ir.Emit(Ret(1))
	o := assemble(t, &ir)
	if diff := cmp.Diff([]uint64{42, 7, 42}, o.Ints); diff != "" {
		t.Errorf("ints (-want +got): %s", diff)
	}
	if got, want := string(o.Strs), "\x00b\x00a\x00ts\x00timestamp\x00ticks\x00"; got != want {
		t.Errorf("strtab %q, want %q", got, want)
	}
	wantCode := []Instr{Setx(0, 1), Setx(1, 2), Setx(0, 3), Setx(2, 4), Sets(1, 5), Sets(3, 6),
		Sets(1, 7), Sets(0, 1), Ldv(LDGS, VarTimestamp, 2), Stv(STTS, VarOtherUBase, 2), Sets(5, 3), Ret(1)}
	if diff := cmp.Diff(wantCode, o.Code); diff != "" {
		t.Errorf("code (-want +got): %s", diff)
	}
	if diff := cmp.Diff([]Relo{{Name: 18, Type: RelocSetx, Offset: 16}}, o.KRelo); diff != "" {
		t.Errorf("krelo: %s", diff)
	}
	if o.URelo != nil {
		t.Errorf("urelo %v", o.URelo)
	}
	if o.Ret != str256 {
		t.Errorf("ret %v", o.Ret)
	}

	again, err := Assemble(&ir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(o, again); diff != "" {
		t.Errorf("second assembly differs (-first +second):\n%s", diff)
	}

	var empty IR
	empty.Emit(Ret(0))
	o = assemble(t, &empty)
	if string(o.Strs) != "\x00" || o.Ints != nil || o.Vars != nil {
		t.Errorf("empty tables: %q %v %v", o.Strs, o.Ints, o.Vars)
	}
}

func TestAssembleTableLimits(t *testing.T) {
	var ir IR
	for i := range MaxIntIndex + 1 {
		ir.Setx(uint64(i), 1)
	}
	if ir.Err() != nil {
		t.Fatalf("65536 integers refused: %v", ir.Err())
	}
	ir.Setx(3, 1) // shared, still fits
	ir.Setx(1<<40, 1)
	if _, err := Assemble(&ir); !errors.Is(err, ErrIntTableFull) {
		t.Errorf("65537th integer: %v", err)
	}

	var irs IR
	long := strings.Repeat("x", 1000)
	for i := 0; irs.Err() == nil && i < 100; i++ {
		irs.Sets(long+string(rune('A'+i)), 1)
	}
	if _, err := Assemble(&irs); !errors.Is(err, ErrStrTableFull) {
		t.Errorf("string table overflow: %v", err)
	}
	if ErrStrTableFull.Error() != "String constant table limit exceeded" {
		t.Error(ErrStrTableFull)
	}
}

// TestAssembleVars: each variable once, thread-locals then globals then
// clause-locals, each by id, flags from the accesses.
func TestAssembleVars(t *testing.T) {
	var ir IR
	ir.Ret = i64
	vSelfB := VarRef{Name: "b", ID: VarOtherUBase + 3, Kind: KindScalar, Scope: ScopeThread, Type: i64}
	ir.LoadVar(LDGS, vGlob, 1)
	ir.LoadVar(LDLS, vThis, 2)
	ir.LoadVar(LDTS, vSelfB, 3)
	ir.LoadVar(LDGS, vTS, 4)
	ir.LoadArray(LDGA, vArgs, 0, 5)
	ir.Emit(Pushtv(TypeCTF, 5))
	ir.LoadVar(LDGAA, vAssoc, 6)
	ir.StoreVar(STGAA, vAssoc, 4)
	ir.Emit(Popts())
	ir.StoreVar(STGS, vGlob, 1)
	ir.StoreVar(STTS, vSelfTS, 2)
	ir.StoreVar(STLS, vThis, 3)
	ir.Touch(VarRef{Name: "z", ID: VarOtherUBase + 9, Kind: KindScalar, Scope: ScopeGlobal, Type: i64}, FlagRef)
	ir.Emit(Ret(1))
	o := assemble(t, &ir)
	type row struct {
		Name        string
		ID          uint32
		Kind, Scope uint8
		Flags       uint16
	}
	var got []row
	for i := range o.Vars {
		v := &o.Vars[i]
		got = append(got, row{o.VarName(v), v.ID, v.Kind, v.Scope, v.Flags})
	}
	want := []row{
		{"ts", 0x500, KindScalar, ScopeThread, FlagMod},
		{"b", 0x503, KindScalar, ScopeThread, FlagRef},
		{"args", 0, KindArray, ScopeGlobal, FlagRef},
		{"timestamp", 0x101, KindScalar, ScopeGlobal, FlagRef},
		{"seen", 0x500, KindArray, ScopeGlobal, FlagRef | FlagMod},
		{"total", 0x501, KindScalar, ScopeGlobal, FlagRef | FlagMod},
		{"z", 0x509, KindScalar, ScopeGlobal, FlagRef},
		{"x", 0x500, KindScalar, ScopeLocal, FlagRef | FlagMod},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vartab (-want +got):\n%s", diff)
	}
}

func TestAssembleVarErrors(t *testing.T) {
	for name, build := range map[string]func(*IR){
		"scope":        func(ir *IR) { ir.LoadVar(LDTS, vGlob, 1) },
		"kind":         func(ir *IR) { ir.LoadVar(LDGAA, vGlob, 1) },
		"not-a-load":   func(ir *IR) { ir.LoadVar(STGS, vGlob, 1) },
		"not-a-store":  func(ir *IR) { ir.StoreVar(LDGS, vGlob, 1) },
		"not-an-array": func(ir *IR) { ir.LoadArray(LDGS, vArgs, 1, 2) },
		"array-id":     func(ir *IR) { ir.LoadArray(LDGA, VarRef{Name: "a", ID: 0x100, Scope: ScopeGlobal}, 1, 2) },
		"conflict": func(ir *IR) {
			ir.LoadVar(LDGS, vGlob, 1)
			other := vGlob
			other.Type = IntType(4)
			ir.StoreVar(STGS, other, 1)
		},
		"xlate": func(ir *IR) { ir.Xlate(ADD, XlateRef{}, 1) },
	} {
		var ir IR
		build(&ir)
		ir.Emit(Ret(1))
		if _, err := Assemble(&ir); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestAssembleRelocs: which symbol loads get relocations in each link
// mode, and the D_ASRELO refusal without -xknodefs/-xunodefs.
func TestAssembleRelocs(t *testing.T) {
	kern := Symbol{Name: "ticks", Object: "kernel", Primary: true}
	mod := Symbol{Name: "zfs_arc_max", Object: "zfs"}
	user := Symbol{Name: "environ", Object: "libc.so.7", User: true}
	build := func(mode LinkMode, knodef, unodef bool) (*Object, error) {
		ir := IR{Link: mode, KNoDefs: knodef, UNoDefs: unodef, Ret: i64}
		ir.SetxSym(kern, 0x1000, 1)
		ir.SetxSym(mod, 0x2000, 2)
		ir.SetxSym(user, 0x3000, 3)
		ir.Emit(Ret(1))
		return Assemble(&ir)
	}
	type want struct{ k, u []string }
	for _, c := range []struct {
		mode LinkMode
		want want
	}{
		{LinkKernel, want{nil, []string{"environ"}}},
		{LinkPrimary, want{[]string{"zfs_arc_max"}, []string{"environ"}}},
		{LinkDynamic, want{[]string{"ticks", "zfs_arc_max"}, []string{"environ"}}},
		{LinkStatic, want{nil, nil}},
	} {
		o, err := build(c.mode, true, true)
		if err != nil {
			t.Fatalf("mode %d: %v", c.mode, err)
		}
		names := func(rs []Relo) (s []string) {
			for _, r := range rs {
				n, _ := o.Str(r.Name)
				s = append(s, n)
				if r.Type != RelocSetx || o.Ints[r.Offset/8] == 0 {
					t.Errorf("mode %d: relocation %+v", c.mode, r)
				}
			}
			return s
		}
		if diff := cmp.Diff(c.want, want{names(o.KRelo), names(o.URelo)}, cmp.AllowUnexported(want{})); diff != "" {
			t.Errorf("mode %d (-want +got):\n%s", c.mode, diff)
		}
		if err := Validate(o, Limits{}); err != nil {
			t.Errorf("mode %d: %v", c.mode, err)
		}
	}

	_, err := build(LinkKernel, false, false)
	var re *RelocError
	if !errors.As(err, &re) || err.Error() != "relocation remains against user symbol libc.so.7``environ (offset 0x3)" {
		t.Errorf("user relocation: %v", err)
	}
	_, err = build(LinkDynamic, false, true)
	if err == nil || err.Error() != "relocation remains against primary kernel symbol kernel`ticks (offset 0x1)" {
		t.Errorf("kernel relocation: %v", err)
	}
	_, err = build(LinkPrimary, false, true)
	if err == nil || err.Error() != "relocation remains against loadable kernel symbol zfs`zfs_arc_max (offset 0x2)" {
		t.Errorf("module relocation: %v", err)
	}
}

func TestAssembleDestructiveAndXlate(t *testing.T) {
	var ir IR
	ir.Emit(Call(SubrStrlen, 1))
	if o, _ := Assemble(&ir); o.Destructive {
		t.Error("strlen makes the DIFO destructive")
	}
	ir.Emit(Call(SubrCopyoutstr, 1))
	ir.Xlate(XLATE, XlateRef{Xlator: 3, Member: 1, Name: "pr_pid", Type: "pid_t"}, 2)
	ir.Xlate(XLARG, XlateRef{Xlator: 3, Arg: 0, Name: "pr_ppid", Type: "pid_t"}, 3)
	ir.Emit(Ret(1))
	o, err := Assemble(&ir)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Destructive {
		t.Error("copyoutstr does not make the DIFO destructive")
	}
	if o.Code[2] != Xlate(XLATE, 0, 2) || o.Code[3] != Xlate(XLARG, 1, 3) || len(o.Xlate) != 2 ||
		o.Xlate[1].Name != "pr_ppid" {
		t.Errorf("xlate: %v %+v", o.Code, o.Xlate)
	}
}

// TestReset: an IR reused after Reset assembles what a new IR would, and
// the objects assembled before keep their contents; tables past the
// size that is searched linearly intern as before.
func TestReset(t *testing.T) {
	build := func(ir *IR, n int) {
		ir.Ret = i64
		l := ir.NewLabel()
		ir.Emit(Mov(0, 3))
		ir.LoadVar(LDGS, vExec, 1)
		ir.Sets("sshd", 2)
		ir.Emit(Cmp(SCMP, 1, 2))
		ir.Branch(BE, l)
		for i := range n {
			ir.Setx(uint64(1000+i%(n/2+1)), 3)
			ir.Sets(strings.Repeat("s", 1+i%(n/2+1)), 4)
		}
		ir.StoreVar(STTS, vSelfTS, 3)
		ir.LoadVar(LDGS, vTS, 3)
		ir.StoreVar(STGS, vGlob, 3)
		for pass := range 2 {
			for i := range n / 2 {
				g := VarRef{Name: fmt.Sprint("g", i), ID: VarOtherUBase + 2 + uint32(i), Kind: KindScalar, Scope: ScopeGlobal, Type: i64}
				if pass == 0 {
					ir.StoreVar(STGS, g, 3)
				} else {
					ir.LoadVar(LDGS, g, 3)
				}
			}
		}
		ir.Mark(l)
		ir.Emit(Ret(3))
	}
	var reused IR
	var kept []*Object
	var want []*Object
	for _, n := range []int{40, 3, 0, 2 * smallTable, 5} {
		reused.Reset()
		build(&reused, n)
		kept = append(kept, assemble(t, &reused))
		var fresh IR
		build(&fresh, n)
		want = append(want, assemble(t, &fresh))
	}
	if diff := cmp.Diff(want, kept); diff != "" {
		t.Errorf("objects of a reused IR differ from a new IR's (-new +reused):\n%s", diff)
	}
	if n := len(want[0].Ints); n != 21 {
		t.Errorf("40 setx of 21 values made %d integer table entries", n)
	}
	if n := len(want[0].Vars); n != 24 {
		t.Errorf("24 variables made %d variable table entries", n)
	}
	for _, v := range want[0].Vars {
		if v.ID >= VarOtherUBase+2 && v.Flags != FlagRef|FlagMod {
			t.Errorf("variable %d stored and loaded has flags %#x", v.ID, v.Flags)
		}
	}
}
