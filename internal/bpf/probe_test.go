//go:build linux

package bpf_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"maps"
	"runtime"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/record"
)

// probeRun is a probe program built from D, loaded on its own runtime:
// dtrace:::BEGIN's ECBs, run on CPU 0 with BPF_PROG_RUN.
type probeRun struct {
	rt   *bpf.Runtime
	prog *ebpf.Program
	pm   *ebpf.Map
	eps  []*record.EProbe
}

// beginProbe is the probe the ECBs are enabled on.
var beginProbe = record.Probe{ID: 1, Provider: "dtrace", Name: "BEGIN"}

// newProbeRun compiles src and builds, as internal/linux does, the program
// of its ECBs enabled on beginProbe.
func newProbeRun(t *testing.T, src string) *probeRun {
	t.Helper()
	return newProbeRunOn(t, src, bpf.CtxRun, 0)
}

// newProbeRunOn is newProbeRun for a program of context ctx, whose
// probe has the given index.
func newProbeRunOn(t *testing.T, src string, ctx bpf.Context, index uint32) *probeRun {
	t.Helper()
	b, err := dof.Write(compileD(t, src), nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := enabling.Load(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	rl := record.NewLayout(record.OptionsOf(k))
	pp := &bpf.ProbeProgram{Context: ctx}
	ent := bpf.ProbeEntry{ID: beginProbe.ID}
	r := &probeRun{}
	for i := range k.ECBs {
		eps, err := rl.Add(&k.ECBs[i], []record.Probe{beginProbe})
		if err != nil {
			t.Fatal(err)
		}
		pp.Clauses = append(pp.Clauses, bpf.Clause{ECB: &k.ECBs[i], EP: eps[0]})
		ent.EPIDs = append(ent.EPIDs, eps[0].EPID)
		r.eps = append(r.eps, eps[0])
	}
	l := newLayout(t, nil)
	if err := l.AddProbe(pp); err != nil {
		t.Fatal(err)
	}
	if r.rt, err = bpf.NewRuntime(l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.rt.Close() })
	if err := r.rt.AggsMade(); err != nil {
		t.Fatal(err)
	}
	insns, err := bpf.BuildProbe(pp, l)
	if err != nil {
		t.Fatal(err)
	}
	if r.pm, err = bpf.NewProbeMap(len(pp.Clauses), map[uint32]bpf.ProbeEntry{index: ent}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.pm.Close() })
	if r.prog, err = r.rt.LoadProbe("kd_test", ctx, insns, map[string]*ebpf.Map{bpf.MapProbes: r.pm}, ebpf.AttachNone); err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			t.Fatalf("%v\n%+v", err, ve)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { r.prog.Close() })
	return r
}

// fire runs the program once on CPU 0, as BEGIN fired with args.
func (r *probeRun) fire(t *testing.T, args ...uint64) {
	t.Helper()
	ctx := make([]byte, 8*7)
	for i, a := range args[:min(len(args), 6)] {
		binary.NativeEndian.PutUint64(ctx[8*(i+1):], a)
	}
	if _, err := r.prog.Run(&ebpf.RunOptions{Context: ctx, Flags: testRunOnCPU, CPU: 0}); err != nil {
		t.Fatalf("test run: %v", err)
	}
}

