//go:build linux

package bpf_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cilium/ebpf"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/internal/bpf"
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
	// args[i], in range and not; built-in variables the checker's
	// types do not reach yet.
	for _, i := range []uint64{0, 3, 9, 10, 1 << 63} {
		tests = append(tests, &dif.Object{Ints: []uint64{i}, Ret: i64, Code: []dif.Instr{
			dif.Setx(0, 1), dif.Lda(dif.LDGA, uint8(dif.VarArgs), 1, 2), dif.Ret(2)}})
	}
	for _, v := range []uint16{dif.VarUID, dif.VarGID, dif.VarArg0, dif.VarArg9} {
		tests = append(tests, &dif.Object{Ret: i64, Code: []dif.Instr{dif.Ldv(dif.LDGS, v, 3), dif.Ret(3)}})
	}
	for i, o := range tests {
		differ(t, fmt.Sprintf("%d: %v", i, o.Code), []*dif.Object{o}, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
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
		differ(t, fmt.Sprintf("%d: %v", i, o.Code), []*dif.Object{o})
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
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Call(dif.SubrMutexOwned, 1), dif.Ret(1)}}, "instruction 0 (call DIF_SUBR(1), %r1\t\t! mutex_owned): subroutine mutex_owned not translated yet"},
		{&dif.Object{Ret: i64, Code: slices.Concat(slices.Repeat([]dif.Instr{dif.Fmt(dif.PUSHTV, 0, 0, 1)}, 9), []dif.Instr{dif.Ret(1)})}, "instruction 8 (pushtv"},
		{&dif.Object{Ret: i64, Ints: []uint64{0}, Code: []dif.Instr{dif.Setx(0, 1), dif.Tst(1), dif.Branch(dif.BE, 4), dif.Fmt(dif.PUSHTV, 0, 0, 1),
			dif.Call(dif.SubrStrlen, 1), dif.Ret(1)}}, "instruction 4 (call DIF_SUBR(12), %r1\t\t! strlen): the tuple stack's depth differs"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Nop(), dif.ALU(dif.COPYS, 1, 2, 3), dif.Ret(3)}}, "instruction 1 (copys"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Lda(dif.LDGA, 0x7f, 1, 2), dif.Ret(2)}}, "built-in array"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Stv(dif.STGS, dif.VarPID, 1), dif.Ret(2)}}, "cannot be assigned"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Ldv(dif.LDGS, dif.VarIPL, 1), dif.Ret(1)}}, "built-in variable 0x103 not translated yet"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Ldv(dif.LDGS, dif.VarOtherUBase, 1), dif.Ret(1)}}, "not in the variable table"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Ldv(dif.LDTS, dif.VarOtherUBase, 1), dif.Ret(1)}}, "not in the variable table"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Branch(dif.BA, 0), dif.Ret(1)}}, "not forward"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Store(dif.STB, 1, 0), dif.Ret(1)}}, "store to %r0"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Ret(1), dif.Nop()}}, "last DIF instruction is not ret"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.Setx(3, 1), dif.Ret(1)}}, "integer table index 3"},
		{&dif.Object{Ret: i64, Code: []dif.Instr{dif.ALU(dif.ADD, 9, 1, 2), dif.Ret(2)}}, "register %r9"},
	}
	for _, tt := range tests {
		l := newLayout(t, nil)
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

// TestUserLoad reads this process's memory with uld* (bpf_probe_read_user,
// the test run's current task being this thread) and dif/vm reading
// the same bytes as the traced process's memory; rld* reads as ld*.
func TestUserLoad(t *testing.T) {
	needBPF(t)
	buf := []byte{0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0xf0, 1, 2, 3, 4, 5, 6, 7}
	addr := uint64(uintptr(unsafe.Pointer(&buf[0])))
	cfg := &vm.Config{User: vm.Segments{{Addr: addr, Data: buf}}}
	i64 := dif.IntType(8)
	n := 0
	for op := dif.ULDSB; op <= dif.ULDX; op++ {
		for _, a := range []uint64{addr, addr + 8, 0, 1 << 63} {
			o := &dif.Object{Ints: []uint64{a}, Ret: i64, Code: []dif.Instr{dif.Setx(0, 1), dif.Load(op, 1, 2), dif.Ret(2)}}
			differCfg(t, fmt.Sprintf("%v at %#x", op, a), []*dif.Object{o}, cfg)
			n++
		}
	}
	strs := []byte("\x00\x80\x81\x82\x83\x84\x85\x86\x87\x00")
	for op := dif.RLDSB; op <= dif.RLDX; op++ {
		o := &dif.Object{Strs: strs, Ret: i64, Code: []dif.Instr{dif.Sets(1, 1), dif.Load(op, 1, 2), dif.Ret(2)}}
		differCfg(t, op.String(), []*dif.Object{o}, nil)
		n++
	}
	runtime.KeepAlive(buf)
	t.Logf("%d DIFOs", n)
}

// TestCopyin runs copyin() and copyinstr() on this process's memory,
// the VM reading the same bytes as the traced process's.
func TestCopyin(t *testing.T) {
	needBPF(t)
	buf := []byte("hello, world\x00after the NUL\x00")
	long := append(bytes.Repeat([]byte("x"), 300), 0)
	addr := uint64(uintptr(unsafe.Pointer(&buf[0])))
	laddr := uint64(uintptr(unsafe.Pointer(&long[0])))
	cfg := &vm.Config{User: vm.Segments{{Addr: addr, Data: buf}, {Addr: laddr, Data: long}}, ScratchSize: bpf.DefaultScratch}
	for _, src := range []string{
		`BEGIN { trace(copyinstr(arg0)); trace(copyinstr(arg0, 5)); trace(copyinstr(arg0, 0)); trace(copyinstr(arg0 + 13)); }`,
		`BEGIN { trace(copyinstr(arg1)); trace(strlen(copyinstr(arg1))); trace(copyinstr(arg1, 3)); }`,
		`BEGIN { p = (char *)copyin(arg0, 5); trace(p[0]); trace(p[4]); trace(*(uint32_t *)copyin(arg0 + 1, 4)); }`,
		`BEGIN { s = copyinstr(arg0); trace(s); self->s = copyinstr(arg0 + 7); trace(self->s); }`,
		`BEGIN { trace(strjoin(copyinstr(arg0), copyinstr(arg0 + 13))); }`,
		`BEGIN { trace(copyinstr(arg2)); }`,
		`BEGIN { trace(strjoin(copyinstr(arg1), copyinstr(arg1))); }`,
		`BEGIN { trace(strjoin(copyinstr(arg1, 200), copyinstr(arg1, 55))); trace(strjoin(copyinstr(arg1, 200), copyinstr(arg1, 56))); }`,
		`BEGIN { trace(copyinstr(arg3)); }`,
		`BEGIN { trace(*(int *)copyin(arg2, 4)); }`,
		`BEGIN { trace(*(int *)copyin(arg0, 20000)); }`,
	} {
		t.Run(src, func(t *testing.T) {
			defer onCPU0(t)()
			objs := difos(compileD(t, src))
			args := []uint64{addr, laddr, 0, 8}
			want := onVM(t, objs, thisThread(args...), cfg)
			got := inKernel(t, objs, args)
			if !slices.Equal(got, want) {
				t.Errorf("kernel %v, vm %v", got, want)
			}
		})
	}
	runtime.KeepAlive(buf)
	runtime.KeepAlive(long)
}

// TestTimestamp checks timestamp against CLOCK_MONOTONIC read around
// the run: the VM has no clock to compare with.
func TestTimestamp(t *testing.T) {
	needBPF(t)
	o := &dif.Object{Ret: dif.IntType(8), Code: []dif.Instr{dif.Ldv(dif.LDGS, dif.VarTimestamp, 1), dif.Ret(1)}}
	var before, after unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &before)
	got := inKernel(t, []*dif.Object{o}, nil)
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &after)
	if len(got) != 1 || got[0].Fault != 0 || got[0].Value < uint64(before.Nano()) || got[0].Value > uint64(after.Nano()) {
		t.Errorf("timestamp %v, not within [%d, %d]", got, before.Nano(), after.Nano())
	}
}

