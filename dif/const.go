package dif

// Version and machine parameters of DIF as FreeBSD's kernel reports them
// through DTRACEIOC_CONF.
const (
	Version     = 2 // DIF_VERSION
	NRegs       = 8 // DIF_DIR_NREGS: integer registers %r0 … %r7
	NTupleRegs  = 8 // DIF_DTR_NREGS: depth of the tuple stack
	MaxIntIndex = 0xffff
	MaxStrOff   = 0xffff
	MaxRegister = 0xff
	MaxVariable = 0xffff
	MaxSubrCode = 0xffff
	MaxLabel    = 0xffffff // a branch target is 24 bits
)

// Variable identifier ranges (DIF_VAR_*_MIN/UBASE/MAX). Arrays read with
// ldga/ldta have 8-bit ids; everything else has 16-bit ids. Ids below the
// UBASE values are dtrace's built-in variables.
const (
	VarArrayMin   = 0x0000
	VarArrayUBase = 0x0080
	VarArrayMax   = 0x00ff
	VarOtherMin   = 0x0100
	VarOtherUBase = 0x0500
	VarOtherMax   = 0xffff
)

// Built-in variable identifiers (DIF_VAR_*).
const (
	VarArgs          = 0x0000
	VarRegs          = 0x0001
	VarUregs         = 0x0002
	VarCurthread     = 0x0100
	VarTimestamp     = 0x0101
	VarVtimestamp    = 0x0102
	VarIPL           = 0x0103
	VarEPID          = 0x0104
	VarID            = 0x0105
	VarArg0          = 0x0106
	VarArg9          = 0x010f
	VarStackdepth    = 0x0110
	VarCaller        = 0x0111
	VarProbeprov     = 0x0112
	VarProbemod      = 0x0113
	VarProbefunc     = 0x0114
	VarProbename     = 0x0115
	VarPID           = 0x0116
	VarTID           = 0x0117
	VarExecname      = 0x0118
	VarZonename      = 0x0119
	VarWalltimestamp = 0x011a
	VarUstackdepth   = 0x011b
	VarUcaller       = 0x011c
	VarPPID          = 0x011d
	VarUID           = 0x011e
	VarGID           = 0x011f
	VarErrno         = 0x0120
	VarExecargs      = 0x0121
	VarJID           = 0x0122 // FreeBSD only
	VarJailname      = 0x0123 // FreeBSD only
	VarCPU           = 0x0200 // FreeBSD only
)

// Subroutine codes for call (DIF_SUBR_*), FreeBSD's numbering.
const (
	SubrRand              = 0
	SubrMutexOwned        = 1
	SubrMutexOwner        = 2
	SubrMutexTypeAdaptive = 3
	SubrMutexTypeSpin     = 4
	SubrRWReadHeld        = 5
	SubrRWWriteHeld       = 6
	SubrRWIsWriter        = 7
	SubrCopyin            = 8
	SubrCopyinstr         = 9
	SubrSpeculation       = 10
	SubrProgenyof         = 11
	SubrStrlen            = 12
	SubrCopyout           = 13
	SubrCopyoutstr        = 14
	SubrAlloca            = 15
	SubrBcopy             = 16
	SubrCopyinto          = 17
	SubrMsgdsize          = 18
	SubrMsgsize           = 19
	SubrGetmajor          = 20
	SubrGetminor          = 21
	SubrDDIPathname       = 22
	SubrStrjoin           = 23
	SubrLltostr           = 24
	SubrBasename          = 25
	SubrDirname           = 26
	SubrCleanpath         = 27
	SubrStrchr            = 28
	SubrStrrchr           = 29
	SubrStrstr            = 30
	SubrStrtok            = 31
	SubrSubstr            = 32
	SubrIndex             = 33
	SubrRindex            = 34
	SubrHtons             = 35
	SubrHtonl             = 36
	SubrHtonll            = 37
	SubrNtohs             = 38
	SubrNtohl             = 39
	SubrNtohll            = 40
	SubrInetNtop          = 41
	SubrInetNtoa          = 42
	SubrInetNtoa6         = 43
	SubrToupper           = 44
	SubrTolower           = 45
	SubrMemref            = 46
	SubrTyperef           = 47
	SubrSxSharedHeld      = 48
	SubrSxExclusiveHeld   = 49
	SubrSxIsExclusive     = 50
	SubrMemstr            = 51
	SubrGetf              = 52
	SubrJSON              = 53
	SubrStrtoll           = 54

	// SubrMax is the highest subroutine code (DIF_SUBR_MAX).
	SubrMax = 54

	// SubrDPath is d_path(struct path *), the path of a Linux file
	// as Oracle's DTrace for Linux gives it, which its procfs.d's cwd
	// and root use. Oracle numbers it 44, FreeBSD's toupper: its code
	// here is kdtrace's own, past DTrace's numbering, and only the
	// Linux backend runs it.
	SubrDPath = 0x8000

	// SubrDPathDentry is d_path_dentry(struct dentry *), kdtrace's
	// own: d_path of a dentry in the first mount of its file system,
	// for a file known by no struct path, as the files whose pages
	// the io provider's fileinfo_t names.
	SubrDPathDentry = 0x8001
)

