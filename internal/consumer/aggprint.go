package consumer

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/record"
)

// histHeader is the line above a quantization's rows
// (dt_print_quanthdr's "\n%16s %41s %-9s\n" of value, the
// distribution's title and count).
const histHeader = "\n           value  ------------- Distribution ------------- count    \n"

const (
	ats    = "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@"
	spaces = "                                        "
)

// A histogram is a quantization's rows to print: each row's label and
// count, and whether bars are drawn in UTF-8 block elements (the
// encoding option set to utf8) rather than '@'.
type histogram struct {
	labels []string
	counts []int64
	utf8   bool
}

// aggZoomMax is the share of the bar the largest count fills with the
// aggzoom option (DTRACE_AGGZOOM_MAX).
const aggZoomMax = 0.95

// write prints the histogram as dt_print_quantize and its kin do: the
// header, then a row per bucket, each with its bar scaled to the total
// of the counts shown (dt_print_quantline), or with zoom (aggzoom) to
// the largest count over aggZoomMax (dt_quantize_total); the counts
// divided by normal.
func (h *histogram) write(sb *strings.Builder, normal uint64, zoom bool) {
	var total float64
	positives, negatives := false, false
	for _, n := range h.counts {
		positives = positives || n > 0
		negatives = negatives || n < 0
		if zoom {
			total = max(total, float64(absInt(n))*(1/aggZoomMax))
		} else {
			total += float64(absInt(n))
		}
	}
	sb.WriteString(histHeader)
	for i := range h.counts {
		fmt.Fprintf(sb, "%16s ", h.labels[i])
		h.line(sb, i, normal, total, positives, negatives)
	}
}

// line prints row i's bar and count (dt_print_quantline): the bar's
// length is the count's share of total, rounded; negative counts are
// drawn left of the line, and with both signs each side has half the
// width.
func (h *histogram) line(sb *strings.Builder, i int, normal uint64, total float64, positives, negatives bool) {
	n := h.counts[i]
	count := int64(uint64(n) / normal)
	depth := func(l int) int {
		if total == 0 {
			return 0
		}
		return int(float64(absInt(n))*float64(l)/total + 0.5)
	}
	switch {
	case !negatives && positives && h.utf8:
		h.lineUTF8(sb, n, count, total)
	case !negatives:
		d := 0
		if positives {
			d = depth(40)
		}
		fmt.Fprintf(sb, "|%s%s %-9d\n", ats[40-d:], spaces[d:], count)
	case !positives:
		d := depth(40)
		fmt.Fprintf(sb, "%s%s| %-9d\n", spaces[d:], ats[40-d:], count)
	default:
		// Both signs: half bars either side of a centre line.
		d := depth(20)
		if n <= 0 {
			fmt.Fprintf(sb, "%s%s|%20s %-9d\n", spaces[20+d:], ats[40-d:], "", count)
		} else {
			fmt.Fprintf(sb, "%20s|%s%s %-9d\n", "", ats[40-d:], spaces[20+d:], count)
		}
	}
}

// lineUTF8 draws a bar of full blocks (U+2588) and one of the eighth
// blocks U+2589 to U+258F for the rest, as dt_print_quantline_utf8
// does.
func (h *histogram) lineUTF8(sb *strings.Builder, n, count int64, total float64) {
	f := float64(absInt(n)) * 40 / total
	whole := int(f)
	partial := int((f - float64(whole)) * 8)
	sb.WriteString("|" + strings.Repeat("\u2588", whole))
	i := whole
	if partial != 0 {
		sb.WriteRune(rune(0x258f - (partial - 1)))
		i++
	}
	fmt.Fprintf(sb, "%s %-9d\n", spaces[min(i, 40):], count)
}

func absInt(n int64) uint64 {
	if n < 0 {
		return -uint64(n)
	}
	return uint64(n)
}

