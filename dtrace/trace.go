package dtrace

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
	"time"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/internal/linux"
	"github.com/kdtrace/kdtrace/internal/option"
	"github.com/kdtrace/kdtrace/internal/symbolize"
	"github.com/kdtrace/kdtrace/record"
)

// A Tracing is compiled programs enabled on their probes, as
// dtrace_go leaves them: attached, not yet started.
type Tracing struct {
	h       *Handle
	t       *linux.Tracing
	progs   []*Program
	matched []int // probes each program's ECBs were enabled on
}

// ErrDestructive is Enable's refusal of programs with destructive
// actions, or DIF that calls a destructive subroutine, when the
// destructive option (-w) is not set: dtrace_state_go's EACCES, in
// libdtrace's words.
var ErrDestructive = errors.New("Destructive actions not allowed")

// Enable enables the programs' ECBs on the probes they match, and
// libdtrace's ERROR clause with them, as dtrace_program_exec and
// dtrace_go do. Nothing runs until Run; Close undoes it.
func (h *Handle) Enable(progs ...*Program) (*Tracing, error) {
	// Compiled without the macro arguments, as dtrace_handle_err
	// compiles it: they are the user's programs'.
	errProg, err := h.Compile(Name, consumer.ErrorClause, noArgs)
	if err != nil {
		return nil, fmt.Errorf("libdtrace's ERROR clause: %v", err)
	}
	b, err := DOF(append(progs[:len(progs):len(progs)], errProg)...)
	if err != nil {
		return nil, err
	}
	k, err := enabling.Load(b, nil)
	if err != nil {
		return nil, err
	}
	if k.Destructive && !h.opts.IsSet("destructive") {
		return nil, ErrDestructive
	}
	size := func(name string) (uint64, bool) {
		v, ok := h.opts.Value(name)
		if !ok {
			return 0, false
		}
		n, _ := option.ParseSize(v)
		return n, true
	}
	if err := tooSmall(k, size); err != nil {
		return nil, err
	}
	k.ECBs[len(k.ECBs)-1].UArg = dof.ECBError
	if h.catalog == nil {
		return nil, errors.New("no probes can be found on this system")
	}
	cfg := &linux.Config{Catalog: h.catalog, Records: record.OptionsOf(k), Verbose: h.opts.IsSet("verbose"), Compile: h.compileSite,
		Warn: func(err error) { h.warnf("%v", err) }}
	if cfg.Verbose {
		cfg.Note = func(line string) { fmt.Fprintf(h.cfg.Stderr, "%s: %s\n", h.cfg.Name, line) }
	}
	if n, _ := size("strsize"); n > bpf.MaxStrSize {
		return nil, fmt.Errorf("bpf: strsize %d is over %d", n, bpf.MaxStrSize)
	} else if n != 0 {
		cfg.Records.StrSize = uint32(n)
	}
	cfg.BPF.StrSize = cfg.Records.StrSize
	bufsize, _ := size("bufsize")
	cfg.BPF.BufSize = bufsize
	// dtrace's default bufsize is 4m. Each policy's bufsize is a
	// CPU's, as the ring holds bufsize of every CPU's.
	switch v, _ := h.opts.Value("bufpolicy"); v {
	case "fill":
		cfg.BPF.Fill = uint32(min(cmp.Or(bufsize, bpf.DefaultBufSize), math.MaxUint32))
	case "ring":
		cfg.Ring = cmp.Or(bufsize, bpf.DefaultBufSize)
	}
	cfg.BPF.AggSize, _ = size("aggsize")
	// dtrace's default specsize is 32k: a speculation never
	// committed holds no more.
	cfg.SpecSize = 32 << 10
	if v, ok := size("specsize"); ok {
		cfg.SpecSize = v
	}
	if v, ok := h.opts.Value("nspec"); ok {
		n, _ := strconv.ParseUint(v, 0, 32)
		cfg.BPF.NSpec = uint32(n)
	}
	cfg.KinstMax = linux.DefaultKinstMax
	if v, ok := h.opts.Value("kinstmaxprobes"); ok {
		n, _ := strconv.ParseUint(v, 0, 32)
		cfg.KinstMax = int(n)
	}
	if n, ok := size("dynvarsize"); ok {
		// Room for one variable at least, as dtrace_dstate_init
		// makes.
		cfg.BPF.DynVarSize = max(n, bpf.DynVarBytes)
	}
	cfg.BPF.Limit = linux.MemLimit()
	policy, _ := h.opts.Value("bufresize")
	cfg.BPF.Manual = policy == "manual"
	t, err := linux.Enable(k.ECBs, cfg)
	if err != nil {
		return nil, err
	}
	tr := &Tracing{h: h, t: t, progs: progs}
	i := 0
	for _, p := range progs {
		n := 0
		if p.object != nil {
			for range p.object.ECBs {
				n += t.Matched[i]
				i++
			}
		}
		tr.matched = append(tr.matched, n)
	}
	return tr, nil
}

