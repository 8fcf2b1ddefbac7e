// Package kinst resolves kinst probe descriptions to instruction sites,
// for the D compiler's sugar pass (it implements sugar.Kinst). The same
// Resolver, over a program's or a library's image, gives the sites of
// the pid provider's entry and return probes of inlined functions.
//
// It joins two packages: debuginfo says where a function's inline copies
// are (caller, address ranges, the empty ranges of folded code) and
// where GCC's entry markers put the starts of their calls, and gives the
// callers' code; amd64 decodes that code and divides the copies in each
// caller into calls (amd64.Function.InlineCalls). kinst::f:entry becomes
// the entries of those calls, kinst::f:return their returns, so that
// each fires once per call on every path, in peeled, unrolled and
// versioned loops, duplicated tails, early returns and split copies.
// With markers, all the copies of f in a caller are divided at once;
// without (clang), each copy on its own. Each site carries the rule
// that placed it, which -d prints. The shapes where a run of the code
// may stand for several calls or none are warned of through Warn, once
// each, naming the function, the caller and the offset.
//
// With Compat set, both follow FreeBSD's reference rules instead:
// entry at the start of the copy's first range, return at the last
// instruction of each range that ends the caller or the copy, and at
// the first instruction after every other range.
//
// Sites are named as kinst names them, function symbol and offset; a
// site in a caller's cold part (gcc's f.cold) is named by that part's
// symbol; a site on an instruction that uprobes refuse (the cs nopw of
// padding) moves to the next of its block. They come sorted by module,
// function and offset, so that -d output is the same on every run.
// Sites also lists the function's compiler clones (f.constprop.0,
// f.isra.0; see debuginfo.Set.Clones), which the pid rewrite traces as
// f, and the calls whose return sites other paths also reach, or whose
// entries lead to one another (Guards), which the pid and kinst
// rewrites guard.
package kinst

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kdtrace/kdtrace/internal/amd64"
	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
	"github.com/kdtrace/kdtrace/internal/ksym"
)

// Resolver answers the sugar pass's kinst questions from a set of
// images and their DWARF, or, where there is no debug information, from
// a kernel's symbol table and code.
type Resolver struct {
	// Set is the images with their debug information; nil when there
	// is none.
	Set *debuginfo.Set
	// Symbols is the kernel's symbol table, whose Code gives a
	// function's instructions when Set is nil: kinst::f:N is checked
	// against them, while kinst::f:entry and :return, which need
	// DWARF's inline copies, fail with NoDebug.
	Symbols *ksym.Table
	// NoDebug says why Set is nil.
	NoDebug error
	// NoKernel says why Set, made for a running kernel, holds only its
	// modules' images: a function no module knows is then checked
	// against Symbols, and kinst::f:entry and :return for it fail with
	// NoKernel; those a module answers warn that the kernel's own
	// copies, if any, are not listed.
	NoKernel error
	// Compat selects the reference implementation's rules (-x
	// kinstcompat).
	Compat bool
	// Uprobes says that the sites are for Linux's uprobes (the pid
	// provider), which refuse instructions with some prefixes: a site
	// no equivalent instruction can replace is left out, with a
	// warning.
	Uprobes bool
	// ZeroMatch leaves descriptions of unknown functions as written
	// instead of failing (-Z).
	ZeroMatch bool
	// Warn receives problems that leave a site out without failing the
	// probe; nil drops them.
	Warn func(error)

	mu     sync.Mutex
	funcs  map[funcKey]*amd64.Function
	warned map[string]bool

	warnedNoKernel atomic.Bool
}

type funcKey struct {
	module string
	addr   uint64
}

var _ sugar.Kinst = (*Resolver)(nil)

