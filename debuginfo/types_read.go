package debuginfo

import (
	"fmt"
	"sort"
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
	attrs   []attrSpec
}

// parseTypeAbbrevs reads the abbreviation table at off for unit u.
func parseTypeAbbrevs(data []byte, off uint64, u *unit) ([]tabbrev, error) {
	tab, _, err := parseTypeAbbrevsInto(nil, nil, data, off, u)
	return tab, err
}

// parseTypeAbbrevsInto is parseTypeAbbrevs appending to tab and, for
// the attributes of all the abbreviations, all, which it returns for
// reuse.
func parseTypeAbbrevsInto(tab []tabbrev, all []attrSpec, data []byte, off uint64, u *unit) ([]tabbrev, []attrSpec, error) {
	if off >= uint64(len(data)) {
		return nil, all, fmt.Errorf("abbreviation offset %#x out of range", off)
	}
	b := buf{data: data, pos: int(off)}
	type span struct{ code, lo, hi int }
	var spans []span
	for {
		code := b.uleb()
		if code == 0 || b.err != nil {
			break
		}
		if code > 1<<20 {
			return nil, all, fmt.Errorf("abbreviation code %d too large", code)
		}
		a := tabbrev{defined: true, tag: uint32(b.uleb()), children: b.u8() != 0, sib: -1}
		pos := 0 // the attribute's position, while all before have fixed sizes
		lo := len(all)
		for {
			at := uint32(b.uleb())
			form := uint32(b.uleb())
			if at == 0 && form == 0 || b.err != nil {
				break
			}
			s := attrSpec{attr: at, form: form}
			if form == formImplicitConst {
				s.implicit = b.sleb()
			}
			if at == atSibling && pos >= 0 && formSize(form, u) > 0 {
				a.sib, a.sibForm = pos, form
			}
			if n := formSize(form, u); n >= 0 && pos >= 0 {
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
	if b.err != nil {
		return nil, all, fmt.Errorf("abbreviations at %#x: %w", off, b.err)
	}
	for _, sp := range spans {
		tab[sp.code].attrs = all[sp.lo:sp.hi:sp.hi]
	}
	return tab, all, nil
}

// typeUnit is a unit with what reading its DIEs needs.
type typeUnit struct {
	unitCtx
	tab []tabbrev
}

// typeReader reads DIEs anywhere in .debug_info. It is not safe for
// concurrent use; the index builder gives each worker its own.
type typeReader struct {
	secs   *dwarfSections
	units  []unit
	ready  []*typeUnit          // by unit index, filled on first use
	tables map[uint64][]tabbrev // abbreviation tables by offset
}

func newTypeReader(secs *dwarfSections, units []unit) *typeReader {
	return &typeReader{secs: secs, units: units, ready: make([]*typeUnit, len(units)), tables: map[uint64][]tabbrev{}}
}

// unitAt returns the unit holding the DIE at .debug_info offset off.
func (r *typeReader) unitAt(off uint64) (*typeUnit, error) {
	i := sort.Search(len(r.units), func(i int) bool { return uint64(r.units[i].end) > off })
	if i == len(r.units) || off < uint64(r.units[i].dies) {
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
	tab, ok := r.tables[u.abbrevOff]
	if !ok {
		var err error
		if tab, err = parseTypeAbbrevs(r.secs.abbrev, u.abbrevOff, u); err != nil {
			return nil, fmt.Errorf("unit at %#x: %w", u.off, err)
		}
		r.tables[u.abbrevOff] = tab
	}
	tu := &typeUnit{unitCtx: unitCtx{unit: u}, tab: tab}
	b := buf{data: r.secs.info[:u.end], pos: u.dies}
	code := b.uleb()
	if code == 0 || code >= uint64(len(tab)) || !tab[code].defined {
		return nil, fmt.Errorf("unit at %#x: bad root DIE", u.off)
	}
	tu.strOffsetsBase = rootStrOffsetsBase(&b, &tab[code], u)
	if b.err != nil {
		return nil, fmt.Errorf("unit at %#x: root DIE: %w", u.off, b.err)
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

	typ, sibling, spec, signature        attr
	byteSize, bitSize                    attr
	bitOffset, dataBitOffset, memberLoc  attr
	count, upperBound, lowerBound, value attr
	encoding                             attr
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
	var name attr
	end, err := readDIE(r.secs.info, tu, off, &d.tag, &d.children, func(sp *attrSpec, at attr, blk []byte) {
		v := at.val
		switch sp.attr {
		case atName:
			name = at
		case atType:
			d.typ = at
		case atSibling:
			d.sibling = at
		case atSpecification:
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
		case atDeclaration:
			d.decl = v != 0
		case atPrototyped:
			d.prototyped = v != 0
		}
	})
	if err != nil {
		return d, err
	}
	d.end = end
	if name.form != 0 {
		s, ok := r.secs.attrString(name, &tu.unitCtx)
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
func readDIE(info []byte, tu *typeUnit, off uint64, tag *uint32, children *bool, fn func(sp *attrSpec, at attr, blk []byte)) (int, error) {
	if off >= uint64(tu.end) {
		return 0, fmt.Errorf("DIE offset %#x outside its unit", off)
	}
	b := buf{data: info[:tu.end], pos: int(off)}
	code := b.uleb()
	if code == 0 || code >= uint64(len(tu.tab)) || !tu.tab[code].defined {
		return 0, fmt.Errorf("DIE at %#x: bad abbreviation code %d", off, code)
	}
	a := &tu.tab[code]
	*tag, *children = a.tag, a.children
	for i := range a.attrs {
		sp := &a.attrs[i]
		form := sp.form
		if form == formIndirect {
			form = uint32(b.uleb())
		}
		var v uint64
		var blk []byte
		switch form {
		case formBlock1, formBlock2, formBlock4, formBlock, formExprloc:
			blk = b.block(form)
		default:
			v = b.value(form, sp, tu.unit)
		}
		fn(sp, attr{form, v}, blk)
	}
	if b.err != nil {
		return 0, fmt.Errorf("DIE at %#x: %w", off, b.err)
	}
	return b.pos, nil
}

// block reads a block or expression and returns its bytes.
func (b *buf) block(form uint32) []byte {
	var n uint64
	switch form {
	case formBlock1:
		n = uint64(b.u8())
	case formBlock2:
		n = uint64(b.u16())
	case formBlock4:
		n = uint64(b.u32())
	default:
		n = b.uleb()
	}
	if b.err != nil || uint64(len(b.data)-b.pos) < n {
		b.fail()
		return nil
	}
	blk := b.data[b.pos : b.pos+int(n)]
	b.pos += int(n)
	return blk
}

// next returns the offset of the DIE after d and its descendants: its
// sibling, or the null entry that ends d's parent's children.
func (r *typeReader) next(d *die) (uint64, error) {
	if !d.children {
		return uint64(d.end), nil
	}
	if d.sibling.form != 0 {
		if s, ok := ref(d.sibling, d.u.unit); ok && s > d.off && s <= uint64(d.u.end) {
			return s, nil
		}
	}
	return r.skipChildren(d.u, d.end)
}

// skipChildren walks from pos, the first child of some DIE, to just
// past the null entry that ends its children.
func (r *typeReader) skipChildren(tu *typeUnit, pos int) (uint64, error) {
	b := buf{data: r.secs.info[:tu.end], pos: pos}
	depth := 1
	for depth > 0 {
		if b.pos >= len(b.data) {
			return 0, fmt.Errorf("children at %#x: %w", pos, errTruncated)
		}
		at := b.pos
		code := b.uleb()
		if code == 0 {
			depth--
			continue
		}
		if code >= uint64(len(tu.tab)) || !tu.tab[code].defined {
			return 0, fmt.Errorf("DIE at %#x: bad abbreviation code %d", at, code)
		}
		a := &tu.tab[code]
		if a.children && a.sib >= 0 {
			sb := buf{data: b.data, pos: b.pos + a.sib}
			if s, ok := ref(attr{a.sibForm, sb.value(a.sibForm, nil, tu.unit)}, tu.unit); ok && sb.err == nil && s > uint64(at) && s <= uint64(tu.end) {
				b.pos = int(s)
				continue
			}
		}
		skipAttrs(&b, a, tu.unit)
		if b.err != nil {
			return 0, fmt.Errorf("DIE at %#x: %w", at, b.err)
		}
		if a.children {
			depth++
		}
	}
	return uint64(b.pos), nil
}

// skipAttrs moves past the attributes of a DIE with abbreviation a.
func skipAttrs(b *buf, a *tabbrev, u *unit) {
	if a.fixed >= 0 {
		b.skip(uint64(a.fixed))
		return
	}
	for i := range a.attrs {
		b.value(a.attrs[i].form, &a.attrs[i], u)
	}
}

// children calls fn with each child of d, in order.
func (r *typeReader) children(d *die, fn func(c *die) error) error {
	if !d.children {
		return nil
	}
	pos := uint64(d.end)
	for {
		if pos >= uint64(d.u.end) {
			return fmt.Errorf("children of DIE at %#x: %w", d.off, errTruncated)
		}
		if r.secs.info[pos] == 0 {
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
func constant(a attr, signed bool) (v int64, ok bool) {
	switch a.form {
	case formSdata, formImplicitConst:
		return int64(a.val), true
	case formUdata:
		return int64(a.val), true
	case formData1:
		if signed {
			return int64(int8(a.val)), true
		}
		return int64(a.val), true
	case formData2:
		if signed {
			return int64(int16(a.val)), true
		}
		return int64(a.val), true
	case formData4:
		if signed {
			return int64(int32(a.val)), true
		}
		return int64(a.val), true
	case formData8:
		return int64(a.val), true
	}
	return 0, false
}
