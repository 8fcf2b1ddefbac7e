package kernel

import (
	"bytes"

	"github.com/kdtrace/kdtrace/dof"
)

// ecb reads the ECB description in section i (dtrace_dof_ecbdesc).
func (l *loader) ecb(i int) error {
	s := &l.secs[i]
	if s.Size < dof.ECBDescSize {
		return l.secErr(i, fSize, ReasonTruncatedECB)
	}
	if s.Align != 8 {
		return l.secErr(i, fAlign, ReasonECBAlign)
	}
	ed := dof.DecodeECBDesc(l.data(i))
	ps, err := l.sect(i, s.Offset, dof.SectProbeDesc, ed.Probes)
	if err != nil {
		return err
	}
	e := ECB{UArg: ed.UArg}
	if e.Probe, err = l.probeDesc(ps); err != nil {
		return err
	}
	if ed.Pred != dof.SecIdxNone {
		ds, err := l.sect(i, s.Offset+4, dof.SectDIFOHdr, ed.Pred)
		if err != nil {
			return err
		}
		if e.Pred, err = l.difo(ds); err != nil {
			return err
		}
	}
	var pos []actPos
	if ed.Actions != dof.SecIdxNone {
		as, err := l.sect(i, s.Offset+8, dof.SectActDesc, ed.Actions)
		if err != nil {
			return err
		}
		if e.Actions, pos, err = l.actDesc(as); err != nil {
			return err
		}
	}
	l.prog.ECBs = append(l.prog.ECBs, e)
	l.acts = append(l.acts, pos)
	return nil
}

// probeDesc reads the probe description in section i
// (dtrace_dof_probedesc).
func (l *loader) probeDesc(i int) (dof.ProbeSpec, error) {
	var p dof.ProbeSpec
	s := &l.secs[i]
	if s.Type != dof.SectProbeDesc {
		return p, l.secErr(i, fType, ReasonProbeSection)
	}
	if s.Align != 4 {
		return p, l.secErr(i, fAlign, ReasonProbeAlign)
	}
	// The kernel checks only that the description lies within the
	// file; kdtrace also wants it within its section.
	if s.Offset+dof.ProbeDescSize > uint64(len(l.b)) || s.Size < dof.ProbeDescSize {
		return p, l.secErr(i, fSize, ReasonTruncatedProbe)
	}
	d := dof.DecodeProbeDesc(l.b[s.Offset:])
	st, err := l.sect(i, s.Offset, dof.SectStrTab, d.StrTab)
	if err != nil {
		return p, err
	}
	p.ID = d.ID
	size := l.secs[st].Size
	for _, f := range []struct {
		dst     *string
		off     uint32
		field   uint64
		max     int
		corrupt string
		tooLong string
	}{
		{&p.Provider, d.Provider, 4, dof.ProvNameLen, ReasonProbeProvider, ReasonProbeProviderLong},
		{&p.Module, d.Mod, 8, dof.ModNameLen, ReasonProbeModule, ReasonProbeModuleLong},
		{&p.Function, d.Func, 12, l.cfg.FuncNameLen, ReasonProbeFunction, ReasonProbeFunctionLong},
		{&p.Name, d.Name, 16, dof.NameLen, ReasonProbeName, ReasonProbeNameLong},
	} {
		if uint64(f.off) >= size {
			return p, l.dataErr(i, s.Offset+f.field, f.corrupt)
		}
		*f.dst = l.str(st, f.off)
		// The kernel would cut the name to fit its field and so match
		// other probes than those named.
		if len(*f.dst) >= f.max {
			return p, l.dataErr(i, s.Offset+f.field, f.tooLong)
		}
	}
	return p, nil
}

// actDesc reads the actions in section i (dtrace_dof_actdesc).
func (l *loader) actDesc(i int) ([]Action, []actPos, error) {
	s := &l.secs[i]
	switch {
	case s.Type != dof.SectActDesc:
		return nil, nil, l.secErr(i, fType, ReasonActSection)
	case s.Offset+dof.ActDescSize > uint64(len(l.b)):
		return nil, nil, l.secErr(i, fSize, ReasonTruncatedAct)
	case s.Align != 8:
		return nil, nil, l.secErr(i, fAlign, ReasonActAlign)
	case s.Size < uint64(s.EntSize):
		return nil, nil, l.secErr(i, fSize, ReasonActEntExceeds)
	case s.EntSize != dof.ActDescSize:
		return nil, nil, l.secErr(i, fEntSize, ReasonActEntSize)
	case s.Size/uint64(s.EntSize) > l.cfg.MaxActions:
		return nil, nil, l.secErr(i, fSize, ReasonActionsMax)
	case s.Size%uint64(s.EntSize) != 0:
		// The kernel would read the last description past the section.
		return nil, nil, l.secErr(i, fSize, ReasonCorruptEnt)
	}
	var acts []Action
	var pos []actPos
	for off := uint64(0); off < s.Size; off += uint64(s.EntSize) {
		at := s.Offset + off
		d := dof.DecodeActDesc(l.b[at:])
		// dtrace_actkind_t has 16 bits; the kernel would drop the rest.
		if d.Kind > 0xffff {
			return nil, nil, l.dataErr(i, at+8, ReasonActKind)
		}
		a := Action{Kind: d.Kind, NTuple: d.NTuple, UArg: d.UArg, Arg: d.Arg}
		if (d.Kind.IsPrintfLike() && (d.Kind != dof.ActPrinta || d.StrTab != dof.SecIdxNone)) ||
			(d.Kind == dof.ActDIFExpr && d.StrTab != dof.SecIdxNone) {
			st, err := l.sect(i, at+4, dof.SectStrTab, d.StrTab)
			if err != nil {
				return nil, nil, err
			}
			str := l.data(st)
			if d.Arg >= uint64(len(str)) {
				return nil, nil, l.dataErr(i, at+16, ReasonBogusFormat)
			}
			n := bytes.IndexByte(str[d.Arg:], 0)
			if n == 0 {
				return nil, nil, l.dataErr(i, at+16, ReasonEmptyFormat)
			}
			a.Format, a.Arg = string(str[d.Arg:d.Arg+uint64(n)]), 0
		} else if d.Kind == dof.ActPrinta {
			a.Arg = 0
		}
		if d.DIFO != dof.SecIdxNone {
			ds, err := l.sect(i, at, dof.SectDIFOHdr, d.DIFO)
			if err != nil {
				return nil, nil, err
			}
			if a.DIFO, err = l.difo(ds); err != nil {
				return nil, nil, err
			}
		}
		acts = append(acts, a)
		pos = append(pos, actPos{sec: i, off: at})
	}
	return acts, pos, nil
}

