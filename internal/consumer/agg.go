package consumer

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"
	"slices"
	"strings"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/record"
)

// An aggEntry is one aggregation's value for one key, as the consumer
// keeps it across snapshots (dt_ahashent_t, dtrace_aggdata_t).
type aggEntry struct {
	desc   *record.AggDesc
	varid  uint32 // the aggregation variable (dtagd_varid)
	data   []byte // the entry as the kernel laid it out: ID, key, data
	normal uint64 // normalize()'s divisor (dtada_normal)
	key    string // what the consumer finds the entry by
}

// value returns the entry's aggregation record and its data.
func (e *aggEntry) value() (*record.Rec, []byte) {
	r := &e.desc.Recs[len(e.desc.Recs)-1]
	return r, e.data[r.Offset : r.Offset+r.Size]
}

// aggState is the consumer's copy of the aggregations.
type aggState struct {
	entries []*aggEntry
	byKey   map[string]*aggEntry
	printed map[*record.AggDesc]bool // printed by printa() (DTRACE_AGD_PRINTED)

	// New entries and their data are carved from chunks, a few
	// allocations for thousands of keys rather than two a key.
	free     []aggEntry
	freeData []byte
	key      []byte // the key Aggregate looks up, reused
}

// aggMinEntry is the fewest bytes an entry of an aggregation buffer
// takes: the ID, the variable and a count.
const aggMinEntry = 16

// aggChunk is the entries, and the bytes of data, a chunk holds.
const aggChunk = 1024

// newEntry returns a zero entry.
func (s *aggState) newEntry() *aggEntry {
	if len(s.free) == 0 {
		s.free = make([]aggEntry, aggChunk)
	}
	e := &s.free[0]
	s.free = s.free[1:]
	return e
}

// clone returns a copy of b, which nothing else appends to.
func (s *aggState) clone(b []byte) []byte {
	if len(b) > cap(s.freeData)-len(s.freeData) {
		s.freeData = make([]byte, 0, max(aggChunk*64, len(b)))
	}
	n := len(s.freeData)
	s.freeData = append(s.freeData, b...)
	return s.freeData[n:len(s.freeData):len(s.freeData)]
}

// Aggregate takes one CPU's aggregation buffer (what the backend's
// record.AggBuffer holds, or DTRACEIOC_AGGSNAP hands) into the
// consumer's aggregations, as dt_aggregate_snap_cpu does: an entry of
// a key already seen (for the same aggregation variable) is aggregated
// into it with the aggregating function, another is added. The backend
// then empties its buffer. drops are the aggregations the buffer
// dropped, reported as dtrace reports them.
func (c *Consumer) Aggregate(cpu int, data []byte, drops uint64) error {
	if c.aggs.byKey == nil {
		c.aggs.printed = make(map[*record.AggDesc]bool)
	}
	if len(c.aggs.byKey) == 0 {
		// Room for as many keys as the buffer may hold, not a map
		// grown (and rehashed) a doubling at a time.
		c.aggs.byKey = make(map[string]*aggEntry, len(data)/aggMinEntry)
	}
	for off := 0; off < len(data); {
		if off+record.AggIDSize > len(data) {
			return fmt.Errorf("aggregation buffer offset %d: truncated ID", off)
		}
		id := binary.LittleEndian.Uint32(data[off:])
		if id == record.AggIDNone {
			off += record.AggIDSize
			continue
		}
		desc, err := c.desc.Agg(id)
		if err != nil {
			return fmt.Errorf("aggregation buffer offset %d: %v", off, err)
		}
		if len(desc.Recs) < 2 || off+int(desc.Size) > len(data) {
			return fmt.Errorf("aggregation buffer offset %d: %s", off, errDOffset)
		}
		if !aggSizeOK(&desc.Recs[len(desc.Recs)-1]) || desc.Recs[0].Size < 4 {
			return fmt.Errorf("aggregation %d: %s", id, errDMismatch)
		}
		ent := data[off : off+int(desc.Size)]
		off += int(desc.Size)
		r0 := desc.Recs[0]
		varid := binary.LittleEndian.Uint32(ent[r0.Offset:])
		// The variable, then each record's size and bytes: found in the
		// map without a string made for it, one made only for a new key.
		k := binary.LittleEndian.AppendUint32(c.aggs.key[:0], varid)
		for _, r := range desc.Recs[:len(desc.Recs)-1] {
			if uint64(r.Offset)+uint64(r.Size) > uint64(len(ent)) {
				return fmt.Errorf("aggregation %d: %s", id, errDOffset)
			}
			k = binary.LittleEndian.AppendUint32(k, r.Size)
			k = append(k, ent[r.Offset:r.Offset+r.Size]...)
		}
		c.aggs.key = k
		if e, ok := c.aggs.byKey[string(k)]; ok {
			r, dst := e.value()
			nr := &desc.Recs[len(desc.Recs)-1]
			if nr.Action != r.Action || nr.Size != r.Size {
				return fmt.Errorf("aggregation %d: %s", id, errDMismatch)
			}
			merge(r.Action, dst, ent[nr.Offset:nr.Offset+nr.Size])
			continue
		}
		e := c.aggs.newEntry()
		*e = aggEntry{desc: desc, varid: varid, data: c.aggs.clone(ent), normal: 1, key: string(k)}
		c.aggs.byKey[e.key] = e
		c.aggs.entries = append(c.aggs.entries, e)
	}
	return c.ReportDrop(Drop{Kind: DropAggregation, CPU: cpu, Count: drops})
}

