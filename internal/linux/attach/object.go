package attach

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/kdtrace/kdtrace/internal/amd64"
)

// An object is an ELF file that user probes go in: its loaded segments,
// to turn addresses into the file offsets uprobes take, and its function
// symbols, to check that offsets are instruction boundaries.
type object struct {
	path  string // as given
	file  string // where to read it: through the process's root when it has one
	f     *elf.File
	progs []*elf.Prog
	funcs []elf.Symbol // defined functions, by address

	decoded map[uint64]decoded // by address: many offsets of one function decode it once
}

type decoded struct {
	fn   *amd64.Function
	code []byte
}

// objects opens each object once for one call.
type objects map[string]*object

func (objs objects) open(path string, pid int) (*object, error) {
	key := strconv.Itoa(pid) + ":" + path
	if o, ok := objs[key]; ok {
		return o, nil
	}
	file := path
	if pid != 0 {
		// The process may see another root (a container): its path
		// names the file there.
		if root := filepath.Join("/proc", strconv.Itoa(pid), "root", path); fileExists(root) {
			file = root
		}
	}
	f, err := elf.Open(file)
	if err != nil {
		// The site's error names the object already.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	o := &object{path: path, file: file, f: f, decoded: map[uint64]decoded{}}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			o.progs = append(o.progs, p)
		}
	}
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, err := read()
		if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
			f.Close()
			return nil, err
		}
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF && s.Size > 0 {
				o.funcs = append(o.funcs, s)
			}
		}
	}
	sort.SliceStable(o.funcs, func(i, j int) bool { return o.funcs[i].Value < o.funcs[j].Value })
	objs[key] = o
	return o, nil
}

func (objs objects) close() {
	for _, o := range objs {
		o.f.Close()
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// fileOffset returns the file offset of the byte at addr, which must lie
// in the file's part of a loaded segment (executable, when exec is set).
func (o *object) fileOffset(addr uint64, exec bool) (uint64, error) {
	for _, p := range o.progs {
		if exec && p.Flags&elf.PF_X == 0 {
			continue
		}
		if addr >= p.Vaddr && addr-p.Vaddr < p.Filesz {
			return addr - p.Vaddr + p.Off, nil
		}
	}
	what := "loaded"
	if exec {
		what = "executable"
	}
	return 0, fmt.Errorf("address %#x is in no %s part of %s", addr, what, o.path)
}

// function returns the function symbol that holds addr, the innermost
// where symbols nest.
func (o *object) function(addr uint64) (elf.Symbol, bool) {
	i := sort.Search(len(o.funcs), func(i int) bool { return o.funcs[i].Value > addr })
	for j := i - 1; j >= 0; j-- {
		if s := o.funcs[j]; addr-s.Value < s.Size {
			return s, true
		}
	}
	return elf.Symbol{}, false
}

// code returns the bytes of the function at addr of the given size.
func (o *object) code(addr, size uint64) ([]byte, error) {
	off, err := o.fileOffset(addr, true)
	if err != nil {
		return nil, err
	}
	if end, err := o.fileOffset(addr+size-1, true); err != nil || end != off+size-1 {
		return nil, fmt.Errorf("the function at %#x (%d bytes) is not all in one executable segment of %s", addr, size, o.path)
	}
	f, err := os.Open(o.file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, size)
	if _, err := f.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("%s: reading the function at %#x: %w", o.path, addr, err)
	}
	return b, nil
}

// checkOffset checks that off, from the function of the given size at
// addr, is where an instruction starts, and one a uprobe can trace.
func (o *object) checkOffset(addr, size, off uint64) error {
	d, ok := o.decoded[addr]
	if !ok {
		code, err := o.code(addr, size)
		if err != nil {
			return err
		}
		fn, err := amd64.NewFunction(code, addr)
		if err != nil {
			return fmt.Errorf("cannot decode the function to check offset %s: %w", formatOffset(off, true), err)
		}
		d = decoded{fn, code}
		o.decoded[addr] = d
	}
	if err := checkBoundary(d.fn, off, true); err != nil {
		return err
	}
	if isSyscall(d.code[off:]) {
		// Measured on Linux 6.18: the probe fires, then the process
		// dies of SIGSEGV at a garbage address, the instruction having
		// run out of line.
		return fmt.Errorf("offset %s is a syscall instruction, which a uprobe cannot trace: the traced process would crash", formatOffset(off, true))
	}
	if p, ok := amd64.UprobeRefusedPrefix(d.code[off:]); ok {
		return fmt.Errorf("offset %s is an instruction with a %s prefix, which uprobes refuse", formatOffset(off, true), prefixName(p))
	}
	return nil
}

// prefixName names a legacy prefix UprobeRefusedPrefix reports.
func prefixName(p byte) string {
	switch p {
	case 0x26:
		return "es segment"
	case 0x2e:
		return "cs segment"
	case 0x36:
		return "ss segment"
	case 0x3e:
		return "ds segment"
	}
	return "lock"
}

// isSyscall reports whether the instruction at the start of b is
// syscall, prefixes aside.
func isSyscall(b []byte) bool {
	for len(b) > 0 && isPrefix(b[0]) {
		b = b[1:]
	}
	return len(b) >= 2 && b[0] == 0x0f && b[1] == 0x05
}

func isPrefix(c byte) bool {
	switch c {
	case 0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65:
		return true
	}
	return c&0xf0 == 0x40 // REX
}

// checkBoundary checks that off, from fn's entry, is where an
// instruction starts, as the amd64 decoder found them. The kernel does
// not check it for uprobes, and a probe inside an instruction corrupts
// the traced program.
func checkBoundary(fn *amd64.Function, off uint64, hex bool) error {
	err := fn.CheckOffset(off)
	var oe *amd64.OffsetError
	if errors.As(err, &oe) {
		return &boundaryError{OffsetError: oe, Hex: hex}
	}
	return err
}

// A BoundaryError is an offset that is not where an instruction starts,
// with the nearest ones that are.
type boundaryError struct {
	*amd64.OffsetError
	Hex bool // offsets are written in hex, as the pid provider names them
}

func (e *boundaryError) Error() string {
	oe := *e.OffsetError
	oe.Hex = e.Hex
	return oe.Error()
}

func (e *boundaryError) Unwrap() error { return e.OffsetError }

func formatOffset(off uint64, hex bool) string {
	if hex {
		return "0x" + strconv.FormatUint(off, 16)
	}
	return strconv.FormatUint(off, 10)
}
