package btf

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// The BTF format, as include/uapi/linux/btf.h defines it. Every field of
// the type section is a 32-bit word, so a big-endian type section is
// converted to little-endian once, at Open, and read as such.

const (
	magic      = 0xeb9f
	headerSize = 24 // the version 1 header; hdr_len may be larger
	recordSize = 12 // struct btf_type: name_off, info, size or type
)

// The kinds of type record.
const (
	kindInt       = 1
	kindPtr       = 2
	kindArray     = 3
	kindStruct    = 4
	kindUnion     = 5
	kindEnum      = 6
	kindFwd       = 7
	kindTypedef   = 8
	kindVolatile  = 9
	kindConst     = 10
	kindRestrict  = 11
	kindFunc      = 12
	kindFuncProto = 13
	kindVar       = 14
	kindDatasec   = 15
	kindFloat     = 16
	kindDeclTag   = 17
	kindTypeTag   = 18
	kindEnum64    = 19
	numKinds      = 20
)

// The bits of an INT record's encoding.
const (
	intSigned = 1 << 0
	intChar   = 1 << 1
	intBool   = 1 << 2
)

// What follows a record: fixed bytes plus bytes per vlen item. Tables
// rather than a switch keep the walk over every record free of
// mispredicted branches.
var (
	trailerFixed = [32]uint32{kindInt: 4, kindArray: 12, kindVar: 4, kindDeclTag: 4}
	trailerItem  = [32]uint32{
		kindStruct: 12, kindUnion: 12, kindEnum: 8, kindFuncProto: 8,
		kindDatasec: 12, kindEnum64: 12,
	}
)

// header is the fixed part of a BTF header, with the sections' offsets
// made absolute.
type header struct {
	big                bool // the file is big-endian
	typeStart, typeEnd uint64
	strStart, strEnd   uint64
}

func parseHeader(b []byte) (header, error) {
	var h header
	if len(b) < headerSize {
		return h, fmt.Errorf("not BTF: %d bytes, shorter than a header", len(b))
	}
	var bo binary.ByteOrder = binary.LittleEndian
	switch binary.LittleEndian.Uint16(b) {
	case magic:
	case bits.ReverseBytes16(magic):
		bo, h.big = binary.BigEndian, true
	default:
		return h, fmt.Errorf("not BTF: magic %#04x", binary.LittleEndian.Uint16(b))
	}
	if v := b[2]; v != 1 {
		return h, fmt.Errorf("BTF version %d, want 1", v)
	}
	hl, size := uint64(bo.Uint32(b[4:])), uint64(len(b))
	if hl < headerSize || hl > size {
		return h, fmt.Errorf("header length %d outside [%d, %d]", hl, headerSize, size)
	}
	typeOff, typeLen := uint64(bo.Uint32(b[8:])), uint64(bo.Uint32(b[12:]))
	strOff, strLen := uint64(bo.Uint32(b[16:])), uint64(bo.Uint32(b[20:]))
	h.typeStart, h.typeEnd = hl+typeOff, hl+typeOff+typeLen
	h.strStart, h.strEnd = hl+strOff, hl+strOff+strLen
	if h.typeEnd > size {
		return h, fmt.Errorf("type section [%d, %d) past the end of %d bytes", h.typeStart, h.typeEnd, size)
	}
	if h.strEnd > size {
		return h, fmt.Errorf("string section [%d, %d) past the end of %d bytes", h.strStart, h.strEnd, size)
	}
	if typeLen%4 != 0 {
		return h, fmt.Errorf("type section length %d is not a multiple of 4", typeLen)
	}
	return h, nil
}

// swapWords returns a copy of b with each 32-bit word byte-swapped.
func swapWords(b []byte) []byte {
	out := make([]byte, len(b))
	for i := 0; i+4 <= len(b); i += 4 {
		binary.LittleEndian.PutUint32(out[i:], binary.BigEndian.Uint32(b[i:]))
	}
	return out
}

// record is a type record: its header words and its trailer.
type record struct {
	nameOff    uint32
	info       uint32
	sizeOrType uint32
	trailer    []byte
}

func (r record) kind() uint32   { return r.info >> 24 & 0x1f }
func (r record) vlen() int      { return int(r.info & 0xffff) }
func (r record) kflag() bool    { return r.info>>31 != 0 }
func (r record) typeID() uint32 { return r.sizeOrType }

// word returns the i'th 32-bit word of the trailer.
func (r record) word(i int) uint32 { return binary.LittleEndian.Uint32(r.trailer[4*i:]) }

var kindNames = [numKinds]string{
	"UNKN", "INT", "PTR", "ARRAY", "STRUCT", "UNION", "ENUM", "FWD", "TYPEDEF",
	"VOLATILE", "CONST", "RESTRICT", "FUNC", "FUNC_PROTO", "VAR", "DATASEC",
	"FLOAT", "DECL_TAG", "TYPE_TAG", "ENUM64",
}

func kindName(k uint32) string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind %d", k)
}
