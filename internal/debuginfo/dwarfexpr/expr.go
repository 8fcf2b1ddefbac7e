package dwarfexpr

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// OpCode is a DWARF expression operation, DW_OP_*.
type OpCode uint8

// The operations a location expression may hold. DW_OP_lit0..31,
// DW_OP_reg0..31 and DW_OP_breg0..31 are decoded as OpLit, OpReg and
// OpBreg with the number in Op.Reg or Op.Uint, so that a consumer
// switches on one code for each.
// DW_OP_const1u..8s are decoded as OpConstu or OpConsts, DW_OP_addrx as
// OpAddr and DW_OP_constx as OpConstu, with the index resolved.
const (
	OpAddr          OpCode = 0x03
	OpDeref         OpCode = 0x06
	OpConstu        OpCode = 0x10
	OpConsts        OpCode = 0x11
	OpDup           OpCode = 0x12
	OpDrop          OpCode = 0x13
	OpOver          OpCode = 0x14
	OpPick          OpCode = 0x15
	OpSwap          OpCode = 0x16
	OpRot           OpCode = 0x17
	opXderef        OpCode = 0x18
	opAbs           OpCode = 0x19
	OpAnd           OpCode = 0x1a
	OpDiv           OpCode = 0x1b
	OpMinus         OpCode = 0x1c
	OpMod           OpCode = 0x1d
	OpMul           OpCode = 0x1e
	OpNeg           OpCode = 0x1f
	OpNot           OpCode = 0x20
	OpOr            OpCode = 0x21
	OpPlus          OpCode = 0x22
	OpPlusUconst    OpCode = 0x23
	OpShl           OpCode = 0x24
	OpShr           OpCode = 0x25
	OpShra          OpCode = 0x26
	OpXor           OpCode = 0x27
	OpBra           OpCode = 0x28
	opEq            OpCode = 0x29
	opGe            OpCode = 0x2a
	opGt            OpCode = 0x2b
	opLe            OpCode = 0x2c
	opLt            OpCode = 0x2d
	opNe            OpCode = 0x2e
	opSkip          OpCode = 0x2f
	OpLit           OpCode = 0x30 // DW_OP_lit0..31: the value in Uint
	OpReg           OpCode = 0x50 // DW_OP_reg0..31 and DW_OP_regx: the register in Reg
	OpBreg          OpCode = 0x70 // DW_OP_breg0..31 and DW_OP_bregx: register Reg plus Int
	OpFbreg         OpCode = 0x91 // the frame base plus Int
	OpPiece         OpCode = 0x93 // the preceding value is Uint bytes of the variable
	OpDerefSize     OpCode = 0x94 // read Uint bytes
	OpNop           OpCode = 0x96
	OpCallFrameCFA  OpCode = 0x9c
	OpImplicitValue OpCode = 0x9e // the value is Block
	OpStackValue    OpCode = 0x9f // the top of the stack is the value, not its address
	OpImplicitPtr   OpCode = 0xa0 // a pointer to the variable of DIE Uint, plus Int
	OpEntryValue    OpCode = 0xa3 // the value Sub had on entry to the function
	OpConvert       OpCode = 0xa8 // convert to the base type at unit offset Uint (0: generic)
	OpReinterpret   OpCode = 0xa9 // reinterpret as the base type at unit offset Uint
	OpConstType     OpCode = 0xa4 // Block, of the base type at unit offset Uint
	OpRegvalType    OpCode = 0xa5 // register Reg's value, of the base type at unit offset Uint
	OpDerefType     OpCode = 0xa6 // read Int bytes, of the base type at unit offset Uint
	OpFormTLSAddr   OpCode = 0x9b // the address of the thread-local variable at the offset on the stack
	OpBitPiece      OpCode = 0x9d // Uint bits at bit offset Int
)

// Op is one decoded operation with its operands.
type Op struct {
	Code  OpCode
	Reg   int    // the DWARF register of OpReg and OpBreg
	Int   int64  // a signed operand: an offset, OpConsts's value, OpBra's and OpSkip's displacement in bytes
	Uint  uint64 // an unsigned operand: an address, OpConstu's value, a size
	Block []byte // OpImplicitValue's bytes
	Sub   []Op   // OpEntryValue's expression
}

