package dwarftypes

import (
	"errors"
	"fmt"

	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
)

// Locals: the variables and parameters in scope at an address, for D's
// locals->x. Types.Scope finds the unit and the function holding the
// address, then descends through the lexical blocks and inlined copies
// whose ranges hold it, keeping the variables each level declares, and
// reads each one's location at that address from its expression or its
// location list.

// More DWARF constants.
const (
	tagLexicalBlock = 0x0b

	atLocation     = 0x02
	atFrameBase    = 0x40
	atLoclistsBase = 0x8c
)

// Scope is what is in scope at an address: the function holding it and
// the locals visible there, innermost first, so that the first of a
// name is the one C would use.
type Scope struct {
	PC       uint64
	Function string // the out-of-line function holding PC
	// Low is the function's lowest address; Local.Available is relative
	// to it, as kinst offsets are.
	Low       uint64
	FrameBase dwarfexpr.Expr // DW_AT_frame_base at PC; empty when there is none
	Locals    []Local
	// Result is the function's result type, nil for void; ResultErr
	// says why it could not be converted.
	Result    types.Type
	ResultErr error
	// PrologueEnd is where the function's prologue ends, as its line
	// table says (see prologueEnd), when PrologueKnown: before it, a
	// parameter's frame slot may not hold it yet.
	PrologueEnd   uint64
	PrologueKnown bool

	unit int      // the index of the unit holding the function
	dies []uint64 // the DIEs describing the function: its own, its origin's
}

// Local is a variable or a formal parameter in scope.
type Local struct {
	Name  string
	Param bool
	// Inlined names the inlined function whose copy declares the
	// local; empty for the function's own.
	Inlined string
	Type    types.Type // nil when TypeErr says why it could not be converted
	TypeErr error
	// Loc is the location at PC. Empty means optimised out at PC, or
	// unreadable when LocErr says why (an operation this package does
	// not decode, a damaged list): one such local does not hide the
	// others.
	Loc    dwarfexpr.Expr
	LocErr error
	// Available is where the local has a location, as offsets from
	// Scope.Low, when it is given by a location list; nil when Loc
	// holds throughout the scope.
	Available []debuginfo.Range
	// List reports a location list, so that an empty Available means
	// no location anywhere.
	List bool
}

// Lookup returns the innermost local called name.
func (s *Scope) Lookup(name string) (*Local, bool) {
	for i := range s.Locals {
		if s.Locals[i].Name == name {
			return &s.Locals[i], true
		}
	}
	return nil, false
}

// errNoScope is returned by Scope when no function's debug information
// covers the address.
var errNoScope = errors.New("no function covers the address")

// Scope returns the locals in scope at pc, an address of the image as
// its DWARF gives them (a kernel module's as the package places its
// sections).
func (t *Types) Scope(pc uint64) (*Scope, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.index(); err != nil {
		return nil, err
	}
	for _, i := range t.unitsAt(pc) {
		w, err := t.scopeUnit(i, pc)
		if w != nil {
			w.unit = i
		}
		if err != nil {
			return nil, t.wrap(err)
		}
		if w == nil {
			continue
		}
		sc, err := w.scope()
		if err != nil {
			return nil, t.wrap(err)
		}
		if sc != nil {
			return sc, nil
		}
	}
	return nil, fmt.Errorf("%s: %#x: %w", t.file, pc, errNoScope)
}

// sdie is a DIE decoded for scopes.
type sdie struct {
	off      uint64
	tag      uint32
	children bool
	end      int
	decl     bool
	tailCall bool

	sibling, name, typ, origin, spec, low, high, ranges dwarfread.Attr
	loc, constVal, frameBase, stmtList                  dwarfread.Attr
	retPC, callOrigin                                   dwarfread.Attr
	locBlk, constBlk, frameBaseBlk, callValueBlk        []byte
	addrBase, rnglistsBase, loclistsBase                dwarfread.Attr
}

// readScopeDIE decodes the DIE at off in unit tu.
func (t *Types) readScopeDIE(tu *typeUnit, off uint64) (sdie, error) {
	d := sdie{off: off}
	end, err := readDIE(t.r.secs.Info, tu, off, &d.tag, &d.children, func(sp *dwarfread.AttrSpec, at dwarfread.Attr, blk []byte) {
		switch sp.Attr {
		case atSibling:
			d.sibling = at
		case dwarfread.AtName:
			d.name = at
		case atType:
			d.typ = at
		case dwarfread.AtAbstractOrigin:
			d.origin = at
		case dwarfread.AtSpecification:
			d.spec = at
		case dwarfread.AtLowPC:
			d.low = at
		case dwarfread.AtHighPC:
			d.high = at
		case dwarfread.AtRanges:
			d.ranges = at
		case atLocation:
			d.loc, d.locBlk = at, blk
		case atConstValue:
			d.constVal, d.constBlk = at, blk
		case atFrameBase:
			d.frameBase, d.frameBaseBlk = at, blk
		case dwarfread.AtDeclaration:
			d.decl = at.Val != 0
		case dwarfread.AtAddrBase, dwarfread.AtGNUAddrBase:
			d.addrBase = at
		case dwarfread.AtRnglistsBase:
			d.rnglistsBase = at
		case atLoclistsBase:
			d.loclistsBase = at
		case dwarfread.AtStmtList:
			d.stmtList = at
		case atCallReturnPC:
			d.retPC = at
		case atCallOrigin:
			d.callOrigin = at
		case atCallValue, atGNUCallSiteValue:
			d.callValueBlk = blk
		case atCallTailCall, atGNUTailCall:
			d.tailCall = at.Val != 0
		}
	})
	d.end = end
	return d, err
}

// scopeWalker finds the scope at pc in one unit.
type scopeWalker struct {
	t            *Types
	tu           *typeUnit
	ctx          dwarfread.UnitCtx // tu's, with the bases of addresses and lists
	loclistsBase uint64
	root         sdie
	pc           uint64
	unit         int // the unit's index
}

// scopeUnit prepares unit i for the walk, or returns nil when its
// ranges do not hold pc.
func (t *Types) scopeUnit(i int, pc uint64) (*scopeWalker, error) {
	w, rs, err := t.unitWalker(i)
	if err != nil {
		return nil, err
	}
	if rs != nil && !inRanges(rs, pc) {
		return nil, nil
	}
	w.pc = pc
	return w, nil
}

// unitWalker reads the root of unit i: a walker for it, and its
// ranges, nil when the root gives none (the unit must be looked into).
func (t *Types) unitWalker(i int) (*scopeWalker, []dwarfread.Range, error) {
	tu, err := t.r.unit(i)
	if err != nil {
		return nil, nil, err
	}
	root, err := t.readScopeDIE(tu, uint64(tu.Dies))
	if err != nil {
		return nil, nil, err
	}
	w := &scopeWalker{t: t, tu: tu, ctx: tu.UnitCtx, root: root}
	w.ctx.AddrBase = root.addrBase.Val
	w.ctx.RnglistsBase = root.rnglistsBase.Val
	w.loclistsBase = root.loclistsBase.Val
	if root.low.Form != 0 {
		// The base of DWARF 4 lists; a unit with a bad low pc gets 0.
		w.ctx.Base, _ = t.r.secs.Address(root.low, &w.ctx)
	}
	if root.low.Form == 0 && root.ranges.Form == 0 {
		return w, nil, nil
	}
	rs, err := t.r.secs.AppendRanges(nil, root.low, root.high, root.ranges, &w.ctx, &dwarfread.Lowest{})
	if err != nil {
		return nil, nil, fmt.Errorf("unit at %#x: %w", tu.Off, err)
	}
	if rs == nil {
		rs = []dwarfread.Range{}
	}
	return w, rs, nil
}

func inRanges(rs []dwarfread.Range, pc uint64) bool {
	for _, r := range rs {
		if r.Lo <= pc && pc < r.Hi {
			return true
		}
	}
	return false
}

// scope finds the subprogram holding pc among the unit's DIEs and
// collects its locals; nil when there is none.
func (w *scopeWalker) scope() (*Scope, error) {
	var found *Scope
	err := w.eachChild(&w.root, func(c *sdie) (bool, error) {
		if c.tag != dwarfread.TagSubprogram || c.decl {
			return true, nil
		}
		var lo dwarfread.Lowest
		rs, err := w.t.r.secs.AppendRanges(nil, c.low, c.high, c.ranges, &w.ctx, &lo)
		if err != nil {
			return false, fmt.Errorf("DIE at %#x: %w", c.off, err)
		}
		if !inRanges(rs, w.pc) {
			return true, nil
		}
		sc := &Scope{PC: w.pc, Function: w.nameOf(c), Low: lo.Addr, unit: w.unit}
		sc.dies = w.dieChain(c)
		if c.frameBase.Form != 0 {
			fb, _, _, err := w.location(c.frameBase, c.frameBaseBlk)
			if err != nil {
				return false, fmt.Errorf("frame base of DIE at %#x: %w", c.off, err)
			}
			sc.FrameBase = fb
		}
		if sc.Locals, err = w.block(c, sc, ""); err != nil {
			return false, err
		}
		sc.Result, sc.ResultErr = w.resultType(c)
		if w.root.stmtList.Form != 0 {
			hi := lo.Addr
			for _, r := range rs {
				if r.Lo <= lo.Addr && lo.Addr < r.Hi {
					hi = r.Hi
				}
			}
			// A damaged line table only leaves the prologue unknown.
			sc.PrologueEnd, sc.PrologueKnown, _ = dwarfread.PrologueEnd(w.t.r.secs, w.root.stmtList.Val, &w.ctx, lo.Addr, hi)
		}
		found = sc
		return false, nil
	})
	return found, err
}

// block returns the locals of d and of its descendants holding pc,
// innermost first. inl names the inlined function d is a copy of.
func (w *scopeWalker) block(d *sdie, sc *Scope, inl string) ([]Local, error) {
	var here, inner []Local
	err := w.eachChild(d, func(c *sdie) (bool, error) {
		switch c.tag {
		case tagVariable, tagFormalParameter:
			if c.decl {
				return true, nil
			}
			if l := w.local(c, sc, inl); l.Name != "" {
				here = append(here, l)
			}
		case tagLexicalBlock, dwarfread.TagInlinedSubroutine:
			holds := true
			if c.low.Form != 0 || c.ranges.Form != 0 {
				rs, err := w.t.r.secs.AppendRanges(nil, c.low, c.high, c.ranges, &w.ctx, &dwarfread.Lowest{})
				if err != nil {
					return false, fmt.Errorf("DIE at %#x: %w", c.off, err)
				}
				holds = inRanges(rs, w.pc)
			} else if c.tag == dwarfread.TagInlinedSubroutine {
				holds = false // a copy without code holds no address
			}
			if !holds {
				return true, nil
			}
			name := inl
			if c.tag == dwarfread.TagInlinedSubroutine {
				name = w.nameOf(c)
			}
			got, err := w.block(c, sc, name)
			if err != nil {
				return false, err
			}
			inner = append(inner, got...)
			if c.tag == dwarfread.TagInlinedSubroutine {
				gone, err := w.abstractOnly(c, sc, name)
				if err != nil {
					return false, err
				}
				inner = append(inner, gone...)
			}
		}
		return true, nil
	})
	return append(inner, here...), err
}

