package amd64

import "sort"

// A Function is a decoded function and its control-flow graph.
//
// The graph is the usual one: a block is a run of instructions entered
// only at its first and left only at its last. Calls do not end blocks:
// they return. A block ending in ret, a trap, hlt, Data, or a jump that
// leaves the function has no successors. An indirect jump's targets are
// not in the code; they are taken to be the orphan blocks, those that
// nothing else reaches and that do not begin with padding, since the cases
// of a jump table are exactly such blocks. A function without orphans has
// its indirect jumps leave it (tail calls through a pointer).
type Function struct {
	Addr   uint64   // address of the entry, Insts[0]
	Insts  []Inst   // every instruction, in address order, covering the code
	Blocks []*Block // the basic blocks in address order; Blocks[0] is the entry

	code    []byte
	blockOf []int32 // index in Blocks of the block of each instruction
}

// A Block is a basic block of a Function.
type Block struct {
	Index int      // position in Function.Blocks
	Insts []Inst   // a subslice of Function.Insts
	Succs []*Block // successors, each once
	Preds []*Block // predecessors, each once

	first     int    // index in Function.Insts of Insts[0]
	back      []bool // back[i] reports whether the edge to Succs[i] is a back edge
	idom      *Block
	reachable bool // from the entry
	pre, post int  // numbering of the dominator tree, for Dominates
}

// Addr returns the address of the block's first instruction.
func (b *Block) Addr() uint64 { return b.Insts[0].Addr }

// Idom returns the block's immediate dominator, or nil for the entry and
// for blocks that cannot be reached from the entry.
func (b *Block) Idom() *Block { return b.idom }

// Dominates reports whether every path from the function's entry to c
// passes through b. A block dominates itself. Blocks the entry cannot
// reach neither dominate nor are dominated.
func (b *Block) Dominates(c *Block) bool {
	return b.reachable && c.reachable && b.pre <= c.pre && c.post <= b.post
}

// IsBackEdge reports whether the edge from b to its successor s is a back
// edge: one whose target dominates its source, closing a loop.
func (b *Block) IsBackEdge(s *Block) bool {
	for i, t := range b.Succs {
		if t == s {
			return b.back[i]
		}
	}
	return false
}

// NewFunction decodes the code of a function whose entry is at addr and
// builds its control-flow graph.
func NewFunction(code []byte, addr uint64) (*Function, error) {
	insts, err := Decode(code, addr)
	if err != nil {
		return nil, err
	}
	f := &Function{Addr: addr, Insts: insts, code: code}
	f.buildBlocks()
	f.buildEdges()
	f.dominators()
	return f, nil
}

// End returns the address just past the function's last byte.
func (f *Function) End() uint64 { return f.Insts[len(f.Insts)-1].End() }

// contains reports whether addr lies in the function.
func (f *Function) contains(addr uint64) bool { return addr >= f.Addr && addr < f.End() }

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

// Block returns the block holding the instruction that starts at addr.
func (f *Function) Block(addr uint64) (*Block, bool) {
	i, ok := f.instAt(addr)
	if !ok {
		return nil, false
	}
	return f.Blocks[f.blockOf[i]], true
}

func (f *Function) buildBlocks() {
	leader := make([]bool, len(f.Insts)+1)
	leader[0] = true
	for i, in := range f.Insts {
		switch {
		case in.Op == Jump || in.Op == CondJump:
			if j, ok := f.instAt(in.Target); ok {
				leader[j] = true
			}
			leader[i+1] = true
		case in.Op == Data:
			leader[i], leader[i+1] = true, true
		case !in.Op.fallsThrough():
			leader[i+1] = true
		}
	}
	f.blockOf = make([]int32, len(f.Insts))
	for i := 0; i < len(f.Insts); {
		j := i + 1
		for !leader[j] {
			j++
		}
		b := &Block{Index: len(f.Blocks), Insts: f.Insts[i:j:j], first: i}
		for k := i; k < j; k++ {
			f.blockOf[k] = int32(b.Index)
		}
		f.Blocks = append(f.Blocks, b)
		i = j
	}
}

func (f *Function) buildEdges() {
	var indirect []*Block
	for _, b := range f.Blocks {
		last := b.Insts[len(b.Insts)-1]
		if last.Op == Jump || last.Op == CondJump {
			if t, ok := f.Block(last.Target); ok {
				b.addSucc(t)
			}
		}
		if last.Op == IndirectJump {
			indirect = append(indirect, b)
		}
		if last.Op.fallsThrough() && b.Index+1 < len(f.Blocks) {
			b.addSucc(f.Blocks[b.Index+1])
		}
	}
	if len(indirect) > 0 {
		var orphans []*Block
		for _, b := range f.Blocks[1:] {
			if len(b.Preds) == 0 && b.Insts[0].Op != Data && b.Insts[0].Op != Nop && b.Insts[0].Op != Trap {
				orphans = append(orphans, b)
			}
		}
		for _, b := range indirect {
			for _, o := range orphans {
				b.addSucc(o)
			}
		}
	}
}

func (b *Block) addSucc(s *Block) {
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
	order := make([]*Block, 0, n)
	type frame struct {
		b    *Block
		next int
	}
	stack := []frame{{b: f.Blocks[0]}}
	f.Blocks[0].reachable = true
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
	intersect := func(a, b *Block) *Block {
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
			var d *Block
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
	children := make([][]*Block, n)
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

	for _, b := range f.Blocks {
		b.back = make([]bool, len(b.Succs))
		for i, s := range b.Succs {
			b.back[i] = s.Dominates(b)
		}
	}
}