// aggSizeOK reports whether an aggregation's record has the size its
// function's data takes.
func aggSizeOK(r *record.Rec) bool {
	switch r.Action {
	case dof.AggCount, dof.AggSum, dof.AggMin, dof.AggMax:
		return r.Size == 8
	case dof.AggAvg:
		return r.Size == 16
	case dof.AggStddev:
		return r.Size == 32
	case dof.AggQuantize:
		return r.Size == record.QuantizeNBuckets*8
	case dof.AggLQuantize, dof.AggLLQuantize:
		return r.Size >= 16 && r.Size%8 == 0
	}
	return false
}

// merge aggregates src into dst, both an aggregation's data, as the
// consumer's dt_aggregate_* functions do: min and max word by word,
// the quantizations but for lquantize's and llquantize's parameters,
// stddev's sum of squares as a 128-bit number, everything else (count,
// sum, avg, quantize) summed word by word.
func merge(act dof.ActKind, dst, src []byte) {
	start := 0
	switch act {
	case dof.AggLQuantize, dof.AggLLQuantize:
		start = 8
	case dof.AggStddev:
		// The count and the sum, then the sum of squares in 128 bits
		// (dt_aggregate_stddev).
		lo, carry := bits.Add64(le64(dst[16:]), le64(src[16:]), 0)
		hi, _ := bits.Add64(le64(dst[24:]), le64(src[24:]), carry)
		binary.LittleEndian.PutUint64(dst[16:], lo)
		binary.LittleEndian.PutUint64(dst[24:], hi)
		dst = dst[:16]
	}
	for i := start; i+8 <= len(dst); i += 8 {
		d, s := int64(le64(dst[i:])), int64(le64(src[i:]))
		switch act {
		case dof.AggMin:
			d = min(d, s)
		case dof.AggMax:
			d = max(d, s)
		default:
			d += s
		}
		binary.LittleEndian.PutUint64(dst[i:], uint64(d))
	}
}

// words returns an aggregation's data as 64-bit words.
func words(b []byte) []int64 {
	w := make([]int64, len(b)/8)
	for i := range w {
		w[i] = int64(le64(b[8*i:]))
	}
	return w
}

// sortOpts are the options that order the aggregations' entries, and
// those that draw their histograms.
type sortOpts struct {
	zoom   bool // aggzoom
	hist   bool // agghist: sum() and count() drawn as bars
	utf8   bool // encoding=utf8: bars of UTF-8 block elements
	pack   bool // aggpack: quantizations packed in a line
	key    bool // aggsortkey
	rev    bool // aggsortrev
	keypos int  // aggsortkeypos
	pos    int  // aggsortpos: the aggregation of a printa() of several compared first
}

