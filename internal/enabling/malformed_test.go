package enabling_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/doftest"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

var le = binary.LittleEndian

// secIdx returns the index of the nth section of type t.
func secIdx(f *dof.File, t dof.SectType, nth int) int {
	for i, s := range f.Sections {
		if s.Type == t {
			if nth == 0 {
				return i
			}
			nth--
		}
	}
	panic("no such section: " + t.String())
}

func secHdr(f *dof.File, i int) uint64 { return f.Header.SecOff + uint64(i)*uint64(f.Header.SecSize) }

func putSec32(b []byte, f *dof.File, i int, field uint64, v uint32) {
	le.PutUint32(b[secHdr(f, i)+field:], v)
}

func putSec64(b []byte, f *dof.File, i int, field uint64, v uint64) {
	le.PutUint64(b[secHdr(f, i)+field:], v)
}

func putData32(b []byte, f *dof.File, i int, off uint64, v uint32) {
	le.PutUint32(b[f.Sections[i].Offset+off:], v)
}

func putData64(b []byte, f *dof.File, i int, off uint64, v uint64) {
	le.PutUint64(b[f.Sections[i].Offset+off:], v)
}

// Section header fields.
const (
	fType, fAlign, fFlags, fEntSize, fOffset, fSize = 0, 4, 8, 12, 16, 24
)

type malformed struct {
	name   string
	prog   *dof.Program
	opts   *dof.Options
	cfg    *enabling.Config
	mutate func(b []byte, f *dof.File) []byte
	reason string
	// section is the section the error must name, given as a type and
	// the occurrence of that type; header errors have none.
	secType dof.SectType
	secNth  int
	header  bool
}

func prog(name string) *dof.Program { return doftest.ByName(name) }

func oneAction(a ...dof.Action) *dof.Program {
	return &dof.Program{ECBs: []dof.ECB{{Probe: dof.ProbeSpec{Provider: "dtrace", Name: "BEGIN"}, Actions: a}}}
}

func helperCfg() *enabling.Config { return &enabling.Config{Helper: true} }

