package dwarftypes

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
)

// The kinds of names the index holds: C's tag namespaces, the ordinary
// one of typedefs and base types, functions and variables.
const (
	classStruct = iota // struct and class
	classUnion
	classEnum
	classOther // typedefs and base types
	kindFunc
	kindVar
	numKinds
)

// kindOf returns the kind of name a top-level DIE with tag defines, or
// -1 for DIEs the index leaves out.
func kindOf(tag uint32) int {
	switch tag {
	case tagStructureType, tagClassType:
		return classStruct
	case tagUnionType:
		return classUnion
	case tagEnumerationType:
		return classEnum
	case tagTypedef, tagBaseType:
		return classOther
	case dwarfread.TagSubprogram:
		return kindFunc
	case tagVariable:
		return kindVar
	}
	return -1
}

// A dieRef is the DIE a name leads to.
type dieRef struct {
	off  uint64
	decl bool // DW_AT_declaration: a forward declaration or an extern
}

// better reports whether r is preferred to o: a definition to a
// declaration, then the first in the section, so that the choice does
// not depend on which worker saw which unit.
func (r dieRef) better(o dieRef) bool {
	if r.decl != o.decl {
		return !r.decl
	}
	return r.off < o.off
}

// typeIndex maps names to DIEs: every unit's top-level types,
// functions and variables, and the enumerators of its top-level enums.
// A kernel repeats most of its types in each of its thousands of units;
// the index keeps one DIE per name.
type typeIndex struct {
	names [numKinds]map[string]dieRef
	enums map[string]uint64 // enumerator name → its enum's DIE
	sigs  map[uint64]uint64 // type unit signature → its type's DIE
	stats typeIndexStats
}

// typeIndexStats counts what the index build saw.
type typeIndexStats struct {
	units int // units scanned
	named int // named DIEs met, before keeping one per name
}

func newTypeIndex() *typeIndex {
	x := &typeIndex{enums: map[string]uint64{}, sigs: map[uint64]uint64{}}
	for i := range x.names {
		x.names[i] = map[string]dieRef{}
	}
	return x
}

// put records r under name in m unless m has a better DIE for it.
func put(m map[string]dieRef, name string, r dieRef) {
	if old, ok := m[name]; !ok || r.better(old) {
		m[name] = r
	}
}

// merge adds y's names to x.
func (x *typeIndex) merge(y *typeIndex) {
	for i := range x.names {
		for k, r := range y.names[i] {
			put(x.names[i], k, r)
		}
	}
	for k, off := range y.enums {
		if old, ok := x.enums[k]; !ok || off < old {
			x.enums[k] = off
		}
	}
	for k, off := range y.sigs {
		x.sigs[k] = off
	}
	x.stats.units += y.stats.units
	x.stats.named += y.stats.named
}

// An indexer is one worker of the index build. Most names are offsets
// into .debug_str, the same offset for the same name in every unit (the
// linker merges the section's strings), so the worker keys its maps by
// offset, which spares it reading and hashing the string of each of
// the kernel's two million named DIEs; the strings are read once per
// offset at the end.
type indexer struct {
	r     *typeReader
	x     *typeIndex
	byOff [numKinds]map[uint64]dieRef
	enums map[uint64]uint64
	tab   []tabbrev // scratch for the unit's abbreviations
	attrs []dwarfread.AttrSpec
}

func newIndexer(secs *dwarfread.DwarfSections, units []dwarfread.Unit) *indexer {
	w := &indexer{r: newTypeReader(secs, units), x: newTypeIndex(), enums: map[uint64]uint64{}}
	for i := range w.byOff {
		w.byOff[i] = map[uint64]dieRef{}
	}
	return w
}

// name records a name, given as an attribute, in the worker's maps.
func (w *indexer) name(kind int, a dwarfread.Attr, u *typeUnit, r dieRef) {
	w.x.stats.named++
	if off, ok := w.strOffset(a, u); ok {
		m := w.byOff[kind]
		if old, ok := m[off]; !ok || r.better(old) {
			m[off] = r
		}
		return
	}
	if s, ok := w.r.secs.AttrString(a, &u.UnitCtx); ok && len(s) > 0 {
		m := w.x.names[kind]
		if old, ok := m[string(s)]; !ok || r.better(old) {
			m[string(s)] = r
		}
	}
}

