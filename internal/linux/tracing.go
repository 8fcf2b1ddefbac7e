package linux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/internal/linux/attach"
	"github.com/kdtrace/kdtrace/internal/probe"
	"github.com/kdtrace/kdtrace/record"
)

// Config is what an enabling needs besides its ECBs.
type Config struct {
	// Catalog finds the probes the ECBs' descriptions match.
	Catalog *probe.Catalog
	// Records sizes the records (strsize, stackframes, …).
	Records record.Options
	// BPF sizes the maps: the ring buffer (bufsize of each CPU's), the
	// aggregations' maps (aggsize), the thread-locals (dynvarsize),
	// strsize.
	BPF bpf.Config
	// Verbose puts the verifier's whole log in the error of a program
	// it refuses (-x verbose).
	Verbose bool
	// SpecSize is the bytes a speculation holds of each CPU's
	// firings (specsize), as dtrace's speculation has a buffer of
	// that size for each CPU; 0 means no limit.
	SpecSize uint64
	// Ring is the bytes of a CPU's buffer under dtrace's ring policy
	// (bufsize): its firings are handed to the consumer when the
	// tracing ends, the oldest given up for the newest that do not
	// fit. 0 under the other policies.
	Ring uint64
	// Warn, if set, is told what leaves probes out of a description's
	// match without failing it: the SDT probes at kernel functions a
	// glob matches on a kernel that can probe no function. Nil drops
	// it.
	Warn func(error)
	// Note, if set, is told in a line how each fbt probe is attached:
	// on an fentry or fexit program (a BPF trampoline), or on a kprobe
	// and why (-x verbose).
	Note func(line string)
	// Compile compiles a D expression of an SDT probe's site (over
	// arg0 …, the tracepoint's arguments) into a DIFO that returns its
	// value; nil refuses the proc, sched and io providers.
	Compile func(expr string) (*dif.Object, error)
	// KinstMax is the most kinst probes a tracing may enable
	// (kinstmaxprobes); 0 means no limit. Each is a kprobe, which the
	// kernel installs one by one and which costs at every execution of
	// its instruction, and kinst::f: makes one per instruction.
	KinstMax int
}

// DefaultKinstMax is KinstMax unless -x kinstmaxprobes says otherwise:
// kinst::f: on a large function (a thousand instructions) and more
// takes long to attach and slows the kernel where it runs.
const DefaultKinstMax = 1000

// A Tracing is an enabling: the ECBs of a program on the probes they
// match, their BPF programs loaded and attached.
type Tracing struct {
	layout  *record.Layout
	rt      *bpf.Runtime
	progs   []*ebpf.Program
	maps    []*ebpf.Map
	closers []io.Closer // attachments, closed first
	ring    *ringbuf.Reader
	// span is the map of the pairs of tracepoints SDT sites read
	// (probe.SDTSite.Since), made for the first.
	span *ebpf.Map

	begin, end *ebpf.Program
	ticks      []*tick

	// Matched is, for each ECB, the number of probes it was enabled on.
	Matched []int
	// Lowered are the size options lowered for their buffers to fit
	// the memory they may take (Config.BPF.Limit), with their values
	// now.
	Lowered []bpf.Lowered
	// Grab, if set, is told the processes whose user addresses the
	// records hold (ustack(), usym(), …), as they are read.
	Grab func(pid int)

	// The CPUs BEGIN and END ran on, as their records say: the
	// consumer prints BEGIN's first and END's last.
	beganOn, endedOn int
	stopped          bool           // by Stop
	pending          map[int][]byte // records read from the ring buffer, by CPU
	counters         []bpf.Counters // as last read
	aggs             []*aggMap
	aggsReady        bool               // aggs are made (aggsMade)
	aggFns           map[uint32]aggFn   // aggregating function by aggregation ID
	specs            map[uint32]specBuf // speculations' records, by id
	specSize         int                // the specsize option, 0 for no limit
	drops            Drops              // since the last Work
	specFails        [2]uint64          // failed speculations, unavailable and busy, as last read
	filled           bool               // a CPU's buffer filled, under the fill policy
	ringSize         int                // Config.Ring
	rings            map[int]*ringBuf   // under the ring policy, each CPU's firings kept

	// later enables the ECBs on the probes of objects the traced
	// processes map while the tracing runs; nil when no process is.
	later *later
}

// A ringBuf is what a CPU's buffer holds under the ring policy: the
// newest firings that fit in its size.
type ringBuf struct {
	firings []ringFiring
	size    int
}