// TestWalltimestamp checks walltimestamp against CLOCK_REALTIME read
// around the run, give or take the microseconds in which the runtime
// read the two clocks for their offset.
func TestWalltimestamp(t *testing.T) {
	needBPF(t)
	o := &dif.Object{Ret: dif.IntType(8), Code: []dif.Instr{dif.Ldv(dif.LDGS, dif.VarWalltimestamp, 1), dif.Ret(1)}}
	const slack = 1e6
	var before, after unix.Timespec
	unix.ClockGettime(unix.CLOCK_REALTIME, &before)
	got := inKernel(t, []*dif.Object{o}, nil)
	unix.ClockGettime(unix.CLOCK_REALTIME, &after)
	if len(got) != 1 || got[0].Fault != 0 || got[0].Value < uint64(before.Nano()-slack) || got[0].Value > uint64(after.Nano()+slack) {
		t.Errorf("walltimestamp %v, not within [%d, %d]", got, before.Nano(), after.Nano())
	}
}

// TestStackVars checks what the VM cannot know against what this thread
// is: curthread a kernel address, the same in two DIFOs; the stack
// depths within bpf_get_stack's bounds; caller in the kernel's text and
// ucaller in this program's.
func TestStackVars(t *testing.T) {
	needBPF(t)
	defer onCPU0(t)()
	var objs []*dif.Object
	for _, v := range []uint16{dif.VarCurthread, dif.VarCurthread, dif.VarStackdepth, dif.VarUstackdepth, dif.VarCaller, dif.VarUcaller} {
		objs = append(objs, &dif.Object{Ret: dif.IntType(8), Code: []dif.Instr{dif.Ldv(dif.LDGS, v, 1), dif.Ret(1)}})
	}
	got := inKernel(t, objs, nil)
	if len(got) != len(objs) {
		t.Fatalf("got %v", got)
	}
	const kernelBase = 0xffff800000000000
	if v := got[0].Value; v < kernelBase || got[1].Value != v {
		t.Errorf("curthread %#x then %#x, want one kernel address", v, got[1].Value)
	}
	for i, name := range []string{"stackdepth", "ustackdepth"} {
		if v := got[2+i].Value; v < 1 || v > 127 {
			t.Errorf("%s %d, not within [1, 127]", name, v)
		}
	}
	if v := got[4].Value; v < 0xffffffff80000000 {
		t.Errorf("caller %#x, not in the kernel's text", v)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[1] != "r-xp" || f[5] != exe {
			continue
		}
		var lo, hi uint64
		fmt.Sscanf(f[0], "%x-%x", &lo, &hi)
		in = in || got[5].Value >= lo && got[5].Value < hi
	}
	if !in {
		t.Errorf("ucaller %#x, not in the text of %s", got[5].Value, exe)
	}
}

