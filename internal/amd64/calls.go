package amd64

import (
	"fmt"
	"slices"
)

// How an InlineCall's entry was found.
const (
	// ByMarker: the compiler's own record of where the call begins
	// (GCC's inline entry markers, one per duplicate of the call).
	ByMarker = "entry marker"
	// ByEdge: a control-flow edge into the copy's code from code that
	// no earlier part of the copy leads to (or a loop back edge).
	byEdge = "entry edge"
)

// An InlineCall is one place where calls of an inline function begin, with the
// code of the function's copies that runs for such a call before the
// next one can begin.
type InlineCall struct {
	Entry uint64 // where the call begins: its entry probe's site
	// Also are the call's other entries, where control enters the
	// same copy on other paths (ByEdge only).
	Also []uint64
	// Repeat are the entries, of Entry and Also, that a path from
	// another entry of the call reaches: there the call may already
	// be in progress, and the entry counts only when it is not.
	Repeat []uint64
	Rule   string // ByMarker or ByEdge
	// Body is the copies' code that belongs to the call, as ranges of
	// whole instructions; it is empty when the call has no code of its
	// own (folded into its caller's), and then the call ends where it
	// begins.
	Body []Range
	// Exits are the call's return sites: where control leaves, for
	// good, the code that can still reach the body from the entry
	// without passing another entry (see InlineCalls). They are nil
	// when Body is empty.
	Exits []exit
	// Recursive reports that the caller calls itself while the call
	// is in progress: a mark per thread that the call is in progress
	// is then shared by the caller's frames.
	Recursive bool
}

// A Doubt is a place where the calls InlineCalls finds may not be the
// program's: one execution there may stand for several calls, or
// for none.
type Doubt struct {
	Addr uint64
	Why  string
}

func (d Doubt) String() string { return fmt.Sprintf("%#x: %s", d.Addr, d.Why) }

