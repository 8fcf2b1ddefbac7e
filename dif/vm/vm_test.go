package vm_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dif/vm"
)

var (
	i64    = dif.IntType(8)
	str256 = dif.StringType(256)
)

// build assembles the code f emits into a DIFO returning ret.
func build(t *testing.T, ret dif.Type, f func(ir *dif.IR)) *dif.Object {
	t.Helper()
	ir := &dif.IR{Ret: ret}
	f(ir)
	o, err := dif.Assemble(ir)
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	return o
}

// run runs o on m and fails the test on an error.
func run(t *testing.T, m *vm.Machine, o *dif.Object, ctx *vm.Context) uint64 {
	t.Helper()
	v, err := m.Run(o, ctx)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, disasm(o))
	}
	return v
}

func disasm(o *dif.Object) string {
	var b strings.Builder
	dif.Disassemble(&b, o, "DIFO")
	return b.String()
}

// faultOf runs o and returns the fault it stops with.
func faultOf(t *testing.T, m *vm.Machine, o *dif.Object, ctx *vm.Context) *vm.Fault {
	t.Helper()
	v, err := m.Run(o, ctx)
	var f *vm.Fault
	if !errors.As(err, &f) {
		t.Fatalf("Run = %#x, %v; want a fault\n%s", v, err, disasm(o))
	}
	return f
}

func scalar(name string, id uint32, scope uint8, t dif.Type) dif.VarRef {
	return dif.VarRef{Name: name, ID: id, Kind: dif.KindScalar, Scope: scope, Type: t}
}

func array(name string, id uint32, scope uint8, t dif.Type) dif.VarRef {
	return dif.VarRef{Name: name, ID: id, Kind: dif.KindArray, Scope: scope, Type: t}
}

const u = dif.VarOtherUBase

func TestALU(t *testing.T) {
	neg := func(v int64) uint64 { return uint64(v) }
	tests := []struct {
		op   dif.Op
		a, b uint64
		want uint64
	}{
		{dif.ADD, 2, 3, 5},
		{dif.ADD, math.MaxUint64, 2, 1},
		{dif.SUB, 2, 3, neg(-1)},
		{dif.MUL, neg(-4), 5, neg(-20)},
		{dif.MUL, 1 << 62, 4, 0},
		{dif.SDIV, neg(-7), 2, neg(-3)},
		{dif.SDIV, 7, neg(-2), neg(-3)},
		{dif.SDIV, 1 << 63, neg(-1), 1 << 63},
		{dif.UDIV, neg(-7), 2, neg(-7) / 2},
		{dif.SREM, neg(-7), 3, neg(-1)},
		{dif.SREM, 7, neg(-3), 1},
		{dif.UREM, neg(-7), 3, neg(-7) % 3},
		{dif.AND, 0xf0f0, 0xff00, 0xf000},
		{dif.OR, 0xf0f0, 0xff00, 0xfff0},
		{dif.XOR, 0xf0f0, 0xff00, 0x0ff0},
		{dif.SLL, 1, 63, 1 << 63},
		{dif.SLL, 1, 64, 1}, // the count is taken modulo 64, as amd64's shl
		{dif.SRL, 1 << 63, 63, 1},
		{dif.SRL, neg(-16), 2, neg(-16) >> 2},
		{dif.SRA, neg(-16), 2, neg(-4)},
		{dif.SRA, 1 << 62, 62, 1},
		{dif.SRA, 1 << 63, 63, neg(-1)},
	}
	for _, tt := range tests {
		o := build(t, i64, func(ir *dif.IR) {
			ir.Setx(tt.a, 1)
			ir.Setx(tt.b, 2)
			ir.Emit(dif.ALU(tt.op, 1, 2, 3))
			ir.Emit(dif.Ret(3))
		})
		if got := run(t, vm.New(nil), o, nil); got != tt.want {
			t.Errorf("%v %#x, %#x = %#x, want %#x", tt.op, tt.a, tt.b, got, tt.want)
		}
	}

	o := build(t, i64, func(ir *dif.IR) {
		ir.Setx(0x1234, 1)
		ir.Emit(dif.Not(1, 2))
		ir.Emit(dif.Mov(2, 3))
		ir.Emit(dif.Ret(3))
	})
	if got := run(t, vm.New(nil), o, nil); got != ^uint64(0x1234) {
		t.Errorf("not, mov = %#x", got)
	}

	// %r0 reads zero; falling off the end returns 0.
	o = build(t, i64, func(ir *dif.IR) {
		ir.Setx(5, 1)
		ir.Emit(dif.ALU(dif.ADD, 0, 1, 2))
		ir.Emit(dif.Ret(2))
	})
	if got := run(t, vm.New(nil), o, nil); got != 5 {
		t.Errorf("add %%r0 = %d", got)
	}
}

func TestDivideByZero(t *testing.T) {
	for _, op := range []dif.Op{dif.SDIV, dif.UDIV, dif.SREM, dif.UREM} {
		o := build(t, i64, func(ir *dif.IR) {
			ir.Setx(7, 1)
			ir.Emit(dif.Nop())
			ir.Emit(dif.ALU(op, 1, 0, 2))
			ir.Emit(dif.Ret(2))
		})
		f := faultOf(t, vm.New(nil), o, nil)
		if f.Code != vm.FaultDivZero || f.PC != 2 || f.Offset() != 8 || f.Instr != o.Code[2] {
			t.Errorf("%v: %+v", op, f)
		}
		want := "vm: divide-by-zero at DIF offset 8 (instruction 2: " + o.Code[2].String() + ")"
		if f.Error() != want {
			t.Errorf("%v: %q, want %q", op, f.Error(), want)
		}
	}
}

