package consumer

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/record"
)

// jsonVersion is the version of the JSON Lines schema the JSON format
// writes: every object carries it as "version". It changes only when a
// field changes meaning or goes away; fields may be added within a
// version.
const jsonVersion = 1

// A jsonBuf builds one JSON object; values are appended in the order
// the schema documents, which encoding/json's maps would lose.
type jsonBuf []byte

func (j *jsonBuf) raw(s string) { *j = append(*j, s...) }

// key writes a member's name and colon, after a comma unless it is
// the object's first.
func (j *jsonBuf) key(k string) {
	if n := len(*j); n > 0 && (*j)[n-1] != '{' && (*j)[n-1] != '[' {
		*j = append(*j, ',')
	}
	*j = append(*j, '"')
	*j = append(*j, k...)
	*j = append(*j, '"', ':')
}

// elem starts an array element, after a comma unless it is the first.
func (j *jsonBuf) elem() {
	if n := len(*j); n > 0 && (*j)[n-1] != '[' {
		*j = append(*j, ',')
	}
}

func (j *jsonBuf) int(v int64)   { *j = strconv.AppendInt(*j, v, 10) }
func (j *jsonBuf) uint(v uint64) { *j = strconv.AppendUint(*j, v, 10) }

// str writes s as a JSON string: quotes, backslashes and control
// characters escaped, bytes that are not UTF-8 replaced by U+FFFD, as
// encoding/json writes them.
func (j *jsonBuf) str(s string) { *j = appendJSONString(*j, s) }

// text writes printf()'s text, the consumer's bytes, as str does.
func (j *jsonBuf) text(b []byte) { *j = appendJSONString(*j, b) }

