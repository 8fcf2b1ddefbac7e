package dif

import "bytes"

// Type is a DIF type, dtrace_diftype_t: what a DIFO returns and what a
// variable holds.
type Type struct {
	Kind    uint8  // TypeCTF or TypeString
	CtfKind uint8  // CTF kind of a TypeCTF (CTFInteger, CTFPointer, …)
	Flags   uint8  // TFByRef, TFByURef
	Size    uint32 // size in bytes; for a string, its maximum size
}

// IntType is the type of a CTF integer of size bytes returned by value.
func IntType(size uint32) Type { return Type{Kind: TypeCTF, CtfKind: CTFInteger, Size: size} }

// StringType is the type of a D string of at most size bytes, which DIF
// always passes by reference.
func StringType(size uint32) Type {
	return Type{Kind: TypeString, CtfKind: CTFUnknown, Flags: TFByRef, Size: size}
}

// ByRef reports whether a value of the type is passed as a reference to
// memory rather than in a register.
func (t Type) ByRef() bool { return t.Flags&(TFByRef|TFByURef) != 0 }

// Var is an entry of a DIFO's variable table, dtrace_difv_t.
type Var struct {
	Name  uint32 // offset of the name in the DIFO's string table
	ID    uint32 // variable id (VarTimestamp, VarOtherUBase+n, …)
	Kind  uint8  // KindArray or KindScalar
	Scope uint8  // ScopeGlobal, ScopeThread or ScopeLocal
	Flags uint16 // FlagRef, FlagMod
	Type  Type
}

// Relo is a relocation, dof_relodesc_t: the integer-table entry at byte
// offset Offset receives the address of the symbol named by Name.
type Relo struct {
	Name   uint32 // offset of the symbol name in the DIFO's string table
	Type   uint32 // RelocSetx, RelocDOFRel or RelocNone
	Offset uint64 // byte offset in the integer table: index·8
	Data   uint64
}

// XlateRef is an entry of a DIFO's translator reference table: the member
// of a translator an xlate or xlarg instruction asks for. The DOF writer
// turns it into a dof_xlref_t (translator section index, member index
// among the members the program uses, argument number).
type XlateRef struct {
	Xlator uint32 // translator id (dx_id)
	Member uint32 // member id within the translator (dn_membid)
	Arg    int32  // translator argument number (dx_arg)
	Name   string // member name, for the disassembler
	Type   string // member type name, for the disassembler
}

// Object is a DIF object (DIFO) as libdtrace holds it in dtrace_difo_t
// once assembled: the code, its constant tables, the variables it
// touches, its return type and the relocations and translator references
// its integer table and instructions need.
type Object struct {
	Code        []Instr    // dtdo_buf
	Ints        []uint64   // dtdo_inttab
	Strs        []byte     // dtdo_strtab: NUL-terminated strings, offset 0 is ""
	Vars        []Var      // dtdo_vartab
	Ret         Type       // dtdo_rtype
	KRelo       []Relo     // dtdo_kreltab: kernel symbol relocations
	URelo       []Relo     // dtdo_ureltab: user symbol relocations
	Xlate       []XlateRef // dtdo_xlmtab
	Destructive bool       // dtdo_destructive: calls copyout or copyoutstr
}

// Str returns the NUL-terminated string at offset off of the string
// table, and false if off is outside the table. A string that runs to
// the end of an unterminated table is returned without its missing NUL.
func (o *Object) Str(off uint32) (string, bool) {
	if uint64(off) >= uint64(len(o.Strs)) {
		return "", false
	}
	s := o.Strs[off:]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return string(s), true
}

// LookupVar returns the variable table entry with the given id and scope.
func (o *Object) LookupVar(id uint32, scope uint8) (*Var, bool) {
	for i := range o.Vars {
		if v := &o.Vars[i]; v.ID == id && v.Scope == scope {
			return v, true
		}
	}
	return nil, false
}

// VarName returns the name of a variable table entry.
func (o *Object) VarName(v *Var) string {
	s, _ := o.Str(v.Name)
	return s
}

// Size is the number of bytes the DIFO's loadable sub-sections take in
// DOF (DIF, INTTAB, STRTAB, VARTAB, XLTAB), the quantity the kernel holds
// against its maximum DIFO size.
func (o *Object) Size() uint64 {
	return uint64(len(o.Code))*InstrSize + uint64(len(o.Ints))*IntSize +
		uint64(len(o.Strs)) + uint64(len(o.Vars))*VarSize +
		uint64(len(o.Xlate))*XlrefSize
}
