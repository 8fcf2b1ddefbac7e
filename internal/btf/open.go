package btf

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/cachedir"
	"github.com/kdtrace/kdtrace/internal/mmap"
)

// sysfsDir is where a Linux kernel publishes its BTF and its modules'.
const sysfsDir = "/sys/kernel/btf"

// KernelModule is the name of the kernel's own module, as D scopes it
// (vmlinux`struct task_struct).
const KernelModule = "vmlinux"

// A Module holds the types of one BTF file: the kernel's or a kernel
// module's. It implements types.Module and types.EnumValues. A Module
// may be used from several goroutines.
type Module struct {
	name    string
	file    string
	base    *Module // the base of split BTF, or nil
	types   []byte  // the type section, little-endian
	strs    []byte  // the string section
	firstID uint32  // the ID of the first record; IDs below are base's
	strBase uint32  // the string offset of strs[0]; offsets below are base's

	mu      sync.Mutex
	indexed bool
	err     error         // why the type section could not be walked
	count   uint32        // the number of records
	offs    []uint32      // the offsets in types of every stride-th record, from firstID's
	named   []namedRecord // the records of typeTable's kinds with names, after a walk
	// narrowInts says that some INT has fewer bits than bytes or an
	// offset: only then can a struct without kind_flag have bit-fields.
	narrowInts bool
	names      [numTables]*table
	sizes      [numTables]uint32 // the number of references in each table
	enums      []enumRef         // enumerators, for names[enumTable]
	conv       converter

	cache    *cachedir.Dir // where the index is kept between runs, or nil
	cacheKey string        // the index's name there, less its suffix
}

// An Error reports a BTF file that could not be read or is malformed.
type Error struct {
	File string // the file read
	Err  error  // the cause
}

func (e *Error) Error() string { return e.File + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func (m *Module) errorf(format string, args ...any) error {
	return &Error{File: m.file, Err: fmt.Errorf(format, args...)}
}

// Kernel opens the running kernel's BTF, /sys/kernel/btf/vmlinux.
func Kernel() (*Module, error) {
	return Open(filepath.Join(sysfsDir, KernelModule), nil)
}

// LoadModule opens the BTF of the running kernel's module called name,
// /sys/kernel/btf/<name>, which is split BTF based on the kernel's, as
// Kernel returns it.
func LoadModule(kernel *Module, name string) (*Module, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return nil, &Error{File: sysfsDir, Err: fmt.Errorf("bad module name %q", name)}
	}
	file := filepath.Join(sysfsDir, name)
	if kernel == nil {
		return nil, &Error{File: file, Err: errors.New("no kernel BTF to base the module's on")}
	}
	return Open(file, kernel)
}

// modules returns the names of the running kernel's modules that have
// BTF, sorted, leaving out the kernel itself.
func modules() ([]string, error) {
	ents, err := os.ReadDir(sysfsDir)
	if err != nil {
		return nil, fileError(sysfsDir, err)
	}
	var names []string
	for _, e := range ents {
		if e.Name() != KernelModule {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Open reads the BTF in file: raw BTF, as /sys/kernel/btf publishes it,
// or the .BTF section of an ELF file such as an offline vmlinux or a
// module's .ko. With a nil base the file holds base BTF, whose types
// belong to module vmlinux; otherwise it holds split BTF extending base,
// whose types belong to the module named by the file (ext4 for
// /sys/kernel/btf/ext4 or ext4.ko).
//
// Open reads only the header; the types are indexed on the first
// lookup and converted one name at a time.
func Open(file string, base *Module) (*Module, error) {
	data, mapped, err := readFile(file)
	if err != nil {
		return nil, fileError(file, err)
	}
	name := KernelModule
	if base != nil {
		name = strings.ReplaceAll(strings.TrimSuffix(filepath.Base(file), ".ko"), "-", "_")
	}
	m, err := newModule(file, name, data, base)
	if err != nil {
		if mapped {
			mmap.Unmap(data)
		}
		return nil, err
	}
	if mapped {
		// The converted types copy what they keep, so the mapping can
		// go with the Module.
		runtime.AddCleanup(m, func(b []byte) { mmap.Unmap(b) }, data)
	}
	return m, nil
}

// fileError wraps err from the file system as an *Error for file,
// dropping the file name an *fs.PathError already carries.
func fileError(file string, err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		err = pe.Err
	}
	return &Error{File: file, Err: err}
}

// newModule reads data, raw BTF or an ELF file, as the module called
// name.
func newModule(file, name string, data []byte, base *Module) (*Module, error) {
	m := &Module{name: name, file: file, base: base, firstID: 1}
	if bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		sec, err := elfSection(data)
		if err != nil {
			return nil, m.errorf("%v", err)
		}
		data = sec
	}
	h, err := parseHeader(data)
	if err != nil {
		return nil, m.errorf("%v", err)
	}
	m.types = data[h.typeStart:h.typeEnd]
	if h.big {
		m.types = swapWords(m.types)
	}
	m.strs = data[h.strStart:h.strEnd]
	if base != nil {
		if err := base.index(); err != nil {
			return nil, err
		}
		m.firstID = base.firstID + base.count
		m.strBase = base.strBase + uint32(len(base.strs))
	} else if len(m.strs) == 0 || m.strs[0] != 0 {
		// Offset 0 is the empty name of anonymous types.
		return nil, m.errorf("string section does not start with an empty string")
	}
	if len(m.strs) > 0 && m.strs[len(m.strs)-1] != 0 {
		return nil, m.errorf("string section does not end in NUL")
	}
	return m, nil
}

// elfSection returns the .BTF section of the ELF file in data.
func elfSection(data []byte) ([]byte, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	s := f.Section(".BTF")
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, errors.New("ELF file without a .BTF section")
	}
	if s.Flags&elf.SHF_COMPRESSED != 0 {
		return s.Data()
	}
	if s.Offset > uint64(len(data)) || s.Size > uint64(len(data))-s.Offset {
		return nil, fmt.Errorf(".BTF section [%d, +%d) past the end of the file", s.Offset, s.Size)
	}
	return data[s.Offset : s.Offset+s.Size], nil
}

// readFile maps file, or reads it where it cannot be mapped: sysfs
// allows mapping /sys/kernel/btf/vmlinux only since 2025, and not the
// modules' files. Reading the kernel's costs several milliseconds, as
// sysfs returns it a page per read call; mapping it costs none.
func readFile(file string) (data []byte, mapped bool, err error) {
	data, err = mmap.MapFile(file)
	if err == nil {
		return data, true, nil
	}
	if !errors.Is(err, mmap.ErrUnsupported) {
		return nil, false, err
	}
	data, err = os.ReadFile(file)
	return data, false, err
}

// ModuleName returns the module's name: vmlinux for the kernel.
func (m *Module) ModuleName() string { return m.name }

var (
	_ types.Module     = (*Module)(nil)
	_ types.EnumValues = (*Module)(nil)
)

// RawBTF returns the file the module was read from, and its type
// section, little-endian, and string section, for a reader that walks
// the records itself (package probe lists the functions from them
// rather than reading the file again). The caller must not modify
// them, nor keep them past the Module's life: they may be the file
// mapped.
func (m *Module) RawBTF() (file string, types, strs []byte) {
	return m.file, m.types, m.strs
}
