package debuginfo

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
	ranges []Range
	nested int
}

// BuildStats counts what an index build saw.
type BuildStats struct {
	Units       int // compile and partial units scanned
	Subprograms int // subprogram DIEs kept for name resolution
	Copies      int // inlined copies with code
	Unresolved  int // copies whose abstract origin has no name (e.g. in a DWZ file)
	Nested      int // copies left out for lying in an instance of the same function
}

// buildIndex scans every unit on workers goroutines and assembles the
// index. It loads the symbol table on another goroutine meanwhile.
func buildIndex(d *dwarfSections, ef *elfFile, workers int) (*tables, BuildStats, error) {
	var stats BuildStats
	units, err := parseUnits(d.info)
	if err != nil {
		return nil, stats, err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	in := newInterner()

	var symErr error
	var syms, thunks []symbol
	var byName []uint32
	var symWG sync.WaitGroup
	symWG.Go(func() {
		var funcs, th []elf.Symbol
		funcs, th, symErr = ef.symbols()
		syms, thunks, byName = sortSymbols(funcs, th, in)
	})

	results := make([]unitResult, len(units))
	errs := make([]error, len(units))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(units) {
					return
				}
				errs[i] = scanUnit(d, &units[i], in, &results[i])
			}
		})
	}
	wg.Wait()
	symWG.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, stats, fmt.Errorf("unit at %#x: %w", units[i].off, err)
		}
	}
	if symErr != nil {
		return nil, stats, fmt.Errorf("symbols of %s: %w", ef.path, symErr)
	}
	for _, u := range units {
		if u.utype == utCompile || u.utype == utPartial {
			stats.Units++
		}
	}
	x, err := assemble(results, in, syms, thunks, byName, &stats)
	return x, stats, err
}

