package dif

import (
	"errors"
	"fmt"
	"sort"
)

// ErrIntTableFull and ErrStrTableFull are the assembler's refusals when a
// DIFO's integer table outgrows the 16-bit index of setx or its string
// table the 16-bit offset of sets (dtrace's EDT_INT2BIG and EDT_STR2BIG).
var (
	ErrIntTableFull = errors.New("Integer constant table limit exceeded")
	ErrStrTableFull = errors.New("String constant table limit exceeded")
)

// Label is a symbolic branch target in an IR. The zero Label means no
// label; NewLabel hands out 1, 2, ….
type Label uint32

// VarRef names a D variable as the code generator knows it: the entry it
// will have in the DIFO's variable table.
type VarRef struct {
	Name  string
	ID    uint32 // VarTimestamp, VarArgs, VarOtherUBase+n, …
	Kind  uint8  // KindArray or KindScalar
	Scope uint8  // ScopeGlobal, ScopeThread or ScopeLocal
	Type  Type
}

// Symbol is an external symbol whose address a setx loads (a D name
// scoped by a backquote, two for a user symbol). Whether it gets a
// relocation depends on the IR's LinkMode.
type Symbol struct {
	Name    string // symbol name, written to the DIFO's string table
	Object  string // module or object that defines it, for messages
	User    bool   // a user-space symbol (DT_IDFLG_USER)
	Primary bool   // defined by the primary kernel object (DT_IDFLG_PRIM)
}

// LinkMode is dtrace's -xlinkmode: which symbol addresses are taken as
// known at compile time (static) and which get a relocation (dynamic).
type LinkMode uint8

const (
	// LinkKernel: kernel symbols static, user symbols dynamic (default).
	LinkKernel LinkMode = iota
	// LinkPrimary: primary kernel symbols static, all others dynamic.
	LinkPrimary
	// LinkDynamic: all symbols dynamic.
	LinkDynamic
	// LinkStatic: all symbols static.
	LinkStatic
)

// RelocError is the assembler's refusal of a relocation that remains
// against a symbol while -xknodefs (kernel) or -xunodefs (user) is not
// set, dtrace's D_ASRELO.
type RelocError struct {
	Sym Symbol
	// Offset is the number dtrace prints: the index of the setx plus
	// one, as dt_as reports it.
	Offset uint32
}

func (e *RelocError) Error() string {
	kind, mark := "loadable kernel", "`"
	switch {
	case e.Sym.User:
		kind, mark = "user", "``"
	case e.Sym.Primary:
		kind = "primary kernel"
	}
	return fmt.Sprintf("relocation remains against %s symbol %s%s%s (offset 0x%x)",
		kind, e.Sym.Object, mark, e.Sym.Name, e.Offset)
}

// IR is the code generator's view of one DIFO before assembly: a list of
// instructions whose branches name Labels, whose setx and sets operands
// were interned in the DIFO's integer and string tables as they were
// emitted (as dt_cg does), and whose variable accesses and symbol loads
// are remembered so that Assemble can write the variable table and the
// relocations. The zero IR is ready to use.
type IR struct {
	Ret     Type     // the DIFO's return type
	Link    LinkMode // which symbol loads get relocations
	KNoDefs bool     // allow kernel relocations to remain (-xknodefs)
	UNoDefs bool     // allow user relocations to remain (-xunodefs)

	nodes   []irNode
	ninstr  int
	nlabels Label
	marked  map[Label]bool
	ints    []uint64
	shared  map[uint64]uint16
	strs    strtab
	vars    map[varKey]*varUse
	err     error
}

type irNode struct {
	decl  bool  // a label declaration, not an instruction
	label Label // the label declared, or a branch's target
	in    Instr // the instruction, with resolved table operands
	sym   *Symbol
	xl    *XlateRef
}

type varKey struct {
	scope uint8
	id    uint32
}

type varUse struct {
	ref   VarRef
	flags uint16
}

func (ir *IR) fail(err error) {
	if ir.err == nil {
		ir.err = err
	}
}

