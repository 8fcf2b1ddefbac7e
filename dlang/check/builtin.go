package check

import (
	"errors"
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/dof"
)

// builtin is one entry of D's identifier table (dt_open.c's
// _dtrace_globals): its kind, id, and the type of a variable or the
// prototype of a function, written as dtrace writes them and resolved on
// first use.
type builtin struct {
	name  string
	kind  IdentKind
	id    uint32
	proto string
	cook  cookKind
	flags IdentFlags
}

var builtins = []builtin{
	{name: "alloca", kind: Func, id: dif.SubrAlloca, proto: "void *(size_t)"},
	{name: "args", kind: Array, id: dif.VarArgs, cook: cookArgs},
	{name: "avg", kind: AggFunc, id: uint32(dof.AggAvg), proto: "void(@)"},
	{name: "basename", kind: Func, id: dif.SubrBasename, proto: "string(const char *)"},
	{name: "bcopy", kind: Func, id: dif.SubrBcopy, proto: "void(void *, void *, size_t)"},
	{name: "breakpoint", kind: ActFunc, id: dof.DActBreakpoint, proto: "void()", flags: FlagDestruct},
	{name: "caller", kind: Scalar, id: dif.VarCaller, proto: "uintptr_t"},
	{name: "chill", kind: ActFunc, id: dof.DActChill, proto: "void(int)", flags: FlagDestruct},
	{name: "cleanpath", kind: Func, id: dif.SubrCleanpath, proto: "string(const char *)"},
	{name: "clear", kind: ActFunc, id: dof.DActClear, proto: "void(...)"},
	{name: "commit", kind: ActFunc, id: dof.DActCommit, proto: "void(int)"},
	{name: "copyin", kind: Func, id: dif.SubrCopyin, proto: "void *(uintptr_t, size_t)"},
	{name: "copyinstr", kind: Func, id: dif.SubrCopyinstr, proto: "string(uintptr_t, [size_t])"},
	{name: "copyinto", kind: Func, id: dif.SubrCopyinto, proto: "void(uintptr_t, size_t, void *)"},
	{name: "copyout", kind: Func, id: dif.SubrCopyout, proto: "void(void *, uintptr_t, size_t)", flags: FlagDestruct},
	{name: "copyoutstr", kind: Func, id: dif.SubrCopyoutstr, proto: "void(char *, uintptr_t, size_t)", flags: FlagDestruct},
	{name: "count", kind: AggFunc, id: uint32(dof.AggCount), proto: "void()"},
	{name: "cpu", kind: Scalar, id: dif.VarCPU, proto: "int"},
	{name: "curthread", kind: Scalar, id: dif.VarCurthread, proto: "@curthread"},
	{name: "d_path", kind: Func, id: dif.SubrDPath, proto: "string(struct path *)"},
	{name: "d_path_dentry", kind: Func, id: dif.SubrDPathDentry, proto: "string(struct dentry *)"},
	{name: "ddi_pathname", kind: Func, id: dif.SubrDDIPathname, proto: "string(void *, int64_t)"},
	{name: "denormalize", kind: ActFunc, id: dof.DActDenormalize, proto: "void(...)"},
	{name: "dirname", kind: Func, id: dif.SubrDirname, proto: "string(const char *)"},
	{name: "discard", kind: ActFunc, id: dof.DActDiscard, proto: "void(int)"},
	{name: "epid", kind: Scalar, id: dif.VarEPID, proto: "uint_t"},
	{name: "errno", kind: Scalar, id: dif.VarErrno, proto: "int"},
	{name: "execargs", kind: Scalar, id: dif.VarExecargs, proto: "string"},
	{name: "execname", kind: Scalar, id: dif.VarExecname, proto: "string"},
	{name: "exit", kind: ActFunc, id: dof.DActExit, proto: "void(int)"},
	{name: "freopen", kind: ActFunc, id: dof.DActFreopen, proto: "void(@, ...)", flags: FlagDestruct},
	{name: "ftruncate", kind: ActFunc, id: dof.DActFtruncate, proto: "void()"},
	{name: "func", kind: ActFunc, id: dof.DActSym, proto: "_symaddr(uintptr_t)"},
	{name: "getmajor", kind: Func, id: dif.SubrGetmajor, proto: "@major"},
	{name: "getminor", kind: Func, id: dif.SubrGetminor, proto: "@minor"},
	{name: "htonl", kind: Func, id: dif.SubrHtonl, proto: "uint32_t(uint32_t)"},
	{name: "htonll", kind: Func, id: dif.SubrHtonll, proto: "uint64_t(uint64_t)"},
	{name: "htons", kind: Func, id: dif.SubrHtons, proto: "uint16_t(uint16_t)"},
	{name: "gid", kind: Scalar, id: dif.VarGID, proto: "gid_t"},
	{name: "id", kind: Scalar, id: dif.VarID, proto: "uint_t"},
	{name: "index", kind: Func, id: dif.SubrIndex, proto: "int(const char *, const char *, [int])"},
	{name: "inet_ntoa", kind: Func, id: dif.SubrInetNtoa, proto: "string(in_addr_t *)"},
	{name: "inet_ntoa6", kind: Func, id: dif.SubrInetNtoa6, proto: "string(struct in6_addr *)"},
	{name: "inet_ntop", kind: Func, id: dif.SubrInetNtop, proto: "string(int, void *)"},
	{name: "ipl", kind: Scalar, id: dif.VarIPL, proto: "uint_t"},
	{name: "json", kind: Func, id: dif.SubrJSON, proto: "string(const char *, const char *)"},
	{name: "jstack", kind: ActFunc, id: dof.DActJstack, proto: "stack(...)"},
	{name: "lltostr", kind: Func, id: dif.SubrLltostr, proto: "string(int64_t, [int])"},
	{name: "llquantize", kind: AggFunc, id: uint32(dof.AggLLQuantize), proto: "void(@, int32_t, int32_t, int32_t, int32_t, ...)"},
	{name: "locals", kind: Ptr, proto: "void"},
	{name: "lquantize", kind: AggFunc, id: uint32(dof.AggLQuantize), proto: "void(@, int32_t, int32_t, ...)"},
	{name: "max", kind: AggFunc, id: uint32(dof.AggMax), proto: "void(@)"},
	{name: "memref", kind: Func, id: dif.SubrMemref, proto: "uintptr_t *(void *, size_t)"},
	{name: "memstr", kind: Func, id: dif.SubrMemstr, proto: "string(void *, char, size_t)"},
	{name: "min", kind: AggFunc, id: uint32(dof.AggMin), proto: "void(@)"},
	{name: "mod", kind: ActFunc, id: dof.DActMod, proto: "_symaddr(uintptr_t)"},
	{name: "mutex_owned", kind: Func, id: dif.SubrMutexOwned, proto: "int(@mutex *)"},
	{name: "mutex_owner", kind: Func, id: dif.SubrMutexOwner, proto: "@thread *(@mutex *)"},
	{name: "mutex_type_adaptive", kind: Func, id: dif.SubrMutexTypeAdaptive, proto: "int(@mutex *)"},
	{name: "mutex_type_spin", kind: Func, id: dif.SubrMutexTypeSpin, proto: "int(@mutex *)"},
	{name: "ntohl", kind: Func, id: dif.SubrNtohl, proto: "uint32_t(uint32_t)"},
	{name: "ntohll", kind: Func, id: dif.SubrNtohll, proto: "uint64_t(uint64_t)"},
	{name: "ntohs", kind: Func, id: dif.SubrNtohs, proto: "uint16_t(uint16_t)"},
	{name: "normalize", kind: ActFunc, id: dof.DActNormalize, proto: "void(...)"},
	{name: "panic", kind: ActFunc, id: dof.DActPanic, proto: "void()", flags: FlagDestruct},
	{name: "pid", kind: Scalar, id: dif.VarPID, proto: "pid_t"},
	{name: "ppid", kind: Scalar, id: dif.VarPPID, proto: "pid_t"},
	{name: "print", kind: ActFunc, id: dof.DActPrint, proto: "void(@)"},
	{name: "printa", kind: ActFunc, id: dof.DActPrinta, proto: "void(@, ...)"},
	{name: "printf", kind: ActFunc, id: dof.DActPrintf, proto: "void(@, ...)"},
	{name: "printm", kind: ActFunc, id: dof.DActPrintm, proto: "void(size_t, uintptr_t *)"},
	{name: "probefunc", kind: Scalar, id: dif.VarProbefunc, proto: "string"},
	{name: "probemod", kind: Scalar, id: dif.VarProbemod, proto: "string"},
	{name: "probename", kind: Scalar, id: dif.VarProbename, proto: "string"},
	{name: "probeprov", kind: Scalar, id: dif.VarProbeprov, proto: "string"},
	{name: "progenyof", kind: Func, id: dif.SubrProgenyof, proto: "int(pid_t)"},
	{name: "quantize", kind: AggFunc, id: uint32(dof.AggQuantize), proto: "void(@, ...)"},
	{name: "raise", kind: ActFunc, id: dof.DActRaise, proto: "void(int)", flags: FlagDestruct},
	{name: "rand", kind: Func, id: dif.SubrRand, proto: "int()"},
	{name: "regs", kind: Array, id: dif.VarRegs, cook: cookRegs},
	{name: "rindex", kind: Func, id: dif.SubrRindex, proto: "int(const char *, const char *, [int])"},
	{name: "rw_iswriter", kind: Func, id: dif.SubrRWIsWriter, proto: "int(@rwlock *)"},
	{name: "rw_read_held", kind: Func, id: dif.SubrRWReadHeld, proto: "int(@rwlock *)"},
	{name: "rw_write_held", kind: Func, id: dif.SubrRWWriteHeld, proto: "int(@rwlock *)"},
	{name: "self", kind: Ptr, proto: "void"},
	{name: "setopt", kind: ActFunc, id: dof.DActSetopt, proto: "void(const char *, [const char *])"},
	{name: "speculate", kind: ActFunc, id: dof.DActSpeculate, proto: "void(int)"},
	{name: "speculation", kind: Func, id: dif.SubrSpeculation, proto: "int()"},
	{name: "stack", kind: ActFunc, id: dof.DActStack, proto: "stack(...)"},
	{name: "stackdepth", kind: Scalar, id: dif.VarStackdepth, proto: "uint32_t"},
	{name: "stddev", kind: AggFunc, id: uint32(dof.AggStddev), proto: "void(@)"},
	{name: "stop", kind: ActFunc, id: dof.DActStop, proto: "void()", flags: FlagDestruct},
	{name: "strchr", kind: Func, id: dif.SubrStrchr, proto: "string(const char *, char)"},
	{name: "strlen", kind: Func, id: dif.SubrStrlen, proto: "size_t(const char *)"},
	{name: "strjoin", kind: Func, id: dif.SubrStrjoin, proto: "string(const char *, const char *)"},
	{name: "strrchr", kind: Func, id: dif.SubrStrrchr, proto: "string(const char *, char)"},
	{name: "strstr", kind: Func, id: dif.SubrStrstr, proto: "string(const char *, const char *)"},
	{name: "strtok", kind: Func, id: dif.SubrStrtok, proto: "string(const char *, const char *)"},
	{name: "strtoll", kind: Func, id: dif.SubrStrtoll, proto: "int64_t(const char *, [int])"},
	{name: "substr", kind: Func, id: dif.SubrSubstr, proto: "string(const char *, int, [int])"},
	{name: "sum", kind: AggFunc, id: uint32(dof.AggSum), proto: "void(@)"},
	{name: "sym", kind: ActFunc, id: dof.DActSym, proto: "_symaddr(uintptr_t)"},
	{name: "system", kind: ActFunc, id: dof.DActSystem, proto: "void(@, ...)", flags: FlagDestruct},
	{name: "this", kind: Ptr, proto: "void"},
	{name: "tid", kind: Scalar, id: dif.VarTID, proto: "id_t"},
	{name: "timestamp", kind: Scalar, id: dif.VarTimestamp, proto: "uint64_t"},
	{name: "tolower", kind: Func, id: dif.SubrTolower, proto: "string(const char *)"},
	{name: "toupper", kind: Func, id: dif.SubrToupper, proto: "string(const char *)"},
	{name: "trace", kind: ActFunc, id: dof.DActTrace, proto: "void(@)"},
	{name: "tracemem", kind: ActFunc, id: dof.DActTracemem, proto: "void(@, size_t, ...)"},
	{name: "trunc", kind: ActFunc, id: dof.DActTrunc, proto: "void(...)"},
	{name: "uaddr", kind: ActFunc, id: dof.DActUaddr, proto: "_usymaddr(uintptr_t)"},
	{name: "ucaller", kind: Scalar, id: dif.VarUcaller, proto: "uint64_t"},
	{name: "ufunc", kind: ActFunc, id: dof.DActUsym, proto: "_usymaddr(uintptr_t)"},
	{name: "uid", kind: Scalar, id: dif.VarUID, proto: "uid_t"},
	{name: "umod", kind: ActFunc, id: dof.DActUmod, proto: "_usymaddr(uintptr_t)"},
	{name: "uregs", kind: Array, id: dif.VarUregs, cook: cookRegs},
	{name: "ustack", kind: ActFunc, id: dof.DActUstack, proto: "stack(...)"},
	{name: "ustackdepth", kind: Scalar, id: dif.VarUstackdepth, proto: "uint32_t"},
	{name: "usym", kind: ActFunc, id: dof.DActUsym, proto: "_usymaddr(uintptr_t)"},
	{name: "vtimestamp", kind: Scalar, id: dif.VarVtimestamp, proto: "uint64_t"},
	{name: "walltimestamp", kind: Scalar, id: dif.VarWalltimestamp, proto: "int64_t"},
	{name: "zonename", kind: Scalar, id: dif.VarZonename, proto: "string"},
}

