package dof

import (
	"errors"
	"fmt"
	"strings"
)

// Write lays p out as a DOF file the way libdtrace's dtrace_dof_create
// does:
//
//   - section 0 is the global string table, whose first string is "";
//     strings are appended as they come, without sharing;
//   - the translators the program imports (XLMEMBERS, XLIMPORT);
//   - for each ECB: its PROBEDESC, the predicate's DIFO, for each action
//     the action's DIFO, then the ACTDESC (if there are actions) and the
//     ECBDESC;
//   - the OPTDESC, if p sets options (dtrace sends options in a DOF of
//     their own, OptionsDOF);
//   - for each provider: the translators it exports, PROBES, PRARGS,
//     PROFFS, PRENOFFS, PROVIDER, RELTAB, URELHDR and PREXPORT;
//   - the non-loadable COMMENTS, UTSNAME and SectSaved sections, if
//     opts asks.
//
// A DIFO is its DIF, INTTAB, STRTAB, VARTAB and XLTAB sections, those it
// has, then its DIFOHDR linking them, then a RELTAB and a KRELHDR if it
// has kernel relocations and a RELTAB and a URELHDR if it has user ones.
// Loadable data is placed after the section headers, each section at
// its alignment, then the global string table; dofh_loadsz ends there.
// Non-loadable data follows at the next multiple of 8 and dofh_filesz
// covers it.
//
// Write refuses what it cannot encode or what no kernel would take as
// meant: names longer than the kernel's fields, a format together with
// an argument, relocations without the tables they refer to.
func Write(p *Program, opts *Options) ([]byte, error) {
	if opts == nil {
		opts = &Options{}
	}
	// The first pass measures the file; the second writes it into one
	// buffer of that size, as a program of many ECBs makes a DOF of
	// hundreds of megabytes that would cost several times its size to
	// grow and copy.
	m := &writer{opts: opts, p: p}
	if err := m.program(); err != nil {
		return nil, err
	}
	w := m.layout()
	if err := w.program(); err != nil {
		return nil, err
	}
	if w.nsecs != m.nsecs || !w.ldata.full() || !w.strs.full() || !w.udata.full() || len(w.hdrs) != cap(w.hdrs) {
		panic("dof: the passes of Write disagree")
	}
	return w.buf, nil
}

// OptionsDOF returns the DOF dtrace sends just before it starts tracing
// (dtrace_getopt_dof): a header and a single OPTDESC section, with no
// string table.
func OptionsDOF(options []Option, opts *Options) ([]byte, error) {
	if opts == nil {
		opts = &Options{}
	}
	for _, o := range options {
		if o.ID >= OptMax {
			return nil, fmt.Errorf("dof: option %d out of range", o.ID)
		}
	}
	h := header(opts)
	h.SecNum = 1
	size := uint64(OptDescSize * len(options))
	h.LoadSz = HeaderSize + SecHeaderSize + size
	h.FileSz = h.LoadSz
	b := h.Append(make([]byte, 0, h.FileSz))
	s := Sec{Type: SectOptDesc, Align: 8, Flags: SecFlagLoad, EntSize: OptDescSize,
		Offset: HeaderSize + SecHeaderSize, Size: size}
	b = s.Append(b)
	for _, o := range options {
		d := OptDesc{Option: o.ID, StrTab: SecIdxNone, Value: uint64(o.Value)}
		b = d.Append(b)
	}
	return b, nil
}

func header(opts *Options) Header {
	h := Header{
		Magic:    [4]byte{Mag0, Mag1, Mag2, Mag3},
		Model:    opts.Model,
		Encoding: EncodeLSB,
		Version:  opts.Version,
		DIFVers:  opts.DIFVersion,
		DIFIReg:  opts.DIFIntRegs,
		DIFTReg:  opts.DIFTupRegs,
		HdrSize:  HeaderSize,
		SecSize:  SecHeaderSize,
		SecOff:   HeaderSize,
	}
	if h.Model == ModelNone {
		h.Model = ModelLP64
	}
	if h.Version == 0 {
		h.Version = Version
	}
	if h.DIFVers == 0 {
		h.DIFVers = DIFVersion
	}
	if h.DIFIReg == 0 {
		h.DIFIReg = DIFIntRegs
	}
	if h.DIFTReg == 0 {
		h.DIFTReg = DIFTupRegs
	}
	return h
}

