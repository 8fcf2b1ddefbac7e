package dif

import "fmt"

// Limits are the kernel parameters a DIFO is validated against. A zero
// field takes FreeBSD's default.
type Limits struct {
	NRegs      int    // integer registers: DIF_DIR_NREGS, 8
	NTupleRegs int    // depth of the tuple stack: DIF_DTR_NREGS, 8
	MaxSize    uint64 // bytes of DIF, INTTAB, STRTAB, VARTAB and XLTAB together: dtrace_difo_maxsize, 256 KiB
	MaxStatVar uint64 // size of a by-reference global or clause-local: dtrace_statvar_maxsize, 16 KiB
	StrSize    uint32 // size the kernel gives string variables of size 0: dtrace_strsize_default, 256

	// Helper also applies the restrictions on helper DIFOs (ustack
	// helpers, dtrace_difo_validate_helper).
	Helper bool
	// KernelOnly applies FreeBSD's checks alone, leaving out kdtrace's
	// stricter ones (see Validate).
	KernelOnly bool
}

// Default values of Limits, FreeBSD's.
const (
	DefaultMaxSize    = 256 * 1024
	DefaultMaxStatVar = 16 * 1024
	DefaultStrSize    = 256
)

func (l Limits) norm() Limits {
	if l.NRegs <= 0 {
		l.NRegs = NRegs
	}
	if l.NRegs > MaxRegister+1 {
		l.NRegs = MaxRegister + 1
	}
	if l.NTupleRegs <= 0 {
		l.NTupleRegs = NTupleRegs
	}
	if l.MaxSize == 0 {
		l.MaxSize = DefaultMaxSize
	}
	if l.MaxStatVar == 0 {
		l.MaxStatVar = DefaultMaxStatVar
	}
	if l.StrSize == 0 {
		l.StrSize = DefaultStrSize
	}
	return l
}

// Part names the part of a DIFO a refusal is about.
type Part string

// The parts of a DIFO.
const (
	PartObject  Part = "object"            // the DIFO as a whole
	PartCode    Part = "instruction"       // Index is the instruction's offset
	PartVar     Part = "variable"          // Index is the entry's index in Vars
	PartKRelo   Part = "kernel relocation" // Index is the entry's index in KRelo
	PartURelo   Part = "user relocation"   // Index is the entry's index in URelo
	PartStrings Part = "string table"
)

// Error is a refusal by Validate: where, and why. Reasons are worded as
// FreeBSD's kernel words them where the kernel has the check.
type Error struct {
	Part   Part
	Index  int   // offset of the instruction or index of the entry; -1 for the object
	Instr  Instr // the instruction, when Part is PartCode
	Reason string
	// Strict is set when only kdtrace's stricter checks refuse the
	// DIFO: FreeBSD's kernel would have loaded it.
	Strict bool
}

func (e *Error) Error() string {
	switch e.Part {
	case PartCode:
		return fmt.Sprintf("dif: instruction %d (%s): %s", e.Index, e.Instr, e.Reason)
	case PartObject, PartStrings:
		return fmt.Sprintf("dif: %s: %s", e.Part, e.Reason)
	}
	return fmt.Sprintf("dif: %s %d: %s", e.Part, e.Index, e.Reason)
}

// Validator validates the DIFOs of one consumer state. Like the kernel's
// dtrace_vstate_t it remembers the user variables of the DIFOs it has
// accepted, so that a later DIFO may not redefine one with another kind,
// type flags or size.
type Validator struct {
	lim     Limits
	statics map[varKey]Var // globals and clause-locals: the first definition stays
	tlocals map[varKey]Var // thread-locals: the latest definition stays
}

// NewValidator returns a Validator with no variables defined yet.
func NewValidator(lim Limits) *Validator {
	return &Validator{
		lim:     lim.norm(),
		statics: make(map[varKey]Var),
		tlocals: make(map[varKey]Var),
	}
}

// Validate checks one DIFO against fresh state; see Validator.Validate.
func Validate(o *Object, lim Limits) error {
	return NewValidator(lim).Validate(o)
}

