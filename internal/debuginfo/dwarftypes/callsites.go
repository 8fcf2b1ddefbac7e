package dwarftypes

import (
	"fmt"

	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
)

// Call sites: where a function's callers call it, and what they pass
// (DWARF 5, §3.4.2; DWARF 4's GNU extension before it). Optimised code
// gives a parameter it no longer keeps as DW_OP_entry_value(reg): its
// value on entry, which the caller's call site may say how to compute
// again, from what the caller keeps across the call.

// DWARF constants of call sites.
const (
	tagCallSite          = 0x48
	tagCallSiteParameter = 0x49
	tagGNUCallSite       = 0x4109
	tagGNUCallSiteParam  = 0x410a

	atCallReturnPC     = 0x7d
	atCallValue        = 0x7e
	atCallOrigin       = 0x7f
	atCallTailCall     = 0x82
	atGNUCallSiteValue = 0x2111
	atGNUTailCall      = 0x2115
)

// CallSite is a call of a function as its caller's DWARF records it.
type CallSite struct {
	// ReturnPC is the address the call returns to, as the image links
	// it: the return address the callee finds on its stack.
	ReturnPC uint64
	// Values are the expressions of the values the caller passes, by
	// the callee's DWARF register they are passed in; each is evaluated
	// in the caller's frame at the call.
	Values map[int]dwarfexpr.Expr
	// FrameBase is the caller's DW_AT_frame_base, which DW_OP_fbreg in
	// Values is relative to.
	FrameBase dwarfexpr.Expr
}

// CallSites returns the call sites that call the function of sc, direct
// calls that name it, from sc's unit, or from every unit when all is
// set. A call through a pointer names no function and is not among
// them.
func (t *Types) CallSites(sc *Scope, all bool) ([]CallSite, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.index(); err != nil {
		return nil, err
	}
	units := []int{sc.unit}
	if all {
		units = units[:0]
		for i := range t.r.units {
			units = append(units, i)
		}
	}
	var out []CallSite
	for _, i := range units {
		w, _, err := t.unitWalker(i)
		if err != nil {
			return nil, t.wrap(err)
		}
		if err := w.callSites(&w.root, nil, sc, &out); err != nil {
			return nil, t.wrap(err)
		}
	}
	return out, nil
}

// callSites appends the call sites of sc's function among d's
// descendants; fb is the frame base of the subprogram d is in.
func (w *scopeWalker) callSites(d *sdie, fb []byte, sc *Scope, out *[]CallSite) error {
	return w.eachChild(d, func(c *sdie) (bool, error) {
		switch c.tag {
		case dwarfread.TagSubprogram:
			if c.decl {
				return true, nil
			}
			return true, w.callSites(c, c.frameBaseBlk, sc, out)
		case tagLexicalBlock, dwarfread.TagInlinedSubroutine:
			return true, w.callSites(c, fb, sc, out)
		case tagCallSite, tagGNUCallSite:
		default:
			return true, nil
		}
		origin := c.callOrigin
		if origin.Form == 0 {
			origin = c.origin
		}
		if c.tailCall || !w.calls(origin, sc) {
			// A tail call's callee returns to its caller's caller: no
			// return address says it was called from there.
			return true, nil
		}
		ret := c.retPC
		if ret.Form == 0 {
			ret = c.low
		}
		pc, ok := w.t.r.secs.Address(ret, &w.ctx)
		if !ok {
			return true, nil
		}
		cs := CallSite{ReturnPC: pc, Values: map[int]dwarfexpr.Expr{}}
		if fb != nil {
			cs.FrameBase, _ = dwarfread.DecodeExpr(w.t.r.secs, fb, &w.ctx)
		}
		err := w.eachChild(c, func(p *sdie) (bool, error) {
			if p.tag != tagCallSiteParameter && p.tag != tagGNUCallSiteParam || p.locBlk == nil || p.callValueBlk == nil {
				return true, nil
			}
			loc, err := dwarfread.DecodeExpr(w.t.r.secs, p.locBlk, &w.ctx)
			if err != nil || len(loc) != 1 || loc[0].Code != dwarfexpr.OpReg {
				return true, nil // a parameter passed in memory
			}
			v, err := dwarfread.DecodeExpr(w.t.r.secs, p.callValueBlk, &w.ctx)
			if err != nil {
				return false, fmt.Errorf("call site value (DIE at %#x): %w", p.off, err)
			}
			cs.Values[loc[0].Reg] = w.untyped(v)
			return true, nil
		})
		if err != nil {
			return false, err
		}
		*out = append(*out, cs)
		return true, nil
	})
}

// calls reports whether a call site's origin, the reference a, is sc's
// function: one of the DIEs describing it, or a declaration of its name
// (a function of another unit).
func (w *scopeWalker) calls(a dwarfread.Attr, sc *Scope) bool {
	off, ok := dwarfread.Ref(a, w.tu.Unit)
	if !ok {
		return false
	}
	for _, d := range sc.dies {
		if d == off {
			return true
		}
	}
	if off < uint64(w.tu.Dies) || off >= uint64(w.tu.End) {
		return false
	}
	o, err := w.t.readScopeDIE(w.tu, off)
	return err == nil && o.decl && w.nameOf(&o) == sc.Function
}

// untyped replaces in e each DW_OP_convert to an integer base type by
// what it does to a value of 64 bits: a narrower signed type's sign
// extension, an unsigned type's mask (clang passes an int as
// DW_OP_convert to int, then to long). A conversion to another type is
// kept, and the expression is then not read.
func (w *scopeWalker) untyped(e dwarfexpr.Expr) dwarfexpr.Expr {
	var out dwarfexpr.Expr
	for _, op := range e {
		if op.Code != dwarfexpr.OpConvert {
			out = append(out, op)
			continue
		}
		if op.Uint == 0 {
			continue // the generic type: the value as it is
		}
		t, err := w.t.convertTop(uint64(w.tu.Off) + op.Uint)
		it, ok := t.(*types.Int)
		switch {
		case err != nil || !ok || it.Bytes <= 0 || it.Bytes > 8:
			out = append(out, op)
		case it.Bytes == 8:
		case it.Signed:
			n := uint64(64 - 8*it.Bytes)
			out = append(out, dwarfexpr.Op{Code: dwarfexpr.OpConstu, Uint: n}, dwarfexpr.Op{Code: dwarfexpr.OpShl}, dwarfexpr.Op{Code: dwarfexpr.OpConstu, Uint: n}, dwarfexpr.Op{Code: dwarfexpr.OpShra})
		default:
			out = append(out, dwarfexpr.Op{Code: dwarfexpr.OpConstu, Uint: 1<<(8*it.Bytes) - 1}, dwarfexpr.Op{Code: dwarfexpr.OpAnd})
		}
	}
	return out
}