// aggData returns the data of the only entry of aggregation map i,
// summed over the CPUs word by word.
func (r *probeRun) aggData(t *testing.T, i int) []int64 {
	t.Helper()
	var (
		key  []byte
		vals [][]byte
		sum  []int64
		n    int
	)
	it := r.rt.Aggs[i].Iterate()
	for it.Next(&key, &vals) {
		n++
		for _, v := range vals {
			v = v[:len(v)-bpf.AggTouched]
			if sum == nil {
				sum = make([]int64, len(v)/8)
			}
			for w := range sum {
				sum[w] += int64(binary.NativeEndian.Uint64(v[8*w:]))
			}
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d entries in aggregation map %d, want 1", n, i)
	}
	return sum
}

// TestLLQuantize aggregates many values with llquantize() in BPF and
// compares the buckets with record.LLQuantizeBucket's.
func TestLLQuantize(t *testing.T) {
	needBPF(t)
	vals := []int64{-1 << 63, -5, -1, 0, 1, 2, 3, 9, 10, 11, 99, 100, 101, 999, 1000, 1001, 12345, 99999, 100000,
		1<<31 - 1, 1 << 31, 1<<40 + 7, 1<<62 + 3, 1<<63 - 1}
	for x := int64(1); x < 1<<62; x = x*3 + 1 {
		vals = append(vals, x, x-1, x+1, -x)
	}
	for _, p := range [][4]uint16{{10, 0, 6, 20}, {2, 0, 62, 2}, {10, 2, 4, 100}, {4, 1, 5, 16}, {10, 0, 18, 10}, {7, 3, 20, 49}, {100, 0, 8, 100}} {
		src := fmt.Sprintf("BEGIN { @ = llquantize(arg0, %d, %d, %d, %d, arg1); }", p[0], p[1], p[2], p[3])
		t.Run(src, func(t *testing.T) {
			defer onCPU0(t)()
			r := newProbeRun(t, src)
			arg := dof.LLQuantizeArg(p[0], p[1], p[2], p[3])
			var want []int64
			for i, v := range vals {
				r.fire(t, uint64(v), uint64(i+1))
				b := record.LLQuantizeBucket(arg, v) + 1
				for len(want) <= b {
					want = append(want, 0)
				}
				want[b] += int64(i + 1)
			}
			got := r.aggData(t, 0)
			if uint64(got[0]) != arg {
				t.Errorf("word 0 %#x, want the parameters %#x", got[0], arg)
			}
			want[0] = got[0]
			for len(want) < len(got) {
				want = append(want, 0)
			}
			for b := range got {
				if got[b] != want[b] {
					t.Errorf("bucket %d: %d, want %d", b-1, got[b], want[b])
				}
			}
		})
	}
}

// TestErrno runs a program on the raw tracepoint sys_exit for close(2),
// as syscall::close:return, and makes close(-1) fail with EBADF in this
// thread: errno is the error, and 0 after a close that succeeds; arg0
// and arg1 are -1 for the failed calls, as dtrace's syscall provider
// returns them, and 0 for the other.
func TestErrno(t *testing.T) {
	needBPF(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// The key holds errno, then the low 4 bits of arg0 and of arg1.
	src := fmt.Sprintf("BEGIN /tid == %d/ { @[errno << 8 | (arg0 & 0xf) << 4 | arg1 & 0xf] = count(); }", unix.Gettid())
	r := newProbeRunOn(t, src, bpf.CtxSysExit, unix.SYS_CLOSE)
	if err := r.rt.SetActivity(bpf.ActivityActive); err != nil {
		t.Fatal(err)
	}
	l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: "sys_exit", Program: r.prog})
	if err != nil {
		t.Skipf("attaching to sys_exit: %v", err)
	}
	defer l.Close()
	for range 3 {
		if err := unix.Close(-1); err != unix.EBADF {
			t.Fatalf("close(-1): %v", err)
		}
	}
	fd, err := unix.Open("/dev/null", unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Close(fd); err != nil {
		t.Fatal(err)
	}
	l.Close()
	// The key's last record is errno's.
	got := aggSums(t, r.rt.Aggs[0])
	want := map[uint64]uint64{uint64(unix.EBADF)<<8 | 0xff: 3, 0: 1}
	if !maps.Equal(got, want) {
		t.Errorf("errno, arg0 and arg1 counts %#x, want %#x", got, want)
	}
}

// TestNoJumpToNext checks that a probe program has no jump to the
// instruction after it: the verifier removes each such jump by moving
// the whole program, which a program of many clauses pays for each.
func TestNoJumpToNext(t *testing.T) {
	prog := compileD(t, `BEGIN /arg0 == 1/ { @[1] = count(); } BEGIN /arg0 == 2/ { trace(arg1); }`)
	b, err := dof.Write(prog, nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := enabling.Load(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	rl := record.NewLayout(record.OptionsOf(k))
	pp := &bpf.ProbeProgram{Context: bpf.CtxRun}
	for i := range k.ECBs {
		eps, err := rl.Add(&k.ECBs[i], []record.Probe{beginProbe})
		if err != nil {
			t.Fatal(err)
		}
		pp.Clauses = append(pp.Clauses, bpf.Clause{ECB: &k.ECBs[i], EP: eps[0]})
	}
	l := newLayout(t, nil)
	if err := l.AddProbe(pp); err != nil {
		t.Fatal(err)
	}
	insns, err := bpf.BuildProbe(pp, l)
	if err != nil {
		t.Fatal(err)
	}
	for i, ins := range insns[:len(insns)-1] {
		if ins.OpCode.JumpOp() == asm.Ja && ins.OpCode.Class().IsJump() && ins.Reference() != "" && ins.Reference() == insns[i+1].Symbol() {
			t.Errorf("instruction %d jumps to the next: %v", i, ins)
		}
	}
}
