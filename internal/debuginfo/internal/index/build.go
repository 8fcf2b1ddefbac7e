package index

import (
	"cmp"
	"debug/elf"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
)

// interner assigns small integers to strings; 0 is "". It is shared by
// the workers of one build.
type interner struct {
	mu   sync.Mutex
	ids  map[string]uint32
	strs []string
}

func newInterner() *interner {
	return &interner{ids: map[string]uint32{"": 0}, strs: []string{""}}
}

func (in *interner) bytes(b []byte) uint32 {
	in.mu.Lock()
	id, ok := in.ids[string(b)] // does not allocate
	if !ok {
		id = in.add(string(b))
	}
	in.mu.Unlock()
	return id
}

func (in *interner) string(s string) uint32 {
	in.mu.Lock()
	id, ok := in.ids[s]
	if !ok {
		id = in.add(s)
	}
	in.mu.Unlock()
	return id
}

func (in *interner) add(s string) uint32 {
	id := uint32(len(in.strs))
	in.ids[s] = id
	in.strs = append(in.strs, s)
	return id
}

// subprog is a DW_TAG_subprogram worth remembering: it has a name, or
// leads to one through DW_AT_specification or DW_AT_abstract_origin.
type subprog struct {
	off    uint64
	ref    uint64 // .debug_info offset of the DIE giving the name; 0 if none
	name   uint32
	inline bool // DW_AT_inline present: an abstract instance root
}

// rawCopy is a DW_TAG_inlined_subroutine with code, before its name and
// caller are resolved.
type rawCopy struct {
	origin   uint64
	entry    uint64
	hasEntry bool
	file     uint32
	line     uint32
	// view is DW_AT_GNU_entry_view plus one, 0 when absent; stmt is
	// the unit's line program, noStmt when it has none.
	view   uint32
	stmt   uint32
	nested bool   // inside a copy of the same function: only its entry counts
	r0, n  uint32 // its ranges in unitResult.ranges
}

type unitResult struct {
	subs   []subprog
	copies []rawCopy
	ranges []dwarfread.Range
	nested int
}

// Stats counts what an index build saw (debuginfo.BuildStats).
type Stats struct {
	Units       int // compile and partial units scanned
	Walked      int // of those, units whose DIEs were all read
	Subprograms int // subprogram DIEs kept for name resolution
	Copies      int // inlined copies with code
	Unresolved  int // copies whose abstract origin has no name (e.g. in a DWZ file)
	Nested      int // copies left out for lying in an instance of the same function
}

// Build scans every unit on workers goroutines and assembles the
// index. It loads the symbol table on another goroutine meanwhile.
func Build(d *dwarfread.DwarfSections, ef *elffile.File, workers int, isThunk func(name string) bool) (*Tables, Stats, error) {
	b, err := newBuilder(d, ef, workers, isThunk)
	if err != nil {
		return nil, Stats{}, err
	}
	return b.finish(nil, nil)
}

// builder is one build of an index: the units, the symbols (loaded on
// a goroutine of their own) and the strings of both.
type builder struct {
	d       *dwarfread.DwarfSections
	ef      *elffile.File
	units   []dwarfread.Unit
	workers int
	in      *interner

	symWG        sync.WaitGroup
	symErr       error
	syms, thunks []SymRec
	byName       []uint32
	stats        Stats
	results      []unitResult
}