// InlineCalls divides the code of a function's inline copies in f, the
// ranges code (all copies of the function in f together), into calls.
// Folded are the addresses where the copies' debug information says
// code of theirs was folded into the caller's (empty ranges).
//
// Each call begins at an entry. With marks, the compiler's entry
// markers, those are the entries; without, an entry is an instruction
// of the copies that control reaches from outside them along an edge
// that is a loop back edge, or whose source no instruction of the
// copies leads to along forward edges (the first instruction of the
// copies on each path into them).
//
// A call's body is the copies' code that the forward edges reach from
// its entry before another entry, within the loop of the caller that
// holds the entry: a call in a loop's body ends with the iteration, and
// the code the compiler hoisted out of the loop before it or sank after
// it is not any one iteration's. Loops whose every instruction is the
// copies' are the inline function's own and do not end a call.
//
// The doubts are the shapes where these calls may not be the
// program's: code of the copies in a loop of the caller that holds no
// entry while a call outside the loop reaches it (the loop's calls have
// no entry of their own and count as one); a loop without entries where
// the debug information says code of a call was folded away; code of
// the copies that no entry leads to inside a loop that holds entries (a
// call begun, or ended, across the loop's back edge); and an entry
// inside the inline function's own loop (it would fire on every
// iteration).
func (f *Function) InlineCalls(code []Range, folded, marks []uint64) ([]InlineCall, []Doubt, error) {
	in, err := f.copyMask(code)
	if err != nil {
		return nil, nil, err
	}
	lp := f.loops()
	own := make([]bool, len(lp.loops))
	for k, l := range lp.loops {
		own[k] = true
		for _, b := range l.blocks {
			if slices.Contains(in[b.first:b.first+len(b.Insts)], false) {
				own[k] = false
				break
			}
		}
	}
	// scope returns the innermost loop of the caller holding block b,
	// or -1 for none.
	scope := func(b *block) int {
		for k := lp.inner[b.Index]; k >= 0; k = lp.loops[k].parent {
			if !own[k] {
				return k
			}
		}
		return -1
	}
	inLoop := func(k int, b *block) bool {
		return k < 0 || lp.loops[k].member[b.Index]
	}
	// ownBack reports whether a back edge to h closes one of the
	// inline function's own loops.
	ownBack := func(h *block) bool {
		for k, l := range lp.loops {
			if l.head == h {
				return own[k]
			}
		}
		return false
	}

	var doubts []Doubt
	rule := ByMarker
	var entries []int
	if marks != nil {
		for _, a := range marks {
			i, ok := f.instAt(a)
			if !ok {
				doubts = append(doubts, Doubt{a, "the compiler's entry marker is not at an instruction of the caller"})
				continue
			}
			entries = append(entries, i)
		}
	} else {
		rule = byEdge
		entries = f.entryEdges(in)
	}
	isEntry := make(map[int]bool, len(entries))
	for _, e := range entries {
		isEntry[e] = true
	}

	// walk returns what the forward edges reach from entry e within
	// loop k: every instruction, stopping at the other entries when
	// they begin calls of their own (markers), and the body among them.
	walk := func(e, k int) (reached, body []bool, deeper int) {
		reached = make([]bool, len(f.Insts))
		body = make([]bool, len(f.Insts))
		deeper = -1 // an instruction of the body in a loop below k
		// The walk leaves loop k only where the copy's own code does
		// (an early exit, a call that does not return): the loop's
		// exit from the caller's code leads to code of no iteration.
		seen := make([]bool, len(f.Blocks))
		for work := []int{e}; len(work) > 0; {
			i := work[len(work)-1]
			work = work[:len(work)-1]
			for {
				if i != e && isEntry[i] && rule == ByMarker {
					break
				}
				reached[i] = true
				b := f.Blocks[f.blockOf[i]]
				if in[i] {
					body[i] = true
					if deeper < 0 && inLoop(k, b) && scope(b) != k {
						deeper = i
					}
				}
				if i+1 < b.first+len(b.Insts) {
					i++
					continue
				}
				for x, s := range b.Succs {
					if !b.back[x] && !seen[s.Index] && (inLoop(k, s) || in[i] || !inLoop(k, b)) {
						seen[s.Index] = true
						work = append(work, s.first)
					}
				}
				break
			}
		}
		return reached, body, deeper
	}

	// Entries found by edges that lead to one another begin one call:
	// the copy is entered at several points of one path (tail merging
	// jumps into its middle). Each is then its own site, and those
	// another reaches fire only when no call is in progress.
	type group struct {
		entries []int
		repeat  []int
		k       int
		reached []bool
		body    []bool
		deeper  int
	}
	var groups []*group
	of := make(map[int]*group, len(entries))
	reaches := make(map[int][]bool, len(entries))
	for _, e := range entries {
		k := scope(f.Blocks[f.blockOf[e]])
		reached, body, deeper := walk(e, k)
		reaches[e] = reached
		g := &group{entries: []int{e}, k: k, reached: reached, body: body, deeper: deeper}
		groups = append(groups, g)
		of[e] = g
	}
	if rule == byEdge {
		for _, e := range entries {
			for _, e2 := range entries {
				if e2 == e || !reaches[e][e2] {
					continue
				}
				g, g2 := of[e], of[e2]
				if !slices.Contains(g.repeat, e2) {
					g.repeat = append(g.repeat, e2)
				}
				if g == g2 {
					continue
				}
				g.entries = append(g.entries, g2.entries...)
				g.repeat = append(g.repeat, g2.repeat...)
				for i, ok := range g2.body {
					g.body[i] = g.body[i] || ok
					g.reached[i] = g.reached[i] || g2.reached[i]
				}
				if g.deeper < 0 {
					g.deeper = g2.deeper
				}
				for _, x := range g2.entries {
					of[x] = g
				}
				groups = slices.DeleteFunc(groups, func(h *group) bool { return h == g2 })
			}
		}
	}

	covered := make([]bool, len(f.Insts))
	calls := make([]InlineCall, 0, len(groups))
	for _, g := range groups {
		slices.Sort(g.entries)
		// The call's first entry is one no other reaches, if any.
		head := g.entries[0]
		for _, e := range g.entries {
			if !slices.Contains(g.repeat, e) {
				head = e
				break
			}
		}
		for _, e := range g.entries {
			eb := f.Blocks[f.blockOf[e]]
			if k := lp.inner[eb.Index]; k >= 0 && own[k] {
				doubts = append(doubts, Doubt{f.Insts[e].Addr, "the call's entry is inside the inline function's own loop, so it fires on each of its iterations"})
			}
			if rule == ByMarker && g.k >= 0 && f.latchExit(eb, g.k, inLoop) {
				doubts = append(doubts, Doubt{f.Insts[e].Addr, "the call's entry marker is in the loop's latch, before its test: the compiler may have put the next iteration's call there, counted even when the loop ends"})
			}
			if !in[e] && f.leavesBare(e, g.k, in, isEntry, inLoop) {
				doubts = append(doubts, Doubt{f.Insts[e].Addr, "the call's entry is also on a path that leaves without running any of its code (the compiler put it before a branch), so it may count calls that were not made"})
			}
		}
		if rule == byEdge {
			if i := f.reentered(g.reached, g.body, g.entries); i >= 0 {
				doubts = append(doubts, Doubt{f.Insts[i].Addr, "the copy's code comes back after the caller's on one path: without the compiler's entry markers, several calls in a row (an unrolled loop) count as one"})
			}
		}
		if g.deeper >= 0 {
			doubts = append(doubts, Doubt{f.Insts[g.deeper].Addr, fmt.Sprintf("code of the copy in a loop of the caller that holds no entry of the call begun at %#x: the loop's calls count as one", f.Insts[head].Addr)})
		}
		for i, ok := range g.body {
			covered[i] = covered[i] || ok
		}
		c := InlineCall{Entry: f.Insts[head].Addr, Rule: rule, Body: f.ranges(g.body)}
		for _, e := range g.entries {
			if e != head {
				c.Also = append(c.Also, f.Insts[e].Addr)
			}
		}
		for _, e := range g.repeat {
			c.Repeat = append(c.Repeat, f.Insts[e].Addr)
		}
		// Code jumped into in its middle may be shared with code that
		// is no call (tail merging): nothing in the code tells them
		// apart.
		for _, e := range g.entries {
			if rule == byEdge && (slices.Contains(g.repeat, e) || e > 0 && in[e-1] && f.Insts[e-1].End() == f.Insts[e].Addr) {
				doubts = append(doubts, Doubt{f.Insts[e].Addr, "the caller's code jumps into the middle of the copy's, which the compiler may share with code that is no call of it (tail merging): runs entered there count as calls"})
				break
			}
		}
		slices.Sort(c.Repeat)
		if len(c.Body) > 0 {
			c.Exits, c.Recursive = f.callExits(g.entries, g.reached, g.body, isEntry, ownBack)
		}
		calls = append(calls, c)
	}

	// Code of the copies that no entry leads to is code hoisted out of
	// the loops holding entries, or sunk after them, unless it lies in
	// one of those loops itself.
	withEntry := make([]bool, len(lp.loops))
	for _, e := range entries {
		for k := scope(f.Blocks[f.blockOf[e]]); k >= 0; k = lp.loops[k].parent {
			withEntry[k] = true
		}
	}
	for _, a := range folded {
		if !f.contains(a) {
			continue
		}
		k := scope(f.Blocks[f.blockOf[f.index(a)]])
		if k >= 0 && !withEntry[k] {
			doubts = append(doubts, Doubt{a, "calls in this loop had their code folded into the caller's, leaving them no entry"})
			break
		}
	}
	for i := range f.Insts {
		if !in[i] || covered[i] {
			continue
		}
		k := scope(f.Blocks[f.blockOf[i]])
		if k >= 0 && withEntry[k] {
			doubts = append(doubts, Doubt{f.Insts[i].Addr, "code of the copy that no entry of a call leads to, in a loop of the caller that holds entries: a call that begins or ends across the loop's back edge"})
			break
		}
	}
	return calls, doubts, nil
}

