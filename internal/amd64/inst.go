package amd64

import "fmt"

// Kind classifies an instruction by what it does to control flow.
type Kind uint8

const (
	Plain        Kind = iota // falls through to the next instruction
	Nop                      // a no-operation, usually alignment padding
	Jump                     // direct unconditional jump to Target
	CondJump                 // direct conditional jump to Target (jcc, jrcxz, loop, xbegin)
	IndirectJump             // jump through a register or memory
	Call                     // direct call to Target; falls through
	IndirectCall             // call through a register or memory; falls through
	Ret                      // return (ret, iret, sysret and the like)
	Trap                     // ud0, ud1, ud2 or int3: the path ends
	Halt                     // hlt
	Data                     // bytes that are not code: not an instruction
)

var kindNames = [...]string{
	Plain:        "Plain",
	Nop:          "Nop",
	Jump:         "Jump",
	CondJump:     "CondJump",
	IndirectJump: "IndirectJump",
	Call:         "Call",
	IndirectCall: "IndirectCall",
	Ret:          "Ret",
	Trap:         "Trap",
	Halt:         "Halt",
	Data:         "Data",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// fallsThrough reports whether execution may continue with the next
// instruction after an instruction of kind k.
func (k Kind) fallsThrough() bool {
	switch k {
	case Jump, IndirectJump, Ret, Trap, Halt, Data:
		return false
	}
	return true
}

// Inst is one decoded instruction, or a run of bytes that are not code
// (Op == Data).
type Inst struct {
	Addr   uint64
	Len    int
	Op     Kind
	Target uint64 // destination of a direct Jump, CondJump or Call; else 0
}

// End returns the address just past the instruction.
func (in Inst) End() uint64 { return in.Addr + uint64(in.Len) }

func (in Inst) String() string {
	if in.Op == Jump || in.Op == CondJump || in.Op == Call {
		return fmt.Sprintf("%#x+%d %v %#x", in.Addr, in.Len, in.Op, in.Target)
	}
	return fmt.Sprintf("%#x+%d %v", in.Addr, in.Len, in.Op)
}

// Range is the half-open address range [Lo, Hi), as DWARF describes the
// pieces of an inlined function.
type Range struct {
	Lo, Hi uint64
}

func (r Range) String() string { return fmt.Sprintf("[%#x,%#x)", r.Lo, r.Hi) }