// malformedCases has one DOF for each check of the loader, made by
// corrupting what Write lays out, with the reason the loader must give.
func malformedCases() []malformed {
	const (
		ECB   = dof.SectECBDesc
		PD    = dof.SectProbeDesc
		AD    = dof.SectActDesc
		DH    = dof.SectDIFOHdr
		DIF   = dof.SectDIF
		INT   = dof.SectIntTab
		STR   = dof.SectStrTab
		VAR   = dof.SectVarTab
		REL   = dof.SectRelTab
		KREL  = dof.SectKRelHdr
		OPT   = dof.SectOptDesc
		PROV  = dof.SectProvider
		PRB   = dof.SectProbes
		PRARG = dof.SectPrArgs
		PROFF = dof.SectPrOffs
		PREN  = dof.SectPrEnOffs
	)
	hdr := func(off int, v byte) func([]byte, *dof.File) []byte {
		return func(b []byte, f *dof.File) []byte { b[off] = v; return b }
	}
	hdr32 := func(off int, v uint32) func([]byte, *dof.File) []byte {
		return func(b []byte, f *dof.File) []byte { le.PutUint32(b[off:], v); return b }
	}
	hdr64 := func(off int, v uint64) func([]byte, *dof.File) []byte {
		return func(b []byte, f *dof.File) []byte { le.PutUint64(b[off:], v); return b }
	}
	sec32 := func(t dof.SectType, nth int, field uint64, v uint32) func([]byte, *dof.File) []byte {
		return func(b []byte, f *dof.File) []byte { putSec32(b, f, secIdx(f, t, nth), field, v); return b }
	}
	sec64 := func(t dof.SectType, nth int, field uint64, v uint64) func([]byte, *dof.File) []byte {
		return func(b []byte, f *dof.File) []byte { putSec64(b, f, secIdx(f, t, nth), field, v); return b }
	}
	data32 := func(t dof.SectType, nth int, off uint64, v uint32) func([]byte, *dof.File) []byte {
		return func(b []byte, f *dof.File) []byte { putData32(b, f, secIdx(f, t, nth), off, v); return b }
	}
	data64 := func(t dof.SectType, nth int, off uint64, v uint64) func([]byte, *dof.File) []byte {
		return func(b []byte, f *dof.File) []byte { putData64(b, f, secIdx(f, t, nth), off, v); return b }
	}
	data8 := func(t dof.SectType, nth int, off uint64, v byte) func([]byte, *dof.File) []byte {
		return func(b []byte, f *dof.File) []byte { b[f.Sections[secIdx(f, t, nth)].Offset+off] = v; return b }
	}
	// link points a DIFOHDR's nth link at the first section of type t.
	link := func(hdrNth, n int, t dof.SectType, tNth int) func([]byte, *dof.File) []byte {
		return func(b []byte, f *dof.File) []byte {
			putData32(b, f, secIdx(f, DH, hdrNth), 8+4*uint64(n), uint32(secIdx(f, t, tNth)))
			return b
		}
	}
	both := func(ms ...func([]byte, *dof.File) []byte) func([]byte, *dof.File) []byte {
		return func(b []byte, f *dof.File) []byte {
			for _, m := range ms {
				b = m(b, f)
			}
			return b
		}
	}
	twoInts := &dof.Program{ECBs: []dof.ECB{{Actions: []dof.Action{{Kind: dof.ActDIFExpr, DIFO: &dof.DIFO{
		Ret: doftest.Int(8), Code: []uint32{doftest.SetX(1, 1), doftest.Ret(1)}, Ints: []uint64{0, 0},
		Strs: []byte("hz\x00"), URelo: []dof.RelDesc{{Type: dof.RelSetX, Offset: 8}},
	}}}}}}
	strVar := &dof.Program{ECBs: []dof.ECB{{Actions: []dof.Action{{Kind: dof.ActDIFExpr, DIFO: &dof.DIFO{
		Ret: doftest.Int(8), Code: []uint32{doftest.Ret(0)}, Strs: []byte("v\x00"),
		Vars: []dof.DIFVar{{ID: 0x500, Kind: dof.VarKindScalar, Type: doftest.Int(8)}},
	}}}}}}
	trace := dof.Action{Kind: dof.ActDIFExpr, DIFO: doftest.Const(1, 8)}
	spec := dof.Action{Kind: dof.ActSpeculate, DIFO: doftest.Const(1, 4)}
	commit := dof.Action{Kind: dof.ActCommit, DIFO: doftest.Const(1, 4)}
	aggID := dof.Action{Kind: dof.ActDIFExpr, DIFO: doftest.Const(1, 8)}
	count := dof.Action{Kind: dof.AggCount, NTuple: 1, DIFO: doftest.Const(1, 8)}
	big := dof.Action{Kind: dof.ActDIFExpr, DIFO: &dof.DIFO{Ret: dof.DIFType{Kind: dof.TypeCTF, Flags: dof.TypeByRef, Size: 0xc0000000},
		Code: []uint32{doftest.Ret(0)}}}
	withProbe := func(fn string) *dof.Program {
		return &dof.Program{ECBs: []dof.ECB{{Probe: dof.ProbeSpec{Provider: "fbt", Function: fn, Name: "entry"}}}}
	}
	usdt := prog("usdt-provider")
	usdtNoEn := prog("usdt-provider")
	usdtNoEn.Providers[0].Probes[0].EnOffs = nil
	usdtNoEn.Providers[0].Probes[0].Offs = []uint32{1}

	return []malformed{
		// Before the header is read.
		{name: "short", prog: prog("begin-trace"), mutate: func(b []byte, f *dof.File) []byte { return b[:63] },
			reason: enabling.ReasonTruncatedHeader, header: true},
		{name: "loadsz max", prog: prog("begin-trace"), mutate: hdr64(40, 8<<20), reason: enabling.ReasonLoadSizeMax, header: true},
		{name: "loadsz small", prog: prog("begin-trace"), mutate: hdr64(40, 63), reason: enabling.ReasonLoadSize, header: true},
		{name: "loadsz beyond", prog: prog("begin-trace"), mutate: func(b []byte, f *dof.File) []byte { return b[:len(b)-1] },
			reason: enabling.ReasonTruncatedDOF, header: true},

		// The header.
		{name: "magic", prog: prog("begin-trace"), mutate: hdr(3, 'f'), reason: enabling.ReasonMagic, header: true},
		{name: "model none", prog: prog("begin-trace"), mutate: hdr(4, 0), reason: enabling.ReasonModel, header: true},
		{name: "model 3", prog: prog("begin-trace"), mutate: hdr(4, 3), reason: enabling.ReasonModel, header: true},
		{name: "big-endian", prog: prog("begin-trace"), mutate: hdr(5, 2), reason: enabling.ReasonEncoding, header: true},
		{name: "version 3", prog: prog("begin-trace"), mutate: hdr(6, 3), reason: enabling.ReasonVersion, header: true},
		{name: "DIF version 1", prog: prog("begin-trace"), mutate: hdr(7, 1), reason: enabling.ReasonDIFVersion, header: true},
		{name: "integer registers", prog: prog("begin-trace"), mutate: hdr(8, 9), reason: enabling.ReasonIntRegs, header: true},
		{name: "tuple registers", prog: prog("begin-trace"), mutate: hdr(9, 9), reason: enabling.ReasonTupRegs, header: true},
		{name: "ident pad", prog: prog("begin-trace"), mutate: hdr(15, 1), reason: enabling.ReasonIdent, header: true},
		{name: "flags", prog: prog("begin-trace"), mutate: hdr32(16, 1), reason: enabling.ReasonFlags, header: true},
		{name: "secsize 0", prog: prog("begin-trace"), mutate: hdr32(24, 0), reason: enabling.ReasonSecSizeZero, header: true},
		{name: "secnum", prog: prog("begin-trace"), mutate: hdr32(28, 1000), reason: enabling.ReasonTruncatedSecs, header: true},
		{name: "secoff beyond", prog: prog("begin-trace"), mutate: hdr64(32, 1<<40), reason: enabling.ReasonTruncatedSecs, header: true},
		{name: "secoff misaligned", prog: prog("begin-trace"), mutate: hdr64(32, 68), reason: enabling.ReasonMisalignedSecs, header: true},
		{name: "secsize misaligned", prog: prog("empty-clause"), mutate: hdr32(24, 36), reason: enabling.ReasonMisalignedSecSz, header: true},
		{name: "secsize small", prog: prog("begin-trace"), mutate: hdr32(24, 24), reason: enabling.ReasonSecSizeSmall, header: true},

		// Section headers.
		{name: "provider in enabling", prog: prog("usdt-provider"), reason: enabling.ReasonIllegalSections, secType: PRB},
		{name: "load flag", prog: prog("begin-trace"), mutate: sec32(PD, 0, fFlags, 0), reason: enabling.ReasonLoadFlag, secType: PD},
		{name: "alignment", prog: prog("begin-trace"), mutate: sec32(DIF, 0, fAlign, 3), reason: enabling.ReasonSecAlign, secType: DIF},
		{name: "misaligned", prog: prog("begin-trace"), mutate: sec64(ECB, 0, fOffset, 4), reason: enabling.ReasonMisalignedSec, secType: ECB},
		{name: "alignment 0", prog: prog("begin-trace"), mutate: sec32(INT, 0, fAlign, 0), reason: enabling.ReasonMisalignedSec, secType: INT},
		{name: "size beyond", prog: prog("begin-trace"), mutate: sec64(ECB, 0, fSize, 1<<20), reason: enabling.ReasonCorruptSec, secType: ECB},
		{name: "size overflow", prog: prog("begin-trace"), mutate: sec64(ECB, 0, fSize, ^uint64(0)-100), reason: enabling.ReasonCorruptSec, secType: ECB},
		{name: "offset beyond", prog: prog("begin-trace"), mutate: sec64(PD, 0, fOffset, 1<<40), reason: enabling.ReasonCorruptSec, secType: PD},
		{name: "strtab unterminated", prog: prog("begin-trace"),
			mutate: func(b []byte, f *dof.File) []byte { b[len(b)-1] = 'x'; return b }, reason: enabling.ReasonStrTab, secType: STR},
		{name: "strtab empty", prog: prog("printf"), mutate: sec64(STR, 1, fSize, 0), reason: enabling.ReasonStrTab, secType: STR, secNth: 1},

		// References between sections.
		{name: "index", prog: prog("begin-trace"), mutate: data32(ECB, 0, 0, 99), reason: enabling.ReasonSecIndex, secType: ECB},
		{name: "index none", prog: prog("begin-trace"), mutate: data32(ECB, 0, 0, dof.SecIdxNone), reason: enabling.ReasonSecIndex, secType: ECB},
		{name: "not loadable", prog: prog("begin-trace"), opts: &dof.Options{Comments: "c"},
			mutate: func(b []byte, f *dof.File) []byte {
				putData32(b, f, secIdx(f, ECB, 0), 0, uint32(secIdx(f, dof.SectComments, 0)))
				return b
			}, reason: enabling.ReasonSecNotLoad, secType: ECB},
		{name: "wrong type", prog: prog("begin-trace"),
			mutate: func(b []byte, f *dof.File) []byte {
				putData32(b, f, secIdx(f, ECB, 0), 0, uint32(secIdx(f, ECB, 0)))
				return b
			}, reason: enabling.ReasonSecWrongTyp, secType: ECB},

		// ECB and probe descriptions.
		{name: "ECB size", prog: prog("begin-trace"), mutate: sec64(ECB, 0, fSize, 16), reason: enabling.ReasonTruncatedECB, secType: ECB},
		{name: "ECB alignment", prog: prog("begin-trace"), mutate: sec32(ECB, 0, fAlign, 4), reason: enabling.ReasonECBAlign, secType: ECB},
		{name: "probe alignment", prog: prog("begin-trace"), mutate: sec32(PD, 0, fAlign, 2), reason: enabling.ReasonProbeAlign, secType: PD},
		{name: "probe size", prog: prog("begin-trace"), mutate: sec64(PD, 0, fSize, 20), reason: enabling.ReasonTruncatedProbe, secType: PD},
		{name: "probe strtab", prog: prog("begin-trace"), mutate: data32(PD, 0, 0, 1), reason: enabling.ReasonSecWrongTyp, secType: PD},
		{name: "probe provider", prog: prog("begin-trace"), mutate: data32(PD, 0, 4, 1000), reason: enabling.ReasonProbeProvider, secType: PD},
		{name: "probe module", prog: prog("begin-trace"), mutate: data32(PD, 0, 8, 1000), reason: enabling.ReasonProbeModule, secType: PD},
		{name: "probe function", prog: prog("begin-trace"), mutate: data32(PD, 0, 12, 1000), reason: enabling.ReasonProbeFunction, secType: PD},
		{name: "probe name", prog: prog("begin-trace"), mutate: data32(PD, 0, 16, 1000), reason: enabling.ReasonProbeName, secType: PD},
		{name: "probe function long", prog: withProbe(strings.Repeat("f", 150)), cfg: &enabling.Config{FuncNameLen: dof.FuncNameLenOld},
			reason: enabling.ReasonProbeFunctionLong, secType: PD},
		{name: "probe provider long", prog: withProbe(strings.Repeat("f", 100)),
			mutate: func(b []byte, f *dof.File) []byte {
				copy(b[f.Sections[0].Offset+1:], strings.Repeat("p", 70)) // runs over the following strings
				return b
			}, reason: enabling.ReasonProbeProviderLong, secType: PD},

		// Actions.
		{name: "action alignment", prog: prog("begin-trace"), mutate: sec32(AD, 0, fAlign, 4), reason: enabling.ReasonActAlign, secType: AD},
		{name: "action truncated", prog: prog("begin-trace"), mutate: sec64(AD, 0, fSize, 16), reason: enabling.ReasonActEntExceeds, secType: AD},
		{name: "action entsize", prog: prog("begin-trace"), mutate: sec32(AD, 0, fEntSize, 24), reason: enabling.ReasonActEntSize, secType: AD},
		{name: "action entsize 0", prog: prog("begin-trace"), mutate: sec32(AD, 0, fEntSize, 0), reason: enabling.ReasonActEntSize, secType: AD},
		{name: "actions max", prog: prog("printf"), cfg: &enabling.Config{MaxActions: 1}, reason: enabling.ReasonActionsMax, secType: AD},
		{name: "action partial entry", prog: prog("printf"), mutate: sec64(AD, 0, fSize, 40), reason: enabling.ReasonCorruptEnt, secType: AD},
		{name: "action kind 32 bits", prog: prog("begin-trace"), mutate: data32(AD, 0, 8, 0x10001), reason: enabling.ReasonActKind, secType: AD},
		{name: "printf without format", prog: prog("printf"), mutate: data32(AD, 0, 4, dof.SecIdxNone), reason: enabling.ReasonSecIndex, secType: AD},
		{name: "format beyond", prog: prog("printf"), mutate: data64(AD, 0, 16, 1000), reason: enabling.ReasonBogusFormat, secType: AD},
		{name: "format huge", prog: prog("printf"), mutate: data64(AD, 0, 16, ^uint64(0)), reason: enabling.ReasonBogusFormat, secType: AD},
		{name: "format empty", prog: prog("printf"), mutate: data64(AD, 0, 16, 0), reason: enabling.ReasonEmptyFormat, secType: AD},
		{name: "format not a strtab", prog: prog("printf"), mutate: data32(AD, 0, 4, 1), reason: enabling.ReasonSecWrongTyp, secType: AD},
		{name: "action DIFO type", prog: prog("begin-trace"), mutate: data32(AD, 0, 0, 1), reason: enabling.ReasonSecWrongTyp, secType: AD},

		// DIFOs.
		{name: "DIFO alignment", prog: prog("begin-trace"), mutate: sec32(DH, 0, fAlign, 2), reason: enabling.ReasonDIFOAlign, secType: DH},
		{name: "DIFO size small", prog: prog("begin-trace"), mutate: sec64(DH, 0, fSize, 8), reason: enabling.ReasonDIFOSize, secType: DH},
		{name: "DIFO size odd", prog: prog("begin-trace"), mutate: sec64(DH, 0, fSize, 14), reason: enabling.ReasonDIFOSize, secType: DH},
		{name: "DIFO link", prog: prog("begin-trace"), mutate: data32(DH, 0, 8, 77), reason: enabling.ReasonSecIndex, secType: DH},
		{name: "DIFO max", prog: prog("begin-trace"), cfg: &enabling.Config{MaxDIFOSize: 8}, reason: enabling.ReasonDIFOMax, secType: DH},
		{name: "DIFO subsection", prog: prog("begin-trace"), mutate: link(0, 0, PD, 0), reason: enabling.ReasonUnrecSubsec, secType: DH},
		{name: "DIF alignment", prog: prog("begin-trace"), mutate: sec32(DIF, 0, fAlign, 2), reason: enabling.ReasonBadAlign, secType: DIF},
		{name: "INTTAB alignment", prog: prog("begin-trace"), mutate: sec32(INT, 0, fAlign, 4), reason: enabling.ReasonBadAlign, secType: INT},
		{name: "two DIF", prog: prog("begin-trace"), mutate: link(0, 1, DIF, 0), reason: enabling.ReasonMultiDIF, secType: DH},
		{name: "two INTTAB", prog: prog("begin-trace"), mutate: link(0, 0, INT, 0), reason: enabling.ReasonMultiInt, secType: DH},
		{name: "two STRTAB", prog: prog("printf"), mutate: link(1, 0, STR, 1), reason: enabling.ReasonMultiStr, secType: DH, secNth: 1},
		{name: "two VARTAB", prog: strVar, mutate: link(0, 1, VAR, 0), reason: enabling.ReasonMultiVar, secType: DH},
		{name: "DIF entsize", prog: prog("begin-trace"), mutate: sec32(DIF, 0, fEntSize, 8), reason: enabling.ReasonEntSize, secType: DIF},
		{name: "STRTAB entsize", prog: prog("printf"), mutate: sec32(STR, 1, fEntSize, 1), reason: enabling.ReasonEntSize, secType: STR, secNth: 1},
		{name: "DIF partial", prog: prog("begin-trace"), mutate: sec64(DIF, 0, fSize, 6), reason: enabling.ReasonCorruptEnt, secType: DIF},
		{name: "VARTAB partial", prog: strVar, mutate: sec64(VAR, 0, fSize, 10), reason: enabling.ReasonCorruptEnt, secType: VAR},
		{name: "no DIF", prog: prog("begin-trace"),
			mutate: both(sec64(DH, 0, fSize, 12), link(0, 0, INT, 0)), reason: enabling.ReasonMissingDIF, secType: DH},
		{name: "empty DIF", prog: prog("begin-trace"), mutate: sec64(DIF, 0, fSize, 0), reason: enabling.ReasonMissingDIF, secType: DH},
		{name: "DIFO of a translator", prog: &dof.Program{
			Translators: []dof.Translator{{Members: []dof.XlMember{{Name: "m", Type: doftest.Int(4)}}, Type: "t"}},
			ECBs: []dof.ECB{{Actions: []dof.Action{{Kind: dof.ActDIFExpr, DIFO: &dof.DIFO{Ret: doftest.Int(4),
				Code: []uint32{78<<24 | 1, doftest.Ret(1)}, XlRefs: []dof.XlRef{{}}}}}}}},
			reason: enabling.ReasonUnrecSubsec, secType: DH},

		// Relocations.
		{name: "relocation header size", prog: prog("relocations"), mutate: sec64(KREL, 0, fSize, 8), reason: enabling.ReasonInvalidRelHdr, secType: KREL},
		{name: "relocation header alignment", prog: prog("relocations"), mutate: sec32(KREL, 0, fAlign, 2), reason: enabling.ReasonInvalidRelHdr, secType: KREL},
		{name: "relocation strtab", prog: prog("relocations"), mutate: data32(KREL, 0, 0, 1), reason: enabling.ReasonSecWrongTyp, secType: KREL},
		{name: "relocation table", prog: prog("relocations"), mutate: data32(KREL, 0, 4, 1), reason: enabling.ReasonSecWrongTyp, secType: KREL},
		{name: "relocation target", prog: prog("relocations"), mutate: data32(KREL, 0, 8, 500), reason: enabling.ReasonSecIndex, secType: KREL},
		{name: "relocation entsize", prog: prog("relocations"), mutate: sec32(REL, 0, fEntSize, 16), reason: enabling.ReasonInvalidRelSec, secType: REL},
		{name: "relocation alignment", prog: prog("relocations"), mutate: sec32(REL, 0, fAlign, 4), reason: enabling.ReasonInvalidRelSec, secType: REL},
		{name: "relocation offset", prog: prog("relocations"), mutate: data64(REL, 0, 8, 8), reason: enabling.ReasonRelOffset, secType: REL},
		{name: "relocation offset huge", prog: prog("relocations"), mutate: data64(REL, 0, 8, ^uint64(0)-3), reason: enabling.ReasonRelOffset, secType: REL},
		{name: "relocation misaligned", prog: twoInts, mutate: data64(REL, 0, 8, 4), reason: enabling.ReasonRelMisaligned, secType: REL},
		{name: "relocation type", prog: prog("relocations"), mutate: data32(REL, 0, 4, 3), reason: enabling.ReasonRelType, secType: REL},
		{name: "relocation name", prog: twoInts, mutate: data32(REL, 0, 0, 3), reason: enabling.ReasonRelName, secType: REL},
		{name: "relocation of a section header", prog: twoInts,
			mutate: func(b []byte, f *dof.File) []byte {
				i := secIdx(f, INT, 0)
				putSec64(b, f, i, fOffset, secHdr(f, i))
				putSec64(b, f, i, fSize, 32)
				putData64(b, f, secIdx(f, REL, 0), 8, 0)
				return b
			}, reason: enabling.ReasonRelOffset, secType: REL},

		// Options.
		{name: "option alignment", prog: prog("exit-options"), mutate: sec32(OPT, 0, fAlign, 4), reason: enabling.ReasonOptAlign, secType: OPT},
		{name: "option entsize 0", prog: prog("exit-options"), mutate: sec32(OPT, 0, fEntSize, 0), reason: enabling.ReasonOptZeroEnt, secType: OPT},
		{name: "option entsize", prog: prog("exit-options"), mutate: sec32(OPT, 0, fEntSize, 8), reason: enabling.ReasonOptEntSize, secType: OPT},
		{name: "option partial", prog: prog("exit-options"), mutate: sec64(OPT, 0, fSize, 40), reason: enabling.ReasonCorruptEnt, secType: OPT},
		{name: "option string", prog: prog("exit-options"), mutate: data32(OPT, 0, 4, 0), reason: enabling.ReasonOptString, secType: OPT},
		{name: "option unset", prog: prog("exit-options"), mutate: data64(OPT, 0, 8, ^uint64(1)), reason: enabling.ReasonOptUnset, secType: OPT},
		{name: "option id", prog: prog("exit-options"), mutate: data32(OPT, 0, 0, 32), reason: enabling.ReasonOptRejected, secType: OPT},
		{name: "option negative", prog: prog("exit-options"), mutate: data64(OPT, 0, 8, ^uint64(4)), reason: enabling.ReasonOptRejected, secType: OPT},
		{name: "option destructive", prog: &dof.Program{Options: []dof.Option{{ID: dof.OptDestructive, Value: 1}}},
			cfg: &enabling.Config{NoDestructive: true}, reason: enabling.ReasonOptRejected, secType: OPT},

		// Actions as dtrace_ecb_create takes them.
		{name: "kind none", prog: oneAction(dof.Action{Kind: dof.ActNone}), reason: enabling.ReasonActKind, secType: AD},
		{name: "kind printt", prog: oneAction(dof.Action{Kind: dof.ActPrintt, DIFO: doftest.Const(1, 8)}), reason: enabling.ReasonActKind, secType: AD},
		{name: "kind unknown", prog: oneAction(dof.Action{Kind: 0x333}), reason: enabling.ReasonActKind, secType: AD},
		{name: "trace without DIFO", prog: oneAction(dof.Action{Kind: dof.ActDIFExpr}), reason: enabling.ReasonActNeedsDIFO, secType: AD},
		{name: "printm without DIFO", prog: oneAction(dof.Action{Kind: dof.ActPrintm}), reason: enabling.ReasonActNeedsDIFO, secType: AD},
		{name: "chill without DIFO", prog: oneAction(dof.Action{Kind: dof.ActChill}), reason: enabling.ReasonActNeedsDIFO, secType: AD},
		{name: "string by value", prog: oneAction(dof.Action{Kind: dof.ActDIFExpr, DIFO: &dof.DIFO{
			Ret: dof.DIFType{Kind: dof.TypeString}, Code: []uint32{doftest.Ret(0)}}}), reason: enabling.ReasonActStrByRef, secType: AD},
		{name: "sym of an int", prog: oneAction(dof.Action{Kind: dof.ActSym, DIFO: doftest.Const(1, 4)}), reason: enabling.ReasonAct64, secType: AD},
		{name: "uaddr by ref", prog: oneAction(dof.Action{Kind: dof.ActUAddr, DIFO: doftest.Str("x")}), reason: enabling.ReasonAct64, secType: AD},
		{name: "exit of a long", prog: oneAction(dof.Action{Kind: dof.ActExit, DIFO: doftest.Const(1, 8)}), reason: enabling.ReasonActExit, secType: AD},
		{name: "stack too deep", prog: oneAction(dof.Action{Kind: dof.ActStack, Arg: 1 << 40}), reason: enabling.ReasonActTooLarge, secType: AD},
		{name: "speculate after data", prog: oneAction(trace, spec), reason: enabling.ReasonSpecAfterData, secType: AD},
		{name: "two commits", prog: oneAction(commit, commit), reason: enabling.ReasonCommitTwice, secType: AD},
		{name: "data after commit", prog: oneAction(commit, trace), reason: enabling.ReasonAfterCommit, secType: AD},
		{name: "speculate after commit", prog: oneAction(commit, spec), reason: enabling.ReasonAfterCommit, secType: AD},
		{name: "aggregation after speculate", prog: oneAction(spec, aggID, count), reason: enabling.ReasonAggAfterSpec, secType: AD},
		{name: "aggregation kind", prog: oneAction(aggID, dof.Action{Kind: 0x70a, NTuple: 1}), reason: enabling.ReasonAggKind, secType: AD},
		{name: "lquantize step", prog: oneAction(aggID, dof.Action{Kind: dof.AggLQuantize, NTuple: 1,
			Arg: dof.LQuantizeArg(0, 0, 10), DIFO: doftest.Const(1, 8)}), reason: enabling.ReasonAggLQuantize, secType: AD},
		{name: "llquantize factor", prog: oneAction(aggID, dof.Action{Kind: dof.AggLLQuantize, NTuple: 1,
			Arg: dof.LLQuantizeArg(1, 0, 6, 20), DIFO: doftest.Const(1, 8)}), reason: enabling.ReasonAggLLQuantize, secType: AD},
		{name: "llquantize steps", prog: oneAction(aggID, dof.Action{Kind: dof.AggLLQuantize, NTuple: 1,
			Arg: dof.LLQuantizeArg(10, 0, 6, 15), DIFO: doftest.Const(1, 8)}), reason: enabling.ReasonAggLLQuantize, secType: AD},
		{name: "aggregation without tuple", prog: oneAction(aggID, dof.Action{Kind: dof.AggSum, DIFO: doftest.Const(1, 8)}),
			reason: enabling.ReasonAggNoTuple, secType: AD},
		{name: "aggregation short tuple", prog: oneAction(aggID, dof.Action{Kind: dof.AggSum, NTuple: 2, DIFO: doftest.Const(1, 8)}),
			reason: enabling.ReasonAggShortTuple, secType: AD},
		{name: "tuple across aggregations", prog: oneAction(aggID, count, dof.Action{Kind: dof.AggMax, NTuple: 1}),
			reason: enabling.ReasonAggShortTuple, secType: AD},
		{name: "ECB too large", prog: oneAction(big, big), reason: enabling.ReasonECBTooLarge, secType: AD},

		// Helper DOF.
		{name: "helper action", prog: &dof.Program{ECBs: []dof.ECB{{
			Probe:   dof.ProbeSpec{Provider: "dtrace", Module: "helper", Function: "ustack"},
			Actions: []dof.Action{{Kind: dof.ActPrintf, Format: "x", DIFO: doftest.Const(1, 4)}}}}},
			cfg: helperCfg(), reason: enabling.ReasonHelperAction, secType: AD},
		{name: "provider offset", prog: usdt, cfg: helperCfg(),
			mutate: both(sec32(PROV, 0, fAlign, 1), func(b []byte, f *dof.File) []byte {
				i := secIdx(f, PROV, 0)
				putSec64(b, f, i, fOffset, f.Sections[i].Offset+1)
				return b
			}), reason: enabling.ReasonProvOffset, secType: PROV},
		{name: "provider small", prog: usdt, cfg: helperCfg(), mutate: sec64(PROV, 0, fSize, 40), reason: enabling.ReasonProvSmall, secType: PROV},
		{name: "provider probes", prog: usdt, cfg: helperCfg(), mutate: data32(PROV, 0, 4, 0), reason: enabling.ReasonSecWrongTyp, secType: PROV},
		{name: "provider enoffs", prog: usdt, cfg: helperCfg(), mutate: data32(PROV, 0, 40, 1), reason: enabling.ReasonSecWrongTyp, secType: PROV},
		{name: "provider name", prog: usdt, cfg: helperCfg(), mutate: data32(PROV, 0, 16, 5000), reason: enabling.ReasonProvName, secType: PROV},
		{name: "probes entsize 0", prog: usdt, cfg: helperCfg(), mutate: sec32(PRB, 0, fEntSize, 0), reason: enabling.ReasonProvEntSize, secType: PRB},
		{name: "probes entsize big", prog: usdt, cfg: helperCfg(), mutate: sec32(PRB, 0, fEntSize, 200), reason: enabling.ReasonProvEntSize, secType: PRB},
		{name: "probes entsize odd", prog: usdt, cfg: helperCfg(), mutate: sec32(PRB, 0, fEntSize, 52), reason: enabling.ReasonProvEntAlign, secType: PRB},
		{name: "probes entsize small", prog: usdt, cfg: helperCfg(), mutate: sec32(PRB, 0, fEntSize, 40), reason: enabling.ReasonProvEntSize, secType: PRB},
		{name: "offsets entsize", prog: usdt, cfg: helperCfg(), mutate: sec32(PROFF, 0, fEntSize, 8), reason: enabling.ReasonProvEntSize, secType: PROFF},
		{name: "args entsize", prog: usdt, cfg: helperCfg(), mutate: sec32(PRARG, 0, fEntSize, 2), reason: enabling.ReasonProvEntSize, secType: PRARG},
		{name: "enoffs entsize", prog: usdt, cfg: helperCfg(), mutate: sec32(PREN, 0, fEntSize, 1), reason: enabling.ReasonProvEntSize, secType: PREN},
		{name: "probe function offset", prog: usdt, cfg: helperCfg(), mutate: data32(PRB, 0, 8, 5000), reason: enabling.ReasonProvFuncName, secType: PRB},
		{name: "probe name offset", prog: usdt, cfg: helperCfg(), mutate: data32(PRB, 0, 12, 5000), reason: enabling.ReasonProvProbeName, secType: PRB},
		{name: "probe offsets", prog: usdt, cfg: helperCfg(), mutate: data32(PRB, 0, 28, 5), reason: enabling.ReasonProvProbeOff, secType: PRB},
		{name: "probe is-enabled offsets", prog: usdt, cfg: helperCfg(), mutate: data32(PRB, 0, 36, 5), reason: enabling.ReasonProvEnOff, secType: PRB},
		{name: "is-enabled without section", prog: usdtNoEn, cfg: helperCfg(), mutate: data32(PRB, 0, 36, 1), reason: enabling.ReasonProvEnNull, secType: PRB},
		{name: "probe without offsets", prog: usdt, cfg: helperCfg(),
			mutate: both(data32(PRB, 0, 32+2, 0), data32(PRB, 0, 40, 0)), reason: enabling.ReasonProvZeroOffs, secType: PRB},
		{name: "probe args", prog: usdt, cfg: helperCfg(), mutate: data32(PRB, 0, dof.ProbeEntrySize+24, 1000), reason: enabling.ReasonProvArgs, secType: PRB},
		{name: "probe native types", prog: usdt, cfg: helperCfg(), mutate: data32(PRB, 0, dof.ProbeEntrySize+16, 5000), reason: enabling.ReasonProvNArgType, secType: PRB},
		{name: "probe translated types", prog: usdt, cfg: helperCfg(), mutate: data32(PRB, 0, dof.ProbeEntrySize+20, 5000), reason: enabling.ReasonProvXArgType, secType: PRB},
		{name: "probe argument index", prog: usdt, cfg: helperCfg(), mutate: data8(PRARG, 0, 1, 3), reason: enabling.ReasonProvNArgIndex, secType: PRARG},
	}
}

