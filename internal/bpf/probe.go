package bpf

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/record"
)

// A Context is what a probe program is attached to: it decides the
// program's type, how the program finds which of its probes fired (the
// index it looks up in MapProbes) and where the probe's arguments are.
type Context uint8

const (
	// CtxRun is a raw tracepoint program run from user space by
	// BPF_PROG_RUN (dtrace's BEGIN and END, tick-N): its context is an
	// array of 64-bit words, the index then arg0 on.
	CtxRun Context = iota
	// CtxSysEnter is the raw tracepoint sys_enter: the index is the
	// system call's number, the arguments are read from its pt_regs.
	CtxSysEnter
	// CtxSysExit is the raw tracepoint sys_exit: the index is the
	// system call's number (orig_ax), arg0 and arg1 its return value, -1
	// for an error (errno).
	CtxSysExit
	// CtxPerf is a perf event program (profile-N): arg0 is the kernel's
	// pc, arg1 the user pc, whichever the CPU was running.
	CtxPerf
	// CtxEntry is a kprobe or uprobe program at a function's entry or
	// an instruction: the index is the attachment's cookie, the
	// arguments the registers of the calling convention.
	CtxEntry
	// CtxReturn is a kretprobe or uretprobe program: the index is the
	// cookie, arg1 the return value (arg0, the offset of the returning
	// instruction, is not known and reads 0).
	CtxReturn
	// CtxUSDT is a uprobe program at USDT probe points: the index is
	// the cookie, the arguments are where each point's note says, as
	// MapUArgs describes them by index.
	CtxUSDT
	// CtxRawTP is a raw tracepoint program for SDT probes: the
	// tracepoint's arguments are its context's words, and each of the
	// program's Sites makes its probe's arguments from them.
	CtxRawTP
	// CtxSyscallTP is a perf tracepoint program on a system call's
	// event (syscalls:sys_enter_*, sys_exit_*) for SDT probes: the
	// call's arguments, or its return value, follow the event's 16
	// bytes of header and number.
	CtxSyscallTP
	// CtxFEntry is an fentry program, a BPF trampoline's at the entry
	// of one kernel function: the program serves that one probe (index
	// 0), its arguments are the function's, read by bpf_get_func_arg
	// (0 past the function's own). Its context holds no registers.
	CtxFEntry
	// CtxFExit is an fexit program at one kernel function's return:
	// arg1 is the return value, read by bpf_get_func_ret, and arg0
	// reads 0, as at CtxReturn.
	CtxFExit
	// CtxTP is a perf tracepoint program on any trace event, for SDT
	// probes whose sites read the event's record (the sdt provider's):
	// arg0 is the record's address, the program's context.
	CtxTP
)

// ProgramType is the BPF program type of a context.
func (c Context) ProgramType() ebpf.ProgramType {
	switch c {
	case CtxPerf:
		return ebpf.PerfEvent
	case CtxEntry, CtxReturn, CtxUSDT:
		return ebpf.Kprobe
	case CtxSyscallTP, CtxTP:
		return ebpf.TracePoint
	case CtxFEntry, CtxFExit:
		return ebpf.Tracing
	}
	return ebpf.RawTracepoint
}

// AttachType is the attach type a program of the context is loaded
// with, ebpf.AttachNone but for the trampolines'.
func (c Context) AttachType() ebpf.AttachType {
	switch c {
	case CtxFEntry:
		return ebpf.AttachTraceFEntry
	case CtxFExit:
		return ebpf.AttachTraceFExit
	}
	return ebpf.AttachNone
}

// artificialFrames is how many frames of a kernel stack taken in the
// context are the tracing's own, which stack() leaves out as dtrace
// leaves out its artificial frames: for a raw tracepoint, the program,
// bpf_trace_run<N> and __bpf_trace_<event>. Stacks taken from the
// registers of a perf event or a kprobe start where the probe fired.
func (c Context) artificialFrames() int32 {
	switch c {
	case CtxSysEnter, CtxSysExit, CtxRawTP:
		return 3
	}
	return c.trampolineFrames()
}

// trampolineFrames is how many frames of a kernel stack taken in an
// fentry or fexit program are the tracing's own (the program and the
// trampoline), and for fexit the traced function's, which has returned:
// stack(), stackdepth and caller then start where a kprobe's or a
// kretprobe's would.
func (c Context) trampolineFrames() int32 {
	switch c {
	case CtxFEntry:
		return 2
	case CtxFExit:
		return 3
	}
	return 0
}

// ReadsRegs reports whether a clause reads regs[], which needs the
// registers of a kprobe's context: an fentry or fexit program has none.
func ReadsRegs(e *enabling.ECB) bool {
	for _, o := range difos(e) {
		for _, in := range o.Code {
			if in.Op() == dif.LDGA && uint32(in.R1()) == dif.VarRegs {
				return true
			}
		}
	}
	return false
}

// A Clause is an ECB as a probe program runs it: its predicate and
// actions, and the layout of its records (any of the ECB's EProbes:
// they differ only in their EPID, which the program finds in MapProbes).
type Clause struct {
	ECB *enabling.ECB
	EP  *record.EProbe
}

// A ProbeProgram is the program of one attachment: it runs the clauses
// of whichever of its probes fired, in order, as dtrace_probe runs a
// probe's ECBs.
type ProbeProgram struct {
	Context Context
	Clauses []Clause
	// Error are the clauses of dtrace:::ERROR, run when an action of
	// one of Clauses faults, with dtrace_probe_error's arguments. Their
	// EPIDs are their EProbes'.
	Error []Clause
	// End is set for dtrace:::END's program, which runs when the
	// tracing is draining; other programs run only while it is active.
	End bool
	// Sites are the SDT probes a CtxRawTP, CtxSyscallTP or CtxTP program
	// fires, in order, each from the tracepoint's arguments, or a
	// CtxEntry or CtxFEntry program at a function's entry, each from
	// the function's parameters.
	Sites []Site
	// RawArgs is the number of the tracepoint's arguments the sites
	// read: a program may not read past its tracepoint's.
	RawArgs int
	// Span is the program's part in a pair of tracepoints, whose map
	// is its own (MapSpan).
	Span Span
}

// A Site is an SDT probe at a tracepoint or a function's entry: when
// Cond (nil: always) is not 0, the probe at Index of MapProbes fires
// with Args, computed from the tracepoint's or the function's arguments
// arg0 … . A fault in Cond or Args leaves the probe unfired.
type Site struct {
	Index uint32
	Cond  *dif.Object
	Args  []*dif.Object
	// Clauses, if not nil, are those of the program's clauses the
	// probe runs (indexes in ProbeProgram.Clauses, in order): the
	// site holds their code alone. Else it holds every clause's, each
	// run if the probe's entry in MapProbes gives it an EPID: the
	// verifier checks each site's whole, and programs at tracepoints
	// shared by several providers' probes (net_dev_queue: ip, tcp and
	// udp) have many sites, each of a few clauses.
	Clauses []int
}

// The control map's value, shared by all CPUs: the tracing's activity
// and what walltimestamp adds to CLOCK_MONOTONIC.
const (
	ctlActivity = 0  // ActivityInactive, ActivityActive or ActivityDraining
	ctlWallOff  = 8  // CLOCK_REALTIME - CLOCK_MONOTONIC, in nanoseconds
	ctlSize     = 32 // then CtlSpecUnavail and CtlSpecBusy
)

// Activities, as dtrace's DTRACE_ACTIVITY_*: probes other than BEGIN and
// END fire only while the tracing is active; exit() makes it drain.
const (
	ActivityInactive = 0
	ActivityActive   = 1
	ActivityDraining = 2
)

// RecPrefix is what a sample in the ring buffer has before the firing's
// records: the CPU it was made on (4 bytes) and 4 bytes of padding.
const RecPrefix = 8

// The stack frame of a probe program, beyond a DIFO's.
const (
	recPtr   = -128 // this CPU's entry of MapRec
	probePtr = -136 // the probe's MapProbes value
	actSlot  = -144 // the action running, for ERROR's arg2: 0 the predicate
	incrSlot = -152 // a quantization's weight
	aggSaved = -160 // the record bytes an aggregation's ID covers while its key is looked up
	idxSlot  = -168 // the probe's index, MapProbes' key
	uargPtr  = -176 // the point's MapUArgs value
	aggPtr   = -192 // the aggregation map an aggregation found in its slot
)

// Offsets in the pt_regs of x86-64.
const (
	regR10     = 56
	regR9      = 64
	regR8      = 72
	regAX      = 80
	regCX      = 88
	regDX      = 96
	regSI      = 104
	regDI      = 112
	regOrigAX  = 120
	regIP      = 128
	regCS      = 136
	ptRegsSize = 168
)

// BuildProbe returns the program for p. Every DIFO of its clauses must
// have been added to l (AddProbe).
func BuildProbe(p *ProbeProgram, l *Layout) (asm.Instructions, error) {
	insns, err := newBuilder(p, l, part{hi: len(p.Clauses), links: 1}).build()
	if err != nil {
		return nil, err
	}
	return relax(insns), nil
}

func newBuilder(p *ProbeProgram, l *Layout, pt part) *builder {
	l.settle()
	t := newTranslator(l)
	t.ctx = p.Context
	t.shared = pt.links > 1
	return &builder{t: t, p: p, l: l, part: pt, exit: "exit", first: true}
}

type builder struct {
	t *translator
	p *ProbeProgram
	l *Layout
	// part is the clauses this program runs, the whole of p's unless
	// it is one of a chain's (BuildChain).
	part
	// firing is what p's clauses need of each firing, from all of
	// them: set before build for a chain's program, by build else.
	firing *firing
	nargs  int    // how many times args was emitted, for its labels
	sp     string // the site's prefix of the clauses' labels
	// sizes, if set, receives the instructions each clause takes.
	sizes []int
	// groups are the clauses of a chain's program by function.
	groups []part
	// runs, if not nil, are the clauses the next dispatch runs, in
	// place of those [lo, hi): a site's (Site.Clauses).
	runs []int
	// units, in a chain of sites, are the program's units of work,
	// which [lo, hi) and groups index; usizes receives the instructions
	// each takes where sizes is set.
	units  []unit
	usizes []int
	// exit is where the firing ends, stop what a function returns
	// there; first is set where the firing starts; cont, if set, is
	// where the function goes once its clauses have run.
	exit, cont string
	stop       int32
	first      bool
}