// TestThreadDrops fills a thread map of one entry: the second
// thread-local finds no room, reads 0 and is counted as a drop, as dtrace
// counts dynamic variable drops; freeing the first makes room again.
func TestThreadDrops(t *testing.T) {
	needBPF(t)
	// The second store is dropped, what is traced after it shows; then
	// the first is freed and the second holds.
	for _, tt := range []struct {
		src, ref        string
		dropped, stored uint64
	}{
		{`BEGIN { self->a = 1; self->b = 2; trace(self->b); self->a = 0; self->b = 3; trace(self->b); }`, "self->b", 0, 3},
		// By reference, and associative arrays, hold as many.
		{`BEGIN { self->a = "1"; self->b = "2"; trace(self->b == NULL); self->a = 0; self->b = "3"; trace(self->b == "3"); }`, "self->b", 1, 1},
		{`BEGIN { a[1] = 1; a[2] = 2; trace(a[2]); a[1] = 0; a[2] = 3; trace(a[2]); }`, "a[2]", 0, 3},
	} {
		objs := difos(compileD(t, tt.src))
		l, rt := newRuntime(t, &bpf.Config{DynVarSize: bpf.DynVarBytes}, objs)
		defer rt.Close()
		defer onCPU0(t)()
		var vals []uint64
		for i, o := range objs {
			insns, err := bpf.Translate(o, l)
			if err != nil {
				t.Fatal(err)
			}
			p, err := rt.Load(fmt.Sprintf("difo%d", i), insns)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if _, err := p.Run(&ebpf.RunOptions{Context: make([]byte, 8), Flags: testRunOnCPU, CPU: 0}); err != nil {
				t.Fatal(err)
			}
			st, err := rt.ReadState(0)
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, st.Ret)
			if i == 1 && st.Drops != 1 {
				t.Errorf("%s: after the store to %s: %d drops, want 1", tt.src, tt.ref, st.Drops)
			}
		}
		if vals[2] != tt.dropped || vals[5] != tt.stored {
			t.Errorf("%s: traced %d and %d, want %d and %d", tt.src, vals[2], vals[5], tt.dropped, tt.stored)
		}
	}
}