type ringFiring struct {
	ep  *record.EProbe
	rec []byte
}

// A tick is a tick-N probe's program, run from the work loop.
type tick struct {
	prog     *ebpf.Program
	interval time.Duration
	next     time.Time
}

// A specBuf is a speculation's records so far.
type specBuf struct {
	recs []specRec
	size map[int]int // bytes of recs, by CPU
}

type specRec struct {
	cpu int
	ep  *record.EProbe
	rec []byte
}

// Drops are what was lost since the last Work, counted as dtrace's
// status counts it.
type Drops struct {
	Dynamic uint64 // stores of dynamic variables with no room
	Spec    uint64 // speculated records past specsize
	// SpecBusy and SpecUnavail are speculation() calls that found no
	// inactive speculation, some or none being committed or discarded.
	SpecBusy, SpecUnavail uint64
}

// Enable enables ecbs on the probes their descriptions match, loads
// their BPF programs and attaches them; the tracing stays inactive
// (no clause but BEGIN's runs) until Go. Every error leaves nothing
// attached.
func Enable(ecbs []enabling.ECB, cfg *Config) (_ *Tracing, err error) {
	t := &Tracing{layout: record.NewLayout(cfg.Records), pending: map[int][]byte{}, ringSize: int(cfg.Ring), rings: map[int]*ringBuf{}, aggFns: map[uint32]aggFn{}, beganOn: -1, endedOn: -1,
		specs: map[uint32]specBuf{}, specSize: int(cfg.SpecSize)}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	pl := &placer{groups: map[string]*group{}, compile: cfg.Compile}
	if pl.compile == nil {
		pl.compile = func(string) (*dif.Object, error) {
			return nil, fmt.Errorf("no compiler for the sites of SDT probes")
		}
	}
	t.later = newLater(cfg.Catalog, pl)
	var errorClauses []bpf.Clause
	t.Matched = make([]int, len(ecbs))
	// The probes enabled, whose names probeprov … probename read.
	var named []record.Probe
	seen := map[uint32]bool{}
	nkinst := 0
	// The probes each description matches, found once however many
	// clauses it heads: 10,000 clauses on syscall:::entry would walk
	// the catalog 10,000 times, making 4.5 million probes.
	type matched struct {
		ps  []*probe.Probe
		rps []record.Probe
	}
	walked := map[dof.ProbeSpec]matched{}
	for i := range ecbs {
		e := &ecbs[i]
		m, ok := walked[e.Probe]
		if !ok {
			if e.Probe.ID != 0 {
				// -i: the description is the probe's ID alone.
				if p := cfg.Catalog.ByID(e.Probe.ID); p != nil {
					m.ps = append(m.ps, p)
				}
			} else {
				d := probe.Desc{Provider: e.Probe.Provider, Module: e.Probe.Module, Function: e.Probe.Function, Name: e.Probe.Name}
				if err := cfg.Catalog.Walk(d, func(p *probe.Probe) bool { m.ps = append(m.ps, p); return true }); err != nil {
					return nil, err
				}
			}
			m.ps = leaveOutAtFunctions(e.Probe, m.ps, cfg.Warn)
			m.rps = make([]record.Probe, len(m.ps))
			for j, p := range m.ps {
				m.rps[j] = record.Probe{ID: cfg.Catalog.ID(p), Provider: p.Provider, Module: p.Module, Function: p.Function, Name: p.Name}
			}
			walked[e.Probe] = m
		}
		ps, rps := m.ps, m.rps
		for _, p := range rps {
			if !seen[p.ID] {
				seen[p.ID] = true
				named = append(named, p)
				if p.Provider == "kinst" {
					nkinst++
				}
			}
		}
		if cfg.KinstMax > 0 && nkinst > cfg.KinstMax {
			d := e.Probe
			return nil, fmt.Errorf("%s:%s:%s:%s brings the kinst probes to %d, past the limit of %d (each is a kprobe); raise it with -x kinstmaxprobes=%d",
				d.Provider, d.Module, d.Function, d.Name, nkinst, cfg.KinstMax, nkinst)
		}
		eps, err := t.layout.Add(e, rps)
		if err != nil {
			return nil, err
		}
		t.Matched[i] = len(eps)
		if e.Probe.ID == 0 {
			// The clause goes in the programs of the probes it may
			// match later, in the ECBs' order, as it would have had
			// it matched them now.
			if err := t.later.reserve(t.layout, e, eps); err != nil {
				return nil, err
			}
		}
		for j, p := range ps {
			ep := eps[j]
			if p.Provider == "dtrace" && p.Name == "END" && cfg.BPF.Fill != 0 {
				// Under the fill policy, each CPU's buffer keeps
				// room for END's firings (dtrace_state_go).
				cfg.BPF.FillReserve += ep.Needed + ep.Alignment
			}
			if p.Provider == "dtrace" && p.Name == "ERROR" {
				errorClauses = append(errorClauses, bpf.Clause{ECB: e, EP: ep})
				continue
			}
			pls, err := pl.place(p, e.Probe.Provider)
			if err != nil {
				return nil, err
			}
			for _, pl := range pls {
				g, index := pl.g, pl.index
				c, ok := g.ecbs[e]
				if !ok {
					c = len(g.clauses)
					g.ecbs[e] = c
					g.clauses = append(g.clauses, bpf.Clause{ECB: e, EP: ep})
				}
				ent := g.entries[index]
				if ent == nil {
					ent = &bpf.ProbeEntry{ID: rps[j].ID}
					g.entries[index] = ent
				}
				for len(ent.EPIDs) <= c {
					ent.EPIDs = append(ent.EPIDs, 0)
				}
				ent.EPIDs[c] = ep.EPID
			}
		}
	}
	note := cfg.Note
	if note == nil {
		note = func(string) {}
	}
	order, err := splitTrampolines(pl.order, note)
	if err != nil {
		return nil, err
	}
	// The ERROR clauses need a program of their own only to be checked:
	// each program runs them where its clauses fault.
	lay, err := bpf.NewLayout(&cfg.BPF)
	if err != nil {
		return nil, err
	}
	pps := make([]*bpf.ProbeProgram, len(order))
	for i, g := range order {
		pps[i] = &bpf.ProbeProgram{Context: g.ctx, Clauses: g.clauses, Error: errorClauses, End: g.end, Sites: g.siteClauses(), RawArgs: g.rawArgs, Span: g.span}
		if err := lay.AddProbe(pps[i]); err != nil {
			return nil, err
		}
	}
	if t.rt, err = bpf.NewRuntime(lay); err != nil {
		return nil, err
	}
	if err := t.fit(cfg); err != nil {
		return nil, err
	}
	if err := t.rt.SetWallClock(); err != nil {
		return nil, err
	}
	for _, p := range named {
		if err := t.rt.SetProbeNames(p.ID, p.Provider, p.Module, p.Function, p.Name); err != nil {
			return nil, err
		}
	}
	for _, ep := range t.layout.EProbes() {
		for _, a := range ep.Actions {
			if a.IsAgg() {
				t.aggFns[a.AggID] = aggFn{a.Action, a.Arg}
			}
		}
	}
	if t.ring, err = ringbuf.NewReader(t.rt.Ring); err != nil {
		return nil, fmt.Errorf("reading the ring buffer: %w", err)
	}
	if err := t.vtime(); err != nil {
		return nil, err
	}
	// Trampolines first: one the kernel refuses goes back on its kprobe
	// group, which comes later.
	if err := t.trampolines(order, pps, lay, note); err != nil {
		return nil, err
	}
	for i, g := range order {
		if g.tramp != nil || len(g.kernel) == 0 && (strings.HasPrefix(g.name, "fbt-") || g.atFunction()) {
			// On a trampoline, or a kprobe group whose every probe
			// went on one.
			continue
		}
		links, own, err := t.build(g, pps[i], lay)
		if err != nil {
			return nil, err
		}
		progs, chain, err := t.rt.LoadChain("kdt_"+progName(g.name), g.ctx, links, own, g.attachType())
		if err != nil {
			return nil, verifierError(g, links, t.culprit(g, pps[i], links, lay, own, err), cfg.Verbose)
		}
		t.progs = append(t.progs, progs...)
		if chain != nil {
			t.maps = append(t.maps, chain)
		}
		g.prog = progs[0]
		if err := t.aggsMade(); err != nil {
			return nil, err
		}
		if err := kinds[g.kind].attach(t, g, progs[0]); err != nil {
			return nil, err
		}
	}
	if err := t.aggsMade(); err != nil {
		return nil, err
	}
	if err := t.later.watch(note); err != nil {
		return nil, err
	}
	return t, nil
}

