package consumer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dlang/printf"
	"github.com/kdtrace/kdtrace/record"
)

// Config is what a consumer prints to and the options that bear on
// printing.
type Config struct {
	Out io.Writer // the trace output (stdout, or -o's file)
	// Err receives dtrace's messages about drops; nil discards them.
	Err io.Writer
	// ProgName names the program in messages: "dtrace", "kdtrace".
	ProgName string
	Quiet    bool // the quiet option (-q): only what actions print
	// Flowindent is the flowindent option (-F): entries and returns
	// indent and unindent the lines, which name the function only.
	Flowindent bool
	RawBytes   bool // the rawbytes option: data always as a hex dump
	// Symbols looks up addresses for %a, %A, sym(), stack() and their
	// kin; nil finds nothing, and addresses print in hexadecimal.
	Symbols Symbols
	// System runs system()'s command line; nil refuses it.
	System func(cmd string) error
	// SetOpt sets, for setopt(), the options the consumer does not
	// keep itself (switchrate, aggrate: the runtime's); nil refuses
	// them. Its error is the reason dtrace gives.
	SetOpt func(name, value string) error
	// Target is $target, the process -p or -c names: %A of an address
	// without a pid looks it up there.
	Target uint64
	// LookupHost names the host of an address for %I, and LookupPort
	// the service of a TCP port for %P; when nil, or when they find
	// nothing, the address or the number is printed, as dtrace prints
	// it when its lookups fail.
	LookupHost func(addr string) (string, bool)
	LookupPort func(port uint16) (string, bool)
	// The options that order aggregations' entries: aggsortkey (by key
	// rather than value), aggsortrev (reversed), aggsortkeypos (the key
	// compared first). setopt() changes them as it runs.
	AggSortKey    bool
	AggSortRev    bool
	AggSortKeyPos int
	AggSortPos    int // aggsortpos: the aggregation of several a printa() sorts on first
	// AggZoom is the aggzoom option: histograms' bars scaled to their
	// largest count rather than their total.
	AggZoom bool
	// AggHist is the agghist option: sum() and count() printed as bars
	// of a histogram of their keys.
	AggHist bool
	// UTF8 is the encoding option set to utf8: histograms' bars are
	// drawn with UTF-8 block elements, in eighths.
	UTF8 bool
	// AggPack is the aggpack option: quantize() and lquantize() printed
	// one line an entry.
	AggPack bool
	// Format is the output's format: Text, dtrace's, or JSON (-O,
	// --libxo json), JSON Lines: one object per firing, aggregation,
	// error and drop, as json.go and kdtrace(1) describe them. A value
	// that names no format is Text.
	Format Format
	// AggName names aggregation variable varid ("@count") in JSON
	// objects; nil, or "", leaves the name out.
	AggName func(varid uint32) string
	// Types resolves the types of print()'s values, which its records
	// name as their format; nil prints them as trace() does.
	Types typeTable
}

// A Symbol is what an address lookup finds.
type Symbol struct {
	Object string // the module or object's name as dtrace shows it ("kernel", "libc.so.7")
	Name   string // the symbol; "" when only the object holding the address is known
	Value  uint64 // the symbol's address
}

// at formats addr by the symbol that holds it, as dtrace's address
// formats do: object`name+0xoff, object`name at the symbol itself, or
// object`0xaddr when only the object is known.
func (s Symbol) at(addr uint64) string {
	switch {
	case s.Name == "":
		return fmt.Sprintf("%s`0x%x", s.Object, addr)
	case addr > s.Value:
		return fmt.Sprintf("%s`%s+0x%x", s.Object, s.Name, addr-s.Value)
	}
	return s.Object + "`" + s.Name
}

// Symbols looks addresses up.
type Symbols interface {
	// Kernel looks up a kernel address (dtrace_lookup_by_addr).
	Kernel(addr uint64) (Symbol, bool)
	// User looks up an address of process pid (Plookup_by_addr and
	// Pobjname, the object's base name).
	User(pid, addr uint64) (Symbol, bool)
}

// StackIndent is the indentation of stack frames (_dtrace_stkindent).
const StackIndent = 14

