package dof

import "fmt"

// Identification bytes of the header.
const (
	Mag0 = 0x7f
	Mag1 = 'D'
	Mag2 = 'O'
	Mag3 = 'F'
)

// Model is the data model of the instrumented code (the header's
// MODEL byte).
type Model uint8

// Data models.
const (
	ModelNone  Model = 0
	ModelILP32 Model = 1
	ModelLP64  Model = 2
)

// Encoding is the byte order of the file (the header's ENCODING byte).
// kdtrace writes and reads little-endian DOF only, as amd64 and arm64
// kernels expect.
type Encoding uint8

// Encodings.
const (
	EncodeNone Encoding = 0
	EncodeLSB  Encoding = 1
	EncodeMSB  Encoding = 2
)

// DOF file format versions. Version 2 added the is-enabled probe offsets
// of USDT providers (dof_provider_t.dofpv_prenoffs).
const (
	Version1 = 1
	Version2 = 2
	Version  = Version2
)

// DIF instruction set version and register counts, as the kernel
// reports them in dtrace_conf_t.
const (
	DIFVersion1 = 1
	DIFVersion2 = 2
	DIFVersion  = DIFVersion2
	DIFIntRegs  = 8 // DIF_DIR_NREGS
	DIFTupRegs  = 8 // DIF_DTR_NREGS
)

// FlagsValid is the mask of the header flag bits that may be set
// (DOF_FL_VALID): none.
const FlagsValid = 0

// Lengths of the strings in a kernel probe description
// (dtrace_probedesc_t), including the terminating NUL.
const (
	ProvNameLen = 64
	ModNameLen  = 64
	// FuncNameLen is DTRACE_FUNCNAMELEN of FreeBSD 14 and later.
	FuncNameLen = 192
	// FuncNameLenOld is DTRACE_FUNCNAMELEN of FreeBSD 13 and earlier,
	// and of illumos.
	FuncNameLenOld = 128
	NameLen        = 64
	ArgTypeLen     = 128
)

// SecIdxNone is the null section index (DOF_SECIDX_NONE).
const SecIdxNone = 0xffffffff

// StrIdxNone is the null string table index (DOF_STRIDX_NONE).
const StrIdxNone = 0xffffffff

// SecFlagLoad marks a section that is loaded into the kernel
// (DOF_SECF_LOAD).
const SecFlagLoad = 1

// SectType is the type of a section (DOF_SECT_*).
type SectType uint32

// Section types.
const (
	SectNone      SectType = 0  // null section
	SectComments  SectType = 1  // compiler comments
	SectSource    SectType = 2  // D program source code
	SectECBDesc   SectType = 3  // dof_ecbdesc_t
	SectProbeDesc SectType = 4  // dof_probedesc_t
	SectActDesc   SectType = 5  // dof_actdesc_t array
	SectDIFOHdr   SectType = 6  // dof_difohdr_t (variable length)
	SectDIF       SectType = 7  // uint32_t array of DIF instructions
	SectStrTab    SectType = 8  // string table
	SectVarTab    SectType = 9  // dtrace_difv_t array
	SectRelTab    SectType = 10 // dof_relodesc_t array
	SectTypTab    SectType = 11 // dtrace_diftype_t array
	SectURelHdr   SectType = 12 // dof_relohdr_t (user relocations)
	SectKRelHdr   SectType = 13 // dof_relohdr_t (kernel relocations)
	SectOptDesc   SectType = 14 // dof_optdesc_t array
	SectProvider  SectType = 15 // dof_provider_t
	SectProbes    SectType = 16 // dof_probe_t array
	SectPrArgs    SectType = 17 // uint8_t array (probe argument mappings)
	SectPrOffs    SectType = 18 // uint32_t array (probe offsets)
	SectIntTab    SectType = 19 // uint64_t array
	SectUTSName   SectType = 20 // struct utsname
	SectXLTab     SectType = 21 // dof_xlref_t array
	SectXLMembers SectType = 22 // dof_xlmember_t array
	SectXLImport  SectType = 23 // dof_xlator_t
	SectXLExport  SectType = 24 // dof_xlator_t
	SectPrExport  SectType = 25 // dof_secidx_t array (exported objects)
	SectPrEnOffs  SectType = 26 // uint32_t array (is-enabled offsets)
)

var sectNames = [...]string{
	"NONE", "COMMENTS", "SOURCE", "ECBDESC", "PROBEDESC", "ACTDESC",
	"DIFOHDR", "DIF", "STRTAB", "VARTAB", "RELTAB", "TYPTAB", "URELHDR",
	"KRELHDR", "OPTDESC", "PROVIDER", "PROBES", "PRARGS", "PROFFS",
	"INTTAB", "UTSNAME", "XLTAB", "XLMEMBERS", "XLIMPORT", "XLEXPORT",
	"PREXPORT", "PRENOFFS",
}

// String returns the name dtrace.h gives the type, without DOF_SECT_.
func (t SectType) String() string {
	if int(t) < len(sectNames) {
		return sectNames[t]
	}
	return fmt.Sprintf("SECT(%d)", uint32(t))
}

// Loadable reports whether sections of this type must carry
// SecFlagLoad (DOF_SEC_ISLOADABLE): every type but NONE, COMMENTS,
// SOURCE and UTSNAME, and no type unknown to dtrace.h.
func (t SectType) Loadable() bool {
	switch t {
	case SectNone, SectComments, SectSource, SectUTSName:
		return false
	}
	return t <= SectPrEnOffs
}

// RelType is the type of a relocation (DOF_RELO_*).
type RelType uint32

// Relocation types. SETX adds the load address of the object holding
// the DOF; DOFREL adds the address of the relocated data itself.
const (
	RelNone   RelType = 0
	RelSetX   RelType = 1
	RelDOFRel RelType = 2
)

// DIF type kinds (dtrace_diftype_t.dtdt_kind).
const (
	TypeCTF    = 0
	TypeString = 1
)

// DIF type flags (dtrace_diftype_t.dtdt_flags).
const (
	TypeByRef  = 0x1 // passed by reference
	TypeByURef = 0x2 // user type passed by reference
)

// Variable kinds, scopes and flags (dtrace_difv_t).
const (
	VarKindArray  = 0
	VarKindScalar = 1

	VarScopeGlobal = 0
	VarScopeThread = 1
	VarScopeLocal  = 2

	VarFlagRef = 0x1 // read by the DIFO
	VarFlagMod = 0x2 // written by the DIFO
)

// ECB user arguments written by libdtrace (dted_uarg).
const (
	ECBDefault = 0 // DT_ECB_DEFAULT
	ECBError   = 1 // DT_ECB_ERROR: the clause of the ERROR probe libdtrace adds
)
