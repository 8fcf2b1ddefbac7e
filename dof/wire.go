package dof

import "encoding/binary"

// The structures below are dtrace.h's, field for field, in the order
// and with the sizes they have in a file. All fields are fixed-size, so
// ILP32 and LP64 files lay them out alike. Each has an Append method
// that encodes it little-endian and a Decode function that reads one
// from the start of a byte slice holding at least its size; the caller
// checks bounds.

// Sizes of the structures in a file.
const (
	HeaderSize         = 64 // dof_hdr_t
	SecHeaderSize      = 32 // dof_sec_t
	ECBDescSize        = 24 // dof_ecbdesc_t
	ProbeDescSize      = 24 // dof_probedesc_t
	ActDescSize        = 32 // dof_actdesc_t
	DIFTypeSize        = 8  // dtrace_diftype_t
	DIFOHdrSize        = 12 // dof_difohdr_t with its one declared link
	DIFVarSize         = 20 // dtrace_difv_t
	RelHdrSize         = 12 // dof_relohdr_t
	RelDescSize        = 24 // dof_relodesc_t
	OptDescSize        = 16 // dof_optdesc_t
	ProviderDescSize   = 44 // dof_provider_t
	ProviderDescV1Size = 40 // dof_provider_t of DOF version 1, without dofpv_prenoffs
	ProbeEntrySize     = 48 // dof_probe_t
	XlatorDescSize     = 24 // dof_xlator_t
	XlMemberDescSize   = 16 // dof_xlmember_t
	XlRefSize          = 12 // dof_xlref_t
	InstrSize          = 4  // dif_instr_t
)

var le = binary.LittleEndian

// Header is dof_hdr_t, the file header.
type Header struct {
	Magic    [4]byte // 7F 'D' 'O' 'F'
	Model    Model
	Encoding Encoding
	Version  uint8   // DOF format version
	DIFVers  uint8   // DIF instruction set version
	DIFIReg  uint8   // DIF integer registers the compiler used
	DIFTReg  uint8   // DIF tuple registers the compiler used
	IdentPad [6]byte // zero
	Flags    uint32
	HdrSize  uint32 // size of this header
	SecSize  uint32 // size of a section header
	SecNum   uint32 // number of section headers
	SecOff   uint64 // file offset of the section headers
	LoadSz   uint64 // size of the loadable part of the file
	FileSz   uint64 // size of the whole file
	Pad      uint64
}

// Append appends the encoded header to b.
func (h *Header) Append(b []byte) []byte {
	b = append(b, h.Magic[:]...)
	b = append(b, byte(h.Model), byte(h.Encoding), h.Version, h.DIFVers, h.DIFIReg, h.DIFTReg)
	b = append(b, h.IdentPad[:]...)
	b = le.AppendUint32(b, h.Flags)
	b = le.AppendUint32(b, h.HdrSize)
	b = le.AppendUint32(b, h.SecSize)
	b = le.AppendUint32(b, h.SecNum)
	b = le.AppendUint64(b, h.SecOff)
	b = le.AppendUint64(b, h.LoadSz)
	b = le.AppendUint64(b, h.FileSz)
	return le.AppendUint64(b, h.Pad)
}

// DecodeHeader decodes the header at the start of b, which holds at
// least HeaderSize bytes.
func DecodeHeader(b []byte) Header {
	b = b[:HeaderSize]
	var h Header
	copy(h.Magic[:], b[0:4])
	h.Model, h.Encoding = Model(b[4]), Encoding(b[5])
	h.Version, h.DIFVers, h.DIFIReg, h.DIFTReg = b[6], b[7], b[8], b[9]
	copy(h.IdentPad[:], b[10:16])
	h.Flags = le.Uint32(b[16:])
	h.HdrSize = le.Uint32(b[20:])
	h.SecSize = le.Uint32(b[24:])
	h.SecNum = le.Uint32(b[28:])
	h.SecOff = le.Uint64(b[32:])
	h.LoadSz = le.Uint64(b[40:])
	h.FileSz = le.Uint64(b[48:])
	h.Pad = le.Uint64(b[56:])
	return h
}

// Sec is dof_sec_t, a section header.
type Sec struct {
	Type    SectType
	Align   uint32 // alignment of the data in memory
	Flags   uint32 // SecFlagLoad
	EntSize uint32 // size of an entry, for tables
	Offset  uint64 // file offset of the data
	Size    uint64 // size of the data
}

// Append appends the encoded section header to b.
func (s *Sec) Append(b []byte) []byte {
	b = le.AppendUint32(b, uint32(s.Type))
	b = le.AppendUint32(b, s.Align)
	b = le.AppendUint32(b, s.Flags)
	b = le.AppendUint32(b, s.EntSize)
	b = le.AppendUint64(b, s.Offset)
	return le.AppendUint64(b, s.Size)
}