func (w *indexer) enumerator(a dwarfread.Attr, u *typeUnit, enum uint64) {
	w.x.stats.named++
	if off, ok := w.strOffset(a, u); ok {
		if old, ok := w.enums[off]; !ok || enum < old {
			w.enums[off] = enum
		}
		return
	}
	if s, ok := w.r.secs.AttrString(a, &u.UnitCtx); ok && len(s) > 0 {
		if old, ok := w.x.enums[string(s)]; !ok || enum < old {
			w.x.enums[string(s)] = enum
		}
	}
}

// strOffset returns the .debug_str offset of a string attribute in
// that section.
func (w *indexer) strOffset(a dwarfread.Attr, u *typeUnit) (uint64, bool) {
	switch a.Form {
	case dwarfread.FormStrp:
		return a.Val, true
	case dwarfread.FormStrx, dwarfread.FormStrx1, dwarfread.FormStrx2, dwarfread.FormStrx3, dwarfread.FormStrx4, dwarfread.FormGNUStrIndex:
		size := uint64(4)
		if u.Dwarf64 {
			size = 8
		}
		p := u.StrOffsetsBase + a.Val*size
		if p >= uint64(len(w.r.secs.StrOffsets)) {
			return 0, false
		}
		b := dwarfread.Buf{Data: w.r.secs.StrOffsets, Pos: int(p)}
		off := b.Offset(u.Dwarf64)
		return off, b.Err == nil
	}
	return 0, false
}

// finish turns the offsets into names.
func (w *indexer) finish() {
	str := func(off uint64) (string, bool) {
		if off >= uint64(len(w.r.secs.Str)) {
			return "", false
		}
		b := dwarfread.Buf{Data: w.r.secs.Str, Pos: int(off)}
		s := b.Cstring()
		return string(s), b.Err == nil && len(s) > 0
	}
	for kind, m := range w.byOff {
		for off, r := range m {
			if s, ok := str(off); ok {
				put(w.x.names[kind], s, r)
			}
		}
	}
	for off, enum := range w.enums {
		if s, ok := str(off); ok {
			if old, ok := w.x.enums[s]; !ok || enum < old {
				w.x.enums[s] = enum
			}
		}
	}
}