// Validate checks a DIFO as FreeBSD's kernel does when it loads one from
// DOF, and refuses it with an *Error naming the first fault in the order
// the kernel meets them:
//
//   - the string table ends with a NUL; user relocations are of a known
//     type and fall on an aligned integer-table entry; there is no
//     translator table (the kernel loads none); the sub-sections fit in
//     MaxSize; there is code;
//   - every instruction has a known opcode, registers below NRegs, no
//     write to %r0, zero reserved fields, an integer index or string
//     offset inside its table, a variable id in range for its opcode
//     (stores only to user variables), a subroutine up to SubrMax (not
//     getf), a tuple type that fits, and branches that go forward to an
//     instruction inside the code; the first faulty instruction stops
//     the check;
//   - the last instruction is ret; a return by value has size 0, 1, 2,
//     4 or 8;
//   - every variable table entry has a known scope and kind and an id up
//     to 0xffff; a by-reference user variable is not of size 0 and, if
//     global or clause-local, not larger than MaxStatVar; a user variable
//     keeps the kind, type flags and size of earlier DIFOs;
//   - no instruction names a user variable above the highest id of its
//     scope in the variable table;
//   - with Limits.Helper, only the opcodes, variables and subroutines a
//     helper may use.
//
// Unless Limits.KernelOnly is set, a DIFO the kernel would accept is
// then held to what dtrace's own compiler always produces (Error.Strict
// is set on these refusals):
//
//   - variable table entries name strings inside the table, have known
//     type kinds and flags and known variable flags, and appear once per
//     scope and id; the return type has a known kind and flags;
//   - every variable an instruction reads or writes, built-in ones too,
//     has an entry of the opcode's scope and kind (the kernel learns of
//     vtimestamp and of cacheable predicates from this table), and no
//     thread-local or clause-local variable has a built-in id;
//   - no instruction reads a register that is not written on every path
//     to it (the kernel leaves registers other than %r0 uninitialised),
//     and no path pushes more than NTupleRegs tuple entries;
//   - kernel relocations are setx ones on an aligned integer-table entry,
//     and every relocation's name is inside the string table.
//
// On success the DIFO's user variables are remembered, as
// dtrace_difo_init does. Validate does not change the object (the kernel
// turns loads into rld* for consumers without kernel visibility; that is
// left to the loader).
func (v *Validator) Validate(o *Object) error {
	if o == nil {
		return objErr("missing DIF text")
	}
	if err := v.kernel(o); err != nil {
		return err
	}
	if !v.lim.KernelOnly {
		if err := v.strict(o); err != nil {
			err.Strict = true
			return err
		}
	}
	v.record(o)
	return nil
}

func codeErr(pc int, in Instr, format string, args ...any) *Error {
	return &Error{Part: PartCode, Index: pc, Instr: in, Reason: fmt.Sprintf(format, args...)}
}

func objErr(reason string) *Error {
	return &Error{Part: PartObject, Index: -1, Reason: reason}
}

// effType is a variable's type once the loader has given string user
// variables of size 0 the default string size.
func (v *Validator) effType(d *Var) Type {
	t := d.Type
	if d.ID >= VarOtherUBase && t.Kind == TypeString && t.Size == 0 {
		t.Size = v.lim.StrSize
	}
	return t
}

