package dwarftypes

import (
	"slices"
	"sort"

	"github.com/kdtrace/kdtrace/internal/cachefile"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
)

// unitTable finds the units whose ranges may hold an address, so that
// Scope reads the roots of a few units instead of all of them: a vmlinux
// has thousands. It is built from every unit's root on the first Scope
// and kept for the life of the Types.
type unitTable struct {
	spans []unitSpan // sorted by Lo
	// maxHi[i] is the highest Hi of spans[:i+1]: a search for the
	// spans holding an address walks back from the last one starting
	// at or below it only while an earlier one may still reach it.
	maxHi []uint64
	// open are the units whose roots give no ranges (or cannot be
	// read), looked into for every address, after the others.
	open []int
}

// unitSpan is one range of unit unit.
type unitSpan struct {
	dwarfread.Range
	unit int
}

// unitsAt returns the indexes of the compile and partial units that may
// hold pc, in the order of .debug_info: those whose ranges hold it, then
// those that give no ranges. t.mu is held.
func (t *Types) unitsAt(pc uint64) []int {
	if t.units == nil {
		t.units = t.cacheUnitTable()
	}
	u := t.units
	var at []int
	j := sort.Search(len(u.spans), func(i int) bool { return u.spans[i].Lo > pc }) - 1
	for ; j >= 0 && u.maxHi[j] > pc; j-- {
		if s := u.spans[j]; s.Lo <= pc && pc < s.Hi {
			at = append(at, s.unit)
		}
	}
	slices.Sort(at)
	at = slices.Compact(at)
	return append(at, u.open...)
}

func (t *Types) buildUnitTable() *unitTable {
	u := &unitTable{}
	for i := range t.r.units {
		if ut := t.r.units[i].Utype; ut != dwarfread.UtCompile && ut != dwarfread.UtPartial {
			continue
		}
		_, rs, err := t.unitWalker(i)
		if err != nil || rs == nil {
			// Looked into at every address: a unit whose root
			// cannot be read fails the lookups it is reached by,
			// not those an earlier unit answers.
			u.open = append(u.open, i)
			continue
		}
		for _, r := range rs {
			if r.Lo < r.Hi {
				u.spans = append(u.spans, unitSpan{r, i})
			}
		}
	}
	sort.Slice(u.spans, func(i, j int) bool { return u.spans[i].Lo < u.spans[j].Lo })
	u.index()
	return u
}

// cacheUnitTable builds the unit table and stores it in the cache with
// the unit headers; Types reads both from there when it is current.
func (t *Types) cacheUnitTable() *unitTable {
	u := t.buildUnitTable()
	var e cachefile.Encoder
	encodeUnits(&e, t.r.units, u)
	t.storeTypesCache(".units", unitsCacheMagic, e.B)
	return u
}

// cachedUnits returns the unit headers and the unit table from the
// cache, or nils.
func (t *Types) cachedUnits(infoSize int) ([]dwarfread.Unit, *unitTable) {
	d, ok := t.loadTypesCache(".units", unitsCacheMagic)
	if !ok {
		return nil, nil
	}
	units, u, err := decodeUnits(d, infoSize)
	if err != nil {
		return nil, nil
	}
	return units, u
}

// index computes maxHi from the sorted spans.
func (u *unitTable) index() {
	u.maxHi = make([]uint64, len(u.spans))
	var hi uint64
	for i, s := range u.spans {
		hi = max(hi, s.Hi)
		u.maxHi[i] = hi
	}
}
