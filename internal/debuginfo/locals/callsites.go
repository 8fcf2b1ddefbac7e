package locals

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarftypes"
	"github.com/kdtrace/kdtrace/internal/debuginfo/unwind"
)

// A parameter optimised code gives as DW_OP_entry_value(reg), its value
// on entry, is read past the function's first instruction from its
// callers' call sites: at the probe, the return address (at CFA-8)
// says which call the function is in, and that call site's
// DW_AT_call_value says how the caller computed the value, from what
// the probe can still read: constants, the caller's stack pointer
// (the callee's CFA), the caller's frame, and the callee-saved
// registers, in their register until the function saves them and then
// in the slot its call frame information names.

// calleeSaved reports whether DWARF register r is one of amd64's
// callee-saved registers: rbx, rbp, r12-r15.
func calleeSaved(r int) bool {
	switch r {
	case 3, 6, 12, 13, 14, 15:
		return true
	}
	return false
}

// entryLocal is a local given as its value on entry at a probe past
// its function's first instruction, with that location.
type entryLocal struct {
	l   *check.Local
	loc dwarfexpr.Expr
	op  dwarfexpr.Op // the DW_OP_entry_value in loc
}

// entryValues reads the locals of ls from their call sites, sites, with
// row, the call frame information at the probe.
func entryValues(ls []entryLocal, t *dwarftypes.Types, sites []dwarftypes.CallSite, row *unwind.Row, sym Func) {
	for _, el := range ls {
		l, op := el.l, el.op
		if len(op.Sub) != 1 || op.Sub[0].Code != dwarfexpr.OpReg {
			continue
		}
		reg := op.Sub[0].Reg
		var vals []check.CallValue
		var why []string
		for _, cs := range sites {
			v, ok := cs.Values[reg]
			if !ok {
				why = append(why, fmt.Sprintf("the call returning to %#x does not record it", cs.ReturnPC))
				continue
			}
			e, err := callValue(v, &cs, t, row)
			if err != nil {
				why = append(why, fmt.Sprintf("at the call returning to %#x %v", cs.ReturnPC, err))
				continue
			}
			vals = append(vals, check.CallValue{ReturnPC: cs.ReturnPC, Value: e})
		}
		if len(vals) == 0 {
			if len(sites) == 0 {
				why = append(why, "no call site of "+sym.Name+" is known")
			}
			l.Unavailable += "; nor from its callers: " + strings.Join(why, "; ")
			continue
		}
		l.Loc, l.Unavailable, l.CallValues = el.loc, "", vals
		var at []string
		for _, v := range vals {
			at = append(at, fmt.Sprintf("%#x", v.ReturnPC))
		}
		l.Source = fmt.Sprintf("its value on entry, %s, from the call sites returning to %s (DW_AT_call_value; another caller faults)",
			regName(reg), strings.Join(at, ", "))
	}
}

// callValue rewrites v, a call site's value of a parameter, evaluated in
// the caller's frame at the call, into an expression evaluated at the
// probe.
func callValue(v dwarfexpr.Expr, cs *dwarftypes.CallSite, t *dwarftypes.Types, row *unwind.Row) (dwarfexpr.Expr, error) {
	cfaPlus := func(off int64) dwarfexpr.Expr {
		return dwarfexpr.Expr{{Code: dwarfexpr.OpCallFrameCFA}, {Code: dwarfexpr.OpConsts, Int: off}, {Code: dwarfexpr.OpPlus}}
	}
	var out dwarfexpr.Expr
	for _, op := range v {
		switch op.Code {
		case dwarfexpr.OpBreg:
			switch {
			case op.Reg == 7:
				// The caller's rsp at the call is the callee's CFA.
				out = append(out, cfaPlus(op.Int)...)
			case calleeSaved(op.Reg):
				r, ok := row.Regs[op.Reg]
				switch {
				case row.Source == ".orc_unwind" && op.Reg != 6:
					// ORC keeps the stack and frame pointers' rules only.
					return nil, fmt.Errorf("it is computed from %s, which the kernel's ORC tables do not say where the function saves", regName(op.Reg))
				case !ok || r.Kind == unwind.RuleSameValue:
					out = append(out, op)
				case r.Kind == unwind.RuleOffset:
					out = append(out, cfaPlus(r.Offset)...)
					out = append(out, dwarfexpr.Op{Code: dwarfexpr.OpDeref}, dwarfexpr.Op{Code: dwarfexpr.OpConsts, Int: op.Int}, dwarfexpr.Op{Code: dwarfexpr.OpPlus})
				default:
					return nil, fmt.Errorf("it is computed from %s, which the call frame information does not recover at the probe (%s)", regName(op.Reg), r)
				}
			default:
				return nil, fmt.Errorf("it is computed from %s, which the call does not keep", regName(op.Reg))
			}
		case dwarfexpr.OpFbreg:
			if len(cs.FrameBase) != 1 || cs.FrameBase[0].Code != dwarfexpr.OpCallFrameCFA {
				return nil, fmt.Errorf("it is relative to the caller's frame base %s, which is not read", cs.FrameBase)
			}
			// The caller's CFA is its rsp at the call, the callee's
			// CFA, plus what its rule at the call adds.
			rule, err := t.CFA(cs.ReturnPC - 1)
			if err != nil {
				return nil, fmt.Errorf("it is relative to the caller's frame, whose CFA is not known: %w", err)
			}
			if len(rule.Expr) > 0 || rule.Reg != 7 {
				return nil, fmt.Errorf("it is relative to the caller's frame, whose CFA is %s at the call, not rsp-relative", rule)
			}
			out = append(out, cfaPlus(rule.Offset+op.Int)...)
		case dwarfexpr.OpLit, dwarfexpr.OpConstu, dwarfexpr.OpConsts, dwarfexpr.OpAddr, dwarfexpr.OpPlusUconst,
			dwarfexpr.OpPlus, dwarfexpr.OpMinus, dwarfexpr.OpMul, dwarfexpr.OpDiv, dwarfexpr.OpMod,
			dwarfexpr.OpAnd, dwarfexpr.OpOr, dwarfexpr.OpXor, dwarfexpr.OpShl, dwarfexpr.OpShr, dwarfexpr.OpShra,
			dwarfexpr.OpNeg, dwarfexpr.OpNot, dwarfexpr.OpDup, dwarfexpr.OpOver, dwarfexpr.OpPick, dwarfexpr.OpDrop,
			dwarfexpr.OpSwap, dwarfexpr.OpRot, dwarfexpr.OpDeref, dwarfexpr.OpDerefSize, dwarfexpr.OpNop:
			out = append(out, op)
		default:
			return nil, fmt.Errorf("its value is %s, which is not read", v)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("its value is empty")
	}
	return out, nil
}
