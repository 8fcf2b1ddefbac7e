package vm_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
	"github.com/kdtrace/kdtrace/internal/dtracetest"
)

// regs.d's indexes of the registers the tests use.
const (
	rRDI = 27
	rRSI = 28
	rRBP = 29
	rRDX = 31
	rRAX = 33
	rRIP = 36
	rRSP = 39
)

// TestLocals compiles locals->x for locations of every kind DWARF gives
// them and runs the code in the VM over registers and memory laid out as
// the location says: each reads the variable's value.
func TestLocals(t *testing.T) {
	req := &types.Struct{Name: "req", Bytes: 16} // struct req { int id; long len; }
	req.SetMembers([]types.Member{{Name: "id", Type: types.IntType, Offset: 0}, {Name: "len", Type: types.Long, Offset: 64}})
	reqPtr := &types.Pointer{Elem: req}
	small := &types.Struct{Name: "small", Bytes: 4} // struct small { short a, b; }
	small.SetMembers([]types.Member{{Name: "a", Type: types.Short, Offset: 0}, {Name: "b", Type: types.Short, Offset: 16}})
	op := func(code dwarfexpr.OpCode) dwarfexpr.Op { return dwarfexpr.Op{Code: code} }
	reg := func(n int) dwarfexpr.Op { return dwarfexpr.Op{Code: dwarfexpr.OpReg, Reg: n} }
	breg := func(n int, off int64) dwarfexpr.Op { return dwarfexpr.Op{Code: dwarfexpr.OpBreg, Reg: n, Int: off} }
	fbreg := func(off int64) dwarfexpr.Op { return dwarfexpr.Op{Code: dwarfexpr.OpFbreg, Int: off} }
	piece := func(n uint64) dwarfexpr.Op { return dwarfexpr.Op{Code: dwarfexpr.OpPiece, Uint: n} }
	constu := func(n uint64) dwarfexpr.Op { return dwarfexpr.Op{Code: dwarfexpr.OpConstu, Uint: n} }
	addr := func(a uint64) dwarfexpr.Op { return dwarfexpr.Op{Code: dwarfexpr.OpAddr, Uint: a} }

	// Kernel memory: a frame at 0x7000 (rbp), a struct req at 0x9000
	// {7, 4096}, a static at link address 0x1000 placed at 0x51000.
	frame := make([]byte, 0x100)
	binary.LittleEndian.PutUint32(frame[0x80-20:], uint32(0xfffffff9)) // int at rbp-20: -7
	binary.LittleEndian.PutUint64(frame[0x80-32:], 0x9000)             // struct req * at rbp-32
	binary.LittleEndian.PutUint64(frame[0x80+0x18:], 1234)             // long at cfa+8: rsp 0x7008, cfa rsp+8
	reqMem := make([]byte, 16)
	binary.LittleEndian.PutUint32(reqMem, 7)
	binary.LittleEndian.PutUint64(reqMem[8:], 4096)
	static := make([]byte, 8)
	binary.LittleEndian.PutUint64(static, 0xabcdef)
	mem := vm.Segments{{Addr: 0x7000 - 0x80, Data: frame}, {Addr: 0x9000, Data: reqMem}, {Addr: 0x51000, Data: static}}

	kregs := make([]uint64, 41)
	kregs[rRBP] = 0x7000
	kregs[rRSP] = 0x7000 + 8
	kregs[rRDI] = 0xffffffff_fffffffe // int -2 in the low half
	kregs[rRSI] = 0x9000
	kregs[rRAX] = 0x11223344
	kregs[rRDX] = 0x55667788
	kregs[rRIP] = 0xffffffff81000010

	kernel := func(loc dwarfexpr.Expr, typ types.Type) *check.Frame {
		f := &check.Frame{Function: "work", Place: check.Place{
			FrameBase: dwarfexpr.Expr{reg(6)},
			CFA:       check.CFA{Reg: 7, Off: 8},
			Bias:      0x50000,
		}}
		f.Locals = []*check.Local{{Name: "x", Type: typ, Loc: loc, Frame: f}}
		return f
	}
	tests := []struct {
		name  string
		frame *check.Frame
		expr  string
		want  int64
	}{
		{"register int", kernel(dwarfexpr.Expr{reg(5)}, types.IntType), "locals->x", -2},
		{"register unsigned char", kernel(dwarfexpr.Expr{reg(5)}, types.UChar), "locals->x", 0xfe},
		{"register pointer member", kernel(dwarfexpr.Expr{reg(4)}, reqPtr), "locals->x->len", 4096},
		{"register pointer member arithmetic", kernel(dwarfexpr.Expr{reg(4)}, reqPtr), "locals->x->id * 2 + 1", 15},
		{"fbreg from rbp", kernel(dwarfexpr.Expr{fbreg(-20)}, types.IntType), "locals->x", -7},
		{"breg pointer", kernel(dwarfexpr.Expr{breg(6, -32)}, reqPtr), "locals->x->id", 7},
		{"struct in memory", kernel(dwarfexpr.Expr{constu(0x9000)}, req), "locals->x.len", 4096},
		{"call frame cfa", kernel(dwarfexpr.Expr{op(dwarfexpr.OpCallFrameCFA), constu(8), op(dwarfexpr.OpPlus)}, types.Long), "locals->x", 1234},
		{"static with bias", kernel(dwarfexpr.Expr{addr(0x1000)}, types.Long), "locals->x", 0xabcdef},
		{"stack value", kernel(dwarfexpr.Expr{breg(5, 0), constu(3), op(dwarfexpr.OpMul), op(dwarfexpr.OpStackValue)}, types.Long), "locals->x", -6},
		{"implicit value", kernel(dwarfexpr.Expr{{Code: dwarfexpr.OpImplicitValue, Block: []byte{0x2a, 0, 0, 0}}}, types.IntType), "locals->x", 42},
		{"pieces", kernel(dwarfexpr.Expr{reg(0), piece(4), reg(1), piece(4)}, types.Long), "locals->x", 0x5566778811223344},
		{"deref", kernel(dwarfexpr.Expr{breg(6, -32), op(dwarfexpr.OpDeref), {Code: dwarfexpr.OpPlusUconst, Uint: 8}}, types.Long), "locals->x", 4096},
		{"swap and minus", kernel(dwarfexpr.Expr{constu(10), constu(3), op(dwarfexpr.OpSwap), op(dwarfexpr.OpMinus), op(dwarfexpr.OpStackValue)}, types.Long), "locals->x", -7},
		// A struct in registers is read from a copy of them.
		{"struct in two registers", kernel(dwarfexpr.Expr{reg(0), piece(8), reg(1), piece(8)}, req), "locals->x.len", 0x55667788},
		{"struct in two registers, first member", kernel(dwarfexpr.Expr{reg(0), piece(8), reg(1), piece(8)}, req), "locals->x.id", 0x11223344},
		{"struct in a register and memory", kernel(dwarfexpr.Expr{reg(5), piece(8), breg(6, -32), piece(8)}, req), "locals->x.len", 0x9000},
		{"struct of one register", kernel(dwarfexpr.Expr{reg(0)}, small), "locals->x.b", 0x1122},
		{"struct with a piece optimised out", kernel(dwarfexpr.Expr{reg(0), piece(8)}, req), "locals->x.id", 0x11223344},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runLocal(t, "kinst::work:16", tt.frame, tt.expr, &vm.Config{Kernel: mem}, &vm.Context{Regs: kregs})
			if got != tt.want {
				t.Errorf("%s = %#x, want %#x", tt.expr, got, uint64(tt.want))
			}
		})
	}
}

