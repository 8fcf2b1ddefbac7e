package consumer

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/record"
)

// randomAggs returns a consumer with n entries of three aggregations
// (sum, avg, quantize), with ties in their values and keys of an
// integer, a string and another integer.
func randomAggs(n int) *Consumer {
	rnd := rand.New(rand.NewPCG(1, 2))
	// The key's records: the variable, a 4-byte integer, a 16-byte
	// string, an 8-byte integer; then the value.
	keyRecs := []record.Rec{{Size: 4, Offset: 4}, {Size: 4, Offset: 8}, {Size: 16, Offset: 12}, {Size: 8, Offset: 32}}
	descOf := func(varid uint32, act dof.ActKind, size uint32) *record.AggDesc {
		recs := append(slices.Clone(keyRecs), record.Rec{Action: act, Size: size, Offset: 40})
		return &record.AggDesc{ID: varid, VarID: varid, Size: 40 + size, Recs: recs}
	}
	descs := []*record.AggDesc{
		descOf(1, dof.AggSum, 8),
		descOf(2, dof.AggAvg, 16),
		descOf(3, dof.AggQuantize, record.QuantizeNBuckets*8),
	}
	c := &Consumer{}
	c.aggs.printed = map[*record.AggDesc]bool{}
	for range n {
		d := descs[rnd.IntN(len(descs))]
		data := make([]byte, d.Size)
		binary.LittleEndian.PutUint32(data, d.ID)
		binary.LittleEndian.PutUint32(data[4:], d.VarID)
		binary.LittleEndian.PutUint32(data[8:], uint32(rnd.IntN(4)))
		copy(data[12:], fmt.Sprintf("s%d", rnd.IntN(3)))
		binary.LittleEndian.PutUint64(data[32:], uint64(rnd.IntN(50))-10)
		v := data[40:]
		switch d.Recs[len(d.Recs)-1].Action {
		case dof.AggSum:
			binary.LittleEndian.PutUint64(v, uint64(rnd.IntN(5))-2)
		case dof.AggAvg:
			binary.LittleEndian.PutUint64(v, uint64(rnd.IntN(3)))
			binary.LittleEndian.PutUint64(v[8:], uint64(rnd.IntN(9)))
		case dof.AggQuantize:
			for range 2 {
				i := record.QuantizeZeroBucket + rnd.IntN(5) - 2
				binary.LittleEndian.PutUint64(v[8*i:], uint64(rnd.IntN(3)))
			}
		}
		c.aggs.entries = append(c.aggs.entries, &aggEntry{desc: d, varid: d.VarID, data: data, normal: 1})
	}
	return c
}

// valueCmp compares two entries' values from their words, as
// dt_aggregate_valcmp.
func valueCmp(l, r *aggEntry) int {
	act, ld := l.value()
	_, rd := r.value()
	lw, rw := words(ld), words(rd)
	switch act.Action {
	case dof.AggAvg:
		avg := func(w []int64) int64 {
			if w[0] == 0 {
				return 0
			}
			return w[1] / w[0]
		}
		return cmpInt(avg(lw), avg(rw))
	case dof.AggQuantize:
		lt, lz := weighted(act.Action, lw)
		rt, rz := weighted(act.Action, rw)
		if n := lt.Cmp(rt); n != 0 {
			return n
		}
		return cmpInt(lz, rz)
	}
	return cmpInt(lw[0], rw[0])
}

// TestSortedOrder checks sorted, which computes what it compares once
// an entry, against a stable sort comparing the entries themselves as
// dt_aggregate_varvalcmp and dt_aggregate_varkeycmp do, for every
// ordering option, on entries with ties in their values and keys of an
// integer, a string and another integer.
func TestSortedOrder(t *testing.T) {
	c := randomAggs(3000)
	for _, o := range []sortOpts{
		{}, {rev: true}, {key: true}, {key: true, rev: true},
		{keypos: 1}, {keypos: 2, rev: true}, {key: true, keypos: 1}, {key: true, keypos: 2}, {key: true, keypos: 7},
	} {
		for _, varid := range []uint32{0, 2} {
			var want []*aggEntry
			for _, e := range c.aggs.entries {
				if varid == 0 || e.varid == varid {
					want = append(want, e)
				}
			}
			slices.SortStableFunc(want, func(l, r *aggEntry) int {
				n := cmpInt(l.varid, r.varid)
				if n == 0 && !o.key {
					n = valueCmp(l, r)
				}
				if n == 0 {
					n = keycmp(l, r, o.keypos)
				}
				if o.rev {
					return -n
				}
				return n
			})
			got := c.sorted(varid, o)
			if diff := cmp.Diff(index(c, want), index(c, got)); diff != "" {
				t.Errorf("%+v, variable %d: entries by their place in the aggregation (-want +got):\n%s", o, varid, diff)
			}
		}
	}
}

// index returns the places of es in c's entries.
func index(c *Consumer, es []*aggEntry) []int {
	is := make([]int, len(es))
	for i, e := range es {
		is[i] = slices.Index(c.aggs.entries, e)
	}
	return is
}

// TestJoinedOrder checks the order of the rows of a printa() of several
// aggregations, which the sort finds with what it compares computed
// once a row, against a stable sort comparing the rows' entries as
// dt_aggregate_bundlecmp does, for every ordering option.
func TestJoinedOrder(t *testing.T) {
	c := randomAggs(3000)
	sum := c.aggs.entries[slices.IndexFunc(c.aggs.entries, func(e *aggEntry) bool { return e.varid == 1 })]
	for i, e := range c.aggs.entries {
		// More sums, of keys the averages lack.
		if e.varid == 3 {
			c.aggs.entries[i] = &aggEntry{desc: sum.desc, varid: 1, data: slices.Clone(sum.data), normal: 1}
			copy(c.aggs.entries[i].data[12:], fmt.Sprintf("t%d", i))
		}
	}
	varids := []uint32{1, 2}
	for _, o := range []sortOpts{
		{}, {rev: true}, {key: true}, {key: true, rev: true}, {pos: 1}, {pos: 1, rev: true}, {pos: 5},
		{keypos: 1}, {key: true, keypos: 2}, {key: true, keypos: 1, pos: 1},
	} {
		c.sortOpts = o
		got, err := c.joined(varids)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(got)
		slices.SortFunc(want, func(l, r *joinedRow) int { return cmpInt(l.pos, r.pos) })
		pos := o.pos
		if pos >= len(varids) {
			pos = 0
		}
		slices.SortStableFunc(want, func(l, r *joinedRow) int {
			n := 0
			if o.key {
				n = keycmp(l.key, r.key, o.keypos)
			}
			for i := 0; n == 0 && i < len(varids); i++ {
				j := (i + pos) % len(varids)
				n = valueCmp(l.vals[j], r.vals[j])
			}
			if n == 0 && !o.key {
				n = keycmp(l.key, r.key, o.keypos)
			}
			if o.rev {
				return -n
			}
			return n
		})
		at := func(rows []*joinedRow) []int {
			ps := make([]int, len(rows))
			for i, r := range rows {
				ps[i] = r.pos
			}
			return ps
		}
		if diff := cmp.Diff(at(want), at(got)); diff != "" {
			t.Errorf("%+v: rows by their place before the sort (-want +got):\n%s", o, diff)
		}
	}
}
