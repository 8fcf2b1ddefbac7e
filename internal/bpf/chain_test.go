//go:build linux

package bpf_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

// chainRun is a chain of probe programs built from the ECBs of src, all
// enabled on beginProbe and loaded on their own runtime.
type chainRun struct {
	rt    *bpf.Runtime
	links []bpf.Link
	progs []*ebpf.Program
}

func newChainRun(t *testing.T, src string) *chainRun {
	t.Helper()
	// 10,000 clauses make more DOF than dtrace_dof_maxsize.
	l, pp, ent := layOut(t, src, beginProbe, bpf.CtxRun, &enabling.Config{MaxLoadSize: 64 << 20})
	return loadChain(t, l, pp, ent)
}

// loadChain builds the chain of programs of pp, its probe's entry ent
// at index 0 of MapProbes, and loads it on a runtime of its own.
func loadChain(t *testing.T, l *bpf.Layout, pp *bpf.ProbeProgram, ent bpf.ProbeEntry) *chainRun {
	t.Helper()
	var err error
	r := &chainRun{}
	if r.rt, err = bpf.NewRuntime(l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.rt.Close() })
	if err := r.rt.AggsMade(); err != nil {
		t.Fatal(err)
	}
	if r.links, err = bpf.BuildChain(pp, l); err != nil {
		t.Fatal(err)
	}
	pm, err := bpf.NewProbeMap(len(pp.Clauses), map[uint32]bpf.ProbeEntry{0: ent})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pm.Close() })
	progs, chain, err := r.rt.LoadChain("kd_test", pp.Context, r.links, map[string]*ebpf.Map{bpf.MapProbes: pm}, ebpf.AttachNone)
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			t.Fatalf("%v\n%+v", err, ve)
		}
		t.Fatal(err)
	}
	r.progs = progs
	t.Cleanup(func() {
		for _, p := range progs {
			p.Close()
		}
		if chain != nil {
			chain.Close()
		}
	})
	return r
}

// fire runs the chain's first program once on CPU 0.
func (r *chainRun) fire(t *testing.T) {
	t.Helper()
	if _, err := r.progs[0].Run(&ebpf.RunOptions{Context: make([]byte, 8*7), Flags: testRunOnCPU, CPU: 0}); err != nil {
		t.Fatalf("test run: %v", err)
	}
}

// checkLinks checks that a chain's programs run every clause once, in
// order, and that there are several of them.
func checkLinks(t *testing.T, links []bpf.Link, nclauses int) {
	t.Helper()
	if len(links) < 2 || len(links) > bpf.MaxChain {
		t.Fatalf("%d clauses in %d programs, want 2 to %d", nclauses, len(links), bpf.MaxChain)
	}
	at := 0
	for i, l := range links {
		if l.Lo != at || l.Hi <= l.Lo {
			t.Fatalf("program %d runs clauses [%d, %d), want from %d", i, l.Lo, l.Hi, at)
		}
		at = l.Hi
	}
	if at != nclauses {
		t.Fatalf("the chain runs %d clauses of %d", at, nclauses)
	}
}

// TestChainOrder runs 10,000 clauses, split over a chain of programs,
// on a few firings: each clause counts the firings in which the clause
// run just before it was the one before it in the program, so that
// every count is the number of firings only if every clause ran at each
// firing, once and in order.
func TestChainOrder(t *testing.T) {
	needBPF(t)
	if testing.Short() {
		t.Skip("loading 10,000 clauses takes seconds")
	}
	const n, firings = 10000, 3
	var src strings.Builder
	src.WriteString("BEGIN { x = 0; }\n")
	for j := 1; j <= n; j++ {
		fmt.Fprintf(&src, "BEGIN { @[%d] = sum(x == %d); x = %d; }\n", j, j-1, j)
	}
	r := newChainRun(t, src.String())
	checkLinks(t, r.links, n+1)
	for range firings {
		r.fire(t)
	}
	got := aggSums(t, r.rt.Aggs[0])
	if len(got) != n {
		t.Errorf("%d keys, want %d", len(got), n)
	}
	bad := 0
	for j := uint64(1); j <= n; j++ {
		if got[j] != firings {
			if bad++; bad <= 10 {
				t.Errorf("@[%d] = %d, want %d", j, got[j], firings)
			}
		}
	}
}

