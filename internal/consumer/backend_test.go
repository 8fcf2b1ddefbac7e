//go:build linux

package consumer_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cilium/ebpf/rlimit"

	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/dtracetest"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/internal/linux"
	"github.com/kdtrace/kdtrace/internal/option"
	"github.com/kdtrace/kdtrace/internal/probe"
	"github.com/kdtrace/kdtrace/record"
)

// TestBackendMatchesVM runs the suite's programs of BEGIN, END and ERROR
// through the DIF VM and through the Linux backend, which runs them as
// BPF in this kernel, and compares what the consumer prints of each:
// the VM is the oracle of the translation. Programs whose output names
// the process they run in (pid, execname, …) or the time differ by
// nature; they are counted apart, by what they print.
func TestBackendMatchesVM(t *testing.T) {
	if testing.Short() {
		t.Skip("the suite runs cpp for each test")
	}
	if dtracetest.Race {
		// Minutes more, for no goroutine the other tests do not run.
		t.Skip("the suite's programs run without the race detector")
	}
	if os.Geteuid() != 0 {
		t.Skip("the backend needs root")
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Skip(err)
	}
	same, total := 0, 0
	var diffs []string
	for _, f := range dtracetest.Files(t, "tst.*.d") {
		if dtracetest.NeedsHelper(f) {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := compile(f, src, dtracetest.ParserConfig(f), true)
		if err != nil || len(timers(p.prog.ECBs)) > 0 {
			continue
		}
		vm, err := execute(p)
		if err != nil {
			continue // not a program the VM driver runs
		}
		got, err := runBackend(p)
		if errors.Is(err, errSkip) {
			continue
		}
		total++
		rel := dtracetest.Rel(t, f)
		switch {
		case err != nil:
			diffs = append(diffs, fmt.Sprintf("%s: %v", rel, err))
		case got.out != vm.out || got.status != vm.status:
			diffs = append(diffs, fmt.Sprintf("%s: BPF printed %q (status %d), the VM %q (status %d)", rel, trim(got.out), got.status, trim(vm.out), vm.status))
		default:
			same++
		}
	}
	t.Logf("%d of %d programs print the same through BPF as through the VM; the others:\n%s", same, total, strings.Join(diffs, "\n"))
	if same < minSameAsVM {
		t.Errorf("%d programs print the same through BPF as through the VM, want at least %d", same, minSameAsVM)
	}
}

// minSameAsVM is how many of the suite's programs print the same today.
const minSameAsVM = 187

func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// errSkip is a program the backend refuses for a feature it lacks.
var errSkip = errors.New("not supported by the backend")

// runBackend runs a program through the Linux backend: BEGIN, the
// records consumed until a clause exits, END.
func runBackend(p *program) (*run, error) {
	errp, err := compile("errprog", []byte(consumer.ErrorClause), &parser.Config{}, false)
	if err != nil {
		return nil, err
	}
	for _, e := range p.prog.ECBs {
		for _, a := range e.Actions {
			// BEGIN runs in this process, as dtrace's runs in
			// dtrace's: raise() and stop() would hit the test.
			if a.Kind == dof.ActRaise || a.Kind == dof.ActStop {
				return nil, errSkip
			}
		}
	}
	errECB := errp.prog.ECBs[0]
	errECB.UArg = dof.ECBError
	ecbs := append(p.prog.ECBs[:len(p.prog.ECBs):len(p.prog.ECBs)], errECB)
	opt := record.OptionsOf(p.prog)
	if v, ok := p.opts["strsize"]; ok {
		n, _ := option.ParseSize(v)
		opt.StrSize = uint32(n)
	}
	cfg := &linux.Config{Catalog: probe.New(probe.Dtrace()), Records: opt}
	cfg.BPF.StrSize = opt.StrSize
	tr, err := linux.Enable([]enabling.ECB(ecbs), cfg)
	if err != nil {
		if strings.Contains(err.Error(), "not supported") || strings.Contains(err.Error(), "not translated") || strings.Contains(err.Error(), "cannot translate") {
			return nil, errSkip
		}
		return nil, err
	}
	defer tr.Close()
	var out, stderr bytes.Buffer
	cons := consumer.New(tr.Describer(), consumerConfig(p, &out, &stderr))
	if err := tr.Go(); err != nil {
		return nil, err
	}
	if _, err := tr.Work(cons, false); err != nil {
		return nil, err
	}
	if d, err := tr.Draining(); err != nil || !d {
		return nil, errSkip // would run until interrupted
	}
	if err := tr.Stop(); err != nil {
		return nil, err
	}
	if _, err := tr.Work(cons, true); err != nil {
		return nil, err
	}
	if err := cons.Finish(); err != nil {
		return nil, err
	}
	status, _ := cons.Exited()
	return &run{out: out.String(), errs: stderr.String(), status: status}, nil
}