// A Consumer prints the records of one enabling.
type Consumer struct {
	cfg     Config
	desc    record.Describer
	w       *bufio.Writer
	heading bool
	// skipAggs says Finish prints no aggregations (SkipAggs).
	skipAggs bool
	// reopened is the file freopen() redirected the actions' output
	// to, nil while it goes to Config.Out; stdout then writes to
	// Config.Out what dtrace(1) prints itself: the heading, the
	// firings' probes and newlines, the last newline. On FreeBSD,
	// freopen() redirects libdtrace's printing only.
	reopened *os.File
	stdout   *bufio.Writer
	status   int
	exited   bool
	formats  map[uint16]*printf.Format
	only     func(record.Probe) bool // the probes whose firings are printed; nil: all

	aggs     aggState
	sortOpts sortOpts

	out formatter // Config.Format's
	d   datum     // the record being handed to out, reused
	kd  datum     // an aggregation's key being printed, reused
	arg datum     // printf()'s argument being handed to out, reused
	// The text of the firing's printf() (d.text), of printa()'s
	// formatted lines, and of a line's columns and integers, their
	// room reused: a firing allocates nothing.
	text, aggText, line []byte

	// Flow indentation (dt_flowindent): the EPID of the firing before,
	// the indentation of the next line.
	lastEPID uint32
	indent   int

	// The enabled probe of the firing before, and its probe.
	lastEP    *record.EProbe
	lastProbe record.Probe
}

// outBufSize is the room of the output's buffer, which Consume flushes
// once a CPU's buffer is printed: a round of a million firings is
// written in writes of 64 KiB, each of them a system call that
// syscall:::entry sees, not of 4 KiB.
const outBufSize = 64 << 10

// New returns a consumer of the records desc describes.
func New(desc record.Describer, cfg Config) *Consumer {
	if cfg.ProgName == "" {
		cfg.ProgName = "dtrace"
	}
	c := &Consumer{cfg: cfg, desc: desc, w: bufio.NewWriterSize(cfg.Out, outBufSize), formats: make(map[uint16]*printf.Format),
		sortOpts: sortOpts{key: cfg.AggSortKey, rev: cfg.AggSortRev, keypos: cfg.AggSortKeyPos, pos: cfg.AggSortPos, zoom: cfg.AggZoom, hist: cfg.AggHist, utf8: cfg.UTF8, pack: cfg.AggPack}}
	f := Text
	if cfg.Format >= 0 && int(cfg.Format) < len(formats) {
		f = cfg.Format
	}
	c.out = formats[f].new(c)
	return c
}

// Exited reports whether an exit() record was consumed, and the last
// status one gave: the status dtrace exits with.
func (c *Consumer) Exited() (status int, exited bool) { return c.status, c.exited }

// SkipAggs makes Finish print no aggregations, as dtrace(1) prints
// none once it is interrupted a second time (its g_impatient): a user
// who has waited long enough for the last records.
func (c *Consumer) SkipAggs() { c.skipAggs = true }

// Finish writes the newline dtrace writes once tracing stops, then the
// aggregations printa() has not printed, all in one sorted walk
// (dtrace_aggregate_print), and flushes the output.
func (c *Consumer) Finish() error {
	err := c.out.finish(!c.skipAggs)
	if ferr := c.flush(); err == nil {
		err = ferr
	}
	if c.reopened != nil {
		if cerr := c.restore(); err == nil {
			err = cerr
		}
	}
	return err
}

// flush flushes the output, and dtrace(1)'s own when freopen() has
// parted them.
func (c *Consumer) flush() error {
	if c.stdout != nil {
		if err := c.stdout.Flush(); err != nil {
			return err
		}
	}
	return c.w.Flush()
}

// own returns the writer of what dtrace(1) prints itself, which
// freopen() does not redirect.
func (c *Consumer) own() *bufio.Writer {
	if c.stdout != nil {
		return c.stdout
	}
	return c.w
}

// An Error is a buffer that cannot be printed: a libdtrace error
// (EDT_*), in its words.
type Error struct {
	EPID   uint32
	Rec    int // the record, from 0; -1 for none
	Reason string
}

func (e *Error) Error() string {
	if e.Rec < 0 {
		return fmt.Sprintf("EPID %d: %s", e.EPID, e.Reason)
	}
	return fmt.Sprintf("EPID %d, record #%d: %s", e.EPID, e.Rec+1, e.Reason)
}

