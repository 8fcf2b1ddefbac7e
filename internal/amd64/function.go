package amd64

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// A Function is a decoded function and its control-flow graph.
//
// The graph is the usual one: a block is a run of instructions entered
// only at its first and left only at its last. Calls do not end blocks:
// they return, except a call to a function the caller says never returns
// (NewFunctionNoReturn). A block ending in ret, a trap, hlt, Data, such a
// call, or a jump that leaves the function has no successors.
//
// An indirect jump's targets are not in the code. They are taken to be
// the orphan blocks: those no direct path from the entry reaches and that
// nothing but padding falls into, since the cases of a jump table are
// exactly such blocks. A function without orphans has its indirect jumps
// leave it (tail calls through a pointer).
//
// A Function does not change once built, so it can serve every inline
// copy in it, from several goroutines.
type Function struct {
	Addr   uint64   // address of the entry
	Insts  []Inst   // every instruction of every part, in address order
	Blocks []*block // the basic blocks, in address order

	parts    []Part // the function itself, then its cold parts
	noReturn func(target uint64) bool
	entry    *block
	blockOf  []int32 // index in Blocks of the block of each instruction

	loopsOnce sync.Once
	nest      *loopNest
}

// A Part is a piece of a function's code. Compilers move the code of
// unlikely paths out of a function into a part of its own, which gcc names
// f.cold; an inline copy can run through both, so ExitSites needs both.
type Part struct {
	Addr uint64
	Code []byte
}

// A Block is a basic block of a Function.
type block struct {
	Index int      // position in Function.Blocks
	Insts []Inst   // a subslice of Function.Insts
	Succs []*block // successors, each once
	Preds []*block // predecessors, each once

	first     int    // index in Function.Insts of Insts[0]
	back      []bool // back[i] reports whether the edge to Succs[i] is a back edge
	idom      *block
	reachable bool // from the entry
	pre, post int  // numbering of the dominator tree, for Dominates
}

// Addr returns the address of the block's first instruction.
func (b *block) Addr() uint64 { return b.Insts[0].Addr }

// Idom returns the block's immediate dominator, or nil for the entry and
// for blocks that cannot be reached from the entry.
func (b *block) Idom() *block { return b.idom }

// Dominates reports whether every path from the function's entry to c
// passes through b. A block dominates itself. Blocks the entry cannot
// reach neither dominate nor are dominated.
func (b *block) Dominates(c *block) bool {
	return b.reachable && c.reachable && b.pre <= c.pre && c.post <= b.post
}

// IsBackEdge reports whether the edge from b to its successor s is a back
// edge: one whose target dominates its source, closing a loop.
func (b *block) IsBackEdge(s *block) bool {
	for i, t := range b.Succs {
		if t == s {
			return b.back[i]
		}
	}
	return false
}

// NewFunction decodes the code of a function whose entry is at addr,
// and of its cold parts if any, and builds its control-flow graph.
func NewFunction(code []byte, addr uint64, cold ...Part) (*Function, error) {
	return NewFunctionNoReturn(code, addr, nil, cold...)
}

// NewFunctionNoReturn is NewFunction for code calling functions that never
// return (a kernel's __stack_chk_fail or panic, a program's abort):
// noReturn says which, by the callee's address. The compiler puts
// unrelated code after such a call, and taking the call to fall through
// into it would invent paths, from after an inline copy back into it, that
// hide the copy's return sites.
func NewFunctionNoReturn(code []byte, addr uint64, noReturn func(target uint64) bool, cold ...Part) (*Function, error) {
	f := &Function{Addr: addr, parts: append([]Part{{addr, code}}, cold...), noReturn: noReturn}
	for _, p := range f.parts {
		insts, err := Decode(p.Code, p.Addr)
		if err != nil {
			return nil, err
		}
		f.Insts = append(f.Insts, insts...)
	}
	slices.SortFunc(f.Insts, func(a, b Inst) int { return cmp.Compare(a.Addr, b.Addr) })
	for i := 1; i < len(f.Insts); i++ {
		if f.Insts[i].Addr < f.Insts[i-1].End() {
			return nil, fmt.Errorf("amd64: parts of the function at %#x overlap at %#x", addr, f.Insts[i].Addr)
		}
	}
	f.buildBlocks()
	f.entry, _ = f.Block(addr)
	f.buildEdges()
	f.dominators()
	return f, nil
}