type writer struct {
	opts *Options
	p    *Program
	// nsecs counts the sections. The areas hold the loadable data, the
	// global string table and the non-loadable data; on the measuring
	// pass they only count bytes.
	nsecs              int
	ldata, strs, udata area
	// On the writing pass, buf is the file, hdrs its section headers
	// as they are written, and loff and uoff the offsets in the file of
	// the loadable and the non-loadable data.
	buf        []byte
	hdrs       []byte
	loff, uoff uint64
	// xlsec maps a translator's index to its XLIMPORT or XLEXPORT
	// section, once written.
	xlsec map[int]uint32
	// scratch holds a section's data while it is encoded, and acts an
	// ECB's action descriptions: lsect copies the data, so the memory
	// serves every section of a DOF of millions.
	scratch, acts []byte
}

// area is a part of the file that grows as sections are added: its
// length, and on the writing pass its bytes, in the file's buffer with
// the capacity the measuring pass found.
type area struct {
	n int
	b []byte
}

// align pads the area to a multiple of align and returns its length.
func (a *area) align(align uint32) int {
	if align > 1 {
		a.n = (a.n + int(align) - 1) / int(align) * int(align)
		if a.b != nil {
			a.b = a.b[:a.n] // the buffer is zeroed
		}
	}
	return a.n
}

func (a *area) write(data []byte) {
	a.n += len(data)
	if a.b != nil {
		a.b = append(a.b, data...)
	}
}

func (a *area) writeString(s string) {
	a.n += len(s) + 1
	if a.b != nil {
		a.b = append(append(a.b, s...), 0)
	}
}

// full reports whether the writing pass filled the area as measured.
func (a *area) full() bool { return a.b == nil && a.n == 0 || len(a.b) == cap(a.b) }

// layout returns the writer of the second pass, with the file's buffer
// of the size the first measured, its header written.
func (m *writer) layout() *writer {
	h := header(m.opts)
	h.SecNum = uint32(m.nsecs)
	ssize := uint64(HeaderSize + SecHeaderSize*m.nsecs)
	h.LoadSz = ssize + uint64(m.ldata.n) + uint64(m.strs.n)
	lsize := h.LoadSz
	h.FileSz = h.LoadSz
	if m.udata.n > 0 {
		lsize = (h.LoadSz + 7) &^ 7
		h.FileSz = lsize + uint64(m.udata.n)
	}
	buf := make([]byte, h.FileSz)
	h.Append(buf[:0])
	part := func(off, n uint64) []byte { return buf[off : off : off+n] }
	return &writer{opts: m.opts, p: m.p, buf: buf,
		hdrs:  part(HeaderSize, ssize-HeaderSize),
		ldata: area{b: part(ssize, uint64(m.ldata.n))},
		strs:  area{b: part(ssize+uint64(m.ldata.n), uint64(m.strs.n))},
		udata: area{b: part(lsize, uint64(m.udata.n))},
		loff:  ssize,
		uoff:  lsize,
	}
}

// sect adds a section's header; s.Offset is in its area.
func (w *writer) sect(s Sec) uint32 {
	if w.buf != nil {
		if s.Loaded() {
			s.Offset += w.loff
		} else {
			s.Offset += w.uoff
		}
		w.hdrs = s.Append(w.hdrs)
	}
	w.nsecs++
	return uint32(w.nsecs - 1)
}

// lsect adds a loadable section whose data is data.
func (w *writer) lsect(data []byte, t SectType, align, entsize uint32) uint32 {
	off := w.ldata.align(align)
	w.ldata.write(data)
	return w.sect(Sec{Type: t, Align: align, Flags: SecFlagLoad, EntSize: entsize,
		Offset: uint64(off), Size: uint64(len(data))})
}

// usect adds a non-loadable section.
func (w *writer) usect(data []byte, t SectType, align, entsize uint32) uint32 {
	off := w.udata.align(align)
	w.udata.write(data)
	return w.sect(Sec{Type: t, Align: align, EntSize: entsize,
		Offset: uint64(off), Size: uint64(len(data))})
}

// str adds s to the global string table and returns its offset; the
// empty string is the one at offset 0.
func (w *writer) str(s string) uint32 {
	if w.strs.n != 0 && s == "" {
		return 0
	}
	off := uint32(w.strs.n)
	w.strs.writeString(s)
	return off
}

// strs adds strings back to back, as argument type lists are, and
// returns the offset of the first.
func (w *writer) strList(list []string) uint32 {
	off := uint32(w.strs.n)
	for _, s := range list {
		w.strs.writeString(s)
	}
	return off
}

