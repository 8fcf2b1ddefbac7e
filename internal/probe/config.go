package probe

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kdtrace/kdtrace/internal/cachedir"
	"github.com/kdtrace/kdtrace/internal/ksym"
)

// Config says where a catalog finds what it lists. The zero Config
// gives a live catalog the running system's files and no argument types.
type Config struct {
	// Types returns the type information of a kernel module, "vmlinux"
	// for the kernel itself: for a running Linux kernel, btf.Kernel and
	// btf.LoadModule; for an image, btf.Open on it. A nil Types, or a
	// nil KernelTypes, leaves fbt and syscall probes without argument
	// types.
	Types func(module string) (KernelTypes, error)

	// Warn receives what leaves probes out of a match without failing
	// it: the functions a pid description's glob names whose first
	// instruction uprobes refuse. Nil drops it.
	Warn func(error)

	// MaxPIDProbes is how many probes the pid providers may make (the
	// fasttrap-max-probes tunable); 0 means MaxPIDProbes.
	MaxPIDProbes int

	// Syscalls, if set, are the system calls of the kernel's
	// architecture by name, sorted. The syscall provider lists the
	// kernel's handlers (__x64_sys_name) of these alone: a kernel has
	// handlers for the compat calls of 32-bit programs too
	// (adjtimex_time32, chown16), which are no calls of its own and
	// cannot be traced as such. Its probes are numbered over these
	// calls, so that numbering the probes of the providers after it
	// (fbt, kinst) reads no list of the kernel's handlers. nil lists
	// every handler and numbers over them.
	Syscalls []string

	// Root is prepended to the paths of the running system's files
	// (/sys/kernel/btf, /proc, tracefs), for tests; "" for /.
	Root string

	// Symbols returns the running kernel's symbol table, whose Code
	// gives kinst the instructions of a function; nil reads
	// /proc/kallsyms and /proc/kcore under Root when kinst first needs
	// them.
	Symbols func() (*ksym.Table, error)

	// DebugFile returns the separate debug file of the object at
	// path, whose symbol table a stripped object's probes are looked
	// up in; nil looks on the machine alone (debuginfo.DebugFile).
	DebugFile func(path string) (string, error)

	// Cache, if set, keeps the running kernel's syscall handlers
	// between runs, under its build-id (/sys/kernel/notes under Root):
	// they are the image's symbols, the same at every boot, and reading
	// them from /proc/kallsyms takes 55 ms of system time.
	Cache *cachedir.Dir
}

func (c *Config) path(p string) string { return filepath.Join(c.Root, p) }

// syscallPrefix returns the prefix of the names of an architecture's
// syscall handlers (the kernel's __SYSCALL_WRAPPER). A switch, not a
// map, so that the table costs nothing at start-up.
func syscallPrefix(arch string) string {
	switch arch {
	case "amd64":
		return "__x64_sys_"
	case "386":
		return "__ia32_sys_"
	case "arm64":
		return "__arm64_sys_"
	case "riscv64":
		return "__riscv_sys_"
	case "s390x":
		return "__s390x_sys_"
	}
	return "sys_"
}

// elfArch returns the GOARCH of an ELF machine, "" for one kdtrace
// does not know.
func elfArch(m elf.Machine) string {
	switch m {
	case elf.EM_X86_64:
		return "amd64"
	case elf.EM_386:
		return "386"
	case elf.EM_AARCH64:
		return "arm64"
	case elf.EM_RISCV:
		return "riscv64"
	case elf.EM_S390:
		return "s390x"
	}
	return ""
}

// Offline returns a catalog of a kernel that is not running, for
// compiling against it (kdtrace --kernel FILE): fbt and kinst list the
// functions of the ELF symbol table of image, a vmlinux, and of each
// module (.ko files, whose module name is the file's without .ko, with
// dashes as underscores); kinst reads their code from the files to list
// offsets; syscall lists the system calls whose handlers the image has.
// The dtrace and profile providers are as always; no process can be
// traced. The files are read on first use, and read errors are reported
// then, by Walk and Match; Offline itself checks only that image opens.
func Offline(image string, modules []string, cfg Config) (*Catalog, error) {
	f, err := elf.Open(image)
	if err != nil {
		return nil, fmt.Errorf("kernel image: %w", err)
	}
	arch := elfArch(f.Machine)
	f.Close()
	k := &kernel{
		types:         cfg.Types,
		syscallPrefix: syscallPrefix(arch),
		code:          elfCode,
	}
	k.load = func() ([]*funcList, error) {
		var ls []*funcList
		for i, file := range append([]string{image}, modules...) {
			mod := KernelModule
			if i > 0 {
				mod = strings.ReplaceAll(strings.TrimSuffix(filepath.Base(file), ".ko"), "-", "_")
			}
			l, err := loadELFFuncs(file, mod)
			if err != nil {
				return nil, err
			}
			ls = append(ls, l)
		}
		return ls, nil
	}
	return kernelCatalog(&source{k: k, cfg: &cfg, arch: arch}), nil
}

