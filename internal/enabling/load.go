package enabling

import (
	"bytes"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
)

// Config holds the kernel's tunables that bear on loading DOF. The zero
// value is FreeBSD's defaults for an enabling (DTRACEIOC_ENABLE).
type Config struct {
	// FuncNameLen is DTRACE_FUNCNAMELEN: dof.FuncNameLen (192, FreeBSD
	// 14 and later) when zero, dof.FuncNameLenOld (128) for older
	// kernels.
	FuncNameLen int
	// MaxLoadSize is dtrace_dof_maxsize, 8 MiB when zero.
	MaxLoadSize uint64
	// MaxDIFOSize is dtrace_difo_maxsize, 256 KiB when zero.
	MaxDIFOSize uint64
	// MaxActions is dtrace_actions_max, 16384 when zero.
	MaxActions uint64
	// StrSize is dtrace_strsize_default, the size given to string
	// variables whose size is 0, 256 when zero.
	StrSize uint32
	// Helper loads helper DOF (DTRACEHIOC_ADDDOF) instead of an
	// enabling: USDT providers are allowed and validated, ECBs are
	// helper actions, and options are ignored.
	Helper bool
	// NoDestructive is dtrace_destructive_disallow: the destructive
	// option is rejected.
	NoDestructive bool
	// KernelOnlyDIF holds DIF to the kernel's checks alone, leaving out
	// the stricter ones of package dif (dif.Limits.KernelOnly).
	KernelOnlyDIF bool
}

// Defaults of the kernel's tunables.
const (
	defaultMaxLoadSize = 8 << 20
	defaultMaxDIFOSize = 256 << 10
	defaultMaxActions  = 16 << 10
	DefaultStrSize     = 256
)

func (c *Config) norm() Config {
	var n Config
	if c != nil {
		n = *c
	}
	if n.FuncNameLen == 0 {
		n.FuncNameLen = dof.FuncNameLen
	}
	if n.MaxLoadSize == 0 {
		n.MaxLoadSize = defaultMaxLoadSize
	}
	if n.MaxDIFOSize == 0 {
		n.MaxDIFOSize = defaultMaxDIFOSize
	}
	if n.MaxActions == 0 {
		n.MaxActions = defaultMaxActions
	}
	if n.StrSize == 0 {
		n.StrSize = DefaultStrSize
	}
	return n
}

// Program is a program as the kernel holds it once it has taken the
// DOF: ECB descriptions ready to be matched against probes, options,
// and for helper DOF the USDT providers.
type Program struct {
	Model   dof.Model
	Version uint8 // DOF version
	ECBs    []ECB
	// Options are the settings of the file's OPTDESC sections, in file
	// order; a later setting of an option overrides an earlier one.
	Options []dof.Option
	// Providers are the USDT providers of helper DOF.
	Providers []dof.Provider
	// Destructive is set when an action may harm a process or the
	// kernel, which the kernel allows only with the destructive option.
	Destructive bool
	// Warnings are what the kernel reports without refusing the file:
	// USDT probes skipped for a function name too long, helper ECBs
	// that are not helpers.
	Warnings []string
}

// ECB is an ECB description: what to do when a probe matching Probe
// fires.
type ECB struct {
	Probe   dof.ProbeSpec
	Pred    *dif.Object
	Actions []Action
	UArg    uint64
}

// Action is an action description.
type Action struct {
	Kind   dof.ActKind
	NTuple uint32
	// Arg is the action's argument; for printa without a format the
	// kernel makes it 0, and it is 0 when Format is set.
	Arg    uint64
	Format string // printf-like format, or print()'s type
	UArg   uint64
	DIFO   *dif.Object
}

// Load parses DOF and checks it as FreeBSD's kernel does before it
// takes an enabling (dtrace_dof_copyin, dtrace_dof_slurp and its
// helpers, dtrace_dof_options and the checks dtrace_ecb_create makes of
// actions) or, with cfg.Helper, helper DOF (dtrace_helper_slurp). It
// refuses anything malformed with an *Error giving the section, the
// file offset and the reason. cfg may be nil.
func Load(b []byte, cfg *Config) (*Program, error) {
	l := &loader{cfg: cfg.norm(), difos: make(map[uint32]*dif.Object)}
	l.dv = dif.NewValidator(l.limits(false))
	if err := l.load(b); err != nil {
		return nil, err
	}
	return &l.prog, nil
}

type loader struct {
	cfg   Config
	b     []byte // the loadable part of the file
	h     dof.Header
	secs  []dof.Sec
	difos map[uint32]*dif.Object
	// dv checks DIF as the consumer state's DIFOs are loaded, keeping
	// their variables, as the kernel's dtrace_vstate_t does.
	dv *dif.Validator
	// where records, for each DIFO, the sections it was read from.
	where map[*dif.Object]*difoSecs
	// rels maps a relocated section to the relocations that target it.
	rels map[uint32][]relocs
	prog Program
	// acts records where each ECB's actions are, for errors.
	acts [][]actPos
}

type relocs struct {
	kernel bool
	rels   []dof.RelDesc
	sec    int      // the RELTAB
	at     []uint64 // file offset of each relocation
}