// compileSite compiles the D expression of an SDT probe's site into a
// DIFO that returns its value: the expression of a trace() action. It is
// the provider's D, not the script's, so the script's macro arguments
// are not its own.
func (h *Handle) compileSite(expr string) (*dif.Object, error) {
	p, err := h.Compile(Name, "dtrace:::BEGIN { trace("+expr+"); }", noArgs)
	if err != nil {
		return nil, err
	}
	b, err := DOF(p)
	if err != nil {
		return nil, err
	}
	k, err := enabling.Load(b, nil)
	if err != nil {
		return nil, err
	}
	if len(k.ECBs) != 1 || len(k.ECBs[0].Actions) != 1 || k.ECBs[0].Actions[0].DIFO == nil {
		return nil, fmt.Errorf("%q compiles to no single expression", expr)
	}
	return k.ECBs[0].Actions[0].DIFO, nil
}

// Matched returns the number of probes program i (in Enable's order)
// was enabled on.
func (tr *Tracing) Matched(i int) int { return tr.matched[i] }

// RunConfig says where a tracing's output goes and when it stops.
type RunConfig struct {
	Out io.Writer // what the actions print
	Err io.Writer // dtrace's messages: drops, errors
	// Stop ends the tracing when it is closed (SIGINT, SIGTERM), as a
	// clause's exit() does.
	Stop <-chan struct{}
	// Impatient, closed once Stop is (a second SIGINT or SIGTERM),
	// says the aggregations are not to be printed at the end, as
	// dtrace(1) prints none once interrupted twice.
	Impatient <-chan struct{}
}

