package linux

import (
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/internal/linux/attach"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// A kind is how the Linux runtime puts the probes of one probe.Kind in
// place: which groups, one BPF program each, a probe's sites go in and
// in which context their program runs, and how a group's program is
// attached once loaded. kinds is the one place the runtime looks at a
// probe's Detail.
type kind struct {
	// place returns the groups of probe p, made with pl.group if new,
	// and p's index in each, which tells the group's program which of
	// its probes fired (the attachment's cookie, or the system call's
	// number).
	place func(pl *placer, p *probe.Probe) ([]placement, error)
	// attach puts group g's loaded program in place, or hands it to
	// the Tracing to run; t closes what it makes.
	attach func(t *Tracing, g *group, prog *ebpf.Program) error
	// uprobe is set for kinds whose programs are uprobes', loaded for
	// the attach type the kernel's uprobes take (a multi-uprobe link
	// where it has them).
	uprobe bool
}

// kinds are the kinds of probes the Linux runtime can put in place, by
// probe.Kind.
var kinds = [...]kind{
	probe.KindRun:        {place: func(pl *placer, p *probe.Probe) ([]placement, error) { return on(pl, p, placeRun) }, attach: attachRun},
	probe.KindTimer:      {place: func(pl *placer, p *probe.Probe) ([]placement, error) { return on(pl, p, placeTimer) }, attach: attachTimer},
	probe.KindSyscall:    {place: func(pl *placer, p *probe.Probe) ([]placement, error) { return on(pl, p, placeSyscall) }, attach: attachSyscall},
	probe.KindKernel:     {place: func(pl *placer, p *probe.Probe) ([]placement, error) { return on(pl, p, placeKernel) }, attach: attachKernel},
	probe.KindUser:       {place: func(pl *placer, p *probe.Probe) ([]placement, error) { return on(pl, p, placeUser) }, attach: attachUser, uprobe: true},
	probe.KindUSDT:       {place: func(pl *placer, p *probe.Probe) ([]placement, error) { return on(pl, p, placeUSDT) }, attach: attachUSDT, uprobe: true},
	probe.KindSDT:        {place: func(pl *placer, p *probe.Probe) ([]placement, error) { return on(pl, p, placeSDT) }, attach: attachSDT},
	probe.KindCPC:        {place: func(pl *placer, p *probe.Probe) ([]placement, error) { return on(pl, p, placeCPC) }, attach: attachCPC},
	probe.KindTracepoint: {place: func(pl *placer, p *probe.Probe) ([]placement, error) { return on(pl, p, placeTracepoint) }, attach: attachSDT},
}

// on calls a kind's place function, which takes the probe's Detail as
// the kind's type. The table's place functions are function literals
// that call it, not functions it makes, so that the table is static
// data, made at no cost at start-up.
func on[D probe.Detail](pl *placer, p *probe.Probe, place func(pl *placer, p *probe.Probe, d D) ([]placement, error)) ([]placement, error) {
	d, ok := p.Detail.(D)
	if !ok {
		return nil, fmt.Errorf("%s: its detail, a %T, is not of its kind", p, p.Detail)
	}
	return place(pl, p, d)
}

// A group is the probes one BPF program serves, all of one kind: its
// fields past index are those of the kinds that use them.
type group struct {
	name    string
	kind    probe.Kind
	ctx     bpf.Context
	clauses []bpf.Clause
	ecbs    map[*enabling.ECB]int // ECB → its clause
	entries map[uint32]*bpf.ProbeEntry
	index   map[string]uint32 // a site's index by its probe's name

	end     bool          // KindRun: END's, else BEGIN's
	tick    time.Duration // KindTimer: a tick-N's interval
	profile time.Duration // KindTimer: a profile-N's interval
	cpc     *probe.CPC    // KindCPC: the probe's event

	// KindKernel, KindUser, KindUSDT: the sites of kprobes and
	// uprobes, by index (their cookies); KindSDT: the function of a
	// group at a function's entry.
	users  []*probe.UserSite
	kernel []*probe.KernelSite
	usdt   []*probe.USDTSite // a point each
	uargs  [][]bpf.USDTArg   // each USDT point's arguments

	// KindUser, KindUSDT: the loaded program, its MapProbes and its
	// MapUArgs, which take the probes of objects mapped later.
	prog              *ebpf.Program
	probeMap, uargMap *ebpf.Map

	// tramp is set for the group of an fbt probe, or of SDT sites at a
	// function, on an fentry or fexit program, which goes back on a
	// kprobe if the kernel refuses it.
	tramp *trampoline

	// KindSDT: the group's tracepoint, and its probes' sites by index;
	// a function's sites read its parameters as rawArgs.
	tp      probe.SDTSite
	sites   []bpf.Site
	rawArgs int
	span    bpf.Span
}

// A placer puts the probes of an enabling in groups, made in order.
type placer struct {
	groups map[string]*group
	order  []*group
	// compile compiles an SDT site's condition and arguments.
	compile func(string) (*dif.Object, error)
	// compiled are the expressions compiled, which sites share: the
	// fields at one offset of many trace events' records read alike.
	compiled map[string]*dif.Object

	// The probe being placed: its kind, and the provider of the
	// description that matched it. A USDT probe whose description
	// would match the provider of any process fires in every process
	// that maps its file (see probe.USDTSite.AnyProcess).
	kind probe.Kind
	desc string
}

// A placement is where a probe fires from: a group, and the probe's
// index in it.
type placement struct {
	g     *group
	index uint32
}

// place returns the groups of probe p, matched by a description of
// provider desc, and p's indexes in them: most probes have one, a USDT
// probe one per point, an SDT probe one per site.
func (pl *placer) place(p *probe.Probe, desc string) ([]placement, error) {
	if p.Detail == nil || int(p.Detail.Kind()) >= len(kinds) || kinds[p.Detail.Kind()].place == nil {
		return nil, fmt.Errorf("%s: the %s provider is not supported by the Linux runtime yet", p, p.Provider)
	}
	pl.kind, pl.desc = p.Detail.Kind(), desc
	return kinds[pl.kind].place(pl, p)
}

// group returns the group called name, whose program has context ctx,
// made for the kind being placed if new.
func (pl *placer) group(name string, ctx bpf.Context) *group {
	g := pl.groups[name]
	if g == nil {
		g = &group{name: name, kind: pl.kind, ctx: ctx, ecbs: map[*enabling.ECB]int{}, entries: map[uint32]*bpf.ProbeEntry{}, index: map[string]uint32{}}
		pl.groups[name] = g
		pl.order = append(pl.order, g)
	}
	return g
}

// attachType is the attachment type a group's program is loaded for.
func (g *group) attachType() ebpf.AttachType {
	if kinds[g.kind].uprobe {
		return attach.UprobeAttachType()
	}
	return ebpf.AttachNone
}

// site returns the index of the group's site of the named probe, adding
// it with add when new.
func (g *group) site(name string, add func()) uint32 {
	i, ok := g.index[name]
	if !ok {
		i = uint32(len(g.index))
		g.index[name] = i
		add()
	}
	return i
}

// closes adds an attachment to those t closes.
func (t *Tracing) closes(c io.Closer, err error) error {
	if err != nil {
		return err
	}
	t.closers = append(t.closers, c)
	return nil
}

// cookies are the indexes 0 … n-1, by which a program tells its sites
// apart.
func cookies(n int) []uint64 {
	c := make([]uint64, n)
	for i := range c {
		c[i] = uint64(i)
	}
	return c
}

// BEGIN and END: programs of their own, run from user space.
func placeRun(pl *placer, p *probe.Probe, _ *probe.Run) ([]placement, error) {
	g := pl.group(p.Name, bpf.CtxRun)
	g.end = p.Name == "END"
	return []placement{{g, 0}}, nil
}

func attachRun(t *Tracing, g *group, prog *ebpf.Program) error {
	if g.end {
		t.end = prog
	} else {
		t.begin = prog
	}
	return nil
}

// tick-N runs from user space at its interval; profile-N, a group per
// interval, on a perf event per CPU.
func placeTimer(pl *placer, p *probe.Probe, d *probe.Timer) ([]placement, error) {
	if d.Tick {
		g := pl.group(p.Name, bpf.CtxRun)
		g.tick = d.Interval
		return []placement{{g, 0}}, nil
	}
	g := pl.group(p.Name, bpf.CtxPerf)
	g.profile = d.Interval
	return []placement{{g, 0}}, nil
}

func attachTimer(t *Tracing, g *group, prog *ebpf.Program) error {
	if g.tick != 0 {
		t.ticks = append(t.ticks, &tick{prog: prog, interval: g.tick})
		return nil
	}
	return t.closes(attach.Profile(prog, g.profile))
}

// cpc: a group per probe, on a perf event per CPU, whose program sees
// what profile-N's does.
func placeCPC(pl *placer, p *probe.Probe, d *probe.CPC) ([]placement, error) {
	g := pl.group(p.String(), bpf.CtxPerf)
	g.cpc = d
	return []placement{{g, 0}}, nil
}

func attachCPC(t *Tracing, g *group, prog *ebpf.Program) error {
	d := g.cpc
	return t.closes(attach.PerfEvents(prog, attach.PerfEvent{Name: g.name, Type: d.Type, Config: d.Config, Period: d.Count,
		ExcludeUser: !d.User, ExcludeKernel: !d.Kernel}))
}

// syscall: one raw sys_enter or sys_exit program serves every call,
// each probe at its call's number.
func placeSyscall(pl *placer, p *probe.Probe, d *probe.Syscall) ([]placement, error) {
	nr, ok := attach.SyscallNumber(d.Name)
	if !ok {
		return nil, fmt.Errorf("%s: no system call of that name on this machine", p)
	}
	if d.Return {
		return []placement{{pl.group("syscall-return", bpf.CtxSysExit), uint32(nr)}}, nil
	}
	return []placement{{pl.group("syscall-entry", bpf.CtxSysEnter), uint32(nr)}}, nil
}

func attachSyscall(t *Tracing, g *group, prog *ebpf.Program) error {
	return t.closes(attach.Syscalls(prog, g.ctx == bpf.CtxSysExit))
}

// fbt and kinst: a kprobe program for a provider's entry probes and
// one for its return probes, each site at its cookie; fbt's sites go on
// trampolines where they can (splitTrampolines).
func placeKernel(pl *placer, p *probe.Probe, d *probe.KernelSite) ([]placement, error) {
	name, ctx := p.Provider+"-entry", bpf.CtxEntry
	if d.Return {
		name, ctx = p.Provider+"-return", bpf.CtxReturn
	}
	g := pl.group(name, ctx)
	return []placement{{g, g.site(p.String(), func() { g.kernel = append(g.kernel, d) })}}, nil
}

func attachKernel(t *Tracing, g *group, prog *ebpf.Program) error {
	return t.closes(attach.Kprobes(prog, g.kernel, cookies(len(g.kernel)), nil))
}

// pid: a uprobe program for the entry and offset probes of every
// process, one for the return probes, each site at its cookie.
func placeUser(pl *placer, p *probe.Probe, d *probe.UserSite) ([]placement, error) {
	name, ctx := "pid-entry", bpf.CtxEntry
	if d.Return {
		name, ctx = "pid-return", bpf.CtxReturn
	}
	g := pl.group(name, ctx)
	return []placement{{g, g.site(p.String(), func() { g.users = append(g.users, d) })}}, nil
}

func attachUser(t *Tracing, g *group, prog *ebpf.Program) error {
	if t.later.active() {
		return t.later.attachUser(g, cookies(len(g.users)))
	}
	return t.closes(attach.Uprobes(prog, g.users, cookies(len(g.users))))
}

// USDT: one uprobe program for every probe, a site per point, as each
// may find its arguments elsewhere.
func placeUSDT(pl *placer, p *probe.Probe, d *probe.USDTSite) ([]placement, error) {
	g := pl.group("usdt", bpf.CtxUSDT)
	anyProc := usdtAnyProcess(p, d, pl.desc)
	var pls []placement
	for _, pt := range d.Points {
		args, err := parseUSDTArgs(pt.Args)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		// A point of any process is a site of its own: the clauses of
		// descriptions naming PID's provider alone do not fire in the
		// others.
		name := fmt.Sprintf("%s@%#x", p, pt.Addr)
		if anyProc {
			name += " in any process"
		}
		pls = append(pls, placement{g, g.site(name, func() {
			g.usdt = append(g.usdt, &probe.USDTSite{PID: d.PID, Path: d.Path, Points: []probe.USDTPoint{pt}, AnyProcess: anyProc})
			g.uargs = append(g.uargs, args)
		})})
	}
	return pls, nil
}

func attachUSDT(t *Tracing, g *group, prog *ebpf.Program) error {
	if t.later.active() {
		return t.later.attachUSDT(g, cookies(len(g.usdt)))
	}
	return t.closes(attach.USDT(prog, g.usdt, cookies(len(g.usdt))))
}

// usdtAnyProcess tells whether the description's provider desc, which
// matched USDT probe p of process site.PID, matches the provider of
// the same name in any process: test_prov* does, test_prov1234 and
// test_prov*1234 do not.
func usdtAnyProcess(p *probe.Probe, site *probe.USDTSite, desc string) bool {
	base, ok := strings.CutSuffix(p.Provider, strconv.Itoa(site.PID))
	if !ok {
		return false
	}
	pat := probe.NewPattern(desc)
	// No process is 0: a pattern matching it names none in particular.
	return pat.Match(base+"0") && pat.Match(p.Provider)
}

// SDT (proc, sched, io, lockstat, sdt, rawtp): a program per tracepoint
// or kernel function, serving every probe with a site there; the site's
// condition and arguments, compiled, run before its probe's clauses. A
// site of an event's record and a system call's tracepoint go through a
// perf event, a function's entry through a kprobe or an fentry
// trampoline, any other is a raw tracepoint.
func placeSDT(pl *placer, p *probe.Probe, d *probe.SDT) ([]placement, error) {
	var pls []placement
	for _, st := range d.Sites {
		var g *group
		switch {
		case st.Function != "":
			// A kprobe at the function's entry, unless it goes on a
			// trampoline (splitTrampolines).
			g = pl.group(fnGroup+st.Function, bpf.CtxEntry)
			if g.kernel == nil {
				g.kernel = []*probe.KernelSite{{Module: "vmlinux", Function: st.Function}}
			}
		case st.Record:
			g = pl.group("event:"+st.System+":"+st.Event, bpf.CtxTP)
		case st.System == "syscalls":
			g = pl.group("tp:"+st.Event, bpf.CtxSyscallTP)
		default:
			g = pl.group("rawtp:"+st.Event, bpf.CtxRawTP)
		}
		g.tp = st
		if st.Since != "" {
			start := pl.group("rawtp:"+st.Since, bpf.CtxRawTP)
			start.tp = probe.SDTSite{System: st.System, Event: st.Since}
			start.span, start.rawArgs = bpf.SpanStart, max(start.rawArgs, 2)
			g.span = bpf.SpanEnd
		}
		var err error
		idx := g.site(p.String(), func() {
			var s bpf.Site
			if st.Cond != "" {
				if s.Cond, err = pl.compileOnce(st.Cond); err != nil {
					return
				}
			}
			for _, a := range st.Args {
				o, cerr := pl.compileOnce(a)
				if cerr != nil {
					err = cerr
					return
				}
				s.Args = append(s.Args, o)
			}
			g.sites = append(g.sites, s)
			g.rawArgs = max(g.rawArgs, argsRead(st))
		})
		if err != nil {
			return nil, fmt.Errorf("%s: site %s: %w", p, st.String(), err)
		}
		g.sites[idx].Index = idx
		pls = append(pls, placement{g, idx})
	}
	return pls, nil
}

// compileOnce compiles expr, or returns what it was compiled to.
func (pl *placer) compileOnce(expr string) (*dif.Object, error) {
	if o, ok := pl.compiled[expr]; ok {
		return o, nil
	}
	o, err := pl.compile(expr)
	if err != nil {
		return nil, err
	}
	if pl.compiled == nil {
		pl.compiled = map[string]*dif.Object{}
	}
	pl.compiled[expr] = o
	return o, nil
}

// fnGroup begins the name of the group of an SDT site at a kernel
// function's entry, followed by the function's.
const fnGroup = "fn:"

func attachSDT(t *Tracing, g *group, prog *ebpf.Program) error {
	switch g.ctx {
	case bpf.CtxEntry:
		return t.closes(attach.Kprobes(prog, g.kernel, cookies(len(g.kernel)), nil))
	case bpf.CtxTP:
		return t.closes(attach.TraceEvent(prog, g.tp.System, g.tp.Event))
	case bpf.CtxSyscallTP:
		return t.closes(attach.Tracepoint(prog, g.tp.System, g.tp.Event))
	}
	return t.closes(attach.RawTracepoint(prog, g.tp.Event))
}

// sdt and rawtp: a trace event's probe is an SDT probe of one site,
// whose arguments are the event's record's fields or the raw
// tracepoint's (probe.Tracepoint.Site), on a perf event program for
// the record (CtxTP), else a raw tracepoint's.
func placeTracepoint(pl *placer, p *probe.Probe, d *probe.Tracepoint) ([]placement, error) {
	st, err := d.Site()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	// Its groups are SDT probes': proc:::exit's and
	// rawtp:sched::sched_process_exit's program is one.
	pl.kind = probe.KindSDT
	return placeSDT(pl, p, &probe.SDT{Sites: []probe.SDTSite{st}})
}

// argsRead returns how many of its tracepoint's arguments a site's
// expressions read: arg0 up to the highest named, but for the span's
// past them (bpf.SpanArg on) at a site with Since.
func argsRead(st probe.SDTSite) int {
	n := 0
	for _, e := range append([]string{st.Cond}, st.Args...) {
		for i := range argsNamed(e) {
			if st.Since == "" || i < bpf.SpanArg {
				n = max(n, i+1)
			}
		}
	}
	return n
}

// argsNamed yields the N of each argN, N one digit, that expression e
// names as a word of its own.
func argsNamed(e string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := 0; ; i += 3 {
			j := strings.Index(e[i:], "arg")
			if j < 0 {
				return
			}
			i += j
			if (i == 0 || !isWordByte(e[i-1])) && i+3 < len(e) && '0' <= e[i+3] && e[i+3] <= '9' &&
				(i+4 == len(e) || !isWordByte(e[i+4])) {
				if !yield(int(e[i+3] - '0')) {
					return
				}
			}
		}
	}
}

// isWordByte reports whether c is a byte of an identifier or number,
// as regexp's \w.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
