package bpf

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/cilium/ebpf/asm"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/record"
)

// An aggregation's key, as the record layout places it, is its ID and
// its records, a string's as long as strsize: @[execname]'s is 272
// bytes, every byte of which the kernel hashes and compares at each
// firing, though a task's name is 16 bytes with its NUL. An aggregation
// whose key holds such a record keeps in its map only the bytes of the
// records that can differ, packed (aggKey.segs): a firing moves them
// into place over the key it built before it looks the entry up, and a
// snapshot puts them back where the records are (Layout.AggKey), so
// that the consumer reads the key of the record layout.

// An aggKey is how an aggregation's map keeps its keys.
type aggKey struct {
	full  uint32   // bytes of the key in the record layout: the ID, then the records
	value uint32   // bytes of the map's value: the data, then AggTouched
	recs  []keyRec // the key's records
	// segs are the bytes the map keeps of each record, nil if it keeps
	// the whole key.
	segs []keySeg
}

// A keyRec is a record of an aggregation's key: its place in the key
// and, for a string every clause that aggregates computes from a
// variable of bounded length (execname, probefunc …), that length with
// its NUL, past which the record is zeroes; else 0.
type keyRec struct {
	off, size uint32
	bound     uint32
}

// boundedString returns the most bytes, with its NUL, of the string o
// computes, if o is a variable whose strings are shorter than strsize:
// execname (TASK_COMM_LEN) or one of the probe's names (the rooms of
// MapProbeNames); else 0.
func boundedString(o *dif.Object) uint32 {
	v, ok := builtinAlone(o)
	if !ok {
		return 0
	}
	switch v {
	case dif.VarExecname:
		return commLen
	case dif.VarProbeprov:
		return probeModOff - probeProvOff
	case dif.VarProbemod:
		return probeFuncOff - probeModOff
	case dif.VarProbefunc:
		return probeNameOff - probeFuncOff
	case dif.VarProbename:
		return probeNamesSize - probeNameOff
	}
	return 0
}

// A keySeg is a record's bytes in a map's key: size bytes at from in the
// record layout's key, at to in the map's.
type keySeg struct{ from, to, size uint32 }

// aggIDSize is the bytes of an aggregation's ID at the start of its key.
const aggIDSize = 4

// keyOf returns the key of aggregating action i of ep, as clause e
// computes it.
func keyOf(e *enabling.ECB, ep *record.EProbe, i int) *aggKey {
	a := &ep.Actions[i]
	k := &aggKey{full: a.Offset - a.AggBase, value: a.Size + AggTouched}
	// The key's records are those of the tuple actions just before.
	first := i
	for first > 0 && ep.Actions[first-1].InTuple {
		first--
	}
	for j := first; j < i; j++ {
		r := &ep.Actions[j]
		if r.Size == 0 {
			continue // a quantization's weight
		}
		if r.Offset < a.AggBase || r.Offset+r.Size > a.Offset {
			// Not where the key is: kept whole.
			k.recs = nil
			return k
		}
		rec := keyRec{off: r.Offset - a.AggBase, size: r.Size}
		if b := boundedString(e.Actions[j].DIFO); r.Type.Kind == dif.TypeString && b < r.Size {
			rec.bound = b
		}
		k.recs = append(k.recs, rec)
	}
	return k
}

// merge makes k the key of both k's clauses and o's: a record is
// bounded by the larger of their bounds, if both have one. A key whose records the clauses place
// differently (which the compiler does not do) is kept whole.
func (k *aggKey) merge(o *aggKey) {
	if k.full != o.full || k.value != o.value || len(k.recs) != len(o.recs) {
		k.recs = nil
		return
	}
	for i := range k.recs {
		if k.recs[i].off != o.recs[i].off || k.recs[i].size != o.recs[i].size {
			k.recs = nil
			return
		}
		if b := o.recs[i].bound; b == 0 || k.recs[i].bound == 0 {
			k.recs[i].bound = 0
		} else {
			k.recs[i].bound = max(k.recs[i].bound, b)
		}
	}
}