// DecodeSec decodes a section header.
func DecodeSec(b []byte) Sec {
	b = b[:SecHeaderSize]
	return Sec{
		Type:    SectType(le.Uint32(b)),
		Align:   le.Uint32(b[4:]),
		Flags:   le.Uint32(b[8:]),
		EntSize: le.Uint32(b[12:]),
		Offset:  le.Uint64(b[16:]),
		Size:    le.Uint64(b[24:]),
	}
}

// Loaded reports whether the section carries SecFlagLoad.
func (s *Sec) Loaded() bool { return s.Flags&SecFlagLoad != 0 }

// ECBDesc is dof_ecbdesc_t: an enabling control block, a probe
// description with an optional predicate and actions.
type ECBDesc struct {
	Probes  uint32 // index of the PROBEDESC section
	Pred    uint32 // index of the predicate's DIFOHDR section, or SecIdxNone
	Actions uint32 // index of the ACTDESC section, or SecIdxNone
	Pad     uint32
	UArg    uint64 // the library's argument
}

// Append appends the encoded ECB description to b.
func (e *ECBDesc) Append(b []byte) []byte {
	b = le.AppendUint32(b, e.Probes)
	b = le.AppendUint32(b, e.Pred)
	b = le.AppendUint32(b, e.Actions)
	b = le.AppendUint32(b, e.Pad)
	return le.AppendUint64(b, e.UArg)
}

// DecodeECBDesc decodes an ECB description.
func DecodeECBDesc(b []byte) ECBDesc {
	b = b[:ECBDescSize]
	return ECBDesc{le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:]), le.Uint32(b[12:]), le.Uint64(b[16:])}
}

// ProbeDesc is dof_probedesc_t: a probe description whose strings are
// offsets in a string table.
type ProbeDesc struct {
	StrTab   uint32 // index of the STRTAB section
	Provider uint32
	Mod      uint32
	Func     uint32
	Name     uint32
	ID       uint32 // probe identifier, or 0
}

// Append appends the encoded probe description to b.
func (p *ProbeDesc) Append(b []byte) []byte {
	for _, v := range [...]uint32{p.StrTab, p.Provider, p.Mod, p.Func, p.Name, p.ID} {
		b = le.AppendUint32(b, v)
	}
	return b
}

// DecodeProbeDesc decodes a probe description.
func DecodeProbeDesc(b []byte) ProbeDesc {
	b = b[:ProbeDescSize]
	return ProbeDesc{le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:]), le.Uint32(b[12:]), le.Uint32(b[16:]), le.Uint32(b[20:])}
}

// ActDesc is dof_actdesc_t, one action.
type ActDesc struct {
	DIFO   uint32 // index of the DIFOHDR section, or SecIdxNone
	StrTab uint32 // index of the STRTAB holding Arg's string, or SecIdxNone
	Kind   ActKind
	NTuple uint32 // for aggregations: the number of tuple actions before this one
	Arg    uint64 // kind-specific; a string table offset when StrTab is set
	UArg   uint64 // the library's argument
}

// Append appends the encoded action description to b.
func (a *ActDesc) Append(b []byte) []byte {
	b = le.AppendUint32(b, a.DIFO)
	b = le.AppendUint32(b, a.StrTab)
	b = le.AppendUint32(b, uint32(a.Kind))
	b = le.AppendUint32(b, a.NTuple)
	b = le.AppendUint64(b, a.Arg)
	return le.AppendUint64(b, a.UArg)
}

// DecodeActDesc decodes an action description.
func DecodeActDesc(b []byte) ActDesc {
	b = b[:ActDescSize]
	return ActDesc{le.Uint32(b), le.Uint32(b[4:]), ActKind(le.Uint32(b[8:])), le.Uint32(b[12:]), le.Uint64(b[16:]), le.Uint64(b[24:])}
}

// DIFType is dtrace_diftype_t, the type of a DIFO's result, of a
// variable or of a translator member.
type DIFType struct {
	Kind  uint8 // TypeCTF or TypeString
	CKind uint8 // the CTF kind
	Flags uint8 // TypeByRef, TypeByURef
	Pad   uint8
	Size  uint32 // size in bytes
}

// Append appends the encoded type to b.
func (t DIFType) Append(b []byte) []byte {
	b = append(b, t.Kind, t.CKind, t.Flags, t.Pad)
	return le.AppendUint32(b, t.Size)
}

// DecodeDIFType decodes a type.
func DecodeDIFType(b []byte) DIFType {
	b = b[:DIFTypeSize]
	return DIFType{b[0], b[1], b[2], b[3], le.Uint32(b[4:])}
}