// appendJSONString appends s as a JSON string, for str and text.
func appendJSONString[T string | []byte](b []byte, s T) []byte {
	const hexdigits = "0123456789abcdef"
	b = append(b, '"')
	plain := 0
	for plain < len(s) && s[plain] >= 0x20 && s[plain] < 0x7f && s[plain] != '"' && s[plain] != '\\' {
		plain++
	}
	b = append(b, s[:plain]...)
	for i := plain; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexdigits[c>>4], hexdigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		// A rune is at most utf8.UTFMax bytes: the conversion of a
		// []byte's copies no more.
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// addr writes an address as a string, "0x…": 64-bit addresses are
// above what readers that hold numbers as doubles (jq, JavaScript)
// keep exactly.
func (j *jsonBuf) addr(a uint64) { j.str(fmt.Sprintf("0x%x", a)) }

// header starts an object of the given type.
func (j *jsonBuf) header(typ string) {
	j.raw(`{"version":`)
	j.int(jsonVersion)
	j.key("type")
	j.str(typ)
}

// probe writes the "probe" member: the probe's ID and its four names.
func (j *jsonBuf) probe(p record.Probe) {
	j.key("probe")
	j.raw(`{"id":`)
	j.uint(uint64(p.ID))
	j.key("provider")
	j.str(p.Provider)
	j.key("module")
	j.str(p.Module)
	j.key("function")
	j.str(p.Function)
	j.key("name")
	j.str(p.Name)
	j.raw("}")
}

// jsonFormatter writes JSON Lines, the schema of kdtrace(1)'s JSON
// OUTPUT section: an object of type "probe" for each firing, with each
// record typed, then one of type "aggregation" for each aggregation its
// printa() actions print; "aggregation" objects at the end for those
// printa() has not printed; "error" and "drop" objects.
type jsonFormatter struct {
	c *Consumer
	// The firing's object, reused (a trace may have millions), and its
	// printa() actions' variables, printed once the object is out.
	j       jsonBuf
	printas [][]uint32
	// Each EPID's "epid" and "probe" members, encoded once: they are
	// the same in every firing of the ECB.
	probes map[uint32]jsonBuf
}

func newJSONFormatter(c *Consumer) formatter { return &jsonFormatter{c: c} }

// emit writes one object as a line of the output.
func (x *jsonFormatter) emit(j jsonBuf) {
	x.c.w.Write(j)
	x.c.w.WriteByte('\n')
}

// begin starts the firing's object: its CPU, timestamp, EPID and probe,
// then its records.
func (x *jsonFormatter) begin(h firingHead) {
	j := x.j[:0]
	j.header("probe")
	j.key("cpu")
	j.int(int64(h.cpu))
	if h.f.Timestamp != 0 {
		j.key("timestamp")
		j.uint(h.f.Timestamp)
	}
	epid := h.f.EProbe.EPID
	p, ok := x.probes[epid]
	if !ok {
		p.key("epid")
		p.uint(uint64(epid))
		p.probe(h.p)
		if x.probes == nil {
			x.probes = map[uint32]jsonBuf{}
		}
		x.probes[epid] = p
	}
	j = append(j, ',')
	j = append(j, p...)
	j.key("records")
	j.raw("[")
	x.j, x.printas = j, x.printas[:0]
}

// end writes the firing's object, then an object for each aggregation
// its printa() actions print.
func (x *jsonFormatter) end() error {
	x.j.raw("]}")
	x.emit(x.j)
	for _, varids := range x.printas {
		for _, id := range varids {
			if err := x.agg(id, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// record starts the object of a record of the given action.
func (x *jsonFormatter) record(action string) {
	x.j.elem()
	x.j.raw(`{"action":`)
	x.j.str(action)
}

// datum writes a record typed, as its action names it.
func (x *jsonFormatter) datum(d *datum) error {
	j := &x.j
	switch d.kind {
	case datumExit:
		x.record("exit")
		j.key("status")
		j.int(d.i)
	case datumPrintf:
		if err := x.printf(d); err != nil {
			return err
		}
	case datumMem:
		action := "tracemem"
		if d.rec.Action == dof.ActPrintm {
			action = "printm"
		}
		x.record(action)
		j.key("value")
		jsonBytes(j, d.b)
	case datumStack, datumSym:
		x.record(jsonActionName(d.rec.Action))
		switch d.rec.Action {
		case dof.ActUStack, dof.ActJStack, dof.ActUSym, dof.ActUAddr, dof.ActUMod:
			j.key("pid")
			j.uint(d.pid)
		}
		j.key("value")
		x.value(j, d)
	default:
		switch {
		case d.print:
			x.record("print")
			j.key("type")
			j.str(x.c.printedType(d.typeRef))
		case d.rec.Action == dof.ActDIFExpr || d.rec.Action.IsPrintfLike():
			x.record("trace")
		default:
			x.record(jsonActionName(d.rec.Action))
		}
		j.key("value")
		if d.dString() {
			j.str(cstring(d.b))
			break
		}
		x.value(j, d)
	}
	j.raw("}")
	return nil
}

// value writes a datum's value: an integer as a number, a stack as an
// array of its frames, an address as its symbol (or "0x…" when none
// holds it), data as a string when dtrace prints it as one (and not
// with rawbytes), else as {"bytes": hex}; printf()'s arguments as
// their conversions type them.
func (x *jsonFormatter) value(j *jsonBuf, d *datum) {
	switch d.kind {
	case datumStack:
		j.raw("[")
		for _, f := range d.frames {
			j.elem()
			j.str(f.name)
		}
		j.raw("]")
	case datumSym, datumText:
		j.str(d.str)
	case datumString:
		j.text(d.b)
	case datumInt:
		j.int(d.i)
	case datumUint:
		j.uint(uint64(d.i))
	case datumFloat:
		*j = strconv.AppendFloat(*j, d.f, 'g', -1, 64)
	default:
		if s, ok := printable(d.b); ok && !x.c.cfg.RawBytes {
			j.str(s)
			return
		}
		jsonBytes(j, d.b)
	}
}

// printf writes a printf(), system() or freopen() record: its format,
// the text it prints (the command it runs, the file it opens) and its
// arguments typed by their conversions.
func (x *jsonFormatter) printf(d *datum) error {
	s, err := x.c.desc.Format(d.rec.Format)
	if err != nil {
		return err
	}
	action, text := "printf", "output"
	switch d.rec.Action {
	case dof.ActFreopen:
		action, text = "freopen", "file"
	case dof.ActSystem:
		action, text = "system", "command"
	}
	x.record(action)
	j := &x.j
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	j.key("format")
	j.str(s)
	j.key(text)
	j.text(d.text)
	j.key("args")
	j.raw("[")
	err = x.c.printfArgs(d, func(a *datum) {
		j.elem()
		x.value(j, a)
	})
	j.raw("]")
	return err
}

// printa records printa() in the firing's object: its format, its
// variables, whose objects follow the firing's.
func (x *jsonFormatter) printa(varids []uint32, format uint16) error {
	j := &x.j
	x.record("printa")
	if format != 0 {
		s, err := x.c.desc.Format(format)
		if err != nil {
			return err
		}
		j.key("format")
		j.str(s)
	}
	j.key("aggregations")
	j.raw("[")
	for _, id := range varids {
		j.elem()
		j.uint(uint64(id))
	}
	j.raw("]}")
	x.printas = append(x.printas, varids)
	return nil
}

// agg writes aggregation variable varid as one object of type
// "aggregation", its entries in dtrace's order, as printa() (printa
// set) or the end of tracing prints them.
func (x *jsonFormatter) agg(varid uint32, printa bool) error {
	c := x.c
	if c.aggs.byKey == nil {
		c.aggs.byKey = make(map[string]*aggEntry)
		c.aggs.printed = make(map[*record.AggDesc]bool)
	}
	es := c.sorted(varid, c.sortOpts)
	if len(es) == 0 && !printa {
		return nil
	}
	j := make(jsonBuf, 0, 128+64*len(es))
	j.header("aggregation")
	j.key("id")
	j.uint(uint64(varid))
	if c.cfg.AggName != nil {
		if name := c.cfg.AggName(varid); name != "" {
			j.key("name")
			j.str(name)
		}
	}
	fn := ""
	for n := uint32(1); fn == "" && len(es) == 0; n++ {
		// No entry says the function: the first description of the
		// variable does.
		d, err := c.desc.Agg(n)
		if err != nil {
			break
		}
		if d.VarID == varid && len(d.Recs) >= 2 {
			fn = aggFunction(d.Recs[len(d.Recs)-1].Action)
		}
	}
	if len(es) > 0 {
		r, _ := es[0].value()
		fn = aggFunction(r.Action)
	}
	if fn != "" {
		j.key("function")
		j.str(fn)
	}
	j.key("entries")
	j.raw("[")
	strs := map[*record.AggDesc][]bool{}
	for _, e := range es {
		if printa {
			c.aggs.printed[e.desc] = true
		}
		keys, ok := strs[e.desc]
		if !ok {
			keys = c.stringKeys(e.desc)
			strs[e.desc] = keys
		}
		j.elem()
		if err := x.entry(&j, e, keys); err != nil {
			return err
		}
	}
	j.raw("]}")
	x.emit(j)
	return nil
}

// entry writes one entry: its keys (strs says which are D strings),
// then its value divided by normalize()'s divisor as the text output
// prints it: "value" for count, sum, min and max; "value" (the average
// or the deviation), "count" and "sum" for avg and stddev; "buckets"
// for the quantizations, each non-zero bucket's range and count.
func (x *jsonFormatter) entry(j *jsonBuf, e *aggEntry, strs []bool) error {
	j.raw(`{"keys":[`)
	recs := e.desc.Recs
	d := &x.c.kd
	for i := 1; i < len(recs)-1; i++ {
		r := &recs[i]
		b := e.data[r.Offset : r.Offset+r.Size]
		j.elem()
		if strs[i] {
			j.str(cstring(b))
			continue
		}
		if err := x.c.decode(d, r, b); err != nil {
			return err
		}
		x.value(j, d)
	}
	j.raw("]")
	r, b := e.value()
	w := words(b)
	normal := int64(e.normal)
	switch r.Action {
	case dof.AggAvg, dof.AggStddev:
		j.key("value")
		if r.Action == dof.AggAvg {
			var avg int64
			if w[0] != 0 {
				avg = w[1] / normal / w[0]
			}
			j.int(avg)
		} else {
			j.uint(stddev(w, e.normal))
		}
		j.key("count")
		j.int(w[0])
		j.key("sum")
		j.int(w[1] / normal)
	case dof.AggQuantize, dof.AggLQuantize, dof.AggLLQuantize:
		bs, err := buckets(r.Action, w)
		if err != nil {
			return err
		}
		j.key("buckets")
		j.raw("[")
		for _, bk := range bs {
			if bk.count == 0 {
				continue
			}
			j.elem()
			j.raw(`{"min":`)
			j.int(bk.min)
			j.key("max")
			j.int(bk.max)
			j.key("count")
			j.int(bk.count / normal)
			j.raw("}")
		}
		j.raw("]")
	default:
		j.key("value")
		j.int(w[0] / normal)
	}
	j.raw("}")
	return nil
}

// finish writes, once tracing stops, every aggregation printa() has
// not printed, one object each, in the order of their variables.
func (x *jsonFormatter) finish(aggs bool) error {
	c := x.c
	if !aggs || c.aggs.printed == nil {
		return nil
	}
	var varids []uint32
	seen := map[uint32]bool{}
	for _, e := range c.sorted(0, c.sortOpts) {
		if c.aggs.printed[e.desc] || seen[e.varid] {
			continue
		}
		seen[e.varid] = true
		varids = append(varids, e.varid)
	}
	for _, id := range varids {
		if err := x.agg(id, false); err != nil {
			return err
		}
	}
	return nil
}

// fault writes a firing of the ERROR probe as an object of type
// "error": the enabled probe and the probe that faulted, where (action
// 0 is the predicate; dif_offset -1 is none), the fault, its address
// when it has one, and dtrace's message.
func (x *jsonFormatter) fault(r *faultReport) {
	j := make(jsonBuf, 0, 256)
	j.header("error")
	j.key("epid")
	j.uint(uint64(r.epid))
	j.probe(r.p)
	j.key("action")
	j.int(int64(r.action))
	j.key("dif_offset")
	j.int(int64(r.offset))
	j.key("fault")
	j.str(r.fault)
	if r.hasAddr {
		j.key("address")
		j.addr(r.addr)
	}
	j.key("message")
	j.str(r.msg)
	j.raw("}")
	x.emit(j)
}

// drop writes a drop as an object of type "drop", and flushes it.
func (x *jsonFormatter) drop(d Drop, msg string) error {
	j := make(jsonBuf, 0, 128)
	j.header("drop")
	j.key("kind")
	j.str(d.Kind)
	if d.CPU >= 0 {
		j.key("cpu")
		j.int(int64(d.CPU))
	}
	j.key("count")
	j.uint(d.Count)
	j.key("message")
	j.str(msg)
	j.raw("}")
	x.emit(j)
	return x.c.w.Flush()
}

// jsonAction names an action whose records carry addresses, "" for
// another.
func jsonAction(a dof.ActKind) string {
	switch a {
	case dof.ActStack:
		return "stack"
	case dof.ActUStack:
		return "ustack"
	case dof.ActJStack:
		return "jstack"
	case dof.ActSym:
		return "sym"
	case dof.ActMod:
		return "mod"
	case dof.ActUSym:
		return "usym"
	case dof.ActUAddr:
		return "uaddr"
	case dof.ActUMod:
		return "umod"
	}
	return ""
}

// jsonActionName names an action the schema has no name of its own
// for by dtrace's name for it, lower case.
func jsonActionName(a dof.ActKind) string {
	if s := jsonAction(a); s != "" {
		return s
	}
	s := a.String()
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// jsonBytes writes data of no known type: {"bytes": "<hex>"}.
func jsonBytes(j *jsonBuf, b []byte) {
	j.raw(`{"bytes":`)
	j.str(hex.EncodeToString(b))
	j.raw("}")
}

// printable returns b as a string when dtrace prints it as one
// (dt_print_bytes): printable characters up to a NUL and nothing but
// NULs after it, or to the end.
func printable(b []byte) (string, bool) {
	for i, ch := range b {
		if isprint(ch) || isspace(ch) || ch == '\b' || ch == '\a' {
			continue
		}
		if ch != 0 || i == 0 {
			return "", false
		}
		for _, z := range b[i+1:] {
			if z != 0 {
				return "", false
			}
		}
		return string(b[:i]), true
	}
	return string(b), len(b) > 0
}

// aggFunction names an aggregating function, "" for another action.
func aggFunction(a dof.ActKind) string {
	switch a {
	case dof.AggCount:
		return "count"
	case dof.AggSum:
		return "sum"
	case dof.AggMin:
		return "min"
	case dof.AggMax:
		return "max"
	case dof.AggAvg:
		return "avg"
	case dof.AggStddev:
		return "stddev"
	case dof.AggQuantize:
		return "quantize"
	case dof.AggLQuantize:
		return "lquantize"
	case dof.AggLLQuantize:
		return "llquantize"
	}
	return ""
}

// A bucket is one of a quantization's buckets: the values it counts,
// min to max inclusive, and the count. The underflow and overflow
// buckets reach the ends of int64.
type bucket struct {
	min, max, count int64
}

// buckets returns every bucket of a quantization's data.
func buckets(act dof.ActKind, w []int64) ([]bucket, error) {
	switch act {
	case dof.AggQuantize:
		if len(w) != record.QuantizeNBuckets {
			return nil, fmt.Errorf("%s", errDMismatch)
		}
		bs := make([]bucket, len(w))
		for i, n := range w {
			v := record.QuantizeBucketValue(i)
			b := bucket{min: v, max: v, count: n}
			switch {
			case i == 0:
				b.min = math.MinInt64
			case i < record.QuantizeZeroBucket:
				b.min = record.QuantizeBucketValue(i-1) + 1
			}
			switch {
			case i == len(w)-1:
				b.max = math.MaxInt64
			case i > record.QuantizeZeroBucket:
				b.max = record.QuantizeBucketValue(i+1) - 1
			}
			bs[i] = b
		}
		return bs, nil
	case dof.AggLQuantize:
		if len(w) < 1 {
			return nil, fmt.Errorf("%s", errDMismatch)
		}
		base32, step, levels := dof.LQuantizeParams(uint64(w[0]))
		base := int64(base32)
		counts := w[1:]
		if len(counts) != int(levels)+2 {
			return nil, fmt.Errorf("%s", errDMismatch)
		}
		bs := make([]bucket, len(counts))
		bs[0] = bucket{min: math.MinInt64, max: base - 1, count: counts[0]}
		for i := 1; i <= int(levels); i++ {
			lo := base + int64(i-1)*int64(step)
			bs[i] = bucket{min: lo, max: lo + int64(step) - 1, count: counts[i]}
		}
		bs[levels+1] = bucket{min: base + int64(levels)*int64(step), max: math.MaxInt64, count: counts[levels+1]}
		return bs, nil
	}
	if len(w) < 1 {
		return nil, fmt.Errorf("%s", errDMismatch)
	}
	factor, low, high, nsteps := dof.LLQuantizeParams(uint64(w[0]))
	counts := w[1:]
	if factor < 2 || low >= high || nsteps == 0 || factor > nsteps {
		return nil, fmt.Errorf("%s", errDMismatch)
	}
	vals, over := llquantizeValues(uint64(w[0]), len(counts))
	lowest := int64(1)
	for range low {
		lowest *= int64(factor)
	}
	var bs []bucket
	for i := 0; i < len(counts) && i <= over; i++ {
		b := bucket{min: vals[i], max: math.MaxInt64, count: counts[i]}
		switch {
		case i == 0:
			b.min, b.max = math.MinInt64, lowest-1
		case i < over && i+1 < len(vals):
			b.max = vals[i+1] - 1
		}
		bs = append(bs, b)
	}
	return bs, nil
}