// Err returns the first error met while building the IR, which Assemble
// also returns.
func (ir *IR) Err() error { return ir.err }

// Len returns the number of instructions emitted so far: the index the
// next one will have.
func (ir *IR) Len() int { return ir.ninstr }

// NewLabel returns a fresh label.
func (ir *IR) NewLabel() Label {
	ir.nlabels++
	return ir.nlabels
}

// Mark places l before the next instruction emitted (dtrace's labelled
// nop). A label may be placed once.
func (ir *IR) Mark(l Label) {
	if l == 0 || l > ir.nlabels {
		ir.fail(fmt.Errorf("dif: label %d was not made by NewLabel", l))
		return
	}
	if ir.marked == nil {
		ir.marked = make(map[Label]bool)
	}
	if ir.marked[l] {
		ir.fail(fmt.Errorf("dif: label %d placed twice", l))
		return
	}
	ir.marked[l] = true
	ir.nodes = append(ir.nodes, irNode{decl: true, label: l})
}

// Emit appends an instruction as it is. A branch's 24-bit field is taken
// as a Label, as dt_as takes it; every other field must already be final
// (use Setx, Sets, LoadVar, StoreVar and Xlate to have operands
// interned and variables recorded).
func (ir *IR) Emit(in Instr) {
	n := irNode{in: in}
	if in.Op().IsBranch() {
		n.label = Label(in.Label())
	}
	ir.nodes = append(ir.nodes, n)
	ir.ninstr++
}

// Branch emits op (ba … bleu) to the label l.
func (ir *IR) Branch(op Op, l Label) {
	if !op.IsBranch() {
		ir.fail(fmt.Errorf("dif: %v is not a branch", op))
		return
	}
	ir.Emit(Branch(op, uint32(l)))
}

// Int interns x in the integer table, sharing one entry among equal
// values, and returns its index.
func (ir *IR) Int(x uint64) uint16 {
	if i, ok := ir.shared[x]; ok {
		return i
	}
	i, ok := ir.addInt(x)
	if ok {
		if ir.shared == nil {
			ir.shared = make(map[uint64]uint16)
		}
		ir.shared[x] = i
	}
	return i
}

func (ir *IR) addInt(x uint64) (uint16, bool) {
	if len(ir.ints) > MaxIntIndex {
		ir.fail(ErrIntTableFull)
		return 0, false
	}
	ir.ints = append(ir.ints, x)
	return uint16(len(ir.ints) - 1), true
}

// Setx emits setx DT_INTEGER[i], rd with x interned at i.
func (ir *IR) Setx(x uint64, rd uint8) { ir.Emit(Setx(ir.Int(x), rd)) }

// SetxSym emits a setx of sym's address: value is the address known at
// compile time (0 if none). The value gets an integer-table entry of its
// own, which Assemble relocates when the link mode makes sym dynamic.
func (ir *IR) SetxSym(sym Symbol, value uint64, rd uint8) {
	i, _ := ir.addInt(value)
	ir.Emit(Setx(i, rd))
	ir.nodes[len(ir.nodes)-1].sym = &sym
}

// String interns s in the string table and returns its offset. Equal
// strings share one copy; the empty string is at offset 0.
func (ir *IR) String(s string) uint16 {
	off, err := ir.strs.insert(s)
	if err != nil {
		ir.fail(err)
	}
	return uint16(off)
}

// strtab is a DIFO string table as dt_strtab builds it: a NUL at offset
// 0 for the empty string, then each distinct string once, NUL-terminated,
// in order of first insertion.
type strtab struct {
	buf []byte
	off map[string]uint32
}

func (t *strtab) insert(s string) (uint32, error) {
	if t.buf == nil {
		t.buf = []byte{0}
		t.off = make(map[string]uint32)
	}
	if s == "" {
		return 0, nil
	}
	if off, ok := t.off[s]; ok {
		return off, nil
	}
	off := uint32(len(t.buf))
	if off > MaxStrOff {
		return 0, ErrStrTableFull
	}
	t.buf = append(append(t.buf, s...), 0)
	t.off[s] = off
	return off, nil
}

