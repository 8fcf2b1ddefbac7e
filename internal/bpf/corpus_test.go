//go:build linux

package bpf_test

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/dtracetest"
)

// TestCorpus translates every DIFO of the suite's scripts that compile
// here without cpp. Each is either refused with an *Error or loaded, and
// the verifier must take every one translated: a refusal by the
// verifier is a bug of the translation, never the user's.
func TestCorpus(t *testing.T) {
	needBPF(t)
	files := dtracetest.Files(t, "tst.*.d")
	translated, refused := 0, 0
	why := map[string]int{}
	for _, f := range files {
		objs := compileFile(f)
		if len(objs) == 0 {
			continue
		}
		l := newLayout(t, nil)
		for _, o := range objs {
			if err := l.Add(o); err != nil {
				t.Fatalf("%s: %v", dtracetest.Rel(t, f), err)
			}
		}
		rt, err := bpf.NewRuntime(l)
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.AggsMade(); err != nil {
			t.Fatal(err)
		}
		for i, o := range objs {
			insns, err := bpf.Translate(o, l)
			var e *bpf.Error
			switch {
			case errors.As(err, &e):
				refused++
				if e.PC >= 0 {
					why[e.Instr.Op().String()]++
				} else {
					why[e.Reason]++
				}
				continue
			case err != nil:
				t.Fatalf("%s: DIFO %d: %v", dtracetest.Rel(t, f), i, err)
			}
			p, err := rt.Load("corpus", insns)
			if err != nil {
				t.Errorf("%s: DIFO %d: %v", dtracetest.Rel(t, f), i, err)
				continue
			}
			p.Close()
			translated++
		}
		rt.Close()
	}
	var reasons []string
	for k, n := range why {
		reasons = append(reasons, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(reasons)
	t.Logf("%d DIFOs translated and loaded, %d refused: %s", translated, refused, strings.Join(reasons, ", "))
}

// TestCorpusRun runs the suite's scripts whose every DIFO translates, on
// dif/vm and in the kernel, as one firing of all their clauses, and
// compares the values. Scripts that read the clock or kernel memory are
// left out: the VM has neither.
func TestCorpusRun(t *testing.T) {
	needBPF(t)
	files := dtracetest.Files(t, "tst.*.d")
	scripts, difos := 0, 0
	for _, f := range files {
		objs := compileFile(f)
		if len(objs) == 0 || !comparable(objs) {
			continue
		}
		scripts++
		difos += len(objs)
		differ(t, dtracetest.Rel(t, f), objs, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	}
	t.Logf("%d scripts, %d DIFOs compared", scripts, difos)
}

// comparable reports whether every DIFO translates and reads neither
// the clock, nor kernel memory, nor the stack, nor the task, nor
// random numbers.
func comparable(objs []*dif.Object) bool {
	l, _ := bpf.NewLayout(nil)
	for _, o := range objs {
		if l.Add(o) != nil {
			return false
		}
		if _, err := bpf.Translate(o, l); err != nil {
			return false
		}
		for _, in := range o.Code {
			op := in.Op()
			// The VM has no registers to give regs[] and uregs[].
			regs := op == dif.LDGA && (uint32(in.R1()) == dif.VarRegs || uint32(in.R1()) == dif.VarUregs)
			// Nor this machine's processes, which progenyof() walks.
			calls := op == dif.CALL && (in.Subr() == dif.SubrRand || in.Subr() == dif.SubrProgenyof)
			if op.Form() == dif.FormLoad || op == dif.LDGS && unknown[in.Var()] || calls || regs {
				return false
			}
		}
	}
	return true
}

// unknown are the built-in variables the VM does not know.
var unknown = map[uint16]bool{dif.VarTimestamp: true, dif.VarWalltimestamp: true, dif.VarVtimestamp: true,
	dif.VarCurthread: true, dif.VarCaller: true, dif.VarUcaller: true, dif.VarStackdepth: true, dif.VarUstackdepth: true}

// compileFile compiles a script of the suite and returns its DIFOs, or
// none if it does not compile here.
func compileFile(path string) []*dif.Object {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	dp, err := dtracetest.Compile(path, src, dtracetest.ParserConfig(path))
	if err != nil {
		return nil
	}
	return difos(dp)
}
