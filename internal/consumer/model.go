package consumer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dlang/printf"
	"github.com/kdtrace/kdtrace/record"
)

// The consumer decodes each record once into a datum, the model every
// formatter renders: what the record's bytes mean (an integer, data, a
// stack's frames, a symbol, printf()'s output), with the record itself
// for what a format prints of it alone (its size, its action).

// The kinds of datum.
type datumKind uint8

const (
	datumInt    datumKind = iota // an integer of 1, 2, 4 or 8 bytes: i, signed as dtrace prints it
	datumData                    // data of no known type: b
	datumStack                   // stack(), ustack(), jstack(): frames
	datumSym                     // sym(), mod(), usym(), uaddr(), umod(): str, and pid for the user ones
	datumMem                     // tracemem(), printm(): b, always printed as data
	datumPrintf                  // printf(), system(), freopen(): text the text, pf the format
	datumExit                    // exit(): i the status

	// The kinds of printf()'s arguments beyond those, as their
	// conversions type them (printfArgs).
	datumUint   // an unsigned integer: i's bits
	datumFloat  // a floating-point number, finite: f
	datumString // a string: b, up to its NUL
	datumText   // what the conversion prints, without a width: str
)

// A datum is one record decoded. The walk over a firing reuses one, so
// that the text path allocates nothing for a number.
type datum struct {
	kind datumKind
	rec  *record.Rec
	b    []byte // the record's bytes (datumData, datumMem: the data)
	i    int64
	f    float64
	str  string
	// text is printf()'s output (datumPrintf), the consumer's own
	// buffer, valid until the next printf() is formatted.
	text []byte
	pid  uint64 // the process of a user stack or address
	// A stack's frames, and the depth it was recorded with: ustack()
	// of depth 0 prints nothing, not even a newline.
	frames []frame
	depth  int
	// print(): the type the record's format names (print), which a
	// format prints the value as, or as trace() when none resolves.
	print   bool
	typeRef string
	// ep is the firing's ECB, whose actions say whether a record holds
	// a D string (dString); nil for an aggregation's keys.
	ep *record.EProbe
	// printf(): the parsed format, and the records and the firing's
	// data its arguments come from (printfArgs types them).
	pf   *printf.Format
	recs []record.Rec
	data []byte
}

// A frame is one frame of a stack: the address as its symbol, and a
// ustack() helper's annotation, its string that starts with '@' ("" for
// none).
type frame struct {
	name, annot string
}

// dString reports whether the datum holds a D string, as the type of
// the action that computed it says (record.Layout gives the actions;
// FreeBSD's ioctls do not): a string is one even when its bytes are
// not all printable.
func (d *datum) dString() bool {
	if d.ep == nil {
		return false
	}
	for i := range d.ep.Actions {
		a := &d.ep.Actions[i]
		if !a.InTuple && !a.IsAgg() && a.Offset == d.rec.Offset && a.Action == d.rec.Action {
			return a.Type.Kind == dif.TypeString
		}
	}
	return false
}

// decode decodes the record r, whose bytes are b, by its action:
// stacks into frames, addresses into symbols, other records by their
// size, integers or data.
func (c *Consumer) decode(d *datum, r *record.Rec, b []byte) error {
	d.reset(r, b)
	switch r.Action {
	case dof.ActStack:
		if r.Arg == 0 {
			return fmt.Errorf("%s", errBadStackPC)
		}
		d.kind, d.depth = datumStack, int(r.Arg)
		return c.kernelFrames(d, b, int(r.Arg), int(r.Size/uint32(r.Arg)))
	case dof.ActUStack, dof.ActJStack:
		d.kind = datumStack
		c.userFrames(d, b, r.Arg)
		return nil
	case dof.ActSym:
		d.kind, d.str = datumSym, c.sym(le64(b), false)
		return nil
	case dof.ActMod:
		d.kind, d.str = datumSym, c.sym(le64(b), true)
		return nil
	case dof.ActUSym, dof.ActUAddr:
		d.kind, d.str, d.pid = datumSym, c.usym(b, r.Action), le64(b)
		return nil
	case dof.ActUMod:
		d.kind, d.str, d.pid = datumSym, c.umod(b), le64(b)
		return nil
	}
	d.kind = datumInt
	switch len(b) {
	case 8:
		d.i = int64(le64(b))
	case 4:
		d.i = int64(int32(binary.LittleEndian.Uint32(b)))
	case 2:
		d.i = int64(binary.LittleEndian.Uint16(b))
	case 1:
		d.i = int64(b[0])
	default:
		d.kind = datumData
	}
	return nil
}

