package dtrace

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kdtrace/kdtrace/debuginfo"
	"github.com/kdtrace/kdtrace/debuginfo/dwarfexpr"
	"github.com/kdtrace/kdtrace/debuginfo/dwarftypes"
	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/probe"
)

// locals-> is resolved here, between the probe catalog, which knows
// where each probe is (a kinst probe's function and offset, a pid
// probe's object, symbol and offset), and the debug information of the
// image the probe is in, which knows the variables in scope at that
// address and where each lives.

// maxLocalsProbes bounds the probes one description's locals are read
// at: a glob over a function's instructions is refused beyond it.
const maxLocalsProbes = 4096

// localsProbes adds locals-> to the catalog's answers.
type localsProbes struct {
	probe.Matcher
	r *localsReader
}

func (p localsProbes) Match(d *ast.ProbeDesc) (check.ProbeMatch, error) {
	m, err := p.Matcher.Match(d)
	if err != nil || m.Count == 0 {
		return m, err
	}
	desc := probe.Desc{Provider: d.Provider, Module: d.Module, Function: d.Function, Name: d.Name}
	if d.ID != 0 {
		if pr := p.Catalog.ByID(d.ID); pr != nil {
			desc = pr.Desc()
		}
	}
	m.Locals = sync.OnceValues(func() (*check.Frame, error) { return p.r.frame(p.Catalog, desc) })
	return m, nil
}