// aggsMade waits for the aggregation maps, which the runtime makes
// while the first programs are verified, and wraps them for the
// consumer. It must precede every attachment of a probe program: a
// program must not aggregate into a slot still empty.
func (t *Tracing) aggsMade() error {
	if t.aggsReady {
		return nil
	}
	if err := t.rt.AggsMade(); err != nil {
		return err
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	for _, m := range t.rt.Aggs {
		a := newAggMap(m, ncpu)
		a.key = t.rt.AggKey
		t.aggs = append(t.aggs, a)
	}
	t.aggsReady = true
	return nil
}

// siteClauses returns g's sites, each with the clauses its probe runs:
// those its entry gives an EPID.
func (g *group) siteClauses() []bpf.Site {
	sites := slices.Clone(g.sites)
	for i, st := range sites {
		ent := g.entries[st.Index]
		if ent == nil {
			continue
		}
		sites[i].Clauses = []int{}
		for c, epid := range ent.EPIDs {
			if epid != 0 {
				sites[i].Clauses = append(sites[i].Clauses, c)
			}
		}
	}
	return sites
}

// vtime attaches the runtime's keeper of the threads' CPU times to the
// sched_switch tracepoint, if a clause reads vtimestamp, before any
// probe is attached, so that a thread's vtimestamp counts its slices
// from its first switch onto a CPU.
func (t *Tracing) vtime() error {
	prog, err := t.rt.LoadVtime()
	if err != nil || prog == nil {
		return err
	}
	t.progs = append(t.progs, prog)
	if err := t.closes(attach.RawTracepoint(prog, "sched_switch")); err != nil {
		return fmt.Errorf("vtimestamp: %w", err)
	}
	return nil
}

// build builds a group's programs, one or a chain of them, and the
// maps of their own.
func (t *Tracing) build(g *group, pp *bpf.ProbeProgram, lay *bpf.Layout) ([]bpf.Link, map[string]*ebpf.Map, error) {
	links, err := bpf.BuildChain(pp, lay)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", g.name, err)
	}
	entries := make(map[uint32]bpf.ProbeEntry, len(g.entries))
	for idx, e := range g.entries {
		entries[idx] = *e
	}
	// A uprobe program of a tracing that follows processes has room
	// for the probes of the objects they map later.
	room := uint32(0)
	if t.later.active() && kinds[g.kind].uprobe {
		room = laterRoom
	}
	pm, err := bpf.NewProbeMapRoom(len(g.clauses), entries, room)
	if err != nil {
		return nil, nil, err
	}
	t.maps = append(t.maps, pm)
	g.probeMap = pm
	own := map[string]*ebpf.Map{bpf.MapProbes: pm}
	if g.ctx == bpf.CtxUSDT {
		points := make(map[uint32][]bpf.USDTArg, len(g.uargs))
		for i, a := range g.uargs {
			points[uint32(i)] = a
		}
		um, err := bpf.NewUArgMapRoom(points, room)
		if err != nil {
			return nil, nil, err
		}
		t.maps = append(t.maps, um)
		g.uargMap = um
		own[bpf.MapUArgs] = um
	}
	if g.span != bpf.SpanNone {
		if t.span == nil {
			if t.span, err = bpf.NewSpanMap(); err != nil {
				return nil, nil, err
			}
			t.maps = append(t.maps, t.span)
		}
		own[bpf.MapSpan] = t.span
	}
	return links, own, nil
}