func (v *Validator) kernel(o *Object) *Error {
	lim := v.lim
	if n := len(o.Strs); n > 0 && o.Strs[n-1] != 0 {
		return &Error{Part: PartStrings, Index: -1, Reason: "non-terminating string table"}
	}
	intBytes := uint64(len(o.Ints)) * IntSize
	for i, r := range o.URelo {
		switch r.Type {
		case RelocNone:
		case RelocSetx, RelocDOFRel:
			if r.Offset >= intBytes || r.Offset+IntSize > intBytes {
				return &Error{Part: PartURelo, Index: i, Reason: "bad relocation offset"}
			}
			if r.Offset%IntSize != 0 {
				return &Error{Part: PartURelo, Index: i, Reason: "misaligned setx relo"}
			}
		default:
			return &Error{Part: PartURelo, Index: i, Reason: "invalid relocation type"}
		}
	}
	if len(o.Xlate) != 0 {
		return objErr("unrecognized DIFO subsection (translator references)")
	}
	if o.Size() > lim.MaxSize {
		return objErr("exceeds maximum size")
	}
	if len(o.Code) == 0 {
		return objErr("missing DIF text")
	}

	nregs := uint(lim.NRegs)
	for pc, in := range o.Code {
		if r := checkInstr(o, pc, in, nregs); r != "" {
			return codeErr(pc, in, "%s", r)
		}
	}
	last := len(o.Code) - 1
	if o.Code[last].Op() != RET {
		return codeErr(last, o.Code[last], "expected 'ret' as last DIF instruction")
	}
	if !o.Ret.ByRef() {
		switch o.Ret.Size {
		case 0, 1, 2, 4, 8:
		default:
			return codeErr(last, o.Code[last], "bad return size")
		}
	}

	maxid := map[uint8]int{ScopeGlobal: -1, ScopeThread: -1, ScopeLocal: -1}
	for i := range o.Vars {
		d := &o.Vars[i]
		verr := func(format string, args ...any) *Error {
			return &Error{Part: PartVar, Index: i, Reason: fmt.Sprintf(format, args...)}
		}
		if d.Scope != ScopeGlobal && d.Scope != ScopeThread && d.Scope != ScopeLocal {
			return verr("unrecognized variable scope %d", d.Scope)
		}
		if d.Kind != KindArray && d.Kind != KindScalar {
			return verr("unrecognized variable type %d", d.Kind)
		}
		if d.ID > MaxVariable {
			return verr("%d exceeds variable id limit", int32(d.ID))
		}
		if d.ID < VarOtherUBase {
			continue
		}
		if ndx := int(d.ID - VarOtherUBase); ndx > maxid[d.Scope] {
			maxid[d.Scope] = ndx
		}
		t := v.effType(d)
		if t.Flags&TFByRef != 0 {
			if t.Size == 0 {
				return verr("zero-sized variable")
			}
			if d.Scope != ScopeThread && uint64(t.Size) > lim.MaxStatVar {
				return verr("oversized by-ref static")
			}
		}
		k := varKey{d.Scope, d.ID}
		prev, ok := v.statics[k]
		if d.Scope == ScopeThread {
			prev, ok = v.tlocals[k]
		}
		if !ok {
			continue
		}
		if prev.Kind != d.Kind {
			return verr("%d changed variable kind", d.ID)
		}
		if t.Flags != prev.Type.Flags {
			return verr("%d changed variable type flags", d.ID)
		}
		if t.Size != 0 && t.Size != prev.Type.Size {
			return verr("%d changed variable type size", d.ID)
		}
	}
	for pc, in := range o.Code {
		op := in.Op()
		if op.Form() != FormLdv && op.Form() != FormStv {
			continue
		}
		scope, _ := op.Scope()
		if int(in.Var()) > VarOtherUBase+maxid[scope] {
			return codeErr(pc, in, "invalid variable %d", in.Var())
		}
	}

	if lim.Helper {
		for pc, in := range o.Code {
			if r := checkHelper(in); r != "" {
				return codeErr(pc, in, "%s", r)
			}
		}
	}
	return nil
}

