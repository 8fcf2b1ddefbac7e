package amd64

import (
	"bytes"
	"fmt"
	"strconv"
)

// An OffsetError reports a probe offset that is not the start of an
// instruction. Offsets are from the function's entry, as in
// kinst::func:offset.
type OffsetError struct {
	Off  uint64
	Size uint64 // the function's size

	// Below and Above are the nearest instruction boundaries on either
	// side of Off; HasBelow and HasAbove are false when there is none.
	Below, Above       uint64
	HasBelow, HasAbove bool

	InData      bool // Off lies in bytes that are not code
	InFtraceNOP bool // Off lies inside the ftrace NOP at the entry

	// Hex writes the offsets in hex, as the pid provider names them;
	// kinst's are decimal.
	Hex bool
}

func (e *OffsetError) Error() string {
	if e.Off >= e.Size {
		return fmt.Sprintf("offset %s is past the end of the function (size %s)", e.format(e.Off), e.format(e.Size))
	}
	what := "is not an instruction boundary"
	switch {
	case e.InFtraceNOP:
		what = "is inside the 5-byte ftrace NOP"
	case e.InData:
		what = "is in data, not code"
	}
	var near []string
	if e.HasBelow {
		near = append(near, e.format(e.Below))
	}
	if e.HasAbove {
		near = append(near, e.format(e.Above))
	}
	switch len(near) {
	case 2:
		return fmt.Sprintf("offset %s %s (nearest boundaries: %s and %s)", e.format(e.Off), what, near[0], near[1])
	case 1:
		return fmt.Sprintf("offset %s %s (nearest boundary: %s)", e.format(e.Off), what, near[0])
	}
	return fmt.Sprintf("offset %s %s", e.format(e.Off), what)
}

func (e *OffsetError) format(off uint64) string {
	if e.Hex {
		return "0x" + strconv.FormatUint(off, 16)
	}
	return strconv.FormatUint(off, 10)
}

// CheckOffset reports whether off, an offset from the function's entry,
// is the start of an instruction, where a kinst probe can go. If not, the
// error is an *OffsetError naming the nearest boundaries. The ftrace NOP
// itself is a boundary: see FtraceNOP.
func (f *Function) CheckOffset(off uint64) error {
	size := f.End() - f.Addr
	if off >= size {
		e := &OffsetError{Off: off, Size: size}
		e.Below, e.HasBelow = f.boundaryBelow(f.index(f.End() - 1))
		return e
	}
	i := f.index(f.Addr + off)
	in := f.Insts[i]
	if in.Addr == f.Addr+off && in.Op != Data {
		return nil
	}
	e := &OffsetError{Off: off, Size: size, InData: in.Op == Data}
	if nop, ok := f.FtraceNOP(); ok && f.Addr+off > nop.Addr && f.Addr+off < nop.End() {
		e.InFtraceNOP = true
	}
	if in.Op == Data {
		e.Below, e.HasBelow = f.boundaryBelow(i - 1)
	} else {
		e.Below, e.HasBelow = in.Addr-f.Addr, true
	}
	e.Above, e.HasAbove = f.boundaryAbove(i + 1)
	return e
}

// boundaryBelow returns the offset of the last instruction of the
// function, cold parts aside, at or before Insts[i].
func (f *Function) boundaryBelow(i int) (uint64, bool) {
	for ; i >= 0 && f.Insts[i].Addr >= f.Addr; i-- {
		if f.Insts[i].Op != Data {
			return f.Insts[i].Addr - f.Addr, true
		}
	}
	return 0, false
}

// boundaryAbove returns the offset of the first instruction of the
// function, cold parts aside, at or after Insts[i].
func (f *Function) boundaryAbove(i int) (uint64, bool) {
	for ; i < len(f.Insts) && f.Insts[i].Addr < f.End(); i++ {
		if f.Insts[i].Op != Data {
			return f.Insts[i].Addr - f.Addr, true
		}
	}
	return 0, false
}

var (
	ftraceNOP = []byte{0x0f, 0x1f, 0x44, 0x00, 0x00} // nopl 0x0(%rax,%rax,1)
	endbr64   = []byte{0xf3, 0x0f, 0x1e, 0xfa}
)

// FtraceNOP returns the 5-byte NOP that Linux puts at a function's entry,
// or just after its endbr64, for ftrace to patch into a call at run time.
// A probe on it is allowed, but ftrace may rewrite those bytes while
// the probe is armed, and a probe inside it never is: callers should warn.
//
// Only the NOP form is recognised, as found in the running kernel's text
// and in a vmlinux whose calls to __fentry__ objtool has replaced; an
// unlinked module still holds the call itself.
func (f *Function) FtraceNOP() (Inst, bool) {
	code := f.parts[0].Code
	i := f.index(f.Addr)
	if bytes.HasPrefix(code, endbr64) {
		i++
	}
	if i < len(f.Insts) && f.Insts[i].Addr < f.End() {
		in := f.Insts[i]
		if in.Op == nop && bytes.HasPrefix(code[in.Addr-f.Addr:], ftraceNOP) {
			return in, true
		}
	}
	return Inst{}, false
}
