package ksym

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
)

// KernelModule is the module of the kernel's own symbols, as Linux's
// BTF and kallsyms name it.
const KernelModule = "vmlinux"

// The errors of lookups, worded as dtrace's EDT_NOSYM and EDT_NOMOD so
// that D's messages read as dtrace's.
var (
	ErrUnknownSymbol = errors.New("Unknown symbol name")
	errUnknownModule = errors.New("Unknown module name")
)

// Symbol is one symbol of a kernel or module.
type Symbol struct {
	Name   string
	Module string // KernelModule, or the module's name
	Addr   uint64 // 0 when the table's reader may not see addresses
	// Size is the symbol's size in bytes: the ELF symbol's, or for
	// kallsyms the distance to the next symbol of the module (Padded);
	// 0 when there is no next symbol.
	Size uint64
	// Padded says that Size runs to the next symbol, so that a
	// function's code may end in alignment padding.
	Padded bool
	Func   bool // a function (text), not data
	// PerCPU marks a per-CPU variable (an image's symbol in section
	// .data..percpu): its address is an offset into each CPU's area.
	PerCPU bool
}

// Table is a kernel's symbol table, indexed by name. It may be used from
// several goroutines.
type Table struct {
	source string // the file read, for messages
	hint   string // what a missing symbol may mean, for messages
	ents   []entry
	mods   []string // by index; the kernel's first
	sized  bool     // ents carry sizes (ELF)
	zero   bool     // every address is zero: hidden from the reader
	// perCPU is the kernel's per-CPU section, [__per_cpu_start,
	// __per_cpu_end), where the table lists those symbols.
	perCPU [2]uint64

	// text reads the code at an address; nil when the table has none.
	text func(addr, size uint64) ([]byte, error)

	mu      sync.Mutex
	lookups int                // scans so far
	byName  map[string][]int32 // the entries of each name, once indexed
	bySize  []int32            // entries sorted by module and address, on demand
}

type entry struct {
	name   string
	addr   uint64
	size   uint64
	mod    uint16
	fn     bool
	perCPU bool
}

// builder collects a table's entries.
type builder struct {
	t      Table
	modIdx map[string]uint16
}

func newBuilder(n int) *builder {
	b := &builder{modIdx: map[string]uint16{KernelModule: 0}}
	b.t.mods = []string{KernelModule}
	b.t.ents = make([]entry, 0, n)
	return b
}

func (b *builder) module(name string) (uint16, error) {
	if i, ok := b.modIdx[name]; ok {
		return i, nil
	}
	if len(b.t.mods) > 0xffff {
		return 0, fmt.Errorf("more than %d modules", 0xffff)
	}
	i := uint16(len(b.t.mods))
	b.modIdx[name] = i
	b.t.mods = append(b.t.mods, name)
	return i, nil
}

func (b *builder) add(e entry) { b.t.ents = append(b.t.ents, e) }

// build finishes the table. The names are indexed only once lookups
// are many: a scan of the entries finds one name in well under a
// millisecond, and most programs name a few symbols.
func (b *builder) build() *Table {
	t := &b.t
	zero := true
	for i := range t.ents {
		e := &t.ents[i]
		zero = zero && e.addr == 0
		if e.mod == 0 && !e.fn {
			switch e.name {
			case "__per_cpu_start":
				t.perCPU[0] = e.addr
			case "__per_cpu_end":
				t.perCPU[1] = e.addr
			}
		}
	}
	t.zero = zero && len(t.ents) > 0
	return t
}

// inPerCPU reports whether data symbol s of the kernel lies in its
// per-CPU section, which kallsyms shows only with CONFIG_KALLSYMS_ALL.
func (t *Table) inPerCPU(s Symbol) bool {
	return !s.Func && s.Module == KernelModule && t.perCPU[0] < t.perCPU[1] &&
		s.Addr >= t.perCPU[0] && s.Addr < t.perCPU[1]
}

// scanLookups is how many lookups scan the entries before Lookup
// indexes them by name.
const scanLookups = 16

// find returns the entries called name, in the table's order.
func (t *Table) find(name string) []int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byName == nil && t.lookups < scanLookups {
		t.lookups++
		var out []int32
		for i := range t.ents {
			if t.ents[i].name == name {
				out = append(out, int32(i))
			}
		}
		return out
	}
	if t.byName == nil {
		t.byName = make(map[string][]int32, len(t.ents))
		for i := range t.ents {
			n := t.ents[i].name
			t.byName[n] = append(t.byName[n], int32(i))
		}
	}
	return t.byName[name]
}

// Len returns the number of symbols.
func (t *Table) Len() int { return len(t.ents) }

// ZeroAddrs reports whether every address is zero: the kernel hides
// them from this reader (kptr_restrict).
func (t *Table) ZeroAddrs() bool { return t.zero }

// Modules returns the modules' names, the kernel's first.
func (t *Table) Modules() []string { return append([]string(nil), t.mods...) }

// HasModule reports whether the table has symbols of module mod.
func (t *Table) HasModule(mod string) bool { return slices.Contains(t.mods, mod) }

// Lookup returns the symbols called name: of module mod, or of every
// module when mod is "", the kernel's first and then the modules' in the
// table's order. It returns ErrUnknownModule when mod has no symbols and
// ErrUnknownSymbol when none is called name.
func (t *Table) Lookup(mod, name string) ([]Symbol, error) {
	if mod != "" && !t.HasModule(mod) {
		return nil, errUnknownModule
	}
	var out []Symbol
	for _, i := range t.find(name) {
		if mod == "" || t.mods[t.ents[i].mod] == mod {
			out = append(out, t.symbol(int(i)))
		}
	}
	if len(out) == 0 {
		return nil, ErrUnknownSymbol
	}
	// The table's order is the modules' order: the kernel's symbols
	// come first in kallsyms and in an image's symbol table.
	return out, nil
}

// All yields the table's symbols in the order its source lists them.
func (t *Table) All() iter.Seq[Symbol] {
	return func(yield func(Symbol) bool) {
		for i := range t.ents {
			if !yield(t.symbol(i)) {
				return
			}
		}
	}
}

func (t *Table) symbol(i int) Symbol {
	e := &t.ents[i]
	s := Symbol{Name: e.name, Module: t.mods[e.mod], Addr: e.addr, Size: e.size, Func: e.fn, PerCPU: e.perCPU}
	if !t.sized {
		s.Size = t.sizeOf(i)
		s.Padded = s.Size != 0
	}
	return s
}

// sizeOf is the distance from entry i to the next higher address of its
// module: kallsyms lists no sizes.
func (t *Table) sizeOf(i int) uint64 {
	if t.zero {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bySize == nil {
		t.sortByAddr()
	}
	e := &t.ents[i]
	// The first entry of the module above e's address.
	lo, hi := 0, len(t.bySize)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		f := &t.ents[t.bySize[m]]
		if f.mod < e.mod || f.mod == e.mod && f.addr <= e.addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(t.bySize) {
		return 0
	}
	if f := &t.ents[t.bySize[lo]]; f.mod == e.mod {
		return f.addr - e.addr
	}
	return 0
}

// sortByAddr orders the entries by module and address, for sizeOf. The
// caller holds t.mu.
func (t *Table) sortByAddr() {
	idx := make([]int32, len(t.ents))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		x, y := &t.ents[a], &t.ents[b]
		switch {
		case x.mod != y.mod:
			return int(x.mod) - int(y.mod)
		case x.addr < y.addr:
			return -1
		case x.addr > y.addr:
			return 1
		}
		return int(a - b)
	})
	t.bySize = idx
}