// A firing is what the clauses of a probe program need of each firing,
// whichever program of its chain runs them.
type firing struct {
	args   bool // a clause reads the probe's arguments
	locals bool // a clause uses clause-locals, zeroed at each firing
	spec   bool // a clause speculates, commits or discards
	time   bool // a clause reads the firing's time, or records (see now)
}

func (b *builder) emit(ins asm.Instruction) { b.t.emit(ins) }
func (b *builder) mark(label string)        { b.t.mark(label) }

func (b *builder) build() (asm.Instructions, error) {
	t := b.t
	// Any of a chain of sites' programs may run any clause.
	mine := b.p.Clauses
	if b.units == nil {
		mine = mine[b.lo:b.hi]
	}
	for i, cs := range [][]Clause{mine, b.p.Error} {
		for _, c := range cs {
			for _, o := range difos(c.ECB) {
				if err := t.use(o); err != nil {
					return nil, err
				}
			}
		}
		if i == 0 && b.firing == nil {
			// ERROR's clauses read the arguments faulted sets.
			b.firing = &firing{args: t.uses.args, locals: t.uses.locals, time: readsTime(b.p)}
			for _, c := range b.p.Clauses {
				b.firing.spec = b.firing.spec || speculates(c.ECB)
			}
		}
	}
	for _, st := range b.p.Sites {
		for _, o := range st.difos() {
			if err := t.use(o); err != nil {
				return nil, err
			}
		}
	}
	// The clauses' state is reset at each firing: clause-locals and
	// scratch memory, as dif/vm's BeginFiring.
	t.uses.scratch = true
	if b.links > 1 {
		return b.chained()
	}
	t.uses.locals = t.uses.locals || b.firing.locals
	t.prologue()
	if len(b.p.Sites) == 0 && b.p.Span == SpanNone {
		b.start()
		if err := b.dispatch("", b.exit, true); err != nil {
			return nil, err
		}
	} else {
		b.begin()
		b.prepare()
		b.rawArgs()
		b.span()
		for i, st := range b.p.Sites {
			prefix := fmt.Sprintf("s%d_", i)
			end := prefix + "end"
			start := len(t.out)
			if err := b.site(st, prefix, end); err != nil {
				return nil, err
			}
			b.emit(asm.StoreImm(asm.R10, idxSlot, int64(st.Index), asm.Word))
			if b.sizes != nil {
				b.usizes = append(b.usizes, len(t.out)-start)
			}
			b.runs = st.Clauses
			if err := b.dispatch(prefix, end, false); err != nil {
				return nil, err
			}
			b.mark(end)
			b.emit(asm.Mov.Imm(asm.R0, 0))
		}
	}
	b.mark(b.exit)
	b.emit(storeImm64(rState, stateBusy, 0))
	b.emit(asm.Mov.Imm(asm.R0, 0))
	b.emit(asm.Return())
	t.functions()
	return t.out, nil
}

// begin appends the start of a firing: a program that interrupts
// another on its CPU (a profile probe in a system call's) would share
// its record buffer and state: it is dropped, and counted, and returns
// b.stop; else the CPU is marked busy, and the firing ends at b.exit
// unless the tracing's activity lets the program's clauses run.
func (b *builder) begin() {
	b.emit(asm.LoadMem(asm.R1, rState, stateBusy, asm.DWord))
	b.emit(asm.JEq.Imm(asm.R1, 0, b.t.lp+"idle"))
	b.count(stateBufDrops)
	b.emit(asm.Mov.Imm(asm.R0, b.stop))
	b.emit(asm.Return())
	b.mark(b.t.lp + "idle")
	b.emit(storeImm64(rState, stateBusy, 1))
	b.lookup(asm.R1, mapCtl)
	b.emit(asm.LoadMem(asm.R1, asm.R1, ctlActivity, asm.DWord))
	if b.p.End {
		b.emit(asm.JEq.Imm(asm.R1, ActivityInactive, b.exit))
	} else {
		// BEGIN runs before the tracing is active; the others only
		// while it is.
		if b.p.Context == CtxRun {
			b.emit(asm.JEq.Imm(asm.R1, ActivityDraining, b.exit))
		} else {
			b.emit(asm.JNE.Imm(asm.R1, ActivityActive, b.exit))
		}
	}
}

// start appends the start of a firing (begin) and finds which probe
// fired: its index at idxSlot, and at StateIndex for a chain's other
// programs.
func (b *builder) start() {
	b.begin()
	b.index()
	b.emit(asm.StoreMem(asm.R10, idxSlot, asm.R0, asm.Word))
	if b.links > 1 {
		b.emit(asm.StoreMem(rState, stateIndex, asm.R0, asm.DWord))
	}
}

// chained appends the code of one program of a chain: a main function
// that calls each group of its clauses, a function of its own, in
// order, then the chain's next program, and at the end of the chain
// ends the firing. A group's function readies the firing if it is the
// chain's first (start), or finds it again from the maps (the probe's
// index at StateIndex, the record buffer); it returns 0 for the firing
// to go on, 1 where it ends (exit(), an inactive tracing, an interrupted
// program's CPU). A chain of sites has its units in groups (siteGroup).
// The verifier's analysis of the stack's liveness walks
// a whole function at each branch it has explored: functions of a few
// clauses each keep it short.
func (b *builder) chained() (asm.Instructions, error) {
	t := b.t
	const ctxAt, keyAt = -8, -16
	t.uses.locals = t.uses.locals || b.place == 0 && b.firing.locals
	b.emit(asm.StoreMem(asm.R10, ctxAt, asm.R1, asm.DWord))
	b.emit(storeImm64(asm.R10, keyAt, 0))
	t.mapPtr(asm.R1, MapState)
	b.emit(asm.Mov.Reg(asm.R2, asm.R10))
	b.emit(asm.Add.Imm(asm.R2, keyAt))
	b.t.helper(asm.FnMapLookupElem)
	b.emit(asm.JNE.Imm(asm.R0, 0, "main_state"))
	b.emit(asm.Mov.Imm(asm.R0, 0))
	b.emit(asm.Return())
	b.mark("main_state")
	b.emit(asm.Mov.Reg(rState, asm.R0))
	for i := range b.groups {
		b.emit(asm.LoadMem(asm.R1, asm.R10, ctxAt, asm.DWord))
		b.emit(asm.Call.Label(groupName(i)))
		b.emit(asm.JNE.Imm(asm.R0, 0, "main_ret"))
	}
	if b.place+1 < b.links {
		b.emit(asm.LoadMem(asm.R1, asm.R10, ctxAt, asm.DWord))
		b.emit(asm.LoadMapPtr(asm.R2, 0).WithReference(mapChain))
		b.emit(asm.Mov.Imm(asm.R3, int32(b.place+1)))
		b.emit(asm.FnTailCall.Call())
	}
	// The firing's end; or a tail call that failed: it cannot go on.
	b.emit(storeImm64(rState, stateBusy, 0))
	b.mark("main_ret")
	b.emit(asm.Mov.Imm(asm.R0, 0))
	b.emit(asm.Return())
	lo, hi := b.lo, b.hi
	b.stop = 1
	for i, g := range b.groups {
		name := groupName(i)
		t.lp = name + "_"
		b.exit, b.cont = t.lp+"exit", t.lp+"ok"
		b.lo, b.hi = g.lo, g.hi
		b.first = b.place == 0 && i == 0
		b.mark(name)
		t.subs = append(t.subs, subprog{name, len(t.out)})
		t.prologue()
		if err := b.group(); err != nil {
			return nil, err
		}
		b.mark(b.cont)
		b.emit(asm.Mov.Imm(asm.R0, 0))
		b.emit(asm.Return())
		b.mark(b.exit)
		b.emit(storeImm64(rState, stateBusy, 0))
		b.emit(asm.Mov.Imm(asm.R0, 1))
		b.emit(asm.Return())
	}
	b.lo, b.hi = lo, hi
	t.functions()
	return t.out, nil
}

// group appends the clauses of a group of a chain's program, [lo, hi),
// which end at cont.
func (b *builder) group() error {
	switch {
	case b.units != nil:
		return b.siteGroup()
	case b.first:
		b.start()
	default:
		b.emit(asm.LoadMem(asm.R1, rState, stateIndex, asm.DWord))
		b.emit(asm.StoreMem(asm.R10, idxSlot, asm.R1, asm.Word))
	}
	return b.dispatch("", b.exit, true)
}

// groupName is the name of the function of a chain's program that runs
// its i'th group of clauses.
func groupName(i int) string { return fmt.Sprintf("kd_group%d", i) }

// prepare readies a firing: the record buffer, with this CPU in its
// prefix, and the clauses' state.
func (b *builder) prepare() {
	b.record()
	b.emit(asm.LoadMem(asm.R2, asm.R10, keySlot, asm.Word))
	b.emit(asm.StoreMem(asm.R0, 0, asm.R2, asm.Word))
	b.emit(asm.Mov.Reg(asm.R1, asm.R0))
	b.emit(asm.StoreImm(asm.R1, 4, 0, asm.Word))
	b.resetFiring()
}

// record finds this CPU's entry of MapRec, the record buffer, and
// leaves it in R0 and at recPtr.
func (b *builder) record() {
	b.t.helper(asm.FnGetSmpProcessorId)
	b.emit(asm.StoreMem(asm.R10, keySlot, asm.R0, asm.Word))
	b.t.mapPtr(asm.R1, mapRec)
	b.emit(asm.Mov.Reg(asm.R2, asm.R10))
	b.emit(asm.Add.Imm(asm.R2, keySlot))
	b.t.helper(asm.FnMapLookupElem)
	b.emit(asm.JEq.Imm(asm.R0, 0, b.exit))
	b.emit(asm.StoreMem(asm.R10, recPtr, asm.R0, asm.DWord))
}

