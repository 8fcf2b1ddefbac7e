package kinst_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
)

// unguarded is a Kinst that drops the guards, as the rewrite was before
// it guarded kinst's shared return sites.
type unguarded struct{ sugar.Kinst }

func (u unguarded) Sites(fn string, ret bool) (*sugar.Sites, error) {
	s, err := u.Kinst.Sites(fn, ret)
	if s != nil {
		c := *s
		c.Guards = nil
		s = &c
	}
	return s, err
}

// compileKinst compiles src through the kinst rewrite of k.
func compileKinst(t *testing.T, src string, k sugar.Kinst) *dof.Program {
	t.Helper()
	c := check.NewChecker(&check.Config{})
	cfg := &parser.Config{Types: c, Declare: c.Declare, DefineTag: c.DefineTag}
	prog, err := parser.ParseFile("t.d", []byte(src), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&sugar.Expander{Kinst: k}).Expand(prog); err != nil {
		t.Fatal(err)
	}
	info, err := c.Check(prog)
	if err != nil {
		t.Fatal(err)
	}
	p, err := emit.Program(prog, info, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// run passes one thread along path, the offsets of req_submit's
// instructions it executes, on machine m: at each that a description
// of p names it fires that probe's clauses in program order, as the
// kernel would, and counts what trace(probename) records under the
// traced function's probe name.
func run(t *testing.T, m *vm.Machine, p *dof.Program, path []uint64, counts map[string]int) {
	t.Helper()
	for _, off := range path {
		name := strconv.FormatUint(off, 10)
		ctx := &vm.Context{ProbeProv: "kinst", ProbeFunc: "req_submit", ProbeName: name}
		m.BeginFiring()
		for _, ecb := range p.ECBs {
			if ecb.Probe.Provider != "kinst" || ecb.Probe.Function != "req_submit" || ecb.Probe.Name != name {
				continue
			}
			m.BeginClause()
			if ecb.Pred != nil {
				v, err := m.Run(emit.Object(ecb.Pred), ctx)
				if err != nil {
					t.Fatal(err)
				}
				if v == 0 {
					continue
				}
			}
			for _, a := range ecb.Actions {
				if a.DIFO == nil {
					continue
				}
				o := emit.Object(a.DIFO)
				v, err := m.Run(o, ctx)
				if err != nil {
					t.Fatal(err)
				}
				if a.Kind == dof.ActDIFExpr && o.Ret.Size != 0 {
					s, err := m.ReadString(v)
					if err != nil {
						t.Fatal(err)
					}
					counts[s]++
				}
			}
		}
	}
}

// TestGuardedReturnInVM runs the kinst rewrite of the bundled demo's
// req_valid and req_bytes, both inlined into req_submit, in the
// in-process DIF machine along req_submit's real paths (objdump -d of
// examples/kinst/demo): +47 is where req_bytes' copy returns, and also
// the join that a request failing req_valid reaches, without running
// req_bytes' entry (+27), and that a valid one reaches after
// req_valid's copy has already returned (at +17). Guarded, each
// function's return fires once per call on every path; without the
// guards it fires for calls that never happened.
func TestGuardedReturnInVM(t *testing.T) {
	r := demoResolver(t, false)
	src := `kinst::req_valid:entry { trace("valid entry"); }
kinst::req_bytes:entry { trace("bytes entry"); }
kinst::req_valid:return { trace("valid return"); }
kinst::req_bytes:return { trace("bytes return"); }
`
	const (
		null  = "NULL request"
		empty = "len <= 0"
		odd   = "flags & 1"
		valid = "valid, len 2"
	)
	paths := map[string][]uint64{
		null:  {0x00, 0x03, 0x38, 0x3d, 0x3f},
		empty: {0x00, 0x03, 0x05, 0x08, 0x0d, 0x0f, 0x2f, 0x31},
		odd:   {0x00, 0x03, 0x05, 0x08, 0x0d, 0x0f, 0x11, 0x15, 0x2f, 0x31},
		valid: {0x00, 0x03, 0x05, 0x08, 0x0d, 0x0f, 0x11, 0x15, 0x17, 0x1b, 0x1d,
			0x20, 0x23, 0x26, 0x2a, 0x2d, 0x20, 0x23, 0x26, 0x2a, 0x2d, 0x2f, 0x31},
	}
	calls := func(bytes bool) map[string]int {
		m := map[string]int{"valid entry": 1, "valid return": 1}
		if bytes {
			m["bytes entry"], m["bytes return"] = 1, 1
		}
		return m
	}
	tests := []struct {
		path      string
		guarded   map[string]int
		unguarded map[string]int
	}{
		{null, calls(false), calls(false)},
		// +47 fires req_bytes' return for a call never made.
		{empty, calls(false), map[string]int{"valid entry": 1, "valid return": 1, "bytes return": 1}},
		{odd, calls(false), map[string]int{"valid entry": 1, "valid return": 2, "bytes return": 1}},
		// req_valid's copy left at +17; +47 is its exit too.
		{valid, calls(true), map[string]int{"valid entry": 1, "valid return": 2, "bytes entry": 1, "bytes return": 1}},
	}
	guarded := compileKinst(t, src, r)
	plain := compileKinst(t, src, unguarded{r})
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			for _, c := range []struct {
				p    *dof.Program
				want map[string]int
			}{{guarded, tt.guarded}, {plain, tt.unguarded}} {
				got := map[string]int{}
				run(t, vm.New(nil), c.p, paths[tt.path], got)
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("guarded %v: firings (-want +got):\n%s", c.p == guarded, diff)
				}
			}
		})
	}
	// One thread along every path in turn, the flags carried over
	// from call to call: each call counted once.
	m := vm.New(nil)
	got := map[string]int{}
	for _, path := range []string{valid, empty, null, valid, odd, valid} {
		run(t, m, guarded, paths[path], got)
	}
	want := map[string]int{"valid entry": 6, "valid return": 6, "bytes entry": 3, "bytes return": 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("six calls on one thread (-want +got):\n%s", diff)
	}
}
