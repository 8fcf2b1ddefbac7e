package dif

import "fmt"

// Instr is one DIF instruction word. The layout is dtrace's:
//
//	op[31:24] | r1[23:16] | r2[15:8] | rd[7:0]
//
// with the middle 16 bits (r1 and r2 together) read as one index by setx,
// sets, the variable loads and stores, call, xlate and xlarg, and the low
// 24 bits read as the target by branches.
type Instr uint32

// Fmt builds the base form of an instruction, DIF_INSTR_FMT.
func Fmt(op Op, r1, r2, rd uint8) Instr {
	return Instr(op)<<24 | Instr(r1)<<16 | Instr(r2)<<8 | Instr(rd)
}

// ALU builds a three-register instruction op r1, r2, rd (or … urem, sra,
// copys).
func ALU(op Op, r1, r2, rd uint8) Instr { return Fmt(op, r1, r2, rd) }

// Not builds not r1, rd.
func Not(r1, rd uint8) Instr { return Fmt(NOT, r1, 0, rd) }

// Mov builds mov r1, rd.
func Mov(r1, rd uint8) Instr { return Fmt(MOV, r1, 0, rd) }

// Cmp builds cmp r1, r2 (op CMP) or scmp r1, r2 (op SCMP).
func Cmp(op Op, r1, r2 uint8) Instr { return Fmt(op, r1, r2, 0) }

// Tst builds tst r1.
func Tst(r1 uint8) Instr { return Fmt(TST, r1, 0, 0) }

// Branch builds a branch to an absolute instruction index. Only the low
// 24 bits of target are kept.
func Branch(op Op, target uint32) Instr {
	return Instr(op)<<24 | Instr(target&MaxLabel)
}

// Load builds a memory load op [r1], rd (ld*, uld*, rld*).
func Load(op Op, r1, rd uint8) Instr { return Fmt(op, r1, 0, rd) }

// Store builds a memory store op rs, [rd] (stb, sth, stw, stx): the
// value is in rs, the address in rd.
func Store(op Op, rs, rd uint8) Instr { return Fmt(op, rs, 0, rd) }

// Setx builds setx DT_INTEGER[index], rd.
func Setx(index uint16, rd uint8) Instr { return idx(SETX, index, rd) }

// Sets builds sets DT_STRING[offset], rd.
func Sets(offset uint16, rd uint8) Instr { return idx(SETS, offset, rd) }

// Ret builds ret rd.
func Ret(rd uint8) Instr { return Fmt(RET, 0, 0, rd) }

// Nop builds nop.
func Nop() Instr { return Instr(NOP) << 24 }

// Lda builds a load from a built-in array, ldga/ldta var, ri, rd; the
// array id has 8 bits.
func Lda(op Op, v, ri, rd uint8) Instr { return Fmt(op, v, ri, rd) }

// Ldv builds a variable load op var, rd (ldgs, ldts, ldls, ldgaa, ldtaa).
func Ldv(op Op, v uint16, rd uint8) Instr { return idx(op, v, rd) }

// Stv builds a variable store op rs, var (stgs, stts, stls, stgaa,
// sttaa).
func Stv(op Op, v uint16, rs uint8) Instr { return idx(op, v, rs) }

// Call builds call subr, rd.
func Call(subr uint16, rd uint8) Instr { return idx(CALL, subr, rd) }

// Pushtr builds pushtr typ, rsize, rs: push the reference in rs, whose
// size is in rsize (%r0 for a string of the default size), on the tuple
// stack.
func Pushtr(typ, rsize, rs uint8) Instr { return Fmt(PUSHTR, typ, rsize, rs) }

// Pushtv builds pushtv typ, rs with r2 = %r0, as dtrace's code generator
// writes it: push the value in rs on the tuple stack.
func Pushtv(typ, rs uint8) Instr { return Fmt(PUSHTV, typ, 0, rs) }

// Pusht builds pushtr or pushtv with every field given.
func Pusht(op Op, typ, r2, rs uint8) Instr { return Fmt(op, typ, r2, rs) }

// Popts builds popts.
func Popts() Instr { return Instr(POPTS) << 24 }

// Flushts builds flushts.
func Flushts() Instr { return Instr(FLUSHTS) << 24 }

// Allocs builds allocs r1, rd.
func Allocs(r1, rd uint8) Instr { return Fmt(ALLOCS, r1, 0, rd) }

// Copys builds copys r1, r2, rd.
func Copys(r1, r2, rd uint8) Instr { return Fmt(COPYS, r1, r2, rd) }

// Xlate builds xlate or xlarg DT_XLREF[index], rd.
func Xlate(op Op, index uint16, rd uint8) Instr { return idx(op, index, rd) }

func idx(op Op, index uint16, rd uint8) Instr {
	return Instr(op)<<24 | Instr(index)<<8 | Instr(rd)
}

// Op returns the opcode (bits 31–24).
func (i Instr) Op() Op { return Op(i >> 24) }

// R1 returns the first source register (bits 23–16); for ldga/ldta it is
// the array id and for pushtr/pushtv the type.
func (i Instr) R1() uint8 { return uint8(i >> 16) }

// R2 returns the second source register (bits 15–8).
func (i Instr) R2() uint8 { return uint8(i >> 8) }

// RD returns the destination register (bits 7–0).
func (i Instr) RD() uint8 { return uint8(i) }

// RS returns the source register of a variable store or a tuple push: the
// same bits as RD.
func (i Instr) RS() uint8 { return uint8(i) }

// Label returns a branch's target (bits 23–0).
func (i Instr) Label() uint32 { return uint32(i) & MaxLabel }

// Index returns the 16-bit field in bits 23–8: the integer-table index of
// setx, the string offset of sets, the variable of a load or store, the
// subroutine of call, the translator reference of xlate and xlarg.
func (i Instr) Index() uint16 { return uint16(i >> 8) }

// Var returns the variable id of ldgs … sttaa (same bits as Index).
func (i Instr) Var() uint16 { return i.Index() }

// Subr returns the subroutine of call (same bits as Index).
func (i Instr) Subr() uint16 { return i.Index() }

// Type returns the tuple type of pushtr and pushtv (same bits as R1).
func (i Instr) Type() uint8 { return i.R1() }

// WithLabel returns the branch i with its target replaced.
func (i Instr) WithLabel(target uint32) Instr { return Branch(i.Op(), target) }

// WithIndex returns i with its 16-bit index field replaced.
func (i Instr) WithIndex(index uint16) Instr { return idx(i.Op(), index, i.RD()) }

// String returns the instruction in dtrace's assembler syntax, without
// the comments the disassembler adds from the DIFO's tables.
func (i Instr) String() string {
	return instrText(i, nil)
}

// GoString shows the word in hex with its text.
func (i Instr) GoString() string { return fmt.Sprintf("dif.Instr(%#08x /* %s */)", uint32(i), i) }
