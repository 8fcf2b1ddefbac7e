package locals

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarftypes"
)

// Reader reads the frames of probes, keeping the call sites of the
// functions read so far: a glob over a function's instructions reads
// them once. It may be used from several goroutines.
type Reader struct {
	mu    sync.Mutex
	sites map[sitesKey]sitesOrErr
}

// Reset forgets the call sites read, before the Types they came from
// are closed.
func (r *Reader) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sites = nil
}

type sitesKey struct {
	t   *dwarftypes.Types
	low uint64
}

type sitesOrErr struct {
	sites []dwarftypes.CallSite
	err   error
}

// callSites returns the call sites of sc's function, once.
func (r *Reader) callSites(t *dwarftypes.Types, sc *dwarftypes.Scope, all bool) ([]dwarftypes.CallSite, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := sitesKey{t, sc.Low}
	if x, ok := r.sites[k]; ok {
		return x.sites, x.err
	}
	sites, err := t.CallSites(sc, all)
	if r.sites == nil {
		r.sites = map[sitesKey]sitesOrErr{}
	}
	r.sites[k] = sitesOrErr{sites, err}
	return sites, err
}

// Func is the function symbol a probe's offset is from.
type Func struct {
	Name       string // "" for the name DWARF gives
	Addr, Size uint64
}

// Frame reads the locals at pc, a link-time address of the image whose
// DWARF t is, in function sym: entry says pc is the function's first
// instruction, user that the image is a program's (whose call sites are
// read from every unit, where a kernel's are read from the function's
// unit alone).
func (r *Reader) Frame(t *dwarftypes.Types, pc uint64, sym Func, entry, user bool) (*check.Frame, error) {
	sc, err := t.Scope(pc)
	if err != nil {
		return nil, err
	}
	if sym.Name == "" {
		sym.Name = sc.Function
	}
	f := &check.Frame{Function: sc.Function, Place: check.Place{Entry: entry, FrameBase: sc.FrameBase}}
	f.Place.CFA = cfa(t, pc, entry)
	var pending []entryLocal
	for i := range sc.Locals {
		l := &sc.Locals[i]
		cl := &check.Local{Name: l.Name, Inlined: l.Inlined, Param: l.Param, Type: l.Type, Loc: l.Loc, Frame: f}
		switch {
		case l.TypeErr != nil:
			cl.Loc, cl.Unavailable = nil, "its type cannot be read: "+l.TypeErr.Error()
		case l.Type == nil:
			cl.Loc, cl.Unavailable = nil, "its debugging information gives it no type"
		case l.LocErr != nil:
			cl.Unavailable = "its location cannot be read: " + l.LocErr.Error()
		case len(l.Loc) == 0:
			cl.Unavailable = unavailable(l, sym, pc, sc.Low)
		case !entry:
			if op, ok := entryValue(l.Loc); ok {
				// Past the first instruction nothing keeps the
				// caller's registers: say so where -lv lists it,
				// not only when a clause reads it.
				cl.Loc, cl.Unavailable = nil, fmt.Sprintf("available only as its value on entry to the function (%s), which nothing keeps past the function's first instruction", op)
				pending = append(pending, entryLocal{cl, l.Loc, op})
			}
		}
		f.Locals = append(f.Locals, cl)
	}
	sysvArgs(f, sc, sym, pc, entry)
	if len(pending) > 0 {
		r.fromCallSites(pending, f, t, sc, pc, sym, user)
	}
	return f, nil
}

// fromCallSites reads the locals of ls, given as their values on entry
// at pc, from the function's call sites: those of every unit of a
// program, those of the function's unit in a kernel, whose DWARF is
// too big to read all of for one probe. When it cannot, their reason
// says why.
func (r *Reader) fromCallSites(ls []entryLocal, f *check.Frame, t *dwarftypes.Types, sc *dwarftypes.Scope, pc uint64, sym Func, user bool) {
	fail := func(err error) {
		for _, el := range ls {
			el.l.Unavailable += "; nor from its callers: " + err.Error()
		}
	}
	if f.Place.CFA.Err != nil {
		fail(fmt.Errorf("the return address, at CFA-8, is not known at the probe: %w", f.Place.CFA.Err))
		return
	}
	sites, err := r.callSites(t, sc, user)
	if err != nil {
		fail(err)
		return
	}
	frames, err := t.Frames()
	if err != nil {
		fail(err)
		return
	}
	row, err := frames.Row(pc)
	if err != nil {
		fail(err)
		return
	}
	if row.Signal {
		fail(errors.New("the probe is in a signal frame, whose CFA-8 is no return address"))
		return
	}
	entryValues(ls, t, sites, row, sym)
}

