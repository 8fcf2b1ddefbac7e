package enabling

import (
	"bytes"
	"fmt"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
)

// helper checks helper DOF as dtrace_helper_slurp does once the file is
// slurped: each USDT provider (dtrace_helper_provider_validate), then
// the ECBs, which must be dtrace:helper:ustack helper actions made of
// DIF expressions (dtrace_helper_action_add).
func (l *loader) helper() error {
	for i := range l.secs {
		if l.secs[i].Type != dof.SectProvider {
			continue
		}
		pv, err := l.provider(i)
		if err != nil {
			return err
		}
		l.prog.Providers = append(l.prog.Providers, pv)
	}
	unmatched := false
	for n := range l.prog.ECBs {
		e := &l.prog.ECBs[n]
		if e.Probe.Provider != "dtrace" || e.Probe.Module != "helper" || e.Probe.Function != "ustack" {
			unmatched = true
			continue
		}
		for i := range e.Actions {
			if a := &e.Actions[i]; a.Kind != dof.ActDIFExpr || a.DIFO == nil {
				p := l.acts[n][i]
				return l.dataErr(p.sec, p.off+8, ReasonHelperAction)
			}
		}
		// What a helper may do (dtrace_difo_validate_helper).
		hv := dif.NewValidator(l.limits(true))
		objs := []*dif.Object{e.Pred}
		for i := range e.Actions {
			objs = append(objs, e.Actions[i].DIFO)
		}
		for _, o := range objs {
			if o == nil {
				continue
			}
			if err := hv.Validate(o); err != nil {
				return l.difErr(l.where[o], err)
			}
		}
	}
	if unmatched {
		l.prog.Warnings = append(l.prog.Warnings, reasonUnmatchedHelps)
	}
	return nil
}