// Sites returns the probe sites of kinst::fn:entry or kinst::fn:return.
func (r *Resolver) Sites(fn string, ret bool) (*sugar.Sites, error) {
	if r.Set == nil {
		return nil, r.noDebug()
	}
	f, err := r.Set.Lookup(fn)
	if err != nil {
		var unknown *debuginfo.UnknownFunctionError
		switch {
		case errors.As(err, &unknown) && r.NoKernel != nil:
			return nil, fmt.Errorf("%s is in no module's debug info, and the kernel's is missing: %w", fn, r.NoKernel)
		case errors.As(err, &unknown) && r.ZeroMatch:
			return nil, nil
		}
		return nil, err
	}
	if r.NoKernel != nil && !r.warnedNoKernel.Swap(true) {
		r.warn(fmt.Errorf("kinst::%s: only the copies in modules are listed, the kernel's debug info is missing: %w", fn, r.NoKernel))
	}
	s := &sugar.Sites{Inline: len(f.Copies) > 0, OutOfLine: len(f.OutOfLine) > 0}
	for _, c := range r.Set.Clones(fn) {
		s.Clones = append(s.Clones, c.Name)
	}
	var groups [][]debuginfo.Copy // the copies in each caller, in order
	at := map[funcKey]int{}
	for _, c := range f.Copies {
		if c.Caller == "" {
			// Code outside every function symbol cannot be named as
			// kinst::caller:offset. Naming it after the symbol before
			// it would name code of another function.
			r.warn(fmt.Errorf("inline copy of %s at %#x in %s left out: %s", fn, c.Entry, c.Module, r.nameless(c)))
			continue
		}
		if r.Compat {
			groups = append(groups, []debuginfo.Copy{c})
			continue
		}
		k := funcKey{c.Module, c.CallerAddr}
		g, ok := at[k]
		if !ok {
			g = len(groups)
			at[k] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], c)
	}
	for _, g := range groups {
		var sites []sugar.Site
		var guards []sugar.Guard
		if r.Compat {
			if ret {
				sites, err = r.compatReturnSites(g[0])
			} else {
				sites, err = r.entrySite(g[0])
			}
		} else {
			sites, guards, err = r.callSites(fn, g, ret)
		}
		if err != nil {
			return nil, fmt.Errorf("inline copy of %s in %s: %w", fn, g[0].Caller, err)
		}
		s.Sites = append(s.Sites, sites...)
		s.Guards = append(s.Guards, guards...)
	}
	s.Sites = sortSites(s.Sites, moduleOrder(f.Copies))
	return s, nil
}

// nameless says why a copy no function symbol holds has no site.
func (r *Resolver) nameless(c debuginfo.Copy) string {
	sec, ok := r.Set.SectionAt(c.Module, c.Entry)
	switch {
	case !ok:
		return "no function symbol holds it"
	case strings.HasPrefix(sec, ".init."):
		return fmt.Sprintf("no function symbol holds it, in %s, which the kernel frees after boot", sec)
	}
	return fmt.Sprintf("no function symbol holds it, in %s", sec)
}

func (r *Resolver) warn(err error) {
	if r.Warn != nil {
		r.Warn(err)
	}
}

// warnOnce warns of err unless an equal warning was given: the entry
// and the return of a function ask for its sites alike.
func (r *Resolver) warnOnce(err error) {
	r.mu.Lock()
	if r.warned == nil {
		r.warned = make(map[string]bool)
	}
	seen := r.warned[err.Error()]
	r.warned[err.Error()] = true
	r.mu.Unlock()
	if !seen {
		r.warn(err)
	}
}

func (r *Resolver) entrySite(c debuginfo.Copy) ([]sugar.Site, error) {
	addr := c.Entry
	if r.Compat {
		if len(c.Ranges) == 0 {
			return nil, nil // the reference finds no range, so no site
		}
		addr = c.Ranges[0].Lo
	}
	site, err := r.site(c.Module, addr)
	if err != nil {
		return nil, err
	}
	return []sugar.Site{site}, nil
}

// compatReturnSites returns the return sites FreeBSD's reference
// computes for copy c (-x kinstcompat; see
// amd64.Function.CompatExitSites).
func (r *Resolver) compatReturnSites(c debuginfo.Copy) ([]sugar.Site, error) {
	if len(c.Ranges) == 0 {
		// The copy's code was optimised away: it is left where it is
		// entered.
		return r.entrySite(c)
	}
	fn, err := r.function(c)
	if err != nil {
		return nil, err
	}
	ranges := make([]amd64.Range, len(c.Ranges))
	for i, rg := range c.Ranges {
		ranges[i] = amd64.Range{Lo: rg.Lo, Hi: rg.Hi}
	}
	addrs, err := fn.CompatExitSites(ranges)
	if err != nil {
		return nil, err
	}
	sites := make([]sugar.Site, 0, len(addrs))
	for _, a := range addrs {
		s, err := r.site(c.Module, a)
		if err != nil {
			return nil, err
		}
		sites = append(sites, s)
	}
	return sites, nil
}

