//go:build linux

package bpf_test

import (
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/linux/attach"
	"github.com/kdtrace/kdtrace/record"
)

// trampolineProbe is the fbt probe the trampoline tests enable.
var trampolineProbe = record.Probe{ID: 1, Provider: "fbt", Module: "vmlinux", Function: "bpf_fentry_test6", Name: "entry"}

// buildOn compiles src and builds the program of its ECBs on a probe of
// context ctx, as internal/linux does; the layout and the probe's entry
// come with it.
func buildOn(t *testing.T, src string, ctx bpf.Context) (asm.Instructions, *bpf.Layout, *bpf.ProbeProgram, bpf.ProbeEntry, error) {
	t.Helper()
	l, pp, ent := layOut(t, src, trampolineProbe, ctx, nil)
	insns, err := bpf.BuildProbe(pp, l)
	return insns, l, pp, ent, err
}

// argsSrc reads every argument, each in a word of the aggregation's key.
const argsSrc = "BEGIN { @[arg0, arg1, arg2, arg3, arg4, arg5, arg6, arg9] = count(); }"

// TestTrampolineArgsCode checks, without a kernel, how the programs of
// fentry and fexit probes find their arguments: bpf_get_func_arg for
// each of arg0 … arg9 at fentry, bpf_get_func_ret alone at fexit, and
// never a cookie or pt_regs.
func TestTrampolineArgsCode(t *testing.T) {
	for _, tc := range []struct {
		ctx  bpf.Context
		want []string
	}{
		{bpf.CtxFEntry, []string{"arg 0", "arg 1", "arg 2", "arg 3", "arg 4", "arg 5", "arg 6", "arg 7", "arg 8", "arg 9"}},
		{bpf.CtxFExit, []string{"ret"}},
	} {
		insns, _, _, _, err := buildOn(t, argsSrc, tc.ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var r2 int64 = -1
		for _, in := range insns {
			switch {
			case in.OpCode.ALUOp() == asm.Mov && in.Dst == asm.R2 && in.OpCode.Source() == asm.ImmSource:
				r2 = in.Constant
			case in.IsBuiltinCall() && asm.BuiltinFunc(in.Constant) == asm.FnGetFuncArg:
				got = append(got, "arg "+string(rune('0'+r2)))
			case in.IsBuiltinCall() && asm.BuiltinFunc(in.Constant) == asm.FnGetFuncRet:
				got = append(got, "ret")
			case in.IsBuiltinCall() && asm.BuiltinFunc(in.Constant) == asm.FnGetAttachCookie:
				t.Errorf("context %d: the program asks for its cookie", tc.ctx)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("context %d: argument reads (-want +got):\n%s", tc.ctx, diff)
		}
		if pt := tc.ctx.ProgramType(); pt != ebpf.Tracing {
			t.Errorf("context %d: program type %v, want Tracing", tc.ctx, pt)
		}
	}
	if at := bpf.CtxFEntry.AttachType(); at != ebpf.AttachTraceFEntry {
		t.Errorf("fentry's attach type %v", at)
	}
	if at := bpf.CtxFExit.AttachType(); at != ebpf.AttachTraceFExit {
		t.Errorf("fexit's attach type %v", at)
	}
}

// TestTrampolineRegs: regs[] at an fentry or fexit probe is refused,
// never read from a context that holds no registers; uregs[] is the
// thread's, as anywhere.
func TestTrampolineRegs(t *testing.T) {
	for _, ctx := range []bpf.Context{bpf.CtxFEntry, bpf.CtxFExit} {
		_, _, pp, _, err := buildOn(t, "BEGIN { trace(regs[4]); }", ctx)
		var be *bpf.Error
		if !errors.As(err, &be) {
			t.Errorf("context %d: regs[] built with error %v, want a *bpf.Error", ctx, err)
		}
		if !bpf.ReadsRegs(pp.Clauses[0].ECB) {
			t.Errorf("context %d: ReadsRegs is false for a clause reading regs[]", ctx)
		}
		_, _, pp, _, err = buildOn(t, "BEGIN { trace(uregs[4]); }", ctx)
		if err != nil {
			t.Errorf("context %d: uregs[]: %v", ctx, err)
		}
		if bpf.ReadsRegs(pp.Clauses[0].ECB) {
			t.Errorf("context %d: ReadsRegs is true for a clause reading uregs[]", ctx)
		}
	}
}

// TestTrampolineRun attaches the fentry and fexit programs of argsSrc,
// loaded together, to bpf_fentry_test6, which the kernel's test run of
// a tracing program calls as bpf_fentry_test6(16, 17, 18, 19, 20, 21),
// returning 111: the arguments read at fentry are those, 0 past the
// sixth; at fexit arg0 is 0 (the return offset, unknown, as at a
// kretprobe) and arg1 111. It needs a kernel with trampolines (not the
// development machines').
func TestTrampolineRun(t *testing.T) {
	needBPF(t)
	if err := attach.HaveTrampolines(); err != nil {
		t.Skip(err)
	}
	insns, l, pp, ent, err := buildOn(t, argsSrc, bpf.CtxFEntry)
	if err != nil {
		t.Fatal(err)
	}
	exit := *pp
	exit.Context = bpf.CtxFExit
	exitInsns, err := bpf.BuildProbe(&exit, l)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := bpf.NewRuntime(l)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if err := rt.AggsMade(); err != nil {
		t.Fatal(err)
	}
	pm, err := bpf.NewProbeMap(len(pp.Clauses), map[uint32]bpf.ProbeEntry{0: ent})
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Close()
	own := map[string]*ebpf.Map{bpf.MapProbes: pm}
	progs, err := rt.LoadTrampolines([]bpf.Trampoline{
		{Name: "kd_entry", Context: bpf.CtxFEntry, Insns: insns, Own: own, Function: trampolineProbe.Function},
		{Name: "kd_return", Context: bpf.CtxFExit, Insns: exitInsns, Own: own, Function: trampolineProbe.Function},
	}, nil)
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			t.Fatalf("%v\n%+v", err, ve)
		}
		t.Fatal(err)
	}
	for i, ctx := range []bpf.Context{bpf.CtxFEntry, bpf.CtxFExit} {
		defer progs[i].Close()
		lk, err := link.AttachTracing(link.TracingOptions{Program: progs[i], AttachType: ctx.AttachType()})
		if err != nil {
			t.Fatal(err)
		}
		defer lk.Close()
	}
	if err := rt.SetActivity(bpf.ActivityActive); err != nil {
		t.Fatal(err)
	}
	if _, err := progs[0].Run(&ebpf.RunOptions{}); err != nil {
		t.Fatalf("test run: %v", err)
	}
	var (
		key  []byte
		vals [][]byte
		got  [][]uint64
	)
	it := rt.Aggs[0].Iterate()
	for it.Next(&key, &vals) {
		// The key ends with the eight 8-byte records.
		var k []uint64
		for w := range 8 {
			k = append(k, binary.NativeEndian.Uint64(key[len(key)-64+8*w:]))
		}
		got = append(got, k)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, slices.Compare)
	want := [][]uint64{
		{0, 111, 0, 0, 0, 0, 0, 0},     // fexit
		{16, 17, 18, 19, 20, 21, 0, 0}, // fentry
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("arg0 … arg6, arg9 at fexit and fentry (-want +got):\n%s", diff)
	}
}