// shown returns the range of buckets dtrace shows of counts: from the
// one before the first non-zero to the one after the last, or, when all
// are zero, the ones from zeroFirst to zeroLast.
func shown(counts []int64, zeroFirst, zeroLast int) (first, last int) {
	first, last = 0, len(counts)-1
	for first < len(counts) && counts[first] == 0 {
		first++
	}
	if first == len(counts) {
		return zeroFirst, zeroLast
	}
	if first > 0 {
		first--
	}
	for last > 0 && counts[last] == 0 {
		last--
	}
	if last < len(counts)-1 {
		last++
	}
	return first, last
}

// quantizeHist is the histogram dt_print_quantize prints.
func quantizeHist(w []int64) (*histogram, error) {
	if len(w) != record.QuantizeNBuckets {
		return nil, fmt.Errorf("%s", errDMismatch)
	}
	// quantize's last bucket counts too, but the search for the last
	// non-zero bucket stops short of the array's end, as dtrace's does.
	first := 0
	for first < len(w)-1 && w[first] == 0 {
		first++
	}
	last := len(w) - 1
	if first == len(w)-1 {
		first, last = record.QuantizeZeroBucket-1, record.QuantizeZeroBucket+1
	} else {
		if first > 0 {
			first--
		}
		for last > 0 && w[last] == 0 {
			last--
		}
		if last < len(w)-1 {
			last++
		}
	}
	h := &histogram{}
	for i := first; i <= last; i++ {
		h.labels = append(h.labels, fmt.Sprint(record.QuantizeBucketValue(i)))
		h.counts = append(h.counts, w[i])
	}
	return h, nil
}

// lquantizeHist is the histogram dt_print_lquantize prints.
func lquantizeHist(w []int64) (*histogram, error) {
	if len(w) < 1 {
		return nil, fmt.Errorf("%s", errDMismatch)
	}
	base, step, levels := dof.LQuantizeParams(uint64(w[0]))
	b := w[1:]
	if len(b) != int(levels)+2 {
		return nil, fmt.Errorf("%s", errDMismatch)
	}
	first, last := shown(b, 0, 2)
	h := &histogram{}
	for i := first; i <= last; i++ {
		var label string
		switch i {
		case 0:
			label = fmt.Sprintf("< %d", base)
		case int(levels) + 1:
			label = fmt.Sprintf(">= %d", int32(int64(base)+int64(levels)*int64(step)))
		default:
			label = fmt.Sprint(int32(int64(base) + int64(i-1)*int64(step)))
		}
		h.labels = append(h.labels, label)
		h.counts = append(h.counts, b[i])
	}
	return h, nil
}

// llquantizeHist is the histogram dt_print_llquantize prints: the
// underflow bucket, each step of each order from low to high, and the
// overflow bucket; buckets past it are not shown.
func llquantizeHist(w []int64) (*histogram, error) {
	if len(w) < 1 {
		return nil, fmt.Errorf("%s", errDMismatch)
	}
	factor, low, high, nsteps := dof.LLQuantizeParams(uint64(w[0]))
	b := w[1:]
	if factor < 2 || low >= high || nsteps == 0 || factor > nsteps {
		return nil, fmt.Errorf("%s", errDMismatch)
	}
	first, last := shown(b, 0, 1)
	vals, over := llquantizeValues(uint64(w[0]), len(b))
	lowest := int64(1)
	for range low {
		lowest *= int64(factor)
	}
	h := &histogram{}
	for i := first; i <= last && i < len(b); i++ {
		var label string
		switch {
		case i == 0:
			label = fmt.Sprintf("< %d", lowest)
		case i < over:
			label = fmt.Sprint(vals[i])
		case i == over:
			label = fmt.Sprintf(">= %d", vals[i])
		default:
			return h, nil
		}
		h.labels = append(h.labels, label)
		h.counts = append(h.counts, b[i])
	}
	return h, nil
}

// hist returns the histogram of a quantizing aggregation's data.
func hist(act dof.ActKind, data []byte) (*histogram, error) {
	w := words(data)
	switch act {
	case dof.AggQuantize:
		return quantizeHist(w)
	case dof.AggLQuantize:
		return lquantizeHist(w)
	}
	return llquantizeHist(w)
}

