package elffile

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/kdtrace/kdtrace/internal/buildid"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
	"github.com/kdtrace/kdtrace/internal/mmap"
)

// File is an open ELF file, mapped into memory where the OS allows.
type File struct {
	Path   string
	F      *elf.File
	Osf    *os.File
	mapped []byte
	Size   int64
	Mtime  time.Time
	// Addrs holds the address of each section. For ET_REL files (kernel
	// modules) it is a layout of our own, since their sections all start
	// at 0: SHF_ALLOC sections are placed one after another, so that
	// addresses from the DWARF (after relocation) and the symbol table
	// agree and offsets from a symbol's start are right.
	Addrs []uint64
	// end is the end of that layout: symbols a module does not define
	// (the kernel's functions, its return thunk) are placed past it,
	// so that a branch to one leaves the module's code.
	end uint64
	// text holds the executable sections of an ET_REL file with their
	// relocations applied, by section index, made on first use.
	text map[int][]byte
}

// ErrNotELF is the error of opening a file that is not an ELF file.
var ErrNotELF = errors.New("not an ELF file")

// Open opens and checks an ELF file this package can read: the error
// names the file and says what is wrong with it.
func Open(path string) (*File, error) {
	osf, err := os.Open(path)
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return nil, fmt.Errorf("%s: %w", path, pe.Err) // "no such file or directory"
	}
	if err != nil {
		return nil, err
	}
	st, err := osf.Stat()
	if err != nil {
		osf.Close()
		return nil, err
	}
	// What a file is not is said plainly, rather than as debug/elf's
	// "bad magic number '[114 111 111 116]'" or a read error.
	var magic [len(elf.ELFMAG)]byte
	if st.IsDir() {
		osf.Close()
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	if _, err := osf.ReadAt(magic[:], 0); err != nil || string(magic[:]) != elf.ELFMAG {
		osf.Close()
		return nil, fmt.Errorf("%s: %w", path, ErrNotELF)
	}
	f, err := elf.NewFile(osf)
	if err != nil {
		osf.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Data != elf.ELFDATA2LSB {
		osf.Close()
		return nil, fmt.Errorf("%s: big-endian ELF is not supported", path)
	}
	e := &File{Path: path, F: f, Osf: osf, Size: st.Size(), Mtime: st.ModTime()}
	// Without a mapping, sections are read with ReadAt instead.
	e.mapped, _ = mmap.Map(osf, st.Size())
	e.Addrs = make([]uint64, len(f.Sections))
	var next uint64
	for i, s := range f.Sections {
		switch {
		case f.Type != elf.ET_REL:
			e.Addrs[i] = s.Addr
		case s.Flags&elf.SHF_ALLOC != 0:
			if a := s.Addralign; a > 1 {
				next = (next + a - 1) &^ (a - 1)
			}
			e.Addrs[i] = next
			next += s.Size
		}
	}
	e.end = next
	return e, nil
}

func (e *File) Close() error {
	err := mmap.Unmap(e.mapped)
	e.mapped = nil
	if cerr := e.Osf.Close(); err == nil {
		err = cerr
	}
	return err
}

// Data returns a section's contents, decompressed (SHF_COMPRESSED or the
// older .zdebug convention). Uncompressed sections of a mapped file are
// not copied.
func (e *File) Data(s *elf.Section) ([]byte, error) {
	if s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	if s.Flags&elf.SHF_COMPRESSED == 0 && e.mapped != nil {
		if s.Offset > uint64(len(e.mapped)) || s.FileSize > uint64(len(e.mapped))-s.Offset {
			return nil, fmt.Errorf("section %s extends past the end of the file", s.Name)
		}
		d := e.mapped[s.Offset : s.Offset+s.FileSize]
		if !strings.HasPrefix(s.Name, ".zdebug") {
			return d, nil
		}
		return unzdebug(s.Name, d)
	}
	d, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("section %s: %w", s.Name, err)
	}
	if strings.HasPrefix(s.Name, ".zdebug") {
		return unzdebug(s.Name, d)
	}
	return d, nil
}

