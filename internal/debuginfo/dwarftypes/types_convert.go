package dwarftypes

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
)

// typeConv is the converter's state: the types made so far, by DIE
// offset.
//
// A type is memoised before its parts are converted, which ends the
// recursion of self-referential types (struct list_head's next). That
// would also let through types that contain themselves by value, which
// only malformed DWARF describes and on which the types package's Align
// would never return; so, as package btf does, the converter keeps the
// stack of types under conversion and rejects a type met again by
// value, with no pointer or function type in between.
type typeConv struct {
	memo  map[uint64]types.Type
	added []uint64 // memo keys added by the conversion under way
	bases map[baseKey]types.Type
	names map[uint64][]string // parameter names of converted functions
	// shapes holds the shapes of the index's DIEs that other DIEs
	// were compared with.
	shapes map[uint64][]byte
	stack  []uint64
	floor  int // stack[floor:] is below the innermost pointer or function type
	// loading holds the structs whose members are being loaded.
	loading map[*types.Struct]bool
}

type baseKey struct {
	name      string
	size, enc int64
}

func (c *typeConv) init() {
	c.memo = map[uint64]types.Type{}
	c.bases = map[baseKey]types.Type{}
	c.names = map[uint64][]string{}
	c.shapes = map[uint64][]byte{}
	c.loading = map[*types.Struct]bool{}
}

// convertTop converts the type at off. A failed conversion leaves
// nothing half-built behind. The caller holds t.mu.
func (t *Types) convertTop(off uint64) (types.Type, error) {
	ty, err := t.typeAt(off)
	t.settle(err)
	if err != nil {
		return nil, t.wrap(err)
	}
	return ty, nil
}

// settle ends a conversion: on error it forgets the types it made.
func (t *Types) settle(err error) {
	c := &t.conv
	if err != nil {
		for _, off := range c.added {
			delete(c.memo, off)
			delete(c.names, off)
		}
	}
	c.added = c.added[:0]
	c.stack, c.floor = c.stack[:0], 0
}

func (t *Types) remember(off uint64, ty types.Type) {
	t.conv.memo[off] = ty
	t.conv.added = append(t.conv.added, off)
}

// target resolves a reference attribute of d; 0 means none (void).
func (t *Types) target(d *die, a dwarfread.Attr) (uint64, error) {
	switch a.Form {
	case 0:
		return 0, nil
	case dwarfread.FormRefSig8:
		if off, ok := t.x.sig(a.Val); ok {
			return off, nil
		}
		return 0, fmt.Errorf("DIE at %#x: no type unit with signature %#x", d.off, a.Val)
	}
	off, ok := dwarfread.Ref(a, d.u.Unit)
	if !ok {
		return 0, fmt.Errorf("DIE at %#x: reference of form %#x not supported (DWZ supplementary file?)", d.off, a.Form)
	}
	return off, nil
}

// within converts the type that d's attribute a names, which the type
// at outer contains by value.
func (t *Types) within(outer uint64, d *die, a dwarfread.Attr) (types.Type, error) {
	off, err := t.target(d, a)
	if err != nil {
		return nil, err
	}
	c := &t.conv
	c.stack = append(c.stack, outer)
	ty, err := t.typeAt(off)
	c.stack = c.stack[:len(c.stack)-1]
	return ty, err
}

// behind converts the type that d's attribute a names, which a pointer
// or function type refers to.
func (t *Types) behind(d *die, a dwarfread.Attr) (types.Type, error) {
	off, err := t.target(d, a)
	if err != nil {
		return nil, err
	}
	c := &t.conv
	floor := c.floor
	c.floor = len(c.stack)
	ty, err := t.typeAt(off)
	c.floor = floor
	return ty, err
}