// callExits returns the return sites of the call that begins at the
// instructions entries, with the given body, the walk from them having
// reached the instructions reached (within its loop, which it leaves
// only where the copy's code does). The call is in progress on those
// from which a path reaches the body without passing another call's
// entry or a back edge; it ends on each edge out of them, on each back
// edge from them but those of the inline function's own loops, and
// where one of them leaves the function (the site is then that
// instruction). A site that runs straight on to another is dropped,
// and each says whether paths that did not run an entry reach it.
// recursive reports that the caller calls itself while the call is in
// progress.
func (f *Function) callExits(entries []int, reached, body []bool, isEntry map[int]bool, ownBack func(h *block) bool) (exits []exit, recursive bool) {
	// reach[i]: the body can be reached from instruction i. Computed
	// block by block, backwards, until nothing changes.
	reach := make([]bool, len(f.Insts))
	blocked := func(i int) bool { return isEntry[i] && !slices.Contains(entries, i) }
	for changed := true; changed; {
		changed = false
		for bi := len(f.Blocks) - 1; bi >= 0; bi-- {
			b := f.Blocks[bi]
			last := b.first + len(b.Insts) - 1
			next := false
			for x, s := range b.Succs {
				if !b.back[x] && !blocked(s.first) && reach[s.first] {
					next = true
				}
			}
			for i := last; i >= b.first; i-- {
				r := body[i] || next
				if blocked(i) || !reached[i] {
					r = false
				}
				if r && !reach[i] {
					reach[i], changed = true, true
				}
				next = r
			}
		}
	}
	var sites []uint64
	for i, u := range f.Insts {
		if !reach[i] {
			continue
		}
		b := f.Blocks[f.blockOf[i]]
		if i+1 < b.first+len(b.Insts) {
			if !reach[i+1] {
				sites = append(sites, f.Insts[i+1].Addr)
			}
			continue
		}
		if f.leaves(b, u) {
			sites = append(sites, u.Addr)
		}
		for x, s := range b.Succs {
			switch {
			case b.back[x] && ownBack(s):
				// The inline function's own loop goes on.
			case b.back[x] || !reach[s.first]:
				sites = append(sites, s.Addr())
			}
		}
	}
	slices.Sort(sites)
	sites = f.dropRedundant(slices.Compact(sites), reach)
	isSite := make(map[int]bool, len(sites))
	for _, a := range sites {
		i, _ := f.instAt(a)
		isSite[i] = true
	}
	exits = make([]exit, len(sites))
	for n, a := range sites {
		i, _ := f.instAt(a)
		exits[n] = exit{Addr: a, Leaves: reach[i], Shared: f.reachedAround(i, entries, isSite)}
	}
	for i, in := range f.Insts {
		if reach[i] && in.Op == Call && in.Target == f.Addr {
			recursive = true
		}
	}
	return exits, recursive
}