// versions are the D versions that introduced builtins after 1.0, as
// dt_open.c's table records them; "#pragma D option version" hides the
// newer ones (dt_reduce).
var versions = [...]struct{ name, since string }{
	{"freopen", "1.1"}, {"index", "1.1"}, {"memref", "1.1"}, {"rindex", "1.1"}, {"strchr", "1.1"},
	{"strrchr", "1.1"}, {"strstr", "1.1"}, {"strtok", "1.1"}, {"substr", "1.1"},
	{"func", "1.2"}, {"mod", "1.2"}, {"setopt", "1.2"}, {"sym", "1.2"}, {"uaddr", "1.2"}, {"ucaller", "1.2"},
	{"ufunc", "1.2"}, {"umod", "1.2"}, {"usym", "1.2"}, {"ustackdepth", "1.2"},
	{"htonl", "1.3"}, {"htonll", "1.3"}, {"htons", "1.3"}, {"ntohl", "1.3"}, {"ntohll", "1.3"}, {"ntohs", "1.3"},
	{"inet_ntoa", "1.5"}, {"inet_ntoa6", "1.5"}, {"inet_ntop", "1.5"},
	{"stddev", "1.6"}, {"cpu", "1.6.3"}, {"llquantize", "1.7"}, {"tolower", "1.8"}, {"toupper", "1.8"},
	{"print", "1.9"}, {"getf", "1.10"}, {"json", "1.11"}, {"strtoll", "1.11"}, {"jailname", "1.13"}, {"jid", "1.13"},
}

