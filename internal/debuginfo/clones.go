package debuginfo

import (
	"sort"
	"strings"
)

// Clones returns the function symbols that are compiler clones of the
// function name, in Set order and then by address: gcc's specialised
// copies name.constprop.N and name.isra.N (and their combinations, such
// as name.constprop.0.isra.0), and clang's name.specialized.N. Each is a
// whole out-of-line body that callers call instead of name, so its
// entry and return are name's.
//
// The parts gcc splits off a function are not clones: name.part.N is
// the body left after partial inlining, called only from name's own
// code, inlined or not, and name.cold is the unlikely code of name,
// jumped to from it. Both run within a call of name that name's own
// probes already see, and neither is entered by a call of its own
// (name.cold is not called at all).
func (s *Set) Clones(name string) []Symbol {
	var out []Symbol
	for _, img := range s.images {
		x, err := img.symbols()
		if err != nil {
			continue // Lookup reports it
		}
		prefix := name + "."
		n := x.ByName.Len()
		i := sort.Search(n, func(i int) bool { return x.StrCmp(x.Sym(x.ByNameAt(i)).Name, prefix) >= 0 })
		var syms []Symbol
		for ; i < n; i++ {
			sym := x.Sym(x.ByNameAt(i))
			full := x.Str(sym.Name)
			if !strings.HasPrefix(full, prefix) {
				break
			}
			if isClone(full[len(name):]) {
				syms = append(syms, img.symbol(x, sym))
			}
		}
		sort.SliceStable(syms, func(i, j int) bool { return syms[i].Addr < syms[j].Addr })
		for k, sym := range syms {
			if k > 0 && sym.Addr == syms[k-1].Addr {
				continue // an alias of the clone just taken
			}
			out = append(out, sym)
		}
	}
	return out
}

// isClone reports whether suffix, the part of a symbol's name after the
// function's (".constprop.0"), names a clone of the function: a
// sequence of .constprop.N, .isra.N and .specialized.N with no .part or
// .cold.
func isClone(suffix string) bool {
	if suffix == "" {
		return false
	}
	parts := strings.Split(suffix, ".")
	if parts[0] != "" || len(parts)%2 != 1 {
		return false
	}
	for i := 1; i < len(parts); i += 2 {
		switch parts[i] {
		case "constprop", "isra", "specialized":
		default:
			return false
		}
		if !isNumber(parts[i+1]) {
			return false
		}
	}
	return true
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
