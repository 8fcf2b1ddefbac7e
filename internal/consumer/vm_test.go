package consumer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/dlang/cpp"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
	"github.com/kdtrace/kdtrace/internal/dlang/library"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/internal/option"
	"github.com/kdtrace/kdtrace/record"
)

// The driver below plays the kernel for the dtrace provider's probes
// and the profile provider's timers with the DIF VM, and dtrace(1)
// around the consumer: it compiles D, enables each ECB for the BEGIN,
// END, ERROR, tick-N and profile-N probes it matches, fires BEGIN, lets
// the consumer print the buffer, fires the timers in time order on one
// CPU, each firing printed as it happens, until a clause calls exit(),
// then fires END and prints that buffer too. It lives in a test
// because what it decides beyond the record format — when END fires,
// what a fault does to the firing, which ECBs an exit() skips — is the
// runtime's (issue 11), which will own the same steps with its own
// state machine, buffers per CPU and signals.

// timerRE is the name of a profile provider probe and its rate.
var timerRE = regexp.MustCompile(`^(tick|profile)-(\d+)(ns|nsec|us|usec|ms|msec|s|sec|m|min|h|hour|d|day|hz)?$`)

// timerUnits are the nanoseconds in each of the profile provider's units.
var timerUnits = map[string]uint64{
	"ns": 1, "nsec": 1, "us": 1e3, "usec": 1e3, "ms": 1e6, "msec": 1e6, "s": 1e9, "sec": 1e9,
	"m": 60e9, "min": 60e9, "h": 3600e9, "hour": 3600e9, "d": 86400e9, "day": 86400e9,
}

// timer is a profile provider probe the program names, with its
// period in nanoseconds.
type timer struct {
	probe  record.Probe
	period uint64
}

// timers finds the profile probes the program's descriptions name
// (tick-N and profile-N, in any unit), numbered after dtrace's own.
func timers(ecbs []enabling.ECB) []timer {
	var ts []timer
	seen := map[string]bool{}
	for _, e := range ecbs {
		d := e.Probe
		m := timerRE.FindStringSubmatch(d.Name)
		if m == nil || seen[d.Name] || (d.Provider != "" && d.Provider != "profile") || d.Module != "" || d.Function != "" {
			continue
		}
		seen[d.Name] = true
		n, _ := strconv.ParseUint(m[2], 10, 64)
		var period uint64
		if u, ok := timerUnits[m[3]]; ok {
			period = n * u
		} else if n != 0 {
			period = 1e9 / n // hz, the default
		}
		if period == 0 {
			continue
		}
		ts = append(ts, timer{record.Probe{ID: uint32(len(dtraceProbes) + len(ts) + 1), Provider: "profile", Name: d.Name}, period})
	}
	return ts
}

// dtraceProbes are the dtrace provider's probes, in ID order.
var dtraceProbes = []record.Probe{
	{ID: record.ProbeBegin, Provider: "dtrace", Name: "BEGIN"},
	{ID: record.ProbeEnd, Provider: "dtrace", Name: "END"},
	{ID: record.ProbeError, Provider: "dtrace", Name: "ERROR"},
}

// program is a compiled D program and the options its pragmas set.
type program struct {
	prog *enabling.Program
	opts map[string]string
}

// errNotDTrace is a program that enables other probes than dtrace's
// and the profile provider's timers.
var errNotDTrace = errors.New("enables probes other than BEGIN, END, ERROR, tick-N and profile-N")

var strsizeRE = regexp.MustCompile(`(?m)^\s*#pragma\s+D\s+option\s+strsize=(\w+)`)

// printed numbers the types of the print() values of every program the
// tests compile, as dtrace.Handle's table does.
var printed = new(types.Table)