// SetVersion applies "#pragma D option version=v": builtins newer than
// D version v are no longer defined, so that scripts written for v may
// use their names.
func (c *Checker) SetVersion(v string) error {
	want, ok := parseVersion(v)
	if !ok {
		return errBadVersion
	}
	for _, v := range versions {
		name, since := v.name, v.since
		if id := c.globals.lookup(name); id != nil && id.Builtin {
			if n, _ := parseVersion(since); n > want {
				delete(c.globals.idents, name)
			}
		}
	}
	return nil
}

var errBadVersion = errors.New("Invalid value for specified option")

// parseVersion reads major.minor[.micro] as dtrace's DT_VERSION_NUMBER.
func parseVersion(v string) (uint32, bool) {
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	var n [3]uint32
	for i, p := range parts {
		x, err := strconv.ParseUint(p, 10, 12)
		if err != nil {
			return 0, false
		}
		n[i] = uint32(x)
	}
	if n[0] > 0xff {
		return 0, false
	}
	return n[0]<<24 | n[1]<<12 | n[2], true
}

// freebsdOnly and linuxOnly are the builtins of one kernel.
var freebsdOnly = []builtin{
	{name: "jailname", kind: Scalar, id: dif.VarJailname, proto: "string"},
	{name: "jid", kind: Scalar, id: dif.VarJID, proto: "int"},
	{name: "sx_isexclusive", kind: Func, id: dif.SubrSxIsExclusive, proto: "int(@sx *)"},
	{name: "sx_shared_held", kind: Func, id: dif.SubrSxSharedHeld, proto: "int(@sx *)"},
	{name: "sx_exclusive_held", kind: Func, id: dif.SubrSxExclusiveHeld, proto: "int(@sx *)"},
}