// progName makes a BPF object name of a group's: at most 15 characters
// of letters, digits and underscores with its "kdt_" prefix.
func progName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), 11)])
}

// A clauseError is the verifier's refusal of one clause of a group.
type clauseError struct {
	clause int
	err    error
}

func (e *clauseError) Error() string { return e.err.Error() }
func (e *clauseError) Unwrap() error { return e.err }

// culprit finds, when the verifier refuses a program of several
// clauses, the first clause it refuses alone, so that the error can
// name it: in a chain, among the clauses of the program refused.
func (t *Tracing) culprit(g *group, pp *bpf.ProbeProgram, links []bpf.Link, lay *bpf.Layout, own map[string]*ebpf.Map, err error) error {
	var ve *ebpf.VerifierError
	var le *bpf.LinkError
	if len(pp.Clauses) < 2 || !errors.As(err, &ve) || !errors.As(err, &le) {
		return err
	}
	for j := links[le.Link].Lo; j < links[le.Link].Hi; j++ {
		one := *pp
		one.Clauses = pp.Clauses[j : j+1]
		one.Sites = siteOf(pp.Sites, j)
		insns, berr := bpf.BuildProbe(&one, lay)
		if berr != nil {
			continue
		}
		entries := map[uint32]bpf.ProbeEntry{}
		for idx, e := range g.entries {
			if j < len(e.EPIDs) {
				entries[idx] = bpf.ProbeEntry{ID: e.ID, EPIDs: e.EPIDs[j : j+1]}
			}
		}
		pm, merr := bpf.NewProbeMap(1, entries)
		if merr != nil {
			return err
		}
		mine := maps.Clone(own)
		mine[bpf.MapProbes] = pm
		prog, lerr := t.rt.LoadProbe("kdt_culprit", g.ctx, insns, mine, g.attachType())
		pm.Close()
		if lerr == nil {
			prog.Close()
			continue
		}
		return &clauseError{j, lerr}
	}
	return err
}

