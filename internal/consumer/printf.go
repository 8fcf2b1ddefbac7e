package consumer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dlang/printf"
	"github.com/kdtrace/kdtrace/record"
)

// The errors of records that do not match their descriptions, made
// once: a firing's printf() allocates nothing.
var (
	errMismatch = errors.New(errDMismatch)
	errOffset   = errors.New(errDOffset)
	errAlign    = errors.New(errDAlign)
)

// format returns format n, parsed, as the consumer keeps it
// (dt_format_lookup, dtrace_printf_create).
func (c *Consumer) format(n uint16) (*printf.Format, error) {
	if f, ok := c.formats[n]; ok {
		return f, nil
	}
	s, err := c.desc.Format(n)
	if err != nil {
		return nil, err
	}
	f, err := printf.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("format %q: %v", s, err)
	}
	c.formats[n] = f
	return f, nil
}

// printfLike runs the printf-like action whose first record is i: it
// formats that record and the ones after it into d, the text printf()
// prints, and runs it (system()) or opens it (freopen()). It returns how
// many records it consumed.
func (c *Consumer) printfLike(d *datum, f *record.Firing, i int) (int, error) {
	rec := &f.EProbe.Recs[i]
	pf, err := c.format(rec.Format)
	if err != nil {
		return 0, err
	}
	recs := f.EProbe.Recs[i:]
	out, n, err := c.sprintf(c.text[:0], pf, recs, f.Data, f.Offset, nil)
	c.text = out
	if err != nil {
		return 0, err
	}
	d.reset(rec, f.Rec(i))
	d.kind, d.text, d.pf, d.recs, d.data = datumPrintf, out, pf, recs[:n], f.Data
	switch rec.Action {
	case dof.ActSystem:
		if c.cfg.System == nil {
			return 0, fmt.Errorf("system() is not allowed here")
		}
		// What was printed before comes before the command's output.
		if err := c.flush(); err != nil {
			return 0, err
		}
		if err := c.cfg.System(string(d.text)); err != nil {
			return 0, err
		}
	case dof.ActFreopen:
		// Only freopen("") restores: its format is the sentinel, while
		// freopen("%s", ".") names a file.
		restore := len(pf.Convs) == 0 && pf.Tail == freopenRestore
		if err := c.freopen(f, string(d.text), restore); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// sprintf appends recs, records of data, which starts at offset off of
// its buffer, formatted with pf (dt_printf_format), to out, and returns
// how many it consumed. For printa(), aggs are the entries of its aggregations for
// the key recs hold: each %@ converts the next one's value (the one's,
// when there is one).
func (c *Consumer) sprintf(out []byte, pf *printf.Format, recs []record.Rec, data []byte, off int, aggs []*aggEntry) ([]byte, int, error) {
	next, nextAgg := 0, 0
	take := func() (*record.Rec, []byte, error) {
		if next == len(recs) {
			return nil, nil, errMismatch
		}
		r := &recs[next]
		next++
		if uint64(r.Offset)+uint64(r.Size) > uint64(len(data)) {
			return nil, nil, errOffset
		}
		if r.Alignment != 0 && (off+int(r.Offset))%int(r.Alignment) != 0 {
			return nil, nil, errAlign
		}
		return r, data[r.Offset : r.Offset+r.Size], nil
	}
	getint := func() (int, error) {
		r, b, err := take()
		if err != nil {
			return 0, err
		}
		switch r.Size {
		case 1:
			return int(int8(b[0])), nil
		case 2:
			return int(int16(binary.LittleEndian.Uint16(b))), nil
		case 4:
			return int(int32(binary.LittleEndian.Uint32(b))), nil
		case 8:
			return int(int32(binary.LittleEndian.Uint64(b))), nil
		}
		return 0, errMismatch
	}
	if len(pf.Convs) == 0 {
		// A format of text alone consumes its one record.
		return append(out, pf.Tail...), min(1, len(recs)), nil
	}
	for k := range pf.Convs {
		cv := &pf.Convs[k]
		out = append(out, cv.Prefix...)
		if cv.Kind == printf.Percent {
			out = append(out, '%')
			continue
		}
		width, prec := cv.Width, cv.Prec
		dynwidth := 0
		if cv.Flags&printf.DynWidth != 0 {
			w, err := getint()
			if err != nil {
				return out, 0, err
			}
			width, dynwidth = w, w
		}
		if cv.Flags&printf.DynPrec != 0 {
			p, err := getint()
			if err != nil {
				return out, 0, err
			}
			prec = p
		}
		var r *record.Rec
		var b []byte
		var err error
		switch {
		case cv.Flags&printf.AggValue != 0:
			// Each %@ converts the next aggregation's value; those
			// beyond the last convert the last's again.
			agg := aggs[min(nextAgg, len(aggs)-1)]
			nextAgg++
			r, b = agg.value()
			if s, ok, err := aggConv(r, b, agg.normal, c.sortOpts); ok || err != nil {
				if err != nil {
					return out, 0, err
				}
				out = append(out, s...)
				continue
			}
			r, b = valueRec(r, b, agg.normal, cv.Verb)
		case aggs != nil && next == len(recs):
			// A conversion beyond the keys prints nothing.
			continue
		default:
			r, b, err = take()
		}
		if err != nil {
			return out, 0, err
		}
		spec := conv{
			alt:   cv.Flags&printf.Alt != 0,
			zero:  cv.Flags&printf.ZeroPad != 0,
			left:  width < 0 || cv.Flags&printf.Left != 0,
			plus:  cv.Flags&printf.Plus != 0,
			space: cv.Flags&printf.Space != 0,
			width: max(width, -width),
			prec:  -1,
			verb:  cv.Verb,
		}
		if prec > 0 {
			spec.prec = prec
		}
		out, err = c.convert(out, cv, &spec, r, b, dynwidth)
		if err != nil {
			return out, 0, err
		}
	}
	return append(out, pf.Tail...), next, nil
}

// aggConv formats an aggregation's value that %@ prints whatever its
// conversion: a quantization's histogram (pfprint_quantize and its kin).
func aggConv(r *record.Rec, b []byte, normal uint64, o sortOpts) (string, bool, error) {
	switch r.Action {
	case dof.AggQuantize, dof.AggLQuantize, dof.AggLLQuantize:
		h, err := hist(r.Action, b)
		if err != nil {
			return "", true, err
		}
		var sb strings.Builder
		h.utf8 = o.utf8
		h.write(&sb, normal, o.zoom)
		return sb.String(), true, nil
	}
	return "", false, nil
}

// valueRec returns the value %@ converts, normalized, as an 8-byte
// record: avg()'s average, stddev()'s deviation, the others' datum
// (pfprint_average, pfprint_stddev, pfprint_sint and pfprint_uint).
func valueRec(r *record.Rec, b []byte, normal uint64, verb byte) (*record.Rec, []byte) {
	w := words(b)
	var v uint64
	switch r.Action {
	case dof.AggAvg:
		if w[0] != 0 {
			v = uint64(w[1] / int64(normal) / w[0])
		}
	case dof.AggStddev:
		v = stddev(w, normal)
	default:
		if strings.IndexByte("dic", verb) >= 0 {
			v = uint64(w[0] / int64(normal))
		} else {
			v = uint64(w[0]) / normal
		}
	}
	out := make([]byte, 8)
	binary.LittleEndian.PutUint64(out, v)
	return &record.Rec{Action: r.Action, Size: 8}, out
}

// convert appends one record printed with one conversion to dst, as
// the conversion's pfprint_* routine prints it.
func (c *Consumer) convert(dst []byte, cv *printf.Conv, spec *conv, r *record.Rec, b []byte, dynwidth int) ([]byte, error) {
	if uint64(len(b)) < minSize(r) {
		return dst, errMismatch
	}
	switch r.Action {
	case dof.ActMod:
		return str(spec, dst, c.sym(le64(b), true)), nil
	case dof.ActUMod:
		return str(spec, dst, c.umod(b)), nil
	}
	switch cv.Kind {
	case printf.Signed, printf.Decimal:
		var v int64
		switch len(b) {
		case 1:
			v = int64(int8(b[0]))
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(b)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(b)))
		case 8:
			v = int64(le64(b))
		default:
			return dst, errMismatch
		}
		if cv.Kind == printf.Decimal && len(b) < 4 {
			// %d left as it is reads its value as unsigned, as
			// dtrace's consumer never marks it signed.
			v = int64(uint64(v) & (1<<(8*len(b)) - 1))
		}
		switch spec.verb {
		case 'c':
			if cv.Length != "" && (v < 0 || v > 0x7f) {
				// A wide character the C locale has no byte for.
				return dst, fmt.Errorf("%%%sc of %#x: not a character of the C locale", cv.Length, v)
			}
			return spec.char(dst, byte(v)), nil
		case 'C':
			return str(spec, dst, strchr2esc([]byte{byte(v)})), nil
		case 'd':
			spec.verb = 'i'
		}
		return spec.signed(dst, v), nil
	case printf.Unsigned:
		var v uint64
		switch len(b) {
		case 1:
			v = uint64(b[0])
		case 2:
			v = uint64(binary.LittleEndian.Uint16(b))
		case 4:
			v = uint64(binary.LittleEndian.Uint32(b))
		case 8:
			v = le64(b)
		default:
			return dst, errMismatch
		}
		return spec.int(dst, v, false), nil
	case printf.Float:
		v, ok := recFloat(b)
		if !ok {
			return dst, errMismatch
		}
		return spec.float(dst, v), nil
	case printf.Addr:
		switch len(b) {
		case 4:
			return str(spec, dst, c.addr2str(uint64(binary.LittleEndian.Uint32(b)))), nil
		case 8:
			return str(spec, dst, c.addr2str(le64(b))), nil
		}
		return dst, errMismatch
	case printf.UAddr:
		var pid, v uint64
		switch len(b) {
		case 4:
			v = uint64(binary.LittleEndian.Uint32(b))
		case 8:
			v = le64(b)
		case 16:
			pid, v = le64(b), le64(b[8:])
		default:
			return dst, errMismatch
		}
		if pid == 0 {
			pid = c.cfg.Target
		}
		return str(spec, dst, c.uaddr2str(pid, v)), nil
	case printf.Stack:
		return c.stackConv(dst, spec, r, b, dynwidth)
	case printf.Time, printf.RFC822Time:
		if len(b) != 8 {
			return dst, errMismatch
		}
		t := time.Unix(int64(le64(b)/1e9), 0).Local()
		if cv.Kind == printf.Time {
			// ctime's "Dec  3 17:20:00 1973" turned into adb's
			// "1973 Dec  3 17:20:00".
			return str(spec, dst, t.Format("2006 Jan _2 15:04:05")), nil
		}
		isoYear, _ := t.ISOWeek() // strftime's %G
		return str(spec, dst, fmt.Sprintf("%s, %02d %s %d %s %s", t.Format("Mon"), t.Day(), t.Format("Jan"), isoYear, t.Format("15:04:05"), t.Format("MST"))), nil
	case printf.Port:
		if len(b) != 2 {
			return dst, errMismatch
		}
		port := binary.LittleEndian.Uint16(b)
		if c.cfg.LookupPort != nil {
			if name, ok := c.cfg.LookupPort(port); ok {
				return str(spec, dst, name), nil
			}
		}
		return str(spec, dst, fmt.Sprint(port)), nil
	case printf.InetAddr:
		s := cstring(b)
		if c.cfg.LookupHost != nil {
			if name, ok := c.cfg.LookupHost(s); ok {
				return str(spec, dst, name), nil
			}
		}
		return str(spec, dst, s), nil
	case printf.String:
		return str(spec, dst, cbytes(b)), nil
	case printf.EscString:
		return str(spec, dst, strchr2esc(b)), nil
	case printf.EscChar:
		var ch byte
		switch len(b) {
		case 1, 2, 4:
			ch = b[0]
		default:
			return dst, errMismatch
		}
		return str(spec, dst, strchr2esc([]byte{ch})), nil
	case printf.WideString:
		var s []byte
		for i := 0; i+4 <= len(b); i += 4 {
			w := binary.LittleEndian.Uint32(b[i:])
			if w == 0 {
				break
			}
			if w > 0x7f {
				return dst, fmt.Errorf("%%ls of %#x: not a character of the C locale", w)
			}
			s = append(s, byte(w))
		}
		return str(spec, dst, s), nil
	}
	return dst, errMismatch
}