// difoSub describes a DIFO sub-section the kernel knows.
var difoSub = []struct {
	t       dof.SectType
	entsize uint32
	align   uint32
	dup     string
}{
	{dof.SectDIF, dof.InstrSize, dof.InstrSize, ReasonMultiDIF},
	{dof.SectIntTab, 8, 8, ReasonMultiInt},
	{dof.SectStrTab, 0, 1, ReasonMultiStr},
	{dof.SectVarTab, dof.DIFVarSize, 4, ReasonMultiVar},
}

// difo reads the DIFO whose DIFOHDR is section i (dtrace_dof_difo). A
// DIFOHDR referenced twice gives one DIFO.
func (l *loader) difo(i int) (*dof.DIFO, error) {
	if d, ok := l.difos[uint32(i)]; ok {
		return d, nil
	}
	s := &l.secs[i]
	switch {
	case s.Type != dof.SectDIFOHdr:
		return nil, l.secErr(i, fType, ReasonDIFOSection)
	case s.Align != 4:
		return nil, l.secErr(i, fAlign, ReasonDIFOAlign)
	case s.Size < dof.DIFOHdrSize || s.Size%4 != 0:
		return nil, l.secErr(i, fSize, ReasonDIFOSize)
	}
	hb := l.data(i)
	d := &dof.DIFO{Ret: dof.DecodeDIFType(hb)}
	var seen [4]bool
	var ttl uint64
	intsec := -1
	for off := uint64(dof.DIFTypeSize); off < s.Size; off += 4 {
		at := s.Offset + off
		sub, err := l.sect(i, at, dof.SectNone, le32(hb[off:]))
		if err != nil {
			return nil, err
		}
		ss := &l.secs[sub]
		if ttl+ss.Size > l.cfg.MaxDIFOSize {
			return nil, l.dataErr(i, at, ReasonDIFOMax)
		}
		ttl += ss.Size
		k := -1
		for j := range difoSub {
			if difoSub[j].t == ss.Type {
				k = j
				break
			}
		}
		if k < 0 {
			return nil, l.dataErr(i, at, ReasonUnrecSubsec)
		}
		ds := &difoSub[k]
		switch {
		case !ss.Loaded():
			return nil, l.dataErr(i, at, ReasonNotLoaded)
		case ss.Align != ds.align:
			return nil, l.secErr(sub, fAlign, ReasonBadAlign)
		case seen[k]:
			return nil, l.dataErr(i, at, ds.dup)
		case ss.EntSize != ds.entsize:
			return nil, l.secErr(sub, fEntSize, ReasonEntSize)
		case ss.EntSize != 0 && ss.Size%uint64(ss.EntSize) != 0:
			return nil, l.secErr(sub, fSize, ReasonCorruptEnt)
		}
		seen[k] = true
		b := l.data(sub)
		switch ss.Type {
		case dof.SectDIF:
			d.Code = make([]uint32, len(b)/4)
			for j := range d.Code {
				d.Code[j] = le32(b[4*j:])
			}
		case dof.SectIntTab:
			intsec = sub
			d.Ints = make([]uint64, len(b)/8)
			for j := range d.Ints {
				d.Ints[j] = le64(b[8*j:])
			}
		case dof.SectStrTab:
			d.Strs = bytes.Clone(b)
		case dof.SectVarTab:
			d.Vars = make([]dof.DIFVar, len(b)/dof.DIFVarSize)
			for j := range d.Vars {
				d.Vars[j] = dof.DecodeDIFVar(b[dof.DIFVarSize*j:])
			}
		}
	}
	// An empty DIF section is no text either: the kernel would look
	// at the instruction before the first.
	if len(d.Code) == 0 {
		return nil, l.secErr(i, fSize, ReasonMissingDIF)
	}
	for j := range d.Vars {
		v := &d.Vars[j]
		if v.ID >= dof.VarOtherUBase && v.Type.Kind == dof.TypeString && v.Type.Size == 0 {
			v.Type.Size = l.cfg.StrSize
		}
	}
	if intsec >= 0 {
		for _, r := range l.rels[uint32(intsec)] {
			if r.kernel {
				d.KRelo = append(d.KRelo, r.rels...)
			} else {
				d.URelo = append(d.URelo, r.rels...)
			}
		}
	}
	l.difos[uint32(i)] = d
	return d, nil
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }
