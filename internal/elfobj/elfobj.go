package elfobj

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
)

// An Object is an ELF relocatable object.
type Object struct {
	Machine   elf.Machine
	ByteOrder binary.ByteOrder
	OSABI     elf.OSABI
	Sections  []*Section
	Symbols   []Symbol
}

// A Section is one section of an Object. Data is its contents, except
// for a SHT_NOBITS section, which has Size bytes and none in the file.
type Section struct {
	Name  string
	Type  elf.SectionType
	Flags elf.SectionFlag
	Align uint64
	Data  []byte
	Size  uint64
}

// A Symbol names a place in a section: Value is its offset there. A
// symbol with no Section is undefined.
type Symbol struct {
	Name       string
	Section    *Section
	Value      uint64
	Size       uint64
	Bind       elf.SymBind
	Type       elf.SymType
	Visibility elf.SymVis
}

// ELF64's sizes.
const (
	ehdrSize = 64
	shdrSize = 64
	symSize  = 24
)

// Bytes returns the object as an ELF64 file.
func (o *Object) Bytes() ([]byte, error) {
	if o.ByteOrder == nil {
		return nil, errors.New("elfobj: no byte order")
	}
	index := make(map[*Section]int, len(o.Sections))
	for i, s := range o.Sections {
		if s.Name == "" {
			return nil, fmt.Errorf("elfobj: section %d has no name", i+1)
		}
		if _, dup := index[s]; dup {
			return nil, fmt.Errorf("elfobj: section %s listed twice", s.Name)
		}
		if s.Type == elf.SHT_NOBITS && len(s.Data) > 0 {
			return nil, fmt.Errorf("elfobj: SHT_NOBITS section %s has data", s.Name)
		}
		index[s] = i + 1 // after the null section
	}
	// The symbol table: the null symbol, the locals, then the rest.
	var syms []Symbol
	for _, pass := range []bool{true, false} {
		for _, s := range o.Symbols {
			if (s.Bind == elf.STB_LOCAL) == pass {
				syms = append(syms, s)
			}
		}
	}
	nlocal := 1
	for _, s := range o.Symbols {
		if s.Bind == elf.STB_LOCAL {
			nlocal++
		}
	}
	strtab := newStrtab()
	bo := o.ByteOrder
	symtab := make([]byte, symSize, symSize*(len(syms)+1))
	for _, s := range syms {
		shndx := uint16(elf.SHN_UNDEF)
		if s.Section != nil {
			i, ok := index[s.Section]
			if !ok {
				return nil, fmt.Errorf("elfobj: symbol %s is in section %s, which the object does not list", s.Name, s.Section.Name)
			}
			shndx = uint16(i)
		}
		var e [symSize]byte
		bo.PutUint32(e[0:], strtab.add(s.Name))
		e[4] = byte(s.Bind)<<4 | byte(s.Type)&0xf
		e[5] = byte(s.Visibility) & 3
		bo.PutUint16(e[6:], shndx)
		bo.PutUint64(e[8:], s.Value)
		bo.PutUint64(e[16:], s.Size)
		symtab = append(symtab, e[:]...)
	}

	// The sections the object lists, then .symtab, .strtab and
	// .shstrtab.
	nsec := len(o.Sections) + 4
	symIdx, strIdx, shstrIdx := nsec-3, nsec-2, nsec-1
	shstr := newStrtab()
	type placed struct {
		name                uint32
		typ                 elf.SectionType
		flags               elf.SectionFlag
		off, size, align    uint64
		link, info, entsize uint32
	}
	hdrs := make([]placed, nsec)
	file := make([]byte, ehdrSize)
	put := func(data []byte, align uint64) uint64 {
		if align > 1 {
			for uint64(len(file))%align != 0 {
				file = append(file, 0)
			}
		}
		off := uint64(len(file))
		file = append(file, data...)
		return off
	}
	for i, s := range o.Sections {
		h := placed{name: shstr.add(s.Name), typ: s.Type, flags: s.Flags, align: max(s.Align, 1)}
		if s.Type == elf.SHT_NOBITS {
			h.off, h.size = uint64(len(file)), s.Size
		} else {
			h.off, h.size = put(s.Data, h.align), uint64(len(s.Data))
		}
		hdrs[i+1] = h
	}
	hdrs[symIdx] = placed{name: shstr.add(".symtab"), typ: elf.SHT_SYMTAB, align: 8, link: uint32(strIdx), info: uint32(nlocal), entsize: symSize}
	hdrs[symIdx].off, hdrs[symIdx].size = put(symtab, 8), uint64(len(symtab))
	hdrs[strIdx] = placed{name: shstr.add(".strtab"), typ: elf.SHT_STRTAB, align: 1}
	hdrs[strIdx].off, hdrs[strIdx].size = put(strtab.data, 1), uint64(len(strtab.data))
	hdrs[shstrIdx] = placed{name: shstr.add(".shstrtab"), typ: elf.SHT_STRTAB, align: 1}
	hdrs[shstrIdx].off, hdrs[shstrIdx].size = put(shstr.data, 1), uint64(len(shstr.data))

	shoff := put(nil, 8)
	for _, h := range hdrs {
		var e [shdrSize]byte
		bo.PutUint32(e[0:], h.name)
		bo.PutUint32(e[4:], uint32(h.typ))
		bo.PutUint64(e[8:], uint64(h.flags))
		bo.PutUint64(e[24:], h.off)
		bo.PutUint64(e[32:], h.size)
		bo.PutUint32(e[40:], h.link)
		bo.PutUint32(e[44:], h.info)
		bo.PutUint64(e[48:], h.align)
		bo.PutUint64(e[56:], uint64(h.entsize))
		file = append(file, e[:]...)
	}

	h := file[:ehdrSize]
	copy(h, elf.ELFMAG)
	h[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	if bo == binary.BigEndian {
		h[elf.EI_DATA] = byte(elf.ELFDATA2MSB)
	}
	h[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	h[elf.EI_OSABI] = byte(o.OSABI)
	bo.PutUint16(h[16:], uint16(elf.ET_REL))
	bo.PutUint16(h[18:], uint16(o.Machine))
	bo.PutUint32(h[20:], uint32(elf.EV_CURRENT))
	bo.PutUint64(h[40:], shoff)
	bo.PutUint16(h[52:], ehdrSize)
	bo.PutUint16(h[58:], shdrSize)
	bo.PutUint16(h[60:], uint16(nsec))
	bo.PutUint16(h[62:], uint16(shstrIdx))
	return file, nil
}

// A strtab is an ELF string table; equal strings share an entry.
type strtab struct {
	data []byte
	at   map[string]uint32
}

func newStrtab() *strtab { return &strtab{data: []byte{0}, at: map[string]uint32{"": 0}} }

func (t *strtab) add(s string) uint32 {
	if off, ok := t.at[s]; ok {
		return off
	}
	off := uint32(len(t.data))
	t.data = append(append(t.data, s...), 0)
	t.at[s] = off
	return off
}
