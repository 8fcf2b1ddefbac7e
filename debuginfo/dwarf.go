package debuginfo

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// This file is a DIE scanner specialised for the index. debug/dwarf
// decodes every attribute of every DIE into an allocated Entry, which
// costs most of the 5 s a vmlinux walk takes; the scanner instead skips
// the attributes it does not need by their form's size and allocates
// nothing per DIE.

// dwarfSections holds the DWARF sections the index reads. All are
// little-endian (the only byte order accepted by openELF).
type dwarfSections struct {
	info, abbrev, str, lineStr, strOffsets, addr, ranges, rngLists, line []byte
	loc, locLists                                                        []byte // for locals' locations
}

// DWARF constants, from the DWARF 5 standard, §7.
const (
	tagCompileUnit       = 0x11
	tagInlinedSubroutine = 0x1d
	tagSubprogram        = 0x2e
	tagPartialUnit       = 0x3c

	atName            = 0x03
	atStmtList        = 0x10
	atLowPC           = 0x11
	atHighPC          = 0x12
	atCompDir         = 0x1b
	atInline          = 0x20
	atAbstractOrigin  = 0x31
	atDeclaration     = 0x3c
	atSpecification   = 0x47
	atEntryPC         = 0x52
	atRanges          = 0x55
	atCallFile        = 0x58
	atCallLine        = 0x59
	atStrOffsetsBase  = 0x72
	atAddrBase        = 0x73
	atRnglistsBase    = 0x74
	atGNUAddrBase     = 0x2133
	atGNUEntryView    = 0x2138
	utCompile         = 0x01
	utPartial         = 0x03
	formAddr          = 0x01
	formBlock2        = 0x03
	formBlock4        = 0x04
	formData2         = 0x05
	formData4         = 0x06
	formData8         = 0x07
	formString        = 0x08
	formBlock         = 0x09
	formBlock1        = 0x0a
	formData1         = 0x0b
	formFlag          = 0x0c
	formSdata         = 0x0d
	formStrp          = 0x0e
	formUdata         = 0x0f
	formRefAddr       = 0x10
	formRef1          = 0x11
	formRef2          = 0x12
	formRef4          = 0x13
	formRef8          = 0x14
	formRefUdata      = 0x15
	formIndirect      = 0x16
	formSecOffset     = 0x17
	formExprloc       = 0x18
	formFlagPresent   = 0x19
	formStrx          = 0x1a
	formAddrx         = 0x1b
	formRefSup4       = 0x1c
	formStrpSup       = 0x1d
	formData16        = 0x1e
	formLineStrp      = 0x1f
	formRefSig8       = 0x20
	formImplicitConst = 0x21
	formLoclistx      = 0x22
	formRnglistx      = 0x23
	formRefSup8       = 0x24
	formStrx1         = 0x25
	formStrx2         = 0x26
	formStrx3         = 0x27
	formStrx4         = 0x28
	formAddrx1        = 0x29
	formAddrx2        = 0x2a
	formAddrx3        = 0x2b
	formAddrx4        = 0x2c
	formGNUAddrIndex  = 0x1f01
	formGNUStrIndex   = 0x1f02
	formGNURefAlt     = 0x1f20
	formGNUStrpAlt    = 0x1f21
)

var errTruncated = errors.New("truncated DWARF data")

// buf is a cursor over one section. Reads past the end set err and
// return zero, so callers check err once per DIE instead of per read.
type buf struct {
	data []byte
	pos  int
	err  error
}

func (b *buf) fail() {
	if b.err == nil {
		b.err = fmt.Errorf("%w at offset %#x", errTruncated, b.pos)
	}
	b.pos = len(b.data)
}

func (b *buf) u8() uint8 {
	if b.pos >= len(b.data) {
		b.fail()
		return 0
	}
	v := b.data[b.pos]
	b.pos++
	return v
}

func (b *buf) u16() uint16 {
	if len(b.data)-b.pos < 2 {
		b.fail()
		return 0
	}
	v := binary.LittleEndian.Uint16(b.data[b.pos:])
	b.pos += 2
	return v
}