// aggDatum formats one record of an aggregation's entry without a
// format, as dt_print_datum does: keys and values by their action, or
// by their size (" %3d", " %5d", " %8d", " %16lld", strings left in
// 50 columns), divided by normal.
func (c *Consumer) aggDatum(sb *strings.Builder, r *record.Rec, b []byte, normal uint64) error {
	return c.aggDatumWidth(sb, r, b, normal, false)
}

// fieldWidth is the width dt_print_datum gives a record of size bytes:
// packed (agghist, aggpack) or not.
func fieldWidth(size uint32, packed bool) int {
	switch size {
	case 1:
		return 3
	case 2:
		return 5
	case 4:
		return 8
	case 8:
		return 16
	}
	if packed {
		return 16
	}
	return -50
}

// aggDatumWidth is aggDatum with the packed widths when packed.
func (c *Consumer) aggDatumWidth(sb *strings.Builder, r *record.Rec, b []byte, normal uint64, packed bool) error {
	switch r.Action {
	case dof.AggQuantize, dof.AggLQuantize, dof.AggLLQuantize:
		h, err := hist(r.Action, b)
		if err != nil {
			return err
		}
		h.utf8 = c.sortOpts.utf8
		h.write(sb, normal, c.sortOpts.zoom)
		return nil
	case dof.AggAvg:
		w := words(b)
		var avg int64
		if w[0] != 0 {
			avg = w[1] / int64(normal) / w[0]
		}
		writeInt(sb, 16, avg)
		return nil
	case dof.AggStddev:
		writeUint(sb, 16, stddev(words(b), normal))
		return nil
	}
	width := fieldWidth(uint32(len(b)), packed)
	if !r.Action.IsAgg() {
		// A key (normal is 1), decoded as a record is.
		d := &c.kd
		if err := c.decode(d, r, b); err != nil {
			return err
		}
		if d.kind != datumInt {
			textFormatter{c}.write(sb, d, width, false)
			return nil
		}
		writeInt(sb, width, d.i)
		return nil
	}
	switch len(b) {
	case 8:
		writeInt(sb, width, int64(le64(b)/normal))
	case 4:
		writeInt(sb, width, int64(int32(binary.LittleEndian.Uint32(b)/uint32(normal))))
	case 2:
		writeInt(sb, width, int64(uint32(binary.LittleEndian.Uint16(b))/uint32(normal)))
	case 1:
		writeInt(sb, width, int64(uint32(b[0])/uint32(normal)))
	default:
		c.dump(sb, b, width, false, false)
	}
	return nil
}

// writeInt writes v as " %*d" does, right-aligned in width columns,
// without fmt's reflection: it prints every key and value of an
// aggregation.
func writeInt(sb *strings.Builder, width int, v int64) {
	var buf [20]byte
	padNumber(sb, width, strconv.AppendInt(buf[:0], v, 10))
}

// writeUint is writeInt of an unsigned value.
func writeUint(sb *strings.Builder, width int, v uint64) {
	var buf [20]byte
	padNumber(sb, width, strconv.AppendUint(buf[:0], v, 10))
}

// padNumber writes a space, then digits right-aligned in width columns.
func padNumber(sb *strings.Builder, width int, digits []byte) {
	sb.WriteByte(' ')
	for n := width - len(digits); n > 0; n -= len(spaces) {
		sb.WriteString(spaces[:min(n, len(spaces))])
	}
	sb.Write(digits)
}

// appendInt appends v as " %*d" does, right-aligned in width columns,
// as writeInt writes it: into a bufio.Writer's AvailableBuffer, an
// integer a firing traces costs no allocation.
func appendInt(b []byte, width int, v int64) []byte {
	var buf [20]byte
	digits := strconv.AppendInt(buf[:0], v, 10)
	b = append(b, ' ')
	for n := width - len(digits); n > 0; n -= len(spaces) {
		b = append(b, spaces[:min(n, len(spaces))]...)
	}
	return append(b, digits...)
}

