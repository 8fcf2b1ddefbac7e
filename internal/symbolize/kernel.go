package symbolize

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/ksym"
)

// kernelObject is the object dtrace names the kernel's own symbols by.
const kernelObject = "kernel"

// A Module is a loaded kernel module's memory, as /proc/modules lists
// it.
type Module struct {
	Name string
	Addr uint64 // 0 when the kernel hides it from the reader
	Size uint64
}

// ReadModules parses /proc/modules:
//
//	ext4 1081344 2 - Live 0xffffffffc0a00000
func ReadModules(data []byte) ([]Module, error) {
	var mods []Module
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 6 {
			return nil, fmt.Errorf("line %d: not a /proc/modules line: %q", n, sc.Text())
		}
		size, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: bad size %q", n, f[1])
		}
		addr, err := strconv.ParseUint(strings.TrimPrefix(f[5], "0x"), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: bad address %q", n, f[5])
		}
		mods = append(mods, Module{Name: f[0], Addr: addr, Size: size})
	}
	return mods, sc.Err()
}

// Kernel looks up addresses of a kernel in its symbol table. It may be
// used from several goroutines.
type Kernel struct {
	syms []ksymbol // by address; of one address, the best name first
	objs []extent  // the objects' memory, by address
}

type ksymbol struct {
	addr, end uint64 // end is addr for a symbol holding its address only
	name      string
	obj       string
	marker    bool
}

// An extent is an object's memory, [start, end).
type extent struct {
	start, end uint64
	name       string
}

// NewKernel indexes t's symbols by address; mods gives the modules'
// extents (nil: none known). A table whose addresses are hidden
// (t.ZeroAddrs) finds nothing.
func NewKernel(t *ksym.Table, mods []Module) *Kernel {
	k := &Kernel{}
	if t.ZeroAddrs() {
		return k
	}
	k.syms = make([]ksymbol, 0, t.Len())
	lo := map[string]uint64{}
	hi := map[string]uint64{}
	var obj, module string
	for s := range t.All() {
		if s.Addr == 0 || s.PerCPU {
			continue
		}
		if s.Module != module {
			module, obj = s.Module, s.Module
			if obj == ksym.KernelModule {
				obj = kernelObject
			}
		}
		k.syms = append(k.syms, ksymbol{addr: s.Addr, name: s.Name, obj: obj, marker: isMarker(s.Name)})
	}
	// kallsyms lists the kernel's symbols sorted, and each module's
	// apart: sorting by address alone is quick, and the few names
	// sharing an address are ordered after.
	if !slices.IsSortedFunc(k.syms, byAddr) {
		slices.SortStableFunc(k.syms, byAddr)
	}
	for i := 0; i < len(k.syms); {
		j := i + 1
		for j < len(k.syms) && k.syms[j].addr == k.syms[i].addr {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(k.syms[i:j], kernelPref)
		}
		i = j
	}
	// Sorted, an object's symbols come in runs: its extent spans its
	// runs' first and last addresses.
	for i := 0; i < len(k.syms); {
		j := i + 1
		for j < len(k.syms) && k.syms[j].obj == k.syms[i].obj {
			j++
		}
		o := k.syms[i].obj
		if l, ok := lo[o]; !ok || k.syms[i].addr < l {
			lo[o] = k.syms[i].addr
		}
		hi[o] = max(hi[o], k.syms[j-1].addr+1)
		i = j
	}

	// A loaded module's extent is what /proc/modules says; the others'
	// run from their first symbol to their last.
	known := map[string]bool{}
	for _, m := range mods {
		if m.Addr != 0 && m.Size != 0 {
			k.objs = append(k.objs, extent{m.Addr, m.Addr + m.Size, m.Name})
			known[m.Name] = true
		}
	}
	for obj, l := range lo {
		if !known[obj] {
			k.objs = append(k.objs, extent{l, hi[obj], obj})
		}
	}
	slices.SortFunc(k.objs, func(a, b extent) int { return cmp.Compare(a.start, b.start) })

	// A symbol ends where the next address's symbols start, or with its
	// object when those are another object's.
	for i := 0; i < len(k.syms); {
		j := i + 1
		for j < len(k.syms) && k.syms[j].addr == k.syms[i].addr {
			j++
		}
		for n := i; n < j; n++ {
			s := &k.syms[n]
			s.end = s.addr
			switch {
			case s.marker:
			case j < len(k.syms) && k.syms[j].obj == s.obj:
				s.end = k.syms[j].addr
			case known[s.obj]:
				if e, ok := k.extentOf(s.addr); ok && e.name == s.obj {
					s.end = e.end
					if j < len(k.syms) {
						s.end = min(s.end, k.syms[j].addr)
					}
				}
			}
		}
		i = j
	}
	return k
}

// isMarker reports whether name is one the linker gives a section's
// bounds, which holds no code or data of its own.
func isMarker(name string) bool {
	switch name {
	case "_text", "_stext", "_etext", "_sinittext", "_einittext", "_sdata", "_edata",
		"__bss_start", "__bss_stop", "_end", "__init_begin", "__init_end", "__end_rodata":
		return true
	}
	return strings.HasPrefix(name, "__start_") || strings.HasPrefix(name, "__stop_") ||
		strings.HasPrefix(name, "__end_")
}

func byAddr(a, b ksymbol) int { return cmp.Compare(a.addr, b.addr) }

// kernelPref orders the names of one address, the preferred first: a
// symbol over a section marker, then fewer leading underscores, then
// byte order.
func kernelPref(a, b ksymbol) int {
	if a.marker != b.marker {
		if a.marker {
			return 1
		}
		return -1
	}
	if c := cmp.Compare(underscores(a.name), underscores(b.name)); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

func underscores(s string) int { return len(s) - len(strings.TrimLeft(s, "_")) }

// Len returns the number of addressed symbols.
func (k *Kernel) Len() int { return len(k.syms) }

// Lookup returns the symbol holding addr, or the object holding it with
// Name "", as dtrace_lookup_by_addr finds them.
func (k *Kernel) Lookup(addr uint64) (consumer.Symbol, bool) {
	if i := sort.Search(len(k.syms), func(i int) bool { return k.syms[i].addr > addr }); i > 0 {
		// The preferred name of the highest address not above addr.
		i--
		for i > 0 && k.syms[i-1].addr == k.syms[i].addr {
			i--
		}
		if s := k.syms[i]; addr == s.addr || addr < s.end {
			return consumer.Symbol{Object: s.obj, Name: s.name, Value: s.addr}, true
		}
	}
	if e, ok := k.extentOf(addr); ok {
		return consumer.Symbol{Object: e.name}, true
	}
	return consumer.Symbol{}, false
}

// extentOf returns the object whose memory holds addr.
func (k *Kernel) extentOf(addr uint64) (extent, bool) {
	i := sort.Search(len(k.objs), func(i int) bool { return k.objs[i].start > addr })
	// Extents guessed from symbols (BPF programs') may enclose a
	// module's: the one starting last is the innermost.
	for i--; i >= 0; i-- {
		if e := k.objs[i]; addr < e.end {
			return e, true
		}
	}
	return extent{}, false
}
