package dwarfread

import (
	"fmt"
	"path"
)

// LineFiles returns the file table of the line program at off, indexed
// as DW_AT_call_file values are: from 0 in DWARF 5, from 1 before (index
// 0 is then "no file" and left empty). Only the header is read.
func LineFiles(s *DwarfSections, off uint64, u *UnitCtx) ([]string, error) {
	if off >= uint64(len(s.Line)) {
		return nil, fmt.Errorf("line table offset %#x out of range", off)
	}
	b := Buf{Data: s.Line, Pos: int(off)}
	n, dwarf64 := b.UnitLength()
	if n > uint64(len(b.Data)-b.Pos) {
		return nil, fmt.Errorf("line table at %#x: bad length", off)
	}
	b.Data = b.Data[:b.Pos+int(n)]
	vers := b.U16()
	if vers < 2 || vers > 5 {
		return nil, fmt.Errorf("line table at %#x: unsupported version %d", off, vers)
	}
	if vers == 5 {
		b.Skip(2) // address_size, segment_selector_size
	}
	hdrLen := b.Offset(dwarf64)
	progStart := uint64(b.Pos) + hdrLen
	b.Skip(1) // minimum_instruction_length
	if vers >= 4 {
		b.Skip(1) // maximum_operations_per_instruction
	}
	b.Skip(3) // default_is_stmt, line_base, line_range
	opBase := b.U8()
	if opBase > 0 {
		b.Skip(uint64(opBase - 1))
	}
	if b.Err != nil {
		return nil, fmt.Errorf("line table at %#x: %w", off, b.Err)
	}
	// Values in the header are read with the unit's forms but the line
	// table's own offset size.
	lu := *u
	lu.Unit = &Unit{Off: u.Off, Vers: u.Vers, AddrSize: u.AddrSize, Dwarf64: dwarf64}

	var files []string
	if vers < 5 {
		dirs := []string{u.CompDir}
		for {
			d := b.Cstring()
			if len(d) == 0 || b.Err != nil {
				break
			}
			dirs = append(dirs, string(d))
		}
		files = append(files, "")
		for {
			name := b.Cstring()
			if len(name) == 0 || b.Err != nil {
				break
			}
			dir := b.Uleb()
			b.Uleb() // modification time
			b.Uleb() // length
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
	if b.Err != nil {
		return nil, fmt.Errorf("line table at %#x: %w", off, b.Err)
	}
	if uint64(b.Pos) > progStart {
		return nil, fmt.Errorf("line table at %#x: header overruns its length", off)
	}
	return files, nil
}

// entryTable reads a DWARF 5 directory or file-name table. With dirs nil
// it returns the paths as directories; otherwise the file paths joined
// with their directories.
func entryTable(s *DwarfSections, b *Buf, u *UnitCtx, dirs []string) (names, files []string, err error) {
	const (
		lnctPath     = 1
		lnctDirIndex = 2
	)
	nfmt := int(b.U8())
	format := make([]AttrSpec, nfmt)
	for i := range format {
		format[i].Attr = uint32(b.Uleb())
		format[i].Form = uint32(b.Uleb())
	}
	count := b.Uleb()
	if b.Err != nil || count > uint64(len(b.Data)) {
		return nil, nil, ErrTruncated
	}
	for range count {
		var name string
		var dir uint64
		for i := range format {
			f := &format[i]
			v := b.Value(f.Form, f, u.Unit)
			switch f.Attr {
			case lnctPath:
				if f.Form == FormString {
					name = string(b.Data[v : b.Pos-1])
					break
				}
				p, ok := s.AttrString(Attr{Form: f.Form, Val: v}, u)
				if !ok {
					return nil, nil, fmt.Errorf("bad path form %#x", f.Form)
				}
				name = string(p)
			case lnctDirIndex:
				dir = v
			}
		}
		if b.Err != nil {
			return nil, nil, b.Err
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
type LineRow struct {
	Addr            uint64
	File, Line, Col uint32
	View            uint32
	stmt            bool // is_stmt
	prologueEnd     bool
}

// DecodeLines runs the line-number program at off in sec and returns its
// rows in program order; addrSize is the unit's address size, which
// programs before DWARF 5 do not give.
func DecodeLines(sec []byte, off uint64, addrSize int) ([]LineRow, error) {
	if off >= uint64(len(sec)) {
		return nil, fmt.Errorf("line table offset %#x out of range", off)
	}
	b := Buf{Data: sec, Pos: int(off)}
	n, dwarf64 := b.UnitLength()
	if n > uint64(len(b.Data)-b.Pos) {
		return nil, fmt.Errorf("line table at %#x: bad length", off)
	}
	end := b.Pos + int(n)
	b.Data = b.Data[:end]
	vers := b.U16()
	if vers < 2 || vers > 5 {
		return nil, fmt.Errorf("line table at %#x: unsupported version %d", off, vers)
	}
	if vers == 5 {
		addrSize = int(b.U8())
		b.Skip(1) // segment_selector_size
	}
	hdrLen := b.Offset(dwarf64)
	prog := uint64(b.Pos) + hdrLen
	minInst := uint64(b.U8())
	if vers >= 4 {
		b.Skip(1) // maximum_operations_per_instruction: 1 on x86
	}
	defStmt := b.U8() != 0
	lineBase := int64(int8(b.U8()))
	lineRange := uint64(b.U8())
	opBase := b.U8()
	lengths := make([]uint8, opBase)
	for i := 1; i < int(opBase); i++ {
		lengths[i] = b.U8()
	}
	if b.Err != nil || lineRange == 0 || prog > uint64(end) {
		return nil, fmt.Errorf("line table at %#x: bad header", off)
	}
	b.Pos = int(prog)

	var rows []LineRow
	var addr uint64
	file, line, col := uint32(1), int64(1), uint32(0)
	stmt, prologue := defStmt, false
	fresh := true // no row yet in this sequence
	reset := func() {
		addr, file, line, col, stmt, prologue, fresh = 0, 1, 1, 0, defStmt, false, true
	}
	emit := func() {
		r := LineRow{Addr: addr, File: file, Line: uint32(line), Col: col, stmt: stmt, prologueEnd: prologue}
		if k := len(rows) - 1; !fresh && k >= 0 && rows[k].Addr == addr {
			r.View = rows[k].View + 1
		}
		rows = append(rows, r)
		fresh, prologue = false, false
	}
	for b.Pos < end && b.Err == nil {
		op := b.U8()
		switch {
		case op >= opBase:
			adj := uint64(op - opBase)
			addr += adj / lineRange * minInst
			line += lineBase + int64(adj%lineRange)
			emit()
		case op == 0: // extended
			size := b.Uleb()
			if size == 0 || size > uint64(end-b.Pos) {
				return nil, fmt.Errorf("line table at %#x: bad extended opcode", off)
			}
			next := b.Pos + int(size)
			switch b.U8() {
			case 1: // DW_LNE_end_sequence
				reset()
			case 2: // DW_LNE_set_address
				addr = b.Addr(addrSize)
			}
			b.Pos = next
		case op == 1: // DW_LNS_copy
			emit()
		case op == 2: // DW_LNS_advance_pc
			addr += b.Uleb() * minInst
		case op == 3: // DW_LNS_advance_line
			line += b.Sleb()
		case op == 4: // DW_LNS_set_file
			file = uint32(b.Uleb())
		case op == 5: // DW_LNS_set_column
			col = uint32(b.Uleb())
		case op == 6: // DW_LNS_negate_stmt
			stmt = !stmt
		case op == 8: // DW_LNS_const_add_pc
			addr += uint64(255-opBase) / lineRange * minInst
		case op == 9: // DW_LNS_fixed_advance_pc
			addr += uint64(b.U16())
		case op == 10: // DW_LNS_set_prologue_end
			prologue = true
		default: // opcodes without effect here, or unknown ones
			for range lengths[op] {
				b.Uleb()
			}
		}
	}
	if b.Err != nil {
		return nil, fmt.Errorf("line table at %#x: %w", off, b.Err)
	}
	return rows, nil
}

// PrologueEnd returns where the prologue of the function at [low, high)
// ends, as the line program at off says: the first row the compiler
// marks prologue_end (clang), else, as gdb takes it, the first row past
// low of another line than low's (gcc marks none). ok is false when
// the program says neither.
func PrologueEnd(s *DwarfSections, off uint64, u *UnitCtx, low, high uint64) (end uint64, ok bool, err error) {
	rows, err := DecodeLines(s.Line, off, u.AddrSize)
	if err != nil {
		return 0, false, err
	}
	firstLine := int64(-1)
	var best, other uint64 // other: the first row past low of another line
	otherOK := false
	for _, r := range rows {
		if r.Addr < low || r.Addr >= high || !r.stmt {
			continue
		}
		switch {
		case r.prologueEnd && (!ok || r.Addr < best):
			best, ok = r.Addr, true
		case r.Addr == low && firstLine < 0:
			firstLine = int64(r.Line)
		case r.Addr > low && firstLine >= 0 && int64(r.Line) != firstLine && (!otherOK || r.Addr < other):
			other, otherOK = r.Addr, true
		}
	}
	if ok {
		return best, true, nil
	}
	return other, otherOK, nil
}
