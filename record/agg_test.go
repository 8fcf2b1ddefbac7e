package record

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

// TestBuckets checks which bucket each quantizing function counts a
// value in, against dtrace_aggregate_quantize, _lquantize and
// _llquantize worked by hand.
func TestBuckets(t *testing.T) {
	for _, tt := range []struct {
		v    int64
		want int
	}{
		{math.MinInt64, 0}, {-(1 << 62), 0}, {-(1 << 62) + 1, 1}, {-2, 61}, {-1, 62}, {0, 63}, {1, 64},
		{2, 65}, {3, 65}, {4, 66}, {1000, 73}, {1 << 62, 126}, {math.MaxInt64, 126},
	} {
		if got := QuantizeBucket(tt.v); got != tt.want {
			t.Errorf("QuantizeBucket(%d) = %d, want %d", tt.v, got, tt.want)
		}
	}
	// lquantize(v, -100, 1100, 100): < -100, then 12 levels, then >= 1100.
	lq := dof.LQuantizeArg(-100, 100, 12)
	for _, tt := range []struct {
		v    int64
		want int
	}{
		{-101, 0}, {-100, 1}, {-1, 1}, {0, 2}, {99, 2}, {1099, 12}, {1100, 13}, {1 << 20, 13},
		// dtrace compares the value's low 32 bits.
		{1<<32 - 50, 1}, {1 << 40, 2},
	} {
		if got := LQuantizeBucket(lq, tt.v); got != tt.want {
			t.Errorf("LQuantizeBucket(%d) = %d, want %d", tt.v, got, tt.want)
		}
	}
	// llquantize(v, 10, 0, 2, 10): < 1, 1..9, 10..90, 100..900, >= 1000.
	llq := dof.LLQuantizeArg(10, 0, 2, 10)
	for _, tt := range []struct {
		v    int64
		want int
	}{
		{-5, 0}, {0, 0}, {1, 1}, {9, 9}, {10, 10}, {19, 10}, {20, 11}, {99, 18}, {100, 19}, {999, 27}, {1000, 28},
		{math.MaxInt64, 28},
	} {
		if got := LLQuantizeBucket(llq, tt.v); got != tt.want {
			t.Errorf("LLQuantizeBucket(%d) = %d, want %d", tt.v, got, tt.want)
		}
	}
}

// aggECB lays out @[key] = fn(v) with an 8-byte key and returns its
// enabled probe.
func aggECB(t *testing.T, fn dof.ActKind, arg uint64, withIncr bool) *EProbe {
	t.Helper()
	acts := []enabling.Action{act(dof.ActDIFExpr, i8), act(dof.ActDIFExpr, i8)}
	a := agg(fn, 2, arg)
	if withIncr {
		acts = append(acts, act(dof.ActDIFExpr, void))
		a.NTuple = 3
	}
	a.UArg = 1
	if fn != dof.AggCount {
		a.DIFO = act(dof.ActDIFExpr, i8).DIFO
	}
	l := NewLayout(DefaultOptions)
	eps, err := l.Add(&enabling.ECB{Actions: append(acts, a)}, []Probe{{ID: ProbeBegin}})
	if err != nil {
		t.Fatal(err)
	}
	return eps[0]
}

// entries reads an aggregation buffer back: each entry's key (the
// record after the variable ID) and data words.
func entries(b []byte, ep *EProbe) map[int64][]int64 {
	a := &ep.Actions[len(ep.Actions)-1]
	size := int(a.Offset + a.Size - a.AggBase)
	keyOff := int(ep.Actions[1].Offset - a.AggBase)
	dataOff := int(a.Offset - a.AggBase)
	m := map[int64][]int64{}
	for off := 0; off < len(b); {
		if binary.LittleEndian.Uint32(b[off:]) == AggIDNone {
			off += AggIDSize
			continue
		}
		e := b[off : off+size]
		var w []int64
		for i := dataOff; i < size; i += 8 {
			w = append(w, int64(binary.LittleEndian.Uint64(e[i:])))
		}
		m[int64(binary.LittleEndian.Uint64(e[keyOff:]))] = w
		off += size
	}
	return m
}

