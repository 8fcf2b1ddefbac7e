package probe

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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

	// Syscall, if set, says whether a name of the kernel's syscall
	// handlers (__x64_sys_name) is a system call of its architecture:
	// where tracefs's syscall events cannot be read, the syscall
	// provider lists the handlers, and a kernel has handlers for the
	// compat calls of 32-bit programs too (adjtimex_time32, chown16),
	// which are no calls of its own and cannot be traced as such.
	// nil lists every handler.
	Syscall func(name string) bool

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
}

func (c *Config) path(p string) string { return filepath.Join(c.Root, p) }

// syscallPrefixes maps an architecture to the prefix of its syscall
// handlers' names (the kernel's __SYSCALL_WRAPPER).
var syscallPrefixes = map[string]string{
	"amd64":   "__x64_sys_",
	"386":     "__ia32_sys_",
	"arm64":   "__arm64_sys_",
	"riscv64": "__riscv_sys_",
	"s390x":   "__s390x_sys_",
}

var elfArch = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_386:     "386",
	elf.EM_AARCH64: "arm64",
	elf.EM_RISCV:   "riscv64",
	elf.EM_S390:    "s390x",
}

func syscallPrefix(arch string) string {
	if p, ok := syscallPrefixes[arch]; ok {
		return p
	}
	return "sys_"
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
	arch := elfArch[f.Machine]
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
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var b funcListBuilder
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || int(s.Section) >= len(f.Sections) || s.Name == "" {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Flags&elf.SHF_EXECINSTR == 0 || sec.Type == elf.SHT_NOBITS {
			continue
		}
		r := symRange{addr: s.Value, size: s.Size}
		rel := s.Value
		if f.Type != elf.ET_REL {
			rel -= sec.Addr
		}
		if rel <= sec.Size && s.Size <= sec.Size-rel {
			r.off = sec.Offset + rel
		} else {
			r.size = 0 // past its section: no code to read
		}
		b.addSym([]byte(s.Name), r)
	}
	l := b.build(module)
	l.file = path
	return l, nil
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