// libdtrace's error messages.
const (
	errDMismatch  = "Data record list does not match statement"
	errDOffset    = "Data record offset exceeds buffer boundary"
	errDAlign     = "Data record has inappropriate alignment"
	errBadStackPC = "Invalid stack program counter size"
	errBadAgg     = "Unknown aggregating action"
)

// Consume prints the records of one CPU's buffer, data being the bytes
// the backend (or DTRACEIOC_BUFSNAP) gave and drops the firings it
// dropped, as dt_consume_cpu does with dtrace(1)'s callbacks. The output
// is flushed before Consume returns.
func (c *Consumer) Consume(cpu int, data []byte, drops uint64) error {
	return c.consumeBuf(record.CPUBuffer{CPU: cpu, Data: data, Drops: drops}, nil)
}

// ConsumeRound prints one round of buffers, one per CPU, in the order
// dtrace_consume prints them without the temporal option: CPU by CPU,
// except that the BEGIN probe's records come first and the END probe's
// last. beganOn is the CPU that ran BEGIN, in the first round after
// tracing started, and -1 after it; endedOn is the CPU that ran END,
// once tracing stopped, and -1 before. When both are the same CPU, its
// buffer is read twice, as dt_consume_begin reads it: its BEGIN
// records (and the errors they caused) first, the rest after every
// other CPU's.
func (c *Consumer) ConsumeRound(bufs []record.CPUBuffer, beganOn, endedOn int) error {
	byCPU := make(map[int]*record.CPUBuffer, len(bufs))
	var cpus []int
	for i := range bufs {
		if _, dup := byCPU[bufs[i].CPU]; dup {
			return fmt.Errorf("two buffers of CPU %d in one round", bufs[i].CPU)
		}
		byCPU[bufs[i].CPU] = &bufs[i]
		cpus = append(cpus, bufs[i].CPU)
	}
	slices.Sort(cpus)
	done := map[int]bool{}
	if b := byCPU[beganOn]; beganOn >= 0 && b != nil {
		done[beganOn] = true
		if beganOn != endedOn {
			if err := c.consumeBuf(*b, nil); err != nil {
				return err
			}
		} else {
			isBegin := func(p record.Probe) bool { return p.Provider == "dtrace" && p.Name == "BEGIN" }
			if err := c.consumeBuf(*b, isBegin); err != nil {
				return err
			}
			for _, cpu := range cpus {
				if cpu != beganOn {
					if err := c.consumeBuf(*byCPU[cpu], nil); err != nil {
						return err
					}
				}
			}
			rest := *b
			rest.Drops = 0 // reported with the first pass
			return c.consumeBuf(rest, func(p record.Probe) bool { return !isBegin(p) })
		}
	}
	for _, cpu := range cpus {
		if done[cpu] || cpu == endedOn {
			continue
		}
		// Each CPU's lines start unindented, as in dtrace_consume.
		c.indent = 0
		if err := c.consumeBuf(*byCPU[cpu], nil); err != nil {
			return err
		}
	}
	if b := byCPU[endedOn]; endedOn >= 0 && b != nil && !done[endedOn] {
		return c.consumeBuf(*b, nil)
	}
	return nil
}

// consumeBuf prints a buffer's firings whose probe only accepts (all
// when nil; for the errors libdtrace's ERROR clause reports, the probe
// that faulted), then reports its drops.
func (c *Consumer) consumeBuf(b record.CPUBuffer, only func(record.Probe) bool) error {
	cpu, drops := b.CPU, b.Drops
	c.only = only
	err := c.consume(cpu, b.Data)
	c.only = nil
	if ferr := c.flush(); err == nil {
		err = ferr
	}
	if err == nil {
		err = c.ReportDrop(Drop{Kind: DropPrincipal, CPU: cpu, Count: drops})
	}
	return err
}

// consume prints a buffer's firings as it walks them, one firing ahead
// for flowindent, which looks at the next.
func (c *Consumer) consume(cpu int, data []byte) error {
	var f, next record.Firing
	f, off, err := record.Next(data, 0, c.desc)
	for err == nil && f.EProbe != nil {
		next, off, err = record.Next(data, off, c.desc)
		var np *record.Firing
		if err == nil && next.EProbe != nil {
			np = &next
		}
		ferr := c.firing(cpu, &f, np)
		c.lastEPID = f.EProbe.EPID
		if ferr != nil {
			return ferr
		}
		f = next
	}
	return err
}