// typeAt returns the type of the DIE at off; 0 is void.
func (t *Types) typeAt(off uint64) (types.Type, error) {
	if off == 0 {
		return types.Void{}, nil
	}
	c := &t.conv
	if slices.Contains(c.stack[c.floor:], off) {
		return nil, fmt.Errorf("type at %#x contains itself", off)
	}
	if ty, ok := c.memo[off]; ok {
		return ty, nil
	}
	d, err := t.r.read(off)
	if err != nil {
		return nil, err
	}
	if d.signature.Form != 0 {
		// A stand-in for a type in a type unit.
		canon, err := t.target(&d, d.signature)
		if err != nil {
			return nil, err
		}
		return t.redirect(off, canon)
	}
	switch d.tag {
	case tagBaseType:
		size, _ := constant(d.byteSize, false)
		enc, _ := constant(d.encoding, false)
		key := baseKey{name: string(d.name), size: size, enc: enc}
		ty, ok := c.bases[key]
		if !ok {
			ty = baseType(key.name, size, enc)
			c.bases[key] = ty
		}
		t.remember(off, ty)
		return ty, nil

	case tagUnspecifiedType:
		t.remember(off, types.Void{})
		return types.Void{}, nil

	case tagPointerType, tagReferenceType, tagRvalueRefType, tagPtrToMemberType:
		p := &types.Pointer{}
		t.remember(off, p)
		elem, err := t.behind(&d, d.typ)
		p.Elem = elem
		return p, err

	case tagConstType, tagVolatileType, tagRestrictType:
		return t.qualified(&d)

	case tagAtomicType, tagImmutableType:
		// D has no such qualifiers: it sees the type through them.
		ty, err := t.within(off, &d, d.typ)
		if err == nil {
			t.remember(off, ty)
		}
		return ty, err

	case tagTypedef:
		if canon, ok := t.canonical(classOther, &d); ok {
			return t.redirect(off, canon)
		}
		td := &types.Typedef{Module: t.name, Name: string(d.name)}
		t.remember(off, td)
		target, err := t.within(off, &d, d.typ)
		td.Type = target
		return td, err

	case tagStructureType, tagClassType, tagUnionType:
		class := classStruct
		if d.tag == tagUnionType {
			class = classUnion
		}
		if canon, ok := t.canonical(class, &d); ok {
			return t.redirect(off, canon)
		}
		return t.structType(&d)

	case tagEnumerationType:
		if canon, ok := t.canonical(classEnum, &d); ok {
			return t.redirect(off, canon)
		}
		return t.enumType(&d)

	case tagArrayType:
		return t.arrayType(&d)

	case tagSubroutineType, dwarfread.TagSubprogram:
		f, _, err := t.funcType(&d)
		return f, err
	}
	return nil, fmt.Errorf("DIE at %#x: tag %#x is not a type D knows", off, d.tag)
}

// redirect makes the DIE at off stand for the type at canon.
func (t *Types) redirect(off, canon uint64) (types.Type, error) {
	ty, err := t.typeAt(canon)
	if err == nil {
		t.remember(off, ty)
	}
	return ty, err
}

// baseType makes a base type of DWARF encoding enc.
func baseType(name string, size, enc int64) types.Type {
	switch enc {
	case ateBoolean:
		return &types.Int{Name: name, Bytes: size, Bool: true}
	case ateFloat, ateComplexFloat, ateDecimalFloat:
		return &types.Float{Name: name, Bytes: size}
	case ateSigned:
		return &types.Int{Name: name, Bytes: size, Signed: true}
	case ateSignedChar:
		return &types.Int{Name: name, Bytes: size, Signed: true, Char: true}
	case ateUnsignedChar:
		return &types.Int{Name: name, Bytes: size, Char: true}
	}
	if size == 0 && name == "void" {
		return types.Void{}
	}
	return &types.Int{Name: name, Bytes: size}
}

// qualOf returns the qualifier of a qualifier DIE's tag, and false for
// another tag.
func qualOf(tag uint32) (types.Qual, bool) {
	switch tag {
	case tagConstType:
		return types.Const, true
	case tagVolatileType:
		return types.Volatile, true
	case tagRestrictType:
		return types.Restrict, true
	}
	return 0, false
}

// qualified converts a chain of qualifier DIEs into one Qualified, so
// that const volatile reads the same from either order of DIEs.
func (t *Types) qualified(d *die) (types.Type, error) {
	q := &types.Qualified{}
	t.remember(d.off, q)
	cur := *d
	for range 16 {
		qual, _ := qualOf(cur.tag)
		q.Qual |= qual
		next, err := t.target(&cur, cur.typ)
		if err != nil {
			return nil, err
		}
		if next == 0 {
			q.Type = types.Void{}
			return q, nil
		}
		nd, err := t.r.read(next)
		if err != nil {
			return nil, err
		}
		if _, ok := qualOf(nd.tag); ok {
			cur = nd
			continue
		}
		ty, err := t.within(d.off, &cur, cur.typ)
		q.Type = ty
		return q, err
	}
	return nil, fmt.Errorf("DIE at %#x: qualifiers nest too deep", d.off)
}

// structType converts a struct or union, or a declaration of one that
// no definition in the image completes. Its members are converted when
// first asked for (types.Struct.LoadMembers): a kernel's struct file
// reaches thousands of types through its members' pointers, and a
// probe's compile looks at few of them.
func (t *Types) structType(d *die) (types.Type, error) {
	s := &types.Struct{Module: t.name, Name: string(d.name), Union: d.tag == tagUnionType}
	t.remember(d.off, s)
	if d.decl {
		s.Incomplete = true
		return s, nil
	}
	s.Bytes, _ = constant(d.byteSize, false)
	if d.children {
		off := d.off
		s.LoadMembers(func() ([]types.Member, error) { return t.loadMembers(off, s) })
	}
	return s, nil
}

// loadMembers converts the members of s, the struct at off, and loads
// those of the structs it holds by value, failing if s is among them.
func (t *Types) loadMembers(off uint64, s *types.Struct) ([]types.Member, error) {
	t.mu.Lock()
	ms, err := t.members(off)
	c := &t.conv
	c.loading[s] = true
	t.mu.Unlock()
	if err == nil {
		err = t.checkContained(off, ms)
	}
	t.mu.Lock()
	delete(c.loading, s)
	t.mu.Unlock()
	return ms, err
}

// members converts the members of the struct at off. The caller holds
// t.mu.
func (t *Types) members(off uint64) ([]types.Member, error) {
	if t.closed {
		return nil, errTypesClosed
	}
	d, err := t.r.read(off)
	if err != nil {
		return nil, t.wrap(err)
	}
	var members []types.Member
	err = t.r.children(&d, func(m *die) error {
		if m.tag != tagMember {
			return nil // C++'s methods, static members and bases
		}
		mt, err := t.within(d.off, m, m.typ)
		if err != nil {
			return err
		}
		var unit int64
		if m.bitOffset.Form != 0 && m.byteSize.Form == 0 {
			unit = t.storageSize(m)
		}
		off, width := memberBits(m, unit, false)
		members = append(members, types.Member{Name: string(m.name), Type: mt, Offset: off, BitSize: width})
		return nil
	})
	t.settle(err)
	if err != nil {
		return nil, t.wrap(err)
	}
	return members, nil
}

// checkContained loads the structs that ms, the members of the struct
// at off, hold by value, and fails if one is being loaded already: a
// struct that contains itself, which only malformed DWARF describes.
func (t *Types) checkContained(off uint64, ms []types.Member) error {
	for _, m := range ms {
		s := valueStruct(m.Type)
		if s == nil {
			continue
		}
		t.mu.Lock()
		again := t.conv.loading[s]
		t.mu.Unlock()
		if again {
			return t.wrap(fmt.Errorf("type at %#x contains itself", off))
		}
		if err := s.Err(); err != nil {
			return err
		}
	}
	return nil
}

// valueStruct returns the struct or union that a value of type ty is or
// holds, through typedefs, qualifiers and arrays, or nil. The chain was
// checked for cycles when it was converted.
func valueStruct(ty types.Type) *types.Struct {
	for {
		switch u := ty.(type) {
		case *types.Typedef:
			ty = u.Type
		case *types.Qualified:
			ty = u.Type
		case *types.Array:
			ty = u.Elem
		case *types.Struct:
			return u
		default:
			return nil
		}
	}
}

// storageSize returns the size of member m's type, read from the
// DWARF rather than from the converted type, which may be under
// conversion still.
func (t *Types) storageSize(m *die) int64 {
	cur := *m
	for range 16 {
		off, err := t.target(&cur, cur.typ)
		if err != nil || off == 0 {
			return 0
		}
		if cur, err = t.r.read(off); err != nil {
			return 0
		}
		if cur.byteSize.Form != 0 {
			n, _ := constant(cur.byteSize, false)
			return n
		}
	}
	return 0
}

// memberBits returns a member's offset in bits from the start of its
// struct, and its width if it is a bit-field. typeSize is the size of
// the member's type, the storage unit of an old-style bit-field that
// gives no DW_AT_byte_size. DWARF 4 and 5 give the offset of a
// bit-field's first bit (DW_AT_data_bit_offset); DWARF 2 and 3, which
// gcc still writes for -gdwarf-4, give the offset of its storage unit
// and, in DW_AT_bit_offset, the bits from the unit's most significant
// bit to the field's, which counts from the other end on little-endian
// machines.
func memberBits(m *die, typeSize int64, bigEndian bool) (off, width int64) {
	loc := memberLocation(m)
	width, _ = constant(m.bitSize, false)
	switch {
	case m.dataBitOffset.Form != 0:
		off, _ = constant(m.dataBitOffset, false)
	case m.bitOffset.Form != 0 && width > 0:
		bo, _ := constant(m.bitOffset, false)
		unit := typeSize
		if m.byteSize.Form != 0 {
			unit, _ = constant(m.byteSize, false)
		}
		if bigEndian {
			off = loc*8 + bo
		} else {
			off = loc*8 + unit*8 - bo - width
		}
	default:
		off = loc * 8
	}
	return off, width
}

// memberLocation returns DW_AT_data_member_location in bytes: a
// constant, or an expression adding a constant to the struct's address
// (DW_OP_plus_uconst, or DW_OP_constu and DW_OP_plus). Members of
// unions have none.
func memberLocation(m *die) int64 {
	if m.locExpr == nil {
		v, _ := constant(m.memberLoc, false)
		return v
	}
	b := dwarfread.Buf{Data: m.locExpr}
	var loc int64
	for b.Pos < len(b.Data) && b.Err == nil {
		switch op := b.U8(); op {
		case opPlusUconst:
			loc += int64(b.Uleb())
		case opConstu:
			loc = int64(b.Uleb())
		case opConsts:
			loc = b.Sleb()
		case opPlus:
		default:
			return loc
		}
	}
	return loc
}

// enumType converts an enumeration. Values of constant forms other
// than DW_FORM_sdata and DW_FORM_udata are read as signed when the enum
// or its underlying type has a signed encoding, else as unsigned (gcc
// writes negative values as sdata and gives the encoding; clang picks
// sdata or udata by the type's sign).
func (t *Types) enumType(d *die) (types.Type, error) {
	e := &types.Enum{Module: t.name, Name: string(d.name)}
	t.remember(d.off, e)
	if d.decl {
		e.Incomplete = true
		return e, nil
	}
	e.Bytes, _ = constant(d.byteSize, false)
	if e.Bytes == 0 {
		e.Bytes = 4
	}
	signed := t.signedEnum(d)
	err := t.r.children(d, func(c *die) error {
		if c.tag != tagEnumerator {
			return nil
		}
		v, _ := constant(c.value, signed)
		e.Values = append(e.Values, types.Enumerator{Name: string(c.name), Value: v})
		return nil
	})
	return e, err
}

func (t *Types) signedEnum(d *die) bool {
	if d.encoding.Form != 0 {
		enc, _ := constant(d.encoding, false)
		return enc == ateSigned || enc == ateSignedChar
	}
	cur := *d
	for range 8 {
		off, err := t.target(&cur, cur.typ)
		if err != nil || off == 0 {
			return false
		}
		if cur, err = t.r.read(off); err != nil {
			return false
		}
		if cur.tag == tagBaseType {
			enc, _ := constant(cur.encoding, false)
			return enc == ateSigned || enc == ateSignedChar
		}
	}
	return false
}

