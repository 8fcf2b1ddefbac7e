package record

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/kdtrace/kdtrace/dof"
)

// AggIDNone is DTRACE_AGGIDNONE: padding in an aggregation buffer.
const AggIDNone = 0

// Quantize's buckets (DTRACE_QUANTIZE_*): 63 negative powers of two,
// zero, 63 positive ones.
const (
	QuantizeNBuckets   = 63*2 + 1
	QuantizeZeroBucket = 63
)

// QuantizeBucketValue is the lowest value bucket b of quantize() counts
// (DTRACE_QUANTIZE_BUCKETVAL).
func QuantizeBucketValue(b int) int64 {
	switch {
	case b < QuantizeZeroBucket:
		return -(1 << (QuantizeZeroBucket - 1 - b))
	case b == QuantizeZeroBucket:
		return 0
	}
	return 1 << (b - QuantizeZeroBucket - 1)
}

// An AggBuffer is one CPU's aggregation buffer as the kernel keeps it
// (dtrace_aggregate): an entry per aggregation and key, which is the
// aggregation's 4-byte ID, the key's records at the offsets its AggDesc
// gives, then the aggregation's data, 64-bit words. Entries start on
// 8-byte boundaries, DTRACE_AGGIDNONE words filling the gaps. Bytes is
// what DTRACEIOC_AGGSNAP hands the consumer; snapping a buffer empties
// it (Reset), and the consumer accumulates what it snaps.
type AggBuffer struct {
	data  []byte
	off   int
	index map[string]int // the ID and key bytes: the entry's data offset
	drops uint64
}

// NewAggBuffer returns an empty aggregation buffer of size bytes (the
// aggsize option).
func NewAggBuffer(size int) *AggBuffer {
	return &AggBuffer{data: make([]byte, size), index: make(map[string]int)}
}

// Bytes returns the entries made since the last Reset.
func (b *AggBuffer) Bytes() []byte { return b.data[:b.off] }

// Drops returns the aggregations dropped for want of room since the
// last Reset (dtbd_drops of the aggregation buffer).
func (b *AggBuffer) Drops() uint64 { return b.drops }

// Reset empties the buffer, as a snapshot does.
func (b *AggBuffer) Reset() {
	b.off, b.drops = 0, 0
	clear(b.index)
}

// Aggregate runs aggregating action i of ep, as dtrace_probe does when
// it reaches it: vals are the values of the firing's actions so far
// (as Write takes them; the key is the values of the tuple actions
// before i, the aggregated value vals[i].Int, and, when the last tuple
// action records nothing, its value is the increment). The entry for the key is
// made, with the function's initial data, if the buffer has none; if
// the buffer has no room for it, the aggregation is dropped.
func (b *AggBuffer) Aggregate(ep *EProbe, i int, vals []Value) error {
	if i < 0 || i >= len(ep.Actions) || !ep.Actions[i].IsAgg() || len(vals) <= i {
		return fmt.Errorf("record: EPID %d: action #%d does not aggregate", ep.EPID, i+1)
	}
	a := &ep.Actions[i]
	first := i
	for first > 0 && ep.Actions[first-1].InTuple {
		first--
	}
	if first == i {
		return fmt.Errorf("record: EPID %d: aggregation #%d has no key", ep.EPID, i+1)
	}
	base := a.AggBase
	size := int(a.Offset + a.Size - base)
	key := make([]byte, a.Offset-base)
	binary.LittleEndian.PutUint32(key, a.AggID)
	var dynsize uint64
	for j := first; j < i; j++ {
		t := &ep.Actions[j]
		if t.Size == 0 {
			continue
		}
		if err := t.encode(key[t.Offset-base:t.Offset-base+t.Size], &vals[j], &dynsize, j); err != nil {
			return err
		}
	}
	off, ok := b.index[string(key)]
	if !ok {
		start := b.off
		for ; start%8 != 0; start += AggIDSize {
			if start+AggIDSize <= len(b.data) {
				binary.LittleEndian.PutUint32(b.data[start:], AggIDNone)
			}
		}
		if start+size > len(b.data) {
			b.drops++
			return nil
		}
		copy(b.data[start:], key)
		off = start + len(key)
		initAgg(a, b.data[off:start+size])
		b.off = start + size
		b.index[string(key)] = off
	}
	// A key's last record of no size is the function's argument, not
	// part of the key: quantize's increment, lquantize's and
	// llquantize's weight (dtag_hasarg).
	incr := int64(1)
	if t := &ep.Actions[i-1]; t.Size == 0 {
		incr = int64(vals[i-1].Int)
	}
	aggregate(a, b.data[off:off+int(a.Size)], int64(vals[i].Int), incr)
	return nil
}