// TestAggregate checks the data each aggregating function keeps per
// key, as dtrace_aggregate and its functions keep it.
func TestAggregate(t *testing.T) {
	type fire struct{ key, v, incr int64 }
	lq := uint64(10)<<48 | uint64(3)<<32 // lquantize(v, 0, 30, 10)
	tests := []struct {
		name  string
		fn    dof.ActKind
		arg   uint64
		incr  bool
		fires []fire
		want  map[int64][]int64
	}{
		{"count", dof.AggCount, 0, false, []fire{{1, 0, 0}, {1, 0, 0}, {2, 0, 0}}, map[int64][]int64{1: {2}, 2: {1}}},
		{"sum", dof.AggSum, 0, false, []fire{{1, 5, 0}, {1, -7, 0}}, map[int64][]int64{1: {-2}}},
		{"min starts at the largest value", dof.AggMin, 0, false, []fire{{1, 5, 0}, {1, 3, 0}, {1, 4, 0}}, map[int64][]int64{1: {3}}},
		{"max starts at the smallest value", dof.AggMax, 0, false, []fire{{1, -5, 0}, {1, -3, 0}}, map[int64][]int64{1: {-3}}},
		{"avg: count and sum", dof.AggAvg, 0, false, []fire{{1, 10, 0}, {1, 20, 0}}, map[int64][]int64{1: {2, 30}}},
		{"stddev: count, sum, squares in 128 bits", dof.AggStddev, 0, false,
			[]fire{{1, 5000000000, 0}, {1, -5000000000, 0}, {1, 5000000000, 0}, {1, 5000000000, 0}},
			// 4 × 2.5e19 = 1e20 = 5 × 2^64 + 7766279631452241920.
			map[int64][]int64{1: {4, 10000000000, 7766279631452241920, 5}}},
		{"lquantize keeps its parameters first", dof.AggLQuantize, lq, false, []fire{{1, -1, 0}, {1, 15, 0}, {1, 30, 0}},
			map[int64][]int64{1: {int64(lq), 1, 0, 1, 0, 1}}},
		{"quantize with an increment", dof.AggQuantize, 0, true, []fire{{1, 1, 5}, {1, 1, -2}},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := aggECB(t, tt.fn, tt.arg, tt.incr)
			b := NewAggBuffer(1 << 12)
			for _, f := range tt.fires {
				vals := make([]Value, len(ep.Actions))
				vals[0].Int, vals[1].Int = 1, uint64(f.key)
				n := len(ep.Actions) - 1
				vals[n].Int = uint64(f.v)
				if tt.incr {
					vals[n-1].Int = uint64(f.incr)
				}
				if err := b.Aggregate(ep, n, vals); err != nil {
					t.Fatal(err)
				}
			}
			got := entries(b.Bytes(), ep)
			want := tt.want
			if tt.fn == dof.AggQuantize {
				w := make([]int64, QuantizeNBuckets)
				w[QuantizeBucket(1)] = 3
				want = map[int64][]int64{1: w}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			b.Reset()
			if len(b.Bytes()) != 0 {
				t.Errorf("Reset left %d bytes", len(b.Bytes()))
			}
		})
	}
}

// TestAggregateDrops checks that an entry the buffer has no room for
// is dropped and counted, and that an existing entry still aggregates.
func TestAggregateDrops(t *testing.T) {
	ep := aggECB(t, dof.AggCount, 0, false)
	a := &ep.Actions[len(ep.Actions)-1]
	size := int(a.Offset + a.Size - a.AggBase)
	b := NewAggBuffer(size)
	for _, key := range []uint64{1, 2, 1} {
		vals := []Value{{Int: 1}, {Int: key}, {}}
		if err := b.Aggregate(ep, 2, vals); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := entries(b.Bytes(), ep), map[int64][]int64{1: {2}}; !cmp.Equal(got, want) {
		t.Errorf("entries = %v, want %v", got, want)
	}
	if b.Drops() != 1 {
		t.Errorf("Drops() = %d, want 1", b.Drops())
	}
	if err := b.Aggregate(ep, 0, make([]Value, 3)); err == nil {
		t.Error("Aggregate of a non-aggregating action: no error")
	}
}