// reentered returns an instruction of body that a path from the body
// reaches again through other instructions the walk reached, or -1:
// the body split by the caller's code on one path.
func (f *Function) reentered(reached, body []bool, entries []int) int {
	for i := range f.Insts {
		if !body[i] || slices.Contains(entries, i) {
			continue
		}
		b := f.Blocks[f.blockOf[i]]
		if i > b.first {
			if reached[i-1] && !body[i-1] {
				return i
			}
			continue
		}
		for _, p := range b.Preds {
			u := p.first + len(p.Insts) - 1
			if reached[u] && !body[u] && !p.IsBackEdge(b) {
				return i
			}
		}
	}
	return -1
}

// latchExit reports whether block b closes loop k by a back edge and
// can leave it too: the loop's test after rotation.
func (f *Function) latchExit(b *block, k int, inLoop func(int, *block) bool) bool {
	back, out := false, false
	for x, s := range b.Succs {
		back = back || b.back[x] && inLoop(k, s)
		out = out || !inLoop(k, s)
	}
	return back && out
}

// leavesBare reports whether a path from instruction e, the entry of
// a call outside the copies' code, leaves the loop k that holds it (by
// its back edge, or out of it), or the function, before it runs an
// instruction of the copies or reaches another entry.
func (f *Function) leavesBare(e, k int, in []bool, isEntry map[int]bool, inLoop func(int, *block) bool) bool {
	seen := make([]bool, len(f.Blocks))
	for work := []int{e}; len(work) > 0; {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		for {
			if in[i] || i != e && isEntry[i] {
				break
			}
			b := f.Blocks[f.blockOf[i]]
			if i+1 < b.first+len(b.Insts) {
				i++
				continue
			}
			if f.leaves(b, f.Insts[i]) {
				return true
			}
			for x, s := range b.Succs {
				if b.back[x] || !inLoop(k, s) {
					return true
				}
				if !seen[s.Index] {
					seen[s.Index] = true
					work = append(work, s.first)
				}
			}
			if len(b.Succs) == 0 {
				return true
			}
			break
		}
	}
	return false
}

// entryEdges returns the instructions of the copy in that control
// enters along an edge from outside it: the function's entry, or an
// edge that is a back edge or whose source no instruction of the copy
// leads to along forward edges.
func (f *Function) entryEdges(in []bool) []int {
	// from[b]: some instruction of the copy leads along forward edges
	// to the start of block b.
	from := make([]bool, len(f.Blocks))
	var work []*block
	for _, b := range f.Blocks {
		if slices.Contains(in[b.first:b.first+len(b.Insts)], true) {
			work = append(work, b)
		}
	}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		for x, s := range b.Succs {
			if !b.back[x] && !from[s.Index] {
				from[s.Index] = true
				work = append(work, s)
			}
		}
	}
	// led reports whether the copy leads to instruction i.
	led := func(i int) bool {
		b := f.Blocks[f.blockOf[i]]
		return from[b.Index] || slices.Contains(in[b.first:i], true)
	}
	var entries []int
	for i := range f.Insts {
		if !in[i] {
			continue
		}
		b := f.Blocks[f.blockOf[i]]
		if i > b.first {
			if !in[i-1] && !led(i-1) {
				entries = append(entries, i)
			}
			continue
		}
		if b == f.entry {
			entries = append(entries, i)
			continue
		}
		for _, p := range b.Preds {
			u := p.first + len(p.Insts) - 1
			if !in[u] && (p.IsBackEdge(b) || !led(u)) {
				entries = append(entries, i)
				break
			}
		}
	}
	return entries
}

