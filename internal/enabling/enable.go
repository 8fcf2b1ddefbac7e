package enabling

import (
	"math"

	"github.com/kdtrace/kdtrace/dof"
)

// record is an action's record in an ECB's data, as dtrace_ecb_action_add
// sizes it.
type record struct {
	kind    dof.ActKind
	size    uint64
	align   uint64
	intuple bool
}

// Sizes of the records the kernel writes.
const (
	recHdrSize = 12 // dtrace_rechdr_t
	aggIDSize  = 4  // dtrace_aggid_t
)

// enable checks the actions of ECB n as dtrace_ecb_create does when the
// ECB is made for a probe (dtrace_ecb_action_add,
// dtrace_ecb_aggregation_create, dtrace_ecb_resize). The kernel makes
// these checks only for ECBs that match a probe and refuses the enabling
// with EINVAL; Load makes them for every ECB.
func (l *loader) enable(n int) error {
	e := &l.prog.ECBs[n]
	if destructive(e) {
		l.prog.Destructive = true
	}
	opt := l.optValues()
	var recs []record
	// What the actions so far hold, for the checks of order.
	var st chain
	for i := range e.Actions {
		a := &e.Actions[i]
		fail := func(reason string) error {
			p := l.acts[n][i]
			return l.dataErr(p.sec, p.off+8, reason)
		}
		if a.Kind.IsAgg() {
			if st.commit || st.speculate {
				return fail(ReasonAggAfterSpec)
			}
			size, reason := AggregationSize(a)
			if reason != "" {
				return fail(reason)
			}
			if a.NTuple == 0 {
				return fail(ReasonAggNoTuple)
			}
			first := -1
			for j, left := len(recs)-1, a.NTuple; j >= 0; j-- {
				if recs[j].kind.IsAgg() {
					break
				}
				if left--; left == 0 {
					first = j
					break
				}
			}
			if first < 0 {
				return fail(ReasonAggShortTuple)
			}
			for j := first; j < len(recs); j++ {
				recs[j].intuple = true
			}
			recs[first].align = max(recs[first].align, aggIDSize)
			recs = append(recs, record{kind: a.Kind, size: size, align: AlignOf(size)})
			st.data = true
			continue
		}
		// The checks of order come first, as dtrace_ecb_action_add
		// makes them.
		switch {
		case a.Kind == dof.ActSpeculate && st.data:
			// The kernel means to refuse a speculate after data was
			// recorded (its check of dte_size), but sizes the ECB only
			// once all actions are in; dtrace's compiler refuses it too.
			return fail(ReasonSpecAfterData)
		case a.Kind == dof.ActCommit && st.commit:
			return fail(ReasonCommitTwice)
		}
		size, reason := ActionSize(a, &opt)
		if reason != "" {
			return fail(reason)
		}
		if size > math.MaxUint32 {
			return fail(ReasonActTooLarge)
		}
		if (size != 0 || a.Kind == dof.ActSpeculate) && st.commit {
			return fail(ReasonAfterCommit)
		}
		recs = append(recs, record{kind: a.Kind, size: size, align: AlignOf(size)})
		st.data = st.data || size != 0
		st.commit = st.commit || a.Kind == dof.ActCommit
		st.speculate = st.speculate || a.Kind == dof.ActSpeculate
	}
	if !resize(recs) {
		p := l.acts[n][len(l.acts[n])-1]
		return l.dataErr(p.sec, p.off, ReasonECBTooLarge)
	}
	return nil
}

// destructive reports whether an ECB may harm a process or the kernel:
// a destructive action, or DIF anywhere in it (its predicate, an
// action's expression, an aggregation's key or argument) that calls a
// destructive subroutine. The kernel looks only at the expressions of
// DIFEXPR actions (dtrace_ecb_action_add), so that a copyout() hidden
// in a predicate, an inline's value or an aggregation's key runs
// without the destructive option; kdtrace does not let it.
func destructive(e *ECB) bool {
	if e.Pred != nil && e.Pred.Destructive {
		return true
	}
	for i := range e.Actions {
		a := &e.Actions[i]
		if a.Kind.IsDestructive() || (a.DIFO != nil && a.DIFO.Destructive) {
			return true
		}
	}
	return false
}

// AlignOf is the alignment the kernel gives a record of that size: the
// largest power of two up to 8 that divides it, 1 for no data.
func AlignOf(size uint64) uint64 {
	for mask := uint64(7); size != 0 && mask > 0; mask >>= 1 {
		if size&mask == 0 {
			return mask + 1
		}
	}
	return 1
}

// chain is what the actions before the one being added hold.
type chain struct {
	commit    bool // a commit
	speculate bool // a speculate
	data      bool // an action that records data, or an aggregation
}

