package record

import (
	"fmt"
	"math"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

// Sizes and sentinels of the format.
const (
	RecHdrSize = 12 // sizeof (dtrace_rechdr_t): the EPID, then the timestamp in two 32-bit halves
	EPIDSize   = 4  // sizeof (dtrace_epid_t)
	AggIDSize  = 4  // sizeof (dtrace_aggid_t)
	EPIDNone   = 0  // DTRACE_EPIDNONE: padding in a buffer
)

// Probe IDs of the dtrace provider's probes, which it creates first.
const (
	ProbeBegin = 1 // dtrace:::BEGIN
	ProbeEnd   = 2 // dtrace:::END
	ProbeError = 3 // dtrace:::ERROR
)

// A Rec describes one action's record (dtrace_recdesc_t).
type Rec struct {
	Action    dof.ActKind // dtrd_action
	Size      uint32      // dtrd_size: 0 for an action that records nothing
	Offset    uint32      // dtrd_offset: from the start of the firing (its header), or of the aggregation
	Alignment uint16      // dtrd_alignment
	Format    uint16      // dtrd_format: the format's number, from 1; 0 for none
	Arg       uint64      // dtrd_arg: stack()'s frames, ustack()'s frames and string size, LIBACT's DT_ACT_*, …
	UArg      uint64      // dtrd_uarg: the statement the action came from
}

// A Probe names a probe (dtrace_probedesc_t).
type Probe struct {
	ID       uint32 // dtpd_id
	Provider string // dtpd_provider
	Module   string // dtpd_mod
	Function string // dtpd_func
	Name     string // dtpd_name
}

// An EProbe is an enabled probe: an ECB made for one probe. Its
// exported fields are dtrace_eprobedesc_t's.
type EProbe struct {
	EPID    uint32 // dtepd_epid
	ProbeID uint32 // dtepd_probeid
	// The rest is the ECB's, shared by its EProbes: a clause on
	// syscall:::entry makes 450 of them, and 10,000 clauses 4.5
	// million.
	*ECBLayout
}

// An ECBLayout is what the EProbes of one ECB share: its records'
// layout.
type ECBLayout struct {
	UArg uint64 // dtepd_uarg: the ECB description's, DT_ECB_DEFAULT or DT_ECB_ERROR
	// Size is what a firing takes in the buffer (dtepd_size, the
	// kernel's dte_size): the header and the records, rounded up to 4;
	// 0 when no action records anything, and then a firing leaves no
	// trace.
	Size uint32
	// Recs are the records of the actions, in order, except
	// aggregations and their key tuples (dtepd_rec).
	Recs []Rec

	// Needed is the room a firing reserves (dte_needed): Size, or more
	// when an aggregation's key is built beyond it.
	Needed uint32
	// Alignment is the alignment of the firing's start (dte_alignment):
	// 4, or 8 when a record needs it.
	Alignment uint32
	// Actions holds every action of the ECB, as Write takes its values.
	Actions []Action

	aggs []*AggDesc // its aggregations, whose EPID is its first EProbe's
}

// An Action is one action of an ECB as the kernel keeps it: its record,
// and what a backend needs to write it.
type Action struct {
	Rec
	// AggID is an aggregating action's aggregation (dtag_id, from 1).
	AggID uint32
	// AggBase is where an aggregating action's entry starts, beyond
	// the firing's size: its dtrace_aggid_t, then the key's records.
	AggBase uint32
	// InTuple says the action computes part of an aggregation's key;
	// its record lies beyond the firing's Size and is not written to the
	// principal buffer.
	InTuple bool
	// Type is the DIFO's return type: how a value is stored.
	Type dif.Type
}

// IsAgg reports whether the action aggregates.
func (a *Action) IsAgg() bool { return a.Action.IsAgg() }

// An AggDesc describes an aggregation (dtrace_aggdesc_t, as
// DTRACEIOC_AGGDESC fills it).
type AggDesc struct {
	ID   uint32 // dtagd_id
	EPID uint32 // dtagd_epid
	// VarID is the aggregation variable (dtagd_varid), which the
	// compiler gives as the aggregating action's user argument and as
	// the key's first record.
	VarID uint32
	// Size is the bytes of the aggregation's entry (dtagd_size): its
	// dtrace_aggid_t, the key tuple and the data.
	Size uint32
	// Recs are the key's records then the aggregation's own, offsets
	// from the entry's start (dtagd_rec). Records of size 0, an
	// aggregating function's argument, are left out.
	Recs []Rec
}

// Options are the option values records are sized with.
type Options struct {
	StrSize       uint32 // strsize
	StackFrames   uint32 // stackframes
	UStackFrames  uint32 // ustackframes
	JStackFrames  uint32 // jstackframes
	JStackStrSize uint32 // jstackstrsize
}

// DefaultOptions are the kernel's defaults for a new consumer state
// (dtrace_state_create).
var DefaultOptions = Options{
	StrSize:       enabling.DefaultStrSize,
	StackFrames:   enabling.DefaultStackFrames,
	UStackFrames:  enabling.DefaultUStackFrames,
	JStackFrames:  enabling.DefaultJStackFrames,
	JStackStrSize: enabling.DefaultJStackStrSize,
}

// OptionsOf returns the defaults with the program's option settings
// applied, a later setting overriding an earlier one, as the kernel
// applies them when it takes the DOF.
func OptionsOf(p *enabling.Program) Options {
	o := DefaultOptions
	for _, s := range p.Options {
		if s.Value < 0 || s.Value > math.MaxUint32 {
			continue
		}
		v := uint32(s.Value)
		switch s.ID {
		case dof.OptStrSize:
			o.StrSize = v
		case dof.OptStackFrames:
			o.StackFrames = v
		case dof.OptUStackFrames:
			o.UStackFrames = v
		case dof.OptJStackFrames:
			o.JStackFrames = v
		case dof.OptJStackStrSize:
			o.JStackStrSize = v
		}
	}
	return o
}

// A Layout is the kernel's state of an enabling as far as records go:
// the enabled probes by EPID, the aggregations by ID, the format
// strings and the probes. Its zero value is not ready; use NewLayout.
type Layout struct {
	opt     Options
	eprobes []*EProbe // by EPID-1
	aggs    []*AggDesc
	formats []string
	probes  map[uint32]Probe
	needed  uint32
}

// NewLayout returns an empty layout whose records are sized with opt.
func NewLayout(opt Options) *Layout {
	return &Layout{opt: opt, probes: make(map[uint32]Probe)}
}

// Needed is the largest room any firing reserves (dts_needed): a
// buffer smaller than that cannot hold every firing.
func (l *Layout) Needed() uint32 { return l.needed }

// EProbes returns the enabled probes in EPID order.
func (l *Layout) EProbes() []*EProbe { return l.eprobes }

// An Error is an ECB the kernel would refuse to enable (EINVAL).
type Error struct {
	Probe  Probe
	Action int // the action at fault, from 0; -1 for the ECB as a whole
	Reason string
}

func (e *Error) Error() string {
	p := e.Probe
	if e.Action < 0 {
		return fmt.Sprintf("enabling %s:%s:%s:%s: %s", p.Provider, p.Module, p.Function, p.Name, e.Reason)
	}
	return fmt.Sprintf("enabling %s:%s:%s:%s: action #%d: %s", p.Provider, p.Module, p.Function, p.Name, e.Action+1, e.Reason)
}

// Add makes the ECBs that ecb describes for the probes it matches, in
// the order given (the kernel's is by probe ID), as dtrace_enabling_match
// makes them: each ECB gets the next EPID, and they share one list of
// actions, made for the first, so that their aggregations (numbered
// from the layout's next ID) and formats (numbered from its next format)
// are the same. It returns the enabled probes, or an *Error when the
// kernel would refuse the actions; enabling.Load refuses such ECBs
// already.
func (l *Layout) Add(ecb *enabling.ECB, probes []Probe) ([]*EProbe, error) {
	if len(probes) == 0 {
		return nil, nil
	}
	e, err := l.ECB(ecb, probes[0])
	if err != nil {
		return nil, err
	}
	return l.Extend(e, probes), nil
}

// ECB lays out the records of an ECB, its aggregations and formats
// taken, without enabling it on any probe yet: p is the probe its
// errors name. Extend enables it on probes.
func (l *Layout) ECB(ecb *enabling.ECB, p Probe) (*ECBLayout, error) {
	acts, formats, err := l.actions(ecb, p)
	if err != nil {
		return nil, err
	}
	proto := &EProbe{EPID: uint32(len(l.eprobes) + 1), ECBLayout: &ECBLayout{UArg: ecb.UArg, Actions: acts}}
	aggs, reason := resize(proto)
	if reason != "" {
		return nil, &Error{Probe: p, Action: -1, Reason: reason}
	}
	for i := range proto.Actions {
		if a := &proto.Actions[i]; !a.IsAgg() && !a.InTuple {
			proto.Recs = append(proto.Recs, a.Rec)
		}
	}
	for _, ag := range aggs {
		ag.EPID = EPIDNone // the first probe it is enabled on gives it
	}
	proto.aggs = aggs
	l.aggs = append(l.aggs, aggs...)
	l.formats = append(l.formats, formats...)
	l.needed = max(l.needed, proto.Needed)
	return proto.ECBLayout, nil
}

// Extend enables an ECB laid out by ECB on more probes, which may be
// made while the tracing runs (a library's, dlopen()ed): each gets the
// next EPID, sharing the ECB's records and aggregations.
func (l *Layout) Extend(e *ECBLayout, probes []Probe) []*EProbe {
	all := make([]EProbe, len(probes))
	eps := make([]*EProbe, len(probes))
	for i, p := range probes {
		all[i] = EProbe{EPID: uint32(len(l.eprobes) + 1), ProbeID: p.ID, ECBLayout: e}
		l.eprobes = append(l.eprobes, &all[i])
		l.probes[p.ID] = p
		eps[i] = &all[i]
	}
	for _, ag := range e.aggs {
		if ag.EPID == EPIDNone && len(eps) > 0 {
			ag.EPID = eps[0].EPID
		}
	}
	return eps
}

// actions makes the actions of an ECB for probe p
// (dtrace_ecb_action_add, dtrace_ecb_aggregation_create), and returns
// the formats they add.
func (l *Layout) actions(ecb *enabling.ECB, p Probe) ([]Action, []string, error) {
	fail := func(i int, reason string) ([]Action, []string, error) {
		return nil, nil, &Error{Probe: p, Action: i, Reason: reason}
	}
	var acts []Action
	var formats []string
	speculate, commit := false, false
	aggID := uint32(len(l.aggs))
	for i := range ecb.Actions {
		a := &ecb.Actions[i]
		act := Action{Rec: Rec{Action: a.Kind, Arg: a.Arg, UArg: a.UArg}}
		if a.DIFO != nil {
			act.Type = a.DIFO.Ret
		}
		if a.Kind.IsAgg() {
			if speculate || commit {
				return fail(i, "aggregation after speculate or commit")
			}
			size, err := aggSize(a)
			if err != "" {
				return fail(i, err)
			}
			first := -1
			for j, left := len(acts)-1, a.NTuple; j >= 0 && left > 0; j-- {
				if acts[j].IsAgg() {
					break
				}
				if left--; left == 0 {
					first = j
				}
			}
			if a.NTuple == 0 || first < 0 {
				return fail(i, "aggregation key tuple too short")
			}
			for j := first; j < len(acts); j++ {
				acts[j].InTuple = true
			}
			aggID++
			act.AggID = aggID
			act.Size = size
			act.Alignment = alignOf(size)
			acts[first].Alignment = max(acts[first].Alignment, AggIDSize)
			acts = append(acts, act)
			continue
		}
		size, arg, err := l.actSize(a)
		if err != "" {
			return fail(i, err)
		}
		switch {
		case a.Kind == dof.ActSpeculate && dataBefore(acts):
			return fail(i, "speculate after data")
		case (size != 0 || a.Kind == dof.ActSpeculate) && commit:
			return fail(i, "data recorded after commit")
		case a.Kind == dof.ActCommit && commit:
			return fail(i, "second commit")
		}
		act.Size, act.Arg, act.Alignment = size, arg, alignOf(size)
		if a.Format != "" {
			formats = append(formats, a.Format)
			act.Format = uint16(len(l.formats) + len(formats))
		}
		speculate = speculate || a.Kind == dof.ActSpeculate
		commit = commit || a.Kind == dof.ActCommit
		acts = append(acts, act)
	}
	return acts, formats, nil
}

// dataBefore reports whether an action before records data.
func dataBefore(acts []Action) bool {
	for _, a := range acts {
		if a.Size != 0 {
			return true
		}
	}
	return false
}

// alignOf is the kernel's alignment of a record of that size,
// enabling.AlignOf.
func alignOf(size uint32) uint16 { return uint16(enabling.AlignOf(uint64(size))) }

// actSize returns the size of the record a non-aggregating action
// writes and its argument as the kernel keeps it
// (dtrace_ecb_action_add), or why the kernel refuses it: the size by the
// kernel's rule, enabling.ActionSize.
func (l *Layout) actSize(a *enabling.Action) (size uint32, arg uint64, reason string) {
	opt := l.opt.values()
	s, reason := enabling.ActionSize(a, &opt)
	if reason != "" {
		return 0, 0, reason
	}
	if s > math.MaxUint32 {
		return 0, 0, enabling.ReasonActTooLarge
	}
	// The kernel keeps stack's and ustack's frames and strsize with
	// their defaults filled in.
	arg = a.Arg
	switch a.Kind {
	case dof.ActStack:
		if arg == 0 {
			arg = uint64(l.opt.StackFrames)
		}
	case dof.ActJStack, dof.ActUStack:
		nframes, strsize := dof.UStackParams(arg)
		if a.Kind == dof.ActJStack {
			if strsize == 0 {
				strsize = l.opt.JStackStrSize
			}
			if nframes == 0 {
				nframes = l.opt.JStackFrames
			}
		} else if nframes == 0 {
			nframes = l.opt.UStackFrames
		}
		arg = dof.UStackArg(nframes, strsize)
	}
	return uint32(s), arg, ""
}

// values returns the options as the kernel's option values, the ones
// enabling.ActionSize reads.
func (o *Options) values() [dof.OptMax]int64 {
	var v [dof.OptMax]int64
	v[dof.OptStrSize] = int64(o.StrSize)
	v[dof.OptStackFrames] = int64(o.StackFrames)
	v[dof.OptUStackFrames] = int64(o.UStackFrames)
	v[dof.OptJStackFrames] = int64(o.JStackFrames)
	v[dof.OptJStackStrSize] = int64(o.JStackStrSize)
	return v
}

// aggSize returns the size of an aggregation's data, or why the kernel
// refuses it.
func aggSize(a *enabling.Action) (uint32, string) {
	size, reason := enabling.AggregationSize(a)
	return uint32(size), reason
}

// resize places the records of an ECB as dtrace_ecb_resize does and
// returns its aggregations' descriptions.
func resize(ep *EProbe) ([]*AggDesc, string) {
	const none = math.MaxUint64
	roundup := func(x uint64, a uint16) uint64 { return (x + uint64(a) - 1) &^ (uint64(a) - 1) }
	size, needed := uint64(RecHdrSize), uint64(RecHdrSize)
	align := uint64(EPIDSize)
	cur, base := uint64(none), uint64(none)
	first := 0
	var aggs []*AggDesc
	for i := range ep.Actions {
		a := &ep.Actions[i]
		align = max(align, uint64(a.Alignment))
		switch {
		case a.IsAgg():
			cur = roundup(cur, a.Alignment)
			a.Offset, a.AggBase = uint32(cur), uint32(base)
			cur += uint64(a.Size)
			needed = max(needed, cur)
			ag := &AggDesc{ID: a.AggID, EPID: ep.EPID, VarID: uint32(a.UArg), Size: uint32(cur - base)}
			for j := first; j <= i; j++ {
				r := ep.Actions[j].Rec
				if r.Size == 0 {
					continue // the aggregating function's argument
				}
				r.Offset -= uint32(base)
				ag.Recs = append(ag.Recs, r)
			}
			aggs = append(aggs, ag)
			cur, base = none, none
		case a.InTuple:
			if cur == none {
				// The first record of a key sits at offset 4 of an
				// 8-byte block, after the aggregation's ID.
				cur = size + (AggIDSize-size)&7
				base, first = cur-AggIDSize, i
			}
			cur = roundup(cur, a.Alignment)
			a.Offset = uint32(cur)
			cur += uint64(a.Size)
		default:
			size = roundup(size, a.Alignment)
			a.Offset = uint32(size)
			size += uint64(a.Size)
			needed = max(needed, size)
		}
		if size > math.MaxUint32 || (cur != none && cur > math.MaxUint32) {
			return nil, "ECB too large"
		}
	}
	if n := len(ep.Actions); n > 0 && !(n == 1 && ep.Actions[0].Action == dof.ActSpeculate) && size == RecHdrSize {
		// No action records anything.
		size = 0
	}
	size = roundup(size, EPIDSize)
	needed = roundup(needed, EPIDSize)
	if needed > math.MaxUint32 {
		return nil, "ECB too large"
	}
	ep.Size, ep.Needed, ep.Alignment = uint32(size), uint32(needed), uint32(align)
	return aggs, ""
}

// EProbe returns the enabled probe epid (DTRACEIOC_EPROBE).
func (l *Layout) EProbe(epid uint32) (*EProbe, error) {
	if epid == EPIDNone || uint64(epid) > uint64(len(l.eprobes)) {
		return nil, fmt.Errorf("no enabled probe with EPID %d", epid)
	}
	return l.eprobes[epid-1], nil
}

// Agg returns aggregation id's description (DTRACEIOC_AGGDESC).
func (l *Layout) Agg(id uint32) (*AggDesc, error) {
	if id == 0 || uint64(id) > uint64(len(l.aggs)) {
		return nil, fmt.Errorf("no aggregation with ID %d", id)
	}
	return l.aggs[id-1], nil
}

// Format returns format string n (DTRACEIOC_FORMAT).
func (l *Layout) Format(n uint16) (string, error) {
	if n == 0 || int(n) > len(l.formats) {
		return "", fmt.Errorf("no format %d", n)
	}
	return l.formats[n-1], nil
}

// Probe returns the description of probe id, one of the probes ECBs
// were added for.
func (l *Layout) Probe(id uint32) (Probe, error) {
	p, ok := l.probes[id]
	if !ok {
		return p, fmt.Errorf("no probe with ID %d", id)
	}
	return p, nil
}
