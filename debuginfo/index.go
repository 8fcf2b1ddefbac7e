package debuginfo

import (
	"sort"
	"strings"

	"github.com/kdtrace/kdtrace/debuginfo/internal/cachefile"
	"github.com/kdtrace/kdtrace/debuginfo/internal/dwarfread"
)

// tables is an image's index as built, before it is serialised.
type tables struct {
	strs      []string
	syms      []symbol // STT_FUNC symbols by address, then size (largest first), then name
	thunkSyms []symbol // thunks from all symbols: __x86_return_thunk is STT_NOTYPE in some kernels
	byName    []uint32 // indexes into syms, ordered by name, then address
	funcs     []function
	copies    []copyRec // grouped by function, each group ordered by caller name, offset
	ranges    []dwarfread.Range
}

type symbol struct {
	name       uint32
	addr, size uint64
}

// Flags of a function.
const (
	funcNamed  = 1 << iota // a DWARF subprogram has this name
	funcInline             // one of them carries DW_AT_inline
)

type function struct {
	name   uint32
	flags  uint8
	copies uint32 // first of its copies
	n      uint32 // number of copies
}

// Flags of a copy.
// Flags of a copy.
const (
	copyEntryPC = 1 << iota // DW_AT_entry_pc present
	copyNested              // inside a copy of the same function: not a copy of its own
)

type copyRec struct {
	sym    uint32 // caller, an index into syms; noSym when no symbol holds the entry
	flags  uint8
	line   uint32
	file   uint32
	entry  uint64
	ranges uint32 // first of its ranges
	n      uint32 // number of ranges
	view   uint32 // DW_AT_GNU_entry_view plus one; 0 when absent
	stmt   uint32 // the unit's line program; noStmt when none
}

// noStmt marks a copy whose unit has no line program within reach of
// a 32-bit offset.
const noStmt = ^uint32(0)

const noSym = ^uint32(0)

// Sizes of the serialised records.
const (
	strOffSize   = 4
	symbolSize   = 20
	byNameSize   = 4
	functionSize = 13
	copySize     = 37
	rangeSize    = 16
)

// index is an image's tables in their serialised form (see cache.go),
// read in place: a cached index is usable once its checksum is checked,
// without decoding the 300,000 copies of a kernel first.
type index struct {
	strs                                                   []byte
	strOff, syms, thunkSyms, byName, funcs, copies, ranges cachefile.Table
}

func (x *index) str(i uint32) string {
	lo, hi := cachefile.U32(x.strOff.Rec(int(i))), cachefile.U32(x.strOff.Rec(int(i)+1))
	return string(x.strs[lo:hi])
}

func (x *index) sym(i uint32) symbol {
	r := x.syms.Rec(int(i))
	return symbol{name: cachefile.U32(r), addr: cachefile.U64(r[4:]), size: cachefile.U64(r[12:])}
}

func (x *index) thunkSym(i int) symbol {
	r := x.thunkSyms.Rec(i)
	return symbol{name: cachefile.U32(r), addr: cachefile.U64(r[4:]), size: cachefile.U64(r[12:])}
}

func (x *index) byNameAt(i int) uint32 { return cachefile.U32(x.byName.Rec(i)) }

func (x *index) function(i int) function {
	r := x.funcs.Rec(i)
	return function{name: cachefile.U32(r), flags: r[4], copies: cachefile.U32(r[5:]), n: cachefile.U32(r[9:])}
}

func (x *index) copyAt(i int) copyRec {
	r := x.copies.Rec(i)
	return copyRec{sym: cachefile.U32(r), flags: r[4], line: cachefile.U32(r[5:]), file: cachefile.U32(r[9:]), entry: cachefile.U64(r[13:]), ranges: cachefile.U32(r[21:]), n: cachefile.U32(r[25:]), view: cachefile.U32(r[29:]), stmt: cachefile.U32(r[33:])}
}

func (x *index) rangeAt(i int) dwarfread.Range {
	r := x.ranges.Rec(i)
	return dwarfread.Range{Lo: cachefile.U64(r), Hi: cachefile.U64(r[8:])}
}