// aggLine formats one entry without a format (dt_print_aggs): its keys,
// its value, a newline. With hist (the agghist option, for sum() and
// count()), the value is a bar scaled to its variable's total, the keys
// are 16 columns wide and a header comes before a variable's first
// entry (hist.header tells which variable had the last).
func (c *Consumer) aggLine(sb *strings.Builder, e *aggEntry, hist *histState) error {
	recs := e.desc.Recs
	r, b := e.value()
	if hist != nil && hist.totals != nil && !hist.pack && (r.Action == dof.AggSum || r.Action == dof.AggCount) {
		if hist.header != e.varid {
			width := 0
			for i := 1; i < len(recs)-1; i++ {
				width += fieldWidth(recs[i].Size, true) + 1
			}
			if width == 0 {
				sb.WriteString(histHeader)
			} else {
				fmt.Fprintf(sb, "\n%*s %41s %-9s\n", width, "key", "------------- Distribution -------------", "count")
			}
			hist.header = e.varid
		}
		for i := 1; i < len(recs)-1; i++ {
			r := &recs[i]
			if err := c.aggDatumWidth(sb, r, e.data[r.Offset:r.Offset+r.Size], 1, true); err != nil {
				return err
			}
		}
		t := hist.totals[e.varid]
		h := &histogram{labels: []string{""}, counts: []int64{int64(le64(b))}}
		sb.WriteString(" ")
		h.line(sb, 0, e.normal, t.total, t.positives, t.negatives)
		return nil
	}
	if hist != nil && hist.pack && (r.Action == dof.AggQuantize || r.Action == dof.AggLQuantize) {
		return c.packedLine(sb, e, hist)
	}
	for i := 1; i < len(recs)-1; i++ {
		r := &recs[i]
		if err := c.aggDatum(sb, r, e.data[r.Offset:r.Offset+r.Size], 1); err != nil {
			return err
		}
	}
	if err := c.aggDatum(sb, r, b, e.normal); err != nil {
		return err
	}
	sb.WriteString("\n")
	return nil
}

// packedLine formats a quantize() or lquantize() entry with the aggpack
// option (dt_print_quantize_packed, dt_print_lquantize_packed): keys in
// packed widths, then one character a bucket between the lowest and
// highest values, from the first bucket any of the variable's entries
// uses to the last (lquantize: all), then the count. A header comes
// before a variable's first entry (dt_print_quanthdr_packed).
func (c *Consumer) packedLine(sb *strings.Builder, e *aggEntry, hist *histState) error {
	recs := e.desc.Recs
	r, b := e.value()
	w := words(b)
	lo, hi := hist.bins[e.varid][0], hist.bins[e.varid][1]
	if r.Action == dof.AggQuantize {
		if len(w) != record.QuantizeNBuckets {
			return fmt.Errorf("%s", errDMismatch)
		}
		if lo != 0 && lo != record.QuantizeZeroBucket {
			lo--
		}
		if hi < record.QuantizeNBuckets-1 {
			hi++
		}
	} else {
		_, _, levels := dof.LQuantizeParams(uint64(w[0]))
		w = w[1:]
		if len(w) != int(levels)+2 {
			return fmt.Errorf("%s", errDMismatch)
		}
		lo, hi = 0, int(levels)+1
	}
	if hist.header != e.varid {
		width := 0
		for i := 1; i < len(recs)-1; i++ {
			width += fieldWidth(recs[i].Size, true) + 1
		}
		key := ""
		if width > 0 {
			key = "key"
		}
		minw, maxw := 7, 8
		if r.Action == dof.AggQuantize {
			minw, maxw = ndigits(record.QuantizeBucketValue(lo)), ndigits(record.QuantizeBucketValue(hi))
		}
		fmt.Fprintf(sb, "\n%*s %*s .%s. %-*s | count\n", width, key, minw, "min", strings.Repeat("-", hi-lo+1), maxw, "max")
		hist.header = e.varid
	}
	for i := 1; i < len(recs)-1; i++ {
		r := &recs[i]
		if err := c.aggDatumWidth(sb, r, e.data[r.Offset:r.Offset+r.Size], 1, true); err != nil {
			return err
		}
	}
	var total float64
	var count int64
	for i := lo; i <= hi; i++ {
		if hist.zoom {
			total = max(total, float64(absInt(w[i]))*(1/aggZoomMax))
		} else {
			total += float64(absInt(w[i]))
		}
		count += w[i]
	}
	if r.Action == dof.AggQuantize {
		minv, maxv := record.QuantizeBucketValue(lo), record.QuantizeBucketValue(hi)
		fmt.Fprintf(sb, " %*d :", ndigits(minv), minv)
		for i := lo; i <= hi; i++ {
			sb.WriteString(packed(w[i], total, hist.utf8))
		}
		fmt.Fprintf(sb, ": %-*d | %d\n", ndigits(maxv), maxv, count)
		return nil
	}
	base, step, levels := dof.LQuantizeParams(le64(b))
	fmt.Fprintf(sb, "%8s :", fmt.Sprintf("< %d", base))
	for i := lo; i <= hi; i++ {
		sb.WriteString(packed(w[i], total, hist.utf8))
	}
	fmt.Fprintf(sb, ": %-8s | %d\n", fmt.Sprintf(">= %d", int32(int64(base)+int64(levels)*int64(step))), count)
	return nil
}