func (b *buf) u24() uint32 {
	if len(b.data)-b.pos < 3 {
		b.fail()
		return 0
	}
	d := b.data[b.pos:]
	b.pos += 3
	return uint32(d[0]) | uint32(d[1])<<8 | uint32(d[2])<<16
}

func (b *buf) u32() uint32 {
	if len(b.data)-b.pos < 4 {
		b.fail()
		return 0
	}
	v := binary.LittleEndian.Uint32(b.data[b.pos:])
	b.pos += 4
	return v
}

func (b *buf) u64() uint64 {
	if len(b.data)-b.pos < 8 {
		b.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(b.data[b.pos:])
	b.pos += 8
	return v
}

func (b *buf) uleb() uint64 {
	var v uint64
	var shift uint
	for b.pos < len(b.data) {
		c := b.data[b.pos]
		b.pos++
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v
		}
		shift += 7
	}
	b.fail()
	return 0
}

func (b *buf) sleb() int64 {
	var v int64
	var shift uint
	for b.pos < len(b.data) {
		c := b.data[b.pos]
		b.pos++
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
	b.fail()
	return 0
}

func (b *buf) skip(n uint64) {
	if uint64(len(b.data)-b.pos) < n {
		b.fail()
		return
	}
	b.pos += int(n)
}

// cstring returns the NUL-terminated string at the cursor, without
// copying.
func (b *buf) cstring() []byte {
	for i := b.pos; i < len(b.data); i++ {
		if b.data[i] == 0 {
			s := b.data[b.pos:i]
			b.pos = i + 1
			return s
		}
	}
	b.fail()
	return nil
}

// offset reads a section offset, 4 or 8 bytes in the 32- or 64-bit
// DWARF format.
func (b *buf) offset(dwarf64 bool) uint64 {
	if dwarf64 {
		return b.u64()
	}
	return uint64(b.u32())
}

func (b *buf) addr(size int) uint64 {
	switch size {
	case 8:
		return b.u64()
	case 4:
		return uint64(b.u32())
	case 2:
		return uint64(b.u16())
	}
	b.fail()
	return 0
}

// unitLength reads an initial length field.
func (b *buf) unitLength() (n uint64, dwarf64 bool) {
	n = uint64(b.u32())
	if n == 0xffffffff {
		return b.u64(), true
	}
	return n, false
}

// unit is one unit header of .debug_info.
type unit struct {
	off       int // of the header
	dies      int // of the first DIE
	end       int
	vers      int
	utype     uint8
	addrSize  int
	dwarf64   bool
	abbrevOff uint64
}

// parseUnits reads the unit headers, without touching the DIEs.
func parseUnits(info []byte) ([]unit, error) {
	var units []unit
	b := buf{data: info}
	for b.pos < len(info) {
		u := unit{off: b.pos}
		n, dwarf64 := b.unitLength()
		u.dwarf64 = dwarf64
		if b.err != nil || n > uint64(len(info)-b.pos) {
			return nil, fmt.Errorf("unit at %#x: bad length", u.off)
		}
		u.end = b.pos + int(n)
		u.vers = int(b.u16())
		switch {
		case u.vers >= 2 && u.vers <= 4:
			u.utype = utCompile
			u.abbrevOff = b.offset(dwarf64)
			u.addrSize = int(b.u8())
		case u.vers == 5:
			u.utype = b.u8()
			u.addrSize = int(b.u8())
			u.abbrevOff = b.offset(dwarf64)
			switch u.utype {
			case 0x04, 0x05: // skeleton, split_compile: dwo_id
				b.skip(8)
			case 0x02, 0x06: // type, split_type: signature and type offset
				b.skip(8)
				b.offset(dwarf64)
			}
		default:
			return nil, fmt.Errorf("unit at %#x: unsupported DWARF version %d", u.off, u.vers)
		}
		if b.err != nil {
			return nil, fmt.Errorf("unit at %#x: %w", u.off, b.err)
		}
		u.dies = b.pos
		units = append(units, u)
		b.pos = u.end
	}
	return units, nil
}

// Kinds of DIE the scanner decodes; all others are skipped.
const (
	kindSkip = iota
	kindUnit
	kindSubprogram
	kindInlined
)

type attrSpec struct {
	attr     uint32
	form     uint32
	implicit int64
}

type abbrev struct {
	defined  bool
	kind     uint8
	children bool
	// fixed is the size of the DIE's attributes when every form has a
	// fixed size, so that uninteresting DIEs are skipped in one step;
	// -1 otherwise.
	fixed int
	attrs []attrSpec
}

// parseAbbrevs reads the abbreviation table at off, indexed by code.
func parseAbbrevs(data []byte, off uint64, u *unit) ([]abbrev, error) {
	if off >= uint64(len(data)) {
		return nil, fmt.Errorf("abbreviation offset %#x out of range", off)
	}
	b := buf{data: data, pos: int(off)}
	var tab []abbrev
	for {
		code := b.uleb()
		if code == 0 || b.err != nil {
			break
		}
		if code > 1<<20 {
			return nil, fmt.Errorf("abbreviation code %d too large", code)
		}
		tag := b.uleb()
		a := abbrev{defined: true, children: b.u8() != 0}
		switch tag {
		case tagCompileUnit, tagPartialUnit:
			a.kind = kindUnit
		case tagSubprogram:
			a.kind = kindSubprogram
		case tagInlinedSubroutine:
			a.kind = kindInlined
		}
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
			a.attrs = append(a.attrs, s)
		}
		a.fixed = 0
		for _, s := range a.attrs {
			n := formSize(s.form, u)
			if n < 0 {
				a.fixed = -1
				break
			}
			a.fixed += n
		}
		for uint64(len(tab)) <= code {
			tab = append(tab, abbrev{})
		}
		tab[code] = a
	}
	if b.err != nil {
		return nil, fmt.Errorf("abbreviations at %#x: %w", off, b.err)
	}
	return tab, nil
}

