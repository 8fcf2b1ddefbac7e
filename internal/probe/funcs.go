package probe

import (
	"math/bits"
)

// A funcList is the names of the functions of one kernel image or
// module, in the order of their source (BTF IDs, symbol table), without
// duplicates, with a hash index for exact lookups. The names live in one
// string, so a list of 56,000 functions costs three allocations.
type funcList struct {
	module string
	file   string // the ELF file listed, if any
	strs   string // the names, back to back
	spans  []span // each name's place in strs, in order
	table  []slot // open addressing; a zero slot is empty
	mask   uint32
	// syms holds each function's address and size where the source
	// gives them (an ELF symbol table, kallsyms), else nil.
	syms []symRange
}

type span struct{ off, len uint32 }

// A slot holds a name's hash and its index plus one.
type slot struct{ hash, ref uint32 }

func (l *funcList) len() int { return len(l.spans) }

func (l *funcList) name(i int) string {
	s := l.spans[i]
	return l.strs[s.off : s.off+s.len]
}

// lookup returns the index of the function called name.
func (l *funcList) lookup(name string) (int, bool) {
	if len(l.table) == 0 {
		return 0, false
	}
	h := hashString(name)
	for i := h & l.mask; ; i = (i + 1) & l.mask {
		e := l.table[i]
		if e.ref == 0 {
			return 0, false
		}
		if e.hash == h && l.name(int(e.ref-1)) == name {
			return int(e.ref - 1), true
		}
	}
}

// A funcListBuilder collects names and then indexes them: in buf, or
// in strs when the names are already in one string.
type funcListBuilder struct {
	strs  string
	buf   []byte
	spans []span
	syms  []symRange
}

func (b *funcListBuilder) add(name []byte) {
	b.spans = append(b.spans, span{uint32(len(b.buf)), uint32(len(name))})
	b.buf = append(b.buf, name...)
}

func (b *funcListBuilder) addSym(name []byte, r symRange) {
	b.add(name)
	b.syms = append(b.syms, r)
}

// build indexes the names, dropping any name seen before: the first
// function of a name stands for all.
func (b *funcListBuilder) build(module string) *funcList {
	l := &funcList{module: module, strs: b.strs}
	if b.buf != nil {
		l.strs = string(b.buf)
	}
	n := 1 << bits.Len(uint(2*len(b.spans)))
	l.table = make([]slot, n)
	l.mask = uint32(n - 1)
	keep := b.spans[:0]
	var syms []symRange
	if b.syms != nil {
		syms = b.syms[:0]
	}
	for j, s := range b.spans {
		name := l.strs[s.off : s.off+s.len]
		h := hashString(name)
		i := h & l.mask
		dup := false
		for ; l.table[i].ref != 0; i = (i + 1) & l.mask {
			if e := l.table[i]; e.hash == h {
				if o := keep[e.ref-1]; l.strs[o.off:o.off+o.len] == name {
					dup = true
					break
				}
			}
		}
		if dup {
			continue
		}
		keep = append(keep, s)
		l.table[i] = slot{h, uint32(len(keep))}
		if syms != nil {
			syms = append(syms, b.syms[j])
		}
	}
	l.spans = keep
	l.syms = syms
	return l
}

// hashString is the name tables' hash, FNV-1a: the kernel's table is
// kept in the cache, so it must hash alike in every process, which rules
// out maphash's random seeds.
func hashString(s string) uint32 {
	h := uint32(2166136261)
	for i := range len(s) {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// A symRange is where a function's code is: its address and size in
// bytes (0 when unknown), and for an ELF file, where the code is in it.
type symRange struct{ addr, size, off uint64 }
