package amd64

import (
	"fmt"
	"slices"
)

// dropRedundant removes the sites from which control runs straight, with
// no branch, onto another site: the return value's register move before
// the jump to the join point, for instance. On such a path the rule alone
// would fire twice; the later site fires on it anyway, and on the paths
// that reach the later site directly.
func (f *Function) dropRedundant(sites []uint64, in []bool) []uint64 {
	isSite := make(map[int]bool, len(sites))
	for _, a := range sites {
		i, _ := f.instAt(a)
		isSite[i] = true
	}
	return slices.DeleteFunc(slices.Clone(sites), func(a uint64) bool {
		i, _ := f.instAt(a)
		if in[i] {
			return false // leaves the function
		}
		seen := make(map[int]bool)
		for !seen[i] {
			seen[i] = true
			b := f.Blocks[f.blockOf[i]]
			if i+1 < b.first+len(b.Insts) {
				i++
			} else if len(b.Succs) == 1 && !f.leaves(b, f.Insts[i]) {
				i = b.Succs[0].first
			} else {
				return false
			}
			if isSite[i] {
				return true
			}
			if in[i] {
				return false
			}
		}
		return false
	})
}

// leaves reports whether u, the last instruction of b, can leave the
// function: a return, a direct jump outside it (a tail call, or a jump to
// a return or retpoline thunk), or an indirect jump with no known target
// inside it.
func (f *Function) leaves(b *block, u Inst) bool {
	switch u.Op {
	case Ret:
		return true
	case jump, condJump:
		return !f.contains(u.Target)
	case indirectJump:
		return len(b.Succs) == 0
	}
	return false
}

// copyMask checks the ranges of a copy and returns which instructions of
// f lie in them.
func (f *Function) copyMask(copy []Range) ([]bool, error) {
	in := make([]bool, len(f.Insts))
	for _, r := range copy {
		if r.Lo >= r.Hi {
			continue // DWARF producers emit empty ranges
		}
		lo, hi, err := f.rangeInsts(r)
		if err != nil {
			return nil, err
		}
		for i := lo; i < hi; i++ {
			in[i] = true
		}
	}
	return in, nil
}

// rangeInsts returns the indices [lo, hi) of the instructions in r, which
// must lie in one part of the function and begin and end on instruction
// boundaries.
func (f *Function) rangeInsts(r Range) (lo, hi int, err error) {
	p, ok := f.part(r.Lo)
	if !ok || r.Hi-p.Addr > uint64(len(p.Code)) {
		return 0, 0, fmt.Errorf("amd64: range %v is not inside the function at %#x or a part of it", r, f.Addr)
	}
	if lo, ok = f.instAt(r.Lo); !ok {
		return 0, 0, fmt.Errorf("amd64: range %v: %#x is not an instruction boundary", r, r.Lo)
	}
	if r.Hi-p.Addr == uint64(len(p.Code)) {
		return lo, f.index(r.Hi-1) + 1, nil
	}
	if hi, ok = f.instAt(r.Hi); !ok {
		return 0, 0, fmt.Errorf("amd64: range %v: %#x is not an instruction boundary", r, r.Hi)
	}
	return lo, hi, nil
}

// CompatExitSites returns the return sites that FreeBSD's dtrace computes
// for one inline copy, for -x kinstcompat: one per range, in the order of
// copy. When the range ends at the end of the function (or of the cold
// part that holds it) or is the last range, the site is the last
// instruction inside the range; otherwise it is the first instruction
// after it, r.Hi. Duplicates are kept, as the reference keeps them.
//
// The reference walks instruction lengths from r.Lo and runs past r.Hi if
// no instruction ends there; here that is an error.
func (f *Function) CompatExitSites(copy []Range) ([]uint64, error) {
	sites := make([]uint64, 0, len(copy))
	for k, r := range copy {
		p, ok := f.part(r.Lo)
		if !ok || r.Hi < r.Lo || r.Hi-p.Addr > uint64(len(p.Code)) {
			return nil, fmt.Errorf("amd64: range %v is not inside the function at %#x or a part of it", r, f.Addr)
		}
		if r.Hi-p.Addr != uint64(len(p.Code)) && k != len(copy)-1 {
			sites = append(sites, r.Hi)
			continue
		}
		last := f.Insts[f.index(r.Hi-1)]
		if r.Hi == r.Lo || last.End() != r.Hi || last.Addr < r.Lo {
			return nil, fmt.Errorf("amd64: range %v: no instruction ends at %#x", r, r.Hi)
		}
		sites = append(sites, last.Addr)
	}
	return sites, nil
}