// formSize returns the encoded size of a form, or -1 if it varies.
func formSize(form uint32, u *unit) int {
	off := 4
	if u.dwarf64 {
		off = 8
	}
	switch form {
	case formFlagPresent, formImplicitConst:
		return 0
	case formData1, formRef1, formFlag, formStrx1, formAddrx1:
		return 1
	case formData2, formRef2, formStrx2, formAddrx2:
		return 2
	case formStrx3, formAddrx3:
		return 3
	case formData4, formRef4, formRefSup4, formStrx4, formAddrx4:
		return 4
	case formData8, formRef8, formRefSig8, formRefSup8:
		return 8
	case formData16:
		return 16
	case formAddr:
		return u.addrSize
	case formRefAddr:
		if u.vers == 2 {
			return u.addrSize
		}
		return off
	case formStrp, formSecOffset, formLineStrp, formStrpSup, formGNURefAlt, formGNUStrpAlt:
		return off
	}
	return -1
}

// value reads one attribute value. Scalars, references, offsets and
// indexes are returned as they are encoded; for DW_FORM_string the result
// is the string's offset in the unit's section, and blocks are skipped.
func (b *buf) value(form uint32, s *attrSpec, u *unit) uint64 {
	switch form {
	case formFlagPresent:
		return 1
	case formImplicitConst:
		return uint64(s.implicit)
	case formData1, formRef1, formFlag, formStrx1, formAddrx1:
		return uint64(b.u8())
	case formData2, formRef2, formStrx2, formAddrx2:
		return uint64(b.u16())
	case formStrx3, formAddrx3:
		return uint64(b.u24())
	case formData4, formRef4, formRefSup4, formStrx4, formAddrx4:
		return uint64(b.u32())
	case formData8, formRef8, formRefSig8, formRefSup8:
		return b.u64()
	case formData16:
		b.skip(16)
	case formAddr:
		return b.addr(u.addrSize)
	case formRefAddr:
		if u.vers == 2 {
			return b.addr(u.addrSize)
		}
		return b.offset(u.dwarf64)
	case formStrp, formSecOffset, formLineStrp, formStrpSup, formGNURefAlt, formGNUStrpAlt:
		return b.offset(u.dwarf64)
	case formUdata, formRefUdata, formStrx, formAddrx, formLoclistx, formRnglistx, formGNUAddrIndex, formGNUStrIndex:
		return b.uleb()
	case formSdata:
		return uint64(b.sleb())
	case formString:
		p := b.pos
		b.cstring()
		return uint64(p)
	case formBlock1:
		b.skip(uint64(b.u8()))
	case formBlock2:
		b.skip(uint64(b.u16()))
	case formBlock4:
		b.skip(uint64(b.u32()))
	case formBlock, formExprloc:
		b.skip(b.uleb())
	case formIndirect:
		return b.value(uint32(b.uleb()), s, u)
	default:
		if b.err == nil {
			b.err = fmt.Errorf("unknown attribute form %#x at offset %#x", form, b.pos)
		}
		b.pos = len(b.data)
	}
	return 0
}