// siteOf returns the sites of a program of clause j alone: each runs
// it if it ran it among the program's clauses.
func siteOf(sites []bpf.Site, j int) []bpf.Site {
	one := slices.Clone(sites)
	for i, st := range one {
		if st.Clauses == nil {
			continue
		}
		one[i].Clauses = []int{}
		if slices.Contains(st.Clauses, j) {
			one[i].Clauses = []int{0}
		}
	}
	return one
}

// verifierError says which clause or program the kernel refused to
// load, and why: for the verifier, the last lines of its log (its
// reason), or its whole log when verbose. The verifier refuses what
// passes its limits (the instructions it walks, a program's size) as
// well as what it cannot prove safe: it is told as the verifier's
// refusal.
func verifierError(g *group, links []bpf.Link, err error, verbose bool) error {
	what := fmt.Sprintf("the program of %s (%d clauses)", g.name, len(g.clauses))
	var (
		ce *clauseError
		le *bpf.LinkError
	)
	switch {
	case errors.As(err, &ce):
		d := g.clauses[ce.clause].ECB.Probe
		what = fmt.Sprintf("the clause of %s:%s:%s:%s", d.Provider, d.Module, d.Function, d.Name)
	case len(g.clauses) == 1:
		d := g.clauses[0].ECB.Probe
		what = fmt.Sprintf("the clause of %s:%s:%s:%s", d.Provider, d.Module, d.Function, d.Name)
	case len(links) > 1 && errors.As(err, &le):
		l := links[le.Link]
		what = fmt.Sprintf("the program of clauses %d to %d of %s (%d clauses in %d programs)", l.Lo+1, l.Hi, g.name, len(g.clauses), len(links))
	}
	var ve *ebpf.VerifierError
	if !errors.As(err, &ve) {
		return fmt.Errorf("loading %s: %w", what, err)
	}
	if verbose {
		return fmt.Errorf("the kernel's BPF verifier refused %s:\n%+v", what, ve)
	}
	return fmt.Errorf("the kernel's BPF verifier refused %s (-x verbose shows its log): %s", what, strings.Join(lastLines(ve.Log, 3), "\n\t"))
}

// lastLines returns the last n lines of a verifier's log, but its
// statistics: the instructions it stopped at, and its reason.
func lastLines(log []string, n int) []string {
	var last []string
	for i := len(log) - 1; i >= 0 && len(last) < n; i-- {
		if l := log[i]; l != "" && !strings.HasPrefix(l, "processed ") && !strings.HasPrefix(l, "verification time") && !strings.HasPrefix(l, "stack depth") {
			last = append(last, l)
		}
	}
	slices.Reverse(last)
	return last
}

// userPC returns a pc of kdtrace's own code, where a tick-N interrupts
// it.
func userPC() uint64 { return uint64(reflect.ValueOf(run).Pointer()) }

// run fires a program run from user space with the given arguments.
func run(prog *ebpf.Program, args ...uint64) error {
	ctx := make([]byte, 8*(1+6))
	for i, a := range args {
		binary.NativeEndian.PutUint64(ctx[8*(i+1):], a)
	}
	// In this thread's context, so that BEGIN's pid and execname are
	// kdtrace's, as dtrace's BEGIN runs in dtrace's ioctl; on the
	// first CPU it may run on, as the suite's outputs expect (the
	// kernel would run a program asked for another CPU in an
	// interrupt, in whatever task that CPU runs).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer onFirstCPU()()
	_, err := prog.Run(&ebpf.RunOptions{Context: ctx})
	return err
}

