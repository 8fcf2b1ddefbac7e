package bpf

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// A Span is a probe program's part in a pair of tracepoints a thread
// passes in turn with the same arg0, such as lock:contention_begin and
// lock:contention_end for one lock: the start's program records when
// the thread passed, the end's reads it, so that an SDT site at the end
// knows how long the thread took and what the start said. The two share
// a map (MapSpan, NewSpanMap), keyed by the thread and arg0.
type Span uint8

const (
	// SpanNone is a program of no pair.
	SpanNone Span = iota
	// SpanStart records the time (as timestamp) and arg1 for the
	// thread and arg0, before the program's sites run; a thread that
	// passes it again before the end keeps the first time, and the
	// bits of arg1 set every time (a mutex's waiter that spins, sleeps
	// and spins again passes lock:contention_begin flagged
	// MUTEX|SPIN, MUTEX, MUTEX|SPIN: it slept). A program of no site
	// records only.
	SpanStart
	// SpanEnd reads what the start recorded for the thread and arg0
	// into SpanArg and SpanArg+1, and forgets it; both read 0 where the
	// thread did not pass the start since it last passed the end.
	SpanEnd
)

// SpanArg is the tracepoint argument, past any tracepoint's own, in
// which a SpanEnd program's sites read the time the thread passed the
// start; the start's arg1 follows it.
const SpanArg = NArgs - 2

// MapSpan is the name of the map of a pair's programs (Span); spanKeys
// is how many spans it holds at once, past which a start is not
// recorded. It is a hash, not an LRU hash, which forgets the oldest
// entries before it is full: a thread asleep on a mutex holds one.
const (
	MapSpan  = "kd_span"
	spanKeys = 16384
)

// NewSpanMap makes the map a pair's start and end programs share.
func NewSpanMap() (*ebpf.Map, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: MapSpan, Type: ebpf.Hash, KeySize: 16, ValueSize: 16, MaxEntries: spanKeys})
	if err != nil {
		return nil, fmt.Errorf("bpf: creating the span map: %w", err)
	}
	return m, nil
}

// The stack of span's code: the key, the thread's ID and arg0 (the
// thread key's slot, free once the firing is prepared), and the value,
// the time and arg1 (the condition codes' slots, free between DIFOs).
const (
	spanKey   = keySlot
	spanValue = ccB
)

// span appends the program's part in its pair, once the tracepoint's
// arguments are at StateRawArgs.
func (b *builder) span() {
	if b.p.Span == SpanNone {
		return
	}
	b.emit(asm.FnGetCurrentPidTgid.Call())
	b.emit(asm.LSh.Imm(asm.R0, 32))
	b.emit(asm.RSh.Imm(asm.R0, 32))
	b.emit(asm.StoreMem(asm.R10, spanKey, asm.R0, asm.DWord))
	b.emit(asm.LoadMem(asm.R1, rState, stateRawArgs, asm.DWord))
	b.emit(asm.StoreMem(asm.R10, spanKey+8, asm.R1, asm.DWord))
	key := func() {
		b.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(MapSpan))
		b.emit(asm.Mov.Reg(asm.R2, asm.R10))
		b.emit(asm.Add.Imm(asm.R2, spanKey))
	}
	if b.p.Span == SpanStart {
		key()
		b.t.helper(asm.FnMapLookupElem)
		b.emit(asm.JEq.Imm(asm.R0, 0, "span_new"))
		b.emit(asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord))
		b.emit(asm.LoadMem(asm.R2, rState, stateRawArgs+8, asm.DWord))
		b.emit(asm.And.Reg(asm.R1, asm.R2))
		b.emit(asm.StoreMem(asm.R0, 8, asm.R1, asm.DWord))
		b.emit(asm.Ja.Label("span_done"))
		b.mark("span_new")
		b.emit(asm.FnKtimeGetNs.Call())
		b.emit(asm.StoreMem(asm.R10, spanValue, asm.R0, asm.DWord))
		b.emit(asm.LoadMem(asm.R1, rState, stateRawArgs+8, asm.DWord))
		b.emit(asm.StoreMem(asm.R10, spanValue+8, asm.R1, asm.DWord))
		key()
		b.emit(asm.Mov.Reg(asm.R3, asm.R10))
		b.emit(asm.Add.Imm(asm.R3, spanValue))
		b.emit(asm.Mov.Imm(asm.R4, 0)) // BPF_ANY
		b.emit(asm.FnMapUpdateElem.Call())
		b.mark("span_done")
		b.emit(asm.Mov.Imm(asm.R0, 0))
		return
	}
	key()
	b.t.helper(asm.FnMapLookupElem)
	b.emit(asm.JEq.Imm(asm.R0, 0, "span_none"))
	for i := range int16(2) {
		b.emit(asm.LoadMem(asm.R1, asm.R0, 8*i, asm.DWord))
		b.emit(asm.StoreMem(rState, stateRawArgs+8*(SpanArg+i), asm.R1, asm.DWord))
	}
	key()
	b.emit(asm.FnMapDeleteElem.Call())
	b.mark("span_none")
	b.emit(asm.Mov.Imm(asm.R0, 0))
}