// provider validates and reads the USDT provider in section i.
func (l *loader) provider(i int) (dof.Provider, error) {
	var pv dof.Provider
	s := &l.secs[i]
	v1 := l.h.Version == dof.Version1
	if s.Offset%4 != 0 {
		return pv, l.secErr(i, fOffset, ReasonProvOffset)
	}
	min := uint64(dof.ProviderDescSize)
	if v1 {
		min = dof.ProviderDescV1Size
	}
	if !s.Loaded() || s.Size < min {
		return pv, l.secErr(i, fSize, ReasonProvSmall)
	}
	d := dof.DecodeProviderDesc(l.data(i)[:min])
	at := s.Offset
	strSec, err := l.sect(i, at, dof.SectStrTab, d.StrTab)
	if err != nil {
		return pv, err
	}
	prbSec, err := l.sect(i, at+4, dof.SectProbes, d.Probes)
	if err != nil {
		return pv, err
	}
	argSec, err := l.sect(i, at+8, dof.SectPrArgs, d.PrArgs)
	if err != nil {
		return pv, err
	}
	offSec, err := l.sect(i, at+12, dof.SectPrOffs, d.PrOffs)
	if err != nil {
		return pv, err
	}
	enSec := -1
	if !v1 && d.PrEnOffs != uint32(dof.SectNone) {
		if enSec, err = l.sect(i, at+40, dof.SectPrEnOffs, d.PrEnOffs); err != nil {
			return pv, err
		}
		// The kernel takes any entry size here, and then reads 4-byte
		// offsets.
		if en := &l.secs[enSec]; en.EntSize != 4 {
			return pv, l.secErr(enSec, fEntSize, ReasonProvEntSize)
		} else if en.Offset%4 != 0 {
			return pv, l.secErr(enSec, fOffset, ReasonProvOffset)
		}
	}
	str := l.data(strSec)
	strOK := func(off uint32, max int) bool {
		return uint64(off) < uint64(len(str)) && bytes.IndexByte(str[off:], 0) < max
	}
	if !strOK(d.Name, dof.ProvNameLen) {
		return pv, l.dataErr(i, at+16, ReasonProvName)
	}
	pv.Name = l.str(strSec, d.Name)
	attr := func(v uint32) dof.Attr {
		return dof.Attr{Name: uint8(v >> 24), Data: uint8(v >> 16), Class: uint8(v >> 8)}
	}
	pv.Attr = dof.ProviderAttr{Provider: attr(d.ProvAttr), Mod: attr(d.ModAttr), Func: attr(d.FuncAttr),
		Name: attr(d.NameAttr), Args: attr(d.ArgsAttr)}

	prb, off, arg := &l.secs[prbSec], &l.secs[offSec], &l.secs[argSec]
	switch {
	case prb.EntSize == 0 || uint64(prb.EntSize) > prb.Size:
		return pv, l.secErr(prbSec, fEntSize, ReasonProvEntSize)
	case prb.EntSize%8 != 0:
		return pv, l.secErr(prbSec, fEntSize, ReasonProvEntAlign)
	case prb.EntSize < dof.ProbeEntrySize:
		// The kernel would read each probe past its entry.
		return pv, l.secErr(prbSec, fEntSize, ReasonProvEntSize)
	case off.EntSize != 4:
		return pv, l.secErr(offSec, fEntSize, ReasonProvEntSize)
	case off.Offset%4 != 0:
		return pv, l.secErr(offSec, fOffset, ReasonProvOffset)
	case arg.EntSize != 1:
		return pv, l.secErr(argSec, fEntSize, ReasonProvEntSize)
	}
	args := l.data(argSec)
	offs := l.data(offSec)
	var enoffs []byte
	if enSec >= 0 {
		enoffs = l.data(enSec)
	}
	relName := make(map[uint64]uint32)
	for _, r := range l.rels[uint32(prbSec)] {
		for _, d := range r.rels {
			relName[d.Offset] = d.Name
		}
	}
	// typeList reads n argument types stored back to back from off;
	// check, if not nil, vets the k-th before it is read.
	typeList := func(off uint32, n int, bad, long string, at uint64, check func(k int) error) ([]string, error) {
		var list []string
		idx := uint64(off)
		for k := range n {
			if check != nil {
				if err := check(k); err != nil {
					return nil, err
				}
			}
			if idx >= uint64(len(str)) {
				return nil, l.dataErr(prbSec, at, bad)
			}
			z := bytes.IndexByte(str[idx:], 0)
			if z+1 > dof.ArgTypeLen {
				return nil, l.dataErr(prbSec, at, long)
			}
			list = append(list, string(str[idx:idx+uint64(z)]))
			idx += uint64(z) + 1
		}
		return list, nil
	}
	n := prb.Size / uint64(prb.EntSize)
	for j := uint64(0); j < n; j++ {
		po := j * uint64(prb.EntSize)
		at := prb.Offset + po
		e := dof.DecodeProbeEntry(l.b[at:])
		if uint64(e.Func) >= uint64(len(str)) {
			return pv, l.dataErr(prbSec, at+8, ReasonProvFuncName)
		}
		skip := !strOK(e.Func, l.cfg.FuncNameLen)
		if skip {
			l.prog.Warnings = append(l.prog.Warnings,
				fmt.Sprintf("%s: %s:%s", reasonProvFuncLong, pv.Name, l.str(strSec, e.Func)))
		}
		if !strOK(e.Name, dof.NameLen) {
			return pv, l.dataErr(prbSec, at+12, ReasonProvProbeName)
		}
		if uint64(e.OffIdx)+uint64(e.NOffs) > off.Size/4 {
			return pv, l.dataErr(prbSec, at+28, ReasonProvProbeOff)
		}
		if !v1 {
			if enSec < 0 {
				if e.EnOffIdx != 0 || e.NEnOffs != 0 {
					return pv, l.dataErr(prbSec, at+36, ReasonProvEnNull)
				}
			} else if uint64(e.EnOffIdx)+uint64(e.NEnOffs) > l.secs[enSec].Size/4 {
				return pv, l.dataErr(prbSec, at+36, ReasonProvEnOff)
			}
			if e.NOffs == 0 && e.NEnOffs == 0 {
				return pv, l.dataErr(prbSec, at+34, ReasonProvZeroOffs)
			}
		} else if e.NOffs == 0 {
			return pv, l.dataErr(prbSec, at+34, reasonProvZeroOffsV1)
		}
		if uint64(e.ArgIdx)+uint64(e.XArgc) > arg.Size {
			return pv, l.dataErr(prbSec, at+24, ReasonProvArgs)
		}
		p := dof.Probe{Addr: e.Addr, Func: l.str(strSec, e.Func), Name: l.str(strSec, e.Name)}
		if p.NArgs, err = typeList(e.NArgv, int(e.NArgc), ReasonProvNArgType, reasonProvNArgLong, at+16, nil); err != nil {
			return pv, err
		}
		argIndex := func(k int) error {
			if x := e.ArgIdx + uint32(k); args[x] > e.NArgc {
				return l.dataErr(argSec, arg.Offset+uint64(x), ReasonProvNArgIndex)
			}
			return nil
		}
		if p.XArgs, err = typeList(e.XArgv, int(e.XArgc), ReasonProvXArgType, reasonProvXArgLong, at+20, argIndex); err != nil {
			return pv, err
		}
		if e.XArgc > 0 {
			p.ArgMap = bytes.Clone(args[e.ArgIdx : e.ArgIdx+uint32(e.XArgc)])
		}
		for k := range uint32(e.NOffs) {
			p.Offs = append(p.Offs, le32(offs[4*(e.OffIdx+k):]))
		}
		for k := range uint32(e.NEnOffs) {
			p.EnOffs = append(p.EnOffs, le32(enoffs[4*(e.EnOffIdx+k):]))
		}
		if r, ok := relName[po]; ok && r != e.Func && uint64(r) < uint64(len(str)) {
			p.RelName = l.str(strSec, r)
		}
		if !skip {
			pv.Probes = append(pv.Probes, p)
		}
	}
	return pv, nil
}
