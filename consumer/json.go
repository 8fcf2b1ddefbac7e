package consumer

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/printf"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/record"
)

// JSONVersion is the version of the JSON Lines schema Config.JSON
// writes: every object carries it as "version". It changes only when a
// field changes meaning or goes away; fields may be added within a
// version.
const JSONVersion = 1

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
func (j *jsonBuf) str(s string) {
	const hexdigits = "0123456789abcdef"
	b := append(*j, '"')
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
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	*j = append(b, '"')
}

// addr writes an address as a string, "0x…": 64-bit addresses are
// above what readers that hold numbers as doubles (jq, JavaScript)
// keep exactly.
func (j *jsonBuf) addr(a uint64) { j.str(fmt.Sprintf("0x%x", a)) }

// header starts an object of the given type.
func (j *jsonBuf) header(typ string) {
	j.raw(`{"version":`)
	j.int(JSONVersion)
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

// emit writes one object as a line of the output.
func (c *Consumer) emit(j jsonBuf) {
	c.w.Write(j)
	c.w.WriteByte('\n')
}

// firingJSON writes a firing as one object of type "probe", with each
// action's record in "records", then an object of type "aggregation"
// for each aggregation its printa() actions print. It carries out the
// actions that act rather than record as the text output does: exit()'s
// status, the library actions, system().
func (c *Consumer) firingJSON(cpu int, f *record.Firing, p record.Probe) error {
	ep := f.EProbe
	if c.only != nil && !c.only(p) {
		return nil
	}
	// One buffer for every firing: a trace may have millions.
	j := c.jbuf[:0]
	defer func() { c.jbuf = j[:0] }()
	j.header("probe")
	j.key("cpu")
	j.int(int64(cpu))
	if f.Timestamp != 0 {
		j.key("timestamp")
		j.uint(f.Timestamp)
	}
	j.key("epid")
	j.uint(uint64(ep.EPID))
	j.probe(p)
	j.key("records")
	j.raw("[")
	var printas [][]uint32
	var tracememsize uint64
	for i := 0; i < len(ep.Recs); i++ {
		rec := &ep.Recs[i]
		b := f.Data[rec.Offset : rec.Offset+rec.Size]
		fail := func(reason string) error { return &Error{EPID: ep.EPID, Rec: i, Reason: reason} }
		if uint64(rec.Size) < minSize(rec) {
			return fail(errDMismatch)
		}
		if rec.Size == 0 && rec.Action == dof.ActDIFExpr {
			// A statement that records nothing (x = 1).
			continue
		}
		record := func(action string) {
			j.elem()
			j.raw(`{"action":`)
			j.str(action)
		}
		switch rec.Action {
		case dof.ActLibAct:
			n, err := c.libact(f, i)
			if err != nil {
				return fail(err.Error())
			}
			i += n - 1
			continue
		case dof.ActTraceMemDynSize:
			if rec.Size == 8 {
				tracememsize = le64(b)
			}
			continue
		case dof.ActExit:
			status := int32(binary.LittleEndian.Uint32(b))
			c.status, c.exited = int(status), true
			record("exit")
			j.key("status")
			j.int(int64(status))
		case dof.ActPrinta:
			varids := printaGroup(ep, f, i)
			if varids == nil {
				return fail(errBadAgg)
			}
			record("printa")
			if rec.Format != 0 {
				s, err := c.desc.Format(rec.Format)
				if err != nil {
					return fail(err.Error())
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
			j.raw("]")
			printas = append(printas, varids)
			i += len(varids) - 1
		case dof.ActPrintf, dof.ActSystem, dof.ActFreopen:
			if rec.Format == 0 {
				record("trace")
				j.key("value")
				c.jsonValue(&j, rec, b)
				break
			}
			n, err := c.printfJSON(&j, f, i)
			if err != nil {
				return fail(err.Error())
			}
			i += max(n, 1) - 1
			continue
		case dof.ActTraceMem:
			if tracememsize == 0 || tracememsize > uint64(rec.Size) {
				tracememsize = uint64(rec.Size)
			}
			record("tracemem")
			j.key("value")
			jsonBytes(&j, b[:tracememsize])
			tracememsize = 0
		case dof.ActPrintm:
			n := le64(b)
			if n > uint64(len(b)-8) {
				return fail(errDOffset)
			}
			record("printm")
			j.key("value")
			jsonBytes(&j, b[8:8+n])
		case dof.ActUStack, dof.ActJStack, dof.ActUSym, dof.ActUAddr, dof.ActUMod:
			record(jsonActions[rec.Action])
			j.key("pid")
			j.uint(le64(b))
			j.key("value")
			if err := c.jsonValue(&j, rec, b); err != nil {
				return fail(err.Error())
			}
		case dof.ActStack, dof.ActSym, dof.ActMod:
			record(jsonActions[rec.Action])
			j.key("value")
			if err := c.jsonValue(&j, rec, b); err != nil {
				return fail(err.Error())
			}
		case dof.ActDIFExpr:
			if rec.Format != 0 {
				// print(): the value, with the type the compiler gave it.
				ref, err := c.desc.Format(rec.Format)
				if err != nil {
					return fail(err.Error())
				}
				record("print")
				j.key("type")
				j.str(c.printedType(ref))
			} else {
				record("trace")
			}
			j.key("value")
			if isString(ep, rec) {
				j.str(cstring(b))
				break
			}
			c.jsonValue(&j, rec, b)
		default:
			record(jsonActionName(rec.Action))
			j.key("value")
			c.jsonValue(&j, rec, b)
		}
		j.raw("}")
	}
	j.raw("]}")
	c.emit(j)
	for _, varids := range printas {
		for _, id := range varids {
			if err := c.aggJSON(id, true); err != nil {
				return &Error{EPID: ep.EPID, Rec: -1, Reason: err.Error()}
			}
		}
	}
	return nil
}

// isString reports whether record r of ep holds a D string, as the
// type its action returns says when the describer gives the actions
// (record.Layout does; FreeBSD's ioctls do not): a string is one even
// when its bytes are not all printable.
func isString(ep *record.EProbe, r *record.Rec) bool {
	for i := range ep.Actions {
		a := &ep.Actions[i]
		if !a.InTuple && !a.IsAgg() && a.Offset == r.Offset && a.Action == r.Action {
			return a.Type.Kind == dif.TypeString
		}
	}
	return false
}

// stringKeys returns which of the key records of an aggregation (from
// 1, as desc.Recs has them) hold D strings, as the types of the
// actions that compute them say when the describer gives them.
func (c *Consumer) stringKeys(desc *record.AggDesc) []bool {
	keys := make([]bool, len(desc.Recs))
	ep, err := c.desc.EProbe(desc.EPID)
	if err != nil {
		return keys
	}
	base := uint32(0)
	for i := range ep.Actions {
		if a := &ep.Actions[i]; a.IsAgg() && a.AggID == desc.ID {
			base = a.AggBase
		}
	}
	for k := 1; k < len(desc.Recs)-1; k++ {
		for i := range ep.Actions {
			a := &ep.Actions[i]
			if a.InTuple && a.Offset == base+desc.Recs[k].Offset && a.Size == desc.Recs[k].Size {
				keys[k] = a.Type.Kind == dif.TypeString
				break
			}
		}
	}
	return keys
}

// jsonActions name the actions whose records carry addresses.
var jsonActions = map[dof.ActKind]string{
	dof.ActStack: "stack", dof.ActUStack: "ustack", dof.ActJStack: "jstack",
	dof.ActSym: "sym", dof.ActMod: "mod", dof.ActUSym: "usym", dof.ActUAddr: "uaddr", dof.ActUMod: "umod",
}

// jsonActionName names an action the schema has no name of its own
// for by dtrace's name for it, lower case.
func jsonActionName(a dof.ActKind) string {
	if s, ok := jsonActions[a]; ok {
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

// jsonValue writes a record's value typed: an integer of 1, 2, 4 or 8
// bytes as a number (signed as the text output prints it), a string
// as a string, a stack as an array of its frames, an address as its
// symbol (or "0x…" when none holds it), other data as {"bytes": hex}.
func (c *Consumer) jsonValue(j *jsonBuf, r *record.Rec, b []byte) error {
	switch r.Action {
	case dof.ActStack:
		if r.Arg == 0 {
			return fmt.Errorf("%s", errBadStackPC)
		}
		size := int(r.Size / uint32(r.Arg))
		if size != 4 && size != 8 {
			return fmt.Errorf("%s", errBadStackPC)
		}
		j.raw("[")
		for i := 0; i < int(r.Arg); i++ {
			var pc uint64
			if size == 4 {
				pc = uint64(binary.LittleEndian.Uint32(b[i*size:]))
			} else {
				pc = le64(b[i*size:])
			}
			if pc == 0 {
				break
			}
			j.elem()
			j.str(c.addr2str(pc))
		}
		j.raw("]")
		return nil
	case dof.ActUStack, dof.ActJStack:
		depth, _ := dof.UStackParams(r.Arg)
		pid := le64(b)
		j.raw("[")
		for i := 0; i < int(depth); i++ {
			pc := le64(b[8+8*i:])
			if pc == 0 {
				break
			}
			j.elem()
			j.str(c.uaddr2str(pid, pc))
		}
		j.raw("]")
		return nil
	case dof.ActSym:
		j.str(c.sym(le64(b), false))
		return nil
	case dof.ActMod:
		j.str(c.sym(le64(b), true))
		return nil
	case dof.ActUSym, dof.ActUAddr:
		j.str(c.usym(b, r.Action))
		return nil
	case dof.ActUMod:
		j.str(c.umod(b))
		return nil
	}
	switch len(b) {
	case 8:
		j.int(int64(le64(b)))
	case 4:
		j.int(int64(int32(binary.LittleEndian.Uint32(b))))
	case 2:
		j.uint(uint64(binary.LittleEndian.Uint16(b)))
	case 1:
		j.uint(uint64(b[0]))
	default:
		if s, ok := printable(b); ok && !c.cfg.RawBytes {
			j.str(s)
			return nil
		}
		jsonBytes(j, b)
	}
	return nil
}

// printfJSON writes a printf() (or system()) record: its format, the
// text it prints and its arguments typed by their conversions; it runs
// system()'s command as the text output does. It returns how many
// records it consumed.
func (c *Consumer) printfJSON(j *jsonBuf, f *record.Firing, i int) (int, error) {
	rec := &f.EProbe.Recs[i]
	pf, err := c.format(rec.Format)
	if err != nil {
		return 0, err
	}
	s, err := c.desc.Format(rec.Format)
	if err != nil {
		return 0, err
	}
	var out strings.Builder
	recs := f.EProbe.Recs[i:]
	n, err := c.sprintf(&out, pf, recs, f.Data, f.Offset, nil)
	if err != nil {
		return 0, err
	}
	action, text := "printf", "output"
	switch rec.Action {
	case dof.ActFreopen:
		// The output goes to the file from this firing's object on.
		action, text = "freopen", "file"
		restore := len(pf.Convs) == 0 && pf.Tail == freopenRestore
		if err := c.freopen(f, out.String(), restore); err != nil {
			return 0, err
		}
	case dof.ActSystem:
		action, text = "system", "command"
		if c.cfg.System == nil {
			return 0, fmt.Errorf("system() is not allowed here")
		}
		if err := c.w.Flush(); err != nil {
			return 0, err
		}
		if err := c.cfg.System(out.String()); err != nil {
			return 0, err
		}
	}
	j.elem()
	j.raw(`{"action":`)
	j.str(action)
	j.key("format")
	j.str(cstring([]byte(s)))
	j.key(text)
	j.str(out.String())
	j.key("args")
	j.raw("[")
	next := 0
	take := func() (*record.Rec, []byte) {
		if next >= n {
			return nil, nil
		}
		r := &recs[next]
		next++
		return r, f.Data[r.Offset : r.Offset+r.Size]
	}
	if len(pf.Convs) == 0 {
		next = n
	}
	for k := range pf.Convs {
		cv := &pf.Convs[k]
		if cv.Kind == printf.Percent {
			continue
		}
		if cv.Flags&printf.DynWidth != 0 {
			take()
		}
		if cv.Flags&printf.DynPrec != 0 {
			take()
		}
		r, b := take()
		if r == nil {
			break
		}
		j.elem()
		if err := c.jsonArg(j, cv, r, b); err != nil {
			return 0, err
		}
	}
	j.raw("]}")
	return n, nil
}

// jsonArg writes a printf() argument typed by its conversion: integers
// as numbers (unsigned for %u %x %o %p…), floating point as numbers,
// strings as strings, and what dtrace turns into text (%a %A %k %Y %T
// %P %I %C …) as the text it prints without a width.
func (c *Consumer) jsonArg(j *jsonBuf, cv *printf.Conv, r *record.Rec, b []byte) error {
	switch r.Action {
	case dof.ActMod, dof.ActUMod, dof.ActSym, dof.ActUSym, dof.ActUAddr, dof.ActStack, dof.ActUStack, dof.ActJStack:
		return c.jsonValue(j, r, b)
	}
	switch cv.Kind {
	case printf.Signed, printf.Decimal:
		if len(b) == 1 || len(b) == 2 || len(b) == 4 || len(b) == 8 {
			j.int(recInt(b))
			return nil
		}
	case printf.Unsigned:
		switch len(b) {
		case 1:
			j.uint(uint64(b[0]))
			return nil
		case 2:
			j.uint(uint64(binary.LittleEndian.Uint16(b)))
			return nil
		case 4:
			j.uint(uint64(binary.LittleEndian.Uint32(b)))
			return nil
		case 8:
			j.uint(le64(b))
			return nil
		}
	case printf.Float:
		v, ok := recFloat(b)
		if ok && !math.IsInf(v, 0) && !math.IsNaN(v) {
			*j = strconv.AppendFloat(*j, v, 'g', -1, 64)
			return nil
		}
	case printf.String, printf.EscString, printf.WideString:
		j.str(cstring(b))
		return nil
	}
	s, err := c.convert(cv, &conv{prec: -1, verb: cv.Verb}, r, b, 0)
	if err != nil {
		return err
	}
	j.str(s)
	return nil
}

// aggJSON writes aggregation variable varid as one object of type
// "aggregation", its entries in dtrace's order, as printa() (printa
// set) or the end of tracing prints them.
func (c *Consumer) aggJSON(varid uint32, printa bool) error {
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
			fn = aggFunctions[d.Recs[len(d.Recs)-1].Action]
		}
	}
	if len(es) > 0 {
		r, _ := es[0].value()
		fn = aggFunctions[r.Action]
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
		if err := c.aggEntryJSON(&j, e, keys); err != nil {
			return err
		}
	}
	j.raw("]}")
	c.emit(j)
	return nil
}

// aggFunctions name the aggregating functions.
var aggFunctions = map[dof.ActKind]string{
	dof.AggCount: "count", dof.AggSum: "sum", dof.AggMin: "min", dof.AggMax: "max",
	dof.AggAvg: "avg", dof.AggStddev: "stddev", dof.AggQuantize: "quantize",
	dof.AggLQuantize: "lquantize", dof.AggLLQuantize: "llquantize",
}

// aggEntryJSON writes one entry: its keys (strs says which are D
// strings), then its value divided by
// normalize()'s divisor as the text output prints it: "value" for
// count, sum, min and max; "value" (the average or the deviation),
// "count" and "sum" for avg and stddev; "buckets" for the
// quantizations, each non-zero bucket's range and count.
func (c *Consumer) aggEntryJSON(j *jsonBuf, e *aggEntry, strs []bool) error {
	j.raw(`{"keys":[`)
	recs := e.desc.Recs
	for i := 1; i < len(recs)-1; i++ {
		r := &recs[i]
		j.elem()
		if strs[i] {
			j.str(cstring(e.data[r.Offset : r.Offset+r.Size]))
			continue
		}
		if err := c.jsonValue(j, r, e.data[r.Offset:r.Offset+r.Size]); err != nil {
			return err
		}
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

// finishJSON writes, once tracing stops, every aggregation printa() has
// not printed, one object each, in the order of their variables; Finish
// flushes them.
func (c *Consumer) finishJSON() error {
	if c.aggs.printed == nil {
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
		if err := c.aggJSON(id, false); err != nil {
			return err
		}
	}
	return nil
}

// faultJSON writes a firing of the ERROR probe as an object of type
// "error": the enabled probe and the probe that faulted, where (action
// 0 is the predicate; dif_offset -1 is none), the fault, its address
// when it has one, and dtrace's message.
func (c *Consumer) faultJSON(epid uint32, p record.Probe, action, offset int32, fault string, faddr uint64, hasAddr bool, msg string) {
	j := make(jsonBuf, 0, 256)
	j.header("error")
	j.key("epid")
	j.uint(uint64(epid))
	j.probe(p)
	j.key("action")
	j.int(int64(action))
	j.key("dif_offset")
	j.int(int64(offset))
	j.key("fault")
	j.str(fault)
	if hasAddr {
		j.key("address")
		j.addr(faddr)
	}
	j.key("message")
	j.str(msg)
	j.raw("}")
	c.emit(j)
}

// The kinds of drops, as a Drop names them.
const (
	DropPrincipal   = "principal"   // a CPU's buffer was full: "N drops on CPU M"
	DropAggregation = "aggregation" // a CPU's aggregation buffer was full
	DropDynamic     = "dynamic"     // dynamic variables
	DropSpeculative = "speculative" // speculative buffers were full
	DropSpecBusy    = "specbusy"    // failed speculations: buffers still busy
	DropSpecUnavail = "specunavail" // failed speculations: no buffer available
)

// A Drop is what the tracing lost, counted since the last report.
type Drop struct {
	Kind  string // Drop*
	CPU   int    // the CPU, for principal and aggregation drops; -1 for none
	Count uint64
}

// message is the drop in dtrace's words.
func (d Drop) message(prog string) string {
	s := "s"
	if d.Count == 1 {
		s = ""
	}
	switch d.Kind {
	case DropPrincipal:
		return fmt.Sprintf("%s: %d drop%s on CPU %d", prog, d.Count, s, d.CPU)
	case DropAggregation:
		return fmt.Sprintf("%s: %d aggregation drop%s on CPU %d", prog, d.Count, s, d.CPU)
	case DropDynamic:
		return fmt.Sprintf("%s: %d dynamic variable drop%s", prog, d.Count, s)
	case DropSpeculative:
		return fmt.Sprintf("%s: %d speculative drop%s", prog, d.Count, s)
	case DropSpecBusy:
		return fmt.Sprintf("%s: %d failed speculation%s (available buffer(s) still busy)", prog, d.Count, s)
	case DropSpecUnavail:
		return fmt.Sprintf("%s: %d failed speculation%s (no speculative buffer available)", prog, d.Count, s)
	}
	return fmt.Sprintf("%s: %d %s drop%s", prog, d.Count, d.Kind, s)
}

// ReportDrop reports a drop as dtrace does, on Config.Err, and, with
// Config.JSON, as an object of type "drop" on the output.
func (c *Consumer) ReportDrop(d Drop) error {
	if d.Count == 0 {
		return nil
	}
	msg := d.message(c.cfg.ProgName)
	if c.cfg.Err != nil {
		fmt.Fprintln(c.cfg.Err, msg)
	}
	if !c.cfg.JSON {
		return nil
	}
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
	c.emit(j)
	return c.w.Flush()
}