// packed is one bucket of a packed histogram (dt_print_packed): a
// space for none, else a character for its share of the total,
// "__xxxxXX" (or the eighth blocks U+2581 to U+2588 in UTF-8) for
// positive counts, "vvvvVV" for negative ones.
func packed(n int64, total float64, utf8 bool) string {
	const ascii, neg = "__xxxxXX", "vvvvVV"
	switch {
	case n == 0:
		return " "
	case n < 0:
		return string(neg[int(float64(absInt(n))*float64(len(neg)-1)/total+0.5)])
	case utf8:
		return string(rune(0x2581 + int(float64(n)*7/total+0.5)))
	}
	return string(ascii[int(float64(n)*float64(len(ascii)-1)/total+0.5)])
}

// ndigits is the width dtrace gives a bucket's value in a packed
// histogram (dt_ndigits): its digits and sign, at least 4.
func ndigits(v int64) int {
	n := 1
	if v < 0 {
		if v == math.MinInt64 {
			v = math.MaxInt64
		} else {
			v = -v
		}
		n++
	}
	for cmp := int64(10); v > cmp && cmp > 0; cmp *= 10 {
		n++
	}
	return max(n, 4)
}

// histState is what the agghist option needs through a walk: each
// variable's total (dt_aggregate_total) and the variable whose header
// was printed last.
type histState struct {
	totals map[uint32]histTotal
	header uint32
	// With aggpack: each variable's first and last quantize() buckets
	// with counts (dt_aggregate_minmaxbin), and the drawing options.
	pack       bool
	bins       map[uint32][2]int
	zoom, utf8 bool
}

// A histTotal is a variable's total of its sum() or count() values'
// magnitudes, or with aggzoom its largest over aggZoomMax, and whether
// any is positive or negative.
type histTotal struct {
	total                float64
	positives, negatives bool
}

// histFor returns the state of a walk with the agghist option, or nil
// without it.
func (c *Consumer) histFor() *histState {
	o := c.sortOpts
	if !o.hist && !o.pack {
		return nil
	}
	h := &histState{totals: map[uint32]histTotal{}, pack: o.pack, bins: map[uint32][2]int{}, zoom: o.zoom, utf8: o.utf8}
	for _, e := range c.aggs.entries {
		r, b := e.value()
		if r.Action == dof.AggQuantize && o.pack {
			lo, hi := -1, -1
			for i, n := range words(b) {
				if n != 0 {
					if lo < 0 {
						lo = i
					}
					hi = i
				}
			}
			if lo < 0 {
				lo, hi = record.QuantizeZeroBucket, record.QuantizeZeroBucket
			}
			if m, ok := h.bins[e.varid]; ok {
				lo, hi = min(lo, m[0]), max(hi, m[1])
			}
			h.bins[e.varid] = [2]int{lo, hi}
		}
		if !o.hist {
			continue
		}
		if r.Action != dof.AggSum && r.Action != dof.AggCount {
			continue
		}
		v := int64(le64(b))
		t := h.totals[e.varid]
		t.positives = t.positives || v > 0
		t.negatives = t.negatives || v < 0
		if c.sortOpts.zoom {
			// dtada_total is an integer: the quotient is truncated.
			t.total = max(t.total, float64(int64(float64(absInt(v))*(1/aggZoomMax))))
		} else {
			t.total += float64(absInt(v))
		}
		h.totals[e.varid] = t
	}
	return h
}