// sorted returns the entries of aggregation variable varid (for 0,
// those of every variable printa() has not printed) in dtrace's order
// (dt_aggregate_qsort with dt_aggregate_varvalcmp, or
// dt_aggregate_varkeycmp with aggsortkey): by variable, then value then
// key, or key alone; aggsortrev reverses it. Entries that compare equal
// keep the order they came in.
func (c *Consumer) sorted(varid uint32, o sortOpts) []*aggEntry {
	// What the comparisons need is computed once an entry, not at each
	// of the n log n comparisons: the value, and the key record
	// compared first as an integer.
	type item struct {
		e   *aggEntry
		v   sortValue
		k0  firstRec
		pos int32
	}
	items := make([]item, 0, len(c.aggs.entries))
	for _, e := range c.aggs.entries {
		if varid == 0 && !c.aggs.printed[e.desc] || varid != 0 && e.varid == varid {
			it := item{e: e, pos: int32(len(items))}
			if !o.key {
				it.v = valueOf(e)
			}
			it.k0 = firstKey(e, o.keypos)
			items = append(items, it)
		}
	}
	slices.SortFunc(items, func(l, r item) int {
		n := cmpInt(l.e.varid, r.e.varid)
		if n == 0 && !o.key {
			n = l.v.cmp(r.v)
		}
		if n == 0 {
			n = keyOrder(l.e, r.e, l.k0, r.k0, o.keypos)
		}
		if o.rev {
			n = -n
		}
		if n == 0 {
			n = cmpInt(l.pos, r.pos)
		}
		return n
	})
	es := make([]*aggEntry, len(items))
	for i, it := range items {
		es[i] = it.e
	}
	return es
}

// A firstRec is the key record keycmp compares first, if it is an
// integer: what the sorts compare before calling it.
type firstRec struct {
	v  uint64
	ok bool
}

// firstKey returns the key record keycmp compares first, as the
// unsigned integer it compares, if it is one.
func firstKey(e *aggEntry, keypos int) firstRec {
	nrecs := len(e.desc.Recs) - 1
	if nrecs < 2 {
		return firstRec{}
	}
	if keypos+1 >= nrecs {
		keypos = 0
	}
	ndx := 1 + keypos
	if ndx >= nrecs {
		ndx = ndx - nrecs + 1
	}
	r := &e.desc.Recs[ndx]
	b := e.data[r.Offset : r.Offset+r.Size]
	switch r.Size {
	case 8:
		return firstRec{le64(b), true}
	case 4:
		return firstRec{uint64(binary.LittleEndian.Uint32(b)), true}
	case 2:
		return firstRec{uint64(binary.LittleEndian.Uint16(b)), true}
	case 1:
		return firstRec{uint64(b[0]), true}
	}
	return firstRec{}
}

// keyOrder is keycmp of l and r, whose first records keycmp compares
// are lk and rk: compared first, without keycmp, when they are
// integers and the keys have one layout (one aggregation).
func keyOrder(l, r *aggEntry, lk, rk firstRec, keypos int) int {
	if lk.ok && rk.ok && l.desc == r.desc {
		if n := cmpInt(lk.v, rk.v); n != 0 {
			return n
		}
	}
	return keycmp(l, r, keypos)
}

func cmpInt[T int64 | uint64 | uint32 | int32 | int | float64](l, r T) int {
	switch {
	case l < r:
		return -1
	case l > r:
		return 1
	}
	return 0
}