// abstractOnly returns the parameters and variables of the function
// inlined copy c is of that the copy has no DIE of: compilers leave out
// those the copy optimised away entirely. They are listed without a
// location, so that locals-> says they are optimised out rather than
// unknown. Only the origin's own level is read (not its blocks), and
// only when the origin lies in c's unit.
func (w *scopeWalker) abstractOnly(c *sdie, sc *Scope, inl string) ([]Local, error) {
	off, ok := dwarfread.Ref(c.origin, w.tu.Unit)
	if !ok || off < uint64(w.tu.Dies) || off >= uint64(w.tu.End) {
		return nil, nil
	}
	// The copy's DIEs name their origins: those of its own level and
	// of its blocks, which may hold what the origin's level declares.
	concrete := map[uint64]bool{}
	var walk func(d *sdie) error
	walk = func(d *sdie) error {
		return w.eachChild(d, func(v *sdie) (bool, error) {
			switch v.tag {
			case tagVariable, tagFormalParameter:
				if o, ok := dwarfread.Ref(v.origin, w.tu.Unit); ok {
					concrete[o] = true
				}
			case tagLexicalBlock:
				if err := walk(v); err != nil {
					return false, err
				}
			}
			return true, nil
		})
	}
	if err := walk(c); err != nil {
		return nil, err
	}
	origin, err := w.t.readScopeDIE(w.tu, off)
	if err != nil {
		return nil, err
	}
	var gone []Local
	err = w.eachChild(&origin, func(v *sdie) (bool, error) {
		if (v.tag != tagVariable && v.tag != tagFormalParameter) || v.decl || concrete[v.off] {
			return true, nil
		}
		l := Local{Name: w.nameOf(v), Param: v.tag == tagFormalParameter, Inlined: inl, List: true}
		if l.Name != "" {
			l.Type, l.TypeErr = w.localType(v)
			gone = append(gone, l)
		}
		return true, nil
	})
	return gone, err
}

// local describes variable or parameter c.
func (w *scopeWalker) local(c *sdie, sc *Scope, inl string) Local {
	l := Local{Name: w.nameOf(c), Param: c.tag == tagFormalParameter, Inlined: inl}
	l.Type, l.TypeErr = w.localType(c)
	var err error
	switch {
	case c.loc.Form != 0:
		var all []dwarfread.Range
		l.Loc, all, l.List, err = w.location(c.loc, c.locBlk)
		for _, r := range all {
			l.Available = append(l.Available, debuginfo.Range{Lo: r.Lo - sc.Low, Hi: r.Hi - sc.Low})
		}
	case c.constBlk != nil:
		l.Loc = dwarfexpr.Expr{{Code: dwarfexpr.OpImplicitValue, Uint: uint64(len(c.constBlk)), Block: c.constBlk}}
	case c.constVal.Form != 0:
		l.Loc = dwarfexpr.ImplicitConst(c.constVal.Val, dwarfread.FormSize(c.constVal.Form, w.tu.Unit))
	}
	if err != nil {
		l.Loc, l.LocErr = nil, fmt.Errorf("location of %s (DIE at %#x): %w", l.Name, c.off, err)
	}
	return l
}

// localType converts the type of c, which is c's own or its abstract
// origin's.
func (w *scopeWalker) localType(c *sdie) (types.Type, error) {
	d, tu := c, w.tu
	for range 4 {
		if d.typ.Form != 0 || d.origin.Form == 0 {
			break
		}
		o, ou, err := w.follow(d, tu, d.origin)
		if err != nil {
			return nil, err
		}
		d, tu = &o, ou
	}
	off, err := w.t.target(&die{off: d.off, u: tu}, d.typ)
	if err != nil {
		return nil, err
	}
	return w.t.convertTop(off)
}

// dieChain returns the offsets of c and of the DIEs its abstract origin
// and specification name, in its unit.
func (w *scopeWalker) dieChain(c *sdie) []uint64 {
	offs := []uint64{c.off}
	d := c
	for range 4 {
		next := d.origin
		if next.Form == 0 {
			next = d.spec
		}
		off, ok := dwarfread.Ref(next, w.tu.Unit)
		if !ok || off < uint64(w.tu.Dies) || off >= uint64(w.tu.End) {
			break
		}
		o, err := w.t.readScopeDIE(w.tu, off)
		if err != nil {
			break
		}
		offs = append(offs, off)
		d = &o
	}
	return offs
}

// resultType converts the result type of subprogram c, its own or its
// abstract origin's or specification's; nil for void.
func (w *scopeWalker) resultType(c *sdie) (types.Type, error) {
	d, tu := c, w.tu
	for range 4 {
		next := d.origin
		if next.Form == 0 {
			next = d.spec
		}
		if d.typ.Form != 0 || next.Form == 0 {
			break
		}
		o, ou, err := w.follow(d, tu, next)
		if err != nil {
			return nil, err
		}
		d, tu = &o, ou
	}
	if d.typ.Form == 0 {
		return nil, nil
	}
	off, err := w.t.target(&die{off: d.off, u: tu}, d.typ)
	if err != nil {
		return nil, err
	}
	return w.t.convertTop(off)
}