// kernelNames returns the kernel types some builtins are declared with,
// on kernel os: dtrace writes them with the kernel module's name.
func kernelNames(os string) []kernelName {
	switch os {
	case "linux":
		return linuxNames[:]
	case "freebsd":
		return freebsdNames[:]
	}
	return nil
}

// A kernelName is a name builtins' prototypes use and the type it
// stands for.
type kernelName struct{ name, typ string }

var (
	linuxNames = [...]kernelName{
		{"@curthread", "struct task_struct *"}, {"@thread", "struct task_struct"},
		{"@mutex", "struct mutex"}, {"@rwlock", "struct rw_semaphore"},
		{"@major", "uint32_t(uint32_t)"}, {"@minor", "uint32_t(uint32_t)"},
	}
	freebsdNames = [...]kernelName{
		{"@curthread", "struct thread *"}, {"@thread", "struct thread"},
		{"@mutex", "struct mtx"}, {"@rwlock", "struct rwlock"}, {"@sx", "struct sx"},
		{"@major", "uint32_t(uint32_t)"}, {"@minor", "uint32_t(uint32_t)"},
	}
)

// declareBuiltins fills the global namespace with D's identifiers.
func (c *Checker) declareBuiltins() {
	// One allocation for all, in a map made for them.
	ids := make([]Ident, 0, len(builtins)+10+len(freebsdOnly))
	c.globals.idents = make(map[string]*Ident, cap(ids))
	add := func(b builtin) {
		ids = append(ids, Ident{Name: b.name, Kind: b.kind, ID: b.id, Flags: b.flags, Builtin: true, cook: b.cook, proto: b.proto})
		c.globals.insert(&ids[len(ids)-1])
	}
	for _, b := range builtins {
		add(b)
	}
	for i := range 10 {
		add(builtin{name: "arg" + string(rune('0'+i)), kind: Scalar, id: dif.VarArg0 + uint32(i), proto: "int64_t"})
	}
	if c.os() == "freebsd" {
		for _, b := range freebsdOnly {
			add(b)
		}
	}
}