// sysvArgs reads the function's own parameters where the System V
// calling convention leaves them, in the prologue of a function, when
// DWARF gives a parameter one location for the whole function (as -O0
// does for all, and clang -O2 for those on the stack, relative to rsp
// once the prologue has pushed what it saves): that location is
// good only past the prologue. At the first instruction every
// parameter is where the caller put it; further in the prologue only
// those on the stack are (relative to the CFA), as the prologue may
// reuse the registers once it has stored them. Past the prologue, and
// for a parameter DWARF gives a location list for (optimised code,
// whose lists say where it is at each address), DWARF's locations are
// kept, as they are for all when one parameter has no location at all
// or a constant one.
func sysvArgs(f *check.Frame, sc *dwarftypes.Scope, sym Func, pc uint64, entry bool) {
	inPrologue := sc.PrologueKnown && pc >= sc.Low && pc < sc.PrologueEnd
	if !entry && !inPrologue {
		return
	}
	var own []int
	var params []types.Type
	for i, l := range sc.Locals {
		if !l.Param || l.Inlined != "" {
			continue
		}
		if !l.List && l.LocErr == nil && (len(l.Loc) == 0 || l.Loc[0].Code == dwarfexpr.OpImplicitValue) {
			// A parameter without a location, or of a constant
			// value, may have been removed from the calls (clang's
			// dead argument elimination): the others' places are
			// not known.
			return
		}
		own = append(own, i)
		params = append(params, l.Type)
	}
	args := sysvPlaces(params, sc.Result)
	if sc.ResultErr != nil {
		for i := range args {
			args[i].Err = fmt.Errorf("the function's result type cannot be read: %w", sc.ResultErr)
		}
	}
	end := fmt.Sprintf("%s+%#x", sym.Name, sc.PrologueEnd-sym.Addr)
	for i, a := range args {
		l := f.Locals[own[i]]
		if d := &sc.Locals[own[i]]; d.List || d.LocErr != nil || l.Type == nil {
			continue
		}
		switch {
		case a.Err != nil:
			l.Loc, l.Unavailable = nil, fmt.Sprintf("in the prologue its frame slot is not yet written, and the calling convention's place for it is not known: %v", a.Err)
		case a.Memory:
			l.Loc = dwarfexpr.Expr{{Code: dwarfexpr.OpCallFrameCFA}, {Code: dwarfexpr.OpPlusUconst, Uint: uint64(a.Stack)}}
			l.Unavailable = ""
			l.Source = fmt.Sprintf("stack CFA%+d (SysV argument)", a.Stack)
			if entry {
				l.Source = fmt.Sprintf("stack rsp+%d (SysV argument)", a.Stack+8)
			}
		case !entry:
			l.Loc, l.Unavailable = nil, fmt.Sprintf("in the prologue (which ends at %s, as the line table says) its frame slot is not yet written, and %s, where the caller put it (SysV argument), may be reused: read it at the function's entry or past the prologue", end, a)
		case a.SSE:
			l.Loc, l.Unavailable = nil, fmt.Sprintf("it is in %s (SysV argument), which a probe cannot read", a)
		case len(a.Regs) == 0:
			l.Loc, l.Unavailable = nil, "it is empty, and the caller passes it nowhere (SysV argument)"
		case isAggregate(l.Type):
			// A struct in registers, read as their pieces.
			l.Loc = nil
			size := l.Type.Size()
			for k, reg := range a.Regs {
				l.Loc = append(l.Loc, dwarfexpr.Op{Code: dwarfexpr.OpReg, Reg: reg}, dwarfexpr.Op{Code: dwarfexpr.OpPiece, Uint: uint64(min(8, size-8*int64(k)))})
			}
			l.Unavailable = ""
			l.Source = a.String() + " (SysV argument)"
		case len(a.Regs) > 1:
			l.Loc, l.Unavailable = nil, fmt.Sprintf("it is in %s (SysV argument), and locals-> reads integers of 8 bytes at most", a)
		default:
			l.Loc = dwarfexpr.Expr{{Code: dwarfexpr.OpReg, Reg: a.Regs[0]}}
			l.Unavailable = ""
			l.Source = a.String() + " (SysV argument)"
		}
	}
}

// isAggregate reports whether t is a struct, union or array.
func isAggregate(t types.Type) bool {
	switch types.Resolve(t).(type) {
	case *types.Struct, *types.Array:
		return true
	}
	return false
}

// entryValue returns loc's first DW_OP_entry_value, if it has one.
func entryValue(loc dwarfexpr.Expr) (dwarfexpr.Op, bool) {
	for _, op := range loc {
		if op.Code == dwarfexpr.OpEntryValue {
			return op, true
		}
	}
	return dwarfexpr.Op{}, false
}

// unavailable says where l, optimised out at pc, has a location, as
// offsets from the probe's function symbol (addresses outside it, as a
// function's .cold part, as they are); low is where l's scope's
// function starts, which l.Available is relative to.
func unavailable(l *dwarftypes.Local, sym Func, pc, low uint64) string {
	at := func(a uint64) string {
		if a >= sym.Addr && a <= sym.Addr+sym.Size {
			return fmt.Sprintf("%s+%#x", sym.Name, a-sym.Addr)
		}
		return fmt.Sprintf("%#x", a)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "optimized out at %s", at(pc))
	if !l.List || len(l.Available) == 0 {
		b.WriteString(", and everywhere in its scope")
		return b.String()
	}
	b.WriteString("; available at ")
	for i, r := range l.Available {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "[%s, %s)", at(r.Lo+low), at(r.Hi+low))
	}
	return b.String()
}

// cfa returns the canonical frame address at pc: at a function's first
// instruction the return address was just pushed, so it is rsp+8;
// elsewhere the image's call frame information says.
func cfa(t *dwarftypes.Types, pc uint64, entry bool) check.CFA {
	if entry {
		return check.CFA{Reg: 7, Off: 8}
	}
	rule, err := t.CFA(pc)
	switch {
	case err != nil:
		return check.CFA{Err: err}
	case len(rule.Expr) > 0:
		return check.CFA{Err: fmt.Errorf("the CFA is a DWARF expression there (%s)", rule.Expr)}
	}
	return check.CFA{Reg: rule.Reg, Off: rule.Offset}
}