// dispatch appends the clauses of the probe at idxSlot's index in
// MapProbes; it ends at end. prefix makes its labels unique. With
// prepare, the firing is readied once the probe is found, and its
// arguments read: a system call no clause traces costs one lookup.
func (b *builder) dispatch(prefix, end string, prepare bool) error {
	b.sp = prefix
	b.probe(end)
	switch {
	case prepare && b.first:
		b.prepare()
		b.args()
	case prepare:
		// Readied by the chain's first function.
		b.record()
	}
	for _, j := range b.clauses() {
		start := len(b.t.out)
		if err := b.clause(j); err != nil {
			return err
		}
		if b.sizes != nil {
			b.sizes[j] = len(b.t.out) - start
			if prefix != "" {
				b.usizes = append(b.usizes, b.sizes[j])
			}
		}
	}
	if b.cont != "" {
		b.emit(asm.Ja.Label(b.cont))
		return nil
	}
	b.emit(asm.Ja.Label(end))
	return nil
}

// clauses returns the clauses the next dispatch runs: a site's, or
// those [lo, hi).
func (b *builder) clauses() []int {
	if b.runs != nil {
		return b.runs
	}
	js := make([]int, b.hi-b.lo)
	for i := range js {
		js[i] = b.lo + i
	}
	return js
}

// probe finds the entry in MapProbes of the probe at idxSlot's index:
// its address at probePtr, its ID at StateProbeID; if there is none,
// it goes to end.
func (b *builder) probe(end string) {
	b.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(MapProbes))
	b.emit(asm.Mov.Reg(asm.R2, asm.R10))
	b.emit(asm.Add.Imm(asm.R2, idxSlot))
	b.t.helper(asm.FnMapLookupElem)
	b.emit(asm.JEq.Imm(asm.R0, 0, end))
	b.emit(asm.StoreMem(asm.R10, probePtr, asm.R0, asm.DWord))
	b.emit(asm.LoadMem(asm.R1, asm.R0, 0, asm.Word))
	b.emit(asm.JEq.Imm(asm.R1, 0, end)) // an array's entry of no probe
	b.emit(asm.StoreMem(rState, StateProbeID, asm.R1, asm.DWord))
}

// A unit is a piece of the work of a program of sites, cut into a
// chain as clauses are: a site's evaluation (clause -1) or one of the
// clauses its probe runs.
type unit struct{ site, clause int }

// siteUnits returns the units of p's sites, in the order its lone
// program runs them.
func siteUnits(p *ProbeProgram) []unit {
	var us []unit
	for s, st := range p.Sites {
		us = append(us, unit{s, -1})
		if st.Clauses == nil {
			for j := range p.Clauses {
				us = append(us, unit{s, j})
			}
			continue
		}
		for _, j := range st.Clauses {
			us = append(us, unit{s, j})
		}
	}
	return us
}

// siteGroup appends the code of a group of a chain of sites, its units
// [lo, hi): the chain's first readies the firing as a lone program of
// sites does, the others find the record buffer again. A group that
// goes on with a site evaluated before it runs the site's clauses if
// its probe fires (stateSite), with the arguments the site left in
// MapState (the clauses before it put back any they changed).
func (b *builder) siteGroup() error {
	if b.first {
		b.begin()
		b.prepare()
		b.rawArgs()
		b.span()
	} else {
		b.record()
	}
	for k := b.lo; k < b.hi; k++ {
		u := b.units[k]
		st := b.p.Sites[u.site]
		prefix := fmt.Sprintf("s%d_", u.site)
		end := fmt.Sprintf("%ss%d_end", b.t.lp, u.site)
		switch {
		case u.clause < 0:
			b.emit(storeImm64(rState, stateSite, 0))
			if err := b.site(st, prefix, end); err != nil {
				return err
			}
			b.emit(storeImm64(rState, stateSite, 1))
		case k == b.lo:
			b.emit(asm.LoadMem(asm.R1, rState, stateSite, asm.DWord))
			b.emit(asm.JEq.Imm(asm.R1, 0, end))
		}
		if u.clause < 0 || k == b.lo {
			b.emit(asm.StoreImm(asm.R10, idxSlot, int64(st.Index), asm.Word))
			b.probe(end)
		}
		if u.clause >= 0 {
			b.sp = prefix
			if err := b.clause(u.clause); err != nil {
				return err
			}
		}
		if k+1 == b.hi || b.units[k+1].site != u.site {
			b.mark(end)
			b.emit(asm.Mov.Imm(asm.R0, 0))
		}
	}
	return nil
}

// difos returns a site's DIFOs.
func (st *Site) difos() []*dif.Object {
	var os []*dif.Object
	if st.Cond != nil {
		os = append(os, st.Cond)
	}
	return append(os, st.Args...)
}

// rawArgs copies the tracepoint's arguments the sites read to
// StateRawArgs: at a function's entry (CtxEntry, CtxFEntry), its
// parameters, as args fills StateArgs there.
func (b *builder) rawArgs() {
	for i := b.p.RawArgs; i < NArgs; i++ {
		b.emit(storeImm64(rState, int16(stateRawArgs+8*i), 0))
	}
	switch b.p.Context {
	case CtxEntry:
		b.emit(asm.LoadMem(asm.R1, asm.R10, ctxSlot, asm.DWord))
		for i, off := range []int16{regDI, regSI, regDX, regCX, regR8, regR9}[:min(b.p.RawArgs, 6)] {
			b.emit(asm.LoadMem(asm.R2, asm.R1, off, asm.DWord))
			b.emit(asm.StoreMem(rState, int16(stateRawArgs+8*i), asm.R2, asm.DWord))
		}
		return
	case CtxFEntry:
		// bpf_get_func_arg refuses an argument past the function's
		// (-EINVAL): it reads 0.
		for i := 0; i < min(b.p.RawArgs, NArgs); i++ {
			b.emit(storeImm64(rState, int16(stateRawArgs+8*i), 0))
			b.emit(asm.LoadMem(asm.R1, asm.R10, ctxSlot, asm.DWord))
			b.emit(asm.Mov.Imm(asm.R2, int32(i)))
			b.emit(asm.Mov.Reg(asm.R3, rState))
			b.emit(asm.Add.Imm(asm.R3, int32(stateRawArgs+8*i)))
			b.emit(asm.FnGetFuncArg.Call())
		}
		return
	}
	b.emit(asm.LoadMem(asm.R1, asm.R10, ctxSlot, asm.DWord))
	base := int16(0)
	if b.p.Context == CtxSyscallTP {
		base = 16
	}
	if b.p.Context == CtxTP {
		b.emit(asm.StoreMem(rState, stateRawArgs, asm.R1, asm.DWord))
		for i := 1; i < NArgs; i++ {
			b.emit(storeImm64(rState, int16(stateRawArgs+8*i), 0))
		}
		return
	}
	for i := 0; i < min(b.p.RawArgs, NArgs); i++ {
		b.emit(asm.LoadMem(asm.R2, asm.R1, base+int16(8*i), asm.DWord))
		b.emit(asm.StoreMem(rState, int16(stateRawArgs+8*i), asm.R2, asm.DWord))
	}
}

// site appends the evaluation of a site: its condition and arguments
// from the tracepoint's (StateRawArgs, read as arg0 …), the arguments
// left at StateSiteArgs and StateArgs; it goes to end if the probe does
// not fire.
func (b *builder) site(st Site, prefix, end string) error {
	copyArgs := func(from int16) {
		for i := 0; i < NArgs; i++ {
			b.emit(asm.LoadMem(asm.R1, rState, from+int16(8*i), asm.DWord))
			b.emit(asm.StoreMem(rState, int16(StateArgs+8*i), asm.R1, asm.DWord))
		}
	}
	copyArgs(stateRawArgs)
	if st.Cond != nil {
		if err := b.t.difo(st.Cond, prefix+"cond_", prefix+"cond", end); err != nil {
			return err
		}
		b.mark(prefix + "cond")
		b.emit(asm.LoadMem(asm.R1, rState, StateRet, asm.DWord))
		b.emit(asm.JEq.Imm(asm.R1, 0, end))
	}
	for i := 0; i < NArgs; i++ {
		if i >= len(st.Args) {
			b.emit(storeImm64(rState, int16(stateSiteArgs+8*i), 0))
			continue
		}
		l := fmt.Sprintf("%sarg%d", prefix, i)
		if err := b.t.difo(st.Args[i], l+"_", l, end); err != nil {
			return err
		}
		b.mark(l)
		b.emit(asm.LoadMem(asm.R1, rState, StateRet, asm.DWord))
		b.emit(asm.StoreMem(rState, int16(stateSiteArgs+8*i), asm.R1, asm.DWord))
	}
	copyArgs(stateSiteArgs)
	return nil
}

// difos returns an ECB's DIFOs.
func difos(e *enabling.ECB) []*dif.Object {
	var os []*dif.Object
	if e.Pred != nil {
		os = append(os, e.Pred)
	}
	for _, a := range e.Actions {
		if a.DIFO != nil {
			os = append(os, a.DIFO)
		}
	}
	return os
}

// lookup puts entry 0 of the named map in dst, or ends the program.
func (b *builder) lookup(dst asm.Register, name string) {
	b.t.mapPtr(asm.R1, name)
	b.emit(asm.Mov.Reg(asm.R2, asm.R10))
	b.emit(asm.Add.Imm(asm.R2, zeroSlot))
	b.t.helper(asm.FnMapLookupElem)
	b.emit(asm.JEq.Imm(asm.R0, 0, b.exit))
	b.emit(asm.Mov.Reg(dst, asm.R0))
}

// index leaves in R0 the index of the probe that fired.
func (b *builder) index() {
	b.emit(asm.LoadMem(asm.R1, asm.R10, ctxSlot, asm.DWord))
	switch b.p.Context {
	case CtxRun, CtxSysEnter:
		off := int16(0)
		if b.p.Context == CtxSysEnter {
			off = 8 // sys_enter(struct pt_regs *regs, long id)
		}
		b.emit(asm.LoadMem(asm.R0, asm.R1, off, asm.DWord))
	case CtxSysExit:
		// sys_exit(struct pt_regs *regs, long ret): the number is
		// the registers' orig_ax.
		b.emit(asm.LoadMem(asm.R3, asm.R1, 0, asm.DWord))
		b.emit(asm.Add.Imm(asm.R3, regOrigAX))
		b.emit(asm.Mov.Reg(asm.R1, asm.R10))
		b.emit(asm.Add.Imm(asm.R1, bufSlot))
		b.emit(asm.Mov.Imm(asm.R2, 8))
		b.emit(asm.FnProbeReadKernel.Call())
		b.emit(asm.LoadMem(asm.R0, asm.R10, bufSlot, asm.DWord))
	case CtxPerf, CtxFEntry, CtxFExit:
		b.emit(asm.Mov.Imm(asm.R0, 0))
	case CtxEntry, CtxReturn, CtxUSDT:
		b.emit(asm.FnGetAttachCookie.Call())
	}
}