// callSites returns the entry or return sites of the calls of fn that
// its copies in one caller make (see amd64.Function.InlineCalls), with
// the guards of the calls some of whose return sites other paths also
// reach. The shapes where the counts may not be the program's are
// reported through Warn, once each.
func (r *Resolver) callSites(fn string, copies []debuginfo.Copy, ret bool) ([]sugar.Site, []sugar.Guard, error) {
	all := copies[0]
	all.Ranges, all.Folded = nil, nil
	var marks []uint64
	for _, c := range copies {
		all.Ranges = append(all.Ranges, c.Ranges...)
		all.Folded = append(all.Folded, c.Folded...)
		m, err := r.Set.EntryMarkers(c)
		if err != nil {
			return nil, nil, err
		}
		marks = append(marks, m...)
	}
	slices.SortFunc(all.Ranges, func(a, b debuginfo.Range) int { return cmp.Compare(a.Lo, b.Lo) })
	slices.Sort(marks)
	marks = slices.Compact(marks)
	fd, err := r.function(all)
	if err != nil {
		return nil, nil, err
	}
	// With the compiler's entry markers, the calls are found in the
	// code of all the copies at once: a call's code may lie in several
	// of them (a marker duplicated with code that DWARF gives to one
	// copy). Without, each copy is divided by its own edges: the code
	// of another copy is no evidence of a call of this one in progress.
	units := []debuginfo.Copy{all}
	if marks == nil {
		units = copies
	}
	var calls []amd64.InlineCall
	var doubts []amd64.Doubt
	for _, u := range units {
		code := make([]amd64.Range, len(u.Ranges))
		for i, rg := range u.Ranges {
			code[i] = amd64.Range{Lo: rg.Lo, Hi: rg.Hi}
		}
		m := marks
		if m == nil && len(code) == 0 {
			// A copy without code marks where its call was with its
			// entry; that is its only trace.
			m = []uint64{u.Entry}
		}
		cs, ds, err := fd.InlineCalls(code, u.Folded, m)
		if err != nil {
			return nil, nil, err
		}
		calls = append(calls, cs...)
		doubts = append(doubts, ds...)
	}
	for _, d := range doubts {
		where, err := r.site(all.Module, d.Addr)
		name := fmt.Sprintf("%#x", d.Addr)
		if err == nil {
			name = fmt.Sprintf("%s+%#x", where.Func, where.Offset)
		}
		r.warnOnce(fmt.Errorf("inline copy of %s in %s: at %s, %s; its entry and return counts may be wrong", fn, all.Caller, name, d.Why))
	}
	var sites []sugar.Site
	var guards []sugar.Guard
	var refused []sugar.Site // sites uprobes refuse
	named := func(addr uint64, rule string) (sugar.Site, error) {
		at := fd.ProbeAt(addr)
		s, err := r.site(all.Module, at)
		if err == nil && r.Uprobes && fd.UprobeRefused(at) && !slices.ContainsFunc(refused, s.Same) {
			refused = append(refused, s)
		}
		s.Rule = rule
		return s, err
	}
	for _, c := range calls {
		entry, err := named(c.Entry, c.Rule)
		if err != nil {
			return nil, nil, err
		}
		g := sugar.Guard{Entry: entry}
		for _, a := range c.Also {
			s, err := named(a, c.Rule)
			if err != nil {
				return nil, nil, err
			}
			g.Also = append(g.Also, s)
		}
		for _, a := range c.Repeat {
			s, err := named(a, c.Rule+", counted when no call is in progress")
			if err != nil {
				return nil, nil, err
			}
			g.Repeat = append(g.Repeat, s)
		}
		for _, x := range c.Exits {
			rule := "exit edge"
			if x.Leaves {
				rule = "leaves the caller"
			}
			s, err := named(x.Addr, rule)
			if err != nil {
				return nil, nil, err
			}
			g.Exits = append(g.Exits, s)
			if x.Shared {
				g.Shared = append(g.Shared, s)
			}
		}
		switch {
		case !ret:
			for _, x := range append([]sugar.Site{entry}, g.Also...) {
				if k := slices.IndexFunc(g.Repeat, x.Same); k >= 0 {
					x = g.Repeat[k]
				}
				sites = append(sites, x)
			}
		case len(c.Body) == 0:
			entry.Rule = "call without code: at its entry"
			sites = append(sites, entry)
		default:
			sites = append(sites, g.Exits...)
		}
		if len(g.Shared) > 0 || len(g.Repeat) > 0 {
			guards = append(guards, g)
			if c.Recursive {
				r.warnOnce(fmt.Errorf("inline copy of %s in %s: at %s+%#x, the caller calls itself while the call is in progress, and the thread's mark that guards the call's sites is shared by the caller's frames; its entry and return counts may be wrong", fn, all.Caller, entry.Func, entry.Offset))
			}
		}
	}
	if len(refused) > 0 {
		for _, s := range refused {
			r.warnOnce(fmt.Errorf("inline copy of %s in %s: at %s+%#x, a site is an instruction uprobes refuse (a segment or lock prefix) and no other instruction runs exactly when it does: left out; its entry and return counts may be wrong", fn, all.Caller, s.Func, s.Offset))
		}
		keep := func(list []sugar.Site) []sugar.Site {
			return slices.DeleteFunc(list, func(x sugar.Site) bool {
				return slices.ContainsFunc(refused, x.Same)
			})
		}
		sites = keep(sites)
		for i := range guards {
			g := &guards[i]
			g.Also, g.Exits, g.Shared, g.Repeat = keep(g.Also), keep(g.Exits), keep(g.Shared), keep(g.Repeat)
			if slices.ContainsFunc(refused, g.Entry.Same) && len(g.Also) > 0 {
				g.Entry, g.Also = g.Also[0], g.Also[1:]
			}
		}
		// A call none of whose entries can be probed marks no thread:
		// its guarded sites would never fire, and are left out too.
		guards = slices.DeleteFunc(guards, func(g sugar.Guard) bool {
			if !slices.ContainsFunc(refused, g.Entry.Same) {
				return false
			}
			for _, x := range g.Shared {
				sites = slices.DeleteFunc(sites, x.Same)
			}
			return true
		})
	}
	return sites, guards, nil
}