// ActionSize returns the size of the record a non-aggregating action
// writes under the option values opt (of which strsize, stackframes,
// ustackframes, jstackframes and jstackstrsize are read), or why the
// kernel refuses it (dtrace_ecb_action_add); the checks of the actions'
// order are the caller's.
func ActionSize(a *Action, opt *[dof.OptMax]int64) (uint64, string) {
	dp := a.DIFO
	switch a.Kind {
	case dof.ActPrintf, dof.ActPrinta, dof.ActSystem, dof.ActFreopen, dof.ActDIFExpr,
		dof.ActLibAct, dof.ActTraceMem, dof.ActTraceMemDynSize:
		if dp == nil {
			return 0, ReasonActNeedsDIFO
		}
		if dp.Ret.Size != 0 {
			return uint64(dp.Ret.Size), ""
		}
		if dp.Ret.Kind == dof.TypeString {
			if dp.Ret.Flags&dof.TypeByRef == 0 {
				return 0, ReasonActStrByRef
			}
			return uint64(opt[dof.OptStrSize]), ""
		}
		return 0, ""

	case dof.ActStack:
		nframes := a.Arg
		if nframes == 0 {
			nframes = uint64(opt[dof.OptStackFrames])
		}
		if nframes > math.MaxUint32/8 {
			return 0, ReasonActTooLarge
		}
		return nframes * 8, ""

	case dof.ActJStack, dof.ActUStack:
		nframes, strsize := dof.UStackParams(a.Arg)
		n, s := uint64(nframes), uint64(strsize)
		if a.Kind == dof.ActJStack {
			if s == 0 {
				s = uint64(opt[dof.OptJStackStrSize])
			}
			if n == 0 {
				n = uint64(opt[dof.OptJStackFrames])
			}
		} else if n == 0 {
			n = uint64(opt[dof.OptUStackFrames])
		}
		// A slot for the pid, the frames, then the strings.
		return ((n+1)*8 + s + 7) &^ 7, ""

	case dof.ActSym, dof.ActMod, dof.ActUSym, dof.ActUMod, dof.ActUAddr:
		if dp == nil {
			return 0, ReasonActNeedsDIFO
		}
		if dp.Ret.Size != 8 || dp.Ret.Flags&dof.TypeByRef != 0 {
			return 0, ReasonAct64
		}
		if a.Kind == dof.ActSym || a.Kind == dof.ActMod {
			return 8, ""
		}
		return 16, "" // the pid and the address

	case dof.ActStop, dof.ActBreakpoint, dof.ActPanic:
		return 0, ""

	case dof.ActChill, dof.ActDiscard, dof.ActRaise, dof.ActSpeculate, dof.ActCommit:
		if dp == nil {
			return 0, ReasonActNeedsDIFO
		}
		return 0, ""

	case dof.ActExit:
		if dp == nil {
			return 0, ReasonActNeedsDIFO
		}
		if dp.Ret.Size != 4 || dp.Ret.Flags&dof.TypeByRef != 0 {
			return 0, ReasonActExit
		}
		return 4, ""

	case dof.ActPrintm:
		// The kernel reads the DIFO's type without looking whether
		// there is one.
		if dp == nil {
			return 0, ReasonActNeedsDIFO
		}
		return uint64(dp.Ret.Size), ""
	}
	return 0, ReasonActKind
}

// AggregationSize returns the size of an aggregation's data, or why the
// kernel refuses it (dtrace_ecb_aggregation_create).
func AggregationSize(a *Action) (uint64, string) {
	switch a.Kind {
	case dof.AggMin, dof.AggMax, dof.AggCount, dof.AggSum:
		return 8, ""
	case dof.AggQuantize:
		return (63*2 + 1) * 8, ""
	case dof.AggLQuantize:
		_, step, levels := dof.LQuantizeParams(a.Arg)
		if step == 0 || levels == 0 {
			return 0, ReasonAggLQuantize
		}
		return (uint64(levels) + 3) * 8, ""
	case dof.AggLLQuantize:
		factor, low, high, nsteps := dof.LLQuantizeParams(a.Arg)
		if factor < 2 || low >= high || nsteps < factor {
			return 0, ReasonAggLLQuantize
		}
		v := uint64(factor)
		for v < uint64(nsteps) {
			v *= uint64(factor)
		}
		if v%uint64(nsteps) != 0 || nsteps%factor != 0 {
			return 0, ReasonAggLLQuantize
		}
		return (llquantizeBuckets(factor, low, high, nsteps) + 2) * 8, ""
	case dof.AggAvg:
		return 16, ""
	case dof.AggStddev:
		return 32, ""
	}
	return 0, ReasonAggKind
}

// llquantizeBuckets counts the buckets of a log-linear quantization
// below the top one: one for values under factor^low, then for each
// order of magnitude from low to high, nsteps buckets less those that
// fall in the previous order.
func llquantizeBuckets(factor, low, high, nsteps uint16) uint64 {
	this := uint64(1)
	for range low {
		this *= uint64(factor)
		if this > math.MaxInt64/uint64(factor) {
			break
		}
	}
	base := uint64(1)
	this *= uint64(factor)
	for order := uint64(low); order <= uint64(high); order++ {
		nb := min(this, uint64(nsteps))
		base += nb - nb/uint64(factor)
		if this > math.MaxInt64/uint64(factor) {
			break
		}
		this *= uint64(factor)
	}
	return base
}

// resize lays out an ECB's records as dtrace_ecb_resize does and reports
// whether they fit the 32-bit sizes the kernel keeps.
func resize(recs []record) bool {
	size, needed := uint64(recHdrSize), uint64(recHdrSize)
	cur := uint64(math.MaxUint64)
	roundup := func(x, a uint64) uint64 { return (x + a - 1) &^ (a - 1) }
	for _, r := range recs {
		switch {
		case r.kind.IsAgg():
			cur = roundup(cur, r.align) + r.size
			needed = max(needed, cur)
			cur = math.MaxUint64
		case r.intuple:
			if cur == math.MaxUint64 {
				// The first record of a tuple sits at offset 4 of an
				// 8-byte block, after the aggregation's identifier.
				cur = size + (aggIDSize-size)&7
			}
			cur = roundup(cur, r.align) + r.size
		default:
			size = roundup(size, r.align) + r.size
			needed = max(needed, size)
		}
		if size > math.MaxUint32 || (cur != math.MaxUint64 && cur > math.MaxUint32) {
			return false
		}
	}
	return needed <= math.MaxUint32
}