type actPos struct {
	sec int
	off uint64
}

func (l *loader) hdrErr(off uint64, reason string) error {
	return &Error{Section: -1, Offset: off, Reason: reason}
}

// secOff is the file offset of section i's header.
func (l *loader) secOff(i int) uint64 {
	return l.h.SecOff + uint64(i)*uint64(l.h.SecSize)
}

// Offsets of the fields of a section header.
const (
	fType    = 0
	fAlign   = 4
	fFlags   = 8
	fEntSize = 12
	fOffset  = 16
	fSize    = 24
)

// secErr reports a fault in section i's header, at field f.
func (l *loader) secErr(i int, f uint64, reason string) error {
	return &Error{Section: i, Type: l.secs[i].Type, Offset: l.secOff(i) + f, Reason: reason}
}

// dataErr reports a fault at file offset off of section i's data.
func (l *loader) dataErr(i int, off uint64, reason string) error {
	return &Error{Section: i, Type: l.secs[i].Type, Offset: off, Reason: reason}
}

func (l *loader) load(b []byte) error {
	if len(b) < dof.HeaderSize {
		return l.hdrErr(0, ReasonTruncatedHeader)
	}
	l.h = dof.DecodeHeader(b)
	h := &l.h
	switch {
	case h.LoadSz >= l.cfg.MaxLoadSize:
		return l.hdrErr(40, ReasonLoadSizeMax)
	case h.LoadSz < dof.HeaderSize:
		return l.hdrErr(40, ReasonLoadSize)
	case h.LoadSz > uint64(len(b)):
		return l.hdrErr(40, ReasonTruncatedDOF)
	}
	l.b = b[:h.LoadSz:h.LoadSz]
	if err := l.header(); err != nil {
		return err
	}
	l.prog.Model, l.prog.Version = h.Model, h.Version
	if err := l.sections(); err != nil {
		return err
	}
	if err := l.relocations(); err != nil {
		return err
	}
	for i := range l.secs {
		if l.secs[i].Type == dof.SectECBDesc {
			if err := l.ecb(i); err != nil {
				return err
			}
		}
	}
	if l.cfg.Helper {
		// dtrace_helper_slurp takes no options.
		return l.helper()
	}
	if err := l.options(); err != nil {
		return err
	}
	for i := range l.prog.ECBs {
		if err := l.enable(i); err != nil {
			return err
		}
	}
	return nil
}

// header checks the file header as dtrace_dof_slurp does.
func (l *loader) header() error {
	h := &l.h
	switch {
	case h.Magic != [4]byte{dof.Mag0, dof.Mag1, dof.Mag2, dof.Mag3}:
		return l.hdrErr(0, ReasonMagic)
	case h.Model != dof.ModelILP32 && h.Model != dof.ModelLP64:
		return l.hdrErr(4, ReasonModel)
	case h.Encoding != dof.EncodeLSB:
		return l.hdrErr(5, ReasonEncoding)
	case h.Version != dof.Version1 && h.Version != dof.Version2:
		return l.hdrErr(6, ReasonVersion)
	case h.DIFVers != dof.DIFVersion2:
		return l.hdrErr(7, ReasonDIFVersion)
	case h.DIFIReg > dof.DIFIntRegs:
		return l.hdrErr(8, ReasonIntRegs)
	case h.DIFTReg > dof.DIFTupRegs:
		return l.hdrErr(9, ReasonTupRegs)
	}
	for i, c := range h.IdentPad {
		if c != 0 {
			return l.hdrErr(10+uint64(i), ReasonIdent)
		}
	}
	if h.Flags&^dof.FlagsValid != 0 {
		return l.hdrErr(16, ReasonFlags)
	}
	if h.SecSize == 0 {
		return l.hdrErr(24, ReasonSecSizeZero)
	}
	n := uint64(len(l.b))
	seclen := uint64(h.SecNum) * uint64(h.SecSize)
	if h.SecOff > n || seclen > n || h.SecOff+seclen > n {
		return l.hdrErr(28, ReasonTruncatedSecs)
	}
	if h.SecOff%8 != 0 {
		return l.hdrErr(32, ReasonMisalignedSecs)
	}
	if h.SecSize%8 != 0 {
		return l.hdrErr(24, ReasonMisalignedSecSz)
	}
	// The kernel reads a whole dof_sec_t at each multiple of secsize:
	// a smaller secsize would have it read past the table.
	if h.SecSize < dof.SecHeaderSize {
		return l.hdrErr(24, ReasonSecSizeSmall)
	}
	return nil
}