// pack sets k's segments: the ID, then each record, a bounded one as
// its bound's bytes, each at the next offset of its alignment in the
// record layout. A key with no bounded record is kept whole, as is one
// beyond the reach of a load's offset.
func (k *aggKey) pack() {
	if !slices.ContainsFunc(k.recs, func(r keyRec) bool { return r.bound != 0 }) || k.full > math.MaxInt16 {
		return
	}
	k.segs = []keySeg{{0, 0, aggIDSize}}
	to := uint32(aggIDSize)
	for _, r := range k.recs {
		size := r.size
		if r.bound != 0 {
			size = r.bound
		}
		align := r.off & -r.off // the largest power of two dividing off
		if align == 0 || align > 8 {
			align = 8
		}
		to = (to + align - 1) &^ (align - 1)
		k.segs = append(k.segs, keySeg{r.off, to, size})
		to += size
	}
}

// size returns the bytes of the map's keys.
func (k *aggKey) size() uint32 {
	if k.segs == nil {
		return k.full
	}
	last := k.segs[len(k.segs)-1]
	return last.to + last.size
}

// AggKey appends to dst the key of an entry of one of r's aggregation
// maps as the record layout places it, which is key itself unless the
// map keeps fewer bytes of it.
func (r *Runtime) AggKey(dst, key []byte) []byte { return r.layout.aggKey(dst, key) }

func (l *Layout) aggKey(dst, key []byte) []byte {
	if len(key) < aggIDSize {
		return append(dst, key...)
	}
	k := l.aggKeys[binary.NativeEndian.Uint32(key)]
	if k == nil || k.segs == nil || uint32(len(key)) != k.size() {
		return append(dst, key...)
	}
	start := len(dst)
	dst = append(dst, make([]byte, k.full)...)
	full := dst[start:]
	for _, s := range k.segs {
		copy(full[s.from:s.from+s.size], key[s.to:s.to+s.size])
	}
	return dst
}

// packKey moves the bytes of key k that its map keeps into place, from
// the key built at R1: each segment to its offset, in order (a segment
// moves toward the start, over bytes already moved), and zeroes between
// them.
func (b *builder) packKey(k *aggKey) {
	end := uint32(aggIDSize)
	for _, s := range k.segs[1:] {
		for ; end < s.to; end++ {
			b.emit(asm.StoreImm(asm.R1, int16(end), 0, asm.Byte))
		}
		for n := uint32(0); n < s.size; {
			sz, w := asm.DWord, uint32(8)
			switch rest := s.size - n; {
			case rest >= 8:
			case rest >= 4:
				sz, w = asm.Word, 4
			case rest >= 2:
				sz, w = asm.Half, 2
			default:
				sz, w = asm.Byte, 1
			}
			if s.from != s.to {
				b.emit(asm.LoadMem(asm.R2, asm.R1, int16(s.from+n), sz))
				b.emit(asm.StoreMem(asm.R1, int16(s.to+n), asm.R2, sz))
			}
			n += w
		}
		end = s.to + s.size
	}
}

// settle gives each aggregation its map, by the shape of the key its map
// keeps and of its value, once every clause is added.
func (l *Layout) settle() {
	if l.settled {
		return
	}
	l.settled = true
	ids := make([]uint32, 0, len(l.aggKeys))
	for id := range l.aggKeys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		k := l.aggKeys[id]
		k.pack()
		// Aggregations of one shape share a map, their keys starting
		// with their IDs: a program may use 64 maps at most.
		shape := aggMap{key: k.size(), value: k.value}
		i := slices.Index(l.shapes, shape)
		if i < 0 {
			i = len(l.shapes)
			l.shapes = append(l.shapes, shape)
		}
		l.aggs[id] = i
	}
}