// reset makes d a datum of record r, whose bytes are b, and nothing
// else, keeping its room for frames. It clears what every formatter
// reads of every datum (print, ep) and the stack's; the other fields
// are read only for the kinds that set them, and are left as they
// were: a firing's walk resets a datum for every record.
func (d *datum) reset(r *record.Rec, b []byte) {
	d.kind, d.rec, d.b = datumData, r, b
	d.frames, d.depth = d.frames[:0], 0
	d.print, d.ep = false, nil
}

// kernelFrames decodes a stack() record of depth frames of size bytes
// each, up to the first zero (dt_print_stack).
func (c *Consumer) kernelFrames(d *datum, b []byte, depth, size int) error {
	for i := 0; i < depth; i++ {
		var pc uint64
		switch size {
		case 4:
			pc = uint64(binary.LittleEndian.Uint32(b))
		case 8:
			pc = le64(b)
		default:
			return fmt.Errorf("%s", errBadStackPC)
		}
		if pc == 0 {
			break
		}
		b = b[size:]
		d.frames = append(d.frames, frame{name: c.addr2str(pc)})
	}
	return nil
}

// userFrames decodes a ustack() record: the pid, the frames up to the
// first zero, then the helpers' strings, an annotation for the frames
// whose string starts with '@' (dt_print_ustack).
func (c *Consumer) userFrames(d *datum, b []byte, arg uint64) {
	depth, strsize := dof.UStackParams(arg)
	d.depth, d.pid = int(depth), le64(b)
	if depth == 0 {
		return
	}
	pcs := b[8 : 8+8*int(depth)]
	strs := b[8+8*int(depth):]
	strs = strs[:min(len(strs), int(strsize))]
	for i := 0; i < int(depth); i++ {
		pc := le64(pcs[8*i:])
		if pc == 0 {
			break
		}
		str := ""
		if len(strs) > 0 {
			str = cstring(strs)
		}
		f := frame{name: c.uaddr2str(d.pid, pc)}
		if strings.HasPrefix(str, "@") {
			f.annot = str
		}
		d.frames = append(d.frames, f)
		if len(strs) > 0 {
			strs = strs[min(len(strs), len(str)+1):]
		}
	}
}

// sym formats a kernel address as sym() (or, with mod, mod()) shows it.
func (c *Consumer) sym(pc uint64, mod bool) string {
	if c.cfg.Symbols != nil {
		if s, ok := c.cfg.Symbols.Kernel(pc); ok {
			switch {
			case mod:
				return s.Object
			case s.Name != "":
				return s.Object + "`" + s.Name
			}
			return fmt.Sprintf("%s`0x%x", s.Object, pc)
		}
	}
	return fmt.Sprintf("0x%x", pc)
}

// addr2str formats a kernel address as %a does (dtrace_addr2str).
func (c *Consumer) addr2str(addr uint64) string {
	if c.cfg.Symbols != nil {
		if s, ok := c.cfg.Symbols.Kernel(addr); ok {
			return s.at(addr)
		}
	}
	return fmt.Sprintf("0x%x", addr)
}

// uaddr2str formats a user address as %A and uaddr() do
// (dtrace_uaddr2str).
func (c *Consumer) uaddr2str(pid, addr uint64) string {
	if pid != 0 && c.cfg.Symbols != nil {
		if s, ok := c.cfg.Symbols.User(pid, addr); ok {
			return s.at(addr)
		}
	}
	return fmt.Sprintf("0x%x", addr)
}