// The kinds of flow of a firing.
const (
	flowNone = iota
	flowEntry
	flowReturn
)

// flow tells how a firing moves the indentation of flowindent, and the
// prefix of its line, as dt_flowindent does: a probe named "entry" or
// "…-entry" indents (unless the firing before was another ECB of the
// same probe), one named "return" or "…-return" unindents (unless the
// next is another ECB of the same probe); syscalls have their own
// arrows.
func (c *Consumer) flow(p record.Probe, ep *record.EProbe, next *record.Firing) (int, string) {
	is := func(kind string) bool {
		i := strings.Index(p.Name, kind)
		return i >= 0 && i+len(kind) == len(p.Name) && (i == 0 || p.Name[i-1] == '-')
	}
	syscall := p.Provider == "syscall"
	switch {
	case is("entry"):
		if c.lastEPID != record.EPIDNone && c.lastEPID != ep.EPID {
			if last, err := c.desc.EProbe(c.lastEPID); err == nil && last.ProbeID == p.ID {
				return flowNone, "| "
			}
		}
		if syscall {
			return flowEntry, " => "
		}
		return flowEntry, " -> "
	case is("return"):
		if next != nil && next.EProbe.EPID != ep.EPID && next.EProbe.ProbeID == p.ID {
			return flowNone, "| "
		}
		if syscall {
			return flowReturn, " <= "
		}
		return flowReturn, " <- "
	}
	return flowNone, "| "
}

// firing prints one firing, as dt_consume_cpu does with dtrace(1)'s
// chew and chewrec: it decodes each record once, carries out what the
// actions do (exit(), the library actions, system(), freopen()), and
// hands the firing's head and each record's datum to the formatter.
func (c *Consumer) firing(cpu int, f *record.Firing, next *record.Firing) error {
	ep := f.EProbe
	p, err := c.probe(ep)
	if err != nil {
		return &Error{EPID: ep.EPID, Rec: -1, Reason: err.Error()}
	}
	if ep.UArg == dof.ECBError {
		return c.fault(f, p)
	}
	h := firingHead{cpu: cpu, f: f, p: p, flow: flowNone}
	if c.cfg.Flowindent {
		h.flow, h.prefix = c.flow(p, ep, next)
		if h.flow == flowReturn && c.indent > 0 {
			c.indent -= 2
		}
	}
	h.indent = c.indent
	if h.flow == flowEntry {
		c.indent += 2
	}
	if c.only != nil && !c.only(p) {
		return nil
	}
	c.out.begin(h)
	d := &c.d
	var tracememsize uint64
	for i := 0; i < len(ep.Recs); i++ {
		rec := &ep.Recs[i]
		b := f.Data[rec.Offset : rec.Offset+rec.Size]
		fail := func(reason string) error { return &Error{EPID: ep.EPID, Rec: i, Reason: reason} }
		if uint64(rec.Size) < minSize(rec) {
			return fail(errDMismatch)
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
			c.status, c.exited = int(int32(binary.LittleEndian.Uint32(b))), true
			d.reset(rec, b)
			d.kind, d.i = datumExit, int64(c.status)
		case dof.ActPrinta:
			varids := printaGroup(ep, f, i)
			if varids == nil {
				return fail(errBadAgg)
			}
			if err := c.out.printa(varids, rec.Format); err != nil {
				return fail(err.Error())
			}
			i += len(varids) - 1
			continue
		case dof.ActPrintf, dof.ActSystem, dof.ActFreopen:
			if rec.Format == 0 {
				// A record of its own, printed as trace() prints it.
				if err := c.decode(d, rec, b); err != nil {
					return fail(err.Error())
				}
				break
			}
			n, err := c.printfLike(d, f, i)
			if err != nil {
				return fail(err.Error())
			}
			i += max(n, 1) - 1
		case dof.ActTraceMem:
			if tracememsize == 0 || tracememsize > uint64(rec.Size) {
				tracememsize = uint64(rec.Size)
			}
			d.reset(rec, b[:tracememsize])
			d.kind = datumMem
			tracememsize = 0
		case dof.ActPrintm:
			n := le64(b)
			if n > uint64(len(b)-8) {
				return fail(errDOffset)
			}
			d.reset(rec, b[8:8+n])
			d.kind = datumMem
		case dof.ActDIFExpr:
			if rec.Size == 0 {
				// A statement that records nothing (x = 1).
				continue
			}
			c.decode(d, rec, b)
			d.ep = ep
			if rec.Format != 0 {
				// print(): the value, with the type the compiler gave it.
				ref, err := c.desc.Format(rec.Format)
				if err != nil {
					return fail(err.Error())
				}
				d.print, d.typeRef = true, ref
			}
		default:
			if err := c.decode(d, rec, b); err != nil {
				return fail(err.Error())
			}
		}
		if err := c.out.datum(d); err != nil {
			return fail(err.Error())
		}
	}
	if err := c.out.end(); err != nil {
		return &Error{EPID: ep.EPID, Rec: -1, Reason: err.Error()}
	}
	return nil
}