// ranges turns a mask of instructions into address ranges, one per run
// of adjacent instructions.
func (f *Function) ranges(mask []bool) []Range {
	var rs []Range
	for i, ok := range mask {
		if !ok {
			continue
		}
		in := f.Insts[i]
		if n := len(rs); n > 0 && rs[n-1].Hi == in.Addr {
			rs[n-1].Hi = in.End()
			continue
		}
		rs = append(rs, Range{in.Addr, in.End()})
	}
	return rs
}

// loopNest is a function's natural loops: one per loop head, holding
// the blocks that reach one of its back edges without passing the head.
type loopNest struct {
	loops []loop
	inner []int // innermost loop of each block; -1 for none
}

type loop struct {
	head   *block
	blocks []*block
	member []bool // by block index
	parent int    // the innermost loop holding this one; -1 for none

	fromHead []bool // the blocks any path from head reaches, while building
}

// loops returns f's loop nest, computed on first use: only functions
// holding inline copies need it.
func (f *Function) loops() *loopNest {
	f.loopsOnce.Do(func() { f.nest = f.buildLoops() })
	return f.nest
}

func (f *Function) buildLoops() *loopNest {
	n := len(f.Blocks)
	byHead := map[*block]int{}
	var loops []loop
	for _, u := range f.Blocks {
		for x, h := range u.Succs {
			if !u.back[x] {
				continue
			}
			k, ok := byHead[h]
			if !ok {
				k = len(loops)
				byHead[h] = k
				loops = append(loops, loop{head: h, member: make([]bool, n), parent: -1})
				loops[k].member[h.Index] = true
			}
			l := &loops[k]
			// Walk back from the latch without passing the head. Where
			// the head does not dominate the latch (a loop entered in
			// its middle), keep to blocks the head leads back to.
			if l.fromHead == nil {
				l.fromHead = f.reachable(h)
			}
			work := []*block{u}
			for len(work) > 0 {
				b := work[len(work)-1]
				work = work[:len(work)-1]
				if l.member[b.Index] || !h.Dominates(b) && !l.fromHead[b.Index] {
					continue
				}
				l.member[b.Index] = true
				work = append(work, b.Preds...)
			}
		}
	}
	for k := range loops {
		loops[k].fromHead = nil
		for _, b := range f.Blocks {
			if loops[k].member[b.Index] {
				loops[k].blocks = append(loops[k].blocks, b)
			}
		}
	}
	// The parent of a loop is the smallest other loop holding its head.
	for k := range loops {
		for j := range loops {
			if j == k || !loops[j].member[loops[k].head.Index] || len(loops[j].blocks) < len(loops[k].blocks) {
				continue
			}
			if len(loops[j].blocks) == len(loops[k].blocks) && j > k {
				continue // two heads of one irreducible cycle: order them
			}
			if p := loops[k].parent; p < 0 || len(loops[j].blocks) < len(loops[p].blocks) {
				loops[k].parent = j
			}
		}
	}
	inner := make([]int, n)
	for i := range inner {
		inner[i] = -1
		for k := range loops {
			if loops[k].member[i] && (inner[i] < 0 || len(loops[k].blocks) < len(loops[inner[i]].blocks)) {
				inner[i] = k
			}
		}
	}
	return &loopNest{loops: loops, inner: inner}
}

// reachable returns the blocks that some path from a reaches, back
// edges included.
func (f *Function) reachable(a *block) []bool {
	seen := make([]bool, len(f.Blocks))
	work := []*block{a}
	seen[a.Index] = true
	for len(work) > 0 {
		c := work[len(work)-1]
		work = work[:len(work)-1]
		for _, s := range c.Succs {
			if !seen[s.Index] {
				seen[s.Index] = true
				work = append(work, s)
			}
		}
	}
	return seen
}
