package amd64

import "fmt"

// kind classifies an instruction by what it does to control flow.
type kind uint8

const (
	Plain        kind = iota // falls through to the next instruction
	nop                      // a no-operation, usually alignment padding
	jump                     // direct unconditional jump to Target
	condJump                 // direct conditional jump to Target (jcc, jrcxz, loop, xbegin)
	indirectJump             // jump through a register or memory
	Call                     // direct call to Target; falls through
	indirectCall             // call through a register or memory; falls through
	Ret                      // return (ret, iret, sysret and the like)
	Trap                     // ud0, ud1, ud2 or int3: the path ends
	halt                     // hlt
	Data                     // bytes that are not code: not an instruction
)

var kindNames = [...]string{
	Plain:        "Plain",
	nop:          "Nop",
	jump:         "Jump",
	condJump:     "CondJump",
	indirectJump: "IndirectJump",
	Call:         "Call",
	indirectCall: "IndirectCall",
	Ret:          "Ret",
	Trap:         "Trap",
	halt:         "Halt",
	Data:         "Data",
}

func (k kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// fallsThrough reports whether execution may continue with the next
// instruction after an instruction of kind k.
func (k kind) fallsThrough() bool {
	switch k {
	case jump, indirectJump, Ret, Trap, halt, Data:
		return false
	}
	return true
}

// Inst is one decoded instruction, or a run of bytes that are not code
// (Op == Data).
type Inst struct {
	Addr   uint64
	Len    int
	Op     kind
	Target uint64 // destination of a direct Jump, CondJump or Call; else 0
}

// End returns the address just past the instruction.
func (in Inst) End() uint64 { return in.Addr + uint64(in.Len) }

func (in Inst) String() string {
	if in.Op == jump || in.Op == condJump || in.Op == Call {
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