// Expr is a location expression, decoded. Empty means the variable has
// no location: it was optimised out.
type Expr []Op

// String writes the expression as readelf does, for messages and tests.
func (e Expr) String() string {
	var b strings.Builder
	for i, op := range e {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(op.String())
	}
	return b.String()
}

// opNames are the operations' names after DW_OP_, by code: an array,
// not a map, so that it is static data, made at no cost at start-up.
var opNames = [256]string{
	OpAddr: "addr", OpDeref: "deref", OpConstu: "constu", OpConsts: "consts", OpDup: "dup",
	OpDrop: "drop", OpOver: "over", OpPick: "pick", OpSwap: "swap", OpRot: "rot", opXderef: "xderef",
	opAbs: "abs", OpAnd: "and", OpDiv: "div", OpMinus: "minus", OpMod: "mod", OpMul: "mul", OpNeg: "neg",
	OpNot: "not", OpOr: "or", OpPlus: "plus", OpPlusUconst: "plus_uconst", OpShl: "shl", OpShr: "shr",
	OpShra: "shra", OpXor: "xor", OpBra: "bra", opEq: "eq", opGe: "ge", opGt: "gt", opLe: "le", opLt: "lt",
	opNe: "ne", opSkip: "skip", OpLit: "lit", OpReg: "reg", OpBreg: "breg", OpFbreg: "fbreg",
	OpPiece: "piece", OpDerefSize: "deref_size", OpNop: "nop", OpCallFrameCFA: "call_frame_cfa",
	OpImplicitValue: "implicit_value", OpStackValue: "stack_value", OpImplicitPtr: "implicit_pointer",
	OpEntryValue: "entry_value", OpConvert: "convert", OpBitPiece: "bit_piece",
	OpReinterpret: "reinterpret", OpConstType: "const_type", OpRegvalType: "regval_type",
	OpDerefType: "deref_type", OpFormTLSAddr: "form_tls_address",
}

func (op Op) String() string {
	n := "DW_OP_" + opNames[op.Code]
	switch op.Code {
	case OpLit:
		return fmt.Sprintf("DW_OP_lit%d", op.Uint)
	case OpReg:
		return fmt.Sprintf("DW_OP_reg%d", op.Reg)
	case OpBreg:
		return fmt.Sprintf("DW_OP_breg%d %d", op.Reg, op.Int)
	case OpFbreg, OpConsts, OpBra, opSkip:
		return fmt.Sprintf("%s %d", n, op.Int)
	case OpAddr:
		return fmt.Sprintf("%s %#x", n, op.Uint)
	case OpConstu, OpPlusUconst, OpPiece, OpDerefSize, OpPick:
		return fmt.Sprintf("%s %d", n, op.Uint)
	case OpConvert, OpReinterpret:
		return fmt.Sprintf("%s <%#x>", n, op.Uint)
	case OpConstType:
		return fmt.Sprintf("%s <%#x> % x", n, op.Uint, op.Block)
	case OpRegvalType:
		return fmt.Sprintf("%s %d <%#x>", n, op.Reg, op.Uint)
	case OpDerefType:
		return fmt.Sprintf("%s %d <%#x>", n, op.Int, op.Uint)
	case OpBitPiece:
		return fmt.Sprintf("%s %d %d", n, op.Uint, op.Int)
	case OpImplicitValue:
		return fmt.Sprintf("%s %d % x", n, len(op.Block), op.Block)
	case OpImplicitPtr:
		return fmt.Sprintf("%s <%#x> %d", n, op.Uint, op.Int)
	case OpEntryValue:
		return fmt.Sprintf("%s (%s)", n, Expr(op.Sub))
	}
	return n
}

// implicitConst returns the expression for a constant value: the bytes of
// DW_AT_const_value, as DW_OP_implicit_value would hold them.
func ImplicitConst(v uint64, size int) Expr {
	blk := binary.LittleEndian.AppendUint64(nil, v)
	if size > 0 && size < 8 {
		blk = blk[:size]
	}
	return Expr{{Code: OpImplicitValue, Uint: uint64(len(blk)), Block: blk}}
}