// follow reads the DIE a reference attribute of d names, in whatever
// unit it lies.
func (w *scopeWalker) follow(d *sdie, tu *typeUnit, a dwarfread.Attr) (sdie, *typeUnit, error) {
	off, ok := dwarfread.Ref(a, tu.Unit)
	if !ok {
		return sdie{}, nil, fmt.Errorf("DIE at %#x: reference of form %#x not supported (DWZ supplementary file?)", d.off, a.Form)
	}
	ou := tu
	if off < uint64(tu.Dies) || off >= uint64(tu.End) {
		var err error
		if ou, err = w.t.r.unitAt(off); err != nil {
			return sdie{}, nil, err
		}
	}
	o, err := w.t.readScopeDIE(ou, off)
	return o, ou, err
}

// nameOf returns d's name, or its abstract origin's or specification's.
func (w *scopeWalker) nameOf(d *sdie) string {
	tu := w.tu
	for range 4 {
		if d.name.Form != 0 {
			s, _ := w.t.r.secs.AttrString(d.name, &tu.UnitCtx)
			return string(s)
		}
		next := d.origin
		if next.Form == 0 {
			next = d.spec
		}
		if next.Form == 0 {
			return ""
		}
		o, ou, err := w.follow(d, tu, next)
		if err != nil {
			return ""
		}
		d, tu = &o, ou
	}
	return ""
}

// eachChild calls fn with d's children until it returns false.
func (w *scopeWalker) eachChild(d *sdie, fn func(c *sdie) (bool, error)) error {
	if !d.children {
		return nil
	}
	info := w.t.r.secs.Info
	pos := uint64(d.end)
	for {
		if pos >= uint64(w.tu.End) {
			return fmt.Errorf("children of DIE at %#x: %w", d.off, dwarfread.ErrTruncated)
		}
		if info[pos] == 0 {
			return nil
		}
		c, err := w.t.readScopeDIE(w.tu, pos)
		if err != nil {
			return err
		}
		more, err := fn(&c)
		if err != nil || !more {
			return err
		}
		// Reuse the type reader's skipping, which needs only the
		// sibling and where the attributes end.
		pos, err = w.t.r.next(&die{off: c.off, u: w.tu, children: c.children, end: c.end, sibling: c.sibling})
		if err != nil {
			return err
		}
	}
}

// location reads a location attribute: an expression, or a location
// list, of which it returns the entry holding pc (empty if none) and
// every range the list gives a location for.
func (w *scopeWalker) location(a dwarfread.Attr, blk []byte) (e dwarfexpr.Expr, all []dwarfread.Range, list bool, err error) {
	secs := w.t.r.secs
	if blk != nil {
		e, err = dwarfread.DecodeExpr(secs, blk, &w.ctx)
		return e, nil, false, err
	}
	switch a.Form {
	case dwarfread.FormSecOffset, dwarfread.FormData4, dwarfread.FormData8, dwarfread.FormLoclistx:
	default:
		return nil, nil, false, fmt.Errorf("location of form %#x not supported", a.Form)
	}
	var found []byte
	if w.ctx.Vers < 5 {
		found, all, err = w.dwarf4Loc(a.Val)
	} else {
		off := a.Val
		if a.Form == dwarfread.FormLoclistx {
			size := uint64(4)
			if w.ctx.Dwarf64 {
				size = 8
			}
			p := w.loclistsBase + off*size
			if p+size > uint64(len(secs.LocLists)) {
				return nil, nil, true, fmt.Errorf("location list index %d out of range", off)
			}
			b := dwarfread.Buf{Data: secs.LocLists, Pos: int(p)}
			off = w.loclistsBase + b.Offset(w.ctx.Dwarf64)
		}
		found, all, err = w.dwarf5Loc(off)
	}
	if err != nil || found == nil {
		return nil, all, true, err
	}
	e, err = dwarfread.DecodeExpr(secs, found, &w.ctx)
	return e, all, true, err
}