func checkName(what, s string, max int) error {
	if len(s) >= max {
		return fmt.Errorf("dof: %s %q is %d bytes long; the kernel takes at most %d", what, s, len(s), max-1)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("dof: %s %q holds a NUL byte", what, s)
	}
	return nil
}

func (w *writer) program() error {
	p := w.p
	w.xlsec = make(map[int]uint32)
	// The global string table is section 0; its data comes after all
	// other loadable data.
	w.sect(Sec{Type: SectStrTab, Align: 1, Flags: SecFlagLoad,
		Offset: uint64(cap(w.ldata.b)), Size: uint64(cap(w.strs.b))})
	w.str("")

	for i := range p.Translators {
		if !p.Translators[i].Export {
			if err := w.translator(i); err != nil {
				return err
			}
		}
	}
	for i := range p.ECBs {
		if err := w.ecb(&p.ECBs[i]); err != nil {
			return fmt.Errorf("ECB %d (%s): %w", i, p.ECBs[i].Probe, err)
		}
	}
	if len(p.Options) > 0 {
		var b []byte
		for _, o := range p.Options {
			if o.ID >= OptMax {
				return fmt.Errorf("dof: option %d out of range", o.ID)
			}
			d := OptDesc{Option: o.ID, StrTab: SecIdxNone, Value: uint64(o.Value)}
			b = d.Append(b)
		}
		w.lsect(b, SectOptDesc, 8, OptDescSize)
	}
	for i := range p.Providers {
		if err := w.provider(&p.Providers[i]); err != nil {
			return fmt.Errorf("provider %q: %w", p.Providers[i].Name, err)
		}
	}
	for i := range p.Translators {
		if _, ok := w.xlsec[i]; !ok {
			if err := w.translator(i); err != nil {
				return err
			}
		}
	}
	if w.opts.Comments != "" {
		w.usect(append([]byte(w.opts.Comments), 0), SectComments, 1, 0)
	}
	if len(w.opts.UTSName) > 0 {
		w.usect(w.opts.UTSName, SectUTSName, 1, 0)
	}
	if w.opts.Saved != nil {
		w.usect(w.opts.Saved.Encode(), SectSaved, 1, 0)
	}
	if w.nsecs > 0xfffffffe {
		return errors.New("dof: too many sections")
	}
	return nil
}

func (w *writer) ecb(e *ECB) error {
	pd := e.Probe
	for _, c := range []struct {
		what string
		s    string
		max  int
	}{
		{"probe provider", pd.Provider, ProvNameLen},
		{"probe module", pd.Module, ModNameLen},
		{"probe function", pd.Function, w.opts.funcNameLen()},
		{"probe name", pd.Name, NameLen},
	} {
		if err := checkName(c.what, c.s, c.max); err != nil {
			return err
		}
	}
	d := ProbeDesc{StrTab: 0, Provider: w.str(pd.Provider), Mod: w.str(pd.Module),
		Func: w.str(pd.Function), Name: w.str(pd.Name), ID: pd.ID}
	w.scratch = d.Append(w.scratch[:0])
	probes := w.lsect(w.scratch, SectProbeDesc, 4, ProbeDescSize)

	ed := ECBDesc{Probes: probes, Pred: SecIdxNone, Actions: SecIdxNone, UArg: e.UArg}
	if e.Pred != nil {
		var err error
		if ed.Pred, err = w.difo(e.Pred); err != nil {
			return fmt.Errorf("predicate: %w", err)
		}
	}
	acts := w.acts[:0]
	for i := range e.Actions {
		a := &e.Actions[i]
		ad := ActDesc{DIFO: SecIdxNone, StrTab: SecIdxNone, Kind: a.Kind, NTuple: a.NTuple,
			Arg: a.Arg, UArg: a.UArg}
		if a.DIFO != nil {
			var err error
			if ad.DIFO, err = w.difo(a.DIFO); err != nil {
				return fmt.Errorf("action %d (%s): %w", i, a.Kind, err)
			}
		}
		if a.Format != "" {
			if a.Arg != 0 {
				return fmt.Errorf("action %d (%s) has both a format and an argument", i, a.Kind)
			}
			if strings.IndexByte(a.Format, 0) >= 0 {
				return fmt.Errorf("action %d (%s): format holds a NUL byte", i, a.Kind)
			}
			ad.Arg = uint64(w.str(a.Format))
			ad.StrTab = 0
		}
		acts = ad.Append(acts)
	}
	w.acts = acts
	if len(e.Actions) > 0 {
		ed.Actions = w.lsect(acts, SectActDesc, 8, ActDescSize)
	}
	w.scratch = ed.Append(w.scratch[:0])
	w.lsect(w.scratch, SectECBDesc, 8, 0)
	return nil
}

