package debuginfo

import (
	"fmt"
	"slices"
)

// A lineRow is one row of a line-number program's matrix, with the view
// number GCC's location views give it: 0 for the first row at an
// address, one more for each further row at the same address.
type lineRow struct {
	addr            uint64
	file, line, col uint32
	view            uint32
}

// decodeLines runs the line-number program at off in sec and returns its
// rows in program order. Only what entry markers need is kept.
func decodeLines(sec []byte, off uint64) ([]lineRow, error) {
	if off >= uint64(len(sec)) {
		return nil, fmt.Errorf("line table offset %#x out of range", off)
	}
	b := buf{data: sec, pos: int(off)}
	n, dwarf64 := b.unitLength()
	if n > uint64(len(b.data)-b.pos) {
		return nil, fmt.Errorf("line table at %#x: bad length", off)
	}
	end := b.pos + int(n)
	b.data = b.data[:end]
	vers := b.u16()
	if vers < 2 || vers > 5 {
		return nil, fmt.Errorf("line table at %#x: unsupported version %d", off, vers)
	}
	addrSize := 8
	if vers == 5 {
		addrSize = int(b.u8())
		b.skip(1) // segment_selector_size
	}
	hdrLen := b.offset(dwarf64)
	prog := uint64(b.pos) + hdrLen
	minInst := uint64(b.u8())
	if vers >= 4 {
		b.skip(1) // maximum_operations_per_instruction: 1 on x86
	}
	b.skip(1) // default_is_stmt
	lineBase := int64(int8(b.u8()))
	lineRange := uint64(b.u8())
	opBase := b.u8()
	lengths := make([]uint8, opBase)
	for i := 1; i < int(opBase); i++ {
		lengths[i] = b.u8()
	}
	if b.err != nil || lineRange == 0 || prog > uint64(end) {
		return nil, fmt.Errorf("line table at %#x: bad header", off)
	}
	b.pos = int(prog)

	var rows []lineRow
	var addr uint64
	file, line, col := uint32(1), int64(1), uint32(0)
	fresh := true // no row yet in this sequence
	reset := func() {
		addr, file, line, col, fresh = 0, 1, 1, 0, true
	}
	emit := func() {
		r := lineRow{addr: addr, file: file, line: uint32(line), col: col}
		if k := len(rows) - 1; !fresh && k >= 0 && rows[k].addr == addr {
			r.view = rows[k].view + 1
		}
		rows = append(rows, r)
		fresh = false
	}
	for b.pos < end && b.err == nil {
		op := b.u8()
		switch {
		case op >= opBase:
			adj := uint64(op - opBase)
			addr += adj / lineRange * minInst
			line += lineBase + int64(adj%lineRange)
			emit()
		case op == 0: // extended
			size := b.uleb()
			if size == 0 || size > uint64(end-b.pos) {
				return nil, fmt.Errorf("line table at %#x: bad extended opcode", off)
			}
			next := b.pos + int(size)
			switch b.u8() {
			case 1: // DW_LNE_end_sequence
				reset()
			case 2: // DW_LNE_set_address
				addr = b.addr(addrSize)
			}
			b.pos = next
		case op == 1: // DW_LNS_copy
			emit()
		case op == 2: // DW_LNS_advance_pc
			addr += b.uleb() * minInst
		case op == 3: // DW_LNS_advance_line
			line += b.sleb()
		case op == 4: // DW_LNS_set_file
			file = uint32(b.uleb())
		case op == 5: // DW_LNS_set_column
			col = uint32(b.uleb())
		case op == 8: // DW_LNS_const_add_pc
			addr += uint64(255-opBase) / lineRange * minInst
		case op == 9: // DW_LNS_fixed_advance_pc
			addr += uint64(b.u16())
		default: // opcodes without effect here, or unknown ones
			for range lengths[op] {
				b.uleb()
			}
		}
	}
	if b.err != nil {
		return nil, fmt.Errorf("line table at %#x: %w", off, b.err)
	}
	return rows, nil
}

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
	if c.entryView == 0 || c.lineProg == noStmt {
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
	k := slices.IndexFunc(rows, func(r lineRow) bool { return r.addr == c.Entry && r.view == c.entryView-1 })
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
		if r.file == key.file && r.line == key.line && r.col == key.col && in(r.addr) && !slices.Contains(c.inner, r.addr) {
			marks = append(marks, r.addr)
		}
	}
	slices.Sort(marks)
	return slices.Compact(marks), nil
}

// lineRows returns the rows of the line program at off in the image's
// DWARF, decoded once.
func (img *Image) lineRows(off uint32) ([]lineRow, error) {
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
		ef, err := openELF(path)
		if err != nil {
			return nil, err
		}
		secs, err := ef.dwarf()
		if err != nil {
			ef.Close()
			return nil, fmt.Errorf("reading DWARF of %s: %w", path, err)
		}
		img.lineELF, img.lineSec = ef, secs.line
	}
	rows, err := decodeLines(img.lineSec, uint64(off))
	if err != nil {
		return nil, err
	}
	if img.lines == nil {
		img.lines = make(map[uint32][]lineRow)
	}
	img.lines[off] = rows
	return rows, nil
}