// compile runs D source through the compiler as dtrace -C -s does
// (cpp when useCPP), and the kernel's loader.
func compile(name string, src []byte, pcfg *parser.Config, useCPP bool) (*program, error) {
	if useCPP {
		res, err := cpp.Preprocess(context.Background(), name, src, cpp.Options{})
		if err != nil {
			return nil, err
		}
		src = res.Text
	}
	// dtrace sets strsize as the pragma is read, before the types the
	// rest of the program uses; the checker takes it when made.
	var strsize int64
	if m := strsizeRE.FindSubmatch(src); m != nil {
		n, _ := option.ParseSize(string(m[1]))
		strsize = int64(n)
	}
	c := check.NewChecker(&check.Config{StringSize: strsize})
	// kdtrace's own libraries, as the command loads them; those that
	// need the kernel's types are left out.
	if _, err := library.Load(c, library.Files("linux"), &library.Config{StringSize: c.StringSize(), SkipBroken: true, Lazy: true}); err != nil {
		return nil, err
	}
	opts := map[string]string{}
	cfg := *pcfg
	cfg.Types, cfg.Declare, cfg.DefineTag, cfg.AllowEmpty = c, c.Declare, c.DefineTag, true
	cfg.SetOption = func(name, value string) error {
		opts[name] = value
		if name == "version" {
			// As the command (dtrace.Handle) applies it, while parsing.
			return c.SetVersion(value)
		}
		return nil
	}
	prog, err := parser.ParseFile(name, src, &cfg)
	if err != nil {
		return nil, err
	}
	if err := (&sugar.Expander{}).Expand(prog); err != nil {
		return nil, err
	}
	info, err := c.Check(prog)
	if err != nil {
		return nil, err
	}
	p, err := emit.Program(prog, info, &emit.Config{StringSize: c.StringSize(), Types: printed})
	if err != nil {
		return nil, err
	}
	b, err := dof.Write(p, nil)
	if err != nil {
		return nil, err
	}
	k, err := enabling.Load(b, nil)
	if err != nil {
		return nil, err
	}
	return &program{prog: k, opts: opts}, nil
}

// matches reports whether a probe description names the probe.
func matches(d dof.ProbeSpec, p record.Probe) bool {
	for _, f := range [][2]string{{d.Provider, p.Provider}, {d.Module, p.Module}, {d.Function, p.Function}, {d.Name, p.Name}} {
		if ok, _ := path.Match(f[0], f[1]); f[0] != "" && !ok {
			return false
		}
	}
	return true
}

// run is one run of a program: what it printed and its exit status.
type run struct {
	timers bool // the program enables tick-N or profile-N probes
	out    string
	errs   string // what dtrace writes to stderr
	status int
}

// errNoExit is a program that would trace until interrupted.
var errNoExit = errors.New("no clause calls exit(): dtrace would run until interrupted")

// execute enables the program, fires BEGIN and END with the VM and
// prints what they record with a consumer.
func execute(p *program) (*run, error) {
	var out bytes.Buffer
	r, err := executeTo(p, &out)
	if r != nil {
		r.out = out.String()
	}
	return r, err
}