// probe returns the probe of enabled probe ep, the last one's again
// without a lookup: a buffer holds runs of one probe's firings.
func (c *Consumer) probe(ep *record.EProbe) (record.Probe, error) {
	if ep == c.lastEP {
		return c.lastProbe, nil
	}
	p, err := c.desc.Probe(ep.ProbeID)
	if err == nil {
		c.lastEP, c.lastProbe = ep, p
	}
	return p, err
}

// ErrorClause is the clause libdtrace enables for the ERROR probe once
// the program is enabled (dtrace_go), with the ECB user argument
// dof.ECBError: its records, which the consumer turns into dtrace's
// error messages, are the faulting EPID, the action (0 for the
// predicate), the DIF offset (-1 for none), the fault and the address.
const ErrorClause = "dtrace:::ERROR{trace(arg1);trace(arg2);trace(arg3);trace(arg4);trace(arg5);}"

// faultName returns dtrace's words for fault f (DTRACEFLT_*), "" for
// a fault it has none for.
func faultName(f uint64) string {
	switch f {
	case 1:
		return "invalid address"
	case 2:
		return "invalid alignment"
	case 3:
		return "illegal operation"
	case 4:
		return "divide-by-zero"
	case 5:
		return "out of scratch space"
	case 6:
		return "invalid kernel access"
	case 7:
		return "invalid user access"
	case 8:
		return "tuple stack overflow"
	case 9:
		return "bad stack"
	case 1000:
		return "library-level fault"
	}
	return ""
}

// fault reports a firing of ErrorClause on Config.Err, as dt_handle_err
// and dtrace(1)'s error handler do.
func (c *Consumer) fault(f *record.Firing, p record.Probe) error {
	ep := f.EProbe
	if len(ep.Recs) != 5 || p.Provider != "dtrace" || p.Name != "ERROR" {
		return &Error{EPID: ep.EPID, Rec: -1, Reason: "Abnormal program termination: malformed ERROR records"}
	}
	var v [5]uint64
	for i := range v {
		if ep.Recs[i].Size != 8 {
			return &Error{EPID: ep.EPID, Rec: i, Reason: "Abnormal program termination: malformed ERROR records"}
		}
		v[i] = le64(f.Rec(i))
	}
	epid := uint32(v[0])
	fep, err := c.desc.EProbe(epid)
	if err != nil {
		return &Error{EPID: ep.EPID, Rec: 0, Reason: err.Error()}
	}
	fp, err := c.desc.Probe(fep.ProbeID)
	if err != nil {
		return &Error{EPID: ep.EPID, Rec: 0, Reason: err.Error()}
	}
	if c.only != nil && !c.only(fp) {
		return nil
	}
	where := "predicate"
	if a := int32(v[1]); a != 0 {
		where = fmt.Sprintf("action #%d", a)
	}
	offinfo := ""
	if off := int32(v[2]); off != -1 {
		offinfo = fmt.Sprintf(" at DIF offset %d", off)
	}
	fault := faultName(uint64(int32(v[3])))
	if fault == "" {
		fault = "unknown fault"
	}
	details := ""
	switch int32(v[3]) {
	case 1, 2, 9: // DTRACEFLT_BADADDR, BADALIGN, BADSTACK
		details = fmt.Sprintf(" (0x%x)", v[4])
	}
	msg := fmt.Sprintf("%s: error on enabled probe ID %d (ID %d: %s:%s:%s:%s): %s%s in %s%s",
		c.cfg.ProgName, epid, fp.ID, fp.Provider, fp.Module, fp.Function, fp.Name, fault, details, where, offinfo)
	if c.cfg.Err != nil {
		fmt.Fprintln(c.cfg.Err, msg)
	}
	c.out.fault(&faultReport{epid: epid, p: fp, action: int32(v[1]), offset: int32(v[2]), fault: fault, addr: v[4], hasAddr: details != "", msg: msg})
	return nil
}