func newBuilder(d *dwarfread.DwarfSections, ef *elffile.File, workers int, isThunk func(name string) bool) (*builder, error) {
	var units []dwarfread.Unit
	var err error
	if d.InfoAt != nil {
		units, err = dwarfread.ParseUnitsAt(d.InfoAt, len(d.Info))
	} else {
		units, err = dwarfread.ParseUnits(d.Info)
	}
	if err != nil {
		return nil, err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	b := &builder{d: d, ef: ef, units: units, workers: workers, in: newInterner(), results: make([]unitResult, len(units))}
	b.symWG.Go(func() {
		var funcs, th []elf.Symbol
		funcs, th, b.symErr = ef.Symbols(isThunk)
		b.syms, b.thunks, b.byName = sortSymbols(funcs, th, b.in)
	})
	for _, u := range units {
		if u.Utype == dwarfread.UtCompile || u.Utype == dwarfread.UtPartial {
			b.stats.Units++
		}
	}
	return b, nil
}

// each runs f on every unit i for which want is nil or true, on the
// builder's workers, and returns the error of the first unit that
// failed.
func (b *builder) each(want []bool, f func(i int, buf *[]byte) error) error {
	errs := make([]error, len(b.units))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range b.workers {
		wg.Go(func() {
			var buf []byte
			for {
				i := int(next.Add(1) - 1)
				if i >= len(b.units) {
					return
				}
				if want == nil || want[i] {
					errs[i] = f(i, &buf)
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("unit at %#x: %w", b.units[i].Off, err)
		}
	}
	return nil
}

// finish reads all DIEs of the units walk says (all when nil) and
// assembles the index; keep, when not nil, limits it to the functions
// of those names.
func (b *builder) finish(walk []bool, keep map[uint32]bool) (*Tables, Stats, error) {
	err := b.each(walk, func(i int, _ *[]byte) error {
		return scanUnit(b.d, &b.units[i], b.in, &b.results[i])
	})
	b.symWG.Wait()
	if err != nil {
		return nil, b.stats, err
	}
	if b.symErr != nil {
		return nil, b.stats, fmt.Errorf("symbols of %s: %w", b.ef.Path, b.symErr)
	}
	for i, u := range b.units {
		if (walk == nil || walk[i]) && (u.Utype == dwarfread.UtCompile || u.Utype == dwarfread.UtPartial) {
			b.stats.Walked++
		}
	}
	x, err := assemble(b.results, b.in, b.syms, b.thunks, b.byName, keep, &b.stats)
	return x, b.stats, err
}

// sortSymbols orders the function symbols by address (largest first at
// equal addresses, then by name) and builds the by-name order.
func sortSymbols(funcs, thunks []elf.Symbol, in *interner) (syms, th []SymRec, byName []uint32) {
	syms = make([]SymRec, len(funcs))
	for i, s := range funcs {
		syms[i] = SymRec{Name: in.string(s.Name), Addr: s.Value, Size: s.Size}
	}
	// The interner's list only grows and its elements never change, so
	// a snapshot can be read while the workers add to it.
	in.mu.Lock()
	strs := in.strs
	in.mu.Unlock()
	slices.SortFunc(syms, func(a, b SymRec) int {
		if c := cmp.Compare(a.Addr, b.Addr); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Size, a.Size); c != 0 {
			return c
		}
		return strings.Compare(strs[a.Name], strs[b.Name])
	})
	syms = slices.CompactFunc(syms, func(a, b SymRec) bool { return a == b })
	byName = make([]uint32, len(syms))
	for i := range byName {
		byName[i] = uint32(i)
	}
	slices.SortFunc(byName, func(a, b uint32) int {
		if c := strings.Compare(strs[syms[a].Name], strs[syms[b].Name]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, s := range thunks {
		th = append(th, SymRec{Name: in.string(s.Name), Addr: s.Value, Size: s.Size})
	}
	slices.SortFunc(th, func(a, b SymRec) int { return cmp.Compare(a.Addr, b.Addr) })
	return syms, th, byName
}

// scanUnit collects the subprograms and inlined copies of one unit.
func scanUnit(s *dwarfread.DwarfSections, u *dwarfread.Unit, in *interner, r *unitResult) error {
	if u.Utype != dwarfread.UtCompile && u.Utype != dwarfread.UtPartial {
		return nil // type units hold no code
	}
	tab, err := dwarfread.ParseAbbrevs(s.Abbrev, u.AbbrevOff, u)
	if err != nil {
		return err
	}
	ctx := dwarfread.UnitCtx{Unit: u, StrOffsetsBase: 8}
	if u.Dwarf64 {
		ctx.StrOffsetsBase = 16
	}
	var fileIDs []uint32 // interned call_file names, by file index; built on first use
	// open holds, for each DIE whose children are being read, the
	// abstract function it is an instance of, if any.
	var open []uint64
	b := dwarfread.Buf{Data: s.Info[:u.End], Pos: u.Dies}
	for b.Pos < u.End {
		off := b.Pos
		code := b.Uleb()
		if code == 0 {
			if len(open) > 0 { // end of a sibling list
				open = open[:len(open)-1]
			}
			continue
		}
		if code >= uint64(len(tab)) || !tab[code].Defined {
			return fmt.Errorf("DIE at %#x: unknown abbreviation code %d", off, code)
		}
		a := &tab[code]
		if a.Kind == dwarfread.KindSkip {
			if a.Children {
				open = append(open, 0)
			}
			if a.Fixed >= 0 {
				b.Skip(uint64(a.Fixed))
			} else {
				for i := range a.Attrs {
					b.Value(a.Attrs[i].Form, &a.Attrs[i], u)
				}
			}
			if b.Err != nil {
				return fmt.Errorf("DIE at %#x: %w", off, b.Err)
			}
			continue
		}
		var name, low, high, ranges, entry, view, origin, spec, callFile, callLine, stmt, compDir dwarfread.Attr
		inline := false
		for i := range a.Attrs {
			sp := &a.Attrs[i]
			form := sp.Form
			if form == dwarfread.FormIndirect {
				form = uint32(b.Uleb())
			}
			v := b.Value(form, sp, u)
			switch sp.Attr {
			case dwarfread.AtName:
				name = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtLowPC:
				low = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtHighPC:
				high = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtRanges:
				ranges = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtEntryPC:
				entry = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtGNUEntryView:
				view = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtAbstractOrigin:
				origin = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtSpecification:
				spec = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtCallFile:
				callFile = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtCallLine:
				callLine = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtInline:
				inline = true
			case dwarfread.AtStmtList:
				stmt = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtCompDir:
				compDir = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtStrOffsetsBase:
				ctx.StrOffsetsBase = v
			case dwarfread.AtAddrBase, dwarfread.AtGNUAddrBase:
				ctx.AddrBase = v
			case dwarfread.AtRnglistsBase:
				ctx.RnglistsBase = v
			}
		}
		if b.Err != nil {
			return fmt.Errorf("DIE at %#x: %w", off, b.Err)
		}
		var instanceOf uint64
		switch a.Kind {
		case dwarfread.KindSubprogram:
			instanceOf = uint64(off)
			if origin.Form != 0 {
				instanceOf, _ = dwarfread.Ref(origin, u)
			}
		case dwarfread.KindInlined:
			instanceOf, _ = dwarfread.Ref(origin, u)
		}
		nested := instanceOf != 0 && slices.Contains(open, instanceOf)
		if a.Children {
			open = append(open, instanceOf)
		}
		switch a.Kind {
		case dwarfread.KindUnit:
			// The bases were read above; the values that need them are
			// resolved now, whatever the attribute order.
			if low.Form != 0 {
				ctx.Base, _ = s.Address(low, &ctx)
			}
			if stmt.Form != 0 {
				ctx.StmtList, ctx.HasStmtList = stmt.Val, true
			}
			if dir, ok := s.AttrString(compDir, &ctx); ok {
				ctx.CompDir = string(dir)
			}
		case dwarfread.KindSubprogram:
			sp := subprog{off: uint64(off), inline: inline}
			if n, ok := s.AttrString(name, &ctx); ok && len(n) > 0 {
				sp.name = in.bytes(n)
			}
			if spec.Form != 0 {
				sp.ref, _ = dwarfread.Ref(spec, u)
			} else if origin.Form != 0 {
				sp.ref, _ = dwarfread.Ref(origin, u)
			}
			if sp.name != 0 || sp.ref != 0 {
				r.subs = append(r.subs, sp)
			}
		case dwarfread.KindInlined:
			org, ok := dwarfread.Ref(origin, u)
			if !ok {
				continue
			}
			if nested {
				// A copy inside an instance of the same function (gcc
				// emits these for recursion and partial inlining): the
				// enclosing instance's probe covers it already, and
				// perf probe does not list it either. Its entry is
				// kept, for EntryMarkers to leave its marker out.
				r.nested++
				if entry.Form != 0 && !dwarfread.IsConst(entry.Form) {
					if pc, ok := s.Address(entry, &ctx); ok {
						r.copies = append(r.copies, rawCopy{origin: org, entry: pc, hasEntry: true, nested: true, stmt: NoStmt})
					}
				}
				continue
			}
			r0 := len(r.ranges)
			var first dwarfread.Lowest
			r.ranges, err = s.AppendRanges(r.ranges, low, high, ranges, &ctx, &first)
			if err != nil {
				return fmt.Errorf("DIE at %#x: %w", off, err)
			}
			rs := normalize(r.ranges[r0:])
			r.ranges = r.ranges[:r0+len(rs)]
			// The empty ranges apart from the code mark where a call's
			// code was folded into the caller's; they follow the
			// others as ranges of no length.
			slices.Sort(first.Empty)
			for _, a := range slices.Compact(first.Empty) {
				if !slices.ContainsFunc(rs, func(g dwarfread.Range) bool { return a >= g.Lo && a <= g.Hi }) {
					r.ranges = append(r.ranges, dwarfread.Range{Lo: a, Hi: a})
				}
			}
			c := rawCopy{origin: org, r0: uint32(r0), n: uint32(len(r.ranges) - r0)}
			lo, hasLow := s.Address(low, &ctx)
			switch {
			case first.Ok:
				// The lowest address, counting empty ranges as perf
				// probe does: the copy starts there even if its first
				// instructions were optimised away. With all ranges
				// empty, the copy has no code left but still marks
				// where the call was.
				c.entry = first.Addr
			case entry.Form != 0:
				c.entry = lo
			default:
				continue // part of an abstract instance tree
			}
			switch {
			case entry.Form == 0:
			case dwarfread.IsConst(entry.Form):
				// DWARF 5 §2.18: an offset from the entity's base
				// address, taken here as its low pc or, with only
				// DW_AT_ranges, its lowest address.
				base := c.entry
				if hasLow {
					base = lo
				}
				c.entry, c.hasEntry = base+entry.Val, true
			default:
				if pc, ok := s.Address(entry, &ctx); ok {
					c.entry, c.hasEntry = pc, true
				}
			}
			if callLine.Form != 0 {
				c.line = uint32(callLine.Val)
			}
			c.stmt = NoStmt
			if ctx.HasStmtList && ctx.StmtList < uint64(NoStmt) {
				c.stmt = uint32(ctx.StmtList)
			}
			if view.Form != 0 && c.hasEntry && view.Val < 1<<16 {
				c.view = uint32(view.Val) + 1
			}
			if callFile.Form != 0 && ctx.HasStmtList {
				if fileIDs == nil {
					files, err := dwarfread.LineFiles(s, ctx.StmtList, &ctx)
					if err != nil {
						return err
					}
					fileIDs = make([]uint32, len(files))
					for i, f := range files {
						fileIDs[i] = in.string(f)
					}
				}
				if callFile.Val < uint64(len(fileIDs)) {
					c.file = fileIDs[callFile.Val]
				}
			}
			r.copies = append(r.copies, c)
		}
	}
	return b.Err
}

// normalize sorts ranges and merges those that touch or overlap.
func normalize(rs []dwarfread.Range) []dwarfread.Range {
	if len(rs) < 2 {
		return rs
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Lo < rs[j].Lo })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r.Lo <= last.Hi {
			last.Hi = max(last.Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// compareCopies orders copies at the same entry by their other fields.
func compareCopies(strs []string, a, b *copyRec, ar, br []dwarfread.Range) int {
	if c := cmp.Compare(a.Flags, b.Flags); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Line, b.Line); c != 0 {
		return c
	}
	if c := strings.Compare(strs[a.File], strs[b.File]); c != 0 {
		return c
	}
	if c := cmp.Compare(a.View, b.View); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Stmt, b.Stmt); c != 0 {
		return c
	}
	return slices.CompareFunc(ar, br, func(x, y dwarfread.Range) int {
		if c := cmp.Compare(x.Lo, y.Lo); c != 0 {
			return c
		}
		return cmp.Compare(x.Hi, y.Hi)
	})
}

// assemble resolves names and callers and lays the index out. keep,
// when not nil, holds the names of the only functions to lay out: the
// index is then partial, answering for those names alone.
func assemble(results []unitResult, in *interner, syms, thunks []SymRec, byName []uint32, keep map[uint32]bool, stats *Stats) (*Tables, error) {
	var subs []subprog
	ncopies := 0
	for i := range results {
		subs = append(subs, results[i].subs...)
		ncopies += len(results[i].copies)
		stats.Nested += results[i].nested
	}
	stats.Subprograms = len(subs)
	// Units are scanned in order, so subs is already by offset.
	find := func(off uint64) *subprog {
		i := sort.Search(len(subs), func(i int) bool { return subs[i].off >= off })
		if i < len(subs) && subs[i].off == off {
			return &subs[i]
		}
		return nil
	}
	// resolve follows references until a name; the hop limit guards
	// against cycles in corrupt input.
	resolve := func(sp *subprog) uint32 {
		for hops := 0; sp != nil && hops < 8; hops++ {
			if sp.name != 0 {
				return sp.name
			}
			sp = find(sp.ref)
		}
		return 0
	}

	// Function records, one per name, for DWARF names and symbols.
	kept := func(n uint32) bool { return keep == nil || keep[n] }
	flags := make(map[uint32]uint8)
	for i := range subs {
		if n := resolve(&subs[i]); n != 0 && kept(n) {
			f := flags[n] | funcNamed
			if subs[i].inline {
				f |= FuncInline
			}
			flags[n] = f
		}
	}
	for _, s := range syms {
		if _, ok := flags[s.Name]; !ok && kept(s.Name) {
			flags[s.Name] = 0 // a function without DWARF, e.g. in assembly
		}
	}
	strs := in.strs // all workers are done
	x := &Tables{strs: strs, syms: syms, byName: byName, thunkSyms: thunks, partial: keep != nil}
	for n := range keep {
		x.covered = append(x.covered, n)
	}
	slices.SortFunc(x.covered, func(a, b uint32) int { return strings.Compare(strs[a], strs[b]) })
	x.funcs = make([]function, 0, len(flags))
	for n, f := range flags {
		x.funcs = append(x.funcs, function{Name: n, Flags: f})
	}
	slices.SortFunc(x.funcs, func(a, b function) int { return strings.Compare(strs[a.Name], strs[b.Name]) })
	fidx := make(map[uint32]uint32, len(x.funcs))
	for i, f := range x.funcs {
		fidx[f.Name] = uint32(i)
	}

	// Copies, bucketed by function.
	type pending struct {
		fn  uint32
		c   copyRec
		src []dwarfread.Range
	}
	all := make([]pending, 0, ncopies)
	sym := func(i uint32) SymRec { return syms[i] }
	originName := make(map[uint64]uint32)
	for i := range results {
		r := &results[i]
		for _, rc := range r.copies {
			n, ok := originName[rc.origin]
			if !ok {
				n = resolve(find(rc.origin))
				originName[rc.origin] = n
			}
			if n == 0 {
				stats.Unresolved++
				continue
			}
			if !kept(n) {
				continue
			}
			c := copyRec{Sym: symbolAt(len(syms), sym, rc.entry), Line: rc.line, File: rc.file, Entry: rc.entry, View: rc.view, Stmt: rc.stmt}
			if rc.hasEntry {
				c.Flags |= CopyEntryPC
			}
			if rc.nested {
				c.Flags |= CopyNested
			}
			all = append(all, pending{fn: fidx[n], c: c, src: r.ranges[rc.r0 : rc.r0+rc.n]})
		}
	}
	for _, p := range all {
		if p.c.Flags&CopyNested == 0 {
			stats.Copies++
		}
	}
	// Order copies by function, then caller name (and address, for
	// static functions of the same name), then offset; the position of
	// a symbol in byName stands for its name and address.
	rank := make([]int32, len(x.syms))
	for i, s := range x.byName {
		rank[s] = int32(i)
	}
	key := func(c *copyRec) (int32, uint64) {
		if c.Sym == NoSym {
			return -1, c.Entry
		}
		return rank[c.Sym], c.Entry - x.syms[c.Sym].Addr
	}
	slices.SortFunc(all, func(a, b pending) int {
		if c := cmp.Compare(a.fn, b.fn); c != 0 {
			return c
		}
		ar, ao := key(&a.c)
		br, bo := key(&b.c)
		if c := cmp.Compare(ar, br); c != 0 {
			return c
		}
		if c := cmp.Compare(ao, bo); c != 0 {
			return c
		}
		// Copies at the same place (nested ones) are ordered by all
		// they hold, so that the order is the same whatever other
		// copies were sorted with them: a partial index lists a
		// function's copies as the whole one does.
		return compareCopies(strs, &a.c, &b.c, a.src, b.src)
	})
	nr := 0
	for _, p := range all {
		nr += len(p.src)
	}
	x.copies = make([]copyRec, len(all))
	x.ranges = make([]dwarfread.Range, 0, nr)
	for i, p := range all {
		f := &x.funcs[p.fn]
		if f.N == 0 {
			f.Copies = uint32(i)
		}
		f.N++
		p.c.Ranges, p.c.N = uint32(len(x.ranges)), uint32(len(p.src))
		x.ranges = append(x.ranges, p.src...)
		x.copies[i] = p.c
	}
	return x, nil
}