// TestScratch checks allocs and the stores against dif/vm with the
// same scratch size: values stored and loaded back, zeroed allocations,
// alignment, the distance between allocations (their addresses differ),
// and the faults: NOSCRATCH, BADADDR outside scratch, BADALIGN.
func TestScratch(t *testing.T) {
	needBPF(t)
	i64 := dif.IntType(8)
	cfg := &vm.Config{ScratchSize: bpf.DefaultScratch}
	// ints: 0 16, 1 value, 2 offset, 3 3, 4 size too large, 5 scratch size, 6 8
	ints := []uint64{16, 0x8182838485868788, 0, 3, bpf.DefaultScratch + 1, bpf.DefaultScratch, 8}
	var tests []*dif.Object
	stores := []dif.Op{dif.STB, dif.STH, dif.STW, dif.STX}
	loads := []dif.Op{dif.LDUB, dif.LDSH, dif.LDUW, dif.LDX}
	for i, st := range stores {
		for _, off := range []uint64{0, 1, 2, 4, 8, bpf.DefaultScratch - 8, bpf.DefaultScratch - 1, bpf.DefaultScratch, 1 << 63} {
			is := slices.Clone(ints)
			is[2] = off
			// allocs 16 → r1; r1 + off → r4; st value → [r4]; ld [r4] → r5; ret r5
			tests = append(tests, &dif.Object{Ints: is, Ret: i64, Code: []dif.Instr{
				dif.Setx(0, 2), dif.Fmt(dif.ALLOCS, 2, 0, 1), dif.Setx(2, 3), dif.ALU(dif.ADD, 1, 3, 4),
				dif.Setx(1, 6), dif.Store(st, 6, 4), dif.Load(loads[i], 4, 5), dif.Ret(5)}})
		}
		// A store to a string.
		tests = append(tests,
			&dif.Object{Ints: ints, Strs: []byte("\x00abcdefgh\x00"), Ret: i64, Code: []dif.Instr{
				dif.Sets(1, 1), dif.Setx(1, 2), dif.Store(st, 2, 1), dif.Ret(2)}})
	}
	tests = append(tests,
		// Allocations are zeroed and 8-aligned: allocs 3, allocs 8, distance.
		&dif.Object{Ints: ints, Ret: i64, Code: []dif.Instr{
			dif.Setx(3, 1), dif.Fmt(dif.ALLOCS, 1, 0, 2), dif.Setx(6, 1), dif.Fmt(dif.ALLOCS, 1, 0, 3),
			dif.Load(dif.LDX, 3, 4), dif.ALU(dif.SUB, 3, 2, 5), dif.ALU(dif.ADD, 4, 5, 5), dif.Ret(5)}},
		// All of scratch, then one byte more.
		&dif.Object{Ints: ints, Ret: i64, Code: []dif.Instr{
			dif.Setx(5, 1), dif.Fmt(dif.ALLOCS, 1, 0, 2), dif.Setx(1, 3), dif.Store(dif.STX, 3, 2),
			dif.Load(dif.LDX, 2, 4), dif.Ret(4)}},
		&dif.Object{Ints: ints, Ret: i64, Code: []dif.Instr{
			dif.Setx(5, 1), dif.Fmt(dif.ALLOCS, 1, 0, 2), dif.Setx(3, 1), dif.Fmt(dif.ALLOCS, 1, 0, 2), dif.Ret(2)}},
		&dif.Object{Ints: ints, Ret: i64, Code: []dif.Instr{dif.Setx(4, 1), dif.Fmt(dif.ALLOCS, 1, 0, 2), dif.Ret(2)}},
		&dif.Object{Ints: ints, Ret: i64, Code: []dif.Instr{dif.Fmt(dif.ALLOCS, 0, 0, 2), dif.Fmt(dif.ALLOCS, 0, 0, 3), dif.ALU(dif.SUB, 3, 2, 4), dif.Ret(4)}},
	)
	for i, o := range tests {
		// The addresses of faults differ: scratch and strings are at
		// the machine's addresses in the VM, in maps in the kernel.
		differAddr(t, fmt.Sprintf("%d: %v", i, o.Code), []*dif.Object{o}, cfg, false)
	}
	t.Logf("%d DIFOs", len(tests))
}