// sortSymbols orders the function symbols by address (largest first at
// equal addresses, then by name) and builds the by-name order.
func sortSymbols(funcs, thunks []elf.Symbol, in *interner) (syms, th []symbol, byName []uint32) {
	syms = make([]symbol, len(funcs))
	for i, s := range funcs {
		syms[i] = symbol{name: in.string(s.Name), addr: s.Value, size: s.Size}
	}
	// The interner's list only grows and its elements never change, so
	// a snapshot can be read while the workers add to it.
	in.mu.Lock()
	strs := in.strs
	in.mu.Unlock()
	slices.SortFunc(syms, func(a, b symbol) int {
		if c := cmp.Compare(a.addr, b.addr); c != 0 {
			return c
		}
		if c := cmp.Compare(b.size, a.size); c != 0 {
			return c
		}
		return strings.Compare(strs[a.name], strs[b.name])
	})
	syms = slices.CompactFunc(syms, func(a, b symbol) bool { return a == b })
	byName = make([]uint32, len(syms))
	for i := range byName {
		byName[i] = uint32(i)
	}
	slices.SortFunc(byName, func(a, b uint32) int {
		if c := strings.Compare(strs[syms[a].name], strs[syms[b].name]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, s := range thunks {
		th = append(th, symbol{name: in.string(s.Name), addr: s.Value, size: s.Size})
	}
	slices.SortFunc(th, func(a, b symbol) int { return cmp.Compare(a.addr, b.addr) })
	return syms, th, byName
}

// scanUnit collects the subprograms and inlined copies of one unit.
func scanUnit(s *dwarfSections, u *unit, in *interner, r *unitResult) error {
	if u.utype != utCompile && u.utype != utPartial {
		return nil // type units hold no code
	}
	tab, err := parseAbbrevs(s.abbrev, u.abbrevOff, u)
	if err != nil {
		return err
	}
	ctx := unitCtx{unit: u, strOffsetsBase: 8}
	if u.dwarf64 {
		ctx.strOffsetsBase = 16
	}
	var fileIDs []uint32 // interned call_file names, by file index; built on first use
	// open holds, for each DIE whose children are being read, the
	// abstract function it is an instance of, if any.
	var open []uint64
	b := buf{data: s.info[:u.end], pos: u.dies}
	for b.pos < u.end {
		off := b.pos
		code := b.uleb()
		if code == 0 {
			if len(open) > 0 { // end of a sibling list
				open = open[:len(open)-1]
			}
			continue
		}
		if code >= uint64(len(tab)) || !tab[code].defined {
			return fmt.Errorf("DIE at %#x: unknown abbreviation code %d", off, code)
		}
		a := &tab[code]
		if a.kind == kindSkip {
			if a.children {
				open = append(open, 0)
			}
			if a.fixed >= 0 {
				b.skip(uint64(a.fixed))
			} else {
				for i := range a.attrs {
					b.value(a.attrs[i].form, &a.attrs[i], u)
				}
			}
			if b.err != nil {
				return fmt.Errorf("DIE at %#x: %w", off, b.err)
			}
			continue
		}
		var name, low, high, ranges, entry, view, origin, spec, callFile, callLine, stmt, compDir attr
		inline := false
		for i := range a.attrs {
			sp := &a.attrs[i]
			form := sp.form
			if form == formIndirect {
				form = uint32(b.uleb())
			}
			v := b.value(form, sp, u)
			switch sp.attr {
			case atName:
				name = attr{form, v}
			case atLowPC:
				low = attr{form, v}
			case atHighPC:
				high = attr{form, v}
			case atRanges:
				ranges = attr{form, v}
			case atEntryPC:
				entry = attr{form, v}
			case atGNUEntryView:
				view = attr{form, v}
			case atAbstractOrigin:
				origin = attr{form, v}
			case atSpecification:
				spec = attr{form, v}
			case atCallFile:
				callFile = attr{form, v}
			case atCallLine:
				callLine = attr{form, v}
			case atInline:
				inline = true
			case atStmtList:
				stmt = attr{form, v}
			case atCompDir:
				compDir = attr{form, v}
			case atStrOffsetsBase:
				ctx.strOffsetsBase = v
			case atAddrBase, atGNUAddrBase:
				ctx.addrBase = v
			case atRnglistsBase:
				ctx.rnglistsBase = v
			}
		}
		if b.err != nil {
			return fmt.Errorf("DIE at %#x: %w", off, b.err)
		}
		var instanceOf uint64
		switch a.kind {
		case kindSubprogram:
			instanceOf = uint64(off)
			if origin.form != 0 {
				instanceOf, _ = ref(origin, u)
			}
		case kindInlined:
			instanceOf, _ = ref(origin, u)
		}
		nested := instanceOf != 0 && slices.Contains(open, instanceOf)
		if a.children {
			open = append(open, instanceOf)
		}
		switch a.kind {
		case kindUnit:
			// The bases were read above; the values that need them are
			// resolved now, whatever the attribute order.
			if low.form != 0 {
				ctx.base, _ = s.address(low, &ctx)
			}
			if stmt.form != 0 {
				ctx.stmtList, ctx.hasStmtList = stmt.val, true
			}
			if dir, ok := s.attrString(compDir, &ctx); ok {
				ctx.compDir = string(dir)
			}
		case kindSubprogram:
			sp := subprog{off: uint64(off), inline: inline}
			if n, ok := s.attrString(name, &ctx); ok && len(n) > 0 {
				sp.name = in.bytes(n)
			}
			if spec.form != 0 {
				sp.ref, _ = ref(spec, u)
			} else if origin.form != 0 {
				sp.ref, _ = ref(origin, u)
			}
			if sp.name != 0 || sp.ref != 0 {
				r.subs = append(r.subs, sp)
			}
		case kindInlined:
			org, ok := ref(origin, u)
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
				if entry.form != 0 && !isConst(entry.form) {
					if pc, ok := s.address(entry, &ctx); ok {
						r.copies = append(r.copies, rawCopy{origin: org, entry: pc, hasEntry: true, nested: true, stmt: noStmt})
					}
				}
				continue
			}
			r0 := len(r.ranges)
			var first lowest
			r.ranges, err = s.appendRanges(r.ranges, low, high, ranges, &ctx, &first)
			if err != nil {
				return fmt.Errorf("DIE at %#x: %w", off, err)
			}
			rs := normalize(r.ranges[r0:])
			r.ranges = r.ranges[:r0+len(rs)]
			// The empty ranges apart from the code mark where a call's
			// code was folded into the caller's; they follow the
			// others as ranges of no length.
			slices.Sort(first.empty)
			for _, a := range slices.Compact(first.empty) {
				if !slices.ContainsFunc(rs, func(g Range) bool { return a >= g.Lo && a <= g.Hi }) {
					r.ranges = append(r.ranges, Range{a, a})
				}
			}
			c := rawCopy{origin: org, r0: uint32(r0), n: uint32(len(r.ranges) - r0)}
			lo, hasLow := s.address(low, &ctx)
			switch {
			case first.ok:
				// The lowest address, counting empty ranges as perf
				// probe does: the copy starts there even if its first
				// instructions were optimised away. With all ranges
				// empty, the copy has no code left but still marks
				// where the call was.
				c.entry = first.addr
			case entry.form != 0:
				c.entry = lo
			default:
				continue // part of an abstract instance tree
			}
			switch {
			case entry.form == 0:
			case isConst(entry.form):
				// DWARF 5 §2.18: an offset from the entity's base
				// address, taken here as its low pc or, with only
				// DW_AT_ranges, its lowest address.
				base := c.entry
				if hasLow {
					base = lo
				}
				c.entry, c.hasEntry = base+entry.val, true
			default:
				if pc, ok := s.address(entry, &ctx); ok {
					c.entry, c.hasEntry = pc, true
				}
			}
			if callLine.form != 0 {
				c.line = uint32(callLine.val)
			}
			c.stmt = noStmt
			if ctx.hasStmtList && ctx.stmtList < uint64(noStmt) {
				c.stmt = uint32(ctx.stmtList)
			}
			if view.form != 0 && c.hasEntry && view.val < 1<<16 {
				c.view = uint32(view.val) + 1
			}
			if callFile.form != 0 && ctx.hasStmtList {
				if fileIDs == nil {
					files, err := lineFiles(s, ctx.stmtList, &ctx)
					if err != nil {
						return err
					}
					fileIDs = make([]uint32, len(files))
					for i, f := range files {
						fileIDs[i] = in.string(f)
					}
				}
				if callFile.val < uint64(len(fileIDs)) {
					c.file = fileIDs[callFile.val]
				}
			}
			r.copies = append(r.copies, c)
		}
	}
	return b.err
}

// normalize sorts ranges and merges those that touch or overlap.
func normalize(rs []Range) []Range {
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

// assemble resolves names and callers and lays the index out.
func assemble(results []unitResult, in *interner, syms, thunks []symbol, byName []uint32, stats *BuildStats) (*tables, error) {
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
	flags := make(map[uint32]uint8)
	for i := range subs {
		if n := resolve(&subs[i]); n != 0 {
			f := flags[n] | funcNamed
			if subs[i].inline {
				f |= funcInline
			}
			flags[n] = f
		}
	}
	for _, s := range syms {
		if _, ok := flags[s.name]; !ok {
			flags[s.name] = 0 // a function without DWARF, e.g. in assembly
		}
	}
	strs := in.strs // all workers are done
	x := &tables{strs: strs, syms: syms, byName: byName, thunkSyms: thunks}
	x.funcs = make([]function, 0, len(flags))
	for n, f := range flags {
		x.funcs = append(x.funcs, function{name: n, flags: f})
	}
	slices.SortFunc(x.funcs, func(a, b function) int { return strings.Compare(strs[a.name], strs[b.name]) })
	fidx := make(map[uint32]uint32, len(x.funcs))
	for i, f := range x.funcs {
		fidx[f.name] = uint32(i)
	}

	// Copies, bucketed by function.
	type pending struct {
		fn  uint32
		c   copyRec
		src []Range
	}
	all := make([]pending, 0, ncopies)
	sym := func(i uint32) symbol { return syms[i] }
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
			c := copyRec{sym: symbolAt(len(syms), sym, rc.entry), line: rc.line, file: rc.file, entry: rc.entry, view: rc.view, stmt: rc.stmt}
			if rc.hasEntry {
				c.flags |= copyEntryPC
			}
			if rc.nested {
				c.flags |= copyNested
			}
			all = append(all, pending{fn: fidx[n], c: c, src: r.ranges[rc.r0 : rc.r0+rc.n]})
		}
	}
	for _, p := range all {
		if p.c.flags&copyNested == 0 {
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
		if c.sym == noSym {
			return -1, c.entry
		}
		return rank[c.sym], c.entry - x.syms[c.sym].addr
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
		return cmp.Compare(ao, bo)
	})
	nr := 0
	for _, p := range all {
		nr += len(p.src)
	}
	x.copies = make([]copyRec, len(all))
	x.ranges = make([]Range, 0, nr)
	for i, p := range all {
		f := &x.funcs[p.fn]
		if f.n == 0 {
			f.copies = uint32(i)
		}
		f.n++
		p.c.ranges, p.c.n = uint32(len(x.ranges)), uint32(len(p.src))
		x.ranges = append(x.ranges, p.src...)
		x.copies[i] = p.c
	}
	return x, nil
}
