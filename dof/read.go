package dof

import (
	"bytes"
	"fmt"
)

// File is a decoded DOF file: its header and section headers, with
// access to the data they describe. Read checks only what it needs to
// decode safely; package enabling checks a file the way the kernel does
// before it takes it.
type File struct {
	Header   Header
	Sections []Sec
	data     []byte
	opts     Options
}

// ReadError is a structural fault Read or File.Program found.
type ReadError struct {
	Section int    // section index, or -1 for the header
	Offset  uint64 // file offset of the fault
	Reason  string
}

func (e *ReadError) Error() string {
	if e.Section < 0 {
		return fmt.Sprintf("dof: header, offset %#x: %s", e.Offset, e.Reason)
	}
	return fmt.Sprintf("dof: section %d, offset %#x: %s", e.Section, e.Offset, e.Reason)
}

func rerr(sec int, off uint64, format string, args ...any) error {
	return &ReadError{Section: sec, Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// Read decodes the header and section headers of a little-endian DOF
// file. Every section's data must lie within b; loadable and
// non-loadable sections alike are decoded.
func Read(b []byte, opts *Options) (*File, error) {
	if len(b) < HeaderSize {
		return nil, rerr(-1, 0, "truncated header: %d bytes", len(b))
	}
	f := &File{Header: DecodeHeader(b), data: b}
	if opts != nil {
		f.opts = *opts
	}
	h := &f.Header
	if h.Magic != [4]byte{Mag0, Mag1, Mag2, Mag3} {
		return nil, rerr(-1, 0, "DOF magic string mismatch")
	}
	if h.Encoding != EncodeLSB {
		return nil, rerr(-1, 5, "DOF encoding %d is not little-endian", h.Encoding)
	}
	if h.SecSize < SecHeaderSize {
		return nil, rerr(-1, 24, "section header size %d is less than %d", h.SecSize, SecHeaderSize)
	}
	n := uint64(h.SecNum)
	if h.SecOff > uint64(len(b)) || n*uint64(h.SecSize) > uint64(len(b))-h.SecOff {
		return nil, rerr(-1, 28, "truncated section headers")
	}
	f.Sections = make([]Sec, n)
	for i := range f.Sections {
		off := h.SecOff + uint64(i)*uint64(h.SecSize)
		s := DecodeSec(b[off:])
		if s.Offset > uint64(len(b)) || s.Size > uint64(len(b))-s.Offset {
			return nil, rerr(i, off+16, "%s data [%#x, +%#x) lies outside the file", s.Type, s.Offset, s.Size)
		}
		f.Sections[i] = s
	}
	return f, nil
}

// Data returns the data of section i.
func (f *File) Data(i int) []byte {
	s := &f.Sections[i]
	return f.data[s.Offset : s.Offset+s.Size : s.Offset+s.Size]
}

// String returns the NUL-terminated string at offset off of string
// table section sec.
func (f *File) String(sec, off uint32) (string, error) {
	if err := f.want(int(sec), SectStrTab); err != nil {
		return "", err
	}
	d := f.Data(int(sec))
	if uint64(off) >= uint64(len(d)) {
		return "", rerr(int(sec), f.Sections[sec].Offset, "string offset %#x beyond the table's %d bytes", off, len(d))
	}
	n := bytes.IndexByte(d[off:], 0)
	if n < 0 {
		return "", rerr(int(sec), f.Sections[sec].Offset+uint64(off), "unterminated string")
	}
	return string(d[off : int(off)+n]), nil
}

func (f *File) want(i int, t SectType) error {
	if i < 0 || i >= len(f.Sections) {
		return rerr(-1, 28, "section index %d out of range", i)
	}
	if f.Sections[i].Type != t {
		return rerr(i, f.Header.SecOff+uint64(i)*uint64(f.Header.SecSize), "%s section where %s is expected", f.Sections[i].Type, t)
	}
	return nil
}

// entries checks that section i is of type t and holds whole entries
// of at least size bytes, and returns its data and entry size.
func (f *File) entries(i uint32, t SectType, size int) ([]byte, int, error) {
	if err := f.want(int(i), t); err != nil {
		return nil, 0, err
	}
	s := &f.Sections[i]
	es := int(s.EntSize)
	if es == 0 {
		es = size
	}
	if es < size || s.Size%uint64(es) != 0 {
		return nil, 0, rerr(int(i), s.Offset, "%s of %d bytes does not hold entries of %d bytes", t, s.Size, es)
	}
	return f.Data(int(i)), es, nil
}

// Program decodes the program the file carries: its ECBs in file order,
// with their probe descriptions, predicates and actions, its options,
// providers and translators.
func (f *File) Program() (*Program, error) {
	r := &progReader{f: f, difos: make(map[uint32]*DIFO), xl: make(map[uint32]int)}
	return r.program()
}

type progReader struct {
	f     *File
	p     Program
	difos map[uint32]*DIFO
	xl    map[uint32]int // XLIMPORT/XLEXPORT section → translator index
	rels  map[uint32][]relSet
}

type relSet struct {
	kernel bool
	rels   []RelDesc
}

func (r *progReader) program() (*Program, error) {
	f := r.f
	for i, s := range f.Sections {
		if s.Type == SectXLImport || s.Type == SectXLExport {
			r.xl[uint32(i)] = len(r.p.Translators)
			r.p.Translators = append(r.p.Translators, Translator{Export: s.Type == SectXLExport})
		}
	}
	r.rels = make(map[uint32][]relSet)
	for i, s := range f.Sections {
		if s.Type != SectKRelHdr && s.Type != SectURelHdr {
			continue
		}
		if s.Size < RelHdrSize {
			return nil, rerr(i, s.Offset, "truncated relocation header")
		}
		rh := DecodeRelHdr(f.Data(i))
		d, es, err := f.entries(rh.RelSec, SectRelTab, RelDescSize)
		if err != nil {
			return nil, err
		}
		var rels []RelDesc
		for o := 0; o < len(d); o += es {
			rels = append(rels, DecodeRelDesc(d[o:]))
		}
		r.rels[rh.TgtSec] = append(r.rels[rh.TgtSec], relSet{kernel: s.Type == SectKRelHdr, rels: rels})
	}
	for i, s := range f.Sections {
		if s.Type == SectXLImport || s.Type == SectXLExport {
			if err := r.translator(uint32(i), &r.p.Translators[r.xl[uint32(i)]]); err != nil {
				return nil, err
			}
		}
	}
	for i, s := range f.Sections {
		var err error
		switch s.Type {
		case SectECBDesc:
			err = r.ecb(i)
		case SectOptDesc:
			err = r.options(i)
		case SectProvider:
			err = r.provider(i)
		}
		if err != nil {
			return nil, err
		}
	}
	return &r.p, nil
}

func (r *progReader) ecb(i int) error {
	f := r.f
	if f.Sections[i].Size < ECBDescSize {
		return rerr(i, f.Sections[i].Offset, "truncated ECB description")
	}
	ed := DecodeECBDesc(f.Data(i))
	e := ECB{UArg: ed.UArg}
	pd, _, err := f.entries(ed.Probes, SectProbeDesc, ProbeDescSize)
	if err != nil {
		return err
	}
	if len(pd) < ProbeDescSize {
		return rerr(int(ed.Probes), f.Sections[ed.Probes].Offset, "truncated probe description")
	}
	d := DecodeProbeDesc(pd)
	e.Probe.ID = d.ID
	for _, s := range []struct {
		dst  *string
		off  uint32
		max  int
		what string
	}{
		{&e.Probe.Provider, d.Provider, ProvNameLen, "provider"},
		{&e.Probe.Module, d.Mod, ModNameLen, "module"},
		{&e.Probe.Function, d.Func, f.opts.funcNameLen(), "function"},
		{&e.Probe.Name, d.Name, NameLen, "name"},
	} {
		if *s.dst, err = f.String(d.StrTab, s.off); err != nil {
			return err
		}
		if len(*s.dst) >= s.max {
			return rerr(int(ed.Probes), f.Sections[ed.Probes].Offset, "probe %s name too long", s.what)
		}
	}
	if ed.Pred != SecIdxNone {
		if e.Pred, err = r.difo(ed.Pred); err != nil {
			return err
		}
	}
	if ed.Actions != SecIdxNone {
		ad, es, err := f.entries(ed.Actions, SectActDesc, ActDescSize)
		if err != nil {
			return err
		}
		for o := 0; o < len(ad); o += es {
			d := DecodeActDesc(ad[o:])
			a := Action{Kind: d.Kind, NTuple: d.NTuple, Arg: d.Arg, UArg: d.UArg}
			if d.StrTab != SecIdxNone {
				if d.Arg > 0xffffffff {
					return rerr(int(ed.Actions), f.Sections[ed.Actions].Offset+uint64(o)+16, "string offset %#x out of range", d.Arg)
				}
				if a.Format, err = f.String(d.StrTab, uint32(d.Arg)); err != nil {
					return err
				}
				a.Arg = 0
			}
			if d.DIFO != SecIdxNone {
				if a.DIFO, err = r.difo(d.DIFO); err != nil {
					return err
				}
			}
			e.Actions = append(e.Actions, a)
		}
	}
	r.p.ECBs = append(r.p.ECBs, e)
	return nil
}

func (r *progReader) difo(i uint32) (*DIFO, error) {
	if d, ok := r.difos[i]; ok {
		return d, nil
	}
	f := r.f
	if err := f.want(int(i), SectDIFOHdr); err != nil {
		return nil, err
	}
	hb := f.Data(int(i))
	if len(hb) < DIFTypeSize || len(hb)%4 != 0 {
		return nil, rerr(int(i), f.Sections[i].Offset, "bad size in DIFO header")
	}
	d := &DIFO{Ret: DecodeDIFType(hb)}
	r.difos[i] = d
	intsec := uint32(SecIdxNone)
	for o := DIFTypeSize; o < len(hb); o += 4 {
		l := le.Uint32(hb[o:])
		if int64(l) >= int64(len(f.Sections)) {
			return nil, rerr(int(i), f.Sections[i].Offset+uint64(o), "DIFO link %d out of range", l)
		}
		var sz int
		switch f.Sections[l].Type {
		case SectDIF:
			sz = InstrSize
		case SectIntTab:
			sz = 8
			intsec = l
		case SectStrTab:
			sz = 1
		case SectVarTab:
			sz = DIFVarSize
		case SectXLTab:
			sz = XlRefSize
		default:
			return nil, rerr(int(i), f.Sections[i].Offset+uint64(o), "unrecognized DIFO subsection %s", f.Sections[l].Type)
		}
		b, es, err := f.entries(l, f.Sections[l].Type, sz)
		if err != nil {
			return nil, err
		}
		switch f.Sections[l].Type {
		case SectDIF:
			for k := 0; k < len(b); k += es {
				d.Code = append(d.Code, le.Uint32(b[k:]))
			}
		case SectIntTab:
			for k := 0; k < len(b); k += es {
				d.Ints = append(d.Ints, le.Uint64(b[k:]))
			}
		case SectStrTab:
			d.Strs = bytes.Clone(b)
		case SectVarTab:
			for k := 0; k < len(b); k += es {
				d.Vars = append(d.Vars, DecodeDIFVar(b[k:]))
			}
		case SectXLTab:
			for k := 0; k < len(b); k += es {
				x := DecodeXlRef(b[k:])
				t, ok := r.xl[x.Xlator]
				if !ok {
					return nil, rerr(int(l), f.Sections[l].Offset+uint64(k), "translator reference to section %d, which is no translator", x.Xlator)
				}
				x.Xlator = uint32(t)
				d.XlRefs = append(d.XlRefs, x)
			}
		}
	}
	if intsec != SecIdxNone {
		for _, rs := range r.rels[intsec] {
			if rs.kernel {
				d.KRelo = append(d.KRelo, rs.rels...)
			} else {
				d.URelo = append(d.URelo, rs.rels...)
			}
		}
	}
	return d, nil
}

func (r *progReader) options(i int) error {
	b, es, err := r.f.entries(uint32(i), SectOptDesc, OptDescSize)
	if err != nil {
		return err
	}
	for o := 0; o < len(b); o += es {
		d := DecodeOptDesc(b[o:])
		r.p.Options = append(r.p.Options, Option{ID: d.Option, Value: int64(d.Value)})
	}
	return nil
}

// strList reads n strings stored back to back from offset off.
func (f *File) strList(sec, off uint32, n int) ([]string, error) {
	var list []string
	for range n {
		s, err := f.String(sec, off)
		if err != nil {
			return nil, err
		}
		list = append(list, s)
		off += uint32(len(s)) + 1
	}
	return list, nil
}

func (r *progReader) translator(sec uint32, t *Translator) error {
	f := r.f
	b := f.Data(int(sec))
	if len(b) < XlatorDescSize {
		return rerr(int(sec), f.Sections[sec].Offset, "truncated translator")
	}
	xd := DecodeXlatorDesc(b)
	var err error
	if t.Type, err = f.String(xd.StrTab, xd.Type); err != nil {
		return err
	}
	if xd.Argc > uint32(len(f.data)) {
		return rerr(int(sec), f.Sections[sec].Offset+12, "translator argument count %d out of range", xd.Argc)
	}
	if t.Args, err = f.strList(xd.StrTab, xd.Argv, int(xd.Argc)); err != nil {
		return err
	}
	t.Attr = unpackAttr(xd.Attr)
	mb, es, err := f.entries(xd.Members, SectXLMembers, XlMemberDescSize)
	if err != nil {
		return err
	}
	for o := 0; o < len(mb); o += es {
		md := DecodeXlMemberDesc(mb[o:])
		m := XlMember{Type: md.Type}
		if m.Name, err = f.String(xd.StrTab, md.Name); err != nil {
			return err
		}
		if md.DIFO != SecIdxNone {
			if m.DIFO, err = r.difo(md.DIFO); err != nil {
				return err
			}
		}
		t.Members = append(t.Members, m)
	}
	return nil
}

func (r *progReader) provider(i int) error {
	f := r.f
	b := f.Data(i)
	if len(b) < ProviderDescV1Size {
		return rerr(i, f.Sections[i].Offset, "provider section too small")
	}
	pd := DecodeProviderDesc(b)
	pv := Provider{Attr: ProviderAttr{
		Provider: unpackAttr(pd.ProvAttr), Mod: unpackAttr(pd.ModAttr), Func: unpackAttr(pd.FuncAttr),
		Name: unpackAttr(pd.NameAttr), Args: unpackAttr(pd.ArgsAttr),
	}}
	var err error
	if pv.Name, err = f.String(pd.StrTab, pd.Name); err != nil {
		return err
	}
	probes, pes, err := f.entries(pd.Probes, SectProbes, ProbeEntrySize)
	if err != nil {
		return err
	}
	args, _, err := f.entries(pd.PrArgs, SectPrArgs, 1)
	if err != nil {
		return err
	}
	offs, _, err := f.entries(pd.PrOffs, SectPrOffs, 4)
	if err != nil {
		return err
	}
	var enoffs []byte
	if pd.PrEnOffs != 0 && len(b) >= ProviderDescSize {
		if enoffs, _, err = f.entries(pd.PrEnOffs, SectPrEnOffs, 4); err != nil {
			return err
		}
	}
	relName := make(map[uint64]uint32)
	for _, rs := range r.rels[pd.Probes] {
		for _, rel := range rs.rels {
			relName[rel.Offset] = rel.Name
		}
	}
	u32s := func(b []byte, idx uint32, n int, what string) ([]uint32, error) {
		if uint64(idx)+uint64(n) > uint64(len(b)/4) {
			return nil, rerr(i, f.Sections[i].Offset, "invalid %s", what)
		}
		var v []uint32
		for k := range n {
			v = append(v, le.Uint32(b[4*(int(idx)+k):]))
		}
		return v, nil
	}
	for o := 0; o < len(probes); o += pes {
		e := DecodeProbeEntry(probes[o:])
		p := Probe{Addr: e.Addr}
		if p.Func, err = f.String(pd.StrTab, e.Func); err != nil {
			return err
		}
		if p.Name, err = f.String(pd.StrTab, e.Name); err != nil {
			return err
		}
		if p.NArgs, err = f.strList(pd.StrTab, e.NArgv, int(e.NArgc)); err != nil {
			return err
		}
		if p.XArgs, err = f.strList(pd.StrTab, e.XArgv, int(e.XArgc)); err != nil {
			return err
		}
		if uint64(e.ArgIdx)+uint64(e.XArgc) > uint64(len(args)) {
			return rerr(i, f.Sections[i].Offset, "invalid args")
		}
		if e.XArgc > 0 {
			p.ArgMap = bytes.Clone(args[e.ArgIdx : e.ArgIdx+uint32(e.XArgc)])
		}
		if p.Offs, err = u32s(offs, e.OffIdx, int(e.NOffs), "probe offset"); err != nil {
			return err
		}
		if p.EnOffs, err = u32s(enoffs, e.EnOffIdx, int(e.NEnOffs), "is-enabled offset"); err != nil {
			return err
		}
		if n, ok := relName[uint64(o)]; ok && n != e.Func {
			if p.RelName, err = f.String(pd.StrTab, n); err != nil {
				return err
			}
		}
		pv.Probes = append(pv.Probes, p)
	}
	for j, s := range f.Sections {
		if s.Type != SectPrExport || s.Size < 4 || le.Uint32(f.Data(j)) != uint32(i) {
			continue
		}
		d := f.Data(j)
		for k := 4; k+4 <= len(d); k += 4 {
			t, ok := r.xl[le.Uint32(d[k:])]
			if !ok {
				return rerr(j, s.Offset+uint64(k), "export of section %d, which is no translator", le.Uint32(d[k:]))
			}
			pv.Exports = append(pv.Exports, t)
		}
	}
	r.p.Providers = append(r.p.Providers, pv)
	return nil
}
