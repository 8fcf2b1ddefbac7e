package locals

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// Where the System V x86-64 calling convention (psABI §3.2.3) puts a
// function's arguments at its first instruction. At -O0, gcc and clang
// describe a parameter by the frame slot its prologue stores it in,
// which holds garbage until then; the convention says where the
// caller left it.

// argLoc is where the convention puts one argument on entry.
type argLoc struct {
	// Regs are the DWARF numbers of the general-purpose registers
	// holding it, an eightbyte each; empty when it is not in them.
	Regs []int
	// Stack is its offset from the canonical frame address (rsp+8 at
	// the first instruction: the first stack argument is at CFA+0),
	// when Memory is set.
	Stack  int64
	Memory bool
	// SSE says it is, in whole or in part, in xmm registers.
	SSE bool
	// None of them is set for an empty struct, which is passed
	// nowhere.
	// Err says why it could not be placed (a type the convention is
	// not applied to here); the arguments after it cannot be placed
	// either.
	Err error
}

// DWARF numbers of the integer argument registers, in order: rdi, rsi,
// rdx, rcx, r8, r9.
var sysvIntRegs = [...]int{5, 4, 1, 2, 8, 9}

// sysvRegNames are the names of DWARF registers 0-16 on amd64.
var sysvRegNames = [...]string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}

// regName returns the name of amd64's DWARF register n.
func regName(n int) string {
	if n >= 0 && n < len(sysvRegNames) {
		return sysvRegNames[n]
	}
	return fmt.Sprintf("DWARF register %d", n)
}

// String says where the argument is, for -lv.
func (a argLoc) String() string {
	switch {
	case a.Err != nil:
		return a.Err.Error()
	case a.Memory:
		return fmt.Sprintf("stack CFA%+d", a.Stack)
	case len(a.Regs) > 0 && a.SSE:
		return strings.Join(regNames(a.Regs), ", ") + " and xmm registers"
	case a.SSE:
		return "xmm registers"
	}
	return strings.Join(regNames(a.Regs), ", ")
}

func regNames(rs []int) []string {
	var s []string
	for _, r := range rs {
		s = append(s, regName(r))
	}
	return s
}

// argClass is the class of an eightbyte (psABI §3.2.3).
type argClass uint8

const (
	classNone argClass = iota
	classInteger
	classSSE
	classX87 // long double; its second eightbyte is X87UP
	classX87Up
	classMemory
)

// mergeClass combines the classes of two fields sharing an eightbyte.
func mergeClass(a, b argClass) argClass {
	switch {
	case a == b:
		return a
	case a == classNone:
		return b
	case b == classNone:
		return a
	case a == classMemory || b == classMemory:
		return classMemory
	case a == classInteger || b == classInteger:
		return classInteger
	case a == classX87 || a == classX87Up || b == classX87 || b == classX87Up:
		return classMemory
	}
	return classSSE
}

// classify returns the classes of t's eightbytes, or an error for a
// type it does not know.
func classify(t types.Type) ([]argClass, error) {
	size := t.Size()
	if size > 16 {
		return []argClass{classMemory}, nil
	}
	cs := make([]argClass, (size+7)/8)
	if err := classifyAt(t, 0, cs, 0); err != nil {
		return nil, err
	}
	for i, c := range cs {
		switch {
		case c == classMemory:
			return []argClass{classMemory}, nil
		case c == classX87Up && (i == 0 || cs[i-1] != classX87):
			return []argClass{classMemory}, nil
		}
	}
	return cs, nil
}

