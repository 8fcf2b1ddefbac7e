package enabling_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/doftest"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

// asDOF turns what Load gives back into the program it was written
// from.
func asDOF(p *enabling.Program) *dof.Program {
	out := &dof.Program{Options: p.Options, Providers: p.Providers}
	for _, e := range p.ECBs {
		d := dof.ECB{Probe: e.Probe, Pred: dofDIFO(e.Pred), UArg: e.UArg}
		for _, a := range e.Actions {
			d.Actions = append(d.Actions, dof.Action{Kind: a.Kind, NTuple: a.NTuple, Arg: a.Arg,
				Format: a.Format, UArg: a.UArg, DIFO: dofDIFO(a.DIFO)})
		}
		out.ECBs = append(out.ECBs, d)
	}
	return out
}

func dofType(t dif.Type) dof.DIFType {
	return dof.DIFType{Kind: t.Kind, CKind: t.CtfKind, Flags: t.Flags, Size: t.Size}
}

// dofDIFO turns a DIFO as Load gives it back into the one written.
func dofDIFO(o *dif.Object) *dof.DIFO {
	if o == nil {
		return nil
	}
	d := &dof.DIFO{Ret: dofType(o.Ret), Ints: o.Ints, Strs: o.Strs}
	for _, in := range o.Code {
		d.Code = append(d.Code, uint32(in))
	}
	for _, v := range o.Vars {
		d.Vars = append(d.Vars, dof.DIFVar{Name: v.Name, ID: v.ID, Kind: v.Kind, Scope: v.Scope,
			Flags: v.Flags, Type: dofType(v.Type)})
	}
	for _, r := range o.KRelo {
		d.KRelo = append(d.KRelo, dof.RelDesc{Name: r.Name, Type: dof.RelType(r.Type), Offset: r.Offset, Data: r.Data})
	}
	for _, r := range o.URelo {
		d.URelo = append(d.URelo, dof.RelDesc{Name: r.Name, Type: dof.RelType(r.Type), Offset: r.Offset, Data: r.Data})
	}
	return d
}

