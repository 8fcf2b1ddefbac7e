package bpf

import (
	"errors"
	"math"
	"math/bits"
)

// A Lowered is a size option Fit lowered, and its value now.
type Lowered struct {
	Option string // bufsize, aggsize or dynvarsize
	Value  uint64
}

// ErrNoMemory is Fit's refusal of a size that does not fit under the
// manual resize policy: the kernel's ENOMEM, in FreeBSD's words.
var ErrNoMemory = errors.New("Cannot allocate memory")

// Bounds of the kernel's maps: a ring buffer's size is a power of two
// in 32 bits; a hash map's buckets, a power of two as many as its
// entries, 16 bytes each, are counted in 32 bits (htab_map_alloc).
const (
	maxRing       = 1 << 31
	maxHashEntry  = 1 << 28
	htabElemBytes = 48 // struct htab_elem, before the key
	bucketBytes   = 16 // struct bucket
)

// Defaults of the size options (Config's zero values).
const (
	DefaultBufSize    = 4 << 20
	defaultAggSize    = 4 << 20
	defaultDynVarSize = 4096 * DynVarBytes
)

// DynVarBytes is the bytes of dynvarsize that make room for one more
// entry in each map of dynamic variables.
const DynVarBytes = 64

// fit sizes the maps that dtrace's size options decide, for ncpu CPUs:
// the ring buffer (bufsize of each CPU's records), each aggregation's
// map (aggsize), the maps of thread-locals and associative arrays
// (dynvarsize). An option whose maps would take more than the limit, or
// more than the kernel's maps can hold, is halved until they fit, as
// dtrace's kernel halves a buffer it cannot allocate
// (dtrace_state_buffer, dtrace_state_go); the options so lowered are
// returned, for the consumer to say so as dtrace(1) does. Under the
// manual policy a size that does not fit is refused with ErrNoMemory. A
// size no larger than its default, as one whose maps are as small as
// they go (the fewest entries an aggregation's map holds), fits
// whatever the limit: the limit bounds what a program asks for, not
// what kdtrace always takes; but not past what the kernel's maps hold.
func (l *Layout) fit(ncpu int) ([]Lowered, error) {
	var lowered []Lowered
	for _, o := range []struct {
		name string
		v    *uint64
		def  uint64
		cost func(v uint64) (bytes uint64, least bool)
	}{
		{"bufsize", &l.bufSize, DefaultBufSize, func(v uint64) (uint64, bool) { return ringCost(v, ncpu) }},
		{"aggsize", &l.aggOpt, defaultAggSize, func(v uint64) (uint64, bool) { return l.aggCost(v, ncpu) }},
		{"dynvarsize", &l.dynVarSize, defaultDynVarSize, l.dynVarCost},
	} {
		v := *o.v
		fits := func(v uint64) bool {
			c, least := o.cost(v)
			switch {
			case least:
				return true
			case c == math.MaxUint64:
				return false
			}
			return v <= o.def || l.limit == 0 || c <= l.limit
		}
		for !fits(v) {
			if l.manual {
				return nil, ErrNoMemory
			}
			// Halved, and 8-byte aligned, as the kernel lowers it.
			v = v / 2 &^ 7
		}
		if v != *o.v {
			lowered = append(lowered, Lowered{Option: o.name, Value: v})
			*o.v = v
		}
	}
	l.ring = uint32(ringBytes(l.bufSize, ncpu))
	if l.fill != 0 {
		l.fill = uint32(min(uint64(l.fill), l.bufSize))
	}
	l.threads = uint32(dynVarEntries(l.dynVarSize))
	return lowered, nil
}

// ringBytes is the size of the ring buffer for a bufsize: bufsize of
// each of ncpu CPUs, as dtrace_buffer_alloc makes a buffer of bufsize
// for each CPU, in the one ring they share; a power of two, at least a
// page; math.MaxUint64 past 64 bits.
func ringBytes(bufsize uint64, ncpu int) uint64 {
	hi, n := bits.Mul64(max(bufsize, 1), uint64(max(ncpu, 1)))
	if hi != 0 || n > 1<<63 {
		return math.MaxUint64
	}
	return max(4096, uint64(1)<<bits.Len64(n-1))
}

// ringCost is what the ring buffer takes under bufsize on ncpu CPUs:
// all of it, as FreeBSD's dtrace_buffer_alloc bounds bufsize over all
// CPUs; math.MaxUint64 past the kernel's largest ring.
func ringCost(bufsize uint64, ncpu int) (uint64, bool) {
	n := ringBytes(bufsize, ncpu)
	if n > maxRing {
		return math.MaxUint64, false
	}
	return n, false
}

// aggEntries is the number of entries of an aggregation's map of the
// given shape under aggsize: entries of aggsize bytes, the key, the
// data and the hash table's own, counted as the kernel counts them (16
// bytes); at least minAggEntries, as dtrace's snapshots empty its
// buffers at aggrate where a map keeps its keys.
func aggEntries(aggsize uint64, a aggMap) uint64 {
	return max(minAggEntries, aggsize/uint64(a.key+a.value+16))
}

// aggCost is what the largest shape of aggregation takes under aggsize
// (its two maps: the one the probes fill and the one a snapshot reads),
// and whether each is as small as it goes.
func (l *Layout) aggCost(aggsize uint64, ncpu int) (uint64, bool) {
	worst, least := uint64(0), true
	for _, a := range l.shapes {
		n := aggEntries(aggsize, a)
		c := 2 * hashCost(n, a.key, a.value, !a.shared(), ncpu)
		worst = max(worst, c)
		least = least && n == minAggEntries
	}
	return worst, least
}

// dynVarEntries is the entries of each map of dynamic variables under
// dynvarsize.
func dynVarEntries(dynvarsize uint64) uint64 { return max(1, dynvarsize/DynVarBytes) }

// dynVarCost is what the maps of thread-locals and associative arrays
// take together under dynvarsize.
func (l *Layout) dynVarCost(dynvarsize uint64) (uint64, bool) {
	n := dynVarEntries(dynvarsize)
	c := hashCost(n, 16, 8, false, 1)
	c = addSat(c, hashCost(n, 16, l.threadRefSize(), false, 1))
	for _, a := range l.assocs {
		if a.keys != nil && a.err == "" {
			c = addSat(c, hashCost(n, l.keySize(a), l.valueSize(a), false, 1))
		}
	}
	return c, false
}

// hashCost is roughly what the kernel allocates for a preallocated hash
// map of n entries (htab_map_alloc): its buckets and its elements, a
// per-CPU map's values once for each CPU. Past what a hash map can
// hold, it is the most there is.
func hashCost(n uint64, key, value uint32, perCPU bool, ncpu int) uint64 {
	if n > maxHashEntry {
		return math.MaxUint64
	}
	k, v := uint64(key+7)&^7, uint64(value+7)&^7
	elem := htabElemBytes + k + v
	if perCPU {
		elem = htabElemBytes + k + 8 + v*uint64(ncpu)
	}
	hi, lo := bits.Mul64(n, elem)
	if hi != 0 {
		return math.MaxUint64
	}
	buckets := uint64(1) << bits.Len64(n-1)
	return addSat(lo, buckets*bucketBytes)
}

func addSat(a, b uint64) uint64 {
	if s, carry := bits.Add64(a, b, 0); carry == 0 {
		return s
	}
	return math.MaxUint64
}