// TestLoadTrampolinesKernelTypes checks that loading trampolines finds
// their functions in the kernel's BTF given, as attach.TrampolineTarget
// read it: after the load, loaded or refused (the development machines
// refuse every trampoline), the cache holds the kernel's BTF, and
// gives it without reading it again.
func TestLoadTrampolinesKernelTypes(t *testing.T) {
	needBPF(t)
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("the kernel publishes no BTF: %v", err)
	}
	insns, l, pp, ent, err := buildOn(t, "BEGIN { trace(arg0); }", bpf.CtxFEntry)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := bpf.NewRuntime(l)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	pm, err := bpf.NewProbeMap(len(pp.Clauses), map[uint32]bpf.ProbeEntry{0: ent})
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Close()
	c := btf.NewCache()
	progs, err := rt.LoadTrampolines([]bpf.Trampoline{
		{Name: "kd_entry", Context: bpf.CtxFEntry, Insns: insns, Own: map[string]*ebpf.Map{bpf.MapProbes: pm}, Function: trampolineProbe.Function},
	}, c)
	t.Logf("LoadTrampolines: %v", err)
	for _, p := range progs {
		p.Close()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := c.Kernel(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// Reading and indexing the kernel's BTF allocates megabytes; a
	// cache that holds it, next to nothing.
	if n := after.TotalAlloc - before.TotalAlloc; n >= 64<<10 {
		t.Errorf("the cache allocated %d bytes to give the kernel's BTF: the load did not read it there", n)
	}
}