// args fills StateArgs (and StateRegs where the context has registers)
// from the context, if a clause reads them: a probe program that counts
// does not pay for its probe's arguments.
func (b *builder) args() {
	if len(b.p.Sites) > 0 {
		for i := 0; i < NArgs; i++ {
			b.emit(asm.LoadMem(asm.R1, rState, int16(stateSiteArgs+8*i), asm.DWord))
			b.emit(asm.StoreMem(rState, int16(StateArgs+8*i), asm.R1, asm.DWord))
		}
		return
	}
	if !b.firing.args && b.p.Context != CtxRun {
		return
	}
	for i := 0; i < NArgs; i++ {
		b.emit(storeImm64(rState, int16(StateArgs+8*i), 0))
	}
	// args is emitted again after each clause that can fault: its
	// labels are numbered.
	b.nargs++
	lp := fmt.Sprintf("args%d_", b.nargs)
	set := func(arg int, src asm.Register) {
		b.emit(asm.StoreMem(rState, int16(StateArgs+8*arg), src, asm.DWord))
	}
	b.emit(asm.LoadMem(asm.R1, asm.R10, ctxSlot, asm.DWord))
	switch b.p.Context {
	case CtxRun:
		for i := 0; i < 6; i++ {
			b.emit(asm.LoadMem(asm.R2, asm.R1, int16(8*(i+1)), asm.DWord))
			set(i, asm.R2)
		}
	case CtxSysEnter, CtxSysExit:
		// The registers of the system call, copied once.
		b.emit(asm.LoadMem(asm.R3, asm.R1, 0, asm.DWord))
		b.emit(asm.Mov.Reg(asm.R1, rState))
		b.emit(asm.Add.Imm(asm.R1, stateRegs))
		b.emit(asm.Mov.Imm(asm.R2, ptRegsSize))
		b.emit(asm.FnProbeReadKernel.Call())
		if b.p.Context == CtxSysExit {
			// A call that fails returns -1, its error being errno,
			// as FreeBSD's systrace and illumos's pass it.
			b.emit(asm.LoadMem(asm.R1, asm.R10, ctxSlot, asm.DWord))
			b.emit(asm.LoadMem(asm.R2, asm.R1, 8, asm.DWord))
			b.emit(asm.JSGE.Imm(asm.R2, 0, lp+"ret"))
			b.emit(asm.JSLT.Imm(asm.R2, -4095, lp+"ret"))
			b.emit(asm.Mov.Imm(asm.R2, -1))
			b.mark(lp + "ret")
			set(0, asm.R2)
			set(1, asm.R2)
			return
		}
		for i, off := range []int16{regDI, regSI, regDX, regR10, regR8, regR9} {
			b.emit(asm.LoadMem(asm.R2, rState, stateRegs+off, asm.DWord))
			set(i, asm.R2)
		}
	case CtxPerf:
		// bpf_perf_event_data starts with the pt_regs of the
		// interrupted code: its pc is the kernel's or the user's,
		// as the code segment's privilege level says.
		b.emit(asm.LoadMem(asm.R2, asm.R1, regIP, asm.DWord))
		b.emit(asm.LoadMem(asm.R3, asm.R1, regCS, asm.DWord))
		b.emit(asm.And.Imm(asm.R3, 3))
		b.emit(asm.JNE.Imm(asm.R3, 0, lp+"user_pc"))
		set(0, asm.R2)
		b.emit(asm.Ja.Label(lp + "have_pc"))
		b.mark(lp + "user_pc")
		set(1, asm.R2)
		b.mark(lp + "have_pc")
		b.emit(asm.Mov.Imm(asm.R0, 0))
	case CtxEntry:
		for i, off := range []int16{regDI, regSI, regDX, regCX, regR8, regR9} {
			b.emit(asm.LoadMem(asm.R2, asm.R1, off, asm.DWord))
			set(i, asm.R2)
		}
	case CtxReturn:
		b.emit(asm.LoadMem(asm.R2, asm.R1, regAX, asm.DWord))
		set(1, asm.R2)
	case CtxUSDT:
		b.usdtArgs(lp)
	case CtxFEntry:
		// bpf_get_func_arg refuses an argument past the function's
		// (-EINVAL): it stays 0.
		for i := 0; i < NArgs; i++ {
			b.emit(asm.LoadMem(asm.R1, asm.R10, ctxSlot, asm.DWord))
			b.emit(asm.Mov.Imm(asm.R2, int32(i)))
			b.emit(asm.Mov.Reg(asm.R3, asm.R10))
			b.emit(asm.Add.Imm(asm.R3, bufSlot))
			b.emit(asm.FnGetFuncArg.Call())
			b.emit(asm.JNE.Imm(asm.R0, 0, fmt.Sprintf("%sfarg%d", lp, i)))
			b.emit(asm.LoadMem(asm.R2, asm.R10, bufSlot, asm.DWord))
			set(i, asm.R2)
			b.mark(fmt.Sprintf("%sfarg%d", lp, i))
		}
	case CtxFExit:
		b.emit(asm.Mov.Reg(asm.R2, asm.R10))
		b.emit(asm.Add.Imm(asm.R2, bufSlot))
		b.emit(asm.FnGetFuncRet.Call())
		b.emit(asm.JNE.Imm(asm.R0, 0, lp+"fret"))
		b.emit(asm.LoadMem(asm.R2, asm.R10, bufSlot, asm.DWord))
		set(1, asm.R2)
		b.mark(lp + "fret")
	}
}

// USDT argument kinds, as a USDT note gives an argument's place.
const (
	usdtNone  = 0 // no argument
	USDTReg   = 1 // a register: %edi
	USDTMem   = 2 // memory at a register and a displacement: -16(%rbp)
	USDTConst = 3 // a constant: $5
)

// A USDTArg is where one argument of a USDT probe point is, as its
// note's "size@operand" says it.
type USDTArg struct {
	Kind   uint8
	Size   uint8 // 1, 2, 4 or 8 bytes
	Signed bool
	Shift  uint8  // of the register's value: 8 for %ah … %dh
	Reg    uint32 // the register's offset in pt_regs
	Disp   int64  // the displacement, or the constant
}

// uargSize is the bytes of one USDTArg in MapUArgs' value.
const uargSize = 16

// NewUArgMap returns the MapUArgs of a USDT program: each point's
// arguments by index.
func NewUArgMap(points map[uint32][]USDTArg) (*ebpf.Map, error) {
	return NewUArgMapRoom(points, 0)
}