// TestScmp compares strings of the string table, of scratch, address 0
// and unreadable addresses, with every branch on the result.
func TestScmp(t *testing.T) {
	needBPF(t)
	i64 := dif.IntType(8)
	// Offsets: 1 "abc", 5 "abd", 9 "ab", 12 "", 13 "\xff", 15 "b".
	strs := []byte("\x00abc\x00abd\x00ab\x00\x00\xff\x00b\x00")
	offs := []uint16{1, 5, 9, 12, 13, 15}
	ints := []uint64{0, 1 << 63, 111, 222, 0x636261, 0x646261, 8}
	var tests []*dif.Object
	str := func(i int, rd uint8) []dif.Instr {
		switch {
		case i < len(offs):
			return []dif.Instr{dif.Sets(offs[i], rd)}
		case i == len(offs):
			return []dif.Instr{dif.Setx(0, rd)} // address 0: ""
		case i == len(offs)+1:
			return []dif.Instr{dif.Setx(1, rd)} // unreadable
		}
		// "abc" or "abd" built in scratch.
		return []dif.Instr{dif.Setx(uint16(4+i-len(offs)-2), 7), dif.Setx(6, 6),
			dif.Fmt(dif.ALLOCS, 6, 0, rd), dif.Store(dif.STX, 7, rd)}
	}
	n := len(offs) + 4
	for _, br := range []dif.Op{dif.BE, dif.BNE, dif.BG, dif.BGE, dif.BL, dif.BLE, dif.BGU, dif.BLU} {
		for a := range n {
			for b := range n {
				code := append(str(a, 1), str(b, 2)...)
				at := uint32(len(code))
				code = append(code, dif.Cmp(dif.SCMP, 1, 2), dif.Branch(br, at+4), dif.Setx(2, 3), dif.Ret(3), dif.Setx(3, 3), dif.Ret(3))
				tests = append(tests, &dif.Object{Strs: strs, Ints: ints, Ret: i64, Code: code})
			}
		}
	}
	for i, o := range tests {
		// Fault addresses differ for strings in scratch; none faults there.
		differAddr(t, fmt.Sprintf("%d: %v", i, o.Code), []*dif.Object{o}, &vm.Config{ScratchSize: bpf.DefaultScratch}, true)
	}
	t.Logf("%d DIFOs", len(tests))
}