// Entry returns the block at the function's entry.
func (f *Function) Entry() *block { return f.entry }

// End returns the address just past the function's last byte, not
// counting its cold parts.
func (f *Function) End() uint64 { return f.Addr + uint64(len(f.parts[0].Code)) }

// part returns the part of the function holding addr.
func (f *Function) part(addr uint64) (Part, bool) {
	for _, p := range f.parts {
		if addr >= p.Addr && addr-p.Addr < uint64(len(p.Code)) {
			return p, true
		}
	}
	return Part{}, false
}

// contains reports whether addr lies in the function or its cold parts.
func (f *Function) contains(addr uint64) bool {
	_, ok := f.part(addr)
	return ok
}

// index returns the index of the instruction containing addr, which must
// lie in the function.
func (f *Function) index(addr uint64) int {
	return sort.Search(len(f.Insts), func(i int) bool { return f.Insts[i].End() > addr })
}

// instAt returns the index of the instruction that starts at addr.
func (f *Function) instAt(addr uint64) (int, bool) {
	if !f.contains(addr) {
		return 0, false
	}
	i := f.index(addr)
	return i, f.Insts[i].Addr == addr
}

// landing returns the index of the instruction a branch to addr executes:
// the one starting there, or one whose prefixes the branch skips (see
// lands in decode.go).
func (f *Function) landing(addr uint64) (int, bool) {
	p, ok := f.part(addr)
	if !ok {
		return 0, false
	}
	i := f.index(addr)
	in := f.Insts[i]
	if in.Addr == addr {
		return i, true
	}
	return i, in.Op != Data && skipsPrefix(p.Code, int(in.Addr-p.Addr), int(addr-p.Addr), in.End()-p.Addr)
}

// Block returns the block holding the instruction that starts at addr.
func (f *Function) Block(addr uint64) (*block, bool) {
	i, ok := f.instAt(addr)
	if !ok {
		return nil, false
	}
	return f.Blocks[f.blockOf[i]], true
}

func (f *Function) buildBlocks() {
	leader := make([]bool, len(f.Insts)+1)
	leader[0], leader[len(f.Insts)] = true, true
	for i, in := range f.Insts {
		switch {
		case in.Op == jump || in.Op == condJump:
			if j, ok := f.landing(in.Target); ok {
				leader[j] = true
			}
			leader[i+1] = true
		case in.Op == Data:
			leader[i], leader[i+1] = true, true
		case !f.fallsThrough(in):
			leader[i+1] = true
		}
		if i+1 < len(f.Insts) && in.End() != f.Insts[i+1].Addr {
			leader[i+1] = true // the end of a part
		}
	}
	f.blockOf = make([]int32, len(f.Insts))
	for i := 0; i < len(f.Insts); {
		j := i + 1
		for !leader[j] {
			j++
		}
		b := &block{Index: len(f.Blocks), Insts: f.Insts[i:j:j], first: i}
		for k := i; k < j; k++ {
			f.blockOf[k] = int32(b.Index)
		}
		f.Blocks = append(f.Blocks, b)
		i = j
	}
}

func (f *Function) buildEdges() {
	var indirect []*block
	for _, b := range f.Blocks {
		last := b.Insts[len(b.Insts)-1]
		if last.Op == jump || last.Op == condJump {
			if i, ok := f.landing(last.Target); ok {
				b.addSucc(f.Blocks[f.blockOf[i]])
			}
		}
		if last.Op == indirectJump {
			indirect = append(indirect, b)
		}
		if next := b.Index + 1; f.fallsThrough(last) && next < len(f.Blocks) && last.End() == f.Blocks[next].Addr() {
			b.addSucc(f.Blocks[next])
		}
	}
	if len(indirect) == 0 {
		return
	}
	direct := f.reachable(f.entry)
	var orphans []*block
	for _, b := range f.Blocks {
		if !direct[b.Index] && !b.padding() && !slices.ContainsFunc(b.Preds, func(p *block) bool { return !p.padding() }) {
			orphans = append(orphans, b)
		}
	}
	for _, b := range indirect {
		for _, o := range orphans {
			b.addSucc(o)
		}
	}
}