// NewUArgMapRoom is NewUArgMap with room for that many points more,
// which PutUArgs adds as probes are made while the tracing runs.
func NewUArgMapRoom(points map[uint32][]USDTArg, room uint32) (*ebpf.Map, error) {
	spec := &ebpf.MapSpec{Name: MapUArgs, Type: ebpf.Hash, KeySize: 4,
		ValueSize: uargSize * NArgs, MaxEntries: uint32(max(1, len(points)))}
	if room > 0 {
		spec.MaxEntries, spec.Flags = uint32(len(points))+room, noPrealloc
	}
	m, err := ebpf.NewMap(spec)
	if err != nil {
		return nil, fmt.Errorf("bpf: creating the USDT argument map: %w", err)
	}
	for idx, args := range points {
		if err := PutUArgs(m, idx, args); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

// PutUArgs puts the arguments of the USDT point at index idx in a
// MapUArgs.
func PutUArgs(m *ebpf.Map, idx uint32, args []USDTArg) error {
	if len(args) > NArgs {
		return fmt.Errorf("bpf: a USDT point of %d arguments, over %d", len(args), NArgs)
	}
	v := make([]byte, uargSize*NArgs)
	for i, a := range args {
		e := v[uargSize*i:]
		e[0], e[1], e[3] = a.Kind, a.Size, a.Shift
		if a.Signed {
			e[2] = 1
		}
		binary.NativeEndian.PutUint32(e[4:], a.Reg)
		binary.NativeEndian.PutUint64(e[8:], uint64(a.Disp))
	}
	if err := m.Put(idx, v); err != nil {
		return fmt.Errorf("bpf: filling the USDT argument map: %w", err)
	}
	return nil
}

// usdtArgs fills StateArgs from the registers and memory MapUArgs names
// for the point that fired; lp prefixes its labels.
func (b *builder) usdtArgs(lp string) {
	b.emit(asm.Mov.Reg(asm.R1, rState))
	b.emit(asm.Add.Imm(asm.R1, stateRegs))
	b.emit(asm.Mov.Imm(asm.R2, ptRegsSize))
	b.emit(asm.LoadMem(asm.R3, asm.R10, ctxSlot, asm.DWord))
	b.emit(asm.FnProbeReadKernel.Call())
	b.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(MapUArgs))
	b.emit(asm.Mov.Reg(asm.R2, asm.R10))
	b.emit(asm.Add.Imm(asm.R2, idxSlot))
	b.t.helper(asm.FnMapLookupElem)
	b.emit(asm.JEq.Imm(asm.R0, 0, lp+"uargs_done"))
	b.emit(asm.StoreMem(asm.R10, uargPtr, asm.R0, asm.DWord))
	for i := 0; i < NArgs; i++ {
		l := func(s string) string { return fmt.Sprintf("%suarg%d_%s", lp, i, s) }
		e := int16(uargSize * i)
		ptr := func(dst asm.Register) { b.emit(asm.LoadMem(dst, asm.R10, uargPtr, asm.DWord)) }
		ptr(asm.R1)
		b.emit(asm.LoadMem(asm.R2, asm.R1, e, asm.Byte))
		b.emit(asm.JEq.Imm(asm.R2, usdtNone, l("next")))
		b.emit(asm.LoadMem(asm.R4, asm.R1, e+8, asm.DWord))
		b.emit(asm.JEq.Imm(asm.R2, USDTConst, l("ext")))
		// The register, from the copy of pt_regs.
		b.emit(asm.LoadMem(asm.R3, asm.R1, e+4, asm.Word))
		b.emit(asm.JGT.Imm(asm.R3, ptRegsSize-8, l("next")))
		b.emit(asm.Add.Reg(asm.R3, rState))
		b.emit(asm.LoadMem(asm.R3, asm.R3, stateRegs, asm.DWord))
		b.emit(asm.JEq.Imm(asm.R2, USDTMem, l("mem")))
		b.emit(asm.LoadMem(asm.R5, asm.R1, e+3, asm.Byte))
		b.emit(asm.And.Imm(asm.R5, 63))
		b.emit(asm.RSh.Reg(asm.R3, asm.R5))
		b.emit(asm.Mov.Reg(asm.R4, asm.R3))
		b.emit(asm.Ja.Label(l("ext")))
		b.mark(l("mem"))
		b.emit(asm.Add.Reg(asm.R3, asm.R4))
		b.emit(storeImm64(asm.R10, bufSlot, 0))
		b.emit(asm.LoadMem(asm.R2, asm.R1, e+1, asm.Byte))
		b.emit(asm.And.Imm(asm.R2, 15))
		b.emit(asm.JEq.Imm(asm.R2, 0, l("next")))
		b.emit(asm.JGT.Imm(asm.R2, 8, l("next")))
		b.emit(asm.Mov.Reg(asm.R1, asm.R10))
		b.emit(asm.Add.Imm(asm.R1, bufSlot))
		b.emit(asm.FnProbeReadUser.Call())
		b.emit(asm.LoadMem(asm.R4, asm.R10, bufSlot, asm.DWord))
		ptr(asm.R1)
		b.mark(l("ext"))
		// Extended from its size, with its sign if signed.
		b.emit(asm.LoadMem(asm.R2, asm.R1, e+1, asm.Byte))
		b.emit(asm.And.Imm(asm.R2, 15))
		b.emit(asm.LSh.Imm(asm.R2, 3))
		b.emit(asm.Mov.Imm(asm.R3, 64))
		b.emit(asm.Sub.Reg(asm.R3, asm.R2))
		b.emit(asm.And.Imm(asm.R3, 63))
		b.emit(asm.LSh.Reg(asm.R4, asm.R3))
		b.emit(asm.LoadMem(asm.R2, asm.R1, e+2, asm.Byte))
		b.emit(asm.JEq.Imm(asm.R2, 0, l("unsigned")))
		b.emit(asm.ArSh.Reg(asm.R4, asm.R3))
		b.emit(asm.Ja.Label(l("set")))
		b.mark(l("unsigned"))
		b.emit(asm.RSh.Reg(asm.R4, asm.R3))
		b.mark(l("set"))
		b.emit(asm.StoreMem(rState, int16(StateArgs+8*i), asm.R4, asm.DWord))
		b.mark(l("next"))
		b.emit(asm.Mov.Imm(asm.R0, 0))
	}
	b.mark(lp + "uargs_done")
	b.emit(asm.Mov.Imm(asm.R0, 0))
}

// resetFiring takes the firing's time if a clause needs it, zeroes the
// clause-locals and frees the scratch memory.
func (b *builder) resetFiring() {
	if b.firing.time {
		b.emit(asm.FnKtimeGetNs.Call())
		b.emit(asm.StoreMem(rState, stateNow, asm.R0, asm.DWord))
	}
	b.emit(storeImm64(rState, stateScratch, 0))
	b.emit(storeImm64(rState, stateStrtok, 0))
	if !b.t.uses.locals {
		return
	}
	b.emit(asm.Mov.Reg(asm.R1, rLocals))
	b.zero(int32(b.l.localsSize()))
}

// zeroRec zeroes size bytes of the record buffer from off: by stores
// when they are few, else by a copy from MapZero.
func (b *builder) zeroRec(off, size int32) {
	b.emit(asm.LoadMem(asm.R1, asm.R10, recPtr, asm.DWord))
	b.emit(asm.Add.Imm(asm.R1, off))
	if size <= maxZeroStores*8 {
		off = 0
		for ; size >= 8; off, size = off+8, size-8 {
			b.emit(storeImm64(asm.R1, int16(off), 0))
		}
		for ; size > 0; off, size = off+1, size-1 {
			b.emit(asm.StoreImm(asm.R1, int16(off), 0, asm.Byte))
		}
		return
	}
	b.zero(size)
}

// recordBytes returns the bytes of record i of ep that a firing must
// write: all of them, but of a record of an aggregation's key that its
// map keeps packed, those the map keeps (aggKey.segs).
func (b *builder) recordBytes(ep *record.EProbe, i int) uint32 {
	ra := &ep.Actions[i]
	j := i
	for j < len(ep.Actions) && ep.Actions[j].InTuple {
		j++
	}
	if j == i || j == len(ep.Actions) || !ep.Actions[j].IsAgg() {
		return ra.Size
	}
	agg := &ep.Actions[j]
	if k := b.l.aggKeys[agg.AggID]; k != nil && k.segs != nil {
		for _, s := range k.segs[1:] {
			if s.from == ra.Offset-agg.AggBase {
				return s.size
			}
		}
	}
	return ra.Size
}

// maxZeroStores is the most 8-byte stores zeroRec makes rather than a
// copy: a copy costs a lookup and a helper call.
const maxZeroStores = 64

// isExecname reports whether o is the expression execname alone.
func isExecname(o *dif.Object) bool {
	v, ok := builtinAlone(o)
	return ok && v == dif.VarExecname
}

// builtinAlone returns the variable o loads and returns, if that is all
// it does.
func builtinAlone(o *dif.Object) (uint16, bool) {
	if o == nil || len(o.Code) != 2 || o.Code[0].Op() != dif.LDGS ||
		o.Code[1].Op() != dif.RET || o.Code[1].RD() != o.Code[0].RD() {
		return 0, false
	}
	return o.Code[0].Var(), true
}

// zero copies size bytes of zeroes from MapZero to R1.
func (b *builder) zero(size int32) {
	b.emit(asm.StoreMem(asm.R10, bufSlot, asm.R1, asm.DWord))
	b.lookup(asm.R3, mapZero)
	b.emit(asm.LoadMem(asm.R1, asm.R10, bufSlot, asm.DWord))
	b.emit(asm.Mov.Imm(asm.R2, size))
	b.emit(asm.FnProbeReadKernel.Call())
}

// clause appends the code of clause j: it runs when the probe's EPID
// for it is not 0.
func (b *builder) clause(j int) error {
	c := b.p.Clauses[j]
	next := fmt.Sprintf("%sc%d_end", b.sp, j)
	fault := fmt.Sprintf("%sc%d_fault", b.sp, j)
	// The clause's EPID, after the probe's ID; beyond a load's 16-bit
	// offset, from the entry's address moved on.
	off := 4 + 4*j
	b.emit(asm.LoadMem(asm.R1, asm.R10, probePtr, asm.DWord))
	if off > math.MaxInt16 {
		b.emit(asm.Add.Imm(asm.R1, int32(off)))
		off = 0
	}
	b.emit(asm.LoadMem(asm.R1, asm.R1, int16(off), asm.Word))
	b.emit(asm.JEq.Imm(asm.R1, 0, next))
	b.emit(asm.StoreMem(rState, StateEPID, asm.R1, asm.DWord))
	if err := b.body(c, fmt.Sprintf("%sc%d_", b.sp, j), next, fault, false); err != nil {
		return err
	}
	if b.t.faults[fault] {
		b.mark(fault)
		if err := b.faulted(j); err != nil {
			return err
		}
	}
	b.mark(next)
	b.emit(asm.Mov.Imm(asm.R0, 0))
	return nil
}

// body appends a clause's predicate and actions; its EPID is at
// StateEPID. It ends at next, or at fault after a fault.
func (b *builder) body(c Clause, prefix, next, fault string, inError bool) error {
	t := b.t
	e, ep := c.ECB, c.EP
	b.emit(storeImm64(asm.R10, actSlot, 0))
	if e.Pred != nil {
		if err := t.difo(e.Pred, prefix+"p_", prefix+"pred", fault); err != nil {
			return err
		}
		b.mark(prefix + "pred")
		b.emit(asm.LoadMem(asm.R1, rState, StateRet, asm.DWord))
		b.emit(asm.JEq.Imm(asm.R1, 0, next))
	}
	if b.firing.spec {
		// Not speculated unless the clause says so.
		b.emit(asm.LoadMem(asm.R1, asm.R10, recPtr, asm.DWord))
		b.emit(asm.StoreImm(asm.R1, 4, 0, asm.Word))
	}
	if ep.Size > 0 {
		if b.firing.time {
			t.now()
		} else {
			// An ERROR clause, in a firing that took no time.
			b.emit(asm.FnKtimeGetNs.Call())
		}
		b.emit(asm.LoadMem(asm.R1, asm.R10, recPtr, asm.DWord))
		b.emit(asm.LoadMem(asm.R2, rState, StateEPID, asm.DWord))
		b.emit(asm.StoreMem(asm.R1, RecPrefix, asm.R2, asm.Word))
		b.emit(asm.Mov.Reg(asm.R2, asm.R0))
		b.emit(asm.RSh.Imm(asm.R2, 32))
		b.emit(asm.StoreMem(asm.R1, RecPrefix+4, asm.R2, asm.Word))
		b.emit(asm.StoreMem(asm.R1, RecPrefix+8, asm.R0, asm.Word))
	}
	exits := false
	for i := range e.Actions {
		a, ra := &e.Actions[i], &ep.Actions[i]
		b.emit(storeImm64(asm.R10, actSlot, int32(i+1)))
		lp := fmt.Sprintf("%sa%d_", prefix, i)
		if ra.Type.Kind == dif.TypeString && ra.Size >= commLen && isExecname(a.DIFO) {
			// trace(execname), @[execname]: the task's name straight
			// into its record, with no copy in scratch.
			if n := b.recordBytes(ep, i); n > commLen {
				b.zeroRec(int32(RecPrefix+ra.Offset+commLen), int32(n-commLen))
			}
			b.emit(asm.LoadMem(asm.R1, asm.R10, recPtr, asm.DWord))
			b.emit(asm.Add.Imm(asm.R1, int32(RecPrefix+ra.Offset)))
			b.emit(asm.Mov.Imm(asm.R2, commLen))
			b.emit(asm.FnGetCurrentComm.Call())
			continue
		}
		if a.DIFO != nil {
			if err := t.difo(a.DIFO, lp, lp+"ret", fault); err != nil {
				return err
			}
			b.mark(lp + "ret")
		}
		switch {
		case a.Kind.IsAgg():
			if err := b.aggregate(ep, i, lp); err != nil {
				return err
			}
			continue
		case a.Kind.IsSpeculative():
			b.specAction(ra, lp)
			continue
		case a.Kind == dof.ActExit:
			exits = true
		case a.Kind == dof.ActStop, a.Kind == dof.ActRaise:
			sig := int32(19) // SIGSTOP
			if a.Kind == dof.ActRaise {
				b.emit(asm.LoadMem(asm.R1, rState, StateRet, asm.DWord))
			} else {
				b.emit(asm.Mov.Imm(asm.R1, sig))
			}
			b.emit(asm.FnSendSignal.Call())
		case a.Kind == dof.ActChill:
			b.chill(lp)
			continue
		case a.Kind == dof.ActBreakpoint, a.Kind == dof.ActPanic:
			return fmt.Errorf("bpf: %v cannot be done by BPF programs", a.Kind)
		}
		if ra.InTuple && ra.Size == 0 {
			// A quantization's weight, not part of its key.
			b.emit(asm.LoadMem(asm.R1, rState, StateRet, asm.DWord))
			b.emit(asm.StoreMem(asm.R10, incrSlot, asm.R1, asm.DWord))
			continue
		}
		if ra.Size == 0 {
			continue
		}
		if err := b.store(ra, lp); err != nil {
			return err
		}
	}
	if exits && !inError && !b.p.End {
		// exit() drains the tracing from one CPU only, as dtrace's
		// compare-and-swap of its activity: a firing that finds
		// another CPU's exit() has come first leaves no record.
		b.lookup(asm.R1, mapCtl)
		b.emit(asm.LoadMem(asm.R0, asm.R1, ctlActivity, asm.DWord))
		b.emit(asm.JEq.Imm(asm.R0, ActivityDraining, b.exit))
		b.emit(asm.Mov.Imm(asm.R2, ActivityDraining))
		b.emit(atomic(asm.CmpXchg, asm.R1, asm.R2, ctlActivity))
		b.emit(asm.JEq.Imm(asm.R0, ActivityDraining, b.exit))
	}
	if ep.Size > 0 {
		if speculates(e) {
			b.specCheck(prefix+"out", prefix)
		}
		if b.l.fill != 0 {
			b.reserve(ep, prefix)
		}
		b.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(mapRing))
		b.emit(asm.LoadMem(asm.R2, asm.R10, recPtr, asm.DWord))
		b.emit(asm.Mov.Imm(asm.R3, int32(RecPrefix+ep.Size)))
		b.emit(asm.Mov.Imm(asm.R4, 0))
		b.emit(asm.FnRingbufOutput.Call())
		b.emit(asm.JEq.Imm(asm.R0, 0, prefix+"out"))
		b.count(stateBufDrops)
		b.mark(prefix + "out")
	}
	if exits && !inError {
		b.lookup(asm.R1, mapCtl)
		b.emit(storeImm64(asm.R1, ctlActivity, ActivityDraining))
		if !b.p.End {
			// The tracing drains: the firing's other clauses do
			// not run, as dtrace_probe stops at a draining state.
			b.emit(asm.Ja.Label(b.exit))
			return nil
		}
	}
	b.emit(asm.Ja.Label(next))
	return nil
}