func TestMalformed(t *testing.T) {
	for _, c := range malformedCases() {
		t.Run(c.name, func(t *testing.T) {
			b := write(t, c.prog, c.opts)
			f, err := dof.Read(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := enabling.Load(b, c.cfg); err != nil && c.mutate != nil {
				t.Fatalf("the program is refused before it is corrupted: %v", err)
			}
			if c.mutate != nil {
				b = c.mutate(b, f)
			}
			p, err := enabling.Load(b, c.cfg)
			if err == nil {
				if c.mutate == nil {
					t.Fatalf("accepted: %+v", p)
				}
				t.Fatal("accepted")
			}
			var ke *enabling.Error
			if !errors.As(err, &ke) {
				t.Fatalf("%v is no *enabling.Error", err)
			}
			if ke.Reason != c.reason {
				t.Errorf("reason %q, want %q (%v)", ke.Reason, c.reason, err)
			}
			if c.header {
				if ke.Section != -1 {
					t.Errorf("section %d for a header fault", ke.Section)
				}
				return
			}
			if want := secIdx(f, c.secType, c.secNth); ke.Section != want {
				t.Errorf("section %d (%s), want %d (%s): %v", ke.Section, ke.Type, want, c.secType, err)
			}
			if ke.Offset >= uint64(len(b)) {
				t.Errorf("offset %#x beyond the file's %d bytes", ke.Offset, len(b))
			}
		})
	}
}
