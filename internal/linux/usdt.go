package linux

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/internal/bpf"
)

// x86-64 registers by the names a USDT note may give them: their
// offset in pt_regs, the operand's size, and a shift for the second
// byte registers.
type usdtReg struct {
	off   uint32
	size  uint8
	shift uint8
}

var usdtRegs = func() map[string]usdtReg {
	m := map[string]usdtReg{}
	legacy := []struct {
		off                uint32
		r64, r32, r16, r8l string
		r8h                string
	}{
		{80, "rax", "eax", "ax", "al", "ah"}, {40, "rbx", "ebx", "bx", "bl", "bh"},
		{88, "rcx", "ecx", "cx", "cl", "ch"}, {96, "rdx", "edx", "dx", "dl", "dh"},
		{104, "rsi", "esi", "si", "sil", ""}, {112, "rdi", "edi", "di", "dil", ""},
		{32, "rbp", "ebp", "bp", "bpl", ""}, {152, "rsp", "esp", "sp", "spl", ""},
	}
	for _, r := range legacy {
		m[r.r64] = usdtReg{r.off, 8, 0}
		m[r.r32] = usdtReg{r.off, 4, 0}
		m[r.r16] = usdtReg{r.off, 2, 0}
		m[r.r8l] = usdtReg{r.off, 1, 0}
		if r.r8h != "" {
			m[r.r8h] = usdtReg{r.off, 1, 8}
		}
	}
	for i, off := range []uint32{72, 64, 56, 48, 24, 16, 8, 0} { // r8 … r15
		n := fmt.Sprintf("r%d", i+8)
		m[n] = usdtReg{off, 8, 0}
		m[n+"d"] = usdtReg{off, 4, 0}
		m[n+"w"] = usdtReg{off, 2, 0}
		m[n+"b"] = usdtReg{off, 1, 0}
	}
	return m
}()

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
			r, ok := usdtRegs[op[1:]]
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
			r, ok := usdtRegs[reg[1:]]
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