// checkInstr applies dtrace_difo_validate's checks to one instruction and
// returns the first reason to refuse it.
func checkInstr(o *Object, pc int, in Instr, nregs uint) string {
	r1, r2, rd := uint(in.R1()), uint(in.R2()), uint(in.RD())
	reg := func(r uint) string {
		if r >= nregs {
			return fmt.Sprintf("invalid register %d", r)
		}
		return ""
	}
	first := func(rs ...string) string {
		for _, r := range rs {
			if r != "" {
				return r
			}
		}
		return ""
	}
	when := func(bad bool, reason string) string {
		if bad {
			return reason
		}
		return ""
	}
	const r0 = "cannot write to %r0"
	const reserved = "non-zero reserved bits"
	op := in.Op()
	switch op.Form() {
	case FormALU:
		return first(reg(r1), reg(r2), reg(rd), when(rd == 0, r0))
	case FormR1RD, FormLoad:
		return first(reg(r1), when(r2 != 0, reserved), reg(rd), when(rd == 0, r0))
	case FormStore:
		return first(reg(r1), when(r2 != 0, reserved), reg(rd), when(rd == 0, "cannot write to 0 address"))
	case FormCmp:
		return first(reg(r1), reg(r2), when(rd != 0, reserved))
	case FormTst:
		return first(reg(r1), when(r2 != 0 || rd != 0, reserved))
	case FormBranch:
		l := in.Label()
		return first(when(uint64(l) >= uint64(len(o.Code)), fmt.Sprintf("invalid branch target %d", l)),
			when(uint64(l) <= uint64(pc), fmt.Sprintf("backward branch to %d", l)))
	case FormRet:
		return first(when(r1 != 0 || r2 != 0, reserved), reg(rd))
	case FormNone:
		return when(r1 != 0 || r2 != 0 || rd != 0, reserved)
	case FormSetx:
		i := in.Index()
		return first(when(int(i) >= len(o.Ints), fmt.Sprintf("invalid integer ref %d", i)),
			reg(rd), when(rd == 0, r0))
	case FormSets:
		s := in.Index()
		return first(when(int(s) >= len(o.Strs), fmt.Sprintf("invalid string ref %d", s)),
			reg(rd), when(rd == 0, r0))
	case FormLda:
		return first(when(r1 > VarArrayMax, fmt.Sprintf("invalid array %d", r1)),
			reg(r2), reg(rd), when(rd == 0, r0))
	case FormLdv:
		v := in.Var()
		return first(when(v < VarOtherMin, fmt.Sprintf("invalid variable %d", v)),
			reg(rd), when(rd == 0, r0))
	case FormStv:
		v := in.Var()
		return first(when(v < VarOtherUBase, fmt.Sprintf("invalid variable %d", v)), reg(rd))
	case FormCall:
		s := in.Subr()
		return first(when(s > SubrMax && s != SubrDPath && s != SubrDPathDentry, fmt.Sprintf("invalid subr %d", s)),
			reg(rd), when(rd == 0, r0),
			when(s == SubrGetf, "getf() not supported"))
	case FormPush:
		t := in.Type()
		bad := t != TypeCTF
		what := "val"
		if op == PUSHTR {
			bad, what = t != TypeString && t != TypeCTF, "ref"
		}
		return first(when(bad, fmt.Sprintf("invalid %s type %d", what, t)), reg(r2), reg(rd))
	}
	return fmt.Sprintf("invalid opcode %d", uint8(op))
}

// checkHelper applies dtrace_difo_validate_helper's checks.
func checkHelper(in Instr) string {
	op := in.Op()
	switch op {
	case LDGS:
		v := in.Var()
		switch {
		case v >= VarOtherUBase, v >= VarArg0 && v <= VarArg9:
			return ""
		}
		switch v {
		case VarCurthread, VarPID, VarPPID, VarTID, VarExecargs, VarExecname,
			VarZonename, VarUID, VarGID:
			return ""
		}
		return fmt.Sprintf("illegal variable %d", v)
	case LDTA, LDTS, LDGAA, LDTAA:
		return "illegal dynamic variable load"
	case STTS, STGAA, STTAA:
		return "illegal dynamic variable store"
	case CALL:
		switch s := in.Subr(); s {
		case SubrAlloca, SubrBcopy, SubrCopyin, SubrCopyinto, SubrCopyinstr,
			SubrIndex, SubrInetNtoa, SubrInetNtoa6, SubrInetNtop, SubrJSON,
			SubrLltostr, SubrStrtoll, SubrRindex, SubrStrchr, SubrStrjoin,
			SubrStrrchr, SubrStrstr, SubrHtons, SubrHtonl, SubrHtonll,
			SubrNtohs, SubrNtohl, SubrNtohll, SubrMemref, SubrMemstr:
			return ""
		default:
			return fmt.Sprintf("invalid subr %d", s)
		}
	case XLATE, XLARG:
		return fmt.Sprintf("invalid opcode %d", uint8(op))
	}
	if !op.Valid() {
		return fmt.Sprintf("invalid opcode %d", uint8(op))
	}
	return ""
}