// Run starts the tracing (BEGIN), then sets the processes the handle
// created running, and consumes what the probes record until a clause
// calls exit(), cfg.Stop is closed, or every process the handle created
// or grabbed has exited ("kdtrace: pid N has exited" on cfg.Err, unless
// quiet); then it stops the tracing (END), prints what is left and the
// aggregations not yet printed, and returns exit()'s status (0 when
// stopped otherwise), as dtrace(1)'s main loop.
func (tr *Tracing) Run(cfg RunConfig) (int, error) {
	h := tr.h
	has := func(name string) bool { _, ok := h.opts.Value(name); return ok }
	num := func(name string) int {
		v, _ := h.opts.Value(name)
		n, _ := strconv.Atoi(v)
		return n
	}
	v, _ := h.opts.Value("encoding")
	switchRate := time.Second
	if v, ok := h.opts.Value("switchrate"); ok {
		if d, err := option.ParseInterval(v); err == nil {
			switchRate = d
		}
	}
	// The status (has a clause called exit(), has a fill buffer
	// filled) is read more often than the buffers, so that exit()
	// ends a run at once, not at the next switch a second later as
	// dtrace's: reading it costs one map lookup.
	statusRate := defaultStatusRate
	if v, ok := h.opts.Value("statusrate"); ok {
		if d, err := option.ParseInterval(v); err == nil {
			statusRate = d
		}
	}
	// setopt() of the rates, at run time as dtrace's dynamic options:
	// aggregations are snapshot as buffers are read, at switchrate.
	setRate := func(name, value string) error {
		if name != "switchrate" && name != "aggrate" {
			return errors.New("not an option this consumer sets at run time")
		}
		d, err := option.ParseInterval(value)
		if err != nil {
			return option.ErrValue
		}
		if name == "switchrate" {
			switchRate = d
		}
		return nil
	}
	// Addresses print by the running kernel's symbols and the traced
	// processes': kallsyms as read for the compiler, unless that table
	// is a --kernel image's.
	scfg := symbolize.Config{}
	if h.cfg.Kernel == "" && h.ksyms != nil {
		scfg.Kallsyms = h.ksyms.Table
	}
	if h.debuginfod != nil {
		scfg.Debuginfod = (&debugFetcher{h: h}).fetch
	}
	syms := symbolize.New(scfg)
	defer syms.Close()
	if h.target != 0 {
		syms.Grab(h.target)
	}
	tr.t.Grab = func(pid int) { syms.Grab(pid) }
	// A process stopped at its run-time linker's event or at its exec
	// has its probes there enabled, or detached, and runs again.
	reload := func(pid int) {
		if err := tr.t.Reload(pid); err != nil {
			fmt.Fprintf(cfg.Err, "%s: pid %d: %v\n", h.cfg.Name, pid, err)
		}
	}
	format := consumer.Text
	if oformat, ok := h.opts.Value("oformat"); ok {
		f, err := consumer.ParseFormat(oformat)
		if err != nil {
			return 1, err
		}
		format = f
	}
	cons := consumer.New(tr.t.Describer(), consumer.Config{
		Symbols: syms,
		SetOpt:  setRate,
		Types:   &h.printed,
		Out:     cfg.Out, Err: cfg.Err, ProgName: h.cfg.Name,
		Quiet: has("quiet"), Flowindent: has("flowindent"), RawBytes: has("rawbytes"),
		AggSortKey: has("aggsortkey"), AggSortRev: has("aggsortrev"), AggSortKeyPos: num("aggsortkeypos"), AggSortPos: num("aggsortpos"),
		AggZoom: has("aggzoom"), AggHist: has("agghist"), AggPack: has("aggpack"), UTF8: v == "utf8",
		Target: uint64(h.target),
		Format: format,
		AggName: func(varid uint32) string {
			// The compiler numbers aggregations from 0, dtrace's IDs from 1.
			if a := h.checker.Aggregation(varid - 1); a != nil {
				return "@" + a.Name
			}
			if name, ok := h.savedAggs[varid-1]; ok {
				return "@" + name
			}
			return ""
		},
		System: func(cmd string) error {
			c := exec.Command("/bin/sh", "-c", cmd)
			c.Stdout = cfg.Out
			if format != consumer.Text {
				// Its output would break the lines of JSON.
				c.Stdout = cfg.Err
			}
			c.Stderr = cfg.Err
			// system() reports only a command that cannot run.
			if err := c.Start(); err != nil {
				return err
			}
			// The processes the command starts may stop for their
			// probes to be made (at exec, at dlopen) while it runs.
			waited := make(chan struct{})
			go func() {
				c.Wait()
				close(waited)
			}()
			for {
				select {
				case <-waited:
					return nil
				case pid := <-tr.t.Loaded():
					reload(pid)
				}
			}
		},
	})
	if err := tr.t.Go(); err != nil {
		return 1, err
	}
	tr.reportLowered(cfg.Err)
	exits, live := h.startProcesses()
	stopped := false
	work := time.Now()
	check := work
	for !stopped {
		now := time.Now()
		nextTick, err := tr.t.Tick(now)
		if err != nil {
			return 1, err
		}
		if !now.Before(work) {
			if err := tr.work(cons, false); err != nil {
				return 1, err
			}
			work = now.Add(switchRate)
			if _, exited := cons.Exited(); exited || tr.t.Filled() {
				break
			}
		}
		if !now.Before(check) {
			draining, err := tr.t.Draining()
			if err != nil {
				return 1, err
			}
			if draining {
				break
			}
			check = now.Add(statusRate)
		}
		wake := work
		for _, t := range []time.Time{check, nextTick} {
			if !t.IsZero() && t.Before(wake) {
				wake = t
			}
		}
		timer := time.NewTimer(time.Until(wake))
		select {
		case <-cfg.Stop:
			stopped = true
		case pid := <-tr.t.Loaded():
			reload(pid)
		case p := <-exits:
			if !has("quiet") {
				fmt.Fprintf(cfg.Err, "%s: %s\n", h.cfg.Name, p.exitNotice())
			}
			live--
			stopped = live == 0
		case <-timer.C:
		}
		timer.Stop()
	}
	err := tr.t.Stop()
	if werr := tr.work(cons, true); err == nil {
		err = werr
	}
	select {
	case <-cfg.Impatient:
		cons.SkipAggs()
	default:
	}
	if ferr := cons.Finish(); err == nil {
		err = ferr
	}
	status, _ := cons.Exited()
	return status, err
}

// defaultStatusRate is how often Run reads the tracing's status when
// the statusrate option is not set.
const defaultStatusRate = 10 * time.Millisecond

// work consumes what the probes recorded, and reports what dtrace's
// status reports: dynamic variable drops, speculative drops and failed
// speculations.
func (tr *Tracing) work(cons *consumer.Consumer, ended bool) error {
	d, err := tr.t.Work(cons, ended)
	for _, drop := range []consumer.Drop{
		{Kind: consumer.DropDynamic, CPU: -1, Count: d.Dynamic},
		{Kind: consumer.DropSpeculative, CPU: -1, Count: d.Spec},
		{Kind: consumer.DropSpecBusy, CPU: -1, Count: d.SpecBusy},
		{Kind: consumer.DropSpecUnavail, CPU: -1, Count: d.SpecUnavail},
	} {
		if rerr := cons.ReportDrop(drop); err == nil {
			err = rerr
		}
	}
	return err
}

// Close detaches every probe and releases the tracing's programs and
// maps.
func (tr *Tracing) Close() error { return tr.t.Close() }