func (w *writer) difo(d *DIFO) (uint32, error) {
	var own [5]uint32 // DIF, INTTAB, STRTAB, VARTAB, XLTAB
	links := own[:0]
	strsec, intsec := uint32(SecIdxNone), uint32(SecIdxNone)
	if len(d.Code) > 0 {
		b := w.scratch[:0]
		for _, in := range d.Code {
			b = le.AppendUint32(b, in)
		}
		w.scratch = b
		links = append(links, w.lsect(b, SectDIF, InstrSize, InstrSize))
	}
	if len(d.Ints) > 0 {
		b := w.scratch[:0]
		for _, v := range d.Ints {
			b = le.AppendUint64(b, v)
		}
		w.scratch = b
		intsec = w.lsect(b, SectIntTab, 8, 8)
		links = append(links, intsec)
	}
	if len(d.Strs) > 0 {
		strsec = w.lsect(d.Strs, SectStrTab, 1, 0)
		links = append(links, strsec)
	}
	if len(d.Vars) > 0 {
		b := w.scratch[:0]
		for i := range d.Vars {
			b = d.Vars[i].Append(b)
		}
		w.scratch = b
		links = append(links, w.lsect(b, SectVarTab, 4, DIFVarSize))
	}
	if len(d.XlRefs) > 0 {
		b := w.scratch[:0]
		for _, x := range d.XlRefs {
			t := int(x.Xlator)
			if t >= len(w.p.Translators) || w.p.Translators[t].Export {
				return 0, fmt.Errorf("translator reference %d names no imported translator", t)
			}
			sec, ok := w.xlsec[t]
			if !ok {
				return 0, fmt.Errorf("translator %d is referenced before it is written", t)
			}
			x.Xlator = sec
			b = x.Append(b)
		}
		w.scratch = b
		links = append(links, w.lsect(b, SectXLTab, 4, XlRefSize))
	}
	hdr := d.Ret.Append(w.scratch[:0])
	for _, l := range links {
		hdr = le.AppendUint32(hdr, l)
	}
	w.scratch = hdr
	hdrsec := w.lsect(hdr, SectDIFOHdr, 4, 0)

	for _, r := range [...]struct {
		rels []RelDesc
		t    SectType
	}{{d.KRelo, SectKRelHdr}, {d.URelo, SectURelHdr}} {
		if len(r.rels) == 0 {
			continue
		}
		if intsec == SecIdxNone || strsec == SecIdxNone {
			return 0, errors.New("relocations need the DIFO's integer and string tables")
		}
		b := w.scratch[:0]
		for i := range r.rels {
			b = r.rels[i].Append(b)
		}
		w.scratch = b
		rh := RelHdr{StrTab: strsec, RelSec: w.lsect(b, SectRelTab, 8, RelDescSize), TgtSec: intsec}
		w.scratch = rh.Append(w.scratch[:0])
		w.lsect(w.scratch, r.t, 4, 0)
	}
	return hdrsec, nil
}

func (w *writer) translator(i int) error {
	x := &w.p.Translators[i]
	var members []byte
	for j := range x.Members {
		m := &x.Members[j]
		md := XlMemberDesc{DIFO: SecIdxNone, Type: m.Type}
		if m.DIFO != nil {
			if !x.Export {
				return fmt.Errorf("translator %d: imported member %q has a DIFO", i, m.Name)
			}
			var err error
			if md.DIFO, err = w.difo(m.DIFO); err != nil {
				return fmt.Errorf("translator %d member %q: %w", i, m.Name, err)
			}
		}
		md.Name = w.str(m.Name)
		members = md.Append(members)
	}
	xd := XlatorDesc{
		Members: w.lsect(members, SectXLMembers, 4, XlMemberDescSize),
		StrTab:  0,
		Argc:    uint32(len(x.Args)),
	}
	if len(x.Args) > 0 {
		xd.Argv = w.strList(x.Args)
	}
	xd.Type = w.str(x.Type)
	xd.Attr = x.Attr.pack()
	t := SectXLImport
	if x.Export {
		t = SectXLExport
	}
	w.xlsec[i] = w.lsect(xd.Append(nil), t, 4, 0)
	return nil
}

