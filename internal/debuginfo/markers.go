package debuginfo

import (
	"fmt"
	"slices"

	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/index"
)

// EntryMarkers returns the addresses where calls of copy c's function
// begin in c's caller, as GCC's inline entry markers record them: the
// line-table rows with the source position of the row DW_AT_entry_pc
// and DW_AT_GNU_entry_view name. When the compiler duplicates a call's
// code (peeling, unrolling, loop versioning, tail duplication), it
// duplicates the marker with it, so the markers find every copy of the
// call that DW_AT_entry_pc alone names one of; every copy of the
// function in the caller shares them. The markers of copies nested in a
// copy of the same function, which are no copies of their own (see
// Function.Copies), are left out. It returns nil when c has no entry
// view (clang; GCC without location views) or its row is not found.
func (s *Set) EntryMarkers(c Copy) ([]uint64, error) {
	if c.entryView == 0 || c.lineProg == index.NoStmt {
		return nil, nil
	}
	img, err := s.image(c.Module)
	if err != nil {
		return nil, err
	}
	rows, err := img.lineRows(c.lineProg)
	if err != nil {
		return nil, err
	}
	k := slices.IndexFunc(rows, func(r dwarfread.LineRow) bool { return r.Addr == c.Entry && r.View == c.entryView-1 })
	if k < 0 {
		return nil, nil
	}
	key := rows[k]
	in := func(a uint64) bool {
		if a >= c.CallerAddr && a < c.CallerAddr+c.CallerSize {
			return true
		}
		for _, r := range c.Ranges {
			if a >= r.Lo && a < r.Hi {
				return true
			}
		}
		return false
	}
	var marks []uint64
	for _, r := range rows {
		if r.File == key.File && r.Line == key.Line && r.Col == key.Col && in(r.Addr) && !slices.Contains(c.inner, r.Addr) {
			marks = append(marks, r.Addr)
		}
	}
	slices.Sort(marks)
	return slices.Compact(marks), nil
}

// lineRows returns the rows of the line program at off in the image's
// DWARF, decoded once.
func (img *Image) lineRows(off uint32) ([]dwarfread.LineRow, error) {
	img.mu.Lock()
	defer img.mu.Unlock()
	if rows, ok := img.lines[off]; ok {
		return rows, nil
	}
	if img.lineSec == nil {
		path := img.DebugPath
		if path == "" {
			path = img.Path
		}
		ef, err := elffile.Open(path)
		if err != nil {
			return nil, err
		}
		secs, err := ef.Dwarf()
		if err != nil {
			ef.Close()
			return nil, fmt.Errorf("reading DWARF of %s: %w", path, err)
		}
		img.lineELF, img.lineSec = ef, secs.Line
	}
	rows, err := dwarfread.DecodeLines(img.lineSec, uint64(off), 8)
	if err != nil {
		return nil, err
	}
	if img.lines == nil {
		img.lines = make(map[uint32][]dwarfread.LineRow)
	}
	img.lines[off] = rows
	return rows, nil
}