var scopeNames = [...]string{ScopeGlobal: "global", ScopeThread: "thread-local", ScopeLocal: "clause-local"}

func (v *Validator) strict(o *Object) *Error {
	seen := make(map[varKey]bool)
	for i := range o.Vars {
		d := &o.Vars[i]
		verr := func(format string, args ...any) *Error {
			return &Error{Part: PartVar, Index: i, Reason: fmt.Sprintf(format, args...)}
		}
		if uint64(d.Name) >= uint64(len(o.Strs)) {
			return verr("name offset %d is outside the string table (%d bytes)", d.Name, len(o.Strs))
		}
		if r := checkType(d.Type); r != "" {
			return verr("%s", r)
		}
		if d.Flags&^(FlagRef|FlagMod) != 0 {
			return verr("unknown variable flags 0x%x", d.Flags&^(FlagRef|FlagMod))
		}
		k := varKey{d.Scope, d.ID}
		if seen[k] {
			return verr("%s variable %d has a second entry", scopeNames[d.Scope], d.ID)
		}
		seen[k] = true
	}
	if r := checkType(o.Ret); r != "" {
		return objErr("return type: " + r)
	}

	for pc, in := range o.Code {
		op := in.Op()
		scope, ok := op.Scope()
		if !ok {
			continue
		}
		id := uint32(in.Var())
		if op.Form() == FormLda {
			id = uint32(in.R1())
		}
		if op == LDTA {
			return codeErr(pc, in, "ldta: D has no thread-local arrays and dtrace's compiler never emits it")
		}
		if scope != ScopeGlobal && id < VarOtherUBase {
			return codeErr(pc, in, "%s variable %d has a built-in id", scopeNames[scope], id)
		}
		d, ok := o.LookupVar(id, scope)
		if !ok {
			return codeErr(pc, in, "%s variable %d is not in the variable table", scopeNames[scope], id)
		}
		if kind, _ := op.VarKind(); d.Kind != kind {
			what := map[uint8]string{KindArray: "an array", KindScalar: "a scalar"}
			return codeErr(pc, in, "%s accesses %s, but the variable table makes variable %d %s",
				op, what[kind], id, what[d.Kind])
		}
	}

	if err := v.flow(o); err != nil {
		return err
	}

	intBytes := uint64(len(o.Ints)) * IntSize
	for _, t := range []struct {
		part Part
		rs   []Relo
	}{{PartKRelo, o.KRelo}, {PartURelo, o.URelo}} {
		for i, r := range t.rs {
			rerr := func(format string, args ...any) *Error {
				return &Error{Part: t.part, Index: i, Reason: fmt.Sprintf(format, args...)}
			}
			if uint64(r.Name) >= uint64(len(o.Strs)) {
				return rerr("name offset %d is outside the string table (%d bytes)", r.Name, len(o.Strs))
			}
			if t.part == PartKRelo {
				if r.Type != RelocSetx {
					return rerr("invalid relocation type")
				}
				if r.Offset >= intBytes || r.Offset+IntSize > intBytes {
					return rerr("bad relocation offset")
				}
				if r.Offset%IntSize != 0 {
					return rerr("misaligned setx relo")
				}
			}
		}
	}
	return nil
}