var subrNames = [SubrMax + 1]string{
	"rand", "mutex_owned", "mutex_owner", "mutex_type_adaptive",
	"mutex_type_spin", "rw_read_held", "rw_write_held", "rw_iswriter",
	"copyin", "copyinstr", "speculation", "progenyof", "strlen", "copyout",
	"copyoutstr", "alloca", "bcopy", "copyinto", "msgdsize", "msgsize",
	"getmajor", "getminor", "ddi_pathname", "strjoin", "lltostr",
	"basename", "dirname", "cleanpath", "strchr", "strrchr", "strstr",
	"strtok", "substr", "index", "rindex", "htons", "htonl", "htonll",
	"ntohs", "ntohl", "ntohll", "inet_ntop", "inet_ntoa", "inet_ntoa6",
	"toupper", "tolower", "memref", "typeref", "sx_shared_held",
	"sx_exclusive_held", "sx_isexclusive", "memstr", "getf", "json",
	"strtoll",
}

// SubrName returns the name dtrace_subrstr gives a subroutine code: the
// lower-case DIF_SUBR_ suffix, or "unknown".
func SubrName(subr uint16) string {
	switch subr {
	case SubrDPath:
		return "d_path"
	case SubrDPathDentry:
		return "d_path_dentry"
	}
	if int(subr) < len(subrNames) {
		return subrNames[subr]
	}
	return "unknown"
}

// Type kinds (dtdt_kind).
const (
	TypeCTF    = 0 // DIF_TYPE_CTF: a C type, described by CtfKind and Size
	TypeString = 1 // DIF_TYPE_STRING: a D string
)

// Type flags (dtdt_flags).
const (
	TFByRef  = 0x1 // DIF_TF_BYREF: passed by reference
	TFByURef = 0x2 // DIF_TF_BYUREF: user memory passed by reference
)

// CTF kinds as dtdt_ckind records them (CTF_K_*).
const (
	CTFUnknown  = 0
	CTFInteger  = 1
	CTFFloat    = 2
	CTFPointer  = 3
	CTFArray    = 4
	CTFFunction = 5
	CTFStruct   = 6
	CTFUnion    = 7
	CTFEnum     = 8
	CTFForward  = 9
	CTFTypedef  = 10
	CTFVolatile = 11
	CTFConst    = 12
	CTFRestrict = 13
)

// Variable kinds (dtdv_kind).
const (
	KindArray  = 0 // DIFV_KIND_ARRAY
	KindScalar = 1 // DIFV_KIND_SCALAR
)

// Variable scopes (dtdv_scope).
const (
	ScopeGlobal = 0 // DIFV_SCOPE_GLOBAL
	ScopeThread = 1 // DIFV_SCOPE_THREAD: self->
	ScopeLocal  = 2 // DIFV_SCOPE_LOCAL: this->
)

// Variable flags (dtdv_flags).
const (
	FlagRef = 0x1 // DIFV_F_REF: the DIFO reads the variable
	FlagMod = 0x2 // DIFV_F_MOD: the DIFO writes the variable
)

// Relocation types (dofr_type).
const (
	RelocNone   = 0 // DOF_RELO_NONE
	RelocSetx   = 1 // DOF_RELO_SETX: add the load base to an integer-table entry
	RelocDOFRel = 2 // DOF_RELO_DOFREL: relative to the DOF's own address
)

// Sizes of the records DOF carries for a DIFO, in bytes.
const (
	InstrSize = 4  // dif_instr_t
	IntSize   = 8  // an integer-table entry
	TypeSize  = 8  // dtrace_diftype_t
	VarSize   = 20 // dtrace_difv_t
	RelocSize = 24 // dof_relodesc_t
	XlrefSize = 12 // dof_xlref_t
)