// keycmp compares the keys of two entries as dt_aggregate_keycmp does:
// by their number of records, then record by record from aggsortkeypos
// on, round, each by size, then as an unsigned integer or byte by byte.
func keycmp(l, r *aggEntry, keypos int) int {
	if n := cmpInt(len(l.desc.Recs), len(r.desc.Recs)); n != 0 {
		return n
	}
	nrecs := len(l.desc.Recs) - 1
	if keypos+1 >= nrecs {
		keypos = 0
	}
	for i := 1; i < nrecs; i++ {
		ndx := i + keypos
		if ndx >= nrecs {
			ndx = ndx - nrecs + 1
		}
		lr, rr := &l.desc.Recs[ndx], &r.desc.Recs[ndx]
		if n := cmpInt(lr.Size, rr.Size); n != 0 {
			return n
		}
		ld := l.data[lr.Offset : lr.Offset+lr.Size]
		rd := r.data[rr.Offset : rr.Offset+rr.Size]
		var n int
		switch lr.Size {
		case 8:
			n = cmpInt(le64(ld), le64(rd))
		case 4:
			n = cmpInt(binary.LittleEndian.Uint32(ld), binary.LittleEndian.Uint32(rd))
		case 2:
			n = cmpInt(uint32(binary.LittleEndian.Uint16(ld)), uint32(binary.LittleEndian.Uint16(rd)))
		case 1:
			n = cmpInt(uint32(ld[0]), uint32(rd[0]))
		default:
			switch lr.Action {
			case dof.ActUMod, dof.ActUAddr, dof.ActUSym:
				// The pid, then the address.
				n = cmpInt(le64(ld), le64(rd))
				if n == 0 {
					n = cmpInt(le64(ld[8:]), le64(rd[8:]))
				}
			default:
				n = strings.Compare(string(ld), string(rd))
			}
		}
		if n != 0 {
			return n
		}
	}
	return 0
}

// A sortValue is what dt_aggregate_valcmp compares of an entry: its
// value (an average for avg(), a standard deviation for stddev(), as
// an unsigned number), or for a quantization its counts weighted by
// their buckets' values, then its zero bucket's count.
type sortValue struct {
	weighted *big.Float // quantizations
	n        int64
	act      dof.ActKind
}

// valueOf returns what the sorts compare of e's value.
func valueOf(e *aggEntry) sortValue {
	r, b := e.value()
	v := sortValue{act: r.Action}
	switch r.Action {
	case dof.AggAvg:
		if n := int64(le64(b)); n != 0 {
			v.n = int64(le64(b[8:])) / n
		}
	case dof.AggStddev:
		v.n = int64(stddev(words(b), 1))
	case dof.AggQuantize, dof.AggLQuantize, dof.AggLLQuantize:
		v.weighted, v.n = weighted(r.Action, words(b))
	default:
		v.n = int64(le64(b))
	}
	return v
}

// cmp compares two values of one aggregation.
func (l sortValue) cmp(r sortValue) int {
	switch l.act {
	case dof.AggStddev:
		return cmpInt(uint64(l.n), uint64(r.n))
	case dof.AggQuantize, dof.AggLQuantize, dof.AggLLQuantize:
		if n := l.weighted.Cmp(r.weighted); n != 0 {
			return n
		}
	}
	return cmpInt(l.n, r.n)
}

// weighted returns a quantization's counts weighted by their buckets'
// values, and the count of its zero bucket, on which dtrace orders
// quantizations (dt_aggregate_quantizedcmp, lquantizedsum and
// lquantizedzero): lquantize's underflow bucket weighs base-1 and its
// overflow bucket the limit+1.
func weighted(act dof.ActKind, w []int64) (*big.Float, int64) {
	// In long double's 64-bit mantissa: float64 would make weights
	// near 2^63 equal that dtrace tells apart.
	ld := func(n int64) *big.Float { return new(big.Float).SetPrec(64).SetInt64(n) }
	total := ld(0)
	var zero int64
	mulAdd := func(val, count int64) {
		total.Add(total, ld(0).Mul(ld(val), ld(count)))
	}
	add := func(val, count int64) {
		mulAdd(val, count)
		if val == 0 {
			zero = count
		}
	}
	switch act {
	case dof.AggQuantize:
		for i, n := range w {
			add(record.QuantizeBucketValue(i), n)
		}
	case dof.AggLQuantize:
		base32, step, levels := dof.LQuantizeParams(uint64(w[0]))
		base := int64(base32)
		b := w[1:]
		mulAdd(base-1, b[0])
		zero = 0
		if base-1 == 0 {
			zero = b[0]
		}
		for i := range int(levels) {
			add(base, b[i+1])
			base += int64(step)
		}
		mulAdd(base+1, b[levels+1])
		if base+1 == 0 {
			zero = b[levels+1]
		}
	case dof.AggLLQuantize:
		vals, _ := llquantizeValues(uint64(w[0]), len(w)-1)
		for i, v := range vals {
			add(v, w[i+1])
		}
	}
	return total, zero
}