// stackConv prints a stack for %k (pfprint_stack): a left-justified
// conversion's width indents the frames instead of padding them.
func (c *Consumer) stackConv(dst []byte, spec *conv, r *record.Rec, b []byte, dynwidth int) ([]byte, error) {
	indent := 0
	switch {
	case dynwidth < 0:
		indent = -dynwidth
	case spec.left:
		indent = spec.width
	}
	if spec.left {
		spec.width = 0
	}
	var d datum
	switch r.Action {
	case dof.ActStack, dof.ActUStack, dof.ActJStack:
		if err := c.decode(&d, r, b); err != nil {
			return dst, err
		}
	default:
		return dst, errMismatch
	}
	var out strings.Builder
	writeFrames(&out, func(s string) string { return string(str(spec, nil, s)) }, &d, indent)
	return append(dst, out.String()...), nil
}

// strchr2esc escapes a string's bytes as C escapes, up to and including
// its first NUL, as dtrace's %S does.
func strchr2esc(b []byte) string {
	var s strings.Builder
	for _, ch := range b {
		switch ch {
		case 0:
			s.WriteString(`\0`)
		case '\a':
			s.WriteString(`\a`)
		case '\b':
			s.WriteString(`\b`)
		case '\f':
			s.WriteString(`\f`)
		case '\n':
			s.WriteString(`\n`)
		case '\r':
			s.WriteString(`\r`)
		case '\t':
			s.WriteString(`\t`)
		case '\v':
			s.WriteString(`\v`)
		case '"':
			s.WriteString(`\"`)
		case '\\':
			s.WriteString(`\\`)
		case ' ':
			s.WriteByte(' ')
		default:
			if ch < '!' || ch > '~' {
				fmt.Fprintf(&s, `\%o%o%o`, ch>>6&3, ch>>3&7, ch&7)
			} else {
				s.WriteByte(ch)
			}
		}
		if ch == 0 {
			break
		}
	}
	return s.String()
}

// x87 converts an amd64 long double (80-bit extended precision in 16
// bytes) to the nearest float64.
func x87(b []byte) float64 {
	mant := le64(b)
	se := binary.LittleEndian.Uint16(b[8:])
	neg, exp := se&0x8000 != 0, int(se&0x7fff)
	var v float64
	switch {
	case exp == 0x7fff && mant<<1 == 0:
		v = math.Inf(1)
	case exp == 0x7fff:
		v = math.NaN()
	default:
		f := new(big.Float).SetUint64(mant)
		f.SetMantExp(f, exp-16383-63)
		v, _ = f.Float64()
	}
	if neg {
		v = -v
	}
	return v
}

// recFloat returns the floating-point value of a record of 4, 8 or 16
// (x87's long double) bytes, and false for another size.
func recFloat(b []byte) (float64, bool) {
	switch len(b) {
	case 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), true
	case 8:
		return math.Float64frombits(le64(b)), true
	case 16:
		return x87(b), true
	}
	return 0, false
}
