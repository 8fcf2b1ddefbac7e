package index

import (
	"sort"

	"github.com/kdtrace/kdtrace/internal/cachefile"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
)

// Tables is an image's index as built, before it is serialised.
type Tables struct {
	strs      []string
	syms      []SymRec // STT_FUNC symbols by address, then size (largest first), then name
	thunkSyms []SymRec // thunks from all symbols: __x86_return_thunk is STT_NOTYPE in some kernels
	byName    []uint32 // indexes into syms, ordered by name, then address
	funcs     []function
	copies    []copyRec // grouped by function, each group ordered by caller name, offset
	ranges    []dwarfread.Range
	// A partial index answers only for the functions named in covered
	// (sorted by name); it holds every symbol all the same.
	partial bool
	covered []uint32
}

// SymRec is a function symbol: its name (an index into the strings),
// address and size.
type SymRec struct {
	Name       uint32
	Addr, Size uint64
}

// Flags of a function.
const (
	funcNamed  = 1 << iota // a DWARF subprogram has this name
	FuncInline             // one of them carries DW_AT_inline
)

type function struct {
	Name   uint32
	Flags  uint8
	Copies uint32 // first of its copies
	N      uint32 // number of copies
}

// Flags of a copy.
// Flags of a copy.
const (
	CopyEntryPC = 1 << iota // DW_AT_entry_pc present
	CopyNested              // inside a copy of the same function: not a copy of its own
)

type copyRec struct {
	Sym    uint32 // caller, an index into syms; noSym when no symbol holds the entry
	Flags  uint8
	Line   uint32
	File   uint32
	Entry  uint64
	Ranges uint32 // first of its ranges
	N      uint32 // number of ranges
	View   uint32 // DW_AT_GNU_entry_view plus one; 0 when absent
	Stmt   uint32 // the unit's line program; noStmt when none
}

// NoStmt marks a copy whose unit has no line program within reach of
// a 32-bit offset.
const NoStmt = ^uint32(0)

const NoSym = ^uint32(0)

// Sizes of the serialised records.
const (
	strOffSize   = 4
	symbolSize   = 20
	byNameSize   = 4
	functionSize = 13
	copySize     = 37
	rangeSize    = 16
)

// Index is an image's Tables in their serialised form (see cache.go),
// read in place: a cached index is usable once its checksum is checked,
// without decoding the 300,000 copies of a kernel first.
type Index struct {
	strs                                                            []byte
	strOff, syms, ThunkSyms, ByName, Funcs, copies, ranges, covered cachefile.Table
	// Partial reports an index built for some functions only (BuildFor):
	// see Covers.
	Partial bool
}

// Covers reports whether the index answers for the function name: a
// whole index does for every name, a partial one for those it was built
// for.
func (x *Index) Covers(name string) bool {
	if !x.Partial {
		return true
	}
	n := x.covered.Len()
	i := sort.Search(n, func(i int) bool { return x.StrCmp(cachefile.U32(x.covered.Rec(i)), name) >= 0 })
	return i < n && x.StrCmp(cachefile.U32(x.covered.Rec(i)), name) == 0
}

func (x *Index) Str(i uint32) string {
	lo, hi := cachefile.U32(x.strOff.Rec(int(i))), cachefile.U32(x.strOff.Rec(int(i)+1))
	return string(x.strs[lo:hi])
}

func (x *Index) Sym(i uint32) SymRec {
	r := x.syms.Rec(int(i))
	return SymRec{Name: cachefile.U32(r), Addr: cachefile.U64(r[4:]), Size: cachefile.U64(r[12:])}
}

func (x *Index) ThunkSym(i int) SymRec {
	r := x.ThunkSyms.Rec(i)
	return SymRec{Name: cachefile.U32(r), Addr: cachefile.U64(r[4:]), Size: cachefile.U64(r[12:])}
}

func (x *Index) ByNameAt(i int) uint32 { return cachefile.U32(x.ByName.Rec(i)) }

func (x *Index) Function(i int) function {
	r := x.Funcs.Rec(i)
	return function{Name: cachefile.U32(r), Flags: r[4], Copies: cachefile.U32(r[5:]), N: cachefile.U32(r[9:])}
}

func (x *Index) CopyAt(i int) copyRec {
	r := x.copies.Rec(i)
	return copyRec{Sym: cachefile.U32(r), Flags: r[4], Line: cachefile.U32(r[5:]), File: cachefile.U32(r[9:]), Entry: cachefile.U64(r[13:]), Ranges: cachefile.U32(r[21:]), N: cachefile.U32(r[25:]), View: cachefile.U32(r[29:]), Stmt: cachefile.U32(r[33:])}
}

func (x *Index) RangeAt(i int) dwarfread.Range {
	r := x.ranges.Rec(i)
	return dwarfread.Range{Lo: cachefile.U64(r), Hi: cachefile.U64(r[8:])}
}

// StrCmp compares string i with s, without allocating.
func (x *Index) StrCmp(i uint32, s string) int {
	b := x.strs[cachefile.U32(x.strOff.Rec(int(i))):cachefile.U32(x.strOff.Rec(int(i)+1))]
	switch {
	case string(b) < s:
		return -1
	case string(b) > s:
		return 1
	}
	return 0
}

// Lookup returns the function named name.
func (x *Index) Lookup(name string) (function, bool) {
	n := x.Funcs.Len()
	i := sort.Search(n, func(i int) bool { return x.StrCmp(x.Function(i).Name, name) >= 0 })
	if i < n && x.StrCmp(x.Function(i).Name, name) == 0 {
		return x.Function(i), true
	}
	return function{}, false
}

// SymbolsNamed returns the symbols named name, in address order.
func (x *Index) SymbolsNamed(name string) []SymRec {
	n := x.ByName.Len()
	i := sort.Search(n, func(i int) bool { return x.StrCmp(x.Sym(x.ByNameAt(i)).Name, name) >= 0 })
	var out []SymRec
	for ; i < n; i++ {
		s := x.Sym(x.ByNameAt(i))
		if x.StrCmp(s.Name, name) != 0 {
			break
		}
		out = append(out, s)
	}
	return out
}

func (x *Index) SymbolAt(addr uint64) uint32 {
	return symbolAt(x.syms.Len(), x.Sym, addr)
}

// symbolAt returns the index of the symbol holding addr among n symbols
// in address order, or noSym. Of several (aliases, or a symbol nested in
// another), the one that starts last wins, and among those the first.
func symbolAt(n int, sym func(uint32) SymRec, addr uint64) uint32 {
	i := sort.Search(n, func(i int) bool { return sym(uint32(i)).Addr > addr })
	// Symbols starting at or before addr are those before i; walk back
	// over a few in case a larger symbol encloses addr.
	for j := i - 1; j >= 0 && i-j <= 64; j-- {
		s := sym(uint32(j))
		if addr-s.Addr >= s.Size {
			continue
		}
		for j > 0 {
			p := sym(uint32(j - 1))
			if p.Addr != s.Addr || addr-p.Addr >= p.Size {
				break
			}
			j--
		}
		return uint32(j)
	}
	return NoSym
}