// strCmp compares string i with s, without allocating.
func (x *index) strCmp(i uint32, s string) int {
	b := x.strs[cachefile.U32(x.strOff.Rec(int(i))):cachefile.U32(x.strOff.Rec(int(i)+1))]
	switch {
	case string(b) < s:
		return -1
	case string(b) > s:
		return 1
	}
	return 0
}

// lookup returns the function named name.
func (x *index) lookup(name string) (function, bool) {
	n := x.funcs.Len()
	i := sort.Search(n, func(i int) bool { return x.strCmp(x.function(i).name, name) >= 0 })
	if i < n && x.strCmp(x.function(i).name, name) == 0 {
		return x.function(i), true
	}
	return function{}, false
}

// symbolsNamed returns the symbols named name, in address order.
func (x *index) symbolsNamed(name string) []symbol {
	n := x.byName.Len()
	i := sort.Search(n, func(i int) bool { return x.strCmp(x.sym(x.byNameAt(i)).name, name) >= 0 })
	var out []symbol
	for ; i < n; i++ {
		s := x.sym(x.byNameAt(i))
		if x.strCmp(s.name, name) != 0 {
			break
		}
		out = append(out, s)
	}
	return out
}

func (x *index) symbolAt(addr uint64) uint32 {
	return symbolAt(x.syms.Len(), x.sym, addr)
}

// symbolAt returns the index of the symbol holding addr among n symbols
// in address order, or noSym. Of several (aliases, or a symbol nested in
// another), the one that starts last wins, and among those the first.
func symbolAt(n int, sym func(uint32) symbol, addr uint64) uint32 {
	i := sort.Search(n, func(i int) bool { return sym(uint32(i)).addr > addr })
	// Symbols starting at or before addr are those before i; walk back
	// over a few in case a larger symbol encloses addr.
	for j := i - 1; j >= 0 && i-j <= 64; j-- {
		s := sym(uint32(j))
		if addr-s.addr >= s.size {
			continue
		}
		for j > 0 {
			p := sym(uint32(j - 1))
			if p.addr != s.addr || addr-p.addr >= p.size {
				break
			}
			j--
		}
		return uint32(j)
	}
	return noSym
}

// Thunk kinds.
const (
	// ReturnThunk marks a function that a jump to stands for a return
	// (__x86_return_thunk and its mitigation variants).
	ReturnThunk ThunkKind = iota + 1
	// IndirectThunk marks a function that a call or jump to stands for
	// an indirect call or jump through a register (retpolines).
	IndirectThunk
)

// ThunkKind says what a jump to a thunk means.
type ThunkKind int

// Thunk is a kernel thunk that replaces an instruction in compiled
// code.
type Thunk struct {
	Name string
	Addr uint64
	Kind ThunkKind
}

// thunkKind classifies a symbol name.
func thunkKind(name string) ThunkKind {
	switch {
	case name == "__x86_return_thunk", name == "srso_return_thunk", name == "srso_alias_return_thunk",
		name == "retbleed_return_thunk", name == "__x86_return_skl", name == "its_return_thunk":
		return ReturnThunk
	case strings.HasPrefix(name, "__x86_indirect_thunk_"), strings.HasPrefix(name, "__x86_indirect_call_thunk_"),
		strings.HasPrefix(name, "__x86_indirect_jump_thunk_"), strings.HasPrefix(name, "__x86_indirect_its_thunk_"):
		return IndirectThunk
	}
	return 0
}

// isThunk says whether a symbol is a thunk, the symbols the index keeps
// beside the functions.
func isThunk(name string) bool { return thunkKind(name) != 0 }

func (x *index) thunks() []Thunk {
	var out []Thunk
	for i := range x.thunkSyms.Len() {
		s := x.thunkSym(i)
		name := x.str(s.name)
		out = append(out, Thunk{Name: name, Addr: s.addr, Kind: thunkKind(name)})
	}
	return out
}
