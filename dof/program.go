package dof

// Program is a D program as DOF carries it: what the compiler emits and
// Write lays out, and what File.Program reads back. Strings are Go
// strings; section indices and string table offsets are the writer's
// business.
type Program struct {
	ECBs    []ECB
	Options []Option
	// Providers are the USDT providers a program defines (dtrace -G and
	// -h). They go to the kernel in helper DOF only.
	Providers []Provider
	// Translators are the translators the program imports (for xlate
	// instructions) or its providers export. File.Program lists them in
	// file order: imports, then exports.
	Translators []Translator
}

// ECB is an enabling control block: a probe description, an optional
// predicate and the actions taken when the probe fires and the
// predicate holds.
type ECB struct {
	Probe   ProbeSpec
	Pred    *DIFO // nil: no predicate
	Actions []Action
	UArg    uint64 // ECBDefault, or ECBError for libdtrace's ERROR clause
}

// ProbeSpec is a probe description: provider:module:function:name,
// where an empty field matches anything and a field may be a glob.
type ProbeSpec struct {
	ID       uint32 // probe identifier, or 0
	Provider string
	Module   string
	Function string
	Name     string
}

// String returns the description as dtrace prints it.
func (p ProbeSpec) String() string {
	return p.Provider + ":" + p.Module + ":" + p.Function + ":" + p.Name
}

// Action is one action of an ECB.
type Action struct {
	Kind ActKind
	// NTuple is, for an aggregating action, the number of actions
	// before it that make its tuple: the aggregation's identifier and
	// its keys.
	NTuple uint32
	// Arg is the kind's argument: lquantize's and llquantize's
	// parameters, ustack's frames, a LIBACT's DT_ACT_* and so on. It is
	// zero when Format is set.
	Arg uint64
	// Format is the string the action refers to: the format of printf,
	// printa, system and freopen, or the type print() prints for
	// DIFEXPR. Empty means none; the kernel refuses empty formats.
	Format string
	UArg   uint64 // the library's argument
	DIFO   *DIFO  // nil: the action has no expression
}

// DIFO is a DIF object as DOF carries it: a DIFOHDR section and the
// sections it links. Package dif gives the instructions their meaning;
// here they are the 32-bit words of the DIF section.
type DIFO struct {
	Ret    DIFType  // the type of the result
	Code   []uint32 // DIF instructions
	Ints   []uint64 // integer table (setx)
	Strs   []byte   // string table (sets, variable names, relocation names)
	Vars   []DIFVar // variable table
	XlRefs []XlRef  // translator members used by xlate and xlarg
	// KRelo and URelo are relocations of kernel and user symbols. Their
	// offsets are byte offsets in Ints (index·8) and their names are
	// offsets in Strs.
	KRelo []RelDesc
	URelo []RelDesc
}

// Option is an option setting carried in an OPTDESC section.
type Option struct {
	ID    OptID
	Value int64
}

// Provider is a USDT provider and its probes.
type Provider struct {
	Name string
	Attr ProviderAttr
	// Probes are the provider's probes, one entry per function a probe
	// appears in.
	Probes []Probe
	// Exports are indices in Program.Translators of the translators the
	// provider exports (PREXPORT).
	Exports []int
}

// ProviderAttr holds the stability attributes of a provider's parts.
type ProviderAttr struct {
	Provider, Mod, Func, Name, Args Attr
}

// Probe is a USDT probe in one function.
type Probe struct {
	Func string
	Name string
	// RelName is the symbol the probe's address is relocated against;
	// empty means Func.
	RelName string
	Addr    uint64
	NArgs   []string // native argument types
	XArgs   []string // translated argument types
	// ArgMap gives, for each translated argument, the native argument
	// it is computed from.
	ArgMap []uint8
	Offs   []uint32 // probe offsets from Addr
	EnOffs []uint32 // is-enabled offsets from Addr (DOF version 2)
}

// Translator is a translator a program imports or exports.
type Translator struct {
	Export  bool
	Members []XlMember
	Args    []string // input types
	Type    string   // output type
	Attr    Attr
}

// XlMember is a translator member.
type XlMember struct {
	Name string
	Type DIFType
	DIFO *DIFO // the member's expression; nil when imported
}

// Options control how Write lays out a file and how Read checks one.
// The zero value writes what FreeBSD's dtrace sends a 64-bit kernel.
type Options struct {
	Model      Model // ModelLP64 when zero
	Version    uint8 // Version when zero
	DIFVersion uint8 // DIFVersion when zero
	DIFIntRegs uint8 // DIFIntRegs when zero
	DIFTupRegs uint8 // DIFTupRegs when zero
	// FuncNameLen is the kernel's DTRACE_FUNCNAMELEN: FuncNameLen when
	// zero, FuncNameLenOld for FreeBSD 13 and earlier. Function names
	// must be shorter.
	FuncNameLen int
	// Comments, if not empty, is written in a non-loadable COMMENTS
	// section, as dtrace writes its version unless told to strip.
	Comments string
	// UTSName, if not empty, is written in a non-loadable UTSNAME
	// section (struct utsname).
	UTSName []byte
	// Saved, if not nil, is written in kdtrace's non-loadable
	// SectSaved section: what a saved program (kdtrace -A) records.
	Saved *Saved
}

func (o *Options) funcNameLen() int {
	if o == nil || o.FuncNameLen == 0 {
		return FuncNameLen
	}
	return o.FuncNameLen
}