// TestChainExit checks that exit() in a clause of a chain's later
// program ends the firing there, as in a lone program: the clauses
// after it, in its program and in the next, do not run.
func TestChainExit(t *testing.T) {
	needBPF(t)
	const n, stop = 2000, 1500
	var src strings.Builder
	for j := 1; j <= n; j++ {
		fmt.Fprintf(&src, "BEGIN { @[%d] = count(); }\n", j)
		if j == stop {
			src.WriteString("BEGIN { exit(0); }\n")
		}
	}
	r := newChainRun(t, src.String())
	checkLinks(t, r.links, n+1)
	if r.links[0].Hi > stop {
		t.Fatalf("exit() is in the chain's first program, [%d, %d)", r.links[0].Lo, r.links[0].Hi)
	}
	// The tracing drains: a second firing of BEGIN runs no clause.
	r.fire(t)
	r.fire(t)
	got := aggSums(t, r.rt.Aggs[0])
	if len(got) != stop {
		t.Errorf("%d keys, want %d", len(got), stop)
	}
	for j := uint64(1); j <= stop; j++ {
		if got[j] != 1 {
			t.Fatalf("@[%d] = %d, want 1", j, got[j])
		}
	}
}

// TestChainHelpersOnce checks that each program of a chain calls the
// helpers the verifier inlines where they are called (a map lookup, the
// CPU's number) from one place, a function of its own, however many
// clauses it runs: each inlining moves the whole program, which for
// hundreds of aggregations per program costs seconds of its load.
func TestChainHelpersOnce(t *testing.T) {
	const n = 2000
	var src strings.Builder
	for j := 1; j <= n; j++ {
		fmt.Fprintf(&src, "BEGIN /pid != %d/ { @[%d] = count(); self->x = %d; }\n", j, j, j)
	}
	l, pp, _ := layOut(t, src.String(), beginProbe, bpf.CtxRun, nil)
	links, err := bpf.BuildChain(pp, l)
	if err != nil {
		t.Fatal(err)
	}
	checkLinks(t, links, n)
	for i, k := range links {
		calls := map[asm.BuiltinFunc]int{}
		for _, ins := range k.Insns {
			if ins.IsBuiltinCall() {
				calls[asm.BuiltinFunc(ins.Constant)]++
			}
		}
		for _, fn := range []asm.BuiltinFunc{asm.FnMapLookupElem, asm.FnGetSmpProcessorId} {
			if calls[fn] != 1 {
				t.Errorf("program %d of %d clauses calls %v at %d places, want 1", i, k.Hi-k.Lo, fn, calls[fn])
			}
		}
	}
}

// TestChainSites runs a program of three SDT sites at a tracepoint, of
// 3,000 clauses each, split over a chain, on a few firings. The first
// site runs every clause with arg0 1, the second none, its condition
// false, though it has every clause (with arg0 100), the third the
// even ones with arg0 10: each clause sums arg0, which is 1 for the
// odd ones and 11 for the even ones at each firing only if every
// clause ran once at each site whose probe fires, with its arguments,
// in programs that go on with a site begun in the program before.
func TestChainSites(t *testing.T) {
	needBPF(t)
	const n, firings = 3000, 2
	var src strings.Builder
	for j := range n {
		fmt.Fprintf(&src, "BEGIN { @[%d] = sum(arg0); }\n", j)
	}
	l, pp, ent := layOut(t, src.String(), beginProbe, bpf.CtxRawTP, &enabling.Config{MaxLoadSize: 64 << 20})
	value := func(v int) *dif.Object {
		_, c, _ := layOut(t, fmt.Sprintf("BEGIN { trace(%d); }", v), beginProbe, bpf.CtxRawTP, nil)
		return c.Clauses[0].ECB.Actions[0].DIFO
	}
	var even []int
	for j := 0; j < n; j += 2 {
		even = append(even, j)
	}
	pp.Sites = []bpf.Site{
		{Index: 0, Args: []*dif.Object{value(1)}},
		{Index: 0, Cond: value(0), Args: []*dif.Object{value(100)}},
		{Index: 0, Cond: value(1), Args: []*dif.Object{value(10)}, Clauses: even},
	}
	if err := l.AddProbe(pp); err != nil {
		t.Fatal(err)
	}
	r := loadChain(t, l, pp, ent)
	if len(r.links) < 3 {
		t.Fatalf("%d clauses at 3 sites in %d programs", n, len(r.links))
	}
	if err := r.rt.SetActivity(bpf.ActivityActive); err != nil {
		t.Fatal(err)
	}
	for range firings {
		r.fire(t)
	}
	got := aggSums(t, r.rt.Aggs[0])
	if len(got) != n {
		t.Errorf("%d keys, want %d", len(got), n)
	}
	bad := 0
	for j := range uint64(n) {
		want := uint64(firings)
		if j%2 == 0 {
			want *= 11
		}
		if got[j] != want {
			if bad++; bad <= 10 {
				t.Errorf("@[%d] = %d, want %d", j, got[j], want)
			}
		}
	}
}