// kernelProto returns a builtin's prototype with the kernel's type
// names in place of dtrace's @ names (kernelNames), when first used:
// most programs use few builtins.
func (c *Checker) kernelProto(proto string) string {
	if strings.IndexByte(proto, '@') >= 0 {
		for _, n := range kernelNames(c.os()) {
			proto = strings.ReplaceAll(proto, n.name, n.typ)
		}
	}
	return proto
}

func (c *Checker) os() string {
	if c.cfg.OS == "" {
		return "linux"
	}
	return c.cfg.OS
}

// Proto is a function prototype from D's identifier table.
type Proto struct {
	Result   types.Type
	Params   []types.Type // nil entries accept any type (@ and ...)
	Varargs  int          // the index of ..., or -1
	Optional int          // the index of the first [optional] parameter, or -1
}

// builtinType resolves a builtin variable's type on first use.
func (c *Checker) builtinType(pos token.Pos, id *Ident) types.Type {
	if id.Type == nil && id.proto != "" {
		proto := c.kernelProto(id.proto)
		t, err := c.parseType(proto)
		if err != nil {
			c.errorf(pos, diag.D_UNKNOWN, "failed to resolve type %s for identifier %s: %s\n", proto, id.Name, lookupReason(err))
		}
		id.Type = t
	}
	return id.Type
}