// liberr reports a fault of the consumer's own while it prints firing
// f, as dt_handle_liberr does.
func (c *Consumer) liberr(f *record.Firing, msg string) error {
	p, err := c.desc.Probe(f.EProbe.ProbeID)
	if err != nil {
		return err
	}
	if c.cfg.Err != nil {
		fmt.Fprintf(c.cfg.Err, "%s: error on enabled probe ID %d (ID %d: %s:%s:%s:%s): %s\n",
			c.cfg.ProgName, f.EProbe.EPID, p.ID, p.Provider, p.Module, p.Function, p.Name, msg)
	}
	return nil
}

// ftruncate empties the output, when it is a file, as ftruncate()
// does; on other outputs it does nothing, as dtrace's does nothing
// without one.
func (c *Consumer) ftruncate() error {
	var out io.Writer = c.cfg.Out
	if c.reopened != nil {
		out = c.reopened
	}
	f, ok := out.(interface {
		Truncate(int64) error
		Seek(int64, int) (int64, error)
	})
	if !ok {
		return nil
	}
	if err := c.w.Flush(); err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}

// freopenRestore is the format that stands for freopen(""): the
// output goes back to where it went before (DT_FREOPEN_RESTORE). The
// compiler refuses freopen("."), and no file opens as ".".
const freopenRestore = "."

// freopen sends the output to the file path names, appending to it, or
// back to Config.Out when restore is set (freopen("")), as
// dtrace_freopen does. A file that cannot be opened leaves the output
// where it was and is reported as dt_handle_liberr reports it, an error
// on the enabled probe.
func (c *Consumer) freopen(f *record.Firing, path string, restore bool) error {
	if err := c.w.Flush(); err != nil {
		return err
	}
	if restore {
		if c.reopened == nil {
			return nil
		}
		return c.restore()
	}
	nf, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			err = errno
		}
		msg := err.Error()
		msg = strings.ToUpper(msg[:1]) + msg[1:] // as C's strerror
		return c.liberr(f, fmt.Sprintf("couldn't freopen() \"%s\": %s", path, msg))
	}
	if c.reopened != nil {
		c.reopened.Close()
	} else {
		c.stdout = c.w
	}
	c.reopened = nf
	c.w = bufio.NewWriterSize(nf, outBufSize)
	return nil
}

// restore closes the file freopen() opened and sends the output back
// to Config.Out.
func (c *Consumer) restore() error {
	err := c.w.Flush()
	if cerr := c.reopened.Close(); err == nil {
		err = cerr
	}
	c.w, c.stdout, c.reopened = c.stdout, nil, nil
	if ferr := c.w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// minSize is the least size of a record of the action that the
// consumer reads: a description that says less is wrong.
func minSize(r *record.Rec) uint64 {
	switch r.Action {
	case dof.ActExit:
		return 4
	case dof.ActSym, dof.ActMod, dof.ActPrintm:
		return 8
	case dof.ActUSym, dof.ActUAddr, dof.ActUMod:
		return 16
	case dof.ActUStack, dof.ActJStack:
		nframes, _ := dof.UStackParams(r.Arg)
		return (uint64(nframes) + 1) * 8
	}
	return 0
}

// padLeft and padRight pad s with spaces to n bytes, as %*s and %-*s do.
func padLeft(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat(" ", n-len(s)) + s
}

func padRight(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return s + strings.Repeat(" ", n-len(s))
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// isprint and isspace are the C library's in the C locale, for a char
// that is signed: bytes above 0x7f are neither.
func isprint(b byte) bool { return b >= 0x20 && b < 0x7f }
func isspace(b byte) bool { return b == ' ' || b >= '\t' && b <= '\r' }

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
// the JSON format, as an object of type "drop" on the output.
func (c *Consumer) ReportDrop(d Drop) error {
	if d.Count == 0 {
		return nil
	}
	msg := d.message(c.cfg.ProgName)
	if c.cfg.Err != nil {
		fmt.Fprintln(c.cfg.Err, msg)
	}
	return c.out.drop(d, msg)
}
