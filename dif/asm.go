package dif

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	marked  []bool // by label
	ints    []uint64
	// interned holds the indices of the entries Int shares (not the
	// symbol addresses of SetxSym); once there are more than
	// smallTable, shared maps their values to them.
	interned []uint16
	shared   map[uint64]uint16
	strs     strtab
	vars     []varUse
	varIdx   map[varKey]int // index in vars, once there are many
	err      error
}

// smallTable is the size up to which the IR finds an integer, a string
// or a variable by looking through its table rather than in a map: a
// DIFO's tables hold a few entries, and a compiler making one DIFO per
// action of a large program would spend more on maps than on the code.
const smallTable = 16

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

// Reset empties the IR for another DIFO, keeping the memory of its
// instruction list and tables: a compiler makes a DIFO for every
// predicate and action, and can make them all in one IR.
func (ir *IR) Reset() {
	*ir = IR{
		nodes:    ir.nodes[:0],
		marked:   ir.marked[:0],
		ints:     ir.ints[:0],
		interned: ir.interned[:0],
		strs:     strtab{buf: ir.strs.buf[:0], ends: ir.strs.ends[:0]},
		vars:     ir.vars[:0],
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
	if int(l) >= len(ir.marked) {
		ir.marked = append(ir.marked, make([]bool, int(ir.nlabels)+1-len(ir.marked))...)
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
	if ir.shared != nil {
		if i, ok := ir.shared[x]; ok {
			return i
		}
	} else {
		for _, i := range ir.interned {
			if ir.ints[i] == x {
				return i
			}
		}
	}
	i, ok := ir.addInt(x)
	if !ok {
		return i
	}
	switch {
	case ir.shared != nil:
		ir.shared[x] = i
	case len(ir.interned) < smallTable:
		ir.interned = append(ir.interned, i)
	default:
		ir.shared = make(map[uint64]uint16, 2*smallTable)
		for _, j := range ir.interned {
			ir.shared[ir.ints[j]] = j
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
	buf  []byte
	ends []uint32          // where each string's NUL is, after the first
	off  map[string]uint32 // the strings' offsets, once there are many
}

func (t *strtab) insert(s string) (uint32, error) {
	if len(t.buf) == 0 {
		t.buf = append(t.buf, 0)
	}
	if s == "" {
		return 0, nil
	}
	if off, ok := t.lookup(s); ok {
		return off, nil
	}
	off := uint32(len(t.buf))
	if off > MaxStrOff {
		return 0, ErrStrTableFull
	}
	t.buf = append(append(t.buf, s...), 0)
	switch {
	case t.off != nil:
		t.off[s] = off
	case len(t.ends) < smallTable:
		t.ends = append(t.ends, uint32(len(t.buf)-1))
	default:
		t.off = make(map[string]uint32, 2*smallTable)
		start := uint32(1)
		for _, end := range t.ends {
			t.off[string(t.buf[start:end])] = start
			start = end + 1
		}
		t.off[s] = off
	}
	return off, nil
}

func (t *strtab) lookup(s string) (uint32, bool) {
	if t.off != nil {
		off, ok := t.off[s]
		return off, ok
	}
	start := uint32(1)
	for _, end := range t.ends {
		if string(t.buf[start:end]) == s {
			return start, true
		}
		start = end + 1
	}
	return 0, false
}

// clone returns a copy of the table in buf, with room for extra bytes
// and names more strings.
func (t *strtab) clone(buf []byte, extra, names int) strtab {
	c := strtab{buf: append(slices.Grow(buf, len(t.buf)+extra), t.buf...)}
	if t.off == nil {
		c.ends = append(make([]uint32, 0, len(t.ends)+names), t.ends...)
	} else {
		c.off = make(map[string]uint32, len(t.off))
		for k, v := range t.off {
			c.off[k] = v
		}
	}
	return c
}

// Sets emits sets DT_STRING[off], rd with s interned at off.
func (ir *IR) Sets(s string, rd uint8) { ir.Emit(Sets(ir.String(s), rd)) }

// Touch records an access to v that no instruction shows, with flags
// FlagRef and/or FlagMod.
func (ir *IR) Touch(v VarRef, flags uint16) {
	k := varKey{v.Scope, v.ID}
	at := -1
	if ir.varIdx != nil {
		if i, ok := ir.varIdx[k]; ok {
			at = i
		}
	} else {
		for i := range ir.vars {
			if ir.vars[i].key() == k {
				at = i
				break
			}
		}
	}
	if at < 0 {
		ir.vars = append(ir.vars, varUse{ref: v, flags: flags})
		switch {
		case ir.varIdx != nil:
			ir.varIdx[k] = len(ir.vars) - 1
		case len(ir.vars) > smallTable:
			ir.varIdx = make(map[varKey]int, 2*len(ir.vars))
			for i := range ir.vars {
				ir.varIdx[ir.vars[i].key()] = i
			}
		}
		return
	}
	u := &ir.vars[at]
	if u.ref != v {
		ir.fail(fmt.Errorf("dif: variable %d in scope %d named both %+v and %+v", v.ID, v.Scope, u.ref, v))
		return
	}
	u.flags |= flags
}

func (u *varUse) key() varKey { return varKey{u.ref.Scope, u.ref.ID} }

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
	o := new(Object)
	if err := AssembleTo(o, ir); err != nil {
		return nil, err
	}
	return o, nil
}

// AssembleTo assembles the IR as Assemble does, into o, whose tables it
// reuses: a code generator that copies or drops each object before the
// next (most of a large program's DIFOs are alike, and shared) so makes
// no new ones. o's earlier contents are overwritten.
func AssembleTo(o *Object, ir *IR) error {
	if ir.err != nil {
		return ir.err
	}
	// The names of variables and relocated symbols join the string
	// table; room is made for them at once, as the table is kept.
	extra, names := 1, len(ir.vars) // the leading NUL, if the table is empty
	for i := range ir.vars {
		extra += len(ir.vars[i].ref.Name) + 1
	}
	for _, n := range ir.nodes {
		if n.sym != nil {
			extra += len(n.sym.Name) + 1
			names++
		}
	}
	strs := ir.strs.clone(o.Strs[:0], extra, names)
	if _, err := strs.insert(""); err != nil {
		return err
	}
	*o = Object{Ret: ir.Ret, Code: slices.Grow(o.Code[:0], ir.ninstr), Ints: o.Ints[:0],
		Vars: o.Vars[:0], KRelo: o.KRelo[:0], URelo: o.URelo[:0], Xlate: o.Xlate[:0]}
	labels := make([]int, ir.nlabels+1) // by label: its instruction, or -1
	for i := range labels {
		labels[i] = -1
	}
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
		at := -1
		if l < Label(len(labels)) {
			at = labels[l]
		}
		if at < 0 {
			return fmt.Errorf("dif: %v at %d branches to label %d, which is never placed", op, i, l)
		}
		if at > MaxLabel {
			return fmt.Errorf("dif: %v at %d branches to instruction %d, beyond 24 bits", op, i, at)
		}
		o.Code[i] = Branch(op, uint32(at))
	}

	var own [smallTable]*varUse
	uses := own[:0]
	for i := range ir.vars {
		uses = append(uses, &ir.vars[i])
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
	slices.SortFunc(uses, func(u, v *varUse) int {
		a, b := u.ref, v.ref
		if c := cmp.Compare(group(a.Scope), group(b.Scope)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	o.Vars = slices.Grow(o.Vars, len(uses))
	for _, u := range uses {
		off, err := strs.insert(u.ref.Name)
		if err != nil {
			return err
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
			return &RelocError{Sym: *n.sym, Offset: uint32(pc)}
		}
		off, err := strs.insert(n.sym.Name)
		if err != nil {
			return err
		}
		r := Relo{Name: off, Type: RelocSetx, Offset: uint64(n.in.Index()) * IntSize}
		if kernel {
			o.KRelo = append(o.KRelo, r)
		} else {
			o.URelo = append(o.URelo, r)
		}
	}
	if len(o.Xlate) > MaxIntIndex+1 {
		return fmt.Errorf("dif: %d translator references, more than 16 bits can index", len(o.Xlate))
	}

	o.Strs = strs.buf
	o.Ints = append(o.Ints, ir.ints...)
	return nil
}
