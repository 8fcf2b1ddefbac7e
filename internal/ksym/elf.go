package ksym

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// ReadELF reads the symbol table (.symtab) of the kernel image at path,
// a vmlinux, as module KernelModule: its functions (STT_FUNC) and data
// (STT_OBJECT, STT_TLS, and STT_NOTYPE symbols of allocated sections,
// such as the linker's _stext), with their sizes. Code reads functions
// from the file's sections.
func ReadELF(path string) (*Table, error) {
	f, err := elf.Open(path)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%s: not an ELF file", path)
		}
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b := newBuilder(len(syms))
	for _, s := range syms {
		if s.Name == "" || s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE && s.Section != elf.SHN_ABS {
			continue
		}
		typ := elf.ST_TYPE(s.Info)
		switch typ {
		case elf.STT_FUNC, elf.STT_OBJECT, elf.STT_TLS:
		case elf.STT_NOTYPE:
			if s.Section == elf.SHN_ABS || f.Sections[s.Section].Flags&elf.SHF_ALLOC == 0 {
				continue
			}
		default:
			continue
		}
		perCPU := s.Section < elf.SHN_LORESERVE && f.Sections[s.Section].Name == perCPUSection
		b.add(entry{name: s.Name, addr: s.Value, size: s.Size, fn: typ == elf.STT_FUNC, perCPU: perCPU})
	}
	t := b.build()
	t.sized = true
	t.source = path + "'s symbol table"
	img := &elfText{path: path}
	for _, sec := range f.Sections {
		if sec.Flags&elf.SHF_ALLOC != 0 && sec.Type != elf.SHT_NOBITS {
			img.secs = append(img.secs, span{addr: sec.Addr, size: sec.Size, off: sec.Offset})
		}
	}
	t.text = img.read
	return t, nil
}

// span is where a range of addresses lies in a file.
type span struct{ addr, size, off uint64 }

// find returns the file offset of [addr, addr+n), which must lie in one
// span.
func find(spans []span, addr, n uint64) (uint64, bool) {
	for _, s := range spans {
		if addr >= s.addr && addr-s.addr < s.size && n <= s.size-(addr-s.addr) {
			return s.off + addr - s.addr, true
		}
	}
	return 0, false
}

// elfText reads an image's code from its file.
type elfText struct {
	path string
	secs []span
}

func (e *elfText) read(addr, n uint64) ([]byte, error) {
	off, ok := find(e.secs, addr, n)
	if !ok {
		return nil, fmt.Errorf("%s: no section holds [%#x, %#x)", e.path, addr, addr+n)
	}
	f, err := os.Open(e.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("%s: %w", e.path, err)
	}
	return b, nil
}

// kcoreFile reads the running kernel's memory through /proc/kcore, an
// ELF core file whose PT_LOAD segments map kernel virtual addresses. It
// is opened on first use and kept open.
type kcoreFile struct {
	path string

	once sync.Once
	f    *os.File
	segs []span
	err  error
}

func (k *kcoreFile) open() {
	f, err := os.Open(k.path)
	if errors.Is(err, fs.ErrNotExist) {
		k.err = fmt.Errorf("%s does not exist: the kernel was built without CONFIG_PROC_KCORE", k.path)
		return
	}
	if err != nil {
		k.err = err
		return
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		f.Close()
		k.err = fmt.Errorf("%s: %w", k.path, err)
		return
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD {
			k.segs = append(k.segs, span{addr: p.Vaddr, size: p.Memsz, off: p.Off})
		}
	}
	k.f = f
}

func (k *kcoreFile) read(addr, n uint64) ([]byte, error) {
	k.once.Do(k.open)
	if k.err != nil {
		return nil, k.err
	}
	off, ok := find(k.segs, addr, n)
	if !ok {
		return nil, fmt.Errorf("%s: no segment maps [%#x, %#x)", k.path, addr, addr+n)
	}
	b := make([]byte, n)
	if _, err := k.f.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("%s: %w", k.path, err)
	}
	return b, nil
}
