package dwarfread

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// This file is the DIE scanner specialised for the index. debug/dwarf
// decodes every attribute of every DIE into an allocated Entry, which
// costs most of the 5 s a vmlinux walk takes; the scanner instead skips
// the attributes it does not need by their form's size and allocates
// nothing per DIE.

// DwarfSections holds the DWARF sections the index reads. All are
// little-endian (the only byte order accepted by elffile.Open).
type DwarfSections struct {
	Info, Abbrev, Str, LineStr, StrOffsets, Addr, Ranges, RngLists, Line []byte
	Loc, LocLists                                                        []byte // for locals' locations
	// InfoAt reads the bytes of Info from the file when Info is a
	// mapping of it (nil otherwise): a search of the whole section
	// through it costs no resident pages, where reading the mapping
	// would count every page touched.
	InfoAt io.ReaderAt
}

// DWARF constants, from the DWARF 5 standard, §7.
const (
	tagCompileUnit       = 0x11
	TagInlinedSubroutine = 0x1d
	TagSubprogram        = 0x2e
	tagPartialUnit       = 0x3c

	AtName            = 0x03
	AtStmtList        = 0x10
	AtLowPC           = 0x11
	AtHighPC          = 0x12
	AtCompDir         = 0x1b
	AtInline          = 0x20
	AtAbstractOrigin  = 0x31
	AtDeclaration     = 0x3c
	AtSpecification   = 0x47
	AtEntryPC         = 0x52
	AtRanges          = 0x55
	AtCallFile        = 0x58
	AtCallLine        = 0x59
	AtStrOffsetsBase  = 0x72
	AtAddrBase        = 0x73
	AtRnglistsBase    = 0x74
	AtGNUAddrBase     = 0x2133
	AtGNUEntryView    = 0x2138
	UtCompile         = 0x01
	UtPartial         = 0x03
	formAddr          = 0x01
	FormBlock2        = 0x03
	FormBlock4        = 0x04
	FormData2         = 0x05
	FormData4         = 0x06
	FormData8         = 0x07
	FormString        = 0x08
	FormBlock         = 0x09
	FormBlock1        = 0x0a
	FormData1         = 0x0b
	formFlag          = 0x0c
	FormSdata         = 0x0d
	FormStrp          = 0x0e
	FormUdata         = 0x0f
	formRefAddr       = 0x10
	formRef1          = 0x11
	formRef2          = 0x12
	formRef4          = 0x13
	formRef8          = 0x14
	formRefUdata      = 0x15
	FormIndirect      = 0x16
	FormSecOffset     = 0x17
	FormExprloc       = 0x18
	formFlagPresent   = 0x19
	FormStrx          = 0x1a
	formAddrx         = 0x1b
	formRefSup4       = 0x1c
	formStrpSup       = 0x1d
	formData16        = 0x1e
	formLineStrp      = 0x1f
	FormRefSig8       = 0x20
	FormImplicitConst = 0x21
	FormLoclistx      = 0x22
	formRnglistx      = 0x23
	formRefSup8       = 0x24
	FormStrx1         = 0x25
	FormStrx2         = 0x26
	FormStrx3         = 0x27
	FormStrx4         = 0x28
	formAddrx1        = 0x29
	formAddrx2        = 0x2a
	formAddrx3        = 0x2b
	formAddrx4        = 0x2c
	formGNUAddrIndex  = 0x1f01
	FormGNUStrIndex   = 0x1f02
	formGNURefAlt     = 0x1f20
	formGNUStrpAlt    = 0x1f21
)

var ErrTruncated = errors.New("truncated DWARF data")

// Buf is a cursor over one section. Reads past the end set err and
// return zero, so callers check err once per DIE instead of per read.
type Buf struct {
	Data []byte
	Pos  int
	Err  error
}

func (b *Buf) Fail() {
	if b.Err == nil {
		b.Err = fmt.Errorf("%w at offset %#x", ErrTruncated, b.Pos)
	}
	b.Pos = len(b.Data)
}

func (b *Buf) U8() uint8 {
	if b.Pos >= len(b.Data) {
		b.Fail()
		return 0
	}
	v := b.Data[b.Pos]
	b.Pos++
	return v
}

func (b *Buf) U16() uint16 {
	if len(b.Data)-b.Pos < 2 {
		b.Fail()
		return 0
	}
	v := binary.LittleEndian.Uint16(b.Data[b.Pos:])
	b.Pos += 2
	return v
}