// executeTo runs the program with its output to w.
func executeTo(p *program, w io.Writer) (*run, error) {
	ecbs := p.prog.ECBs
	errp, err := compile("errprog", []byte(consumer.ErrorClause), &parser.Config{}, false)
	if err != nil {
		return nil, fmt.Errorf("libdtrace's ERROR clause: %v", err)
	}
	errECB := errp.prog.ECBs[0]
	errECB.UArg = dof.ECBError
	ecbs = append(ecbs[:len(ecbs):len(ecbs)], errECB)

	opt := record.OptionsOf(p.prog)
	if v, ok := p.opts["strsize"]; ok {
		n, _ := option.ParseSize(v)
		opt.StrSize = uint32(n)
	}
	layout := record.NewLayout(opt)
	byProbe := map[uint32][]*record.EProbe{}
	acts := map[*record.EProbe]*enabling.ECB{}
	ticks := timers(ecbs)
	probes := dtraceProbes
	for _, t := range ticks {
		probes = append(probes[:len(probes):len(probes)], t.probe)
	}
	for i := range ecbs {
		var ps []record.Probe
		for _, pr := range probes {
			if matches(ecbs[i].Probe, pr) {
				ps = append(ps, pr)
			}
		}
		if len(ps) == 0 {
			return nil, errNotDTrace
		}
		eps, err := layout.Add(&ecbs[i], ps)
		if err != nil {
			return nil, err
		}
		for _, ep := range eps {
			byProbe[ep.ProbeID] = append(byProbe[ep.ProbeID], ep)
			acts[ep] = &ecbs[i]
		}
		for _, a := range ecbs[i].Actions {
			if a.Kind.IsSpeculative() {
				return nil, errors.New("speculations are not recorded yet")
			}
		}
	}

	var stderr bytes.Buffer
	cons := consumer.New(layout, consumerConfig(p, w, &stderr))
	vcfg := &vm.Config{StrSize: opt.StrSize}
	if v, ok := p.opts["dynvarsize"]; ok {
		n, _ := option.ParseSize(v)
		vcfg.DynVarSize = n
	}
	if v, ok := p.opts["nspec"]; ok {
		n, _ := strconv.ParseUint(v, 0, 32)
		vcfg.NSpec = uint32(n)
	}
	m := vm.New(vcfg)
	k := &kernelState{m: m, probes: probes, byProbe: byProbe, acts: acts, buf: record.NewBuffer(4 << 20), aggs: record.NewAggBuffer(4 << 20), ts: 1_000_000_000,
		wall: uint64(time.Now().UnixNano())}
	k.fire(record.ProbeBegin, nil)
	if err := k.consume(cons); err != nil {
		return nil, fmt.Errorf("BEGIN: %v", err)
	}
	// The timers fire in the order of their times, from BEGIN's, until
	// a clause exits; one CPU fires them all.
	next := make([]uint64, len(ticks))
	start := k.ts
	for i, t := range ticks {
		next[i] = start + t.period
	}
	for n := 0; !k.exiting && len(ticks) > 0; n++ {
		if n == maxTicks {
			first, _, _ := strings.Cut(stderr.String(), "\n")
			return nil, fmt.Errorf("no exit() after %d timer firings (first error: %q)", maxTicks, first)
		}
		i := 0
		for j := range ticks {
			if next[j] < next[i] {
				i = j
			}
		}
		k.ts = max(k.ts, next[i])
		next[i] += ticks[i].period
		// A timer interrupts the kernel here: arg0 is a kernel pc,
		// arg1 (the user pc) is 0.
		k.fire(ticks[i].probe.ID, []uint64{0xffffffff81000000, 0})
		if err := k.consume(cons); err != nil {
			return nil, fmt.Errorf("%s: %v", ticks[i].probe.Name, err)
		}
	}
	if !k.exiting {
		return nil, errNoExit
	}
	k.fire(record.ProbeEnd, nil)
	if err := k.consume(cons); err != nil {
		return nil, fmt.Errorf("END: %v", err)
	}
	if err := cons.Finish(); err != nil {
		return nil, err
	}
	if k.err != nil {
		return nil, k.err
	}
	status, _ := cons.Exited()
	return &run{timers: len(ticks) > 0, errs: stderr.String(), status: status}, nil
}

// consumerConfig is the consumer's configuration for a program's
// options, as dtrace(1) sets it.
func consumerConfig(p *program, w, errw io.Writer) consumer.Config {
	_, quiet := p.opts["quiet"]
	_, raw := p.opts["rawbytes"]
	_, sortKey := p.opts["aggsortkey"]
	_, sortRev := p.opts["aggsortrev"]
	_, zoom := p.opts["aggzoom"]
	_, hist := p.opts["agghist"]
	_, pack := p.opts["aggpack"]
	keyPos, _ := strconv.Atoi(p.opts["aggsortkeypos"])
	sortPos, _ := strconv.Atoi(p.opts["aggsortpos"])
	format := consumer.Text
	if p.opts["oformat"] == "json" {
		format = consumer.JSON
	}
	return consumer.Config{
		Out: w, Err: errw, ProgName: "kdtrace", Quiet: quiet, RawBytes: raw, Types: printed,
		AggSortKey: sortKey, AggSortRev: sortRev, AggSortKeyPos: keyPos, AggSortPos: sortPos, AggZoom: zoom, AggHist: hist, UTF8: p.opts["encoding"] == "utf8", AggPack: pack,
		Format: format,
		System: func(cmd string) error {
			c := exec.Command("/bin/sh", "-c", cmd)
			c.Stdout = w
			// system() reports only a command that cannot run.
			var ee *exec.ExitError
			if err := c.Run(); err != nil && !errors.As(err, &ee) {
				return err
			}
			return nil
		},
	}
}

// maxTicks is how many timer firings a program may take to exit.
const maxTicks = 100000

// kernelState is what the kernel keeps for the enabling.
type kernelState struct {
	m       *vm.Machine
	probes  []record.Probe // by ID
	byProbe map[uint32][]*record.EProbe
	acts    map[*record.EProbe]*enabling.ECB
	buf     *record.Buffer
	aggs    *record.AggBuffer
	ts      uint64
	wall    uint64 // the wall clock when ts was 0
	exiting bool   // an exit() was recorded: the state is draining
	err     error  // what the VM could not run
}

