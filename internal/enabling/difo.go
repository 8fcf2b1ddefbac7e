package enabling

import (
	"bytes"
	"errors"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
)

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

// difoSecs are the sections a DIFO was read from, to place the faults
// package dif finds.
type difoSecs struct {
	hdr, code, strs, vars int
	krelo, urelo          []relPos
}

type relPos struct {
	sec int
	at  uint64
}

func (l *loader) limits(helper bool) dif.Limits {
	return dif.Limits{
		NRegs:      dof.DIFIntRegs,
		NTupleRegs: dof.DIFTupRegs,
		MaxSize:    l.cfg.MaxDIFOSize,
		StrSize:    l.cfg.StrSize,
		Helper:     helper,
		KernelOnly: l.cfg.KernelOnlyDIF,
	}
}

func difType(t dof.DIFType) dif.Type {
	return dif.Type{Kind: t.Kind, CtfKind: t.CKind, Flags: t.Flags, Size: t.Size}
}

// difo reads the DIFO whose DIFOHDR is section i (dtrace_dof_difo) and
// checks its DIF (dtrace_difo_validate). A DIFOHDR referenced twice
// gives one DIFO.
func (l *loader) difo(i int) (*dif.Object, error) {
	if d, ok := l.difos[uint32(i)]; ok {
		return d, nil
	}
	s := &l.secs[i]
	switch {
	case s.Type != dof.SectDIFOHdr:
		return nil, l.secErr(i, fType, reasonDIFOSection)
	case s.Align != 4:
		return nil, l.secErr(i, fAlign, ReasonDIFOAlign)
	case s.Size < dof.DIFOHdrSize || s.Size%4 != 0:
		return nil, l.secErr(i, fSize, ReasonDIFOSize)
	}
	hb := l.data(i)
	o := &dif.Object{Ret: difType(dof.DecodeDIFType(hb))}
	where := &difoSecs{hdr: i, code: -1, strs: -1, vars: -1}
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
			return nil, l.dataErr(i, at, reasonNotLoaded)
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
			where.code = sub
			o.Code = make([]dif.Instr, len(b)/4)
			for j := range o.Code {
				o.Code[j] = dif.Instr(le32(b[4*j:]))
			}
		case dof.SectIntTab:
			intsec = sub
			o.Ints = make([]uint64, len(b)/8)
			for j := range o.Ints {
				o.Ints[j] = le64(b[8*j:])
			}
		case dof.SectStrTab:
			where.strs = sub
			o.Strs = bytes.Clone(b)
		case dof.SectVarTab:
			where.vars = sub
			o.Vars = make([]dif.Var, len(b)/dof.DIFVarSize)
			for j := range o.Vars {
				v := dof.DecodeDIFVar(b[dof.DIFVarSize*j:])
				o.Vars[j] = dif.Var{Name: v.Name, ID: v.ID, Kind: v.Kind, Scope: v.Scope, Flags: v.Flags,
					Type: difType(v.Type)}
			}
		}
	}
	// An empty DIF section is no text either: the kernel would look
	// at the instruction before the first.
	if len(o.Code) == 0 {
		return nil, l.secErr(i, fSize, ReasonMissingDIF)
	}
	if intsec >= 0 {
		for _, r := range l.rels[uint32(intsec)] {
			list, pos := &o.URelo, &where.urelo
			if r.kernel {
				list, pos = &o.KRelo, &where.krelo
			}
			for k, d := range r.rels {
				*list = append(*list, dif.Relo{Name: d.Name, Type: uint32(d.Type), Offset: d.Offset, Data: d.Data})
				*pos = append(*pos, relPos{sec: r.sec, at: r.at[k]})
			}
		}
	}
	if err := l.dv.Validate(o); err != nil {
		return nil, l.difErr(where, err)
	}
	for j := range o.Vars {
		v := &o.Vars[j]
		if v.ID >= dif.VarOtherUBase && v.Type.Kind == dof.TypeString && v.Type.Size == 0 {
			v.Type.Size = l.cfg.StrSize
		}
	}
	for _, in := range o.Code {
		if in.Op() == dif.CALL && (in.Subr() == dif.SubrCopyout || in.Subr() == dif.SubrCopyoutstr) {
			o.Destructive = true
		}
	}
	if l.where == nil {
		l.where = make(map[*dif.Object]*difoSecs)
	}
	l.where[o] = where
	l.difos[uint32(i)] = o
	return o, nil
}

// difErr places a fault package dif found in the DOF the DIFO came from.
func (l *loader) difErr(w *difoSecs, err error) error {
	e := &Error{Section: w.hdr, Type: dof.SectDIFOHdr, Offset: l.secs[w.hdr].Offset, Reason: err.Error(), Err: err}
	var de *dif.Error
	if !errors.As(err, &de) {
		return e
	}
	e.Reason = de.Reason
	place := func(sec int, off uint64) {
		if sec >= 0 {
			e.Section, e.Type, e.Offset = sec, l.secs[sec].Type, l.secs[sec].Offset+off
		}
	}
	switch de.Part {
	case dif.PartCode:
		place(w.code, 4*uint64(max(de.Index, 0)))
	case dif.PartVar:
		place(w.vars, dof.DIFVarSize*uint64(max(de.Index, 0)))
	case dif.PartStrings:
		place(w.strs, 0)
	case dif.PartKRelo, dif.PartURelo:
		rels := w.urelo
		if de.Part == dif.PartKRelo {
			rels = w.krelo
		}
		if de.Index >= 0 && de.Index < len(rels) {
			e.Section, e.Type, e.Offset = rels[de.Index].sec, dof.SectRelTab, rels[de.Index].at
		}
	}
	return e
}
