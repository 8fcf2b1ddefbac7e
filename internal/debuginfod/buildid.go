package debuginfod

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
)

// fileBuildID returns the GNU build-id of the ELF file r, from its note
// sections, or its note segments when it has no section headers.
func fileBuildID(r io.ReaderAt) ([]byte, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, err
	}
	var notes []io.ReaderAt
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOTE {
			notes = append(notes, s)
		}
	}
	if len(f.Sections) == 0 {
		for _, p := range f.Progs {
			if p.Type == elf.PT_NOTE {
				notes = append(notes, p)
			}
		}
	}
	for _, n := range notes {
		b, err := io.ReadAll(io.NewSectionReader(n, 0, 1<<20))
		if err != nil {
			continue
		}
		if id := noteBuildID(b, f.ByteOrder); id != nil {
			return id, nil
		}
	}
	return nil, errors.New("no build-id note")
}

// noteBuildID returns the descriptor of the NT_GNU_BUILD_ID note of
// owner "GNU" in the notes b.
func noteBuildID(b []byte, bo binary.ByteOrder) []byte {
	align := func(n uint32) int { return int((uint64(n) + 3) &^ 3) }
	for len(b) >= 12 {
		namesz, descsz, typ := bo.Uint32(b), bo.Uint32(b[4:]), bo.Uint32(b[8:])
		b = b[12:]
		if align(namesz) > len(b) {
			return nil
		}
		name := b[:namesz]
		b = b[align(namesz):]
		if int(descsz) > len(b) {
			return nil
		}
		desc := b[:descsz]
		if typ == 3 && string(name) == "GNU\x00" && descsz > 0 {
			return desc
		}
		if align(descsz) > len(b) {
			return nil
		}
		b = b[align(descsz):]
	}
	return nil
}