// reserve takes a firing's room in its CPU's buffer under the fill
// policy, as dtrace_buffer_reserve does: the buffer's offset rounds up
// to the firing's alignment, and a firing that does not fit fills the
// buffer; it and every later firing are dropped, except END's, which
// have room kept for them. A dropped firing jumps to prefix+"out".
func (b *builder) reserve(ep *record.EProbe, prefix string) {
	limit := b.l.fill
	if !b.p.End {
		limit -= min(limit, b.l.reserve)
		b.emit(asm.LoadMem(asm.R1, rState, stateFilled, asm.DWord))
		b.emit(asm.JNE.Imm(asm.R1, 0, prefix+"full"))
	}
	align := int32(ep.Alignment)
	b.emit(asm.LoadMem(asm.R1, rState, stateBufUsed, asm.DWord))
	b.emit(asm.Add.Imm(asm.R1, align-1))
	b.emit(asm.And.Imm(asm.R1, -align))
	b.emit(asm.Add.Imm(asm.R1, int32(ep.Needed)))
	b.emit(asm.JGT.Imm(asm.R1, int32(limit), prefix+"full"))
	b.emit(asm.StoreMem(rState, stateBufUsed, asm.R1, asm.DWord))
	b.emit(asm.Ja.Label(prefix + "fits"))
	b.mark(prefix + "full")
	b.emit(storeImm64(rState, stateFilled, 1))
	b.count(stateBufDrops)
	b.emit(asm.Ja.Label(prefix + "out"))
	b.mark(prefix + "fits")
}

// speculates reports whether an ECB speculates, commits or discards.
func speculates(e *enabling.ECB) bool {
	for _, a := range e.Actions {
		if a.Kind.IsSpeculative() {
			return true
		}
	}
	return false
}

// count adds 1 to the per-CPU counter at off of the state map.
func (b *builder) count(off int16) {
	b.emit(asm.LoadMem(asm.R1, rState, off, asm.DWord))
	b.emit(asm.Add.Imm(asm.R1, 1))
	b.emit(asm.StoreMem(rState, off, asm.R1, asm.DWord))
}

// store writes the value of the action just run (StateRet) into its
// record.
// badRef faults BADADDR at the address at StateRet, at no DIF offset:
// the action's value could not be read into its record; the code goes
// on at lp+"copied".
func (b *builder) badRef(lp string) {
	b.emit(asm.LoadMem(asm.R1, rState, StateRet, asm.DWord))
	b.emit(asm.StoreMem(rState, stateFaultAddr, asm.R1, asm.DWord))
	b.emit(storeImm64(rState, stateFault, faultBadAddr))
	b.emit(storeImm64(rState, stateFaultPC, -1))
	b.emit(asm.Ja.Label(b.t.fault))
	b.t.faults[b.t.fault] = true
	b.mark(lp + "copied")
}

func (b *builder) store(ra *record.Action, lp string) error {
	off := int32(RecPrefix + ra.Offset)
	recAt := func(dst asm.Register, extra int32) {
		b.emit(asm.LoadMem(dst, asm.R10, recPtr, asm.DWord))
		b.emit(asm.Add.Imm(dst, off+extra))
	}
	switch ra.Action {
	case dof.ActStack, dof.ActUStack, dof.ActJStack:
		b.zeroRec(off, int32(ra.Size))
		skip := int32(0)
		flags := int32(0)
		if ra.Action != dof.ActStack {
			// The pid first, then the frames.
			b.emit(asm.FnGetCurrentPidTgid.Call())
			b.emit(asm.RSh.Imm(asm.R0, 32))
			recAt(asm.R1, 0)
			b.emit(asm.StoreMem(asm.R1, 0, asm.R0, asm.DWord))
			skip, flags = 8, 1<<8 // BPF_F_USER_STACK
		}
		if ra.Action == dof.ActStack {
			flags |= b.p.Context.artificialFrames()
		}
		b.emit(asm.LoadMem(asm.R1, asm.R10, ctxSlot, asm.DWord))
		recAt(asm.R2, skip)
		b.emit(asm.Mov.Imm(asm.R3, int32(ra.Size)-skip))
		b.emit(asm.Mov.Imm(asm.R4, flags))
		b.emit(asm.FnGetStack.Call())
		if ra.Action == dof.ActStack && b.p.Context == CtxFEntry {
			// The first frame is the function's, at the trampoline's
			// return address: past the 5-byte call that replaced the
			// ftrace NOP. A kprobe there gives the address past the
			// one-byte int3 it emulates: the frame is made that.
			b.emit(asm.JSLT.Imm(asm.R0, 8, lp+"frame0"))
			recAt(asm.R1, 0)
			b.emit(asm.LoadMem(asm.R2, asm.R1, 0, asm.DWord))
			b.emit(asm.Sub.Imm(asm.R2, 4))
			b.emit(asm.StoreMem(asm.R1, 0, asm.R2, asm.DWord))
			b.mark(lp + "frame0")
			b.emit(asm.Mov.Imm(asm.R0, 0))
		}
		return nil
	case dof.ActUSym, dof.ActUMod, dof.ActUAddr:
		b.emit(asm.FnGetCurrentPidTgid.Call())
		b.emit(asm.RSh.Imm(asm.R0, 32))
		recAt(asm.R1, 0)
		b.emit(asm.StoreMem(asm.R1, 0, asm.R0, asm.DWord))
		b.emit(asm.LoadMem(asm.R2, rState, StateRet, asm.DWord))
		b.emit(asm.StoreMem(asm.R1, 8, asm.R2, asm.DWord))
		return nil
	}
	switch {
	case ra.Type.Kind == dif.TypeString:
		// Up to the NUL, then zeroes, as dtrace_store_by_ref; a
		// string of ra.Size bytes or more fills them all, its NUL
		// written after them, where the next record goes (the
		// buffer has a byte more than the largest firing's).
		b.zeroRec(off, int32(ra.Size))
		recAt(asm.R1, 0)
		b.emit(asm.Mov.Imm(asm.R2, int32(ra.Size)+1))
		b.emit(asm.LoadMem(asm.R3, rState, StateRet, asm.DWord))
		read := asm.FnProbeReadKernelStr
		if ra.Type.Flags&dif.TFByURef != 0 {
			// A string in the process's memory (a userland
			// pointer's, such as a local at a pid probe), copied in
			// as dtrace_probe copies a DIF_TF_BYUREF string.
			read = asm.FnProbeReadUserStr
		}
		b.emit(read.Call())
		// A string it cannot read (NULL) faults, as dtrace_load8.
		b.emit(asm.JSGE.Imm(asm.R0, 0, lp+"copied"))
		b.badRef(lp)
	case ra.Type.ByRef():
		read := asm.FnProbeReadKernel
		if ra.Type.Flags&dif.TFByURef != 0 {
			read = asm.FnProbeReadUser
		}
		recAt(asm.R1, 0)
		b.emit(asm.Mov.Imm(asm.R2, int32(ra.Size)))
		b.emit(asm.LoadMem(asm.R3, rState, StateRet, asm.DWord))
		b.emit(read.Call())
		b.emit(asm.JEq.Imm(asm.R0, 0, lp+"copied"))
		b.badRef(lp)
	default:
		size := map[uint32]asm.Size{1: asm.Byte, 2: asm.Half, 4: asm.Word, 8: asm.DWord}[ra.Size]
		if size == asm.InvalidSize {
			return fmt.Errorf("bpf: a %d-byte value returned by value", ra.Size)
		}
		b.emit(asm.LoadMem(asm.R2, rState, StateRet, asm.DWord))
		recAt(asm.R1, 0)
		b.emit(asm.StoreMem(asm.R1, 0, asm.R2, size))
	}
	return nil
}

