package index

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/kdtrace/kdtrace/internal/cachefile"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
)

// BuildFor builds the part of the index that answers for the functions
// names: every symbol, and of the DWARF only the units that can hold a
// subprogram or an inlined copy of one of them, read in full. The
// result equals the whole index's for those names (a test checks it):
//
//   - A name comes from a subprogram's DW_AT_name, found through the
//     DW_AT_specification and DW_AT_abstract_origin references of
//     subprograms, and a copy's name through its abstract origin. Within
//     a unit those references lead to a DIE of the same unit, unless the
//     unit's abbreviations allow DW_FORM_ref_addr for them; such a unit
//     is always read. Otherwise a unit holds a subprogram or a copy of
//     a function only if it holds the function's name.
//   - A name in .debug_str (or .debug_line_str) is an offset there, and
//     the offsets whose string is the name are found once; a unit that
//     holds none of them as four bytes anywhere (DWARF64 offsets start
//     with the same four) names no subprogram so through DW_FORM_strp.
//     A name in the DIE itself (DW_FORM_string) is searched for as its
//     bytes and NUL; units whose names may be DW_FORM_strx indexes are
//     always read.
//
// The search reads .debug_info through InfoAt when it can, so that its
// pages are not counted as the process's; only the units read in full
// are then touched in the mapping. When those units would be more than
// a quarter of .debug_info, as for a function declared in most units,
// the whole index is built instead (it is not partial).
func BuildFor(d *dwarfread.DwarfSections, ef *elffile.File, workers int, isThunk func(name string) bool, names []string) (*Tables, Stats, error) {
	b, err := newBuilder(d, ef, workers, isThunk)
	if err != nil {
		return nil, Stats{}, err
	}
	keep := make(map[uint32]bool, len(names))
	var strs, inline [][]byte
	for _, n := range names {
		keep[b.in.string(n)] = true
		if n == "" || bytes.IndexByte([]byte(n), 0) >= 0 {
			continue // no DWARF name is empty or holds a NUL
		}
		strs = append(strs, offsetsOf(d.Str, n)...)
		strs = append(strs, offsetsOf(d.LineStr, n)...)
		inline = append(inline, append([]byte(n), 0))
	}
	walk := make([]bool, len(b.units))
	if len(names) == 0 {
		return b.finish(walk, keep) // the symbols alone
	}
	// The search stops once the units found are over the quarter:
	// the whole index is built then.
	var size atomic.Int64
	limit := int64(len(d.Info) / 4)
	err = b.each(nil, func(i int, buf *[]byte) error {
		if size.Load() > limit {
			return nil
		}
		var err error
		walk[i], err = holds(d, &b.units[i], strs, inline, buf)
		if walk[i] {
			size.Add(int64(b.units[i].End - b.units[i].Off))
		}
		return err
	})
	if err != nil {
		b.symWG.Wait()
		return nil, b.stats, err
	}
	if size.Load() > limit {
		return b.finish(nil, nil)
	}
	return b.finish(walk, keep)
}

// offsetsOf returns, as four little-endian bytes each, the offsets in a
// string section of the strings equal to name: where name and a NUL
// are, after the start of a string or inside one (a linker merging
// strings may keep "name" as the tail of "__name").
func offsetsOf(sec []byte, name string) [][]byte {
	pat := append([]byte(name), 0)
	var out [][]byte
	for p := 0; ; p++ {
		i := bytes.Index(sec[p:], pat)
		if i < 0 {
			return out
		}
		p += i
		out = append(out, binary.LittleEndian.AppendUint32(nil, uint32(p)))
	}
}

