package check

import (
	"slices"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
)

// A Frame is what locals-> reads at the probes of a description: the
// variables and parameters in scope at their address in the traced
// function (its lexical blocks and the inlined copies holding the
// address), as the function's debugging information gives them there.
type Frame struct {
	// Function names the function the probes are in, for messages.
	Function string
	// Locals are innermost first: the first of a name is the one C
	// would use.
	Locals []*Local
	Place  Place
}

// Lookup returns the local called name that locals->name reads: the
// innermost that has a location at the probes, else the innermost, or
// nil. An inlined copy's variable optimised out where the probe is
// (gcc schedules a callee's first instructions among its caller's) so
// does not hide the caller's of the same name.
func (f *Frame) Lookup(name string) *Local {
	var first *Local
	for _, l := range f.Locals {
		if l.Name != name {
			continue
		}
		if len(l.Loc) > 0 && l.Type != nil {
			return l
		}
		if first == nil {
			first = l
		}
	}
	return first
}

// Place is what the code generator needs, besides a variable's
// location, to read it at the probes.
type Place struct {
	// User says the probes are in a process (pid): registers are read
	// from uregs[], memory with user loads. Else they are the
	// kernel's, regs[] and kernel memory.
	User bool
	// Entry says the probes are at their function's first instruction,
	// where the registers still hold what DW_OP_entry_value asks for.
	Entry bool
	// FrameBase is the function's DW_AT_frame_base at the probes, what
	// DW_OP_fbreg is relative to.
	FrameBase dwarfexpr.Expr
	// CFA is the canonical frame address at the probes, for
	// DW_OP_call_frame_cfa.
	CFA CFA
	// Bias is added to the addresses of DW_OP_addr: where the image is
	// loaded minus where it is linked, when known at compile time (a
	// kernel's, 0 for an image read as it runs).
	Bias uint64
	// PCBias says the bias is known only at run time: the probe's
	// address (the instruction pointer at the probe) minus PC, the
	// probe's link-time address (a position-independent executable's or
	// a library's, placed anywhere in each process).
	PCBias bool
	PC     uint64
}

// CFA is the canonical frame address at an address, as the call frame
// information gives it: register Reg (a DWARF number) plus Off; Err
// says why it is not known.
type CFA struct {
	Reg int
	Off int64
	Err error
}

// A Local is a variable or parameter of the traced function.
type Local struct {
	Name string
	// Inlined names the inlined function whose copy declares it; ""
	// for the function's own.
	Inlined string
	Param   bool
	Type    types.Type // nil when Unavailable says why
	// Loc is its location at the probes; empty when it has none there,
	// and Unavailable then says why, and where it has one.
	Loc         dwarfexpr.Expr
	Unavailable string
	// Source says where Loc reads it when that is not its debugging
	// information's location (the calling convention's place at the
	// function's entry), for -lv.
	Source string
	// CallValues, for a Loc that is its value on entry
	// (DW_OP_entry_value) at probes past the function's first
	// instruction, are that value as the function's call sites give it.
	CallValues []CallValue
	Frame      *Frame
}

// localMember checks a member m of locals->name, a struct in pieces
// some of which the compiler left without a location: m must lie in
// those it gave one.
func (c *Checker) localMember(pos token.Pos, l *Local, m types.Member) {
	width := 8 * m.Type.Size()
	if m.BitSize != 0 {
		width = m.BitSize
	}
	lo, hi := m.Offset/8, (m.Offset+width+7)/8
	var off int64
	start := 0
	for i, op := range l.Loc {
		if op.Code != dwarfexpr.OpPiece {
			continue
		}
		n := int64(op.Uint)
		if i == start && lo < off+n && off < hi {
			c.errorf(pos, diag.D_LOCALS_OPT, "locals->%s.%s is not available at %s: it is in the part of %s optimized out there (%s)\n",
				l.Name, m.Name, c.probeDesc, l.Name, l.Loc)
		}
		off += n
		start = i + 1
	}
	if start > 0 && hi > off {
		c.errorf(pos, diag.D_LOCALS_OPT, "locals->%s.%s is not available at %s: it is in the part of %s optimized out there (%s)\n",
			l.Name, m.Name, c.probeDesc, l.Name, l.Loc)
	}
}

// InMemory reports whether a location is the address of the whole
// variable: not a register, a value, nor pieces.
func InMemory(loc dwarfexpr.Expr) bool {
	if len(loc) == 0 {
		return false
	}
	for _, op := range loc {
		if op.Code == dwarfexpr.OpPiece || op.Code == dwarfexpr.OpBitPiece {
			return false
		}
	}
	switch loc[len(loc)-1].Code {
	case dwarfexpr.OpReg, dwarfexpr.OpImplicitValue, dwarfexpr.OpStackValue, dwarfexpr.OpImplicitPtr:
		return false
	}
	return true
}

// CallValue is a parameter's value on entry as one call site gives it.
type CallValue struct {
	// ReturnPC is the call's return address, as the image links it:
	// the return address on the stack at the probe says the function
	// was called from here.
	ReturnPC uint64
	// Value computes the value at the probe.
	Value dwarfexpr.Expr
}

// local checks locals->name.
func (c *Checker) local(e *ast.SelectorExpr) *Value {
	pos := ast.DiagPos(e)
	name := e.Sel.Name
	if !c.inClause {
		c.errorf(pos, diag.D_LOCALS_NONE, "locals-> may not be referenced outside of a probe clause\n")
	}
	if c.probeLocals == nil {
		c.errorf(pos, diag.D_LOCALS_NONE, "locals->%s is not available at %s: locals-> reads a traced function's variables at kinst and pid probes\n", name, c.probeDesc)
	}
	f, err := c.probeLocals()
	if err != nil {
		c.errorf(pos, diag.D_LOCALS_NONE, "locals->%s is not available at %s: %s\n", name, c.probeDesc, err)
	}
	l := f.Lookup(name)
	if l == nil {
		names := make([]string, 0, len(f.Locals))
		for _, l := range f.Locals {
			if !slices.Contains(names, l.Name) {
				names = append(names, l.Name)
			}
		}
		there := "none"
		if len(names) > 0 {
			there = strings.Join(names, ", ")
		}
		c.errorf(pos, diag.D_LOCALS_UNDEF, "%s is not a variable or parameter of %s at %s%s; in scope there: %s\n",
			name, f.Function, c.probeDesc, suggestion(name, append([]string(nil), names...)), there)
	}
	if len(l.Loc) == 0 || l.Type == nil {
		c.errorf(pos, diag.D_LOCALS_OPT, "locals->%s is not available at %s: %s\n", name, c.probeDesc, l.Unavailable)
	}
	// At a pid probe, pointers and by-reference values in memory are
	// in the process's memory, as a member of user memory is
	// (selector); a struct in registers or in pieces is copied to
	// scratch memory.
	v := typed(l.Type, false)
	if f.Place.User && (isPointerKind(types.Resolve(l.Type)) || v.Flags&Ref != 0 && InMemory(l.Loc)) {
		v.Flags |= Userland
	}
	v.Local = l
	c.record(e.Sel, v)
	return v
}
