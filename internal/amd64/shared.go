package amd64

import "slices"

// An Exit is a return site of an inline call (see InlineCall).
type exit struct {
	Addr uint64
	// Leaves reports that the site is the instruction that leaves the
	// caller (a ret, a tail call) rather than where an exit arrives.
	Leaves bool
	// Shared reports that control also reaches Addr along paths that
	// run no entry of the call: a join after an if without an else, a
	// common epilogue, the rest of a path that already left the call
	// by another exit. A probe there fires on paths that did not just
	// leave the call, so its exits count it exactly only when its
	// entries mark the thread as inside it, and each exit fires only
	// when so marked.
	Shared bool
}

// reachedAround reports whether instruction v, a site, can be reached
// along a path that runs none of the instructions entries, the call's
// entries, and starts where the function is called, at code the graph
// knows no way into (a jump table's target; not padding), at another
// site, or at v itself: then a probe at v alone would fire on a path
// that did not just leave the call, or twice for one call.
func (f *Function) reachedAround(v int, entries []int, isSite map[int]bool) bool {
	seen := make([]bool, len(f.Blocks))
	var work []int
	// preds pushes the instructions that run just before instruction
	// i, and reports whether i is where control comes from outside.
	preds := func(i int) bool {
		b := f.Blocks[f.blockOf[i]]
		if i > b.first {
			work = append(work, i-1)
			return false
		}
		if b == f.entry || len(b.Preds) == 0 && !padding(b) {
			return true
		}
		for _, p := range b.Preds {
			work = append(work, p.first+len(p.Insts)-1)
		}
		return false
	}
	if slices.Contains(entries, v) || preds(v) {
		return !slices.Contains(entries, v)
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		if slices.Contains(entries, i) {
			continue // the path runs an entry
		}
		if isSite[i] {
			return true // another site, or v again
		}
		b := f.Blocks[f.blockOf[i]]
		if i == b.first+len(b.Insts)-1 {
			// A block is walked back from its end once.
			if seen[b.Index] {
				continue
			}
			seen[b.Index] = true
		}
		if preds(i) {
			return true
		}
	}
	return false
}

// padding reports whether b is all no-operations: the alignment padding
// before a loop head, which control falls into only from where it
// enters it.
func padding(b *block) bool {
	for _, in := range b.Insts {
		if in.Op != nop {
			return false
		}
	}
	return true
}