// attr is a raw attribute value and its form; form 0 means absent.
type attr struct {
	form uint32
	val  uint64
}

// unitCtx is what the DIEs of a unit need from its root DIE.
type unitCtx struct {
	*unit
	base           uint64 // for range lists
	strOffsetsBase uint64
	addrBase       uint64
	rnglistsBase   uint64
	stmtList       uint64
	hasStmtList    bool
	compDir        string
}

// str resolves a string attribute.
func (s *dwarfSections) attrString(a attr, u *unitCtx) ([]byte, bool) {
	var sec []byte
	off := a.val
	switch a.form {
	case formString:
		sec = s.info
	case formStrp:
		sec = s.str
	case formLineStrp:
		sec = s.lineStr
	case formStrx, formStrx1, formStrx2, formStrx3, formStrx4, formGNUStrIndex:
		size := uint64(4)
		if u.dwarf64 {
			size = 8
		}
		b := buf{data: s.strOffsets}
		p := u.strOffsetsBase + a.val*size
		if p >= uint64(len(b.data)) {
			return nil, false
		}
		b.pos = int(p)
		off = b.offset(u.dwarf64)
		if b.err != nil {
			return nil, false
		}
		sec = s.str
	default:
		return nil, false
	}
	if off >= uint64(len(sec)) {
		return nil, false
	}
	b := buf{data: sec, pos: int(off)}
	v := b.cstring()
	return v, b.err == nil
}

// address resolves an address attribute (DW_FORM_addr or an index into
// .debug_addr).
func (s *dwarfSections) address(a attr, u *unitCtx) (uint64, bool) {
	switch a.form {
	case formAddr:
		return a.val, true
	case formAddrx, formAddrx1, formAddrx2, formAddrx3, formAddrx4, formGNUAddrIndex:
		return s.addrIndex(a.val, u)
	}
	return 0, false
}

func (s *dwarfSections) addrIndex(i uint64, u *unitCtx) (uint64, bool) {
	p := u.addrBase + i*uint64(u.addrSize)
	if p >= uint64(len(s.addr)) {
		return 0, false
	}
	b := buf{data: s.addr, pos: int(p)}
	v := b.addr(u.addrSize)
	return v, b.err == nil
}

