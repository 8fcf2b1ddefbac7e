package bpf_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/bpf"
	"github.com/kdtrace/kdtrace/dif"
)

// TestDIFO runs hand-written DIFOs, for what D rarely generates: loads of
// every width from memory that exists (the string table), every branch,
// nop, writes to %r0, code after ret.
func TestDIFO(t *testing.T) {
	needBPF(t)
	strs := []byte("\x00\x80\x81\x82\x83\x84\x85\x86\x87\xf0\x01\x02\x03\x04\x05\x06\x07\x00")
	i64 := dif.IntType(8)
	load := func(op dif.Op, off uint16) *dif.Object {
		return &dif.Object{Strs: strs, Ret: i64, Code: []dif.Instr{
			dif.Sets(off, 1), dif.Load(op, 1, 2), dif.Ret(2)}}
	}
	var tests []*dif.Object
	for _, op := range []dif.Op{dif.LDSB, dif.LDSH, dif.LDSW, dif.LDX, dif.LDUB, dif.LDUH, dif.LDUW} {
		for _, off := range []uint16{1, 9} {
			tests = append(tests, load(op, off))
		}
	}
	ints := []uint64{0, 1, 1 << 63, ^uint64(0), 5}
	for _, br := range []dif.Op{dif.BA, dif.BE, dif.BNE, dif.BG, dif.BGU, dif.BGE, dif.BGEU, dif.BL, dif.BLU, dif.BLE, dif.BLEU} {
		for a := range ints {
			for b := range ints {
				// cmp a, b; bXX 5; setx 1 → r3; ret r3; setx 2 → r3; ret r3
				tests = append(tests, &dif.Object{Ints: append(slices.Clone(ints), 111, 222), Ret: i64, Code: []dif.Instr{
					dif.Setx(uint16(a), 1), dif.Setx(uint16(b), 2), dif.Cmp(dif.CMP, 1, 2),
					dif.Branch(br, 6), dif.Setx(5, 3), dif.Ret(3), dif.Setx(6, 3), dif.Ret(3)}})
			}
			// tst a; bXX
			tests = append(tests, &dif.Object{Ints: append(slices.Clone(ints), 111, 222), Ret: i64, Code: []dif.Instr{
				dif.Setx(uint16(a), 1), dif.Tst(1), dif.Branch(br, 5), dif.Setx(5, 3), dif.Ret(3), dif.Setx(6, 3), dif.Ret(3)}})
		}
	}
	tests = append(tests,
		// A branch before any cmp or tst: no condition holds.
		&dif.Object{Ints: []uint64{7, 8}, Ret: i64, Code: []dif.Instr{
			dif.Setx(0, 1), dif.Branch(dif.BE, 3), dif.Setx(1, 1), dif.Ret(1)}},
		// nop, and code no path reaches, which the verifier would refuse.
		&dif.Object{Ints: []uint64{7, 8}, Ret: i64, Code: []dif.Instr{
			dif.Nop(), dif.Setx(0, 1), dif.Branch(dif.BA, 4), dif.Setx(1, 1), dif.Nop(), dif.Ret(1), dif.Setx(1, 1), dif.Ret(1)}},
		// Two branches to one place.
		&dif.Object{Ints: []uint64{7, 8}, Ret: i64, Code: []dif.Instr{
			dif.Setx(0, 1), dif.Tst(1), dif.Branch(dif.BNE, 5), dif.Branch(dif.BE, 5), dif.Setx(1, 1), dif.Ret(1)}},
	)
	for i, o := range tests {
		want := onVM(t, []*dif.Object{o})
		got := inKernel(t, []*dif.Object{o})
		if !slices.Equal(got, want) {
			t.Errorf("%d: %v: kernel %v, vm %v", i, o.Code, got, want)
		}
	}
	t.Logf("%d DIFOs", len(tests))
}

