package enabling

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
		return p, l.secErr(i, fType, reasonProbeSection)
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
		{&p.Module, d.Mod, 8, dof.ModNameLen, ReasonProbeModule, reasonProbeModuleLong},
		{&p.Function, d.Func, 12, l.cfg.FuncNameLen, ReasonProbeFunction, ReasonProbeFunctionLong},
		{&p.Name, d.Name, 16, dof.NameLen, ReasonProbeName, reasonProbeNameLong},
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
		return nil, nil, l.secErr(i, fType, reasonActSection)
	case s.Offset+dof.ActDescSize > uint64(len(l.b)):
		return nil, nil, l.secErr(i, fSize, reasonTruncatedAct)
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

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }
