package dwarftypes

import (
	"fmt"
	"sort"

	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
)

// This file reads single DIEs for the type index and the converter:
// unlike the kinst scanner, which skips everything but subprograms, it
// decodes the attributes that describe types.

// More DWARF constants (DWARF 5, §7.5).
const (
	tagArrayType         = 0x01
	tagClassType         = 0x02
	tagEnumerationType   = 0x04
	tagFormalParameter   = 0x05
	tagMember            = 0x0d
	tagPointerType       = 0x0f
	tagReferenceType     = 0x10
	tagStructureType     = 0x13
	tagSubroutineType    = 0x15
	tagTypedef           = 0x16
	tagUnionType         = 0x17
	tagUnspecifiedParams = 0x18
	tagPtrToMemberType   = 0x1f
	tagSubrangeType      = 0x21
	tagBaseType          = 0x24
	tagConstType         = 0x26
	tagEnumerator        = 0x28
	tagVariable          = 0x34
	tagVolatileType      = 0x35
	tagRestrictType      = 0x37
	tagUnspecifiedType   = 0x3b
	tagRvalueRefType     = 0x42
	tagAtomicType        = 0x47
	tagImmutableType     = 0x4b

	atSibling       = 0x01
	atByteSize      = 0x0b
	atBitOffset     = 0x0c
	atBitSize       = 0x0d
	atConstValue    = 0x1c
	atLowerBound    = 0x22
	atPrototyped    = 0x27
	atCount         = 0x37
	atDataMemberLoc = 0x38
	atEncoding      = 0x3e
	atUpperBound    = 0x2f
	atType          = 0x49
	atSignature     = 0x69
	atDataBitOffset = 0x6b

	opConstu     = 0x10
	opConsts     = 0x11
	opPlus       = 0x22
	opPlusUconst = 0x23

	ateAddress      = 0x01
	ateBoolean      = 0x02
	ateComplexFloat = 0x03
	ateFloat        = 0x04
	ateSigned       = 0x05
	ateSignedChar   = 0x06
	ateUnsigned     = 0x07
	ateUnsignedChar = 0x08
	ateDecimalFloat = 0x0f
	ateUTF          = 0x10

	utType = 0x02
)

// tabbrev is an abbreviation as the type reader needs it: with its tag,
// and where its DW_AT_sibling lies so that subtrees can be jumped over.
type tabbrev struct {
	defined  bool
	tag      uint32
	children bool
	fixed    int // the size of the attributes when all forms have fixed sizes; -1 otherwise
	// sib is the position of DW_AT_sibling among the attribute bytes
	// when every attribute before it has a fixed size, -1 otherwise.
	sib     int
	sibForm uint32
	attrs   []dwarfread.AttrSpec
}

// parseTypeAbbrevs reads the abbreviation table at off for unit u.
func parseTypeAbbrevs(data []byte, off uint64, u *dwarfread.Unit) ([]tabbrev, error) {
	tab, _, err := parseTypeAbbrevsInto(nil, nil, data, off, u)
	return tab, err
}

// parseTypeAbbrevsInto is parseTypeAbbrevs appending to tab and, for
// the attributes of all the abbreviations, all, which it returns for
// reuse.
func parseTypeAbbrevsInto(tab []tabbrev, all []dwarfread.AttrSpec, data []byte, off uint64, u *dwarfread.Unit) ([]tabbrev, []dwarfread.AttrSpec, error) {
	if off >= uint64(len(data)) {
		return nil, all, fmt.Errorf("abbreviation offset %#x out of range", off)
	}
	b := dwarfread.Buf{Data: data, Pos: int(off)}
	type span struct{ code, lo, hi int }
	var spans []span
	for {
		code := b.Uleb()
		if code == 0 || b.Err != nil {
			break
		}
		if code > 1<<20 {
			return nil, all, fmt.Errorf("abbreviation code %d too large", code)
		}
		a := tabbrev{defined: true, tag: uint32(b.Uleb()), children: b.U8() != 0, sib: -1}
		pos := 0 // the attribute's position, while all before have fixed sizes
		lo := len(all)
		for {
			at := uint32(b.Uleb())
			form := uint32(b.Uleb())
			if at == 0 && form == 0 || b.Err != nil {
				break
			}
			s := dwarfread.AttrSpec{Attr: at, Form: form}
			if form == dwarfread.FormImplicitConst {
				s.Implicit = b.Sleb()
			}
			if at == atSibling && pos >= 0 && dwarfread.FormSize(form, u) > 0 {
				a.sib, a.sibForm = pos, form
			}
			if n := dwarfread.FormSize(form, u); n >= 0 && pos >= 0 {
				pos += n
			} else {
				pos = -1
			}
			all = append(all, s)
		}
		a.fixed = pos
		for uint64(len(tab)) <= code {
			tab = append(tab, tabbrev{})
		}
		tab[code] = a
		spans = append(spans, span{int(code), lo, len(all)})
	}
	if b.Err != nil {
		return nil, all, fmt.Errorf("abbreviations at %#x: %w", off, b.Err)
	}
	for _, sp := range spans {
		tab[sp.code].attrs = all[sp.lo:sp.hi:sp.hi]
	}
	return tab, all, nil
}

// typeUnit is a unit with what reading its DIEs needs.
type typeUnit struct {
	dwarfread.UnitCtx
	tab []tabbrev
}

// typeReader reads DIEs anywhere in .debug_info. It is not safe for
// concurrent use; the index builder gives each worker its own.
type typeReader struct {
	secs   *dwarfread.DwarfSections
	units  []dwarfread.Unit
	ready  []*typeUnit          // by unit index, filled on first use
	tables map[uint64][]tabbrev // abbreviation tables by offset
}

func newTypeReader(secs *dwarfread.DwarfSections, units []dwarfread.Unit) *typeReader {
	return &typeReader{secs: secs, units: units, ready: make([]*typeUnit, len(units)), tables: map[uint64][]tabbrev{}}
}

// unitAt returns the unit holding the DIE at .debug_info offset off.
func (r *typeReader) unitAt(off uint64) (*typeUnit, error) {
	i := sort.Search(len(r.units), func(i int) bool { return uint64(r.units[i].End) > off })
	if i == len(r.units) || off < uint64(r.units[i].Dies) {
		return nil, fmt.Errorf("no DIE at offset %#x", off)
	}
	return r.unit(i)
}

// unit prepares unit i: its abbreviations and, from its root DIE, the
// base of its string offsets.
func (r *typeReader) unit(i int) (*typeUnit, error) {
	if tu := r.ready[i]; tu != nil {
		return tu, nil
	}
	u := &r.units[i]
	tab, ok := r.tables[u.AbbrevOff]
	if !ok {
		var err error
		if tab, err = parseTypeAbbrevs(r.secs.Abbrev, u.AbbrevOff, u); err != nil {
			return nil, fmt.Errorf("unit at %#x: %w", u.Off, err)
		}
		r.tables[u.AbbrevOff] = tab
	}
	tu := &typeUnit{UnitCtx: dwarfread.UnitCtx{Unit: u}, tab: tab}
	b := dwarfread.Buf{Data: r.secs.Info[:u.End], Pos: u.Dies}
	code := b.Uleb()
	if code == 0 || code >= uint64(len(tab)) || !tab[code].defined {
		return nil, fmt.Errorf("unit at %#x: bad root DIE", u.Off)
	}
	tu.StrOffsetsBase = rootStrOffsetsBase(&b, &tab[code], u)
	if b.Err != nil {
		return nil, fmt.Errorf("unit at %#x: root DIE: %w", u.Off, b.Err)
	}
	r.ready[i] = tu
	return tu, nil
}

// die is a decoded DIE: its tag and the attributes types are made of.
// Attributes are raw; form 0 means absent.
type die struct {
	off      uint64
	u        *typeUnit
	tag      uint32
	children bool
	end      int // the offset just past the attributes: the first child's
	name     []byte

	typ, sibling, spec, signature        dwarfread.Attr
	byteSize, bitSize                    dwarfread.Attr
	bitOffset, dataBitOffset, memberLoc  dwarfread.Attr
	count, upperBound, lowerBound, value dwarfread.Attr
	encoding                             dwarfread.Attr
	locExpr                              []byte // DW_AT_data_member_location as an expression
	decl, prototyped                     bool
}

// read decodes the DIE at off. A null entry is an error.
func (r *typeReader) read(off uint64) (die, error) {
	tu, err := r.unitAt(off)
	if err != nil {
		return die{}, err
	}
	return r.readIn(tu, off)
}

// readIn decodes the DIE at off in unit tu.
func (r *typeReader) readIn(tu *typeUnit, off uint64) (die, error) {
	d := die{off: off, u: tu}
	var name dwarfread.Attr
	end, err := readDIE(r.secs.Info, tu, off, &d.tag, &d.children, func(sp *dwarfread.AttrSpec, at dwarfread.Attr, blk []byte) {
		v := at.Val
		switch sp.Attr {
		case dwarfread.AtName:
			name = at
		case atType:
			d.typ = at
		case atSibling:
			d.sibling = at
		case dwarfread.AtSpecification:
			d.spec = at
		case atSignature:
			d.signature = at
		case atByteSize:
			d.byteSize = at
		case atBitSize:
			d.bitSize = at
		case atBitOffset:
			d.bitOffset = at
		case atDataBitOffset:
			d.dataBitOffset = at
		case atDataMemberLoc:
			d.memberLoc, d.locExpr = at, blk
		case atCount:
			d.count = at
		case atUpperBound:
			d.upperBound = at
		case atLowerBound:
			d.lowerBound = at
		case atConstValue:
			d.value = at
		case atEncoding:
			d.encoding = at
		case dwarfread.AtDeclaration:
			d.decl = v != 0
		case atPrototyped:
			d.prototyped = v != 0
		}
	})
	if err != nil {
		return d, err
	}
	d.end = end
	if name.Form != 0 {
		s, ok := r.secs.AttrString(name, &tu.UnitCtx)
		if !ok {
			return d, fmt.Errorf("DIE at %#x: bad name", off)
		}
		d.name = s
	}
	return d, nil
}

// readDIE decodes the DIE at off in unit tu of the section info: its
// tag and whether it has children, then fn is called with each of its
// attributes, a block's or expression's bytes in blk. It returns the
// offset after the DIE.
func readDIE(info []byte, tu *typeUnit, off uint64, tag *uint32, children *bool, fn func(sp *dwarfread.AttrSpec, at dwarfread.Attr, blk []byte)) (int, error) {
	if off >= uint64(tu.End) {
		return 0, fmt.Errorf("DIE offset %#x outside its unit", off)
	}
	b := dwarfread.Buf{Data: info[:tu.End], Pos: int(off)}
	code := b.Uleb()
	if code == 0 || code >= uint64(len(tu.tab)) || !tu.tab[code].defined {
		return 0, fmt.Errorf("DIE at %#x: bad abbreviation code %d", off, code)
	}
	a := &tu.tab[code]
	*tag, *children = a.tag, a.children
	for i := range a.attrs {
		sp := &a.attrs[i]
		form := sp.Form
		if form == dwarfread.FormIndirect {
			form = uint32(b.Uleb())
		}
		var v uint64
		var blk []byte
		switch form {
		case dwarfread.FormBlock1, dwarfread.FormBlock2, dwarfread.FormBlock4, dwarfread.FormBlock, dwarfread.FormExprloc:
			blk = b.Block(form)
		default:
			v = b.Value(form, sp, tu.Unit)
		}
		fn(sp, dwarfread.Attr{Form: form, Val: v}, blk)
	}
	if b.Err != nil {
		return 0, fmt.Errorf("DIE at %#x: %w", off, b.Err)
	}
	return b.Pos, nil
}

// next returns the offset of the DIE after d and its descendants: its
// sibling, or the null entry that ends d's parent's children.
func (r *typeReader) next(d *die) (uint64, error) {
	if !d.children {
		return uint64(d.end), nil
	}
	if d.sibling.Form != 0 {
		if s, ok := dwarfread.Ref(d.sibling, d.u.Unit); ok && s > d.off && s <= uint64(d.u.End) {
			return s, nil
		}
	}
	return r.skipChildren(d.u, d.end)
}

// skipChildren walks from pos, the first child of some DIE, to just
// past the null entry that ends its children.
func (r *typeReader) skipChildren(tu *typeUnit, pos int) (uint64, error) {
	b := dwarfread.Buf{Data: r.secs.Info[:tu.End], Pos: pos}
	depth := 1
	for depth > 0 {
		if b.Pos >= len(b.Data) {
			return 0, fmt.Errorf("children at %#x: %w", pos, dwarfread.ErrTruncated)
		}
		at := b.Pos
		code := b.Uleb()
		if code == 0 {
			depth--
			continue
		}
		if code >= uint64(len(tu.tab)) || !tu.tab[code].defined {
			return 0, fmt.Errorf("DIE at %#x: bad abbreviation code %d", at, code)
		}
		a := &tu.tab[code]
		if a.children && a.sib >= 0 {
			sb := dwarfread.Buf{Data: b.Data, Pos: b.Pos + a.sib}
			if s, ok := dwarfread.Ref(dwarfread.Attr{Form: a.sibForm, Val: sb.Value(a.sibForm, nil, tu.Unit)}, tu.Unit); ok && sb.Err == nil && s > uint64(at) && s <= uint64(tu.End) {
				b.Pos = int(s)
				continue
			}
		}
		skipAttrs(&b, a, tu.Unit)
		if b.Err != nil {
			return 0, fmt.Errorf("DIE at %#x: %w", at, b.Err)
		}
		if a.children {
			depth++
		}
	}
	return uint64(b.Pos), nil
}

// skipAttrs moves past the attributes of a DIE with abbreviation a.
func skipAttrs(b *dwarfread.Buf, a *tabbrev, u *dwarfread.Unit) {
	if a.fixed >= 0 {
		b.Skip(uint64(a.fixed))
		return
	}
	for i := range a.attrs {
		b.Value(a.attrs[i].Form, &a.attrs[i], u)
	}
}

// children calls fn with each child of d, in order.
func (r *typeReader) children(d *die, fn func(c *die) error) error {
	if !d.children {
		return nil
	}
	pos := uint64(d.end)
	for {
		if pos >= uint64(d.u.End) {
			return fmt.Errorf("children of DIE at %#x: %w", d.off, dwarfread.ErrTruncated)
		}
		if r.secs.Info[pos] == 0 {
			return nil
		}
		c, err := r.readIn(d.u, pos)
		if err != nil {
			return err
		}
		if err := fn(&c); err != nil {
			return err
		}
		if pos, err = r.next(&c); err != nil {
			return err
		}
	}
}

// constant returns the value of a constant attribute, sign-extended
// when signed says so or the form is DW_FORM_sdata. ok is false for
// other classes (a reference or an expression, as a variable-length
// array's bound is).
func constant(a dwarfread.Attr, signed bool) (v int64, ok bool) {
	switch a.Form {
	case dwarfread.FormSdata, dwarfread.FormImplicitConst:
		return int64(a.Val), true
	case dwarfread.FormUdata:
		return int64(a.Val), true
	case dwarfread.FormData1:
		if signed {
			return int64(int8(a.Val)), true
		}
		return int64(a.Val), true
	case dwarfread.FormData2:
		if signed {
			return int64(int16(a.Val)), true
		}
		return int64(a.Val), true
	case dwarfread.FormData4:
		if signed {
			return int64(int32(a.Val)), true
		}
		return int64(a.Val), true
	case dwarfread.FormData8:
		return int64(a.Val), true
	}
	return 0, false
}