func (w *writer) provider(pv *Provider) error {
	if err := checkName("provider name", pv.Name, ProvNameLen); err != nil {
		return err
	}
	version := header(w.opts).Version
	exports := []uint32{0} // the provider's own section, filled below
	for _, t := range pv.Exports {
		if t < 0 || t >= len(w.p.Translators) || !w.p.Translators[t].Export {
			return fmt.Errorf("export %d names no exported translator", t)
		}
		if _, ok := w.xlsec[t]; !ok {
			if err := w.translator(t); err != nil {
				return err
			}
		}
		exports = append(exports, w.xlsec[t])
	}

	var probes, args, offs, enoffs, rels []byte
	for j := range pv.Probes {
		pr := &pv.Probes[j]
		switch {
		case len(pr.NArgs) > 255 || len(pr.XArgs) > 255:
			return fmt.Errorf("probe %s: more than 255 arguments", pr.Name)
		case len(pr.ArgMap) != len(pr.XArgs):
			return fmt.Errorf("probe %s: %d argument mappings for %d translated arguments", pr.Name, len(pr.ArgMap), len(pr.XArgs))
		case len(pr.Offs) > 0xffff || len(pr.EnOffs) > 0xffff:
			return fmt.Errorf("probe %s: too many offsets", pr.Name)
		case len(pr.Offs)+len(pr.EnOffs) == 0:
			return fmt.Errorf("probe %s in %s has no offsets", pr.Name, pr.Func)
		case len(pr.EnOffs) > 0 && version < Version2:
			return fmt.Errorf("probe %s: is-enabled offsets need DOF version 2", pr.Name)
		}
		if err := checkName("probe function", pr.Func, w.opts.funcNameLen()); err != nil {
			return err
		}
		if err := checkName("probe name", pr.Name, NameLen); err != nil {
			return err
		}
		for _, t := range append(pr.NArgs[:len(pr.NArgs):len(pr.NArgs)], pr.XArgs...) {
			if err := checkName("argument type", t, ArgTypeLen); err != nil {
				return err
			}
		}
		e := ProbeEntry{Addr: pr.Addr, NArgc: uint8(len(pr.NArgs)), XArgc: uint8(len(pr.XArgs))}
		e.Name = w.str(pr.Name)
		e.NArgv = w.strList(pr.NArgs)
		e.XArgv = w.strList(pr.XArgs)
		e.ArgIdx = uint32(len(args))
		args = append(args, pr.ArgMap...)
		e.Func = w.str(pr.Func)
		e.OffIdx = uint32(len(offs) / 4)
		e.NOffs = uint16(len(pr.Offs))
		for _, o := range pr.Offs {
			offs = le.AppendUint32(offs, o)
		}
		e.EnOffIdx = uint32(len(enoffs) / 4)
		e.NEnOffs = uint16(len(pr.EnOffs))
		for _, o := range pr.EnOffs {
			enoffs = le.AppendUint32(enoffs, o)
		}
		r := RelDesc{Name: e.Func, Type: RelSetX, Offset: uint64(len(probes))}
		if pr.RelName != "" {
			r.Name = w.str(pr.RelName)
		}
		rels = r.Append(rels)
		probes = e.Append(probes)
	}

	d := ProviderDesc{
		StrTab:   0,
		Probes:   w.lsect(probes, SectProbes, 8, ProbeEntrySize),
		PrArgs:   w.lsect(args, SectPrArgs, 1, 1),
		PrOffs:   w.lsect(offs, SectPrOffs, 4, 4),
		ProvAttr: pv.Attr.Provider.pack(),
		ModAttr:  pv.Attr.Mod.pack(),
		FuncAttr: pv.Attr.Func.pack(),
		NameAttr: pv.Attr.Name.pack(),
		ArgsAttr: pv.Attr.Args.pack(),
	}
	if len(enoffs) > 0 {
		d.PrEnOffs = w.lsect(enoffs, SectPrEnOffs, 4, 4)
	}
	d.Name = w.str(pv.Name)
	pb := d.Append(nil)
	if version < Version2 {
		pb = pb[:ProviderDescV1Size]
	}
	exports[0] = w.lsect(pb, SectProvider, 4, 0)
	rh := RelHdr{StrTab: 0, TgtSec: d.Probes}
	rh.RelSec = w.lsect(rels, SectRelTab, 8, RelDescSize)
	w.lsect(rh.Append(nil), SectURelHdr, 4, 0)
	if len(exports) > 1 {
		var b []byte
		for _, s := range exports {
			b = le.AppendUint32(b, s)
		}
		w.lsect(b, SectPrExport, 4, 4)
	}
	return nil
}