// faulted appends what a fault in clause j does: the ERROR probe's
// clauses run with dtrace_probe_error's arguments (the faulting EPID,
// the action, the DIF offset, the fault and its address), then the
// probe's arguments are restored for the clauses after j.
func (b *builder) faulted(j int) error {
	set := func(arg int, src asm.Register) {
		b.emit(asm.StoreMem(rState, int16(StateArgs+8*arg), src, asm.DWord))
	}
	b.emit(storeImm64(rState, StateArgs, 0))
	b.emit(asm.LoadMem(asm.R1, rState, StateEPID, asm.DWord))
	set(1, asm.R1)
	b.emit(asm.LoadMem(asm.R1, asm.R10, actSlot, asm.DWord))
	set(2, asm.R1)
	// The DIF offset: the instruction's index × 4, or -1 when the
	// fault was no instruction's.
	b.emit(asm.LoadMem(asm.R1, rState, stateFaultPC, asm.DWord))
	b.emit(asm.JSLT.Imm(asm.R1, 0, fmt.Sprintf("%sc%d_nooff", b.sp, j)))
	b.emit(asm.LSh.Imm(asm.R1, 2))
	b.mark(fmt.Sprintf("%sc%d_nooff", b.sp, j))
	set(3, asm.R1)
	b.emit(asm.LoadMem(asm.R1, rState, stateFault, asm.DWord))
	set(4, asm.R1)
	b.emit(asm.LoadMem(asm.R1, rState, stateFaultAddr, asm.DWord))
	set(5, asm.R1)
	for k, c := range b.p.Error {
		prefix := fmt.Sprintf("%sc%de%d_", b.sp, j, k)
		next := prefix + "end"
		b.emit(storeImm64(rState, StateEPID, int32(c.EP.EPID)))
		// A fault in an ERROR clause is not reported.
		if err := b.body(c, prefix, next, next, true); err != nil {
			return err
		}
		b.mark(next)
		b.emit(asm.Mov.Imm(asm.R0, 0))
	}
	b.args()
	return nil
}

// MinMaxWord is how an aggregation map keeps min()'s and max()'s value
// v: an unsigned number that grows with max's values and shrinks with
// min's, so that both keep the largest, and whose zero is the
// function's identity (INT64_MIN for max, INT64_MAX for min). A
// per-CPU hash entry made on one CPU is zero on the others: they then
// hold the identity, not a value. MinMaxValue undoes it.
func MinMaxWord(fn dof.ActKind, v int64) uint64 {
	u := uint64(v) ^ 1<<63
	if fn == dof.AggMin {
		u = ^u
	}
	return u
}

// MinMaxValue returns the value MinMaxWord kept as w.
func MinMaxValue(fn dof.ActKind, w uint64) int64 {
	if fn == dof.AggMin {
		w = ^w
	}
	return int64(w ^ 1<<63)
}

// aggMapName is the name of the i'th aggregation map.
func aggMapName(i int) string { return fmt.Sprintf("kd_agg%d", i) }

// aggregate appends aggregating action i of ep, as dtrace_aggregate
// runs it: the key (the aggregation's ID, then the tuple's records,
// written beyond the firing's records) finds this CPU's entry in the
// aggregation's map, made with the function's initial data if missing;
// the value just computed (StateRet) is added with the function's rule.
// A full map counts an aggregation drop.
func (b *builder) aggregate(ep *record.EProbe, i int, lp string) error {
	ra := &ep.Actions[i]
	base := int32(RecPrefix + ra.AggBase)
	data := int32(RecPrefix + ra.Offset)
	name := aggMapName(b.l.aggs[ra.AggID])
	b.emit(asm.LoadMem(asm.R1, asm.R10, recPtr, asm.DWord))
	b.emit(asm.Add.Imm(asm.R1, base))
	// The key's ID may cover the end of the firing's last record (as
	// dtrace_ecb_resize places it, which copies the key elsewhere): the
	// bytes are put back once the aggregation is done.
	b.emit(asm.LoadMem(asm.R2, asm.R1, 0, asm.Word))
	b.emit(asm.StoreMem(asm.R10, aggSaved, asm.R2, asm.Word))
	b.emit(asm.StoreImm(asm.R1, 0, int64(ra.AggID), asm.Word))
	if k := b.l.aggKeys[ra.AggID]; k != nil && k.segs != nil {
		b.packKey(k)
	}
	// The map is the one in the slot as the aggregation starts: the
	// consumer swaps it for another at each snapshot, and reads it once
	// the programs that found it have ended.
	b.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(name))
	b.emit(asm.Mov.Reg(asm.R2, asm.R10))
	b.emit(asm.Add.Imm(asm.R2, zeroSlot))
	b.t.helper(asm.FnMapLookupElem)
	b.emit(asm.JEq.Imm(asm.R0, 0, lp+"agg_drop"))
	b.emit(asm.StoreMem(asm.R10, aggPtr, asm.R0, asm.DWord))
	find := func(found string) {
		b.emit(asm.LoadMem(asm.R1, asm.R10, aggPtr, asm.DWord))
		b.emit(asm.LoadMem(asm.R2, asm.R10, recPtr, asm.DWord))
		b.emit(asm.Add.Imm(asm.R2, base))
		b.t.helper(asm.FnMapLookupElem)
		b.emit(asm.JNE.Imm(asm.R0, 0, found))
	}
	find(lp + "found")
	// A new entry: its initial data, built where the kernel builds it.
	b.zeroRec(data, int32(ra.Size+AggTouched))
	if ra.Action == dof.AggLQuantize || ra.Action == dof.AggLLQuantize {
		b.emit(asm.LoadImm(asm.R2, int64(ra.Arg), asm.DWord))
		b.emit(asm.LoadMem(asm.R1, asm.R10, recPtr, asm.DWord))
		b.emit(asm.Add.Imm(asm.R1, data))
		b.emit(asm.StoreMem(asm.R1, 0, asm.R2, asm.DWord))
	}
	b.emit(asm.LoadMem(asm.R1, asm.R10, aggPtr, asm.DWord))
	b.emit(asm.LoadMem(asm.R2, asm.R10, recPtr, asm.DWord))
	b.emit(asm.Mov.Reg(asm.R3, asm.R2))
	b.emit(asm.Add.Imm(asm.R2, base))
	b.emit(asm.Add.Imm(asm.R3, data))
	b.emit(asm.Mov.Imm(asm.R4, 1)) // BPF_NOEXIST: another firing may have made it
	b.emit(asm.FnMapUpdateElem.Call())
	find(lp + "found")
	b.mark(lp + "agg_drop")
	b.count(stateAggDrops)
	b.emit(asm.Ja.Label(lp + "agg_done"))
	b.mark(lp + "found")
	if ra.Size <= math.MaxInt16 {
		b.emit(storeImm64(asm.R0, int16(ra.Size), 1))
	} else {
		// Beyond a store's 16-bit offset.
		b.emit(asm.Mov.Reg(asm.R1, asm.R0))
		b.emit(asm.Add.Imm(asm.R1, int32(ra.Size)))
		b.emit(storeImm64(asm.R1, 0, 1))
	}
	// R0: the entry's data; R1: the value; R2: the weight.
	b.emit(asm.LoadMem(asm.R1, rState, StateRet, asm.DWord))
	if t := &ep.Actions[i-1]; t.InTuple && t.Size == 0 {
		b.emit(asm.LoadMem(asm.R2, asm.R10, incrSlot, asm.DWord))
	} else {
		b.emit(asm.Mov.Imm(asm.R2, 1))
	}
	add := func(word int16, src asm.Register) {
		b.emit(asm.LoadMem(asm.R3, asm.R0, 8*word, asm.DWord))
		b.emit(asm.Add.Reg(asm.R3, src))
		b.emit(asm.StoreMem(asm.R0, 8*word, asm.R3, asm.DWord))
	}
	one := func(word int16) {
		b.emit(asm.LoadMem(asm.R3, asm.R0, 8*word, asm.DWord))
		b.emit(asm.Add.Imm(asm.R3, 1))
		b.emit(asm.StoreMem(asm.R0, 8*word, asm.R3, asm.DWord))
	}
	switch ra.Action {
	case dof.AggCount:
		one(0)
	case dof.AggSum:
		add(0, asm.R1)
	case dof.AggMin, dof.AggMax:
		// Kept as MinMaxWord, whose zero is the function's identity.
		b.emit(asm.LoadImm(asm.R3, math.MinInt64, asm.DWord))
		b.emit(asm.Xor.Reg(asm.R1, asm.R3))
		if ra.Action == dof.AggMin {
			b.emit(asm.Xor.Imm(asm.R1, -1))
		}
		b.emit(asm.LoadMem(asm.R3, asm.R0, 0, asm.DWord))
		b.emit(asm.JLE.Reg(asm.R1, asm.R3, lp+"agg_done"))
		b.emit(asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord))
	case dof.AggAvg:
		one(0)
		add(1, asm.R1)
	case dof.AggStddev:
		one(0)
		add(1, asm.R1)
		b.square128(lp)
	case dof.AggQuantize:
		b.quantizeBucket(lp)
		b.addBucket(0, false)
	case dof.AggLQuantize:
		shared := b.l.shapes[b.l.aggs[ra.AggID]].shared()
		base, step, levels := dof.LQuantizeParams(ra.Arg)
		// On the value's low 32 bits, as dtrace_aggregate_lquantize.
		b.emit(asm.LSh.Imm(asm.R1, 32))
		b.emit(asm.ArSh.Imm(asm.R1, 32))
		b.emit(asm.Mov.Imm(asm.R3, 0))
		b.emit(asm.JSLT.Imm(asm.R1, base, lp+"lq"))
		b.emit(asm.Sub.Imm(asm.R1, base))
		b.emit(asm.Div.Imm(asm.R1, int32(step)))
		b.emit(asm.Mov.Imm(asm.R3, int32(levels)+1))
		b.emit(asm.JGE.Imm(asm.R1, int32(levels), lp+"lq"))
		b.emit(asm.Mov.Reg(asm.R3, asm.R1))
		b.emit(asm.Add.Imm(asm.R3, 1))
		b.mark(lp + "lq")
		b.addBucket(1, shared)
	case dof.AggLLQuantize:
		shared := b.l.shapes[b.l.aggs[ra.AggID]].shared()
		if err := b.llquantizeBucket(ra.Arg, int32(ra.Size/8-2), lp); err != nil {
			return err
		}
		b.addBucket(1, shared)
	default:
		return fmt.Errorf("bpf: aggregating function %v not translated", ra.Action)
	}
	b.mark(lp + "agg_done")
	b.emit(asm.LoadMem(asm.R1, asm.R10, recPtr, asm.DWord))
	b.emit(asm.Add.Imm(asm.R1, base))
	b.emit(asm.LoadMem(asm.R2, asm.R10, aggSaved, asm.Word))
	b.emit(asm.StoreMem(asm.R1, 0, asm.R2, asm.Word))
	b.emit(asm.Mov.Imm(asm.R0, 0))
	return nil
}