func (b *Buf) u24() uint32 {
	if len(b.Data)-b.Pos < 3 {
		b.Fail()
		return 0
	}
	d := b.Data[b.Pos:]
	b.Pos += 3
	return uint32(d[0]) | uint32(d[1])<<8 | uint32(d[2])<<16
}

func (b *Buf) U32() uint32 {
	if len(b.Data)-b.Pos < 4 {
		b.Fail()
		return 0
	}
	v := binary.LittleEndian.Uint32(b.Data[b.Pos:])
	b.Pos += 4
	return v
}

func (b *Buf) U64() uint64 {
	if len(b.Data)-b.Pos < 8 {
		b.Fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(b.Data[b.Pos:])
	b.Pos += 8
	return v
}

func (b *Buf) Uleb() uint64 {
	var v uint64
	var shift uint
	for b.Pos < len(b.Data) {
		c := b.Data[b.Pos]
		b.Pos++
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v
		}
		shift += 7
	}
	b.Fail()
	return 0
}

func (b *Buf) Sleb() int64 {
	var v int64
	var shift uint
	for b.Pos < len(b.Data) {
		c := b.Data[b.Pos]
		b.Pos++
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
	b.Fail()
	return 0
}

func (b *Buf) Skip(n uint64) {
	if uint64(len(b.Data)-b.Pos) < n {
		b.Fail()
		return
	}
	b.Pos += int(n)
}

// Cstring returns the NUL-terminated string at the cursor, without
// copying.
func (b *Buf) Cstring() []byte {
	for i := b.Pos; i < len(b.Data); i++ {
		if b.Data[i] == 0 {
			s := b.Data[b.Pos:i]
			b.Pos = i + 1
			return s
		}
	}
	b.Fail()
	return nil
}

// Offset reads a section offset, 4 or 8 bytes in the 32- or 64-bit
// DWARF format.
func (b *Buf) Offset(dwarf64 bool) uint64 {
	if dwarf64 {
		return b.U64()
	}
	return uint64(b.U32())
}

func (b *Buf) Addr(size int) uint64 {
	switch size {
	case 8:
		return b.U64()
	case 4:
		return uint64(b.U32())
	case 2:
		return uint64(b.U16())
	}
	b.Fail()
	return 0
}

// UnitLength reads an initial length field.
func (b *Buf) UnitLength() (n uint64, dwarf64 bool) {
	n = uint64(b.U32())
	if n == 0xffffffff {
		return b.U64(), true
	}
	return n, false
}

// Unit is one unit header of .debug_info.
type Unit struct {
	Off       int // of the header
	Dies      int // of the first DIE
	End       int
	Vers      int
	Utype     uint8
	AddrSize  int
	Dwarf64   bool
	AbbrevOff uint64
}

// ParseUnits reads the unit headers, without touching the DIEs.
func ParseUnits(info []byte) ([]Unit, error) {
	var units []Unit
	for off := 0; off < len(info); {
		u, err := parseUnit(info, off, len(info))
		if err != nil {
			return nil, fmt.Errorf("unit at %#x: %w", off, err)
		}
		units = append(units, u)
		off = u.End
	}
	return units, nil
}

// ParseUnitsAt is ParseUnits reading the headers of a .debug_info of
// size bytes through r: reading a header in a mapping would make the
// pages around it resident, a sixth of .debug_info for a vmlinux.
func ParseUnitsAt(r io.ReaderAt, size int) ([]Unit, error) {
	var units []Unit
	var hdr [maxUnitHeader]byte
	for off := 0; off < size; {
		n, err := r.ReadAt(hdr[:min(len(hdr), size-off)], int64(off))
		if n < min(len(hdr), size-off) {
			return nil, fmt.Errorf("unit at %#x: %w", off, err)
		}
		// The header is parsed as the start of a section of the bytes
		// left, then placed at its offset.
		u, err := parseUnit(hdr[:n], 0, size-off)
		if err != nil {
			return nil, fmt.Errorf("unit at %#x: %w", off, err)
		}
		u.Off, u.Dies, u.End = off, off+u.Dies, off+u.End
		units = append(units, u)
		off = u.End
	}
	return units, nil
}

// maxUnitHeader is the size of the longest unit header: a DWARF64 type
// unit's.
const maxUnitHeader = 12 + 2 + 1 + 1 + 8 + 8 + 8

// parseUnit reads the header of the unit at off of data, the start of a
// .debug_info of size bytes.
func parseUnit(data []byte, off, size int) (Unit, error) {
	b := Buf{Data: data, Pos: off}
	u := Unit{Off: off}
	n, dwarf64 := b.UnitLength()
	u.Dwarf64 = dwarf64
	if b.Err != nil || n > uint64(size-b.Pos) {
		return u, errors.New("bad length")
	}
	u.End = b.Pos + int(n)
	u.Vers = int(b.U16())
	switch {
	case u.Vers >= 2 && u.Vers <= 4:
		u.Utype = UtCompile
		u.AbbrevOff = b.Offset(dwarf64)
		u.AddrSize = int(b.U8())
	case u.Vers == 5:
		u.Utype = b.U8()
		u.AddrSize = int(b.U8())
		u.AbbrevOff = b.Offset(dwarf64)
		switch u.Utype {
		case 0x04, 0x05: // skeleton, split_compile: dwo_id
			b.Skip(8)
		case 0x02, 0x06: // type, split_type: signature and type offset
			b.Skip(8)
			b.Offset(dwarf64)
		}
	default:
		return u, fmt.Errorf("unsupported DWARF version %d", u.Vers)
	}
	if b.Err != nil {
		return u, b.Err
	}
	u.Dies = b.Pos
	return u, nil
}

// Kinds of DIE the scanner decodes; all others are skipped.
const (
	KindSkip = iota
	KindUnit
	KindSubprogram
	KindInlined
)

type AttrSpec struct {
	Attr     uint32
	Form     uint32
	Implicit int64
}

type abbrev struct {
	Defined  bool
	Kind     uint8
	Children bool
	// Fixed is the size of the DIE's attributes when every form has a
	// fixed size, so that uninteresting DIEs are skipped in one step;
	// -1 otherwise.
	Fixed int
	Attrs []AttrSpec
}

// ParseAbbrevs reads the abbreviation table at off, indexed by code.
func ParseAbbrevs(data []byte, off uint64, u *Unit) ([]abbrev, error) {
	if off >= uint64(len(data)) {
		return nil, fmt.Errorf("abbreviation offset %#x out of range", off)
	}
	b := Buf{Data: data, Pos: int(off)}
	var tab []abbrev
	for {
		code := b.Uleb()
		if code == 0 || b.Err != nil {
			break
		}
		if code > 1<<20 {
			return nil, fmt.Errorf("abbreviation code %d too large", code)
		}
		tag := b.Uleb()
		a := abbrev{Defined: true, Children: b.U8() != 0}
		switch tag {
		case tagCompileUnit, tagPartialUnit:
			a.Kind = KindUnit
		case TagSubprogram:
			a.Kind = KindSubprogram
		case TagInlinedSubroutine:
			a.Kind = KindInlined
		}
		for {
			at := uint32(b.Uleb())
			form := uint32(b.Uleb())
			if at == 0 && form == 0 || b.Err != nil {
				break
			}
			s := AttrSpec{Attr: at, Form: form}
			if form == FormImplicitConst {
				s.Implicit = b.Sleb()
			}
			a.Attrs = append(a.Attrs, s)
		}
		a.Fixed = 0
		for _, s := range a.Attrs {
			n := FormSize(s.Form, u)
			if n < 0 {
				a.Fixed = -1
				break
			}
			a.Fixed += n
		}
		for uint64(len(tab)) <= code {
			tab = append(tab, abbrev{})
		}
		tab[code] = a
	}
	if b.Err != nil {
		return nil, fmt.Errorf("abbreviations at %#x: %w", off, b.Err)
	}
	return tab, nil
}

// Uses of attribute forms in an abbreviation table that decide which
// units a lookup by name must read (see AbbrevUses).
const (
	// UsesRefAddr: a subprogram or inlined subroutine may refer to its
	// origin or specification in another unit (DW_FORM_ref_addr).
	UsesRefAddr = 1 << iota
	// UsesStrx: a subprogram's name may be an index into
	// .debug_str_offsets.
	UsesStrx
	// UsesString: a subprogram's name may be in .debug_info itself.
	UsesString
)

// AbbrevUses reads the abbreviation table at off and reports the Uses
// flags of its subprogram and inlined subroutine entries. An indirect
// form may be any, so it sets every flag of its attribute. It decodes
// no table, for it runs on every unit of a lookup.
func AbbrevUses(data []byte, off uint64) (uint8, error) {
	if off >= uint64(len(data)) {
		return 0, fmt.Errorf("abbreviation offset %#x out of range", off)
	}
	b := Buf{Data: data, Pos: int(off)}
	var uses uint8
	for {
		if b.Uleb() == 0 || b.Err != nil {
			break
		}
		tag := b.Uleb()
		b.U8() // children
		fn := tag == TagSubprogram || tag == TagInlinedSubroutine
		for {
			at := b.Uleb()
			form := uint32(b.Uleb())
			if at == 0 && form == 0 || b.Err != nil {
				break
			}
			if form == FormImplicitConst {
				b.Sleb()
			}
			if !fn {
				continue
			}
			switch at {
			case AtAbstractOrigin, AtSpecification:
				if form == formRefAddr || form == FormIndirect {
					uses |= UsesRefAddr
				}
			case AtName:
				switch form {
				case FormStrx, FormStrx1, FormStrx2, FormStrx3, FormStrx4, FormGNUStrIndex:
					uses |= UsesStrx
				case FormString:
					uses |= UsesString
				case FormIndirect:
					uses |= UsesStrx | UsesString
				}
			}
		}
	}
	if b.Err != nil {
		return 0, fmt.Errorf("abbreviations at %#x: %w", off, b.Err)
	}
	return uses, nil
}

// FormSize returns the encoded size of a form, or -1 if it varies.
func FormSize(form uint32, u *Unit) int {
	off := 4
	if u.Dwarf64 {
		off = 8
	}
	switch form {
	case formFlagPresent, FormImplicitConst:
		return 0
	case FormData1, formRef1, formFlag, FormStrx1, formAddrx1:
		return 1
	case FormData2, formRef2, FormStrx2, formAddrx2:
		return 2
	case FormStrx3, formAddrx3:
		return 3
	case FormData4, formRef4, formRefSup4, FormStrx4, formAddrx4:
		return 4
	case FormData8, formRef8, FormRefSig8, formRefSup8:
		return 8
	case formData16:
		return 16
	case formAddr:
		return u.AddrSize
	case formRefAddr:
		if u.Vers == 2 {
			return u.AddrSize
		}
		return off
	case FormStrp, FormSecOffset, formLineStrp, formStrpSup, formGNURefAlt, formGNUStrpAlt:
		return off
	}
	return -1
}

// Value reads one attribute value. Scalars, references, offsets and
// indexes are returned as they are encoded; for DW_FORM_string the result
// is the string's offset in the unit's section, and blocks are skipped.
func (b *Buf) Value(form uint32, s *AttrSpec, u *Unit) uint64 {
	switch form {
	case formFlagPresent:
		return 1
	case FormImplicitConst:
		return uint64(s.Implicit)
	case FormData1, formRef1, formFlag, FormStrx1, formAddrx1:
		return uint64(b.U8())
	case FormData2, formRef2, FormStrx2, formAddrx2:
		return uint64(b.U16())
	case FormStrx3, formAddrx3:
		return uint64(b.u24())
	case FormData4, formRef4, formRefSup4, FormStrx4, formAddrx4:
		return uint64(b.U32())
	case FormData8, formRef8, FormRefSig8, formRefSup8:
		return b.U64()
	case formData16:
		b.Skip(16)
	case formAddr:
		return b.Addr(u.AddrSize)
	case formRefAddr:
		if u.Vers == 2 {
			return b.Addr(u.AddrSize)
		}
		return b.Offset(u.Dwarf64)
	case FormStrp, FormSecOffset, formLineStrp, formStrpSup, formGNURefAlt, formGNUStrpAlt:
		return b.Offset(u.Dwarf64)
	case FormUdata, formRefUdata, FormStrx, formAddrx, FormLoclistx, formRnglistx, formGNUAddrIndex, FormGNUStrIndex:
		return b.Uleb()
	case FormSdata:
		return uint64(b.Sleb())
	case FormString:
		p := b.Pos
		b.Cstring()
		return uint64(p)
	case FormBlock1:
		b.Skip(uint64(b.U8()))
	case FormBlock2:
		b.Skip(uint64(b.U16()))
	case FormBlock4:
		b.Skip(uint64(b.U32()))
	case FormBlock, FormExprloc:
		b.Skip(b.Uleb())
	case FormIndirect:
		return b.Value(uint32(b.Uleb()), s, u)
	default:
		if b.Err == nil {
			b.Err = fmt.Errorf("unknown attribute form %#x at offset %#x", form, b.Pos)
		}
		b.Pos = len(b.Data)
	}
	return 0
}

// Attr is a raw attribute value and its form; form 0 means absent.
type Attr struct {
	Form uint32
	Val  uint64
}

// UnitCtx is what the DIEs of a unit need from its root DIE.
type UnitCtx struct {
	*Unit
	Base           uint64 // for range lists
	StrOffsetsBase uint64
	AddrBase       uint64
	RnglistsBase   uint64
	StmtList       uint64
	HasStmtList    bool
	CompDir        string
}

// AttrString resolves a string attribute.
func (s *DwarfSections) AttrString(a Attr, u *UnitCtx) ([]byte, bool) {
	var sec []byte
	off := a.Val
	switch a.Form {
	case FormString:
		sec = s.Info
	case FormStrp:
		sec = s.Str
	case formLineStrp:
		sec = s.LineStr
	case FormStrx, FormStrx1, FormStrx2, FormStrx3, FormStrx4, FormGNUStrIndex:
		size := uint64(4)
		if u.Dwarf64 {
			size = 8
		}
		b := Buf{Data: s.StrOffsets}
		p := u.StrOffsetsBase + a.Val*size
		if p >= uint64(len(b.Data)) {
			return nil, false
		}
		b.Pos = int(p)
		off = b.Offset(u.Dwarf64)
		if b.Err != nil {
			return nil, false
		}
		sec = s.Str
	default:
		return nil, false
	}
	if off >= uint64(len(sec)) {
		return nil, false
	}
	b := Buf{Data: sec, Pos: int(off)}
	v := b.Cstring()
	return v, b.Err == nil
}

// Address resolves an address attribute (DW_FORM_addr or an index into
// .debug_addr).
func (s *DwarfSections) Address(a Attr, u *UnitCtx) (uint64, bool) {
	switch a.Form {
	case formAddr:
		return a.Val, true
	case formAddrx, formAddrx1, formAddrx2, formAddrx3, formAddrx4, formGNUAddrIndex:
		return s.AddrIndex(a.Val, u)
	}
	return 0, false
}

func (s *DwarfSections) AddrIndex(i uint64, u *UnitCtx) (uint64, bool) {
	p := u.AddrBase + i*uint64(u.AddrSize)
	if p >= uint64(len(s.Addr)) {
		return 0, false
	}
	b := Buf{Data: s.Addr, Pos: int(p)}
	v := b.Addr(u.AddrSize)
	return v, b.Err == nil
}

// IsConst reports whether a form is of the constant class.
func IsConst(form uint32) bool {
	switch form {
	case FormData1, FormData2, FormData4, FormData8, FormUdata, FormSdata, FormImplicitConst:
		return true
	}
	return false
}

// isLocalRef reports whether a reference form is relative to its unit.
func isLocalRef(form uint32) bool {
	switch form {
	case formRef1, formRef2, formRef4, formRef8, formRefUdata:
		return true
	}
	return false
}

// Ref resolves a reference to a .debug_info offset. References into a
// supplementary (DWZ) file are not followed.
func Ref(a Attr, u *Unit) (uint64, bool) {
	switch {
	case isLocalRef(a.Form):
		return uint64(u.Off) + a.Val, true
	case a.Form == formRefAddr:
		return a.Val, true
	}
	return 0, false
}

// AppendRanges appends the address ranges of a DIE to out: low/high pc
// (high as an address or an offset) and DW_AT_ranges in .debug_ranges
// (DWARF 2-4) or .debug_rnglists (DWARF 5, by offset or index).
// Empty ranges are dropped (gcc emits them for code that was optimised
// away) but count for the lowest address, which lowest records, with
// their addresses.
func (s *DwarfSections) AppendRanges(out []Range, low, high, ranges Attr, u *UnitCtx, lowest *Lowest) ([]Range, error) {
	if low.Form != 0 && high.Form != 0 {
		lo, ok := s.Address(low, u)
		if !ok {
			return out, errors.New("bad DW_AT_low_pc")
		}
		var hi uint64
		if IsConst(high.Form) {
			hi = lo + high.Val
		} else if hi, ok = s.Address(high, u); !ok {
			return out, errors.New("bad DW_AT_high_pc")
		}
		lowest.see(lo, hi)
		if hi > lo {
			out = append(out, Range{lo, hi})
		}
	}
	if ranges.Form == 0 {
		return out, nil
	}
	if u.Vers < 5 {
		return s.dwarf4Ranges(out, ranges.Val, u, lowest)
	}
	off := ranges.Val
	if ranges.Form == formRnglistx {
		size := uint64(4)
		if u.Dwarf64 {
			size = 8
		}
		p := u.RnglistsBase + off*size
		if p >= uint64(len(s.RngLists)) {
			return out, fmt.Errorf("range list index %d out of range", off)
		}
		b := Buf{Data: s.RngLists, Pos: int(p)}
		off = u.RnglistsBase + b.Offset(u.Dwarf64)
	}
	return s.dwarf5Ranges(out, off, u, lowest)
}

func (s *DwarfSections) dwarf4Ranges(out []Range, off uint64, u *UnitCtx, lowest *Lowest) ([]Range, error) {
	if off >= uint64(len(s.Ranges)) {
		return out, fmt.Errorf("range list offset %#x out of range", off)
	}
	b := Buf{Data: s.Ranges, Pos: int(off)}
	base := u.Base
	maxAddr := ^uint64(0) >> (64 - 8*uint(u.AddrSize))
	for {
		lo := b.Addr(u.AddrSize)
		hi := b.Addr(u.AddrSize)
		switch {
		case b.Err != nil:
			return out, b.Err
		case lo == 0 && hi == 0:
			return out, nil
		case lo == maxAddr:
			base = hi
		default:
			lowest.see(base+lo, base+hi)
			if hi > lo {
				out = append(out, Range{base + lo, base + hi})
			}
		}
	}
}

func (s *DwarfSections) dwarf5Ranges(out []Range, off uint64, u *UnitCtx, lowest *Lowest) ([]Range, error) {
	if off >= uint64(len(s.RngLists)) {
		return out, fmt.Errorf("range list offset %#x out of range", off)
	}
	b := Buf{Data: s.RngLists, Pos: int(off)}
	base := u.Base
	index := func(i uint64) uint64 {
		v, ok := s.AddrIndex(i, u)
		if !ok && b.Err == nil {
			b.Err = fmt.Errorf("address index %d out of range", i)
		}
		return v
	}
	for {
		var lo, hi uint64
		switch kind := b.U8(); kind {
		case 0: // DW_RLE_end_of_list
			return out, b.Err
		case 1: // DW_RLE_base_addressx
			base = index(b.Uleb())
			continue
		case 2: // DW_RLE_startx_endx
			lo = index(b.Uleb())
			hi = index(b.Uleb())
		case 3: // DW_RLE_startx_length
			lo = index(b.Uleb())
			hi = lo + b.Uleb()
		case 4: // DW_RLE_offset_pair
			lo = base + b.Uleb()
			hi = base + b.Uleb()
		case 5: // DW_RLE_base_address
			base = b.Addr(u.AddrSize)
			continue
		case 6: // DW_RLE_start_end
			lo = b.Addr(u.AddrSize)
			hi = b.Addr(u.AddrSize)
		case 7: // DW_RLE_start_length
			lo = b.Addr(u.AddrSize)
			hi = lo + b.Uleb()
		default:
			return out, fmt.Errorf("unknown range list entry %#x at %#x", kind, b.Pos-1)
		}
		if b.Err != nil {
			return out, b.Err
		}
		lowest.see(lo, hi)
		if hi > lo {
			out = append(out, Range{lo, hi})
		}
	}
}

// Lowest is the lowest address of the ranges seen, with the addresses
// of the empty ones.
type Lowest struct {
	Addr  uint64
	Ok    bool
	Empty []uint64
}

func (l *Lowest) see(lo, hi uint64) {
	if !l.Ok || lo < l.Addr {
		l.Addr, l.Ok = lo, true
	}
	if hi == lo {
		l.Empty = append(l.Empty, lo)
	}
}

// Range is a half-open address range [Lo, Hi).
type Range struct {
	Lo, Hi uint64
}

// Block reads a block or expression and returns its bytes.
func (b *Buf) Block(form uint32) []byte {
	var n uint64
	switch form {
	case FormBlock1:
		n = uint64(b.U8())
	case FormBlock2:
		n = uint64(b.U16())
	case FormBlock4:
		n = uint64(b.U32())
	default:
		n = b.Uleb()
	}
	if b.Err != nil || uint64(len(b.Data)-b.Pos) < n {
		b.Fail()
		return nil
	}
	blk := b.Data[b.Pos : b.Pos+int(n)]
	b.Pos += int(n)
	return blk
}