// TestBranches checks each branch after cmp and tst, as the kernel
// decides them from the condition codes.
func TestBranches(t *testing.T) {
	minus1 := uint64(math.MaxUint64)
	tests := []struct {
		op   dif.Op
		a, b uint64
		want bool
	}{
		{dif.BA, 1, 2, true},
		{dif.BE, 2, 2, true}, {dif.BE, 1, 2, false},
		{dif.BNE, 2, 2, false}, {dif.BNE, 1, 2, true},
		{dif.BG, 3, 2, true}, {dif.BG, 2, 2, false}, {dif.BG, minus1, 1, false},
		{dif.BGU, minus1, 1, true}, {dif.BGU, 1, 1, false}, {dif.BGU, 1, 2, false},
		{dif.BGE, 2, 2, true}, {dif.BGE, minus1, 0, false}, {dif.BGE, 0, minus1, true},
		{dif.BGEU, 2, 2, true}, {dif.BGEU, 0, minus1, false},
		{dif.BL, minus1, 0, true}, {dif.BL, 2, 2, false}, {dif.BL, 3, 2, false},
		{dif.BLU, 0, minus1, true}, {dif.BLU, minus1, 0, false},
		{dif.BLE, 2, 2, true}, {dif.BLE, minus1, 0, true}, {dif.BLE, 1, 0, false},
		{dif.BLEU, 2, 2, true}, {dif.BLEU, minus1, 0, false}, {dif.BLEU, 0, 1, true},
		// The kernel takes the sign of the difference alone (cc_v is
		// always 0), so a signed comparison whose difference overflows
		// goes the wrong way, in the kernel and here.
		{dif.BL, 1 << 63, 1, false},
		{dif.BG, 1 << 63, 1, true},
	}
	for _, tt := range tests {
		o := build(t, i64, func(ir *dif.IR) {
			yes := ir.NewLabel()
			ir.Setx(tt.a, 1)
			ir.Setx(tt.b, 2)
			ir.Emit(dif.Cmp(dif.CMP, 1, 2))
			ir.Branch(tt.op, yes)
			ir.Emit(dif.Ret(0))
			ir.Mark(yes)
			ir.Setx(1, 3)
			ir.Emit(dif.Ret(3))
		})
		if got := run(t, vm.New(nil), o, nil) == 1; got != tt.want {
			t.Errorf("cmp %#x, %#x; %v: taken %v, want %v", tt.a, tt.b, tt.op, got, tt.want)
		}
	}

	// tst clears every code but z.
	for _, tt := range []struct {
		v    uint64
		op   dif.Op
		want bool
	}{
		{0, dif.BE, true}, {5, dif.BE, false}, {5, dif.BNE, true},
		{minus1, dif.BL, false}, {minus1, dif.BG, true}, {0, dif.BLEU, true}, {5, dif.BGU, true},
	} {
		o := build(t, i64, func(ir *dif.IR) {
			yes := ir.NewLabel()
			ir.Setx(tt.v, 1)
			ir.Emit(dif.Tst(1))
			ir.Branch(tt.op, yes)
			ir.Emit(dif.Ret(0))
			ir.Mark(yes)
			ir.Setx(1, 3)
			ir.Emit(dif.Ret(3))
		})
		if got := run(t, vm.New(nil), o, nil) == 1; got != tt.want {
			t.Errorf("tst %#x; %v: taken %v, want %v", tt.v, tt.op, got, tt.want)
		}
	}
}