// usym formats a usym() or uaddr() record: the pid, then the address;
// usym() shows the symbol without its offset.
func (c *Consumer) usym(addr []byte, act dof.ActKind) string {
	pid, pc := le64(addr), le64(addr[8:])
	if act == dof.ActUSym && c.cfg.Symbols != nil {
		if s, ok := c.cfg.Symbols.User(pid, pc); ok && s.Name != "" {
			pc = s.Value
		}
	}
	return c.uaddr2str(pid, pc)
}

// umod formats a umod() record.
func (c *Consumer) umod(addr []byte) string {
	pid, pc := le64(addr), le64(addr[8:])
	if c.cfg.Symbols != nil {
		if s, ok := c.cfg.Symbols.User(pid, pc); ok {
			return s.Object
		}
	}
	return fmt.Sprintf("0x%x", pc)
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string { return string(cbytes(b)) }

// cbytes returns b up to its first NUL, without a copy.
func cbytes(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
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

// printfArgs decodes printf()'s arguments, d's records, typed by their
// conversions, and hands each to each: integers signed or unsigned
// (%u %x %o %p…) as their conversion reads them, floating point when
// finite, strings, stacks and symbols as records decode, and what
// dtrace turns into text (%a %A %Y %T %P %I %C …) as the text it
// prints without a width. The text format prints the output alone and
// never asks.
func (c *Consumer) printfArgs(d *datum, each func(*datum)) error {
	next := 0
	take := func() (*record.Rec, []byte) {
		if next >= len(d.recs) {
			return nil, nil
		}
		r := &d.recs[next]
		next++
		return r, d.data[r.Offset : r.Offset+r.Size]
	}
	a := &c.arg
	for k := range d.pf.Convs {
		cv := &d.pf.Convs[k]
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
		if err := c.printfArg(a, cv, r, b); err != nil {
			return err
		}
		each(a)
	}
	return nil
}

// printfArg decodes one argument of printf() for printfArgs.
func (c *Consumer) printfArg(a *datum, cv *printf.Conv, r *record.Rec, b []byte) error {
	switch r.Action {
	case dof.ActMod, dof.ActUMod, dof.ActSym, dof.ActUSym, dof.ActUAddr, dof.ActStack, dof.ActUStack, dof.ActJStack:
		return c.decode(a, r, b)
	}
	a.reset(r, b)
	switch cv.Kind {
	case printf.Signed, printf.Decimal:
		switch len(b) {
		case 1, 2, 4, 8:
			a.kind, a.i = datumInt, recInt(b)
			return nil
		}
	case printf.Unsigned:
		switch len(b) {
		case 1:
			a.kind, a.i = datumUint, int64(b[0])
			return nil
		case 2:
			a.kind, a.i = datumUint, int64(binary.LittleEndian.Uint16(b))
			return nil
		case 4:
			a.kind, a.i = datumUint, int64(binary.LittleEndian.Uint32(b))
			return nil
		case 8:
			a.kind, a.i = datumUint, int64(le64(b))
			return nil
		}
	case printf.Float:
		v, ok := recFloat(b)
		if ok && !math.IsInf(v, 0) && !math.IsNaN(v) {
			a.kind, a.f = datumFloat, v
			return nil
		}
	case printf.String, printf.EscString, printf.WideString:
		a.kind, a.b = datumString, cbytes(b)
		return nil
	}
	s, err := c.convert(nil, cv, &conv{prec: -1, verb: cv.Verb}, r, b, 0)
	if err != nil {
		return err
	}
	a.kind, a.str = datumText, string(s)
	return nil
}

// A firingHead is what starts a firing's output: its CPU, the firing
// (its EPID and timestamp), its probe and, with flowindent, how it
// moves the indentation (flow, the prefix of its line, the indentation
// before it).
type firingHead struct {
	cpu    int
	f      *record.Firing
	p      record.Probe
	flow   int
	prefix string
	indent int
}

// A faultReport is a firing of the ERROR clause decoded: the enabled
// probe and the probe that faulted, where (action 0 is the predicate;
// offset -1 is none), the fault in dtrace's words, its address when it
// has one (hasAddr), and dtrace's message, which the consumer reports
// on Config.Err whatever the format.
type faultReport struct {
	epid           uint32
	p              record.Probe
	action, offset int32
	fault          string
	addr           uint64
	hasAddr        bool
	msg            string
}
