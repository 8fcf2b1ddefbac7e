package dif

import (
	"encoding/binary"
	"fmt"
)

// The DOF records of a DIFO, laid out as dtrace's C structures are, in a
// byte order chosen by the caller (DOF is written in the host's order).

// ByteOrder is a byte order that can both decode and append, such as
// binary.LittleEndian.
type ByteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// AppendType appends the 8-byte dtrace_diftype_t.
func AppendType(b []byte, bo ByteOrder, t Type) []byte {
	b = append(b, t.Kind, t.CtfKind, t.Flags, 0)
	return bo.AppendUint32(b, t.Size)
}

// ParseType decodes a dtrace_diftype_t; the pad byte is ignored.
func ParseType(b []byte, bo ByteOrder) (Type, error) {
	if len(b) < TypeSize {
		return Type{}, fmt.Errorf("dif: type record is %d bytes, want %d", len(b), TypeSize)
	}
	return Type{Kind: b[0], CtfKind: b[1], Flags: b[2], Size: bo.Uint32(b[4:])}, nil
}

// AppendVar appends the 20-byte dtrace_difv_t.
func AppendVar(b []byte, bo ByteOrder, v Var) []byte {
	b = bo.AppendUint32(b, v.Name)
	b = bo.AppendUint32(b, v.ID)
	b = append(b, v.Kind, v.Scope)
	b = bo.AppendUint16(b, v.Flags)
	return AppendType(b, bo, v.Type)
}

// ParseVar decodes a dtrace_difv_t.
func ParseVar(b []byte, bo ByteOrder) (Var, error) {
	if len(b) < VarSize {
		return Var{}, fmt.Errorf("dif: variable record is %d bytes, want %d", len(b), VarSize)
	}
	t, _ := ParseType(b[12:], bo)
	return Var{
		Name: bo.Uint32(b), ID: bo.Uint32(b[4:]), Kind: b[8], Scope: b[9],
		Flags: bo.Uint16(b[10:]), Type: t,
	}, nil
}

// AppendRelo appends the 24-byte dof_relodesc_t.
func AppendRelo(b []byte, bo ByteOrder, r Relo) []byte {
	b = bo.AppendUint32(b, r.Name)
	b = bo.AppendUint32(b, r.Type)
	b = bo.AppendUint64(b, r.Offset)
	return bo.AppendUint64(b, r.Data)
}

// ParseRelo decodes a dof_relodesc_t.
func ParseRelo(b []byte, bo ByteOrder) (Relo, error) {
	if len(b) < RelocSize {
		return Relo{}, fmt.Errorf("dif: relocation record is %d bytes, want %d", len(b), RelocSize)
	}
	return Relo{Name: bo.Uint32(b), Type: bo.Uint32(b[4:]), Offset: bo.Uint64(b[8:]), Data: bo.Uint64(b[16:])}, nil
}

// AppendCode appends instruction words.
func AppendCode(b []byte, bo ByteOrder, code []Instr) []byte {
	for _, in := range code {
		b = bo.AppendUint32(b, uint32(in))
	}
	return b
}

// ParseCode decodes a DIF section: a whole number of 4-byte words.
func ParseCode(b []byte, bo ByteOrder) ([]Instr, error) {
	if len(b)%InstrSize != 0 {
		return nil, fmt.Errorf("dif: code is %d bytes, not a multiple of %d", len(b), InstrSize)
	}
	code := make([]Instr, len(b)/InstrSize)
	for i := range code {
		code[i] = Instr(bo.Uint32(b[i*InstrSize:]))
	}
	return code, nil
}

// AppendInts appends integer-table entries.
func AppendInts(b []byte, bo ByteOrder, ints []uint64) []byte {
	for _, x := range ints {
		b = bo.AppendUint64(b, x)
	}
	return b
}

// ParseInts decodes an INTTAB section: a whole number of 8-byte entries.
func ParseInts(b []byte, bo ByteOrder) ([]uint64, error) {
	if len(b)%IntSize != 0 {
		return nil, fmt.Errorf("dif: integer table is %d bytes, not a multiple of %d", len(b), IntSize)
	}
	ints := make([]uint64, len(b)/IntSize)
	for i := range ints {
		ints[i] = bo.Uint64(b[i*IntSize:])
	}
	return ints, nil
}
