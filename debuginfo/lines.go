package debuginfo

import (
	"fmt"
	"path"
)

// lineFiles returns the file table of the line program at off, indexed
// as DW_AT_call_file values are: from 0 in DWARF 5, from 1 before (index
// 0 is then "no file" and left empty). Only the header is read.
func lineFiles(s *dwarfSections, off uint64, u *unitCtx) ([]string, error) {
	if off >= uint64(len(s.line)) {
		return nil, fmt.Errorf("line table offset %#x out of range", off)
	}
	b := buf{data: s.line, pos: int(off)}
	n, dwarf64 := b.unitLength()
	if n > uint64(len(b.data)-b.pos) {
		return nil, fmt.Errorf("line table at %#x: bad length", off)
	}
	b.data = b.data[:b.pos+int(n)]
	vers := b.u16()
	if vers < 2 || vers > 5 {
		return nil, fmt.Errorf("line table at %#x: unsupported version %d", off, vers)
	}
	if vers == 5 {
		b.skip(2) // address_size, segment_selector_size
	}
	hdrLen := b.offset(dwarf64)
	progStart := uint64(b.pos) + hdrLen
	b.skip(1) // minimum_instruction_length
	if vers >= 4 {
		b.skip(1) // maximum_operations_per_instruction
	}
	b.skip(3) // default_is_stmt, line_base, line_range
	opBase := b.u8()
	if opBase > 0 {
		b.skip(uint64(opBase - 1))
	}
	if b.err != nil {
		return nil, fmt.Errorf("line table at %#x: %w", off, b.err)
	}
	// Values in the header are read with the unit's forms but the line
	// table's own offset size.
	lu := *u
	lu.unit = &unit{off: u.off, vers: u.vers, addrSize: u.addrSize, dwarf64: dwarf64}

	var files []string
	if vers < 5 {
		dirs := []string{u.compDir}
		for {
			d := b.cstring()
			if len(d) == 0 || b.err != nil {
				break
			}
			dirs = append(dirs, string(d))
		}
		files = append(files, "")
		for {
			name := b.cstring()
			if len(name) == 0 || b.err != nil {
				break
			}
			dir := b.uleb()
			b.uleb() // modification time
			b.uleb() // length
			files = append(files, joinDir(dirs, dir, string(name)))
		}
	} else {
		dirs, _, err := entryTable(s, &b, &lu, nil)
		if err != nil {
			return nil, fmt.Errorf("line table at %#x: directories: %w", off, err)
		}
		if _, files, err = entryTable(s, &b, &lu, dirs); err != nil {
			return nil, fmt.Errorf("line table at %#x: files: %w", off, err)
		}
	}
	if b.err != nil {
		return nil, fmt.Errorf("line table at %#x: %w", off, b.err)
	}
	if uint64(b.pos) > progStart {
		return nil, fmt.Errorf("line table at %#x: header overruns its length", off)
	}
	return files, nil
}

// entryTable reads a DWARF 5 directory or file-name table. With dirs nil
// it returns the paths as directories; otherwise the file paths joined
// with their directories.
func entryTable(s *dwarfSections, b *buf, u *unitCtx, dirs []string) (names, files []string, err error) {
	const (
		lnctPath     = 1
		lnctDirIndex = 2
	)
	nfmt := int(b.u8())
	format := make([]attrSpec, nfmt)
	for i := range format {
		format[i].attr = uint32(b.uleb())
		format[i].form = uint32(b.uleb())
	}
	count := b.uleb()
	if b.err != nil || count > uint64(len(b.data)) {
		return nil, nil, errTruncated
	}
	for range count {
		var name string
		var dir uint64
		for i := range format {
			f := &format[i]
			v := b.value(f.form, f, u.unit)
			switch f.attr {
			case lnctPath:
				if f.form == formString {
					name = string(b.data[v : b.pos-1])
					break
				}
				p, ok := s.attrString(attr{f.form, v}, u)
				if !ok {
					return nil, nil, fmt.Errorf("bad path form %#x", f.form)
				}
				name = string(p)
			case lnctDirIndex:
				dir = v
			}
		}
		if b.err != nil {
			return nil, nil, b.err
		}
		if dirs == nil {
			names = append(names, name)
		} else {
			files = append(files, joinDir(dirs, dir, name))
		}
	}
	return names, files, nil
}

func joinDir(dirs []string, i uint64, name string) string {
	if path.IsAbs(name) || i >= uint64(len(dirs)) || dirs[i] == "" {
		return name
	}
	return path.Join(dirs[i], name)
}

// A lineRow is one row of a line-number program's matrix, with the view
// number GCC's location views give it: 0 for the first row at an
// address, one more for each further row at the same address.
type lineRow struct {
	addr            uint64
	file, line, col uint32
	view            uint32
	stmt            bool // is_stmt
	prologueEnd     bool
}

// decodeLines runs the line-number program at off in sec and returns its
// rows in program order; addrSize is the unit's address size, which
// programs before DWARF 5 do not give.
func decodeLines(sec []byte, off uint64, addrSize int) ([]lineRow, error) {
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
	defStmt := b.u8() != 0
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
	stmt, prologue := defStmt, false
	fresh := true // no row yet in this sequence
	reset := func() {
		addr, file, line, col, stmt, prologue, fresh = 0, 1, 1, 0, defStmt, false, true
	}
	emit := func() {
		r := lineRow{addr: addr, file: file, line: uint32(line), col: col, stmt: stmt, prologueEnd: prologue}
		if k := len(rows) - 1; !fresh && k >= 0 && rows[k].addr == addr {
			r.view = rows[k].view + 1
		}
		rows = append(rows, r)
		fresh, prologue = false, false
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
		case op == 6: // DW_LNS_negate_stmt
			stmt = !stmt
		case op == 8: // DW_LNS_const_add_pc
			addr += uint64(255-opBase) / lineRange * minInst
		case op == 9: // DW_LNS_fixed_advance_pc
			addr += uint64(b.u16())
		case op == 10: // DW_LNS_set_prologue_end
			prologue = true
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

// prologueEnd returns where the prologue of the function at [low, high)
// ends, as the line program at off says: the first row the compiler
// marks prologue_end (clang), else, as gdb takes it, the first row past
// low of another line than low's (gcc marks none). ok is false when
// the program says neither.
func prologueEnd(s *dwarfSections, off uint64, u *unitCtx, low, high uint64) (end uint64, ok bool, err error) {
	rows, err := decodeLines(s.line, off, u.addrSize)
	if err != nil {
		return 0, false, err
	}
	firstLine := int64(-1)
	var best, other uint64 // other: the first row past low of another line
	otherOK := false
	for _, r := range rows {
		if r.addr < low || r.addr >= high || !r.stmt {
			continue
		}
		switch {
		case r.prologueEnd && (!ok || r.addr < best):
			best, ok = r.addr, true
		case r.addr == low && firstLine < 0:
			firstLine = int64(r.line)
		case r.addr > low && firstLine >= 0 && int64(r.line) != firstLine && (!otherOK || r.addr < other):
			other, otherOK = r.addr, true
		}
	}
	if ok {
		return best, true, nil
	}
	return other, otherOK, nil
}