// isConst reports whether a form is of the constant class.
func isConst(form uint32) bool {
	switch form {
	case formData1, formData2, formData4, formData8, formUdata, formSdata, formImplicitConst:
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

// ref resolves a reference to a .debug_info offset. References into a
// supplementary (DWZ) file are not followed.
func ref(a attr, u *unit) (uint64, bool) {
	switch {
	case isLocalRef(a.form):
		return uint64(u.off) + a.val, true
	case a.form == formRefAddr:
		return a.val, true
	}
	return 0, false
}

// appendRanges appends the address ranges of a DIE to out: low/high pc
// (high as an address or an offset) and DW_AT_ranges in .debug_ranges
// (DWARF 2-4) or .debug_rnglists (DWARF 5, by offset or index).
// Empty ranges are dropped (gcc emits them for code that was optimised
// away) but count for the lowest address, which lowest records, with
// their addresses.
func (s *dwarfSections) appendRanges(out []Range, low, high, ranges attr, u *unitCtx, lowest *lowest) ([]Range, error) {
	if low.form != 0 && high.form != 0 {
		lo, ok := s.address(low, u)
		if !ok {
			return out, errors.New("bad DW_AT_low_pc")
		}
		var hi uint64
		if isConst(high.form) {
			hi = lo + high.val
		} else if hi, ok = s.address(high, u); !ok {
			return out, errors.New("bad DW_AT_high_pc")
		}
		lowest.see(lo, hi)
		if hi > lo {
			out = append(out, Range{lo, hi})
		}
	}
	if ranges.form == 0 {
		return out, nil
	}
	if u.vers < 5 {
		return s.dwarf4Ranges(out, ranges.val, u, lowest)
	}
	off := ranges.val
	if ranges.form == formRnglistx {
		size := uint64(4)
		if u.dwarf64 {
			size = 8
		}
		p := u.rnglistsBase + off*size
		if p >= uint64(len(s.rngLists)) {
			return out, fmt.Errorf("range list index %d out of range", off)
		}
		b := buf{data: s.rngLists, pos: int(p)}
		off = u.rnglistsBase + b.offset(u.dwarf64)
	}
	return s.dwarf5Ranges(out, off, u, lowest)
}

func (s *dwarfSections) dwarf4Ranges(out []Range, off uint64, u *unitCtx, lowest *lowest) ([]Range, error) {
	if off >= uint64(len(s.ranges)) {
		return out, fmt.Errorf("range list offset %#x out of range", off)
	}
	b := buf{data: s.ranges, pos: int(off)}
	base := u.base
	maxAddr := ^uint64(0) >> (64 - 8*uint(u.addrSize))
	for {
		lo := b.addr(u.addrSize)
		hi := b.addr(u.addrSize)
		switch {
		case b.err != nil:
			return out, b.err
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

func (s *dwarfSections) dwarf5Ranges(out []Range, off uint64, u *unitCtx, lowest *lowest) ([]Range, error) {
	if off >= uint64(len(s.rngLists)) {
		return out, fmt.Errorf("range list offset %#x out of range", off)
	}
	b := buf{data: s.rngLists, pos: int(off)}
	base := u.base
	index := func(i uint64) uint64 {
		v, ok := s.addrIndex(i, u)
		if !ok && b.err == nil {
			b.err = fmt.Errorf("address index %d out of range", i)
		}
		return v
	}
	for {
		var lo, hi uint64
		switch kind := b.u8(); kind {
		case 0: // DW_RLE_end_of_list
			return out, b.err
		case 1: // DW_RLE_base_addressx
			base = index(b.uleb())
			continue
		case 2: // DW_RLE_startx_endx
			lo = index(b.uleb())
			hi = index(b.uleb())
		case 3: // DW_RLE_startx_length
			lo = index(b.uleb())
			hi = lo + b.uleb()
		case 4: // DW_RLE_offset_pair
			lo = base + b.uleb()
			hi = base + b.uleb()
		case 5: // DW_RLE_base_address
			base = b.addr(u.addrSize)
			continue
		case 6: // DW_RLE_start_end
			lo = b.addr(u.addrSize)
			hi = b.addr(u.addrSize)
		case 7: // DW_RLE_start_length
			lo = b.addr(u.addrSize)
			hi = lo + b.uleb()
		default:
			return out, fmt.Errorf("unknown range list entry %#x at %#x", kind, b.pos-1)
		}
		if b.err != nil {
			return out, b.err
		}
		lowest.see(lo, hi)
		if hi > lo {
			out = append(out, Range{lo, hi})
		}
	}
}

// lowest is the lowest address of the ranges seen, with the addresses
// of the empty ones.
type lowest struct {
	addr  uint64
	ok    bool
	empty []uint64
}

func (l *lowest) see(lo, hi uint64) {
	if !l.ok || lo < l.addr {
		l.addr, l.ok = lo, true
	}
	if hi == lo {
		l.empty = append(l.empty, lo)
	}
}