// Go fires BEGIN, then makes the tracing active: every other probe
// runs its clauses from then on, unless BEGIN called exit().
func (t *Tracing) Go() error {
	if t.begin != nil {
		if err := run(t.begin); err != nil {
			return fmt.Errorf("firing BEGIN: %w", err)
		}
	}
	a, err := t.rt.Activity()
	if err != nil {
		return err
	}
	if a == bpf.ActivityInactive {
		if err := t.rt.SetActivity(bpf.ActivityActive); err != nil {
			return err
		}
	}
	now := time.Now()
	for _, k := range t.ticks {
		k.next = now.Add(k.interval)
	}
	return nil
}

// Draining reports whether a clause called exit().
func (t *Tracing) Draining() (bool, error) {
	a, err := t.rt.Activity()
	return a == bpf.ActivityDraining, err
}

// Filled reports whether, under dtrace's fill buffer policy, a CPU's
// buffer has filled as Work last saw: the tracing is then done, as
// dtrace's status DTRACE_STATUS_FILLED ends it.
func (t *Tracing) Filled() bool { return t.filled }

// Tick fires the tick-N probes that are due, and returns when the
// next one is.
func (t *Tracing) Tick(now time.Time) (time.Time, error) {
	var next time.Time
	for _, k := range t.ticks {
		if !now.Before(k.next) {
			// A tick interrupts kdtrace's thread in user space:
			// arg1 is its pc, arg0 (the kernel's) is 0.
			if err := run(k.prog, 0, userPC()); err != nil {
				return next, fmt.Errorf("firing a tick: %w", err)
			}
			// As a cyclic, a late tick is not made up for.
			k.next = k.next.Add(k.interval)
			if k.next.Before(now) {
				k.next = now.Add(k.interval)
			}
		}
		if next.IsZero() || k.next.Before(next) {
			next = k.next
		}
	}
	return next, nil
}

// Stop detaches every probe and fires END: the tracing is over.
func (t *Tracing) Stop() error {
	var errs []error
	if err := t.rt.SetActivity(bpf.ActivityDraining); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, closeAll(t.closers)...)
	t.closers = nil
	t.ticks = nil
	t.stopped = true
	if t.end != nil {
		if err := run(t.end); err != nil {
			errs = append(errs, fmt.Errorf("firing END: %w", err))
		}
	}
	return errors.Join(errs...)
}

// A Consumer takes what the probes recorded, as Work hands it out:
// each CPU's aggregation snapshot (AggBuffer's bytes, and the
// aggregation drops since the last), then a round of record buffers,
// one per CPU, with the CPUs that ran BEGIN and END (-1 for none).
// The backend knows nothing else of who reads them;
// *consumer.Consumer is one.
type Consumer interface {
	Aggregate(cpu int, data []byte, drops uint64) error
	ConsumeRound(bufs []record.CPUBuffer, beganOn, endedOn int) error
}

// Work hands cons what the probes recorded since the last time, as
// dtrace_work: the aggregations' snapshot, then every CPU's records.
// ended says END has fired: its records are printed last. It returns
// what was dropped since the last time that dtrace reports on its own
// (its status's drops; drops of records and aggregations the consumer
// reports by CPU).
func (t *Tracing) Work(cons Consumer, ended bool) (Drops, error) {
	cs, err := t.rt.ReadCounters()
	if err != nil {
		return Drops{}, err
	}
	if err := t.snapAggs(cons, cs); err != nil {
		return Drops{}, err
	}
	if err := t.readRing(); err != nil {
		return Drops{}, err
	}
	unavail, busy, err := t.rt.SpecFailures()
	if err != nil {
		return Drops{}, err
	}
	if ended {
		// Under the ring policy the buffers are read once, at the end.
		for cpu, r := range t.rings {
			for _, f := range r.firings {
				t.placeRec(cpu, f.ep, f.rec)
			}
		}
		clear(t.rings)
	}
	drops := t.drops
	drops.SpecUnavail, drops.SpecBusy = unavail-t.specFails[0], busy-t.specFails[1]
	t.specFails = [2]uint64{unavail, busy}
	t.drops = Drops{}
	var bufs []record.CPUBuffer
	for cpu := range cs {
		data := t.pending[cpu]
		drops.Dynamic += cs[cpu].DynDrops
		var lost uint64
		if cpu < len(t.counters) {
			lost = cs[cpu].BufDrops - t.counters[cpu].BufDrops
			drops.Dynamic -= t.counters[cpu].DynDrops
		} else {
			lost = cs[cpu].BufDrops
		}
		if len(data) == 0 && lost == 0 {
			continue
		}
		bufs = append(bufs, record.CPUBuffer{CPU: cpu, Data: data, Drops: lost})
	}
	t.counters = cs
	for _, c := range cs {
		t.filled = t.filled || c.Filled
	}
	endedOn := -1
	if ended {
		endedOn = t.endedOn
	}
	err = cons.ConsumeRound(bufs, t.beganOn, endedOn)
	t.beganOn = -1
	// Each CPU's room is kept for the next round, as dtrace's buffers
	// are: grown afresh every round, a buffer of a million firings was
	// copied over and over as it doubled.
	for cpu, data := range t.pending {
		t.pending[cpu] = data[:0]
	}
	return drops, err
}