// site names the instruction at addr as kinst does: the function symbol
// holding it and the offset into that symbol.
func (r *Resolver) site(module string, addr uint64) (sugar.Site, error) {
	sym, ok := r.Set.SymbolAt(module, addr)
	if !ok {
		return sugar.Site{}, fmt.Errorf("no function symbol holds %#x in %s", addr, module)
	}
	name := module
	if module == "kernel" || r.Compat {
		// The kernel is kinst's default module; the reference keeps the
		// description's own module field.
		name = ""
	}
	return sugar.Site{Module: name, Func: sym.Name, Offset: addr - sym.Addr}, nil
}

// function returns the decoded caller of copy c, with the other
// functions its ranges reach (cold parts) as parts of it. Callers are
// decoded once and shared by all their copies.
func (r *Resolver) function(c debuginfo.Copy) (*amd64.Function, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := funcKey{c.Module, c.CallerAddr}
	if f, ok := r.funcs[key]; ok && coldPartsKnown(f, c) {
		return f, nil
	}
	sym, code, err := r.Set.CodeAt(c.Module, c.CallerAddr)
	if err != nil {
		return nil, err
	}
	var parts []amd64.Part
	seen := map[uint64]bool{sym.Addr: true}
	for _, rg := range c.Ranges {
		if rg.Lo >= sym.Addr && rg.Lo < sym.Addr+sym.Size {
			continue
		}
		psym, pcode, err := r.Set.CodeAt(c.Module, rg.Lo)
		if err != nil {
			return nil, err
		}
		if !seen[psym.Addr] {
			seen[psym.Addr] = true
			parts = append(parts, amd64.Part{Addr: psym.Addr, Code: pcode})
		}
	}
	f, err := amd64.NewFunctionNoReturn(code, sym.Addr, r.noReturnIn(c.Module), parts...)
	if err != nil {
		return nil, err
	}
	if r.funcs == nil {
		r.funcs = make(map[funcKey]*amd64.Function)
	}
	r.funcs[key] = f
	return f, nil
}

// coldPartsKnown reports whether f, decoded for an earlier copy, already
// covers every range of copy c.
func coldPartsKnown(f *amd64.Function, c debuginfo.Copy) bool {
	for _, rg := range c.Ranges {
		if _, ok := f.Block(rg.Lo); !ok {
			return false
		}
	}
	return true
}

// CheckOffset checks that kinst::fn:off names an instruction of fn:
// every out-of-line function of that name must have an instruction
// starting at off.
func (r *Resolver) CheckOffset(fn string, off uint64) error {
	if r.Set == nil {
		return r.checkOffsetSymtab(fn, off)
	}
	f, err := r.Set.Lookup(fn)
	if err != nil {
		var unknown *debuginfo.UnknownFunctionError
		switch {
		case errors.As(err, &unknown) && r.NoKernel != nil:
			return r.checkOffsetSymtab(fn, off)
		case errors.As(err, &unknown) && r.ZeroMatch:
			return nil
		}
		return err
	}
	if len(f.OutOfLine) == 0 {
		return fmt.Errorf("%s has no out-of-line body to probe at offset %d; kinst::%s:entry and kinst::%s:return trace its inline copies", fn, off, fn, fn)
	}
	for _, sym := range f.OutOfLine {
		_, code, err := r.Set.CodeAt(sym.Module, sym.Addr)
		if err != nil {
			return err
		}
		d, err := amd64.NewFunction(code, sym.Addr)
		if err != nil {
			return err
		}
		if err := checkProbeable(d, off); err != nil {
			r.inFentryCall(sym.Module, d, err)
			return fmt.Errorf("%s: %w", fn, err)
		}
	}
	return nil
}

