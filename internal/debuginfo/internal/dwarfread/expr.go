package dwarfread

import (
	"fmt"

	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
)

// DecodeExpr decodes the DWARF expression in p for unit u. Addresses given
// by index (DW_OP_addrx, DW_OP_constx) are resolved through s.
func DecodeExpr(s *DwarfSections, p []byte, u *UnitCtx) (dwarfexpr.Expr, error) {
	var out dwarfexpr.Expr
	b := Buf{Data: p}
	for b.Pos < len(p) && b.Err == nil {
		at := b.Pos
		c := b.U8()
		op := dwarfexpr.Op{Code: dwarfexpr.OpCode(c)}
		switch {
		case c >= 0x30 && c <= 0x4f:
			op.Code, op.Uint = dwarfexpr.OpLit, uint64(c-0x30)
		case c >= 0x50 && c <= 0x6f:
			op.Code, op.Reg = dwarfexpr.OpReg, int(c-0x50)
		case c >= 0x70 && c <= 0x8f:
			op.Code, op.Reg, op.Int = dwarfexpr.OpBreg, int(c-0x70), b.Sleb()
		default:
			switch c {
			case 0x03: // addr
				op.Uint = b.Addr(u.AddrSize)
			case 0x08:
				op.Code, op.Uint = dwarfexpr.OpConstu, uint64(b.U8())
			case 0x09:
				op.Code, op.Int = dwarfexpr.OpConsts, int64(int8(b.U8()))
			case 0x0a:
				op.Code, op.Uint = dwarfexpr.OpConstu, uint64(b.U16())
			case 0x0b:
				op.Code, op.Int = dwarfexpr.OpConsts, int64(int16(b.U16()))
			case 0x0c:
				op.Code, op.Uint = dwarfexpr.OpConstu, uint64(b.U32())
			case 0x0d:
				op.Code, op.Int = dwarfexpr.OpConsts, int64(int32(b.U32()))
			case 0x0e:
				op.Code, op.Uint = dwarfexpr.OpConstu, b.U64()
			case 0x0f:
				op.Code, op.Int = dwarfexpr.OpConsts, int64(b.U64())
			case 0x10, 0x23, 0x93, 0x94, 0x15: // constu, plus_uconst, piece, deref_size (u8), pick (u8)
				if c == 0x94 || c == 0x15 {
					op.Uint = uint64(b.U8())
				} else {
					op.Uint = b.Uleb()
				}
			case 0x11, 0x91: // consts, fbreg
				op.Int = b.Sleb()
			case 0x28, 0x2f: // bra, skip
				op.Int = int64(int16(b.U16()))
			case 0x90: // regx
				op.Code, op.Reg = dwarfexpr.OpReg, int(b.Uleb())
			case 0x92: // bregx
				op.Code, op.Reg = dwarfexpr.OpBreg, int(b.Uleb())
				op.Int = b.Sleb()
			case 0x9d: // bit_piece
				op.Uint = b.Uleb()
				op.Int = int64(b.Uleb())
			case 0x9e: // implicit_value
				n := b.Uleb()
				if b.Err == nil && n <= uint64(len(p)-b.Pos) {
					op.Block = p[b.Pos : b.Pos+int(n)]
					b.Pos += int(n)
				} else {
					b.Fail()
				}
			case 0xa0, 0xf2: // implicit_pointer, GNU_implicit_pointer
				op.Code = dwarfexpr.OpImplicitPtr
				if u.Vers <= 2 {
					op.Uint = b.Addr(u.AddrSize)
				} else {
					op.Uint = b.Offset(u.Dwarf64)
				}
				op.Int = b.Sleb()
			case 0xa3, 0xf3: // entry_value, GNU_entry_value
				op.Code = dwarfexpr.OpEntryValue
				n := b.Uleb()
				if b.Err != nil || n > uint64(len(p)-b.Pos) {
					b.Fail()
					break
				}
				sub, err := DecodeExpr(s, p[b.Pos:b.Pos+int(n)], u)
				if err != nil {
					return nil, err
				}
				op.Sub = sub
				b.Pos += int(n)
			case 0xa8, 0xf7, 0xa9, 0xf9: // convert, reinterpret and their GNU forms
				op.Code = dwarfexpr.OpConvert
				if c == 0xa9 || c == 0xf9 {
					op.Code = dwarfexpr.OpReinterpret
				}
				op.Uint = b.Uleb()
			case 0xa4, 0xf4: // const_type, GNU_const_type
				op.Code = dwarfexpr.OpConstType
				op.Uint = b.Uleb()
				n := uint64(b.U8())
				if b.Err == nil && n <= uint64(len(p)-b.Pos) {
					op.Block = p[b.Pos : b.Pos+int(n)]
					b.Pos += int(n)
				} else {
					b.Fail()
				}
			case 0xa5, 0xf5: // regval_type, GNU_regval_type
				op.Code = dwarfexpr.OpRegvalType
				op.Reg = int(b.Uleb())
				op.Uint = b.Uleb()
			case 0xa6, 0xf6: // deref_type, GNU_deref_type
				op.Code = dwarfexpr.OpDerefType
				op.Int = int64(b.U8())
				op.Uint = b.Uleb()
			case 0x9b, 0xe0: // form_tls_address, GNU_push_tls_address
				op.Code = dwarfexpr.OpFormTLSAddr
			case 0xa1, 0xfb, 0xa2, 0xfc: // addrx, GNU_addr_index, constx, GNU_const_index
				v, ok := s.AddrIndex(b.Uleb(), u)
				if !ok {
					return nil, fmt.Errorf("location expression: address index out of range at byte %d", at)
				}
				op.Code, op.Uint = dwarfexpr.OpAddr, v
				if c == 0xa2 || c == 0xfc {
					op.Code = dwarfexpr.OpConstu
				}
			case 0x06, 0x12, 0x13, 0x14, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
				0x20, 0x21, 0x22, 0x24, 0x25, 0x26, 0x27, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e,
				0x96, 0x9c, 0x9f:
			default:
				return nil, fmt.Errorf("location expression: unsupported operation %#x at byte %d", c, at)
			}
		}
		out = append(out, op)
	}
	if b.Err != nil {
		return nil, fmt.Errorf("location expression: %w", b.Err)
	}
	return out, nil
}
