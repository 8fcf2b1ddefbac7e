package btf

import (
	"encoding/binary"
)

// A builder writes BTF for tests: hand-made records reach what no
// compiler emits (legacy bit-fields, split BTF, big-endian files,
// malformed records).
type builder struct {
	words   []uint32 // the type section
	strs    []byte
	offs    map[string]uint32
	next    uint32 // the next type's ID
	strBase uint32 // the offset of strs[0] in the combined string space
}

func newBuilder() *builder {
	return &builder{strs: []byte{0}, offs: map[string]uint32{"": 0}, next: 1}
}

// split returns a builder of split BTF based on b as it is now.
func (b *builder) split() *builder {
	return &builder{offs: map[string]uint32{"": 0}, next: b.next, strBase: b.strBase + uint32(len(b.strs))}
}

func (b *builder) str(s string) uint32 {
	if off, ok := b.offs[s]; ok {
		return off
	}
	off := b.strBase + uint32(len(b.strs))
	b.strs = append(append(b.strs, s...), 0)
	b.offs[s] = off
	return off
}

// add appends a record and returns its ID.
func (b *builder) add(name string, kind uint32, kflag bool, vlen int, sizeOrType uint32, trailer ...uint32) uint32 {
	info := kind<<24 | uint32(vlen)
	if kflag {
		info |= 1 << 31
	}
	b.words = append(b.words, b.str(name), info, sizeOrType)
	b.words = append(b.words, trailer...)
	b.next++
	return b.next - 1
}

func (b *builder) int(name string, size, enc uint32) uint32 {
	return b.add(name, kindInt, false, 0, size, enc)
}

func (b *builder) ptr(t uint32) uint32                  { return b.add("", kindPtr, false, 0, t) }
func (b *builder) typedef(name string, t uint32) uint32 { return b.add(name, kindTypedef, false, 0, t) }

func (b *builder) array(elem, index, n uint32) uint32 {
	return b.add("", kindArray, false, 0, 0, elem, index, n)
}

// A field is a struct member: name, type and the offset word.
type field struct {
	name string
	typ  uint32
	off  uint32
}

func (b *builder) struct_(kind uint32, name string, size uint32, kflag bool, fs ...field) uint32 {
	var tr []uint32
	for _, f := range fs {
		tr = append(tr, b.str(f.name), f.typ, f.off)
	}
	return b.add(name, kind, kflag, len(fs), size, tr...)
}

// A param is a function type's parameter: name and type.
type param struct {
	name string
	typ  uint32
}

func (b *builder) proto(result uint32, params ...param) uint32 {
	var tr []uint32
	for _, p := range params {
		tr = append(tr, b.str(p.name), p.typ)
	}
	return b.add("", kindFuncProto, false, len(params), result, tr...)
}

// bytes returns the BTF, with the string section after the types.
func (b *builder) bytes(bo binary.ByteOrder) []byte {
	tlen := 4 * len(b.words)
	out := make([]byte, headerSize+tlen+len(b.strs))
	bo.PutUint16(out, magic)
	out[2] = 1
	bo.PutUint32(out[4:], headerSize)
	bo.PutUint32(out[8:], 0)
	bo.PutUint32(out[12:], uint32(tlen))
	bo.PutUint32(out[16:], uint32(tlen))
	bo.PutUint32(out[20:], uint32(len(b.strs)))
	for i, w := range b.words {
		bo.PutUint32(out[headerSize+4*i:], w)
	}
	copy(out[headerSize+tlen:], b.strs)
	return out
}