// aggFlush is the bytes of formatted entries written out at once.
const aggFlush = 64 << 10

// printAggs prints the entries of aggregation variable varid (0: every
// one not printed by printa() yet) without a format, in dtrace's order.
func (c *Consumer) printAggs(varid uint32) error {
	var sb strings.Builder
	hist := c.histFor()
	for _, e := range c.sorted(varid, c.sortOpts) {
		if varid != 0 {
			c.aggs.printed[e.desc] = true
		}
		if sb.Len() == 0 {
			sb.Grow(aggFlush + 1024)
		}
		if err := c.aggLine(&sb, e, hist); err != nil {
			return err
		}
		if sb.Len() >= aggFlush {
			// Out a piece at a time, as dt_print_aggs prints entry
			// by entry: not the whole of a large aggregation built up
			// in memory first.
			c.w.WriteString(sb.String())
			sb = strings.Builder{}
		}
	}
	c.w.WriteString(sb.String())
	return nil
}

// printa runs printa() of the aggregation variables varids, with
// format n (0 for none): without a format a newline, then each entry as
// the exit prints them; with one, the format for each key, its
// conversions taking the key's records in turn and each %@ the next
// aggregation's value (dtrace_fprinta). With more than one variable,
// every key any of them has is printed, with zeroes for the variables
// that lack it (dtrace_aggregate_walk_joined).
func (c *Consumer) printa(varids []uint32, n uint16) error {
	if c.aggs.byKey == nil {
		c.aggs.byKey = make(map[string]*aggEntry)
		c.aggs.printed = make(map[*record.AggDesc]bool)
	}
	if n == 0 {
		c.w.WriteString("\n")
	}
	if n == 0 && len(varids) == 1 {
		return c.printAggs(varids[0])
	}
	var out strings.Builder
	rows, err := c.joined(varids)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if out.Len() >= aggFlush {
			c.w.WriteString(out.String())
			out = strings.Builder{}
		}
		if n == 0 {
			// Keys once, then each variable's value (dt_print_aggs).
			recs := row.key.desc.Recs
			for i := 1; i < len(recs)-1; i++ {
				r := &recs[i]
				if err := c.aggDatum(&out, r, row.key.data[r.Offset:r.Offset+r.Size], 1); err != nil {
					return err
				}
			}
			for _, e := range row.vals {
				r, b := e.value()
				if err := c.aggDatum(&out, r, b, e.normal); err != nil {
					return err
				}
			}
			out.WriteString("\n")
			continue
		}
		pf, err := c.format(n)
		if err != nil {
			return err
		}
		recs := row.key.desc.Recs
		line, _, err := c.sprintf(c.aggText[:0], pf, recs[1:len(recs)-1], row.key.data, 0, row.vals)
		c.aggText = line
		if err != nil {
			return err
		}
		out.Write(line)
	}
	c.w.WriteString(out.String())
	return nil
}

// A joinedRow is one key of a printa() of several aggregations: the
// entry whose key is printed, and each variable's entry for the key.
type joinedRow struct {
	key  *aggEntry
	vals []*aggEntry
	// What the sort compares, computed once a row: the values, the
	// key's first record.
	v   []sortValue
	k0  firstRec
	pos int // the row's place before the sort
}