// dwarf4Loc reads the .debug_loc list at off.
func (w *scopeWalker) dwarf4Loc(off uint64) (found []byte, all []dwarfread.Range, err error) {
	sec := w.t.r.secs.Loc
	if off >= uint64(len(sec)) {
		return nil, nil, fmt.Errorf("location list offset %#x out of range", off)
	}
	b := dwarfread.Buf{Data: sec, Pos: int(off)}
	size := w.ctx.AddrSize
	maxAddr := ^uint64(0) >> (64 - 8*uint(size))
	base := w.ctx.Base
	for {
		lo, hi := b.Addr(size), b.Addr(size)
		switch {
		case b.Err != nil:
			return nil, nil, b.Err
		case lo == 0 && hi == 0:
			return found, all, nil
		case lo == maxAddr:
			base = hi
			continue
		}
		expr := b.Block(dwarfread.FormBlock2)
		if b.Err != nil {
			return nil, nil, b.Err
		}
		found, all = w.entry(found, all, base+lo, base+hi, expr)
	}
}

// dwarf5Loc reads the .debug_loclists list at off.
func (w *scopeWalker) dwarf5Loc(off uint64) (found []byte, all []dwarfread.Range, err error) {
	secs := w.t.r.secs
	if off >= uint64(len(secs.LocLists)) {
		return nil, nil, fmt.Errorf("location list offset %#x out of range", off)
	}
	b := dwarfread.Buf{Data: secs.LocLists, Pos: int(off)}
	base := w.ctx.Base
	index := func(i uint64) uint64 {
		v, ok := secs.AddrIndex(i, &w.ctx)
		if !ok && b.Err == nil {
			b.Err = fmt.Errorf("address index %d out of range", i)
		}
		return v
	}
	var deflt []byte
	for {
		var lo, hi uint64
		switch kind := b.U8(); kind {
		case 0: // DW_LLE_end_of_list
			if found == nil && b.Err == nil {
				found = deflt
			}
			return found, all, b.Err
		case 1: // DW_LLE_base_addressx
			base = index(b.Uleb())
			continue
		case 2: // DW_LLE_startx_endx
			lo = index(b.Uleb())
			hi = index(b.Uleb())
		case 3: // DW_LLE_startx_length
			lo = index(b.Uleb())
			hi = lo + b.Uleb()
		case 4: // DW_LLE_offset_pair
			lo = base + b.Uleb()
			hi = base + b.Uleb()
		case 5: // DW_LLE_default_location
			deflt = b.Block(dwarfread.FormBlock)
			continue
		case 6: // DW_LLE_base_address
			base = b.Addr(w.ctx.AddrSize)
			continue
		case 7: // DW_LLE_start_end
			lo = b.Addr(w.ctx.AddrSize)
			hi = b.Addr(w.ctx.AddrSize)
		case 8: // DW_LLE_start_length
			lo = b.Addr(w.ctx.AddrSize)
			hi = lo + b.Uleb()
		default:
			return nil, nil, fmt.Errorf("unknown location list entry %#x at %#x", kind, b.Pos-1)
		}
		expr := b.Block(dwarfread.FormBlock)
		if b.Err != nil {
			return nil, nil, b.Err
		}
		found, all = w.entry(found, all, lo, hi, expr)
	}
}

// entry records one entry of a location list. An empty expression
// gives no location.
func (w *scopeWalker) entry(found []byte, all []dwarfread.Range, lo, hi uint64, expr []byte) ([]byte, []dwarfread.Range) {
	if hi <= lo || len(expr) == 0 {
		return found, all
	}
	if n := len(all); n > 0 && all[n-1].Hi == lo {
		all[n-1].Hi = hi
	} else {
		all = append(all, dwarfread.Range{Lo: lo, Hi: hi})
	}
	if found == nil && lo <= w.pc && w.pc < hi {
		found = expr
	}
	return found, all
}