// holds reports whether unit u may hold a subprogram named by one of
// the offsets strs, or by one of the NUL-terminated names inline (see
// BuildFor). A unit whose abbreviations are unreadable is read in full,
// which reports the error as a whole build would.
func holds(d *dwarfread.DwarfSections, u *dwarfread.Unit, strs, inline [][]byte, buf *[]byte) (bool, error) {
	if u.Utype != dwarfread.UtCompile && u.Utype != dwarfread.UtPartial {
		return false, nil
	}
	uses, err := dwarfread.AbbrevUses(d.Abbrev, u.AbbrevOff)
	if err != nil || uses&(dwarfread.UsesRefAddr|dwarfread.UsesStrx) != 0 {
		return true, nil
	}
	data := d.Info[u.Off:u.End]
	if d.InfoAt != nil {
		n := u.End - u.Off
		if cap(*buf) < n {
			*buf = make([]byte, n)
		}
		data = (*buf)[:n]
		if _, err := d.InfoAt.ReadAt(data, int64(u.Off)); err != nil {
			return false, err
		}
	}
	if containsAny(data, strs) {
		return true, nil
	}
	if uses&dwarfread.UsesString != 0 {
		for _, p := range inline {
			if bytes.Contains(data, p) {
				return true, nil
			}
		}
	}
	return false, nil
}

// containsAny reports whether data holds one of the four-byte patterns
// pats: a pass of bytes.Contains for each when they are few, else one
// pass over data testing each four bytes against a bitmap of the
// patterns' first two bytes, then the patterns themselves.
func containsAny(data []byte, pats [][]byte) bool {
	if len(pats) <= 4 {
		for _, p := range pats {
			if bytes.Contains(data, p) {
				return true
			}
		}
		return false
	}
	var seen [1 << 16 / 64]uint64
	vals := make([]uint32, len(pats))
	for i, p := range pats {
		vals[i] = binary.LittleEndian.Uint32(p)
		seen[uint16(vals[i])/64] |= 1 << (uint16(vals[i]) % 64)
	}
	for i := 0; i+4 <= len(data); i++ {
		v := binary.LittleEndian.Uint32(data[i:])
		if seen[uint16(v)/64]&(1<<(uint16(v)%64)) != 0 && slices.Contains(vals, v) {
			return true
		}
	}
	return false
}

// maxCovered bounds the names a partial index gathers by Merge: past
// it, a new partial index starts afresh.
const maxCovered = 64

// Merge adds to t, a partial index, the functions that x, a partial
// index of the same image, covers and t does not: the index cached then
// answers for the functions of earlier lookups too. It does nothing
// when t or x is whole, when their symbols differ (they were built from
// other inputs), or when t would cover more than maxCovered names; it
// reports whether it merged.
func (t *Tables) Merge(x *Index) bool {
	if !t.partial || !x.Partial || x.syms.Len() != len(t.syms) || len(t.covered)+x.covered.Len() > maxCovered {
		return false
	}
	ids := make(map[string]uint32, len(t.strs))
	for i, s := range t.strs {
		ids[s] = uint32(i)
	}
	intern := func(s string) uint32 {
		id, ok := ids[s]
		if !ok {
			id = uint32(len(t.strs))
			ids[s] = id
			t.strs = append(t.strs, s)
		}
		return id
	}
	covered := make(map[uint32]bool, len(t.covered))
	for _, n := range t.covered {
		covered[n] = true
	}
	for i := range x.covered.Len() {
		name := x.Str(cachefile.U32(x.covered.Rec(i)))
		id := intern(name)
		if covered[id] {
			continue
		}
		covered[id] = true
		t.covered = append(t.covered, id)
		f, ok := x.Lookup(name)
		if !ok {
			continue
		}
		nf := function{Name: id, Flags: f.Flags, N: f.N}
		if f.N > 0 {
			nf.Copies = uint32(len(t.copies))
		}
		for j := f.Copies; j < f.Copies+f.N; j++ {
			c := x.CopyAt(int(j))
			r0 := uint32(len(t.ranges))
			for k := range c.N {
				t.ranges = append(t.ranges, x.RangeAt(int(c.Ranges+k)))
			}
			c.Ranges = r0
			c.File = intern(x.Str(c.File))
			t.copies = append(t.copies, c)
		}
		t.funcs = append(t.funcs, nf)
	}
	byName := func(a, b uint32) int { return strings.Compare(t.strs[a], t.strs[b]) }
	slices.SortFunc(t.funcs, func(a, b function) int { return byName(a.Name, b.Name) })
	slices.SortFunc(t.covered, byName)
	return true
}