// addBucket adds the weight (R2) to word R3+skip of the entry's data
// (R0), atomically for an entry the CPUs share. The bucket is bounded
// for the verifier by the data's size.
func (b *builder) addBucket(skip int32, shared bool) {
	b.emit(asm.Add.Imm(asm.R3, skip))
	b.emit(asm.LSh.Imm(asm.R3, 3))
	b.emit(asm.Add.Reg(asm.R0, asm.R3))
	if shared {
		b.emit(atomic(asm.AddAtomic, asm.R0, asm.R2, 0))
		return
	}
	b.emit(asm.LoadMem(asm.R3, asm.R0, 0, asm.DWord))
	b.emit(asm.Add.Reg(asm.R3, asm.R2))
	b.emit(asm.StoreMem(asm.R0, 0, asm.R3, asm.DWord))
}

// quantizeBucket leaves in R3 the bucket of quantize() that counts R1:
// 63 for 0, 64 + log2(v) above, 62 - min(62, log2(-v)) below, as
// record.QuantizeBucket. R4 and R5 are clobbered.
func (b *builder) quantizeBucket(lp string) {
	b.emit(asm.Mov.Imm(asm.R3, record.QuantizeZeroBucket))
	b.emit(asm.JEq.Imm(asm.R1, 0, lp+"q_done"))
	b.emit(asm.Mov.Reg(asm.R4, asm.R1))
	b.emit(asm.JSGT.Imm(asm.R1, 0, lp+"q_log"))
	b.emit(asm.Neg.Imm(asm.R4, 0))
	b.mark(lp + "q_log")
	// R3 = floor(log2(R4)), R4 unsigned and not 0.
	b.emit(asm.Mov.Imm(asm.R3, 0))
	for _, sh := range []int32{32, 16, 8, 4, 2, 1} {
		l := fmt.Sprintf("%sq_%d", lp, sh)
		b.emit(asm.Mov.Reg(asm.R5, asm.R4))
		b.emit(asm.RSh.Imm(asm.R5, sh))
		b.emit(asm.JEq.Imm(asm.R5, 0, l))
		b.emit(asm.Mov.Reg(asm.R4, asm.R5))
		b.emit(asm.Add.Imm(asm.R3, sh))
		b.mark(l)
	}
	b.emit(asm.JSLT.Imm(asm.R1, 0, lp+"q_neg"))
	b.emit(asm.Add.Imm(asm.R3, record.QuantizeZeroBucket+1))
	b.emit(asm.Ja.Label(lp + "q_done"))
	b.mark(lp + "q_neg")
	b.emit(asm.JLE.Imm(asm.R3, record.QuantizeZeroBucket-1, lp+"q_min"))
	b.emit(asm.Mov.Imm(asm.R3, record.QuantizeZeroBucket-1))
	b.mark(lp + "q_min")
	b.emit(asm.Neg.Imm(asm.R3, 0))
	b.emit(asm.Add.Imm(asm.R3, record.QuantizeZeroBucket-1))
	b.mark(lp + "q_done")
	// The verifier's bound on the bucket.
	b.emit(asm.And.Imm(asm.R3, 127))
	b.emit(asm.JLT.Imm(asm.R3, record.QuantizeNBuckets, lp+"q_ok"))
	b.emit(asm.Mov.Imm(asm.R3, record.QuantizeNBuckets-1))
	b.mark(lp + "q_ok")
}

// llquantizeBucket leaves in R3 the bucket of llquantize() with
// parameters arg that counts R1, as record.LLQuantizeBucket: the orders
// of magnitude are unrolled, their bounds being constants. last is the
// last bucket, the verifier's bound. R4 is clobbered. Parameters the
// kernel would refuse (dtrace_ecb_aggregation_create) are refused.
func (b *builder) llquantizeBucket(arg uint64, last int32, lp string) error {
	factor, low, high, nsteps := dof.LLQuantizeParams(arg)
	if factor < 2 || low >= high || nsteps < factor || nsteps%factor != 0 {
		return fmt.Errorf("bpf: llquantize() parameters factor %d, low %d, high %d, steps %d are invalid", factor, low, high, nsteps)
	}
	done := lp + "llq_done"
	f := int64(factor)
	this := int64(1)
	for range low {
		this *= f
		if this <= 0 {
			return fmt.Errorf("bpf: llquantize() factor %d to the power %d overflows 64 bits", factor, low)
		}
	}
	b.emit(asm.Mov.Imm(asm.R3, 0))
	b.emit(asm.LoadImm(asm.R4, this, asm.DWord))
	b.emit(asm.JSLT.Reg(asm.R1, asm.R4, done))
	prev, base := this, int64(1)
	this *= f
	clamped := false
	for order := int(low); order <= int(high) && !clamped; order++ {
		nbuckets := min(this, int64(nsteps))
		next := this * f
		skip := fmt.Sprintf("%sllq_%d", lp, order)
		if clamped = next < this; clamped {
			// Past 64 bits: the value is clamped into this order.
			b.emit(asm.LoadImm(asm.R1, this-1, asm.DWord))
		} else {
			b.emit(asm.LoadImm(asm.R4, this, asm.DWord))
			b.emit(asm.JSGE.Reg(asm.R1, asm.R4, skip))
		}
		// base + (v-prev)/(this/nbuckets), v ≥ prev.
		b.emit(asm.LoadImm(asm.R4, prev, asm.DWord))
		b.emit(asm.Sub.Reg(asm.R1, asm.R4))
		b.emit(asm.LoadImm(asm.R4, this/nbuckets, asm.DWord))
		b.emit(asm.Div.Reg(asm.R1, asm.R4))
		b.emit(asm.LoadImm(asm.R3, base, asm.DWord))
		b.emit(asm.Add.Reg(asm.R3, asm.R1))
		b.emit(asm.Ja.Label(done))
		if !clamped {
			b.mark(skip)
		}
		base += nbuckets - nbuckets/f
		prev, this = this, next
	}
	if !clamped {
		b.emit(asm.LoadImm(asm.R3, base, asm.DWord))
	}
	b.mark(done)
	b.emit(asm.JLE.Imm(asm.R3, last, lp+"llq_ok"))
	b.emit(asm.Mov.Imm(asm.R3, last))
	b.mark(lp + "llq_ok")
	return nil
}

// square128 adds the square of |R1| to the 128-bit sum of squares at
// words 2 (low) and 3 (high) of the entry's data (R0), as stddev keeps
// it: the square from 32-bit halves, the low word's carry into the
// high.
func (b *builder) square128(lp string) {
	// R1 = |v|; a = R4 (high half), c = R5 (low half).
	b.emit(asm.JSGE.Imm(asm.R1, 0, lp+"sq_abs"))
	b.emit(asm.Neg.Imm(asm.R1, 0))
	b.mark(lp + "sq_abs")
	b.emit(asm.Mov.Reg(asm.R4, asm.R1))
	b.emit(asm.RSh.Imm(asm.R4, 32))
	b.emit(asm.Mov.Reg(asm.R5, asm.R1))
	b.emit(asm.LSh.Imm(asm.R5, 32))
	b.emit(asm.RSh.Imm(asm.R5, 32))
	// v² = a²·2⁶⁴ + 2ac·2³² + c²; 2ac < 2⁶⁵ is kept as ac and
	// shifted by 33 and 31 bits.
	b.emit(asm.Mov.Reg(asm.R2, asm.R4))
	b.emit(asm.Mul.Reg(asm.R2, asm.R5)) // ac
	b.emit(asm.Mul.Reg(asm.R4, asm.R4)) // a², high word
	b.emit(asm.Mov.Reg(asm.R3, asm.R2))
	b.emit(asm.RSh.Imm(asm.R3, 31))
	b.emit(asm.Add.Reg(asm.R4, asm.R3)) // high += 2ac >> 32
	b.emit(asm.LSh.Imm(asm.R2, 33))     // (2ac << 32) mod 2⁶⁴
	b.emit(asm.Mul.Reg(asm.R5, asm.R5)) // c², low word
	b.emit(asm.Add.Reg(asm.R5, asm.R2))
	b.emit(asm.JGE.Reg(asm.R5, asm.R2, lp+"sq_c1"))
	b.emit(asm.Add.Imm(asm.R4, 1))
	b.mark(lp + "sq_c1")
	// Add (R4, R5) to words (3, 2).
	b.emit(asm.LoadMem(asm.R3, asm.R0, 16, asm.DWord))
	b.emit(asm.Add.Reg(asm.R3, asm.R5))
	b.emit(asm.StoreMem(asm.R0, 16, asm.R3, asm.DWord))
	b.emit(asm.JGE.Reg(asm.R3, asm.R5, lp+"sq_c2"))
	b.emit(asm.Add.Imm(asm.R4, 1))
	b.mark(lp + "sq_c2")
	b.emit(asm.LoadMem(asm.R3, asm.R0, 24, asm.DWord))
	b.emit(asm.Add.Reg(asm.R3, asm.R4))
	b.emit(asm.StoreMem(asm.R0, 24, asm.R3, asm.DWord))
}