func write(t testing.TB, p *dof.Program, opts *dof.Options) []byte {
	t.Helper()
	b, err := dof.Write(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	for _, n := range doftest.Programs() {
		t.Run(n.Name, func(t *testing.T) {
			for _, opts := range []*dof.Options{nil, {Comments: "kdtrace", Model: dof.ModelILP32}} {
				b := write(t, n.Prog, opts)
				got, err := enabling.Load(b, &enabling.Config{Helper: n.Helper})
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if diff := cmp.Diff(n.Prog, asDOF(got), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("Load(Write(p)) differs from p (-want +got):\n%s", diff)
				}
				if opts != nil && got.Model != dof.ModelILP32 {
					t.Errorf("model %d", got.Model)
				}
				if len(got.Warnings) != 0 {
					t.Errorf("warnings: %q", got.Warnings)
				}
			}
		})
	}
}

// TestDestructive checks that a program is destructive when a
// destructive action or DIF calling copyout() or copyoutstr() is
// anywhere in an ECB, not only in a DIFEXPR action's expression, where
// the kernel looks.
func TestDestructive(t *testing.T) {
	// callDIFO calls subr and returns 1 as an int of size bytes.
	callDIFO := func(subr uint32, size uint32) *dof.DIFO {
		return &dof.DIFO{Ret: doftest.Int(size), Code: []uint32{doftest.Call(subr, 1), doftest.SetX(0, 1), doftest.Ret(1)},
			Ints: []uint64{1}}
	}
	out, outstr, safe := callDIFO(dif.SubrCopyout, 8), callDIFO(dif.SubrCopyoutstr, 8), callDIFO(dif.SubrStrlen, 8)
	begin := dof.ProbeSpec{Provider: "dtrace", Name: "BEGIN"}
	trace := dof.Action{Kind: dof.ActDIFExpr, DIFO: doftest.Const(1, 8)}
	// sum is @[key] = sum(arg): the key, then the aggregation.
	sum := func(key, arg *dof.DIFO) []dof.Action {
		return []dof.Action{{Kind: dof.ActDIFExpr, DIFO: key}, {Kind: dof.AggSum, NTuple: 1, DIFO: arg}}
	}
	tests := []struct {
		name string
		ecb  dof.ECB
		want bool
	}{
		{"nothing destructive", dof.ECB{Pred: safe, Actions: append(sum(safe, safe), trace)}, false},
		{"destructive action", dof.ECB{Actions: []dof.Action{{Kind: dof.ActRaise, DIFO: doftest.Const(9, 4)}}}, true},
		{"expression", dof.ECB{Actions: []dof.Action{{Kind: dof.ActDIFExpr, DIFO: out}}}, true},
		{"predicate", dof.ECB{Pred: outstr, Actions: []dof.Action{trace}}, true},
		{"printf argument", dof.ECB{Actions: []dof.Action{{Kind: dof.ActPrintf, Format: "%d", DIFO: out}}}, true},
		{"aggregation key", dof.ECB{Actions: sum(outstr, safe)}, true},
		{"aggregation argument", dof.ECB{Actions: sum(safe, out)}, true},
		{"speculate", dof.ECB{Actions: []dof.Action{{Kind: dof.ActSpeculate, DIFO: outstr}, trace}}, true},
		{"exit", dof.ECB{Actions: []dof.Action{{Kind: dof.ActExit, DIFO: callDIFO(dif.SubrCopyout, 4)}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.ecb
			e.Probe = begin
			// A harmless ECB first: one destructive ECB is enough.
			p := &dof.Program{ECBs: []dof.ECB{{Probe: begin, Actions: []dof.Action{trace}}, e}}
			k, err := enabling.Load(write(t, p, nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			if k.Destructive != tt.want {
				t.Errorf("Destructive = %v, want %v", k.Destructive, tt.want)
			}
		})
	}
}

// TestStrSizeDefault checks that string variables of size 0 get the
// default string size, as dtrace_dof_difo gives them.
func TestStrSizeDefault(t *testing.T) {
	v := dof.DIFVar{ID: 0x500, Kind: dof.VarKindScalar, Scope: dof.VarScopeGlobal,
		Type: dof.DIFType{Kind: dof.TypeString, Flags: dof.TypeByRef}}
	builtin := v
	builtin.ID = 0x118
	p := &dof.Program{ECBs: []dof.ECB{{Actions: []dof.Action{{Kind: dof.ActDIFExpr, DIFO: &dof.DIFO{
		Ret: doftest.Int(8), Code: []uint32{doftest.Ret(0)}, Strs: []byte("s\x00"),
		Vars: []dof.DIFVar{v, builtin},
	}}}}}}
	got, err := enabling.Load(write(t, p, nil), &enabling.Config{StrSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	vars := got.ECBs[0].Actions[0].DIFO.Vars
	if vars[0].Type.Size != 1000 || vars[1].Type.Size != 0 {
		t.Errorf("sizes %d and %d, want 1000 and 0", vars[0].Type.Size, vars[1].Type.Size)
	}
}

func TestSharedDIFO(t *testing.T) {
	b := write(t, doftest.ByName("begin-trace"), nil)
	f, err := dof.Read(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Make the ECB's predicate the action's DIFO too.
	e := secIdx(f, dof.SectECBDesc, 0)
	putData32(b, f, e, 4, uint32(secIdx(f, dof.SectDIFOHdr, 0)))
	got, err := enabling.Load(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.ECBs[0].Pred != got.ECBs[0].Actions[0].DIFO {
		t.Error("a DIFOHDR referenced twice gave two DIFOs")
	}
}

func TestOptionsDOF(t *testing.T) {
	opts := []dof.Option{{ID: dof.OptQuiet, Value: 1}, {ID: dof.OptCPU, Value: -1}}
	b, err := dof.OptionsDOF(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := enabling.Load(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(opts, got.Options); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
}

func TestHelperWarnings(t *testing.T) {
	p := doftest.ByName("usdt-provider")
	p.ECBs = append(p.ECBs, dof.ECB{Probe: dof.ProbeSpec{Provider: "syscall"}})
	p.Providers[0].Probes[0].Func = "a_function_name_of_more_than_twenty_bytes"
	got, err := enabling.Load(write(t, p, nil), &enabling.Config{Helper: true, FuncNameLen: 20})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"function name too long: myapp:a_function_name_of_more_than_twenty_bytes",
		"unmatched helpers",
	}
	if diff := cmp.Diff(want, got.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if n := len(got.Providers[0].Probes); n != 1 {
		t.Errorf("%d probes, want the one whose name fits", n)
	}
}

func TestErrorFormat(t *testing.T) {
	b := write(t, doftest.ByName("begin-trace"), nil)
	b[6] = 9
	_, err := enabling.Load(b, nil)
	var ke *enabling.Error
	if !errors.As(err, &ke) {
		t.Fatalf("error %v is no *enabling.Error", err)
	}
	if got, want := err.Error(), "dof: header, offset 0x6: DOF version mismatch"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	b = write(t, doftest.ByName("begin-trace"), nil)
	f, _ := dof.Read(b, nil)
	i := secIdx(f, dof.SectActDesc, 0)
	putSec32(b, f, i, 4, 4)
	_, err = enabling.Load(b, nil)
	want := "dof: section 5 (ACTDESC), offset 0xe4: bad alignment in action description"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestVersion1Helper(t *testing.T) {
	p := doftest.ByName("usdt-provider")
	p.Providers[0].Probes[0].EnOffs = nil
	b := write(t, p, &dof.Options{Version: dof.Version1})
	got, err := enabling.Load(b, &enabling.Config{Helper: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, asDOF(got), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got.Version != dof.Version1 {
		t.Errorf("version %d", got.Version)
	}
}