func TestStringCompare(t *testing.T) {
	tests := []struct {
		a, b string // "<nil>" is a zero address
		want int
	}{
		{"abc", "abc", 0},
		{"abc", "abd", -1},
		{"abd", "abc", 1},
		{"ab", "abc", -1},
		{"", "a", -1},
		{"<nil>", "", 0},
		{"<nil>", "x", -1},
		{"x", "<nil>", 1},
		{"<nil>", "<nil>", 0},
	}
	for _, tt := range tests {
		o := build(t, i64, func(ir *dif.IR) {
			lt, gt, end := ir.NewLabel(), ir.NewLabel(), ir.NewLabel()
			for i, s := range []string{tt.a, tt.b} {
				if s == "<nil>" {
					ir.Emit(dif.Mov(0, uint8(i+1)))
				} else {
					ir.Sets(s, uint8(i+1))
				}
			}
			ir.Emit(dif.Cmp(dif.SCMP, 1, 2))
			ir.Branch(dif.BL, lt)
			ir.Branch(dif.BG, gt)
			ir.Emit(dif.Mov(0, 3))
			ir.Branch(dif.BA, end)
			ir.Mark(lt)
			ir.Setx(math.MaxUint64, 3)
			ir.Branch(dif.BA, end)
			ir.Mark(gt)
			ir.Setx(1, 3)
			ir.Mark(end)
			ir.Emit(dif.Ret(3))
		})
		if got := int(int64(run(t, vm.New(nil), o, nil))); got != tt.want {
			t.Errorf("scmp %q, %q = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}

	// Strings compare up to the string size only.
	o := build(t, i64, func(ir *dif.IR) {
		ir.Sets("abcX", 1)
		ir.Sets("abcY", 2)
		ir.Emit(dif.Cmp(dif.SCMP, 1, 2))
		yes := ir.NewLabel()
		ir.Branch(dif.BE, yes)
		ir.Emit(dif.Ret(0))
		ir.Mark(yes)
		ir.Setx(1, 3)
		ir.Emit(dif.Ret(3))
	})
	if run(t, vm.New(&vm.Config{StrSize: 3}), o, nil) != 1 {
		t.Error("scmp with strsize 3: abcX != abcY")
	}
}

// kernelMemory is the fake kernel memory of the load tests.
const kbase = 0xffff_f800_0010_0000

func kernelMemory() vm.Segments {
	return vm.Segments{
		{Addr: kbase, Data: []byte{0x80, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xff, 0x7f, 'h', 'i', 0, 0xaa}},
		{Addr: kbase + 0x1000, Data: []byte("kernel string\x00"), ReadOnly: true},
	}
}

func TestLoads(t *testing.T) {
	tests := []struct {
		op   dif.Op
		off  uint64
		want uint64
	}{
		{dif.LDSB, 0, 0xffffffffffffff80},
		{dif.LDUB, 0, 0x80},
		{dif.LDSH, 0, 0xffffffffffffff80},
		{dif.LDUH, 0, 0xff80},
		{dif.LDSH, 1, 0xfffffffffffffeff}, // the kernel on amd64 loads misaligned
		{dif.LDSW, 0, 0xfffffffffffeff80},
		{dif.LDUW, 0, 0xfffeff80},
		{dif.LDX, 0, 0x7ffffffffffeff80},
		{dif.LDUB, 9, 'i'},
		{dif.RLDSB, 0, 0xffffffffffffff80},
		{dif.RLDUW, 4, 0x7fffffff},
		{dif.RLDX, 0, 0x7ffffffffffeff80},
	}
	cfg := &vm.Config{Kernel: kernelMemory()}
	for _, tt := range tests {
		o := build(t, i64, func(ir *dif.IR) {
			ir.Setx(kbase+tt.off, 1)
			ir.Emit(dif.Load(tt.op, 1, 2))
			ir.Emit(dif.Ret(2))
		})
		if got := run(t, vm.New(cfg), o, nil); got != tt.want {
			t.Errorf("%v [base+%d] = %#x, want %#x", tt.op, tt.off, got, tt.want)
		}
		// The same loads from user memory.
		uop := map[dif.Op]dif.Op{
			dif.LDSB: dif.ULDSB, dif.LDUB: dif.ULDUB, dif.LDSH: dif.ULDSH, dif.LDUH: dif.ULDUH,
			dif.LDSW: dif.ULDSW, dif.LDUW: dif.ULDUW, dif.LDX: dif.ULDX,
		}[tt.op]
		if uop == 0 {
			continue
		}
		o = build(t, i64, func(ir *dif.IR) {
			ir.Setx(kbase+tt.off, 1)
			ir.Emit(dif.Load(uop, 1, 2))
			ir.Emit(dif.Ret(2))
		})
		if got := run(t, vm.New(&vm.Config{User: kernelMemory()}), o, nil); got != tt.want {
			t.Errorf("%v [base+%d] = %#x, want %#x", uop, tt.off, got, tt.want)
		}
		if f := faultOf(t, vm.New(cfg), o, nil); f.Code != vm.FaultBadAddr || f.Addr != kbase+tt.off {
			t.Errorf("%v with no user memory: %v", uop, f)
		}
	}

	// Loads outside memory fault with their address.
	for _, addr := range []uint64{0, 8, kbase + 12, kbase + 11, vm.SpaceStart, vm.SpaceEnd - 8} {
		o := build(t, i64, func(ir *dif.IR) {
			ir.Setx(addr, 1)
			ir.Emit(dif.Load(dif.LDUH, 1, 2))
			ir.Emit(dif.Ret(2))
		})
		f := faultOf(t, vm.New(cfg), o, nil)
		if f.Code != vm.FaultBadAddr || f.Addr != addr || f.PC != 1 {
			t.Errorf("lduh [%#x]: %v", addr, f)
		}
	}

	// Without kernel privilege rld* may read only the machine's memory;
	// ld* is not checked.
	restricted := &vm.Config{Kernel: kernelMemory(), Restricted: true}
	o := build(t, i64, func(ir *dif.IR) {
		ir.Setx(kbase, 1)
		ir.Emit(dif.Load(dif.RLDUB, 1, 2))
		ir.Emit(dif.Ret(2))
	})
	if f := faultOf(t, vm.New(restricted), o, nil); f.Code != vm.FaultKPriv || f.Addr != kbase {
		t.Errorf("restricted rldub: %v", f)
	}
	o = build(t, i64, func(ir *dif.IR) {
		ir.Setx(kbase, 1)
		ir.Emit(dif.Load(dif.LDUB, 1, 2))
		ir.Emit(dif.Ret(2))
	})
	if got := run(t, vm.New(restricted), o, nil); got != 0x80 {
		t.Errorf("restricted ldub = %#x", got)
	}
	o = build(t, i64, func(ir *dif.IR) {
		ir.Sets("abc", 1)
		ir.Emit(dif.Load(dif.RLDUB, 1, 2))
		ir.Emit(dif.Ret(2))
	})
	if got := run(t, vm.New(restricted), o, nil); got != 'a' {
		t.Errorf("restricted rldub of the string table = %#x", got)
	}
}

func TestStores(t *testing.T) {
	m := vm.New(&vm.Config{Kernel: kernelMemory()})
	// allocs 16 bytes, store each width, read the bytes back.
	o := build(t, i64, func(ir *dif.IR) {
		ir.Setx(16, 1)
		ir.Emit(dif.Allocs(1, 2))
		ir.Setx(0x1122334455667788, 3)
		ir.Emit(dif.Store(dif.STX, 3, 2))
		ir.Setx(8, 4)
		ir.Emit(dif.ALU(dif.ADD, 2, 4, 5))
		ir.Emit(dif.Store(dif.STW, 3, 5))
		ir.Setx(4, 4)
		ir.Emit(dif.ALU(dif.ADD, 5, 4, 5))
		ir.Emit(dif.Store(dif.STH, 3, 5))
		ir.Setx(2, 4)
		ir.Emit(dif.ALU(dif.ADD, 5, 4, 5))
		ir.Emit(dif.Store(dif.STB, 3, 5))
		ir.Emit(dif.Ret(2))
	})
	m.BeginFiring()
	addr := run(t, m, o, nil)
	if addr%8 != 0 {
		t.Errorf("allocs gave %#x, not 8-aligned", addr)
	}
	b, err := m.ReadMemory(addr, 16)
	if err != nil {
		t.Fatal(err)
	}
	want := "\x88\x77\x66\x55\x44\x33\x22\x11\x88\x77\x66\x55\x88\x77\x88\x00"
	if string(b) != want {
		t.Errorf("stored % x, want % x", b, want)
	}

	// Stores to kernel memory, the string table or nowhere fault
	// BADADDR; misaligned ones BADALIGN.
	tests := []struct {
		name string
		emit func(ir *dif.IR) // leaves the address in %r1
		op   dif.Op
		code vm.FaultCode
	}{
		{"kernel", func(ir *dif.IR) { ir.Setx(kbase, 1) }, dif.STB, vm.FaultBadAddr},
		{"null", func(ir *dif.IR) { ir.Emit(dif.Mov(0, 1)) }, dif.STX, vm.FaultBadAddr},
		{"strtab", func(ir *dif.IR) { ir.Sets("abc", 1) }, dif.STB, vm.FaultBadAddr},
		{"misaligned sth", func(ir *dif.IR) {
			ir.Setx(8, 1)
			ir.Emit(dif.Allocs(1, 1))
			ir.Setx(1, 2)
			ir.Emit(dif.ALU(dif.ADD, 1, 2, 1))
		}, dif.STH, vm.FaultBadAlign},
		{"misaligned stx", func(ir *dif.IR) {
			ir.Setx(16, 1)
			ir.Emit(dif.Allocs(1, 1))
			ir.Setx(4, 2)
			ir.Emit(dif.ALU(dif.ADD, 1, 2, 1))
		}, dif.STX, vm.FaultBadAlign},
		{"past scratch", func(ir *dif.IR) {
			ir.Setx(1, 1)
			ir.Emit(dif.Allocs(1, 1))
			ir.Setx(vm.DefaultScratchSize, 2)
			ir.Emit(dif.ALU(dif.ADD, 1, 2, 1))
		}, dif.STB, vm.FaultBadAddr},
	}
	for _, tt := range tests {
		o := build(t, i64, func(ir *dif.IR) {
			tt.emit(ir)
			ir.Setx(7, 3)
			ir.Emit(dif.Store(tt.op, 3, 1))
			ir.Emit(dif.Ret(1))
		})
		f := faultOf(t, vm.New(&vm.Config{Kernel: kernelMemory()}), o, nil)
		if f.Code != tt.code || f.PC != len(o.Code)-2 || (f.Addr == 0) != (tt.name == "null") {
			t.Errorf("%s: %v", tt.name, f)
		}
	}
}

func TestAllocsCopys(t *testing.T) {
	m := vm.New(&vm.Config{Kernel: kernelMemory(), ScratchSize: 64})
	// copys copies from kernel memory into scratch.
	o := build(t, str256, func(ir *dif.IR) {
		ir.Setx(14, 1)
		ir.Emit(dif.Allocs(1, 2))
		ir.Setx(kbase+0x1000, 3)
		ir.Emit(dif.Copys(3, 1, 2))
		ir.Emit(dif.Ret(2))
	})
	addr := run(t, m, o, nil)
	if s, err := m.ReadString(addr); err != nil || s != "kernel string" {
		t.Errorf("copys: %q, %v", s, err)
	}

	// copys to the string table faults.
	o = build(t, i64, func(ir *dif.IR) {
		ir.Sets("abcd", 2)
		ir.Setx(2, 1)
		ir.Emit(dif.Copys(2, 1, 2))
		ir.Emit(dif.Ret(2))
	})
	if f := faultOf(t, m, o, nil); f.Code != vm.FaultBadAddr {
		t.Errorf("copys to strtab: %v", f)
	}

	// Scratch runs out within a clause and comes back with the next.
	o = build(t, i64, func(ir *dif.IR) {
		ir.Setx(40, 1)
		ir.Emit(dif.Allocs(1, 2))
		ir.Emit(dif.Ret(2))
	})
	m.BeginClause()
	run(t, m, o, nil)
	if f := faultOf(t, m, o, nil); f.Code != vm.FaultNoScratch || f.PC != 1 {
		t.Errorf("second allocs: %v", f)
	}
	m.BeginClause()
	run(t, m, o, nil)

	// A huge allocation does not wrap.
	o = build(t, i64, func(ir *dif.IR) {
		ir.Setx(math.MaxUint64-2, 1)
		ir.Emit(dif.Allocs(1, 2))
		ir.Emit(dif.Ret(2))
	})
	m.BeginClause()
	if f := faultOf(t, m, o, nil); f.Code != vm.FaultNoScratch {
		t.Errorf("huge allocs: %v", f)
	}
}

// TestVariables checks globals, clause-locals and thread-locals, by
// value and by reference, across DIFOs of one machine.
func TestVariables(t *testing.T) {
	gx := scalar("x", u, dif.ScopeGlobal, i64)
	gs := scalar("s", u+1, dif.ScopeGlobal, str256)
	lx := scalar("lx", u, dif.ScopeLocal, i64)
	ls := scalar("ls", u+1, dif.ScopeLocal, dif.StringType(0)) // the machine gives it the string size
	tx := scalar("tx", u, dif.ScopeThread, i64)
	ts := scalar("ts", u+1, dif.ScopeThread, str256)

	m := vm.New(nil)
	store := build(t, i64, func(ir *dif.IR) {
		ir.Setx(41, 1)
		ir.StoreVar(dif.STGS, gx, 1)
		ir.Setx(42, 1)
		ir.StoreVar(dif.STLS, lx, 1)
		ir.Setx(43, 1)
		ir.StoreVar(dif.STTS, tx, 1)
		ir.Sets("global", 1)
		ir.StoreVar(dif.STGS, gs, 1)
		ir.Sets("local", 1)
		ir.StoreVar(dif.STLS, ls, 1)
		ir.Sets("thread", 1)
		ir.StoreVar(dif.STTS, ts, 1)
		ir.Emit(dif.Ret(0))
	})
	load := func(op dif.Op, v dif.VarRef) *dif.Object {
		ret := i64
		if v.Type.Kind == dif.TypeString {
			ret = str256
		}
		return build(t, ret, func(ir *dif.IR) {
			ir.LoadVar(op, v, 1)
			ir.Emit(dif.Ret(1))
		})
	}
	m.BeginFiring()
	run(t, m, store, nil)
	for _, c := range []struct {
		op   dif.Op
		v    dif.VarRef
		want uint64
	}{{dif.LDGS, gx, 41}, {dif.LDLS, lx, 42}, {dif.LDTS, tx, 43}} {
		if got := run(t, m, load(c.op, c.v), nil); got != c.want {
			t.Errorf("%s = %d, want %d", c.v.Name, got, c.want)
		}
	}
	for _, c := range []struct {
		op   dif.Op
		v    dif.VarRef
		want string
	}{{dif.LDGS, gs, "global"}, {dif.LDLS, ls, "local"}, {dif.LDTS, ts, "thread"}} {
		addr := run(t, m, load(c.op, c.v), nil)
		if s, err := m.ReadString(addr); err != nil || s != c.want {
			t.Errorf("%s = %q, %v; want %q", c.v.Name, s, err, c.want)
		}
	}

	// A new firing clears clause-locals only.
	m.BeginFiring()
	if got := run(t, m, load(dif.LDLS, lx), nil); got != 0 {
		t.Errorf("lx after BeginFiring = %d", got)
	}
	if s, _ := m.ReadString(run(t, m, load(dif.LDLS, ls), nil)); s != "" {
		t.Errorf("ls after BeginFiring = %q", s)
	}
	if got := run(t, m, load(dif.LDGS, gx), nil); got != 41 {
		t.Errorf("x after BeginFiring = %d", got)
	}
	if got := run(t, m, load(dif.LDTS, tx), nil); got != 43 {
		t.Errorf("tx after BeginFiring = %d", got)
	}

	// By-reference stores copy: a later change to the source does not
	// show; a store of NULL makes the variable NULL; a thread-local
	// store of zero deletes it.
	o := build(t, i64, func(ir *dif.IR) {
		ir.Setx(8, 1)
		ir.Emit(dif.Allocs(1, 2))
		ir.Setx('A', 3)
		ir.Emit(dif.Store(dif.STB, 3, 2))
		ir.StoreVar(dif.STGS, gs, 2)
		ir.Setx('B', 3)
		ir.Emit(dif.Store(dif.STB, 3, 2))
		ir.Emit(dif.Ret(2))
	})
	run(t, m, o, nil)
	if s, _ := m.ReadString(run(t, m, load(dif.LDGS, gs), nil)); s != "A" {
		t.Errorf("s = %q after a copy", s)
	}
	o = build(t, i64, func(ir *dif.IR) {
		ir.StoreVar(dif.STGS, gs, 0)
		ir.StoreVar(dif.STTS, ts, 0)
		ir.StoreVar(dif.STTS, tx, 0)
		ir.Emit(dif.Ret(0))
	})
	run(t, m, o, nil)
	for _, c := range []struct {
		op dif.Op
		v  dif.VarRef
	}{{dif.LDGS, gs}, {dif.LDTS, ts}, {dif.LDTS, tx}} {
		if got := run(t, m, load(c.op, c.v), nil); got != 0 {
			t.Errorf("%s = %#x after storing 0", c.v.Name, got)
		}
	}

	// A string longer than its variable is cut to the variable's size.
	short := scalar("short", u+2, dif.ScopeGlobal, dif.StringType(4))
	o = build(t, str256, func(ir *dif.IR) {
		ir.Sets("abcdefgh", 1)
		ir.StoreVar(dif.STGS, short, 1)
		ir.LoadVar(dif.LDGS, short, 2)
		ir.Emit(dif.Ret(2))
	})
	if b, err := m.ReadMemory(run(t, m, o, nil), 4); err != nil || string(b) != "abcd" {
		t.Errorf("short = %q, %v", b, err)
	}

	// A by-reference variable's storage can be stored to, as D's
	// struct members are.
	st := scalar("st", u+3, dif.ScopeGlobal, dif.Type{Kind: dif.TypeCTF, CtfKind: dif.CTFStruct, Flags: dif.TFByRef, Size: 8})
	o = build(t, i64, func(ir *dif.IR) {
		ir.LoadVar(dif.LDGS, st, 1)
		ir.Setx(0x55, 2)
		ir.Setx(4, 3)
		ir.Emit(dif.ALU(dif.ADD, 1, 3, 3))
		ir.Emit(dif.Store(dif.STW, 2, 3))
		ir.LoadVar(dif.LDGS, st, 4)
		ir.Emit(dif.Load(dif.LDX, 4, 4))
		ir.Emit(dif.Ret(4))
	})
	if got := run(t, m, o, nil); got != 0x55<<32 {
		t.Errorf("st = %#x", got)
	}

	// A by-reference store of a structure copies its size; from memory
	// the machine may not read without privilege, it faults KPRIV.
	o = build(t, i64, func(ir *dif.IR) {
		ir.Setx(16, 1)
		ir.Emit(dif.Allocs(1, 2))
		ir.Setx(0x0102030405060708, 3)
		ir.Emit(dif.Store(dif.STX, 3, 2))
		ir.StoreVar(dif.STGS, st, 2)
		ir.Emit(dif.Store(dif.STX, 0, 2))
		ir.LoadVar(dif.LDGS, st, 4)
		ir.Emit(dif.Load(dif.LDX, 4, 4))
		ir.Emit(dif.Ret(4))
	})
	if got := run(t, m, o, nil); got != 0x0102030405060708 {
		t.Errorf("st = %#x after a copy", got)
	}
	r := vm.New(&vm.Config{Restricted: true, Kernel: kernelMemory()})
	o = build(t, i64, func(ir *dif.IR) {
		ir.Setx(kbase, 1)
		ir.StoreVar(dif.STGS, st, 1)
		ir.Emit(dif.Ret(0))
	})
	if f := faultOf(t, r, o, nil); f.Code != vm.FaultKPriv || f.Addr != kbase {
		t.Errorf("restricted copy of a structure: %v", f)
	}
	o = build(t, i64, func(ir *dif.IR) {
		ir.Setx(kbase+0x1000, 1)
		ir.StoreVar(dif.STGS, gs, 1)
		ir.Emit(dif.Ret(0))
	})
	if f := faultOf(t, r, o, nil); f.Code != vm.FaultKPriv {
		t.Errorf("restricted copy of a string: %v", f)
	}
	o = build(t, str256, func(ir *dif.IR) {
		ir.Setx(kbase+0x1000, 1)
		ir.StoreVar(dif.STGS, gs, 1)
		ir.LoadVar(dif.LDGS, gs, 1)
		ir.Emit(dif.Ret(1))
	})
	km := vm.New(&vm.Config{Kernel: kernelMemory()})
	if s, err := km.ReadString(run(t, km, o, nil)); err != nil || s != "kernel string" {
		t.Errorf("copy of a kernel string: %q, %v", s, err)
	}

	// A variable no DIFO declares is an 8-byte integer.
	o = &dif.Object{
		Code: []dif.Instr{dif.Setx(0, 1), dif.Stv(dif.STGS, u, 1), dif.Ldv(dif.LDGS, u, 2), dif.Ret(2)},
		Ints: []uint64{99}, Strs: []byte{0, 'y', 0}, Ret: i64,
		Vars: []dif.Var{{Name: 1, ID: u + 5, Kind: dif.KindScalar, Scope: dif.ScopeGlobal, Type: i64}},
	}
	if got := run(t, vm.New(nil), o, nil); got != 99 {
		t.Errorf("undeclared variable = %d", got)
	}

	// ldls of a built-in id reads 0.
	o = &dif.Object{Code: []dif.Instr{dif.Ldv(dif.LDLS, dif.VarTimestamp, 1), dif.Ret(1)}, Strs: []byte{0}, Ret: i64}
	if got := run(t, m, o, &vm.Context{Timestamp: 5}); got != 0 {
		t.Errorf("ldls timestamp = %d", got)
	}
}

// TestAssoc checks associative arrays: keys by value and by content,
// global and thread-local arrays apart, deletion, and drops.
func TestAssoc(t *testing.T) {
	ga := array("a", u, dif.ScopeGlobal, i64)
	ta := array("a", u, dif.ScopeThread, i64)
	gs := array("names", u+1, dif.ScopeGlobal, str256)

	// key pushes the tuple (n, s), s copied into scratch first so that
	// two keys of equal content have different addresses.
	key := func(ir *dif.IR, n uint64, s string) {
		ir.Emit(dif.Flushts())
		ir.Setx(n, 5)
		ir.Emit(dif.Pushtv(dif.TypeCTF, 5))
		ir.Sets(s, 5)
		ir.Setx(uint64(len(s)+1), 6)
		ir.Emit(dif.Allocs(6, 7))
		ir.Emit(dif.Copys(5, 6, 7))
		ir.Emit(dif.Pushtr(dif.TypeString, 0, 7))
	}
	set := func(op dif.Op, v dif.VarRef, n uint64, s string, val uint64) *dif.Object {
		return build(t, i64, func(ir *dif.IR) {
			key(ir, n, s)
			ir.Setx(val, 1)
			ir.StoreVar(op, v, 1)
			ir.Emit(dif.Ret(1))
		})
	}
	get := func(op dif.Op, v dif.VarRef, n uint64, s string) *dif.Object {
		return build(t, i64, func(ir *dif.IR) {
			key(ir, n, s)
			ir.LoadVar(op, v, 1)
			ir.Emit(dif.Ret(1))
		})
	}
	m := vm.New(nil)
	run(t, m, set(dif.STGAA, ga, 1, "k", 10), nil)
	run(t, m, set(dif.STGAA, ga, 2, "k", 20), nil)
	run(t, m, set(dif.STGAA, ga, 1, "kk", 30), nil)
	run(t, m, set(dif.STTAA, ta, 1, "k", 40), nil)
	for _, c := range []struct {
		op   dif.Op
		v    dif.VarRef
		n    uint64
		s    string
		want uint64
	}{
		{dif.LDGAA, ga, 1, "k", 10},
		{dif.LDGAA, ga, 2, "k", 20},
		{dif.LDGAA, ga, 1, "kk", 30},
		{dif.LDGAA, ga, 3, "k", 0},
		{dif.LDGAA, ga, 1, "", 0},
		{dif.LDTAA, ta, 1, "k", 40},
		{dif.LDTAA, ta, 2, "k", 0},
	} {
		if got := run(t, m, get(c.op, c.v, c.n, c.s), nil); got != c.want {
			t.Errorf("%v %s[%d, %q] = %d, want %d", c.op, c.v.Name, c.n, c.s, got, c.want)
		}
	}
	run(t, m, set(dif.STGAA, ga, 1, "k", 0), nil)
	if got := run(t, m, get(dif.LDGAA, ga, 1, "k"), nil); got != 0 {
		t.Errorf("a[1, \"k\"] = %d after deletion", got)
	}

	// A by-reference value: the element's storage holds a copy.
	o := build(t, i64, func(ir *dif.IR) {
		ir.Emit(dif.Flushts())
		ir.Emit(dif.Pushtv(dif.TypeCTF, 0))
		ir.Sets("value", 1)
		ir.StoreVar(dif.STGAA, gs, 1)
		ir.LoadVar(dif.LDGAA, gs, 2)
		ir.Emit(dif.Ret(2))
	})
	addr := run(t, m, o, nil)
	if s, err := m.ReadString(addr); err != nil || s != "value" {
		t.Errorf("names[0] = %q, %v", s, err)
	}

	// A by-reference key that is not a string is compared by its
	// bytes, as many as pushtr's size.
	o = build(t, i64, func(ir *dif.IR) {
		ir.Setx(16, 1)
		ir.Emit(dif.Allocs(1, 2)) // 16 zero bytes
		ir.Setx(8, 3)
		ir.Emit(dif.Flushts())
		ir.Emit(dif.Pushtr(dif.TypeCTF, 3, 2))
		ir.Setx(77, 4)
		ir.StoreVar(dif.STGAA, ga, 4)
		ir.Emit(dif.ALU(dif.ADD, 2, 3, 2)) // the other 8 zero bytes
		ir.Emit(dif.Flushts())
		ir.Emit(dif.Pushtr(dif.TypeCTF, 3, 2))
		ir.LoadVar(dif.LDGAA, ga, 5)
		ir.Emit(dif.Ret(5))
	})
	if got := run(t, m, o, nil); got != 77 {
		t.Errorf("a[8 zero bytes] = %d", got)
	}

	// Dynamic variables beyond dynvarsize are dropped.
	small := vm.New(&vm.Config{DynVarSize: 64})
	o = build(t, i64, func(ir *dif.IR) {
		ir.Setx(0, 2)
		ir.Setx(1, 3)
		for range 8 {
			ir.Emit(dif.Flushts())
			ir.Emit(dif.Pushtv(dif.TypeCTF, 2))
			ir.StoreVar(dif.STGAA, ga, 3)
			ir.Emit(dif.ALU(dif.ADD, 2, 3, 2))
		}
		ir.Emit(dif.Flushts())
		ir.Emit(dif.Pushtv(dif.TypeCTF, 0))
		ir.LoadVar(dif.LDGAA, ga, 1)
		ir.Emit(dif.Ret(1))
	})
	if got := run(t, small, o, nil); got != 1 || small.Drops() == 0 {
		t.Errorf("a[0] = %d, %d drops", got, small.Drops())
	}
}

// TestTuple checks the tuple stack: the subroutine sees the entries
// pushed since the last flushts, popts drops one, and a ninth push
// overflows.
func TestTuple(t *testing.T) {
	o := build(t, i64, func(ir *dif.IR) {
		ir.Emit(dif.Flushts())
		ir.Setx(99, 1)
		ir.Emit(dif.Pushtv(dif.TypeCTF, 1)) // dropped by flushts
		ir.Emit(dif.Flushts())
		ir.Sets("hello", 1)
		ir.Emit(dif.Pushtr(dif.TypeString, 0, 1))
		ir.Setx(1, 2)
		ir.Emit(dif.Pushtv(dif.TypeCTF, 2))
		ir.Setx(3, 2)
		ir.Emit(dif.Pushtv(dif.TypeCTF, 2))
		ir.Emit(dif.Popts()) // substr("hello", 1)
		ir.Emit(dif.Call(dif.SubrSubstr, 3))
		ir.Emit(dif.Ret(3))
	})
	m := vm.New(nil)
	if s, _ := m.ReadString(run(t, m, o, nil)); s != "ello" {
		t.Errorf("substr after popts = %q", s)
	}

	o = build(t, i64, func(ir *dif.IR) {
		ir.Emit(dif.Flushts())
		for range dif.NTupleRegs + 1 {
			ir.Emit(dif.Pushtv(dif.TypeCTF, 0))
		}
		ir.Emit(dif.Ret(0))
	})
	if f := faultOf(t, m, o, nil); f.Code != vm.FaultTupOFlow || f.PC != dif.NTupleRegs+1 {
		t.Errorf("nine pushes: %v", f)
	}

	// popts on an empty stack does nothing.
	o = build(t, i64, func(ir *dif.IR) {
		ir.Emit(dif.Flushts())
		ir.Emit(dif.Popts())
		ir.Emit(dif.Call(dif.SubrRand, 1))
		ir.Emit(dif.Ret(1))
	})
	run(t, m, o, nil)

	// pushtr of a string scans it within its size; of anything else, a
	// size beyond INT64_MAX is illegal.
	o = build(t, i64, func(ir *dif.IR) {
		ir.Setx(math.MaxUint64, 2)
		ir.Emit(dif.Pushtr(dif.TypeCTF, 2, 0))
		ir.Emit(dif.Ret(0))
	})
	if f := faultOf(t, m, o, nil); f.Code != vm.FaultIllOp {
		t.Errorf("pushtr of size -1: %v", f)
	}
}

func TestBuiltins(t *testing.T) {
	ctx := &vm.Context{
		Args: []uint64{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
		Regs: []uint64{100, 101}, URegs: []uint64{200},
		EPID: 3, ID: 4, PID: 5, PPID: 6, TID: 7, UID: 8, GID: 9, Errno: 10, CPU: 11, IPL: 19,
		Curthread: 0xfffff80012345678, Timestamp: 12, Vtimestamp: 13, Walltimestamp: 14,
		Caller: 15, UCaller: 16, StackDepth: 17, UStackDepth: 18,
		Execname: "sh", Execargs: "sh -c true", Zonename: "jail1",
		ProbeProv: "fbt", ProbeMod: "kernel", ProbeFunc: "vm_fault", ProbeName: "entry",
	}
	ints := []struct {
		id   uint32
		want uint64
	}{
		{dif.VarEPID, 3}, {dif.VarID, 4}, {dif.VarPID, 5}, {dif.VarPPID, 6}, {dif.VarTID, 7},
		{dif.VarUID, 8}, {dif.VarGID, 9}, {dif.VarErrno, 10}, {dif.VarCPU, 11},
		{dif.VarCurthread, 0xfffff80012345678}, {dif.VarTimestamp, 12}, {dif.VarVtimestamp, 13},
		{dif.VarWalltimestamp, 14}, {dif.VarCaller, 15}, {dif.VarUcaller, 16},
		{dif.VarStackdepth, 17}, {dif.VarUstackdepth, 18},
		{dif.VarArg0, 10}, {dif.VarArg0 + 5, 15}, {dif.VarArg9, 19}, {dif.VarIPL, 19},
	}
	m := vm.New(nil)
	for _, c := range ints {
		o := build(t, i64, func(ir *dif.IR) {
			ir.LoadVar(dif.LDGS, scalar("v", c.id, dif.ScopeGlobal, i64), 1)
			ir.Emit(dif.Ret(1))
		})
		if got := run(t, m, o, ctx); got != c.want {
			t.Errorf("variable %#x = %d, want %d", c.id, got, c.want)
		}
	}
	strs := []struct {
		id   uint32
		want string
	}{
		{dif.VarExecname, "sh"}, {dif.VarExecargs, "sh -c true"}, {dif.VarZonename, "jail1"},
		{dif.VarProbeprov, "fbt"}, {dif.VarProbemod, "kernel"}, {dif.VarProbefunc, "vm_fault"},
		{dif.VarProbename, "entry"},
	}
	for _, c := range strs {
		o := build(t, str256, func(ir *dif.IR) {
			ir.LoadVar(dif.LDGS, scalar("v", c.id, dif.ScopeGlobal, str256), 1)
			ir.Emit(dif.Ret(1))
		})
		if s, err := m.ReadString(run(t, m, o, ctx)); err != nil || s != c.want {
			t.Errorf("variable %#x = %q, %v; want %q", c.id, s, err, c.want)
		}
	}

	arrays := []struct {
		id   uint32
		ndx  uint64
		want uint64
		code vm.FaultCode
	}{
		{dif.VarArgs, 0, 10, 0}, {dif.VarArgs, 10, 20, 0}, {dif.VarArgs, 11, 0, 0},
		{dif.VarRegs, 1, 101, 0}, {dif.VarRegs, 2, 0, vm.FaultIllOp},
		{dif.VarUregs, 0, 200, 0},
		{5, 0, 0, vm.FaultIllOp},
	}
	for _, c := range arrays {
		o := build(t, i64, func(ir *dif.IR) {
			ir.Setx(c.ndx, 1)
			ir.LoadArray(dif.LDGA, array("a", c.id, dif.ScopeGlobal, i64), 1, 2)
			ir.Emit(dif.Ret(2))
		})
		if c.code != 0 {
			if f := faultOf(t, m, o, ctx); f.Code != c.code {
				t.Errorf("array %d[%d]: %v, want %v", c.id, c.ndx, f, c.code)
			}
			continue
		}
		if got := run(t, m, o, ctx); got != c.want {
			t.Errorf("array %d[%d] = %d, want %d", c.id, c.ndx, got, c.want)
		}
	}

	// ipl is 0 without kernel privilege (dtrace_priv_kernel).
	o := build(t, i64, func(ir *dif.IR) {
		ir.LoadVar(dif.LDGS, scalar("ipl", dif.VarIPL, dif.ScopeGlobal, i64), 1)
		ir.Emit(dif.Ret(1))
	})
	if got := run(t, vm.New(&vm.Config{Restricted: true}), o, ctx); got != 0 {
		t.Errorf("ipl without kernel privilege = %d, want 0", got)
	}

	// regs[] without a trap frame faults BADADDR at 0; unknown ids and
	// ldta ILLOP.
	o = build(t, i64, func(ir *dif.IR) {
		ir.LoadArray(dif.LDGA, array("regs", dif.VarRegs, dif.ScopeGlobal, i64), 0, 2)
		ir.Emit(dif.Ret(2))
	})
	if f := faultOf(t, m, o, nil); f.Code != vm.FaultBadAddr || f.Addr != 0 {
		t.Errorf("regs[0] with no frame: %v", f)
	}
	o = &dif.Object{Code: []dif.Instr{dif.Lda(dif.LDTA, 0x80, 0, 1), dif.Ret(1)}, Strs: []byte{0}, Ret: i64}
	if f := faultOf(t, m, o, nil); f.Code != vm.FaultIllOp {
		t.Errorf("ldta: %v", f)
	}

	// Context strings are copied into scratch, cut to the string size.
	small := vm.New(&vm.Config{StrSize: 4, ScratchSize: 8})
	o = build(t, str256, func(ir *dif.IR) {
		ir.LoadVar(dif.LDGS, scalar("execname", dif.VarExecname, dif.ScopeGlobal, str256), 1)
		ir.Emit(dif.Ret(1))
	})
	ctx = &vm.Context{Execname: "longname"}
	if s, _ := small.ReadString(run(t, small, o, ctx)); s != "lon" {
		t.Errorf("execname with strsize 4 = %q", s)
	}
	run(t, small, o, ctx)
	if f := faultOf(t, small, o, ctx); f.Code != vm.FaultNoScratch {
		t.Errorf("third execname in 8 bytes of scratch: %v", f)
	}
}

// TestValidation checks that the machine refuses what the kernel
// would not load, and guards against what it would.
func TestValidation(t *testing.T) {
	m := vm.New(nil)
	bad := []*dif.Object{
		nil,
		{Strs: []byte{0}, Ret: i64}, // no code
		{Code: []dif.Instr{dif.Branch(dif.BA, 0), dif.Ret(0)}, Strs: []byte{0}},             // backward branch
		{Code: []dif.Instr{dif.Setx(3, 1), dif.Ret(1)}, Ints: []uint64{1}, Strs: []byte{0}}, // integer index
		{Code: []dif.Instr{dif.ALU(dif.ADD, 8, 1, 1), dif.Ret(1)}, Strs: []byte{0}},         // register
		{Code: []dif.Instr{dif.Fmt(0, 0, 0, 0), dif.Ret(1)}, Strs: []byte{0}},               // opcode
		{Code: []dif.Instr{dif.Mov(1, 1)}, Strs: []byte{0}},                                 // no ret
	}
	for i, o := range bad {
		_, err := m.Run(o, nil)
		var de *dif.Error
		switch {
		case err == nil:
			t.Errorf("object %d ran", i)
		case o != nil && !errors.As(err, &de):
			t.Errorf("object %d: %v is not a *dif.Error", i, err)
		}
	}

	// A DIFO that redefines a variable of an earlier one is refused.
	v := scalar("x", u, dif.ScopeGlobal, i64)
	o1 := build(t, i64, func(ir *dif.IR) {
		ir.StoreVar(dif.STGS, v, 0)
		ir.Emit(dif.Ret(0))
	})
	v.Type = str256
	o2 := build(t, i64, func(ir *dif.IR) {
		ir.StoreVar(dif.STGS, v, 0)
		ir.Emit(dif.Ret(0))
	})
	run(t, m, o1, nil)
	if _, err := m.Run(o2, nil); err == nil {
		t.Error("a redefinition of x ran")
	}

	// The machine runs its own copy: a later change to the object is
	// not seen.
	o := build(t, i64, func(ir *dif.IR) {
		ir.Setx(1, 1)
		ir.Emit(dif.Ret(1))
	})
	run(t, m, o, nil)
	o.Ints[0] = 2
	if got := run(t, m, o, nil); got != 1 {
		t.Errorf("after the change = %d", got)
	}

	// Translator references need a kernel's translators.
	o = &dif.Object{Code: []dif.Instr{dif.Xlate(dif.XLATE, 0, 1), dif.Ret(1)}, Strs: []byte{0}, Ret: i64}
	if _, err := m.Run(o, nil); err == nil {
		t.Error("xlate ran")
	}
}