// classifyAt merges the classes of t, at byte offset off, into cs;
// depth is how deep in structs and arrays t is, bounded against a
// struct that damaged DWARF makes hold itself.
func classifyAt(t types.Type, off int64, cs []argClass, depth int) error {
	if depth > 32 {
		return fmt.Errorf("%s nests too deep", t)
	}
	put := func(at int64, c argClass) {
		if i := at / 8; i >= 0 && i < int64(len(cs)) {
			cs[i] = mergeClass(cs[i], c)
		}
	}
	switch u := types.Resolve(t).(type) {
	case *types.Int, *types.Pointer, *types.Enum:
		if off%u.Align() != 0 {
			put(off, classMemory)
			return nil
		}
		for b := int64(0); b < u.Size(); b += 8 {
			put(off+b, classInteger)
		}
	case *types.Float:
		switch {
		case strings.Contains(u.Name, "complex") && u.Bytes > 16,
			u.Name == "long double" && off%16 != 0:
			put(off, classMemory)
		case u.Name == "long double":
			put(off, classX87)
			put(off+8, classX87Up)
		default:
			for b := int64(0); b < u.Bytes; b += 8 {
				put(off+b, classSSE)
			}
		}
	case *types.Array:
		n := u.Elem.Size()
		for i := int64(0); n > 0 && i < u.Len && off+i*n < 8*int64(len(cs)); i++ {
			if err := classifyAt(u.Elem, off+i*n, cs, depth+1); err != nil {
				return err
			}
		}
	case *types.Struct:
		if u.Incomplete {
			return fmt.Errorf("%s is incomplete", u)
		}
		for _, m := range u.Members() {
			if m.BitSize != 0 {
				put(off+m.Offset/8, classInteger)
				continue
			}
			if m.Offset%8 != 0 || (off+m.Offset/8)%m.Type.Align() != 0 {
				put(off+m.Offset/8, classMemory)
				continue
			}
			if err := classifyAt(m.Type, off+m.Offset/8, cs, depth+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("the calling convention is not applied to %s here", t)
	}
	return nil
}

// returnsInMemory reports whether a function returning t returns it
// in memory, through a pointer its caller passes in rdi.
func returnsInMemory(t types.Type) (bool, error) {
	if t == nil {
		return false, nil
	}
	if _, ok := types.Resolve(t).(types.Void); ok {
		return false, nil
	}
	cs, err := classify(t)
	if err != nil {
		return false, err
	}
	return len(cs) > 0 && cs[0] == classMemory, nil
}

// sysvPlaces places parameters of types params, of a function returning
// result (nil for void), as the caller leaves them at the function's
// first instruction.
func sysvPlaces(params []types.Type, result types.Type) []argLoc {
	out := make([]argLoc, len(params))
	nextInt, nextSSE := 0, 0
	var stack int64
	hidden, err := returnsInMemory(result)
	if err != nil {
		err = fmt.Errorf("the result's type %s cannot be classified: %w", result, err)
	}
	if hidden {
		nextInt++
	}
	for i, t := range params {
		if err != nil {
			out[i].Err = fmt.Errorf("an argument before it cannot be placed: %w", err)
			continue
		}
		if t == nil {
			err = errors.New("its type is not known")
			out[i].Err = err
			continue
		}
		var cs []argClass
		if cs, err = classify(t); err != nil {
			out[i].Err = err
			continue
		}
		if len(cs) == 0 {
			continue // an empty struct is passed nowhere
		}
		nInt, nSSE := 0, 0
		for _, c := range cs {
			switch c {
			case classInteger:
				nInt++
			case classSSE:
				nSSE++
			}
		}
		mem := cs[0] == classMemory || cs[0] == classX87 ||
			nextInt+nInt > len(sysvIntRegs) || nextSSE+nSSE > 8
		if mem {
			align := max(t.Align(), 8)
			stack = (stack + align - 1) / align * align
			out[i].Memory, out[i].Stack = true, stack
			stack += (t.Size() + 7) / 8 * 8
			continue
		}
		for _, c := range cs {
			switch c {
			case classInteger:
				out[i].Regs = append(out[i].Regs, sysvIntRegs[nextInt])
				nextInt++
			case classSSE:
				out[i].SSE = true
				nextSSE++
			}
		}
	}
	return out
}
