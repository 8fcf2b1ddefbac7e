package linux

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/internal/bpf"
)

// A usdtReg is an x86-64 register as a USDT operand names it: its
// offset in pt_regs, the operand's size, and a shift for the second
// byte registers.
type usdtReg struct {
	off   uint32
	size  uint8
	shift uint8
}

// usdtLegacy are x86's first eight registers, by their names at each
// size (r8h "" for those without a second byte register), with their
// offset in pt_regs; usdtNumbered are r8 to r15, whose halves' names
// end in d, w and b. Arrays of constants, not a map, so that they cost
// nothing at start-up.
var (
	usdtLegacy = [...]struct {
		off                     uint32
		r64, r32, r16, r8l, r8h string
	}{
		{80, "rax", "eax", "ax", "al", "ah"}, {40, "rbx", "ebx", "bx", "bl", "bh"},
		{88, "rcx", "ecx", "cx", "cl", "ch"}, {96, "rdx", "edx", "dx", "dl", "dh"},
		{104, "rsi", "esi", "si", "sil", ""}, {112, "rdi", "edi", "di", "dil", ""},
		{32, "rbp", "ebp", "bp", "bpl", ""}, {152, "rsp", "esp", "sp", "spl", ""},
	}
	usdtNumbered = [...]struct {
		name string
		off  uint32
	}{{"r8", 72}, {"r9", 64}, {"r10", 56}, {"r11", 48}, {"r12", 24}, {"r13", 16}, {"r14", 8}, {"r15", 0}}
)

// usdtRegister returns the register a USDT operand names, without its
// %, and false for a name that is none.
func usdtRegister(name string) (usdtReg, bool) {
	if name == "" {
		return usdtReg{}, false
	}
	for _, r := range usdtLegacy {
		switch name {
		case r.r64:
			return usdtReg{r.off, 8, 0}, true
		case r.r32:
			return usdtReg{r.off, 4, 0}, true
		case r.r16:
			return usdtReg{r.off, 2, 0}, true
		case r.r8l:
			return usdtReg{r.off, 1, 0}, true
		case r.r8h:
			return usdtReg{r.off, 1, 8}, true
		}
	}
	base, size := name, uint8(8)
	switch name[len(name)-1] {
	case 'd':
		base, size = name[:len(name)-1], 4
	case 'w':
		base, size = name[:len(name)-1], 2
	case 'b':
		base, size = name[:len(name)-1], 1
	}
	for _, r := range usdtNumbered {
		if base == r.name {
			return usdtReg{r.off, size, 0}, true
		}
	}
	return usdtReg{}, false
}

// parseUSDTArgs parses a USDT note's arguments, "-4@%edi 8@-16(%rbp)
// 4@$5": each a size (negative when signed) and an operand in AT&T
// syntax.
func parseUSDTArgs(s string) ([]bpf.USDTArg, error) {
	var args []bpf.USDTArg
	for _, f := range strings.Fields(s) {
		sz, op, ok := strings.Cut(f, "@")
		if !ok {
			return nil, fmt.Errorf("USDT argument %q: no size", f)
		}
		n, err := strconv.Atoi(sz)
		if err != nil {
			return nil, fmt.Errorf("USDT argument %q: bad size", f)
		}
		a := bpf.USDTArg{Signed: n < 0}
		if n < 0 {
			n = -n
		}
		if n != 1 && n != 2 && n != 4 && n != 8 {
			return nil, fmt.Errorf("USDT argument %q: a size of %d bytes", f, n)
		}
		a.Size = uint8(n)
		switch {
		case strings.HasPrefix(op, "$"):
			v, err := strconv.ParseInt(op[1:], 0, 64)
			if err != nil {
				return nil, fmt.Errorf("USDT argument %q: bad constant", f)
			}
			a.Kind, a.Disp = bpf.USDTConst, v
		case strings.HasPrefix(op, "%"):
			r, ok := usdtRegister(op[1:])
			if !ok {
				return nil, fmt.Errorf("USDT argument %q: register %s is not supported", f, op)
			}
			a.Kind, a.Reg, a.Shift = bpf.USDTReg, r.off, r.shift
		default:
			disp, reg, ok := strings.Cut(op, "(")
			reg, closed := strings.CutSuffix(reg, ")")
			if !ok || !closed || !strings.HasPrefix(reg, "%") || strings.Contains(reg, ",") {
				return nil, fmt.Errorf("USDT argument %q: operand %s is not supported", f, op)
			}
			r, ok := usdtRegister(reg[1:])
			if !ok || r.size != 8 {
				return nil, fmt.Errorf("USDT argument %q: operand %s is not supported", f, op)
			}
			var d int64
			if disp != "" {
				if d, err = strconv.ParseInt(disp, 0, 64); err != nil {
					return nil, fmt.Errorf("USDT argument %q: operand %s is not supported", f, op)
				}
			}
			a.Kind, a.Reg, a.Disp = bpf.USDTMem, r.off, d
		}
		args = append(args, a)
	}
	return args, nil
}