// llquantizeValues returns the lowest value of each of llquantize's n
// buckets: 0 for the underflow bucket, then each step of each order,
// and the index of the overflow bucket, the one after the last step of
// order high (n or more when there is none).
func llquantizeValues(arg uint64, n int) (vals []int64, over int) {
	factor, low, high, nsteps := dof.LLQuantizeParams(arg)
	vals = make([]int64, 0, n)
	vals = append(vals, 0)
	value := int64(1)
	for range low {
		value *= int64(factor)
	}
	next := value * int64(factor)
	step := int64(1)
	if next > int64(nsteps) {
		step = next / int64(nsteps)
	}
	order := int(low)
	over = n
	for len(vals) < n {
		vals = append(vals, value)
		if value += step; value != next {
			continue
		}
		if order++; order == int(high)+1 {
			over = len(vals)
		}
		next = value * int64(factor)
		step = 1
		if next > int64(nsteps) {
			step = next / int64(nsteps)
		}
	}
	return vals, over
}

// stddev is dt_stddev: the standard deviation of a stddev()'s data
// normalized by normal, in integers: the square root, rounded down, of
// the average of the squares (each divided by normal²) less the square
// of the average (divided by normal).
func stddev(w []int64, normal uint64) uint64 {
	if w[0] == 0 {
		return 0
	}
	avg := w[1] / int64(normal) / w[0]
	if avg < 0 {
		avg = -avg
	}
	sq := new(big.Int).Mul(big.NewInt(avg), big.NewInt(avg))
	sumsq := new(big.Int).Lsh(new(big.Int).SetUint64(uint64(w[3])), 64)
	sumsq.Or(sumsq, new(big.Int).SetUint64(uint64(w[2])))
	n := new(big.Int).SetUint64(normal)
	sumsq.Quo(sumsq, n.Mul(n, n))
	sumsq.Quo(sumsq, new(big.Int).SetUint64(uint64(w[0])))
	sumsq.Sub(sumsq, sq)
	if sumsq.Sign() < 0 {
		// dt_subtract_128 wraps around; the root of what it leaves.
		sumsq.Add(sumsq, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	return sumsq.Sqrt(sumsq).Uint64()
}

// recInt returns an integer record's value, sign-extended.
func recInt(b []byte) int64 {
	switch len(b) {
	case 1:
		return int64(int8(b[0]))
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b)))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b)))
	case 8:
		return int64(le64(b))
	}
	return 0
}