// unzdebug decompresses a .zdebug section: "ZLIB", a big-endian 64-bit
// size, then a zlib stream.
func unzdebug(name string, d []byte) ([]byte, error) {
	if len(d) < 12 || string(d[:4]) != "ZLIB" {
		return d, nil
	}
	n := binary.BigEndian.Uint64(d[4:12])
	r, err := zlib.NewReader(bytes.NewReader(d[12:]))
	if err != nil {
		return nil, fmt.Errorf("section %s: %w", name, err)
	}
	out := make([]byte, n)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, fmt.Errorf("section %s: %w", name, err)
	}
	return out, nil
}

// BuildID returns the hex GNU build-id from the note sections, or "".
func (e *File) BuildID() string {
	for _, s := range e.F.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		d, err := e.Data(s)
		if err != nil {
			continue
		}
		if id := buildid.Note(d, e.F.ByteOrder); id != nil {
			return hex.EncodeToString(id)
		}
	}
	return ""
}

// DebugLink returns the file name and CRC32 of .gnu_debuglink.
func (e *File) DebugLink() (name string, crc uint32, ok bool) {
	s := e.F.Section(".gnu_debuglink")
	if s == nil {
		return "", 0, false
	}
	d, err := e.Data(s)
	if err != nil {
		return "", 0, false
	}
	i := bytes.IndexByte(d, 0)
	if i <= 0 {
		return "", 0, false
	}
	p := (i + 4) &^ 3 // the NUL, then padding to 4 bytes
	if p+4 > len(d) {
		return "", 0, false
	}
	return string(d[:i]), binary.LittleEndian.Uint32(d[p:]), true
}

// HasDWARF reports whether the file carries DWARF (not just the empty
// NOBITS headers a stripped file keeps).
func (e *File) HasDWARF() bool {
	for _, name := range []string{".debug_info", ".zdebug_info"} {
		if s := e.F.Section(name); s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0 {
			return true
		}
	}
	return false
}

// Dwarf loads the DWARF sections, applying relocations in ET_REL files.
func (e *File) Dwarf() (*dwarfread.DwarfSections, error) {
	d := new(dwarfread.DwarfSections)
	secs := map[string]*[]byte{
		"info": &d.Info, "abbrev": &d.Abbrev, "str": &d.Str, "line_str": &d.LineStr,
		"str_offsets": &d.StrOffsets, "addr": &d.Addr, "ranges": &d.Ranges,
		"rnglists": &d.RngLists, "line": &d.Line, "loc": &d.Loc, "loclists": &d.LocLists,
	}
	for i, s := range e.F.Sections {
		var key string
		switch {
		case strings.HasPrefix(s.Name, ".debug_"):
			key = s.Name[len(".debug_"):]
		case strings.HasPrefix(s.Name, ".zdebug_"):
			key = s.Name[len(".zdebug_"):]
		default:
			continue
		}
		p := secs[key]
		if p == nil {
			continue
		}
		b, err := e.Data(s)
		if err != nil {
			return nil, err
		}
		if e.F.Type == elf.ET_REL {
			if b, err = e.Relocate(i, b); err != nil {
				return nil, fmt.Errorf("relocating %s: %w", s.Name, err)
			}
		} else if key == "info" && e.mapped != nil && s.Flags&elf.SHF_COMPRESSED == 0 && s.Name == ".debug_info" {
			d.InfoAt = io.NewSectionReader(e.Osf, int64(s.Offset), int64(s.FileSize))
		}
		*p = b
	}
	if len(d.Info) == 0 {
		return nil, errors.New("no .debug_info section")
	}
	return d, nil
}

