package debuginfo

import (
	"fmt"
	"path"
)

// lineFiles returns the file table of the line program at off, indexed
// as DW_AT_call_file values are: from 0 in DWARF 5, from 1 before (index
// 0 is then "no file" and left empty). Only the header is read.
func (s *dwarfSections) lineFiles(off uint64, u *unitCtx) ([]string, error) {
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
		dirs, _, err := s.entryTable(&b, &lu, nil)
		if err != nil {
			return nil, fmt.Errorf("line table at %#x: directories: %w", off, err)
		}
		if _, files, err = s.entryTable(&b, &lu, dirs); err != nil {
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
func (s *dwarfSections) entryTable(b *buf, u *unitCtx, dirs []string) (names, files []string, err error) {
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