// localsReader opens the images probes are in, once each.
type localsReader struct {
	kernel func() (*debuginfo.Set, error) // the kernel's images, kinst's
	// live says the kernel's images are the running kernel's, placed
	// where its symbols' addresses say (KASLR), not where they link.
	live  bool
	mu    sync.Mutex
	types map[string]*typesOrErr // by file
	// sites are the call sites of the functions read so far: a glob
	// over a function's instructions reads them once.
	sites map[sitesKey]sitesOrErr
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
func (r *localsReader) callSites(t *dwarftypes.Types, sc *dwarftypes.Scope, all bool) ([]dwarftypes.CallSite, error) {
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

type typesOrErr struct {
	t   *dwarftypes.Types
	err error
}

// frame returns the locals at the probes d matches: those whose
// location and type are the same at every one of them.
func (r *localsReader) frame(cat *probe.Catalog, d probe.Desc) (*check.Frame, error) {
	ps, err := cat.Match(d)
	if err != nil {
		return nil, err
	}
	if len(ps) > maxLocalsProbes {
		return nil, fmt.Errorf("the description matches %d probes, more than the %d locals-> is read at", len(ps), maxLocalsProbes)
	}
	var f *check.Frame
	for _, p := range ps {
		g, err := r.probeFrame(p)
		if errors.Is(err, errNoFrame) {
			return nil, fmt.Errorf("%s is no kinst probe nor pid probe in a function, where locals-> reads a traced function's variables", p)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if f == nil {
			f = g
			continue
		}
		f = merge(f, g, p)
	}
	if f == nil {
		return nil, errors.New("the description matches no probe")
	}
	return f, nil
}

// merge keeps what f (the first probes') and g (probe p's) agree on: a
// variable whose code would differ at p is not available.
func merge(f, g *check.Frame, p *probe.Probe) *check.Frame {
	for _, l := range f.Locals {
		if l.Unavailable != "" {
			continue
		}
		m := g.Lookup(l.Name)
		switch {
		case m != nil && m.Unavailable != "":
			l.Loc, l.Unavailable = nil, fmt.Sprintf("at %s: %s", p, m.Unavailable)
		case m == nil || len(m.Loc) == 0:
			l.Loc, l.Unavailable = nil, fmt.Sprintf("it is not in scope or optimized out at %s", p)
		case m.Loc.String() != l.Loc.String() || m.Type.String() != l.Type.String() ||
			fmt.Sprint(m.CallValues) != fmt.Sprint(l.CallValues) ||
			localKey(l, &f.Place) != localKey(m, &g.Place):
			l.Loc, l.Unavailable = nil, fmt.Sprintf("it lives elsewhere at %s than at the description's first probe: name the probes in descriptions of their own", p)
		}
	}
	f.Place.Entry = f.Place.Entry && g.Place.Entry
	return f
}

// localKey writes what of a place the code of l depends on: its
// location's, and, for a value on entry read from call sites, theirs
// and the CFA, where the return address is.
func localKey(l *check.Local, pl *check.Place) string {
	k := placeKey(l.Loc, pl)
	if len(l.CallValues) > 0 {
		k += fmt.Sprintf(" ra=cfa%d%+d", pl.CFA.Reg, pl.CFA.Off)
		for _, v := range l.CallValues {
			k += " call=" + placeKey(v.Value, pl)
		}
	}
	return k
}

// placeKey writes what of a place the code of a location depends on.
func placeKey(loc dwarfexpr.Expr, pl *check.Place) string {
	var b strings.Builder
	fmt.Fprintf(&b, "user=%t", pl.User)
	cfa := func() {
		fmt.Fprintf(&b, " cfa=%d%+d,%t", pl.CFA.Reg, pl.CFA.Off, pl.CFA.Err == nil)
	}
	for _, op := range loc {
		switch op.Code {
		case dwarfexpr.OpFbreg:
			fmt.Fprintf(&b, " fb=%s", pl.FrameBase)
			for _, f := range pl.FrameBase {
				if f.Code == dwarfexpr.OpCallFrameCFA {
					cfa()
				}
			}
		case dwarfexpr.OpCallFrameCFA:
			cfa()
		case dwarfexpr.OpAddr:
			fmt.Fprintf(&b, " bias=%d,%t,%d", pl.Bias, pl.PCBias, pl.PC)
		case dwarfexpr.OpEntryValue:
			fmt.Fprintf(&b, " entry=%t", pl.Entry)
		}
	}
	return b.String()
}

// errNoFrame is probeFrame's error for a probe in no traced function's
// frame.
var errNoFrame = errors.New("locals-> reads a function's variables at kinst and pid probes")

// usesAddr reports whether a location holds DW_OP_addr.
func usesAddr(e dwarfexpr.Expr) bool {
	for _, op := range e {
		if op.Code == dwarfexpr.OpAddr {
			return true
		}
	}
	return false
}

// probeFrame reads the locals at one probe.
func (r *localsReader) probeFrame(p *probe.Probe) (*check.Frame, error) {
	switch site := p.Detail.(type) {
	case *probe.KernelSite:
		if p.Provider != "kinst" {
			return nil, errNoFrame
		}
		return r.kernelFrame(site)
	case *probe.UserSite:
		if site.Return {
			return nil, errors.New("a return probe fires once the function's frame is gone")
		}
		if site.Addr == 0 {
			return nil, errNoFrame
		}
		return r.userFrame(site)
	}
	return nil, errNoFrame
}

func (r *localsReader) kernelFrame(site *probe.KernelSite) (*check.Frame, error) {
	if r.kernel == nil {
		return nil, errors.New("no kernel image to read debugging information from")
	}
	set, err := r.kernel()
	if err != nil {
		return nil, err
	}
	var img *debuginfo.Image
	for _, i := range set.Images() {
		if i.Module == site.Module || site.Module == "vmlinux" && i.Module == "kernel" || len(set.Images()) == 1 {
			img = i
			break
		}
	}
	if img == nil {
		return nil, fmt.Errorf("no debugging information for module %s", site.Module)
	}
	fn, err := set.Lookup(site.Function)
	if err != nil {
		return nil, err
	}
	var sym *debuginfo.Symbol
	for i, s := range fn.OutOfLine {
		if s.Module != img.Module {
			continue
		}
		if sym != nil && site.Addr == 0 {
			return nil, fmt.Errorf("%s has several symbols in %s: its locals are ambiguous", site.Function, img.Path)
		}
		if sym == nil || s.Addr == site.Addr {
			sym = &fn.OutOfLine[i]
		}
	}
	if sym == nil {
		return nil, fmt.Errorf("no function symbol %s in %s", site.Function, img.Path)
	}
	path := img.DebugPath
	if path == "" {
		path = img.Path
	}
	// The image's own types find its ORC and .eh_frame beside the debug
	// file's .debug_frame.
	t, err := r.open(path, func() (*dwarftypes.Types, error) { return dwarftypes.Open(img) })
	if err != nil {
		return nil, err
	}
	pc := sym.Addr + site.Offset
	f, err := r.scope(t, pc, funcSym{site.Function, sym.Addr, sym.Size}, site.Offset == 0, false)
	if err != nil {
		return nil, err
	}
	if site.Addr != 0 {
		// A running kernel's address (KASLR) or a module's load address.
		f.Place.Bias = site.Addr - sym.Addr
	}
	if r.live && site.Addr == 0 {
		// The symbol table hides the running kernel's addresses
		// (kptr_restrict): where its data is is not known, nor where
		// its callers' return addresses are.
		for _, l := range f.Locals {
			switch {
			case usesAddr(l.Loc):
				l.Loc, l.Unavailable = nil, "it is static, and the running kernel's symbols hide where its data is"
			case l.CallValues != nil:
				l.Loc, l.Unavailable, l.Source, l.CallValues = nil, "it is its value on entry, which its callers' call sites give, and the running kernel's symbols hide where they are", "", nil
			}
		}
	}
	if img.Module != "kernel" && img.Module != "vmlinux" {
		// A module's sections are placed apart: its text's bias is
		// not its data's.
		for _, l := range f.Locals {
			switch {
			case usesAddr(l.Loc):
				l.Loc, l.Unavailable = nil, "it is static in a module, whose data's load address kdtrace does not know"
			case slices.ContainsFunc(l.CallValues, func(v check.CallValue) bool { return usesAddr(v.Value) }):
				l.Loc, l.Unavailable, l.Source, l.CallValues = nil, "it is its value on entry, which its callers compute from a module's static data, whose load address kdtrace does not know", "", nil
			}
		}
	}
	return f, nil
}

func (r *localsReader) userFrame(site *probe.UserSite) (*check.Frame, error) {
	openFile := func(path string) (*dwarftypes.Types, error) {
		return r.open(path, func() (*dwarftypes.Types, error) { return dwarftypes.OpenFile(path, "a.out") })
	}
	t, err := openFile(site.Path)
	if err != nil && site.PID != 0 {
		// The file as the process sees it, from another mount namespace.
		if t2, err2 := openFile("/proc/" + strconv.Itoa(site.PID) + "/root" + site.Path); err2 == nil {
			t, err = t2, nil
		}
	}
	if err != nil {
		return nil, err
	}
	pc := site.Addr + site.Offset
	f, err := r.scope(t, pc, funcSym{"", site.Addr, site.Size}, site.Offset == 0, true)
	if err != nil {
		return nil, err
	}
	// The object may be placed anywhere (a PIE, a library): the bias is
	// the probe's address at run time minus its link address.
	f.Place.User, f.Place.PCBias, f.Place.PC = true, true, pc
	return f, nil
}

// open opens the DWARF of the file at path with openTypes, once.
func (r *localsReader) open(path string, openTypes func() (*dwarftypes.Types, error)) (*dwarftypes.Types, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if x, ok := r.types[path]; ok {
		return x.t, x.err
	}
	t, err := openTypes()
	if r.types == nil {
		r.types = map[string]*typesOrErr{}
	}
	r.types[path] = &typesOrErr{t, err}
	return t, err
}

// close releases the files open.
func (r *localsReader) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.types {
		if x.t != nil {
			x.t.Close()
		}
	}
	r.types, r.sites = nil, nil
}

// funcSym is the function symbol a probe's offset is from.
type funcSym struct {
	name       string // "" for the name DWARF gives
	addr, size uint64
}

// scope reads the locals at pc, a link-time address of the image whose
// DWARF t is.
func (r *localsReader) scope(t *dwarftypes.Types, pc uint64, sym funcSym, entry, user bool) (*check.Frame, error) {
	sc, err := t.Scope(pc)
	if err != nil {
		return nil, err
	}
	if sym.name == "" {
		sym.name = sc.Function
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
func (r *localsReader) fromCallSites(ls []entryLocal, f *check.Frame, t *dwarftypes.Types, sc *dwarftypes.Scope, pc uint64, sym funcSym, user bool) {
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
func sysvArgs(f *check.Frame, sc *dwarftypes.Scope, sym funcSym, pc uint64, entry bool) {
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
	args := dwarftypes.SysVArgs(params, sc.Result)
	if sc.ResultErr != nil {
		for i := range args {
			args[i].Err = fmt.Errorf("the function's result type cannot be read: %w", sc.ResultErr)
		}
	}
	end := fmt.Sprintf("%s+%#x", sym.name, sc.PrologueEnd-sym.addr)
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
func unavailable(l *dwarftypes.Local, sym funcSym, pc, low uint64) string {
	at := func(a uint64) string {
		if a >= sym.addr && a <= sym.addr+sym.size {
			return fmt.Sprintf("%s+%#x", sym.name, a-sym.addr)
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