// loadELFFuncs lists the functions of the symbol table of the ELF file
// at path: defined STT_FUNC symbols in executable sections.
func loadELFFuncs(path, module string) (*funcList, error) {
	data, release, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	defer release()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var b funcListBuilder
	add := func(name []byte, info byte, shndx elf.SectionIndex, value, size uint64) {
		if elf.ST_TYPE(info) != elf.STT_FUNC || shndx == elf.SHN_UNDEF || int(shndx) >= len(f.Sections) || len(name) == 0 {
			return
		}
		sec := f.Sections[shndx]
		if sec.Flags&elf.SHF_EXECINSTR == 0 || sec.Type == elf.SHT_NOBITS {
			return
		}
		r := symRange{addr: value, size: size}
		rel := value
		if f.Type != elf.ET_REL {
			rel -= sec.Addr
		}
		if rel <= sec.Size && size <= sec.Size-rel {
			r.off = sec.Offset + rel
		} else {
			r.size = 0 // past its section: no code to read
		}
		b.addSym(name, r)
	}
	if !symtab64(f, data, add) {
		syms, err := f.Symbols()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, s := range syms {
			add([]byte(s.Name), s.Info, s.Section, s.Value, s.Size)
		}
	}
	l := b.build(module)
	l.file = path
	return l, nil
}

// symtab64 calls add for each symbol of the symbol table of f, a
// little-endian ELF64 file mapped at data, reading the names in place:
// debug/elf's Symbols makes a string of each of a vmlinux's 130,000
// names, a quarter of a warm locals-> compile. It reports false, having
// called nothing, for a file it does not read so (compressed or
// misplaced tables, another class or byte order).
func symtab64(f *elf.File, data []byte, add func(name []byte, info byte, shndx elf.SectionIndex, value, size uint64)) bool {
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		return false
	}
	st := f.SectionByType(elf.SHT_SYMTAB)
	if st == nil || st.Link >= uint32(len(f.Sections)) {
		return false
	}
	strs := f.Sections[st.Link]
	section := func(s *elf.Section) ([]byte, bool) {
		if s.Flags&elf.SHF_COMPRESSED != 0 || s.Type == elf.SHT_NOBITS || s.Offset > uint64(len(data)) || s.Size > uint64(len(data))-s.Offset {
			return nil, false
		}
		return data[s.Offset : s.Offset+s.Size], true
	}
	syms, ok1 := section(st)
	names, ok2 := section(strs)
	if !ok1 || !ok2 || len(syms)%elf.Sym64Size != 0 {
		return false
	}
	le := binary.LittleEndian
	// The first entry is the null symbol.
	for i := elf.Sym64Size; i < len(syms); i += elf.Sym64Size {
		e := syms[i : i+elf.Sym64Size]
		var name []byte
		if off := le.Uint32(e); int(off) < len(names) {
			name = names[off:]
			if n := bytes.IndexByte(name, 0); n >= 0 {
				name = name[:n]
			}
		}
		add(name, e[4], elf.SectionIndex(le.Uint16(e[6:])), le.Uint64(e[8:]), le.Uint64(e[16:]))
	}
	return true
}

// elfCode reads the code of function i of l from its ELF file.
func elfCode(l *funcList, i int) (uint64, []byte, error) {
	r := l.syms[i]
	if l.file == "" || r.size == 0 {
		return r.addr, nil, nil
	}
	f, err := os.Open(l.file)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	code := make([]byte, r.size)
	if _, err := f.ReadAt(code, int64(r.off)); err != nil {
		return 0, nil, fmt.Errorf("%s: code of %s: %w", l.file, l.name(i), err)
	}
	return r.addr, code, nil
}