func checkType(t Type) string {
	if t.Kind != TypeCTF && t.Kind != TypeString {
		return fmt.Sprintf("unknown type kind %d", t.Kind)
	}
	if t.Flags&^(TFByRef|TFByURef) != 0 {
		return fmt.Sprintf("unknown type flags 0x%x", t.Flags&^(TFByRef|TFByURef))
	}
	return ""
}

// regset is a set of registers %r0 … %r255.
type regset [4]uint64

func (s *regset) add(r uint8)      { s[r/64] |= 1 << (r % 64) }
func (s *regset) has(r uint8) bool { return s[r/64]&(1<<(r%64)) != 0 }
func (s *regset) and(t *regset)    { s[0], s[1], s[2], s[3] = s[0]&t[0], s[1]&t[1], s[2]&t[2], s[3]&t[3] }

// appendReads appends the registers an instruction reads.
func appendReads(rs []uint8, in Instr) []uint8 {
	switch op := in.Op(); op.Form() {
	case FormALU:
		rs = append(rs, in.R1(), in.R2())
		if op == COPYS {
			rs = append(rs, in.RD())
		}
	case FormR1RD, FormLoad, FormTst:
		rs = append(rs, in.R1())
	case FormCmp:
		rs = append(rs, in.R1(), in.R2())
	case FormStore:
		rs = append(rs, in.R1(), in.RD())
	case FormRet, FormStv:
		rs = append(rs, in.RD())
	case FormLda:
		rs = append(rs, in.R2())
	case FormPush:
		if op == PUSHTR {
			rs = append(rs, in.R2())
		}
		rs = append(rs, in.RS())
	}
	return rs
}

// written returns the register an instruction writes.
func written(in Instr) (uint8, bool) {
	switch op := in.Op(); op.Form() {
	case FormALU:
		return in.RD(), op != COPYS
	case FormR1RD, FormLoad, FormSetx, FormSets, FormLda, FormLdv, FormCall, FormXlate:
		return in.RD(), true
	}
	return 0, false
}

// flow follows every path through the code (branches only go forward,
// which the kernel checks have established) and refuses a read of a
// register that some path to it leaves unwritten, and a push beyond the
// tuple stack.
func (v *Validator) flow(o *Object) *Error {
	n := len(o.Code)
	type state struct {
		reached bool
		defs    regset
		depth   int
	}
	st := make([]state, n+1)
	st[0].reached = true
	st[0].defs.add(0)
	var reads []uint8
	for pc, in := range o.Code {
		s := st[pc]
		if !s.reached {
			continue
		}
		reads = appendReads(reads[:0], in)
		for _, r := range reads {
			if !s.defs.has(r) {
				return codeErr(pc, in, "reads %%r%d, which is not written on every path to it", r)
			}
		}
		if r, ok := written(in); ok {
			s.defs.add(r)
		}
		switch in.Op() {
		case PUSHTR, PUSHTV:
			if s.depth >= v.lim.NTupleRegs {
				return codeErr(pc, in, "pushes a tuple entry beyond the %d tuple registers", v.lim.NTupleRegs)
			}
			s.depth++
		case POPTS:
			if s.depth > 0 {
				s.depth--
			}
		case FLUSHTS:
			s.depth = 0
		}
		flowTo := func(t int) {
			d := &st[t]
			if !d.reached {
				d.reached, d.defs, d.depth = true, s.defs, s.depth
				return
			}
			d.defs.and(&s.defs)
			d.depth = max(d.depth, s.depth)
		}
		op := in.Op()
		if op.IsBranch() {
			flowTo(int(in.Label()))
		}
		if op != BA && op != RET {
			flowTo(pc + 1)
		}
	}
	return nil
}

// record remembers the user variables of an accepted DIFO.
func (v *Validator) record(o *Object) {
	for i := range o.Vars {
		d := o.Vars[i]
		if d.ID < VarOtherUBase {
			continue
		}
		d.Type = v.effType(&d)
		k := varKey{d.Scope, d.ID}
		if d.Scope == ScopeThread {
			v.tlocals[k] = d
		} else if _, ok := v.statics[k]; !ok {
			v.statics[k] = d
		}
	}
}