func (t *strtab) clone() strtab {
	c := strtab{buf: append([]byte(nil), t.buf...), off: make(map[string]uint32, len(t.off))}
	for k, v := range t.off {
		c.off[k] = v
	}
	return c
}

// Sets emits sets DT_STRING[off], rd with s interned at off.
func (ir *IR) Sets(s string, rd uint8) { ir.Emit(Sets(ir.String(s), rd)) }

// Touch records an access to v that no instruction shows, with flags
// FlagRef and/or FlagMod.
func (ir *IR) Touch(v VarRef, flags uint16) {
	k := varKey{v.Scope, v.ID}
	if ir.vars == nil {
		ir.vars = make(map[varKey]*varUse)
	}
	u, ok := ir.vars[k]
	if !ok {
		ir.vars[k] = &varUse{ref: v, flags: flags}
		return
	}
	if u.ref != v {
		ir.fail(fmt.Errorf("dif: variable %d in scope %d named both %+v and %+v", v.ID, v.Scope, u.ref, v))
		return
	}
	u.flags |= flags
}

func (ir *IR) access(op Op, v VarRef) bool {
	scope, ok := op.Scope()
	if !ok {
		ir.fail(fmt.Errorf("dif: %v does not access a variable", op))
		return false
	}
	kind, _ := op.VarKind()
	if v.Scope != scope || v.Kind != kind {
		ir.fail(fmt.Errorf("dif: %v cannot access %s (kind %d, scope %d)", op, v.Name, v.Kind, v.Scope))
		return false
	}
	if op.IsVarStore() {
		ir.Touch(v, FlagMod)
	} else {
		ir.Touch(v, FlagRef)
	}
	return true
}

// LoadVar emits a variable load op var, rd (ldgs, ldts, ldls, ldgaa,
// ldtaa) and records the read of v.
func (ir *IR) LoadVar(op Op, v VarRef, rd uint8) {
	if op.Form() != FormLdv {
		ir.fail(fmt.Errorf("dif: %v is not a variable load", op))
		return
	}
	if ir.access(op, v) {
		ir.Emit(Ldv(op, uint16(v.ID), rd))
	}
}

// LoadArray emits ldga or ldta v, ri, rd: element ri of a built-in array
// (args[], regs[], uregs[]) and records the read of v.
func (ir *IR) LoadArray(op Op, v VarRef, ri, rd uint8) {
	if op.Form() != FormLda {
		ir.fail(fmt.Errorf("dif: %v is not an array load", op))
		return
	}
	if v.ID > VarArrayMax {
		ir.fail(fmt.Errorf("dif: array %s has id %d, more than 8 bits", v.Name, v.ID))
		return
	}
	if ir.access(op, v) {
		ir.Emit(Lda(op, uint8(v.ID), ri, rd))
	}
}

// StoreVar emits a variable store op rs, var (stgs, stts, stls, stgaa,
// sttaa) and records the write of v.
func (ir *IR) StoreVar(op Op, v VarRef, rs uint8) {
	if op.Form() != FormStv {
		ir.fail(fmt.Errorf("dif: %v is not a variable store", op))
		return
	}
	if ir.access(op, v) {
		ir.Emit(Stv(op, uint16(v.ID), rs))
	}
}

// Xlate emits xlate or xlarg for the translator member ref, into rd.
// Each such instruction gets its own entry of the translator reference
// table, in the order of the instructions.
func (ir *IR) Xlate(op Op, ref XlateRef, rd uint8) {
	if op != XLATE && op != XLARG {
		ir.fail(fmt.Errorf("dif: %v is not xlate or xlarg", op))
		return
	}
	ir.Emit(Xlate(op, 0, rd))
	ir.nodes[len(ir.nodes)-1].xl = &ref
}

// relocates reports whether a load of sym gets a relocation under the
// link mode, and whether it is a kernel one.
func (m LinkMode) relocates(sym *Symbol) (reloc, kernel bool) {
	switch m {
	case LinkKernel:
		return sym.User, false
	case LinkPrimary:
		if sym.User {
			return true, false
		}
		return !sym.Primary, true
	case LinkDynamic:
		return true, !sym.User
	}
	return false, false
}

