package cachefile

import (
	"encoding/binary"
	"hash/crc32"
	"unsafe"
)

// This file is the encoding of the cache files: little-endian integers,
// strings as a uint32 length then bytes, tables as an 8-byte count then
// fixed-size records read in place, and a CRC-32 of the whole.
//
// The checksum is IEEE's CRC-32, which hash/crc32 computes with
// PCLMULQDQ from small tables; its CRC32-C path builds 8 KB of tables
// first, a quarter of a millisecond at every start of the command.

// Encoder appends values to B in the cache files' encoding.
type Encoder struct{ B []byte }

func (e *Encoder) U8(v uint8)   { e.B = append(e.B, v) }
func (e *Encoder) U32(v uint32) { e.B = binary.LittleEndian.AppendUint32(e.B, v) }
func (e *Encoder) U64(v uint64) { e.B = binary.LittleEndian.AppendUint64(e.B, v) }
func (e *Encoder) Str(s string) { e.U32(uint32(len(s))); e.B = append(e.B, s...) }

// Seal appends the checksum of what e holds, which ends a file.
func (e *Encoder) Seal() { e.U32(crc32.ChecksumIEEE(e.B)) }

// Unseal returns what a file sealed by Encoder.Seal holds before its
// checksum, or false if the checksum does not match.
func Unseal(data []byte) ([]byte, bool) {
	if len(data) < 4 {
		return nil, false
	}
	body := data[:len(data)-4]
	return body, crc32.ChecksumIEEE(body) == binary.LittleEndian.Uint32(data[len(body):])
}

// Decoder reads what encoder wrote; after the first short read it
// returns zeros and its user reports the error once.
type Decoder struct {
	B   []byte
	Bad bool
}

// Take returns the next n bytes.
func (d *Decoder) Take(n uint64) []byte {
	if d.Bad || uint64(len(d.B)) < n {
		d.Bad = true
		return nil
	}
	v := d.B[:n]
	d.B = d.B[n:]
	return v
}

func (d *Decoder) U8() uint8 {
	if v := d.Take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *Decoder) U32() uint32 {
	if v := d.Take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (d *Decoder) U64() uint64 {
	if v := d.Take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

func (d *Decoder) Str() string { return string(d.Take(uint64(d.U32()))) }

// Table reads a count and that many records of the given size.
func (d *Decoder) Table(size int) Table {
	n := d.U64()
	if n > uint64(len(d.B))/uint64(size) {
		d.Bad = true
		return Table{size: size}
	}
	return Table{b: d.Take(n * uint64(size)), size: size}
}

// Table is an array of fixed-size little-endian records.
type Table struct {
	b    []byte
	size int
}

// Len is the number of records.
func (t Table) Len() int { return len(t.b) / t.size }

// Bytes is the records, as they are in the file.
func (t Table) Bytes() []byte { return t.b }

// Words is the table's records read in place as values of T, a type
// made only of uint32s (such as uint32, or a struct of two): ok is false
// where they cannot be, on a big-endian machine, or where the records
// are not 4-aligned or not T's size. The slice aliases the table's
// bytes, which must outlive it unchanged.
func Words[T any](t Table) (ws []T, ok bool) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if size == 0 || size%4 != 0 || t.size != size || !littleEndian {
		return nil, false
	}
	if len(t.b) == 0 {
		return nil, true
	}
	p := unsafe.Pointer(unsafe.SliceData(t.b))
	if uintptr(p)%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*T)(p), len(t.b)/size), true
}

// littleEndian reports whether this machine stores integers as the
// cache files do.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Rec is record i.
func (t Table) Rec(i int) []byte { return t.b[i*t.size : (i+1)*t.size] }

// U32 and U64 read a record's little-endian fields.
func U32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func U64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