// Relocate applies the SHT_RELA sections that target section idx to a
// copy of its data.
func (e *File) Relocate(idx int, b []byte) ([]byte, error) {
	var syms []elf.Symbol
	copied := false
	for _, r := range e.F.Sections {
		if r.Type != elf.SHT_RELA || int(r.Info) != idx {
			continue
		}
		if syms == nil {
			var err error
			if syms, err = e.F.Symbols(); err != nil {
				return nil, err
			}
		}
		rd, err := e.Data(r)
		if err != nil {
			return nil, err
		}
		if !copied {
			b = append([]byte(nil), b...)
			copied = true
		}
		for ; len(rd) >= 24; rd = rd[24:] {
			off := binary.LittleEndian.Uint64(rd)
			info := binary.LittleEndian.Uint64(rd[8:])
			add := binary.LittleEndian.Uint64(rd[16:])
			si, typ := info>>32, uint32(info)
			var v uint64
			if si > 0 && si <= uint64(len(syms)) {
				s := syms[si-1] // Symbols omits the null symbol
				switch {
				case s.Section == elf.SHN_UNDEF:
					v = e.end + 16*si
				case int(s.Section) < len(e.Addrs):
					v = s.Value + e.Addrs[s.Section]
				default:
					v = s.Value
				}
			}
			v += add
			var size uint64
			switch e.F.Machine {
			case elf.EM_X86_64:
				switch elf.R_X86_64(typ) {
				case elf.R_X86_64_64:
					size = 8
				case elf.R_X86_64_32, elf.R_X86_64_32S:
					size = 4
				case elf.R_X86_64_PC32, elf.R_X86_64_PLT32:
					// Relative to the field, in the package's layout:
					// .eh_frame's and ORC's addresses, and branches in
					// code (S + A - P).
					size = 4
					v -= e.Addrs[idx] + off
				}
			case elf.EM_AARCH64:
				switch elf.R_AARCH64(typ) {
				case elf.R_AARCH64_ABS64:
					size = 8
				case elf.R_AARCH64_ABS32:
					size = 4
				}
			}
			if size == 0 || off+size > uint64(len(b)) {
				continue
			}
			if size == 8 {
				binary.LittleEndian.PutUint64(b[off:], v)
			} else {
				binary.LittleEndian.PutUint32(b[off:], uint32(v))
			}
		}
	}
	return b, nil
}

// Symbols returns the STT_FUNC symbols with their addresses, from
// .symtab or, in a stripped file, .dynsym; and the symbols isThunk (if
// not nil) says are thunks.
func (e *File) Symbols(isThunk func(name string) bool) (funcs, thunks []elf.Symbol, err error) {
	syms, err := e.F.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		syms, err = e.F.DynamicSymbols()
	}
	if err != nil {
		if errors.Is(err, elf.ErrNoSymbols) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF || s.Name == "" {
			continue
		}
		if int(s.Section) < len(e.Addrs) && e.F.Type == elf.ET_REL {
			s.Value += e.Addrs[s.Section]
		}
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			funcs = append(funcs, s)
		}
		if isThunk != nil && isThunk(s.Name) {
			thunks = append(thunks, s)
		}
	}
	return funcs, thunks, nil
}

// textData returns executable section i, for an ET_REL file with its
// relocations applied: unrelocated, every call and jump out of a module
// (a tail call, a jump to the return thunk) reads as a branch to the
// next instruction.
func (e *File) textData(i int, s *elf.Section) ([]byte, error) {
	if e.F.Type != elf.ET_REL {
		return e.Data(s)
	}
	if d, ok := e.text[i]; ok {
		return d, nil
	}
	d, err := e.Data(s)
	if err != nil {
		return nil, err
	}
	if d, err = e.Relocate(i, d); err != nil {
		return nil, fmt.Errorf("relocating %s: %w", s.Name, err)
	}
	if e.text == nil {
		e.text = map[int][]byte{}
	}
	e.text[i] = d
	return d, nil
}

// Code returns the bytes at [addr, addr+size) from the executable
// section holding them, relocated.
func (e *File) Code(addr, size uint64) ([]byte, error) {
	for i, s := range e.F.Sections {
		if s.Flags&elf.SHF_EXECINSTR == 0 || s.Type == elf.SHT_NOBITS {
			continue
		}
		lo := e.Addrs[i]
		if addr < lo || addr-lo >= s.Size || size > s.Size-(addr-lo) {
			continue
		}
		d, err := e.textData(i, s)
		if err != nil {
			return nil, err
		}
		out := make([]byte, size)
		copy(out, d[addr-lo:])
		return out, nil
	}
	return nil, fmt.Errorf("%s: no executable section holds [%#x, %#x)", e.Path, addr, addr+size)
}

// Section returns the name of the allocated section holding addr.
func (e *File) Section(addr uint64) (string, bool) {
	for i, s := range e.F.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		if lo := e.Addrs[i]; addr >= lo && addr-lo < s.Size {
			return s.Name, true
		}
	}
	return "", false
}