// Assemble turns the IR into a DIF object as dt_as does: it drops the
// label declarations and resolves every branch to the absolute index of
// the instruction its label precedes; writes the variable table (each
// variable once, thread-local ones first, then globals, then clause-
// locals, each group by id, with FlagRef/FlagMod from its accesses) and
// interns the names; writes the kernel and user relocations for the
// symbol loads the link mode makes dynamic; numbers the translator
// references; and copies the integer and string tables and the return
// type. It checks nothing that Validate checks.
func Assemble(ir *IR) (*Object, error) {
	if ir.err != nil {
		return nil, ir.err
	}
	strs := ir.strs.clone()
	if _, err := strs.insert(""); err != nil {
		return nil, err
	}
	o := &Object{Ret: ir.Ret}
	if ir.ninstr > 0 {
		o.Code = make([]Instr, 0, ir.ninstr)
	}
	labels := make(map[Label]int)
	for _, n := range ir.nodes {
		if n.decl {
			labels[n.label] = len(o.Code)
			continue
		}
		o.Code = append(o.Code, n.in)
	}
	for i, in := range o.Code {
		op := in.Op()
		if op == CALL && (in.Subr() == SubrCopyout || in.Subr() == SubrCopyoutstr) {
			o.Destructive = true
		}
		if !op.IsBranch() {
			continue
		}
		l := Label(in.Label())
		at, ok := labels[l]
		if !ok {
			return nil, fmt.Errorf("dif: %v at %d branches to label %d, which is never placed", op, i, l)
		}
		if at > MaxLabel {
			return nil, fmt.Errorf("dif: %v at %d branches to instruction %d, beyond 24 bits", op, i, at)
		}
		o.Code[i] = Branch(op, uint32(at))
	}

	uses := make([]*varUse, 0, len(ir.vars))
	for _, u := range ir.vars {
		uses = append(uses, u)
	}
	group := func(scope uint8) int {
		switch scope {
		case ScopeThread:
			return 0
		case ScopeGlobal:
			return 1
		}
		return 2
	}
	sort.Slice(uses, func(i, j int) bool {
		a, b := uses[i].ref, uses[j].ref
		if ga, gb := group(a.Scope), group(b.Scope); ga != gb {
			return ga < gb
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Name < b.Name
	})
	for _, u := range uses {
		off, err := strs.insert(u.ref.Name)
		if err != nil {
			return nil, err
		}
		o.Vars = append(o.Vars, Var{
			Name: off, ID: u.ref.ID, Kind: u.ref.Kind, Scope: u.ref.Scope,
			Flags: u.flags, Type: u.ref.Type,
		})
	}

	pc := 0
	for _, n := range ir.nodes {
		if n.decl {
			continue
		}
		pc++
		if n.xl != nil {
			o.Code[pc-1] = o.Code[pc-1].WithIndex(uint16(len(o.Xlate)))
			o.Xlate = append(o.Xlate, *n.xl)
			continue
		}
		if n.sym == nil {
			continue
		}
		reloc, kernel := ir.Link.relocates(n.sym)
		if !reloc {
			continue
		}
		nodef := ir.UNoDefs
		if kernel {
			nodef = ir.KNoDefs
		}
		if !nodef {
			return nil, &RelocError{Sym: *n.sym, Offset: uint32(pc)}
		}
		off, err := strs.insert(n.sym.Name)
		if err != nil {
			return nil, err
		}
		r := Relo{Name: off, Type: RelocSetx, Offset: uint64(n.in.Index()) * IntSize}
		if kernel {
			o.KRelo = append(o.KRelo, r)
		} else {
			o.URelo = append(o.URelo, r)
		}
	}
	if len(o.Xlate) > MaxIntIndex+1 {
		return nil, fmt.Errorf("dif: %d translator references, more than 16 bits can index", len(o.Xlate))
	}

	o.Strs = strs.buf
	if len(ir.ints) > 0 {
		o.Ints = append([]uint64(nil), ir.ints...)
	}
	return o, nil
}