// DIFVar is dtrace_difv_t, an entry of a DIFO's variable table.
type DIFVar struct {
	Name  uint32 // offset of the name in the DIFO's string table
	ID    uint32
	Kind  uint8 // VarKindArray or VarKindScalar
	Scope uint8 // VarScopeGlobal, VarScopeThread or VarScopeLocal
	Flags uint16
	Type  DIFType
}

// Append appends the encoded variable to b.
func (v *DIFVar) Append(b []byte) []byte {
	b = le.AppendUint32(b, v.Name)
	b = le.AppendUint32(b, v.ID)
	b = append(b, v.Kind, v.Scope)
	b = le.AppendUint16(b, v.Flags)
	return v.Type.Append(b)
}

// DecodeDIFVar decodes a variable table entry.
func DecodeDIFVar(b []byte) DIFVar {
	b = b[:DIFVarSize]
	return DIFVar{le.Uint32(b), le.Uint32(b[4:]), b[8], b[9], le.Uint16(b[10:]), DecodeDIFType(b[12:])}
}

// RelHdr is dof_relohdr_t, the header of a URELHDR or KRELHDR section.
type RelHdr struct {
	StrTab uint32 // STRTAB holding the symbol names
	RelSec uint32 // RELTAB holding the relocations
	TgtSec uint32 // the section they patch
}

// Append appends the encoded relocation header to b.
func (r *RelHdr) Append(b []byte) []byte {
	b = le.AppendUint32(b, r.StrTab)
	b = le.AppendUint32(b, r.RelSec)
	return le.AppendUint32(b, r.TgtSec)
}

// DecodeRelHdr decodes a relocation header.
func DecodeRelHdr(b []byte) RelHdr {
	b = b[:RelHdrSize]
	return RelHdr{le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:])}
}

// RelDesc is dof_relodesc_t, one relocation.
type RelDesc struct {
	Name   uint32 // offset of the symbol's name in the string table
	Type   RelType
	Offset uint64 // byte offset in the target section
	Data   uint64
}

// Append appends the encoded relocation to b.
func (r *RelDesc) Append(b []byte) []byte {
	b = le.AppendUint32(b, r.Name)
	b = le.AppendUint32(b, uint32(r.Type))
	b = le.AppendUint64(b, r.Offset)
	return le.AppendUint64(b, r.Data)
}

// DecodeRelDesc decodes a relocation.
func DecodeRelDesc(b []byte) RelDesc {
	b = b[:RelDescSize]
	return RelDesc{le.Uint32(b), RelType(le.Uint32(b[4:])), le.Uint64(b[8:]), le.Uint64(b[16:])}
}

// OptDesc is dof_optdesc_t, one option setting.
type OptDesc struct {
	Option OptID
	StrTab uint32 // SecIdxNone: no kernel option takes a string
	Value  uint64
}

// Append appends the encoded option to b.
func (o *OptDesc) Append(b []byte) []byte {
	b = le.AppendUint32(b, uint32(o.Option))
	b = le.AppendUint32(b, o.StrTab)
	return le.AppendUint64(b, o.Value)
}

// DecodeOptDesc decodes an option.
func DecodeOptDesc(b []byte) OptDesc {
	b = b[:OptDescSize]
	return OptDesc{OptID(le.Uint32(b)), le.Uint32(b[4:]), le.Uint64(b[8:])}
}

// ProviderDesc is dof_provider_t, a USDT provider.
type ProviderDesc struct {
	StrTab   uint32 // STRTAB
	Probes   uint32 // PROBES
	PrArgs   uint32 // PRARGS
	PrOffs   uint32 // PROFFS
	Name     uint32 // offset of the provider's name
	ProvAttr uint32
	ModAttr  uint32
	FuncAttr uint32
	NameAttr uint32
	ArgsAttr uint32
	// PrEnOffs is the PRENOFFS section (DOF version 2), or 0 when there
	// is none: dtrace and the kernel both use DOF_SECT_NONE here, not
	// SecIdxNone.
	PrEnOffs uint32
}

func (p *ProviderDesc) fields() [11]uint32 {
	return [...]uint32{p.StrTab, p.Probes, p.PrArgs, p.PrOffs, p.Name,
		p.ProvAttr, p.ModAttr, p.FuncAttr, p.NameAttr, p.ArgsAttr, p.PrEnOffs}
}

// Append appends the encoded provider to b.
func (p *ProviderDesc) Append(b []byte) []byte {
	for _, v := range p.fields() {
		b = le.AppendUint32(b, v)
	}
	return b
}

// DecodeProviderDesc decodes a provider. With fewer than
// ProviderDescSize bytes (DOF version 1), PrEnOffs is 0.
func DecodeProviderDesc(b []byte) ProviderDesc {
	b = b[:min(len(b), ProviderDescSize)]
	var v [11]uint32
	for i := range v {
		if 4*i+4 <= len(b) {
			v[i] = le.Uint32(b[4*i:])
		}
	}
	return ProviderDesc{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]}
}