// TestRandom runs random straight-line and branching DIFOs of ALU
// operations, compares and branches on interesting values both ways.
func TestRandom(t *testing.T) {
	needBPF(t)
	r := rand.New(rand.NewPCG(1, 2))
	ints := []uint64{0, 1, 2, 3, 7, 63, 64, 65, 127, 0x80, 0xffffffff, 1 << 31, 1 << 63, 1<<63 - 1, ^uint64(0), ^uint64(6)}
	alu := []dif.Op{dif.OR, dif.XOR, dif.AND, dif.SLL, dif.SRL, dif.SRA, dif.SUB, dif.ADD, dif.MUL,
		dif.SDIV, dif.UDIV, dif.SREM, dif.UREM}
	branches := []dif.Op{dif.BA, dif.BE, dif.BNE, dif.BG, dif.BGU, dif.BGE, dif.BGEU, dif.BL, dif.BLU, dif.BLE, dif.BLEU}
	const n = 2000
	reg := func() uint8 { return uint8(1 + r.IntN(dif.NRegs-1)) }
	for i := range n {
		o := &dif.Object{Ints: append(slices.Clone(ints), r.Uint64()), Ret: dif.IntType(8)}
		for rd := uint8(1); rd < dif.NRegs; rd++ {
			o.Code = append(o.Code, dif.Setx(uint16(r.IntN(len(o.Ints))), rd))
		}
		body := 10 + r.IntN(20)
		start := len(o.Code)
		for len(o.Code) < start+body {
			switch k := r.IntN(10); {
			case k < 6:
				op := alu[r.IntN(len(alu))]
				o.Code = append(o.Code, dif.ALU(op, uint8(r.IntN(dif.NRegs)), uint8(r.IntN(dif.NRegs)), reg()))
			case k == 6:
				if r.IntN(2) == 0 {
					o.Code = append(o.Code, dif.Not(uint8(r.IntN(dif.NRegs)), reg()))
				} else {
					o.Code = append(o.Code, dif.Mov(uint8(r.IntN(dif.NRegs)), reg()))
				}
			case k == 7:
				o.Code = append(o.Code, dif.Cmp(dif.CMP, uint8(r.IntN(dif.NRegs)), uint8(r.IntN(dif.NRegs))))
			case k == 8:
				o.Code = append(o.Code, dif.Tst(uint8(r.IntN(dif.NRegs))))
			default:
				// Forward, to somewhere in the body or to the final ret.
				target := len(o.Code) + 1 + r.IntN(start+body-len(o.Code))
				o.Code = append(o.Code, dif.Branch(branches[r.IntN(len(branches))], uint32(target)))
			}
		}
		o.Code = append(o.Code, dif.Ret(reg()))
		want := onVM(t, []*dif.Object{o})
		got := inKernel(t, []*dif.Object{o})
		if !slices.Equal(got, want) {
			t.Errorf("%d: %v: kernel %v, vm %v", i, o.Code, got, want)
		}
	}
}

// TestRefuse checks that what is not translated yet is refused with an
// error naming the instruction, never translated wrongly.
func TestRefuse(t *testing.T) {
	i64 := dif.IntType(8)
	tests := []struct {
		o    *dif.Object
		want string
	}{
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Call(dif.SubrStrlen, 1), dif.Ret(1)}}, "instruction 0 (call"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Cmp(dif.SCMP, 1, 2), dif.Ret(1)}}, "instruction 0 (scmp"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Nop(), dif.Load(dif.ULDX, 1, 2), dif.Ret(2)}}, "instruction 1 (uldx"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Ldv(dif.LDGS, dif.VarTimestamp, 1), dif.Ret(1)}}, "built-in variable"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Ldv(dif.LDGS, dif.VarOtherUBase, 1), dif.Ret(1)}}, "not in the variable table"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Ldv(dif.LDTS, dif.VarOtherUBase, 1), dif.Ret(1)}}, "not in the variable table"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Branch(dif.BA, 0), dif.Ret(1)}}, "not forward"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Ret(1), dif.Nop()}}, "last DIF instruction is not ret"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Setx(3, 1), dif.Ret(1)}}, "integer table index 3"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.ALU(dif.ADD, 9, 1, 2), dif.Ret(2)}}, "register %r9"},
		{&dif.Object{Ret: i64, Strs: []byte{0, 'a', 0}, Vars: []dif.Var{{Name: 1, ID: dif.VarOtherUBase, Kind: dif.KindScalar,
			Scope: dif.ScopeGlobal, Type: dif.StringType(256)}}, Code: []dif.Instr{dif.Ldv(dif.LDGS, dif.VarOtherUBase, 1), dif.Ret(1)}},
			"by-reference variable a"},
	}
	for _, tt := range tests {
		l := bpf.NewLayout()
		if err := l.Add(tt.o); err != nil {
			t.Fatal(err)
		}
		_, err := bpf.Translate(tt.o, l)
		var e *bpf.Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want an *Error containing %q", tt.o.Code, err, tt.want)
		}
	}
}