// joined returns the rows printa() prints for varids, in dtrace's order
// (dt_aggregate_bundlecmp): by the values, from the aggsortpos'th
// variable's on, then the key; or by the key first with aggsortkey. A
// variable without the key gets an entry of zeroes (lquantize's and
// llquantize's parameters kept).
func (c *Consumer) joined(varids []uint32) ([]*joinedRow, error) {
	var rows []*joinedRow
	byKey := make(map[string]*joinedRow, len(c.aggs.entries))
	proto := make([]*aggEntry, len(varids))
	var k []byte
	for _, e := range c.aggs.entries {
		for j, id := range varids {
			if e.varid != id {
				continue
			}
			c.aggs.printed[e.desc] = true
			if proto[j] == nil {
				proto[j] = e
			}
			k = appendKeyRecs(k[:0], e)
			row, ok := byKey[string(k)]
			if !ok {
				row = &joinedRow{key: e, vals: make([]*aggEntry, len(varids)), pos: len(rows)}
				byKey[string(k)] = row
				rows = append(rows, row)
			}
			row.vals[j] = e
		}
	}
	for j, id := range varids {
		if proto[j] == nil {
			// A variable without data: its description makes the zeroes.
			for n := uint32(1); ; n++ {
				d, err := c.desc.Agg(n)
				if err != nil {
					break
				}
				if d.VarID == id && len(d.Recs) >= 2 {
					proto[j] = &aggEntry{desc: d, varid: id, data: make([]byte, d.Size), normal: 1}
					break
				}
			}
		}
	}
	o := c.sortOpts
	for _, row := range rows {
		row.k0 = firstKey(row.key, o.keypos)
		row.v = make([]sortValue, len(varids))
		for j, e := range row.vals {
			if e == nil {
				p := proto[j]
				if p == nil {
					return nil, fmt.Errorf("printa(): no aggregation with variable ID %d", varids[j])
				}
				e = &aggEntry{desc: p.desc, varid: p.varid, data: make([]byte, len(p.data)), normal: p.normal}
				r, _ := e.value()
				if r.Action == dof.AggLQuantize || r.Action == dof.AggLLQuantize {
					binary.LittleEndian.PutUint64(e.data[r.Offset:], r.Arg)
				}
				row.vals[j] = e
			}
			row.v[j] = valueOf(e)
		}
	}
	pos := o.pos
	if pos >= len(varids) {
		pos = 0 // past the last aggregation: as if unset
	}
	slices.SortFunc(rows, func(l, r *joinedRow) int {
		n := 0
		if o.key {
			n = keyOrder(l.key, r.key, l.k0, r.k0, o.keypos)
		}
		for i := 0; n == 0 && i < len(varids); i++ {
			j := (i + pos) % len(varids)
			n = l.v[j].cmp(r.v[j])
		}
		if n == 0 && !o.key {
			n = keyOrder(l.key, r.key, l.k0, r.k0, o.keypos)
		}
		if o.rev {
			n = -n
		}
		if n == 0 {
			n = cmpInt(l.pos, r.pos) // as a stable sort leaves them
		}
		return n
	})
	return rows, nil
}

// appendKeyRecs appends an entry's key records, what rows are joined
// on, each after its size.
func appendKeyRecs(b []byte, e *aggEntry) []byte {
	recs := e.desc.Recs
	for _, r := range recs[1 : len(recs)-1] {
		b = binary.LittleEndian.AppendUint32(b, r.Size)
		b = append(b, e.data[r.Offset:r.Offset+r.Size]...)
	}
	return b
}

// printaGroup returns the aggregation variables of the printa() whose
// first record is i: those of the PRINTA records that follow it from
// the same statement, as dt_consume_cpu groups them; nil if a record of
// the statement is not a PRINTA.
func printaGroup(ep *record.EProbe, f *record.Firing, i int) []uint32 {
	rec := &ep.Recs[i]
	varids := []uint32{uint32(recInt(f.Rec(i)))}
	for j := i + 1; rec.UArg != 0 && j < len(ep.Recs) && ep.Recs[j].UArg == rec.UArg; j++ {
		if ep.Recs[j].Action != dof.ActPrinta {
			return nil
		}
		varids = append(varids, uint32(recInt(f.Rec(j))))
	}
	return varids
}