// consume hands the consumer what the probes recorded since the last
// time, as dtrace_work does: a snapshot of the aggregations, then the
// principal buffer; both buffers are emptied.
func (k *kernelState) consume(cons *consumer.Consumer) error {
	if err := cons.Aggregate(0, k.aggs.Bytes(), k.aggs.Drops()); err != nil {
		return err
	}
	k.aggs.Reset()
	err := cons.Consume(0, k.buf.Bytes(), k.buf.Drops())
	k.buf.Reset()
	return err
}

// fire fires probe id as dtrace_probe does: each of its ECBs in turn,
// predicate then actions, each firing's records into the buffer unless
// an action faults, which fires ERROR instead.
func (k *kernelState) fire(id uint32, args []uint64) {
	p := k.probes[id-1]
	ctx := &vm.Context{
		// The probes fire in dtrace's own thread, whose user registers
		// the driver does not know: zeroes.
		URegs: make([]uint64, 32),
		Args:  args, PID: 4242, PPID: 1, TID: 100100, Execname: "dtrace",
		ProbeProv: p.Provider, ProbeName: p.Name, ID: uint64(id),
	}
	k.m.BeginFiring()
	for _, ep := range k.byProbe[id] {
		// Once exit() is recorded the state drains: the remaining
		// BEGIN clauses and other providers' clauses do not run (not
		// even those of the firing that exited); END runs in any case.
		if k.exiting && (id == record.ProbeBegin || p.Provider != "dtrace") {
			continue
		}
		k.ts += 1000
		ctx.Timestamp, ctx.Walltimestamp, ctx.EPID = k.ts, k.wall+k.ts, uint64(ep.EPID)
		k.m.BeginClause()
		ecb := k.acts[ep]
		if ecb.Pred != nil {
			v, err := k.m.Run(ecb.Pred, ctx)
			if err != nil {
				k.fault(ep, 0, err)
				continue
			}
			if v == 0 {
				continue
			}
		}
		vals := make([]record.Value, len(ecb.Actions))
		faulted := false
		exit := false
		for i, a := range ecb.Actions {
			if a.Kind.IsAgg() {
				// The kernel aggregates as it reaches the action:
				// what a later action's fault discards stays.
				if a.DIFO != nil {
					v, err := k.m.Run(a.DIFO, ctx)
					if err != nil {
						k.fault(ep, i+1, err)
						faulted = true
						break
					}
					vals[i].Int = v
				}
				if err := k.aggs.Aggregate(ep, i, vals); err != nil && k.err == nil {
					k.err = err
				}
				continue
			}
			if a.DIFO == nil {
				continue
			}
			v, err := k.m.Run(a.DIFO, ctx)
			if err != nil {
				k.fault(ep, i+1, err)
				faulted = true
				break
			}
			vals[i] = record.Value{Int: v, PID: ctx.PID}
			t := a.DIFO.Ret
			switch {
			case t.Kind == dif.TypeString:
				s, err := k.m.ReadString(v)
				if err != nil {
					k.fault(ep, i+1, err)
					faulted = true
				}
				vals[i].Ref = []byte(s)
			case t.ByRef():
				b, err := k.m.ReadMemory(v, int(ep.Actions[i].Size))
				if err != nil {
					k.fault(ep, i+1, err)
					faulted = true
				}
				vals[i].Ref = b
			}
			if faulted {
				break
			}
			exit = exit || a.Kind == dof.ActExit
		}
		if faulted {
			continue
		}
		if _, err := k.buf.Write(ep, k.ts, vals); err != nil && k.err == nil {
			k.err = err
		}
		k.exiting = k.exiting || exit
	}
}

// fault fires ERROR for a fault in action which (0: the predicate) of
// ep, with dtrace_probe_error's arguments. What the VM cannot run at
// all stops the run.
func (k *kernelState) fault(ep *record.EProbe, which int, err error) {
	var f *vm.Fault
	if !errors.As(err, &f) {
		if k.err == nil {
			k.err = err
		}
		return
	}
	if ep.ProbeID == record.ProbeError {
		return // an error in the ERROR probe: counted, not reported
	}
	off := uint64(f.Offset())
	if f.PC < 0 {
		off = ^uint64(0)
	}
	k.fire(record.ProbeError, []uint64{0, uint64(ep.EPID), uint64(which), off, uint64(f.Code), f.Addr})
}