// initAgg writes an aggregation's initial data: min's and max's
// extremes, lquantize's and llquantize's parameters in their first word.
func initAgg(a *Action, data []byte) {
	clear(data)
	switch a.Action {
	case dof.AggMin:
		binary.LittleEndian.PutUint64(data, math.MaxInt64)
	case dof.AggMax:
		binary.LittleEndian.PutUint64(data, 1<<63)
	case dof.AggLQuantize, dof.AggLLQuantize:
		binary.LittleEndian.PutUint64(data, a.Arg)
	}
}

// word returns the 64-bit word n of data, and put stores one.
func word(data []byte, n int) int64 { return int64(binary.LittleEndian.Uint64(data[8*n:])) }
func put(data []byte, n int, v int64) {
	binary.LittleEndian.PutUint64(data[8*n:], uint64(v))
}

// aggregate adds v, incr times, to an aggregation's data as the
// kernel's dtrace_aggregate_* functions do.
func aggregate(a *Action, data []byte, v, incr int64) {
	switch a.Action {
	case dof.AggCount:
		put(data, 0, word(data, 0)+1)
	case dof.AggSum:
		put(data, 0, word(data, 0)+v)
	case dof.AggMin:
		put(data, 0, min(word(data, 0), v))
	case dof.AggMax:
		put(data, 0, max(word(data, 0), v))
	case dof.AggAvg:
		put(data, 0, word(data, 0)+1)
		put(data, 1, word(data, 1)+v)
	case dof.AggStddev:
		// The sum of squares in 128 bits, low word first.
		put(data, 0, word(data, 0)+1)
		put(data, 1, word(data, 1)+v)
		abs := uint64(v)
		if v < 0 {
			abs = -abs
		}
		hi, lo := bits.Mul64(abs, abs)
		lo, carry := bits.Add64(uint64(word(data, 2)), lo, 0)
		put(data, 2, int64(lo))
		put(data, 3, word(data, 3)+int64(hi+carry))
	case dof.AggQuantize:
		b := QuantizeBucket(v)
		put(data, b, word(data, b)+incr)
	case dof.AggLQuantize:
		b := LQuantizeBucket(a.Arg, v)
		put(data, b+1, word(data, b+1)+incr)
	case dof.AggLLQuantize:
		b := LLQuantizeBucket(a.Arg, v)
		put(data, b+1, word(data, b+1)+incr)
	}
}

// QuantizeBucket returns the bucket of quantize() that counts v
// (dtrace_aggregate_quantize).
func QuantizeBucket(v int64) int {
	if v < 0 {
		for i := range QuantizeZeroBucket {
			if v <= QuantizeBucketValue(i) {
				return i
			}
		}
	}
	for i := QuantizeZeroBucket + 1; i < QuantizeNBuckets; i++ {
		if v < QuantizeBucketValue(i) {
			return i - 1
		}
	}
	return QuantizeNBuckets - 1
}

// LQuantizeBucket returns the bucket of lquantize() with parameters arg
// that counts v, from 0 (below the base) to levels+1 (at or above the
// limit), as dtrace_aggregate_lquantize finds it: on v's low 32 bits.
func LQuantizeBucket(arg uint64, v int64) int {
	base, step, levels := dof.LQuantizeParams(arg)
	val := int32(v)
	if val < base {
		return 0
	}
	level := (int64(val) - int64(base)) / int64(step)
	if level < int64(levels) {
		return int(level) + 1
	}
	return int(levels) + 1
}

// LLQuantizeBucket returns the bucket of llquantize() with parameters
// arg that counts v (dtrace_aggregate_llquantize_bucket): 0 below
// factor^low, then nsteps buckets for each order of magnitude up to
// high, less those the order before holds, then the top bucket.
func LLQuantizeBucket(arg uint64, v int64) int {
	factor, low, high, nsteps := dof.LLQuantizeParams(arg)
	f := int64(factor)
	this := int64(1)
	for range low {
		this *= f
	}
	if v < this {
		return 0
	}
	last := this
	base := int64(1)
	this *= f
	for order := int(low); order <= int(high); order++ {
		nbuckets := min(this, int64(nsteps))
		next := this * f
		if next < this {
			// Past 64 bits: the value is clamped into this order.
			v = this - 1
		}
		if v < this {
			return int(base + (v-last)/(this/nbuckets))
		}
		base += nbuckets - nbuckets/f
		last, this = this, next
	}
	return int(base)
}