// TestLocalsUser reads locals at a pid probe: registers from uregs[],
// memory with user loads, a static relocated by where the probe's
// address says the object is.
func TestLocalsUser(t *testing.T) {
	// The stack at the probe: the return address at rsp (CFA-8), 99 at
	// the CFA.
	frame := make([]byte, 24)
	binary.LittleEndian.PutUint64(frame, 0x555555554000+0x2040)
	binary.LittleEndian.PutUint64(frame[8:], 99)
	static := make([]byte, 8)
	binary.LittleEndian.PutUint64(static, 31337)
	user := vm.Segments{{Addr: 0x7ffe0000 - 8, Data: frame}, {Addr: 0x555555558010, Data: static}}
	uregs := make([]uint64, 41)
	uregs[rRSP] = 0x7ffe0000 - 8
	uregs[rRIP] = 0x555555555139 // link address 0x1139
	uregs[rRDI] = 5
	entryRDI := dwarfexpr.Expr{{Code: dwarfexpr.OpEntryValue, Sub: []dwarfexpr.Op{{Code: dwarfexpr.OpReg, Reg: 5}}}, {Code: dwarfexpr.OpStackValue}}
	// Each call site's value is its own return address plus 3: only
	// the selected one's is right.
	withCalls := func(f *check.Frame, rets ...uint64) *check.Frame {
		for _, r := range rets {
			f.Locals[0].CallValues = append(f.Locals[0].CallValues, check.CallValue{ReturnPC: r,
				Value: dwarfexpr.Expr{{Code: dwarfexpr.OpConstu, Uint: r + 3}}})
		}
		return f
	}
	mk := func(loc dwarfexpr.Expr, entry bool) *check.Frame {
		f := &check.Frame{Function: "work", Place: check.Place{
			User: true, Entry: entry, PCBias: true, PC: 0x1139,
			FrameBase: dwarfexpr.Expr{{Code: dwarfexpr.OpCallFrameCFA}},
			CFA:       check.CFA{Reg: 7, Off: 8},
		}}
		f.Locals = []*check.Local{{Name: "x", Type: types.Long, Loc: loc, Frame: f}}
		return f
	}
	tests := []struct {
		name  string
		frame *check.Frame
		want  int64
	}{
		{"frame base cfa", mk(dwarfexpr.Expr{{Code: dwarfexpr.OpFbreg, Int: 0}}, false), 99},
		{"static in a PIE", mk(dwarfexpr.Expr{{Code: dwarfexpr.OpAddr, Uint: 0x4010}}, false), 31337},
		{"entry value", mk(dwarfexpr.Expr{{Code: dwarfexpr.OpEntryValue, Sub: []dwarfexpr.Op{{Code: dwarfexpr.OpReg, Reg: 5}}}, {Code: dwarfexpr.OpStackValue}}, true), 5},
		// Past the entry, from the call site the return address
		// selects: 0x2040 linked, at CFA-8 = rsp, placed with the
		// probe's bias.
		{"entry value from a call site", withCalls(mk(entryRDI, false), 0x2000, 0x2040), 0x2040 + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runLocal(t, "pid1:a.out:work:0", tt.frame, "locals->x", &vm.Config{User: user}, &vm.Context{URegs: uregs})
			if got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
	// Called from no call site it knows, the value faults.
	t.Run("entry value from another caller", func(t *testing.T) {
		f := withCalls(mk(entryRDI, false), 0x2000, 0x2080)
		m := check.ProbeMatch{Count: 1, Locals: func() (*check.Frame, error) { return f, nil }}
		_, _, p, err := dtracetest.CompileWith("t.d", []byte("pid1:a.out:work:0 { trace(locals->x); }"), nil,
			&check.Config{Probes: dtracetest.Probes{"pid1:a.out:work:0": m}})
		if err != nil {
			t.Fatal(err)
		}
		machine := vm.New(&vm.Config{User: user})
		machine.BeginFiring()
		machine.BeginClause()
		if v, err := machine.Run(emit.Object(p.ECBs[0].Actions[0].DIFO), &vm.Context{URegs: uregs}); err == nil {
			t.Errorf("got %#x, want a fault", v)
		}
	})
}

// TestLocalsErrors: what the checker and the code generator refuse,
// with their tags.
func TestLocalsErrors(t *testing.T) {
	mk := func(entry bool, locals ...*check.Local) *check.Frame {
		f := &check.Frame{Function: "work", Place: check.Place{Entry: entry}}
		for _, l := range locals {
			l.Frame = f
		}
		f.Locals = locals
		return f
	}
	long := types.Long
	pair := &types.Struct{Name: "pair", Bytes: 16}
	pair.SetMembers([]types.Member{{Name: "a", Type: long}, {Name: "b", Type: long, Offset: 64}})
	reg0 := dwarfexpr.Expr{{Code: dwarfexpr.OpReg, Reg: 0}}
	entryRDI := dwarfexpr.Expr{{Code: dwarfexpr.OpEntryValue, Sub: []dwarfexpr.Op{{Code: dwarfexpr.OpReg, Reg: 5}}}, {Code: dwarfexpr.OpStackValue}}
	tests := []struct {
		name   string
		frame  *check.Frame
		err    error
		expr   string
		tag    diag.Tag
		substr string
	}{
		{"no such variable", mk(false, &check.Local{Name: "count", Type: long, Loc: reg0}, &check.Local{Name: "buf", Type: long, Loc: reg0}),
			nil, "locals->cont", diag.D_LOCALS_UNDEF, "cont is not a variable or parameter of work at kinst::work:16 (did you mean count?); in scope there: count, buf"},
		{"optimised out", mk(false, &check.Local{Name: "n", Type: long, Unavailable: "optimized out at work+0x10; available at [work+0x0, work+0x8)"}),
			nil, "locals->n", diag.D_LOCALS_OPT, "locals->n is not available at kinst::work:16: optimized out at work+0x10; available at [work+0x0, work+0x8)"},
		{"no frame", nil, errors.New("no debugging information for work"), "locals->n", diag.D_LOCALS_NONE, "locals->n is not available at kinst::work:16: no debugging information for work"},
		{"entry value after entry", mk(false, &check.Local{Name: "n", Type: long, Loc: entryRDI}),
			nil, "locals->n", diag.D_LOCALS_LOC, "which is not kept after the function's first instruction"},
		{"xmm register", mk(false, &check.Local{Name: "d", Type: long, Loc: dwarfexpr.Expr{{Code: dwarfexpr.OpReg, Reg: 17}}}),
			nil, "locals->d", diag.D_LOCALS_LOC, "lives in DWARF register 17, which regs[] does not hold"},
		{"branch", mk(false, &check.Local{Name: "b", Type: long, Loc: dwarfexpr.Expr{{Code: dwarfexpr.OpLit, Uint: 1}, {Code: dwarfexpr.OpBra, Int: 2}}}),
			nil, "locals->b", diag.D_LOCALS_LOC, "cannot read: DW_OP_bra"},
		{"big pieces", mk(false, &check.Local{Name: "p", Type: long, Loc: dwarfexpr.Expr{{Code: dwarfexpr.OpReg, Reg: 0}, {Code: dwarfexpr.OpPiece, Uint: 8}, {Code: dwarfexpr.OpReg, Reg: 1}, {Code: dwarfexpr.OpPiece, Uint: 8}}}),
			nil, "locals->p", diag.D_LOCALS_LOC, "only values of 8 bytes at most"},
		{"frame base missing", mk(false, &check.Local{Name: "f", Type: long, Loc: dwarfexpr.Expr{{Code: dwarfexpr.OpFbreg, Int: -8}}}),
			nil, "locals->f", diag.D_LOCALS_LOC, "frame base, which the function does not give"},
		{"member of a piece optimised out", mk(false, &check.Local{Name: "s", Type: pair, Loc: dwarfexpr.Expr{{Code: dwarfexpr.OpReg, Reg: 0}, {Code: dwarfexpr.OpPiece, Uint: 8}}}),
			nil, "locals->s.b", diag.D_LOCALS_OPT, "locals->s.b is not available at kinst::work:16: it is in the part of s optimized out there (DW_OP_reg0; DW_OP_piece 8)"},
		{"member of a hole", mk(false, &check.Local{Name: "s", Type: pair, Loc: dwarfexpr.Expr{{Code: dwarfexpr.OpPiece, Uint: 8}, {Code: dwarfexpr.OpReg, Reg: 0}, {Code: dwarfexpr.OpPiece, Uint: 8}}}),
			nil, "locals->s.a", diag.D_LOCALS_OPT, "it is in the part of s optimized out there"},
		{"whole struct in part optimised out", mk(false, &check.Local{Name: "s", Type: pair, Loc: dwarfexpr.Expr{{Code: dwarfexpr.OpReg, Reg: 0}, {Code: dwarfexpr.OpPiece, Uint: 8}}}),
			nil, "locals->s", diag.D_LOCALS_LOC, "is in part optimised out at the probe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := check.ProbeMatch{Count: 1, Locals: func() (*check.Frame, error) { return tt.frame, tt.err }}
			src := "kinst::work:16 { trace(" + tt.expr + "); }"
			_, _, _, err := dtracetest.CompileWith("t.d", []byte(src), nil, &check.Config{Probes: dtracetest.Probes{"kinst::work:16": m}})
			var de *diag.Error
			if !errors.As(err, &de) {
				t.Fatalf("error %v, want a *diag.Error", err)
			}
			if de.Tag != tt.tag || !strings.Contains(de.Error(), tt.substr) {
				t.Errorf("error %s: %v, want %s containing %q", de.Tag, de, tt.tag, tt.substr)
			}
		})
	}
	t.Run("not at a kinst or pid probe", func(t *testing.T) {
		_, _, _, err := dtracetest.CompileWith("t.d", []byte("BEGIN { trace(locals->x); }"), nil, &check.Config{})
		var de *diag.Error
		if !errors.As(err, &de) || de.Tag != diag.D_LOCALS_NONE {
			t.Errorf("error %v, want D_LOCALS_NONE", err)
		}
	})
}

// runLocal compiles "probe { trace(expr); }" where locals-> reads frame
// and runs its action.
func runLocal(t *testing.T, probe string, frame *check.Frame, expr string, cfg *vm.Config, ctx *vm.Context) int64 {
	t.Helper()
	m := check.ProbeMatch{Count: 1, Locals: func() (*check.Frame, error) { return frame, nil }}
	src := probe + " { trace(" + expr + "); }"
	_, _, p, err := dtracetest.CompileWith("t.d", []byte(src), nil, &check.Config{Probes: dtracetest.Probes{probe: m}})
	if err != nil {
		t.Fatal(err)
	}
	machine := vm.New(cfg)
	machine.BeginFiring()
	machine.BeginClause()
	v, err := machine.Run(emit.Object(p.ECBs[0].Actions[0].DIFO), ctx)
	if err != nil {
		t.Fatalf("%v\n%s", err, listing(p))
	}
	return int64(v)
}

// TestLocalsPerDescription: a clause of two descriptions where x lives
// in other registers gets code of its own for each.
func TestLocalsPerDescription(t *testing.T) {
	frame := func(reg int) check.ProbeMatch {
		f := &check.Frame{Function: "work"}
		f.Locals = []*check.Local{{Name: "x", Type: types.Long, Loc: dwarfexpr.Expr{{Code: dwarfexpr.OpReg, Reg: reg}}, Frame: f}}
		return check.ProbeMatch{Count: 1, Locals: func() (*check.Frame, error) { return f, nil }}
	}
	probes := dtracetest.Probes{"kinst::work:4": frame(5), "kinst::work:9": frame(0), "kinst::work:12": frame(5)}
	src := "kinst::work:4, kinst::work:9, kinst::work:12 { trace(locals->x); }"
	_, _, p, err := dtracetest.CompileWith("t.d", []byte(src), nil, &check.Config{Probes: probes})
	if err != nil {
		t.Fatal(err)
	}
	regs := make([]uint64, 41)
	regs[rRDI], regs[rRAX] = 11, 22
	want := []uint64{11, 22, 11}
	if len(p.ECBs) != len(want) {
		t.Fatalf("%d ECBs", len(p.ECBs))
	}
	for i, ecb := range p.ECBs {
		m := vm.New(&vm.Config{})
		m.BeginFiring()
		m.BeginClause()
		v, err := m.Run(emit.Object(ecb.Actions[0].DIFO), &vm.Context{Regs: regs})
		if err != nil || v != want[i] {
			t.Errorf("%s: %d, %v; want %d", ecb.Probe, v, err, want[i])
		}
	}
}

// FuzzLocals compiles locals->x for locations made of any operations,
// at places of every kind, and runs what compiles: the code generator
// refuses with a diagnostic or generates code the VM runs, and neither
// panics.
func FuzzLocals(f *testing.F) {
	f.Add([]byte{0, 5, 1, 3})
	f.Add([]byte{3, 6, 0xec, 9, 8, 2, 4})
	f.Add([]byte{1, 0, 7, 4, 1, 1, 7, 4})
	codes := []dwarfexpr.OpCode{
		dwarfexpr.OpReg, dwarfexpr.OpBreg, dwarfexpr.OpFbreg, dwarfexpr.OpCallFrameCFA, dwarfexpr.OpAddr,
		dwarfexpr.OpConstu, dwarfexpr.OpConsts, dwarfexpr.OpLit, dwarfexpr.OpPlusUconst, dwarfexpr.OpPlus,
		dwarfexpr.OpMinus, dwarfexpr.OpMul, dwarfexpr.OpDiv, dwarfexpr.OpMod, dwarfexpr.OpAnd, dwarfexpr.OpShl,
		dwarfexpr.OpShr, dwarfexpr.OpShra, dwarfexpr.OpNeg, dwarfexpr.OpNot, dwarfexpr.OpDup, dwarfexpr.OpOver,
		dwarfexpr.OpPick, dwarfexpr.OpDrop, dwarfexpr.OpSwap, dwarfexpr.OpRot, dwarfexpr.OpDeref,
		dwarfexpr.OpDerefSize, dwarfexpr.OpStackValue, dwarfexpr.OpImplicitValue, dwarfexpr.OpPiece,
		dwarfexpr.OpEntryValue, dwarfexpr.OpBra, dwarfexpr.OpNop, dwarfexpr.OpBitPiece,
	}
	req := &types.Struct{Name: "req", Bytes: 16}
	req.SetMembers([]types.Member{{Name: "id", Type: types.IntType, Offset: 0}, {Name: "len", Type: types.Long, Offset: 64}})
	typs := []struct {
		t    types.Type
		expr string
	}{
		{types.IntType, "locals->x"}, {types.Long, "locals->x + 1"}, {types.UChar, "locals->x"},
		{&types.Pointer{Elem: req}, "locals->x->len"}, {req, "locals->x.len"}, {req, "&locals->x"},
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 2 {
			return
		}
		ty := typs[int(b[0])%len(typs)]
		place := check.Place{User: b[1]&1 != 0, Entry: b[1]&2 != 0, PCBias: b[1]&4 != 0, PC: 0x1000, Bias: uint64(b[1]) << 12}
		switch b[1] >> 3 & 3 {
		case 1:
			place.FrameBase = dwarfexpr.Expr{{Code: dwarfexpr.OpReg, Reg: 6}}
		case 2:
			place.FrameBase = dwarfexpr.Expr{{Code: dwarfexpr.OpCallFrameCFA}}
		case 3:
			place.FrameBase = dwarfexpr.Expr{{Code: dwarfexpr.OpBreg, Reg: 7, Int: 16}}
		}
		place.CFA = check.CFA{Reg: 7, Off: 8}
		if b[1]&0x20 != 0 {
			place.CFA = check.CFA{Err: errors.New("no CFI")}
		}
		var loc dwarfexpr.Expr
		for i := 2; i+1 < len(b) && len(loc) < 16; i += 2 {
			op := dwarfexpr.Op{Code: codes[int(b[i])%len(codes)], Reg: int(b[i+1] % 20), Int: int64(int8(b[i+1])), Uint: uint64(b[i+1] % 12)}
			switch op.Code {
			case dwarfexpr.OpImplicitValue:
				op.Block = b[i+1 : i+1+int(b[i+1]%10)%(len(b)-i)]
			case dwarfexpr.OpEntryValue:
				op.Sub = dwarfexpr.Expr{{Code: dwarfexpr.OpReg, Reg: int(b[i+1] % 18)}}
			}
			loc = append(loc, op)
		}
		if len(loc) == 0 {
			return
		}
		fr := &check.Frame{Function: "work", Place: place}
		fr.Locals = []*check.Local{{Name: "x", Type: ty.t, Loc: loc, Frame: fr}}
		m := check.ProbeMatch{Count: 1, Locals: func() (*check.Frame, error) { return fr, nil }}
		src := "kinst::work:1 { trace(" + ty.expr + "); }"
		_, _, p, err := dtracetest.CompileWith("t.d", []byte(src), nil, &check.Config{Probes: dtracetest.Probes{"kinst::work:1": m}})
		if err != nil {
			var de *diag.Error
			if !errors.As(err, &de) {
				t.Fatalf("%s at %s: %v is no diagnostic", ty.expr, loc, err)
			}
			return
		}
		regs := make([]uint64, 41)
		for i := range regs {
			regs[i] = uint64(i) * 0x1000
		}
		mem := vm.Segments{{Addr: 0, Data: make([]byte, 0x30000)}}
		machine := vm.New(&vm.Config{Kernel: mem, User: mem})
		machine.BeginFiring()
		machine.BeginClause()
		machine.Run(emit.Object(p.ECBs[0].Actions[0].DIFO), &vm.Context{Regs: regs, URegs: regs})
	})
}