// buildTypeIndex scans the units on workers goroutines, each with its
// own reader and maps, and merges what they found.
func buildTypeIndex(secs *dwarfread.DwarfSections, units []dwarfread.Unit, workers int) (*typeIndex, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(units)))
	ws := make([]*indexer, workers)
	errs := make([]error, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for i := range ws {
		w := newIndexer(secs, units)
		ws[i] = w
		wg.Go(func() {
			for {
				u := int(next.Add(1) - 1)
				if u >= len(units) {
					break
				}
				if err := w.unit(u); err != nil {
					errs[i] = fmt.Errorf("unit at %#x: %w", units[u].Off, err)
					return
				}
			}
			w.finish()
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	x := ws[0].x
	for _, w := range ws[1:] {
		x.merge(w.x)
	}
	return x, nil
}

// unit adds the names of unit i. It decodes only the DIEs at the top
// of the unit that the index wants, and enumerators; it jumps over
// other subtrees by DW_AT_sibling where the producer gave one (gcc
// does), and skips other DIEs by their forms' sizes.
func (w *indexer) unit(i int) error {
	r := w.r
	u := &r.units[i]
	switch u.Utype {
	case dwarfread.UtCompile, dwarfread.UtPartial:
	case utType:
		// The signature and the type's offset end the header.
		p := u.Dies - 8 - 4
		if u.Dwarf64 {
			p = u.Dies - 8 - 8
		}
		b := dwarfread.Buf{Data: r.secs.Info, Pos: p}
		sig := b.U64()
		off := b.Offset(u.Dwarf64)
		if b.Err == nil {
			w.x.sigs[sig] = uint64(u.Off) + off
		}
	default:
		return nil // skeleton and split units hold no types here
	}
	w.x.stats.units++
	// Units rarely share abbreviations (a kernel's have a table each),
	// so the table is parsed into the worker's scratch space.
	tab, attrs, err := parseTypeAbbrevsInto(w.tab[:0], w.attrs[:0], r.secs.Abbrev, u.AbbrevOff, u)
	if err != nil {
		return err
	}
	w.tab, w.attrs = tab, attrs
	tu := &typeUnit{UnitCtx: dwarfread.UnitCtx{Unit: u}, tab: tab}
	b := dwarfread.Buf{Data: r.secs.Info[:u.End], Pos: u.Dies}
	code := b.Uleb()
	if code == 0 || code >= uint64(len(tab)) || !tab[code].defined {
		return fmt.Errorf("bad root DIE")
	}
	tu.StrOffsetsBase = rootStrOffsetsBase(&b, &tab[code], u)
	root := &tab[code]
	if b.Err != nil || !root.children {
		return b.Err
	}
	depth := 1
	var enum uint64 // the enumeration whose enumerators are being read
	for depth > 0 {
		at := b.Pos
		if at >= u.End {
			return fmt.Errorf("DIEs at %#x: %w", at, dwarfread.ErrTruncated)
		}
		code := b.Uleb()
		if code == 0 {
			depth--
			continue
		}
		if code >= uint64(len(tab)) || !tab[code].defined {
			return fmt.Errorf("DIE at %#x: bad abbreviation code %d", at, code)
		}
		a := &tab[code]
		kind := -1
		if depth == 1 {
			enum = 0
			kind = kindOf(a.tag)
		}
		if kind < 0 && !(depth == 2 && enum != 0 && a.tag == tagEnumerator) {
			if a.children && a.sib >= 0 {
				sb := dwarfread.Buf{Data: b.Data, Pos: b.Pos + a.sib}
				s, ok := dwarfread.Ref(dwarfread.Attr{Form: a.sibForm, Val: sb.Value(a.sibForm, nil, u)}, u)
				if ok && sb.Err == nil && s > uint64(at) && s <= uint64(u.End) {
					b.Pos = int(s)
					continue
				}
			}
			skipAttrs(&b, a, u)
			if b.Err != nil {
				return fmt.Errorf("DIE at %#x: %w", at, b.Err)
			}
			if a.children {
				depth++
			}
			continue
		}
		var name, sib dwarfread.Attr
		decl := false
		for i := range a.attrs {
			sp := &a.attrs[i]
			form := sp.Form
			if form == dwarfread.FormIndirect {
				form = uint32(b.Uleb())
			}
			v := b.Value(form, sp, u)
			switch sp.Attr {
			case dwarfread.AtName:
				name = dwarfread.Attr{Form: form, Val: v}
			case dwarfread.AtDeclaration:
				decl = v != 0
			case atSibling:
				sib = dwarfread.Attr{Form: form, Val: v}
			}
		}
		if b.Err != nil {
			return fmt.Errorf("DIE at %#x: %w", at, b.Err)
		}
		if kind < 0 {
			if name.Form != 0 {
				w.enumerator(name, tu, enum)
			}
			continue
		}
		if name.Form != 0 {
			w.name(kind, name, tu, dieRef{uint64(at), decl})
		}
		switch {
		case !a.children:
		case a.tag == tagEnumerationType:
			enum = uint64(at)
			depth++
		default:
			if s, ok := dwarfread.Ref(sib, u); ok && sib.Form != 0 && s > uint64(at) && s <= uint64(u.End) {
				b.Pos = int(s)
				continue
			}
			n, err := r.skipChildren(tu, b.Pos)
			if err != nil {
				return err
			}
			b.Pos = int(n)
		}
	}
	return nil
}

// rootStrOffsetsBase reads the attributes of a unit's root DIE, with
// abbreviation a, and returns its DW_AT_str_offsets_base or the
// default.
func rootStrOffsetsBase(b *dwarfread.Buf, a *tabbrev, u *dwarfread.Unit) uint64 {
	base := uint64(8)
	if u.Dwarf64 {
		base = 16
	}
	for i := range a.attrs {
		sp := &a.attrs[i]
		form := sp.Form
		if form == dwarfread.FormIndirect {
			form = uint32(b.Uleb())
		}
		v := b.Value(form, sp, u)
		if sp.Attr == dwarfread.AtStrOffsetsBase {
			base = v
		}
	}
	return base
}
