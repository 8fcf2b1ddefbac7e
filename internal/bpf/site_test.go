//go:build linux

package bpf_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/linux/attach"
)

// TestSiteAtFunction checks how the program of an SDT site at a kernel
// function's entry reads the function's parameters, the site's arg0 …:
// a kprobe's from its pt_regs' argument registers (%rdi at 112, %rsi
// at 104), an fentry program's by bpf_get_func_arg, as many as the
// sites read, never a cookie; and that the kernel's verifier takes
// them.
func TestSiteAtFunction(t *testing.T) {
	for _, tc := range []struct {
		ctx  bpf.Context
		want []string
	}{
		{bpf.CtxEntry, []string{"regs 112", "regs 104"}},
		{bpf.CtxFEntry, []string{"arg 0", "arg 1"}},
	} {
		l, pp, ent := layOut(t, "BEGIN { trace(arg0); }", trampolineProbe, tc.ctx, nil)
		// The site's one argument is its arg1: the clause's arg0.
		_, site, _ := layOut(t, "BEGIN { trace(arg1); }", trampolineProbe, tc.ctx, nil)
		pp.Sites = []bpf.Site{{Index: 0, Args: []*dif.Object{site.Clauses[0].ECB.Actions[0].DIFO}}}
		pp.RawArgs = 2
		if err := l.AddProbe(pp); err != nil {
			t.Fatal(err)
		}
		insns, err := bpf.BuildProbe(pp, l)
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
				got = append(got, fmt.Sprintf("arg %d", r2))
			case in.IsBuiltinCall() && asm.BuiltinFunc(in.Constant) == asm.FnGetAttachCookie:
				t.Errorf("context %d: the program asks for its cookie", tc.ctx)
			case in.OpCode.Class().IsLoad() && in.OpCode.Mode() == asm.MemMode && in.Src == asm.R1 && in.Dst == asm.R2:
				// A word of the context, which R1 holds.
				got = append(got, fmt.Sprintf("regs %d", in.Offset))
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("context %d: parameter reads (-want +got):\n%s", tc.ctx, diff)
		}
		if tc.ctx == bpf.CtxFEntry {
			if err := attach.HaveTrampolines(); err != nil {
				t.Logf("fentry not loaded: %v", err)
				continue
			}
		}
		loadSite(t, l, pp, ent, insns)
	}
}

// loadSite loads the program of a site at a function, as kprobes' or
// as bpf_fentry_test6's fentry program, which the verifier must take.
func loadSite(t *testing.T, l *bpf.Layout, pp *bpf.ProbeProgram, ent bpf.ProbeEntry, insns asm.Instructions) {
	t.Helper()
	needBPF(t)
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
	var prog *ebpf.Program
	if pp.Context == bpf.CtxFEntry {
		var progs []*ebpf.Program
		progs, err = rt.LoadTrampolines([]bpf.Trampoline{{Name: "kd_site", Context: bpf.CtxFEntry, Insns: insns, Own: own, Function: trampolineProbe.Function}}, nil)
		if err == nil {
			prog = progs[0]
		}
	} else {
		prog, err = rt.LoadProbe("kd_site", pp.Context, insns, own, ebpf.AttachNone)
	}
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			t.Fatalf("context %d: %v\n%+v", pp.Context, err, ve)
		}
		t.Fatalf("context %d: %v", pp.Context, err)
	}
	prog.Close()
}

// TestSiteClauses checks that a site given the clauses its probe runs
// holds their code alone, and one given none every clause's, and that
// the verifier takes the program: at a tracepoint that several
// providers' probes share, each site's code is checked whole.
func TestSiteClauses(t *testing.T) {
	const n = 4
	var src strings.Builder
	for j := range n {
		fmt.Fprintf(&src, "BEGIN { trace(%d); }\n", j)
	}
	l, pp, ent := layOut(t, src.String(), beginProbe, bpf.CtxRawTP, nil)
	pp.Sites = []bpf.Site{{Index: 0, Clauses: []int{0, 2}}, {Index: 0, Clauses: []int{3}}, {Index: 0}}
	insns, err := bpf.BuildProbe(pp, l)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range insns {
		var site, clause int
		if _, err := fmt.Sscanf(in.Symbol(), "s%d_c%d_end", &site, &clause); err == nil {
			got = append(got, fmt.Sprintf("site %d clause %d", site, clause))
		}
	}
	want := []string{"site 0 clause 0", "site 0 clause 2", "site 1 clause 3",
		"site 2 clause 0", "site 2 clause 1", "site 2 clause 2", "site 2 clause 3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the sites' clauses (-want +got):\n%s", diff)
	}
	loadSite(t, l, pp, ent, insns)
}