// fallsThrough reports whether execution may go on after in to the next
// instruction.
func (f *Function) fallsThrough(in Inst) bool {
	if in.Op == Call && f.noReturn != nil && f.noReturn(in.Target) {
		return false
	}
	return in.Op.fallsThrough()
}

// padding reports whether b is all alignment padding, or not code.
func (b *block) padding() bool {
	for _, in := range b.Insts {
		switch in.Op {
		case nop, Trap, Data:
		default:
			return false
		}
	}
	return true
}

func (b *block) addSucc(s *block) {
	for _, t := range b.Succs {
		if t == s {
			return
		}
	}
	b.Succs = append(b.Succs, s)
	s.Preds = append(s.Preds, b)
}

// dominators computes the dominator tree with the iterative algorithm of
// Cooper, Harvey and Kennedy ("A Simple, Fast Dominance Algorithm"), then
// numbers the tree so that Dominates is two comparisons, and marks the
// back edges.
func (f *Function) dominators() {
	// Reverse postorder of the blocks reachable from the entry, without
	// recursion: functions can be long enough to make recursion deep.
	n := len(f.Blocks)
	rpo := make([]int, n) // position of each block in order
	order := make([]*block, 0, n)
	type frame struct {
		b    *block
		next int
	}
	stack := []frame{{b: f.entry}}
	f.entry.reachable = true
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(top.b.Succs) {
			s := top.b.Succs[top.next]
			top.next++
			if !s.reachable {
				s.reachable = true
				stack = append(stack, frame{b: s})
			}
			continue
		}
		order = append(order, top.b)
		stack = stack[:len(stack)-1]
	}
	for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
		order[i], order[j] = order[j], order[i]
	}
	for i, b := range order {
		rpo[b.Index] = i
	}

	entry := order[0]
	entry.idom = entry
	intersect := func(a, b *block) *block {
		for a != b {
			for rpo[a.Index] > rpo[b.Index] {
				a = a.idom
			}
			for rpo[b.Index] > rpo[a.Index] {
				b = b.idom
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for _, b := range order[1:] {
			var d *block
			for _, p := range b.Preds {
				if p.idom == nil {
					continue // not yet processed, or unreachable
				}
				if d == nil {
					d = p
				} else {
					d = intersect(p, d)
				}
			}
			if b.idom != d {
				b.idom, changed = d, true
			}
		}
	}
	entry.idom = nil

	// Number the dominator tree in preorder and postorder.
	children := make([][]*block, n)
	for _, b := range order[1:] {
		children[b.idom.Index] = append(children[b.idom.Index], b)
	}
	clock := 0
	tstack := []frame{{b: entry}}
	entry.pre = clock
	for len(tstack) > 0 {
		top := &tstack[len(tstack)-1]
		if kids := children[top.b.Index]; top.next < len(kids) {
			c := kids[top.next]
			top.next++
			clock++
			c.pre = clock
			tstack = append(tstack, frame{b: c})
			continue
		}
		clock++
		top.b.post = clock
		tstack = tstack[:len(tstack)-1]
	}

	// A back edge closes a loop: its target dominates its source. A loop
	// with several entries (irreducible; gcc makes them by jumping into
	// a rotated loop) has no such edge, so its retreating edges, to an
	// earlier block in the depth-first order, count as back edges too:
	// every cycle then has one, and the two are the same edges when
	// every loop has a single entry.
	for _, b := range f.Blocks {
		b.back = make([]bool, len(b.Succs))
		for i, s := range b.Succs {
			b.back[i] = s.Dominates(b) || b.reachable && s.reachable && rpo[s.Index] <= rpo[b.Index]
		}
	}
}