// ringHdrSize is the header of each sample in a BPF ring buffer (the
// kernel's BPF_RINGBUF_HDR_SZ); a sample's data is padded to 8 bytes.
const ringHdrSize = 8

// readRing takes the samples the ring buffer held when it was called,
// and no more: the probes keep firing while it reads, some of them in
// the consumer's own system calls (its reads of the ring, its writes of
// what it prints), so that a read until the ring is empty may never
// end, and hold ever more records. What fires faster than the rounds
// read it finds the ring full and is dropped, counted in its CPU's
// BufDrops, as dtrace's full buffers drop.
func (t *Tracing) readRing() error {
	t.ring.SetDeadline(time.Now())
	var rec ringbuf.Record
	for left := t.ring.AvailableBytes(); left > 0; {
		if err := t.ring.ReadInto(&rec); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				// The ring was found empty: what it held is read.
				return nil
			}
			return fmt.Errorf("reading the ring buffer: %w", err)
		}
		left -= ringHdrSize + (len(rec.RawSample)+7)&^7
		if err := t.take(rec.RawSample); err != nil {
			return err
		}
	}
	return nil
}

// take appends a sample of the ring buffer to its CPU's records, on the
// firing's alignment as dtrace_probe places it.
func (t *Tracing) take(sample []byte) error {
	if len(sample) < bpf.RecPrefix {
		return fmt.Errorf("a ring buffer sample of %d bytes", len(sample))
	}
	cpu := int(binary.NativeEndian.Uint32(sample))
	spec := binary.NativeEndian.Uint32(sample[4:])
	if spec&(bpf.SpecCommit|bpf.SpecDiscard) != 0 {
		return t.settle(spec)
	}
	rec := sample[bpf.RecPrefix:]
	if len(rec) < record.RecHdrSize {
		return fmt.Errorf("a ring buffer sample of %d bytes", len(sample))
	}
	ep, err := t.layout.EProbe(binary.LittleEndian.Uint32(rec))
	if err != nil {
		return err
	}
	rec = rec[:ep.Size]
	if spec != 0 {
		// Kept until committed or discarded, up to specsize bytes
		// of each CPU's.
		s := t.specs[spec]
		if t.specSize != 0 && s.size[cpu]+len(rec) > t.specSize {
			t.drops.Spec++
			return nil
		}
		if s.size == nil {
			s.size = map[int]int{}
		}
		s.recs = append(s.recs, specRec{cpu, ep, append([]byte(nil), rec...)})
		s.size[cpu] += len(rec)
		t.specs[spec] = s
		return nil
	}
	t.appendRec(cpu, ep, rec)
	return nil
}

// keepRec keeps a firing in its CPU's buffer under the ring policy,
// as dtrace's ring buffer wraps: the oldest firings make room for it.
func (t *Tracing) keepRec(cpu int, ep *record.EProbe, rec []byte) {
	r := t.rings[cpu]
	if r == nil {
		r = &ringBuf{}
		t.rings[cpu] = r
	}
	r.firings = append(r.firings, ringFiring{ep, append([]byte(nil), rec...)})
	r.size += len(rec)
	// The oldest are resliced away, not copied over: append moves
	// only the live firings when it grows the array.
	for len(r.firings) > 0 && r.size > t.ringSize {
		r.size -= len(r.firings[0].rec)
		r.firings[0] = ringFiring{}
		r.firings = r.firings[1:]
	}
}

// appendRec appends a firing's records to its CPU's buffer, on the
// firing's alignment as dtrace_probe places it.
func (t *Tracing) appendRec(cpu int, ep *record.EProbe, rec []byte) {
	if t.ringSize != 0 {
		t.keepRec(cpu, ep, rec)
		return
	}
	t.placeRec(cpu, ep, rec)
}