// arrayType converts an array; an array of several dimensions becomes
// arrays of arrays. A dimension without a known length (a flexible
// array member, or a variable-length array) has length 0.
func (t *Types) arrayType(d *die) (types.Type, error) {
	var lens []int64
	err := t.r.children(d, func(c *die) error {
		if c.tag == tagSubrangeType || c.tag == tagEnumerationType {
			lens = append(lens, subrangeLen(c))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(lens) == 0 {
		lens = []int64{0}
	}
	top := &types.Array{Len: lens[0]}
	t.remember(d.off, top)
	cur := top
	for _, n := range lens[1:] {
		a := &types.Array{Len: n}
		cur.Elem = a
		cur = a
	}
	elem, err := t.within(d.off, d, d.typ)
	cur.Elem = elem
	return top, err
}

// subrangeLen returns the length of a dimension: DW_AT_count, or
// DW_AT_upper_bound less DW_AT_lower_bound (C's 0) plus one. An upper
// bound of -1, which older gccs write for zero-length arrays, or none,
// gives 0.
func subrangeLen(c *die) int64 {
	if n, ok := constant(c.count, false); ok {
		return max(n, 0)
	}
	ub, ok := constant(c.upperBound, false)
	if !ok {
		return 0
	}
	switch {
	case c.upperBound.Form == dwarfread.FormData4 && c.upperBound.Val == 0xffffffff,
		c.upperBound.Form == dwarfread.FormData8 && c.upperBound.Val == ^uint64(0),
		ub < 0:
		return 0
	}
	lb, _ := constant(c.lowerBound, false)
	return max(ub-lb+1, 0)
}

// funcType converts a subroutine type or a subprogram, and returns the
// names of its parameters. DW_TAG_unspecified_parameters, which marks
// both a variadic function and one without a prototype, makes it
// variadic.
func (t *Types) funcType(d *die) (*types.Func, []string, error) {
	f := &types.Func{}
	t.remember(d.off, f)
	res, err := t.behind(d, d.typ)
	if err != nil {
		return nil, nil, err
	}
	f.Result = res
	var names []string
	err = t.r.children(d, func(c *die) error {
		switch c.tag {
		case tagFormalParameter:
			pt, err := t.behind(c, c.typ)
			if err != nil {
				return err
			}
			f.Params = append(f.Params, pt)
			names = append(names, string(c.name))
		case tagUnspecifiedParams:
			f.Variadic = true
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	t.conv.names[d.off] = names
	return f, names, nil
}

// function converts the subprogram at off. The caller holds t.mu.
func (t *Types) function(off uint64) (*types.Func, []string, error) {
	if ty, ok := t.conv.memo[off]; ok {
		if f, ok := ty.(*types.Func); ok {
			return f, t.conv.names[off], nil
		}
	}
	d, err := t.r.read(off)
	if err != nil {
		return nil, nil, t.wrap(err)
	}
	f, names, err := t.funcType(&d)
	t.settle(err)
	if err != nil {
		return nil, nil, t.wrap(err)
	}
	return f, names, nil
}

// canonical returns the index's DIE for the name of the struct, union,
// enum or typedef d, when d should stand for it: d is a declaration, or
// a definition of the same shape in another place.
func (t *Types) canonical(class int, d *die) (uint64, bool) {
	if len(d.name) == 0 {
		return 0, false
	}
	r, ok := t.x.lookup(class, string(d.name))
	switch {
	case !ok || r.off == d.off:
		return 0, false
	case d.decl:
		return r.off, true
	case r.decl:
		return 0, false
	}
	want, ok := t.conv.shapes[r.off]
	if !ok {
		e, err := t.r.read(r.off)
		if err != nil {
			return 0, false
		}
		want = t.shape(&e)
		t.conv.shapes[r.off] = want
	}
	return r.off, bytes.Equal(t.shape(d), want)
}

// shape describes what two copies of one C type share: tag, name and
// size; for a struct or union, its members' names, offsets and widths;
// for an enum, its enumerators; for a typedef, the tags of what it
// names down to the first named type, and that type's name and size.
// Members' types are left out: reading them made the comparison cost
// more than the conversion. Copies of one header's type agree; types
// that merely share a name almost always differ in layout.
func (t *Types) shape(d *die) []byte {
	sig := t.shapeHead(nil, d)
	if d.decl {
		return append(sig, 'd')
	}
	switch d.tag {
	case tagStructureType, tagClassType, tagUnionType:
		t.r.children(d, func(m *die) error {
			if m.tag != tagMember {
				return nil
			}
			sig = append(sig, m.name...)
			sig = append(sig, 0)
			if m.bitOffset.Form != 0 { // the storage unit's size is the type's
				bo, _ := constant(m.bitOffset, false)
				sig = binary.AppendVarint(sig, bo)
			}
			off, width := memberBits(m, 0, false)
			sig = binary.AppendVarint(sig, off)
			sig = binary.AppendVarint(sig, width)
			return nil
		})
	case tagEnumerationType:
		t.r.children(d, func(c *die) error {
			sig = append(sig, c.name...)
			sig = append(sig, 0)
			sig = binary.AppendUvarint(sig, c.value.Val)
			return nil
		})
	case tagTypedef:
		cur := *d
		for range 8 {
			off, err := t.target(&cur, cur.typ)
			if err != nil || off == 0 {
				return append(sig, 'v')
			}
			if cur, err = t.r.read(off); err != nil {
				return append(sig, '?')
			}
			sig = t.shapeHead(sig, &cur)
			if len(cur.name) > 0 {
				break
			}
		}
	}
	return sig
}

// shapeHead appends d's tag, name and size to sig.
func (t *Types) shapeHead(sig []byte, d *die) []byte {
	sig = binary.AppendUvarint(sig, uint64(d.tag))
	sig = append(sig, d.name...)
	sig = append(sig, 0)
	size, _ := constant(d.byteSize, false)
	return binary.AppendVarint(sig, size)
}