// libact carries out the library action whose first record is i of
// the firing, as dt_consume_cpu does, and returns how many records it
// took: clear(), normalize(), denormalize() and trunc() on the
// aggregations as snapped, setopt() on the consumer's options,
// ftruncate() on the output.
func (c *Consumer) libact(f *record.Firing, i int) (int, error) {
	recs := f.EProbe.Recs
	rec := &recs[i]
	operand := func() ([]byte, error) {
		if i+1 >= len(recs) || recs[i+1].Action != dof.ActLibAct || recs[i+1].Arg != rec.Arg {
			return nil, fmt.Errorf("%s", errDMismatch)
		}
		return f.Rec(i + 1), nil
	}
	id := uint32(recInt(f.Rec(i)))
	switch rec.Arg {
	case dof.DActFtruncate:
		return 1, c.ftruncate()
	case dof.DActClear:
		for _, e := range c.aggs.entries {
			if e.varid == id {
				r, b := e.value()
				if r.Action == dof.AggLQuantize || r.Action == dof.AggLLQuantize {
					b = b[8:] // the parameters stay
				}
				clear(b)
			}
		}
		return 1, nil
	case dof.DActDenormalize:
		for _, e := range c.aggs.entries {
			if e.varid == id {
				e.normal = 1
			}
		}
		return 1, nil
	case dof.DActNormalize:
		b, err := operand()
		if err != nil {
			return 0, err
		}
		normal := uint64(recInt(b))
		for _, e := range c.aggs.entries {
			if e.varid == id {
				// dt_aggwalk_rval: a normalization of 0 is refused, and
				// leaves the entry denormalized.
				e.normal = max(normal, 1)
			}
		}
		return 2, nil
	case dof.DActTrunc:
		b, err := operand()
		if err != nil {
			return 0, err
		}
		c.trunc(id, recInt(b))
		return 2, nil
	case dof.DActSetopt:
		b, err := operand()
		if err != nil {
			return 0, err
		}
		c.setopt(cstring(f.Rec(i)), cstring(b))
		return 2, nil
	}
	return 0, fmt.Errorf("unknown library action %d", rec.Arg)
}

// trunc keeps the n entries of aggregation variable id with the
// largest values (the -n smallest for n < 0), none for n == 0, as
// dt_trunc does: by value then key, whatever the sort options.
func (c *Consumer) trunc(id uint32, n int64) {
	es := c.sorted(id, sortOpts{rev: n > 0})
	keep := map[*aggEntry]bool{}
	for i, e := range es {
		keep[e] = uint64(i) < absInt(n)
	}
	var rest []*aggEntry
	for _, e := range c.aggs.entries {
		if k, ok := keep[e]; ok && !k {
			delete(c.aggs.byKey, e.key)
			continue
		}
		rest = append(rest, e)
	}
	c.aggs.entries = rest
}

// setopt sets one of the options the consumer applies as it runs
// (dt_setopt); a value of "" sets a boolean option. Another option is
// reported as dtrace reports one it cannot set.
func (c *Consumer) setopt(name, value string) {
	on, ok := optionBool(value)
	var n int
	isInt := false
	if _, err := fmt.Sscan(value, &n); err == nil && n >= 0 {
		isInt = true
	}
	switch {
	case name == "quiet" && ok:
		c.cfg.Quiet = on
	case name == "aggsortkey" && ok:
		c.sortOpts.key = on
	case name == "aggsortrev" && ok:
		c.sortOpts.rev = on
	case name == "aggzoom" && ok:
		c.sortOpts.zoom = on
	case name == "agghist" && ok:
		c.sortOpts.hist = on
	case name == "aggpack" && ok:
		c.sortOpts.pack = on
	case name == "encoding" && (value == "utf8" || value == "ascii"):
		c.sortOpts.utf8 = value == "utf8"
	case name == "aggsortkeypos" && isInt:
		c.sortOpts.keypos = n
	case name == "aggsortpos" && isInt:
		c.sortOpts.pos = n
	default:
		reason := "not an option this consumer sets at run time"
		if c.cfg.SetOpt != nil {
			err := c.cfg.SetOpt(name, value)
			if err == nil {
				return
			}
			reason = err.Error()
		}
		if c.cfg.Err != nil {
			fmt.Fprintf(c.cfg.Err, "%s: couldn't set option \"%s\" to \"%s\": %s\n",
				c.cfg.ProgName, name, value, reason)
		}
	}
}

// optionBool reads a boolean option's value as dt_opt_runtime does:
// "" (setopt's default), yes, enable(d), true, on, set or a number set
// it; no, disable(d), false, off and unset clear it.
func optionBool(v string) (on, ok bool) {
	switch strings.ToLower(v) {
	case "", "yes", "enable", "enabled", "true", "on", "set":
		return true, true
	case "no", "disable", "disabled", "false", "off", "unset":
		return false, true
	}
	var n uint64
	_, err := fmt.Sscan(v, &n)
	return true, err == nil
}