// ProbeEntry is dof_probe_t, one probe of a USDT provider in one
// function.
type ProbeEntry struct {
	Addr     uint64 // base address or offset of the function
	Func     uint32 // function name
	Name     uint32 // probe name
	NArgv    uint32 // native argument type strings, back to back
	XArgv    uint32 // translated argument type strings, back to back
	ArgIdx   uint32 // index of the first argument mapping in PRARGS
	OffIdx   uint32 // index of the first offset in PROFFS
	NArgc    uint8
	XArgc    uint8
	NOffs    uint16
	EnOffIdx uint32 // index of the first is-enabled offset in PRENOFFS
	NEnOffs  uint16
	Pad1     uint16
	Pad2     uint32
}

// Append appends the encoded probe to b.
func (p *ProbeEntry) Append(b []byte) []byte {
	b = le.AppendUint64(b, p.Addr)
	for _, v := range [...]uint32{p.Func, p.Name, p.NArgv, p.XArgv, p.ArgIdx, p.OffIdx} {
		b = le.AppendUint32(b, v)
	}
	b = append(b, p.NArgc, p.XArgc)
	b = le.AppendUint16(b, p.NOffs)
	b = le.AppendUint32(b, p.EnOffIdx)
	b = le.AppendUint16(b, p.NEnOffs)
	b = le.AppendUint16(b, p.Pad1)
	return le.AppendUint32(b, p.Pad2)
}

// DecodeProbeEntry decodes a USDT probe.
func DecodeProbeEntry(b []byte) ProbeEntry {
	b = b[:ProbeEntrySize]
	return ProbeEntry{
		Addr: le.Uint64(b), Func: le.Uint32(b[8:]), Name: le.Uint32(b[12:]),
		NArgv: le.Uint32(b[16:]), XArgv: le.Uint32(b[20:]), ArgIdx: le.Uint32(b[24:]),
		OffIdx: le.Uint32(b[28:]), NArgc: b[32], XArgc: b[33], NOffs: le.Uint16(b[34:]),
		EnOffIdx: le.Uint32(b[36:]), NEnOffs: le.Uint16(b[40:]), Pad1: le.Uint16(b[42:]),
		Pad2: le.Uint32(b[44:]),
	}
}

// XlatorDesc is dof_xlator_t, a translator imported or exported by the
// program.
type XlatorDesc struct {
	Members uint32 // XLMEMBERS
	StrTab  uint32 // STRTAB
	Argv    uint32 // input type strings
	Argc    uint32
	Type    uint32 // output type
	Attr    uint32 // output stability attributes
}

// Append appends the encoded translator to b.
func (x *XlatorDesc) Append(b []byte) []byte {
	for _, v := range [...]uint32{x.Members, x.StrTab, x.Argv, x.Argc, x.Type, x.Attr} {
		b = le.AppendUint32(b, v)
	}
	return b
}

// DecodeXlatorDesc decodes a translator.
func DecodeXlatorDesc(b []byte) XlatorDesc {
	b = b[:XlatorDescSize]
	return XlatorDesc{le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:]), le.Uint32(b[12:]), le.Uint32(b[16:]), le.Uint32(b[20:])}
}

// XlMemberDesc is dof_xlmember_t, a member of a translator.
type XlMemberDesc struct {
	DIFO uint32 // DIFOHDR computing the member, or SecIdxNone when imported
	Name uint32
	Type DIFType
}

// Append appends the encoded member to b.
func (m *XlMemberDesc) Append(b []byte) []byte {
	b = le.AppendUint32(b, m.DIFO)
	b = le.AppendUint32(b, m.Name)
	return m.Type.Append(b)
}

// DecodeXlMemberDesc decodes a translator member.
func DecodeXlMemberDesc(b []byte) XlMemberDesc {
	b = b[:XlMemberDescSize]
	return XlMemberDesc{le.Uint32(b), le.Uint32(b[4:]), DecodeDIFType(b[8:])}
}

// XlRef is dof_xlref_t, a DIFO's reference to a translator member, used
// by its xlate and xlarg instructions. In a file Xlator is the index of
// an XLIMPORT section; in a Program's DIFO it is an index into
// Program.Translators.
type XlRef struct {
	Xlator uint32
	Member uint32 // index of the member in the translator's members
	Argn   uint32 // argument index for xlarg
}

// Append appends the encoded reference to b.
func (x *XlRef) Append(b []byte) []byte {
	b = le.AppendUint32(b, x.Xlator)
	b = le.AppendUint32(b, x.Member)
	return le.AppendUint32(b, x.Argn)
}

// DecodeXlRef decodes a translator reference.
func DecodeXlRef(b []byte) XlRef {
	b = b[:XlRefSize]
	return XlRef{le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:])}
}