// funcProto parses a function's prototype on first use.
func (c *Checker) funcProto(pos token.Pos, id *Ident) *Proto {
	if id.Proto != nil {
		return id.Proto
	}
	s := c.kernelProto(id.proto)
	lp, rp := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if lp < 0 || rp < lp {
		c.errorf(pos, diag.D_UNKNOWN, "internal error: malformed entry for built-in function %s\n", id.Name)
	}
	ret := strings.TrimSpace(s[:lp])
	rt, err := c.parseType(ret)
	if err != nil {
		c.errorf(pos, diag.D_UNKNOWN, "failed to resolve type of %s (%s): %s\n", id.Name, ret, lookupReason(err))
	}
	p := &Proto{Result: rt, Varargs: -1, Optional: -1}
	params := s[lp+1 : rp]
	if strings.TrimSpace(params) != "" {
		for i, a := range strings.Split(params, ",") {
			a = strings.TrimSpace(a)
			switch {
			case a == "@":
				p.Params = append(p.Params, nil)
			case a == "...":
				p.Varargs = i
				p.Params = append(p.Params, nil)
			default:
				if strings.HasPrefix(a, "[") && strings.HasSuffix(a, "]") {
					if p.Optional < 0 {
						p.Optional = i
					}
					a = a[1 : len(a)-1]
				}
				t, err := c.parseType(a)
				if err != nil {
					c.errorf(pos, diag.D_UNKNOWN, "failed to resolve type of %s arg#%d (%s): %s\n", id.Name, i+1, a, lookupReason(err))
				}
				p.Params = append(p.Params, t)
			}
		}
	}
	id.Proto = p
	if id.Kind == AggFunc {
		id.Type = types.Dyn
	} else {
		id.Type = rt
	}
	return p
}

// parseType resolves a type written in a builtin's prototype: an
// optionally const, optionally module-scoped name and stars.
func (c *Checker) parseType(s string) (types.Type, error) {
	s = strings.TrimSpace(s)
	stars := 0
	for strings.HasSuffix(s, "*") {
		stars++
		s = strings.TrimSpace(s[:len(s)-1])
	}
	var q types.Qual
	if rest, ok := strings.CutPrefix(s, "const "); ok {
		q, s = types.Const, rest
	}
	var t types.Type
	if s == "void" {
		t = types.Void{}
	} else {
		var err error
		if t, err = c.lookup(s); err != nil {
			return nil, err
		}
	}
	if q != 0 {
		t = &types.Qualified{Qual: q, Type: t}
	}
	for range stars {
		t = &types.Pointer{Elem: t}
	}
	return t, nil
}