// inFentryCall marks an offset error inside the call to __fentry__ that
// an image holds at a traced function's entry as inside the ftrace NOP:
// ftrace turns that call into the NOP of the live text at boot.
func (r *Resolver) inFentryCall(module string, d *amd64.Function, err error) {
	var oe *amd64.OffsetError
	if !errors.As(err, &oe) || len(d.Insts) == 0 {
		return
	}
	in := d.Insts[0]
	if in.Addr != d.Addr || in.Op != amd64.Call || in.Len != 5 || oe.Off == 0 || oe.Off >= 5 {
		return
	}
	if s, ok := r.Set.SymbolAt(module, in.Target); ok && s.Addr == in.Target && s.Name == "__fentry__" {
		oe.InFtraceNOP = true
	}
}

// noDebug is the error of the questions only debug information answers.
func (r *Resolver) noDebug() error {
	if r.NoDebug != nil {
		return r.NoDebug
	}
	if r.NoKernel != nil {
		return r.NoKernel
	}
	return errors.New("no debug information")
}

// checkOffsetSymtab checks kinst::fn:off against the code of every
// function symbol called fn in the kernel's symbol table, decoded as
// CheckOffset decodes it with debug information.
func (r *Resolver) checkOffsetSymtab(fn string, off uint64) error {
	if r.Symbols == nil {
		return r.noDebug()
	}
	syms, err := r.Symbols.Lookup("", fn)
	n := 0
	for _, s := range syms {
		if !s.Func {
			continue
		}
		n++
		code, err := r.Symbols.Code(s)
		if err != nil {
			return fmt.Errorf("cannot check that offset %d of %s is an instruction: reading its code: %w", off, fn, err)
		}
		d, err := amd64.NewFunction(code, s.Addr)
		if err != nil {
			return fmt.Errorf("%s: %w", fn, err)
		}
		if err := checkProbeable(d, off); err != nil {
			return fmt.Errorf("%s: %w", fn, err)
		}
	}
	switch {
	case n > 0:
		return nil
	case r.ZeroMatch:
		return nil
	case err != nil && !errors.Is(err, ksym.ErrUnknownSymbol):
		return err
	}
	return fmt.Errorf("function %s not found in the kernel's symbol table", fn)
}

// moduleOrder ranks the modules of copies in the set's order: the
// kernel first, then modules by name.
func moduleOrder(copies []debuginfo.Copy) map[string]int {
	rank := map[string]int{}
	for _, c := range copies {
		m := c.Module
		if m == "kernel" {
			m = ""
		}
		if _, ok := rank[m]; !ok {
			rank[m] = len(rank)
		}
	}
	return rank
}

// sortSites orders sites by module (in rank's order), function and
// offset, and drops duplicates (two copies can share an exit).
func sortSites(s []sugar.Site, rank map[string]int) []sugar.Site {
	sort.Slice(s, func(i, j int) bool {
		a, b := s[i], s[j]
		if a.Module != b.Module {
			return rank[a.Module] < rank[b.Module]
		}
		if a.Func != b.Func {
			return a.Func < b.Func
		}
		return a.Offset < b.Offset
	})
	out := s[:0]
	for i, x := range s {
		if i == 0 || !x.Same(s[i-1]) {
			out = append(out, x)
		}
	}
	return out
}

// checkProbeable checks that off starts an instruction of d that the
// kernel lets a kprobe replace: not a trap, since x86 kprobes refuse an
// int3 (the padding after a return patched from a jump to the return
// thunk, or another debugger's breakpoint) and BUG()'s ud2.
func checkProbeable(d *amd64.Function, off uint64) error {
	if err := d.CheckOffset(off); err != nil {
		return err
	}
	for _, in := range d.Insts {
		if in.Addr == d.Addr+off && in.Op == amd64.Trap {
			return fmt.Errorf("offset %d is a trap (int3 or ud2), which the kernel does not probe", off)
		}
	}
	return nil
}