// sections decodes the section headers and makes dtrace_dof_slurp's
// first pass over them.
func (l *loader) sections() error {
	l.secs = make([]dof.Sec, l.h.SecNum)
	n := uint64(len(l.b))
	for i := range l.secs {
		s := dof.DecodeSec(l.b[l.secOff(i):])
		l.secs[i] = s
		if !l.cfg.Helper {
			switch s.Type {
			case dof.SectProvider, dof.SectProbes, dof.SectPrArgs, dof.SectPrOffs:
				return l.secErr(i, fType, ReasonIllegalSections)
			}
		}
		if s.Type.Loadable() && !s.Loaded() {
			return l.secErr(i, fFlags, ReasonLoadFlag)
		}
		if !s.Loaded() {
			continue
		}
		if s.Align&(s.Align-1) != 0 {
			return l.secErr(i, fAlign, ReasonSecAlign)
		}
		if s.Offset&uint64(s.Align-1) != 0 {
			return l.secErr(i, fOffset, ReasonMisalignedSec)
		}
		if s.Offset > n || s.Size > n || s.Offset+s.Size > n {
			return l.secErr(i, fSize, ReasonCorruptSec)
		}
		// An empty string table has no terminator; the kernel would
		// read the byte before it.
		if s.Type == dof.SectStrTab && (s.Size == 0 || l.b[s.Offset+s.Size-1] != 0) {
			return l.secErr(i, fSize, ReasonStrTab)
		}
	}
	return nil
}

// data returns the data of a section that passed the first pass.
func (l *loader) data(i int) []byte {
	s := &l.secs[i]
	return l.b[s.Offset : s.Offset+s.Size : s.Offset+s.Size]
}

// sect resolves a reference to section idx of type t (any type if t is
// dof.SectNone) made by the field at file offset off of section from,
// as dtrace_dof_sect does.
func (l *loader) sect(from int, off uint64, t dof.SectType, idx uint32) (int, error) {
	if uint64(idx) >= uint64(len(l.secs)) {
		return 0, l.dataErr(from, off, ReasonSecIndex)
	}
	s := &l.secs[idx]
	if !s.Loaded() {
		return 0, l.dataErr(from, off, ReasonSecNotLoad)
	}
	if t != dof.SectNone && t != s.Type {
		return 0, l.dataErr(from, off, ReasonSecWrongTyp)
	}
	return int(idx), nil
}

// str returns the string at offset off of string table sec, which has
// passed the first pass and so ends in a NUL.
func (l *loader) str(sec int, off uint32) string {
	d := l.data(sec)[off:]
	return string(d[:bytes.IndexByte(d, 0)])
}

// relocations checks every relocation header, as dtrace_dof_slurp's
// second pass does for user relocations (dtrace_dof_relocate). The
// kernel ignores kernel relocations; kdtrace checks them alike, since
// its runtime applies them. Relocations are checked, not applied: the
// runtime knows the addresses.
func (l *loader) relocations() error {
	l.rels = make(map[uint32][]relocs)
	for i := range l.secs {
		s := &l.secs[i]
		if !s.Loaded() || (s.Type != dof.SectURelHdr && s.Type != dof.SectKRelHdr) {
			continue
		}
		if err := l.relocate(i); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) relocate(i int) error {
	s := &l.secs[i]
	if s.Size < dof.RelHdrSize {
		return l.secErr(i, fSize, ReasonInvalidRelHdr)
	}
	if s.Align != 4 {
		return l.secErr(i, fAlign, ReasonInvalidRelHdr)
	}
	rh := dof.DecodeRelHdr(l.data(i))
	ss, err := l.sect(i, s.Offset, dof.SectStrTab, rh.StrTab)
	if err != nil {
		return err
	}
	rs, err := l.sect(i, s.Offset+4, dof.SectRelTab, rh.RelSec)
	if err != nil {
		return err
	}
	ts, err := l.sect(i, s.Offset+8, dof.SectNone, rh.TgtSec)
	if err != nil {
		return err
	}
	r := &l.secs[rs]
	if r.EntSize < dof.RelDescSize {
		return l.secErr(rs, fEntSize, ReasonInvalidRelSec)
	}
	if r.Align != 8 {
		return l.secErr(rs, fAlign, ReasonInvalidRelSec)
	}
	t := &l.secs[ts]
	tsHdr := l.secOff(ts)
	var list []dof.RelDesc
	var ats []uint64
	n := r.Size / uint64(r.EntSize)
	for k := uint64(0); k < n; k++ {
		at := r.Offset + k*uint64(r.EntSize)
		d := dof.DecodeRelDesc(l.b[at:])
		switch d.Type {
		case dof.RelNone:
		case dof.RelSetX, dof.RelDOFRel:
			if d.Offset >= t.Size || d.Offset+8 > t.Size {
				return l.dataErr(rs, at+8, ReasonRelOffset)
			}
			taddr := t.Offset + d.Offset
			if taddr >= tsHdr && taddr < tsHdr+dof.SecHeaderSize {
				return l.dataErr(rs, at+8, ReasonRelOffset)
			}
			if taddr%8 != 0 {
				return l.dataErr(rs, at+8, ReasonRelMisaligned)
			}
			if uint64(d.Name) >= l.secs[ss].Size {
				return l.dataErr(rs, at, ReasonRelName)
			}
		default:
			return l.dataErr(rs, at+4, ReasonRelType)
		}
		list = append(list, d)
		ats = append(ats, at)
	}
	l.rels[uint32(ts)] = append(l.rels[uint32(ts)], relocs{kernel: s.Type == dof.SectKRelHdr, rels: list, sec: rs, at: ats})
	return nil
}