// placeRec appends a firing's records to the records of its CPU that
// the next Work hands to the consumer.
func (t *Tracing) placeRec(cpu int, ep *record.EProbe, rec []byte) {
	switch ep.ProbeID {
	case record.ProbeBegin:
		t.beganOn = cpu
	case record.ProbeEnd:
		t.endedOn = cpu
	}
	buf := t.pending[cpu]
	for len(buf)%int(ep.Alignment) != 0 {
		buf = binary.LittleEndian.AppendUint32(buf, record.EPIDNone)
	}
	t.pending[cpu] = append(buf, rec...)
	if t.Grab != nil {
		// The process's objects are read while it lives: it may be
		// gone by the time its addresses print.
		for _, a := range ep.Actions {
			switch a.Action {
			case dof.ActUStack, dof.ActJStack, dof.ActUSym, dof.ActUMod, dof.ActUAddr:
				if int(a.Offset)+8 <= len(rec) {
					t.Grab(int(binary.LittleEndian.Uint64(rec[a.Offset:])))
				}
			}
		}
	}
}

// settle commits or discards a speculation's records as its control
// sample says, and makes it inactive again.
func (t *Tracing) settle(spec uint32) error {
	id := spec &^ (bpf.SpecCommit | bpf.SpecDiscard)
	if spec&bpf.SpecCommit != 0 {
		for _, r := range t.specs[id].recs {
			t.appendRec(r.cpu, r.ep, r.rec)
		}
	}
	delete(t.specs, id)
	return t.rt.FreeSpeculation(id)
}

// snapAggs gives the consumer each CPU's aggregation entries made since
// the last snapshot, which leave the kernel's maps, and the aggregation
// drops cs counts since then.
func (t *Tracing) snapAggs(cons Consumer, cs []bpf.Counters) error {
	if len(t.aggs) == 0 {
		return nil
	}
	ncpu := 0
	var which []int
	for i, a := range t.aggs {
		ncpu = max(ncpu, a.ncpu)
		// An empty map is left in place: its swap would cost a wait
		// for the programs running, for nothing.
		empty, err := a.empty(t.rt.Aggs[i])
		if err != nil {
			return err
		}
		if !empty {
			which = append(which, i)
		}
	}
	bufs := make([][]byte, ncpu)
	if len(which) > 0 {
		var old []*ebpf.Map
		if t.stopped {
			// The probes are detached, and END has fired: nothing
			// updates the maps any more, which are read in place, with
			// no spare to wait for.
			for _, i := range which {
				old = append(old, t.rt.Aggs[i])
			}
		} else {
			var err error
			if old, err = t.rt.SwapAggs(which); err != nil {
				return err
			}
		}
		for j, i := range which {
			if err := t.aggs[i].snap(old[j], bufs, t.aggFns); err != nil {
				return err
			}
		}
	}
	for cpu, b := range bufs {
		var drops uint64
		if cpu < len(cs) {
			drops = cs[cpu].AggDrops
			if cpu < len(t.counters) {
				drops -= t.counters[cpu].AggDrops
			}
		}
		if len(b) == 0 && drops == 0 {
			continue
		}
		if err := cons.Aggregate(cpu, b, drops); err != nil {
			return err
		}
	}
	return nil
}

// Describer describes the EPIDs, aggregations, formats and probes of
// the records Work hands a consumer.
func (t *Tracing) Describer() record.Describer { return t.layout }

// Close detaches everything and releases the programs and maps.
func (t *Tracing) Close() error {
	errs := closeAll(t.closers)
	t.closers = nil
	if t.later != nil {
		errs = append(errs, t.later.close())
	}
	if t.ring != nil {
		errs = append(errs, t.ring.Close())
	}
	for _, p := range t.progs {
		errs = append(errs, p.Close())
	}
	for _, m := range t.maps {
		errs = append(errs, m.Close())
	}
	if t.rt != nil {
		errs = append(errs, t.rt.Close())
	}
	return errors.Join(errs...)
}

// closers is how many attachments closeAll closes at once.
const closers = 16

// closeAll closes cs, several at once, and returns their errors. The
// kernel waits out RCU grace periods as it takes each trace event's
// perf event down, tens of milliseconds, and sdt::: has 1,600 of them:
// closed in turn, they take two minutes; some of those waits overlap
// when closed at once.
func closeAll(cs []io.Closer) []error {
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, closers)
	for i, c := range cs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			errs[i] = c.Close()
			<-sem
		}()
	}
	wg.Wait()
	return errs
}
