package debuginfo

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/index"
)

// Range is a half-open address range [Lo, Hi).
type Range struct {
	Lo, Hi uint64
}

// Symbol is an out-of-line function: an STT_FUNC symbol of an image.
type Symbol struct {
	Module string
	Name   string
	Addr   uint64
	Size   uint64
}

// Copy is one inlined copy of a function.
type Copy struct {
	Module string
	// Caller is the function symbol holding Entry: the outermost
	// out-of-line function, however deeply the copy is nested in other
	// inlined copies. It is "" when no symbol holds Entry.
	Caller     string
	CallerAddr uint64
	CallerSize uint64
	// Offset is Entry-CallerAddr, the offset of a kinst probe at the
	// entry (kinst::Caller:Offset).
	Offset uint64
	// Entry is DW_AT_entry_pc when present (HasEntryPC), else the
	// lowest address of the copy, counting empty ranges.
	Entry      uint64
	HasEntryPC bool
	// Ranges are the copy's code, sorted, merged and non-empty. They
	// may lie outside the caller (e.g. in a foo.cold part); see
	// Set.SymbolAt. A copy whose code was optimised away entirely has
	// no ranges; its Entry still marks where the call was.
	Ranges []Range
	// Folded are the addresses of the copy's empty ranges apart from
	// its code: where code of the call was optimised away, folded into
	// the caller's (gcc records them; a loop's calls can leave nothing
	// else).
	Folded   []uint64
	CallFile string
	CallLine int

	entryView uint32   // DW_AT_GNU_entry_view plus one; 0 when absent
	lineProg  uint32   // the unit's line program, for EntryMarkers
	inner     []uint64 // entries of copies nested in copies of the same function, in the caller
}

// function is what the images know about one function name.
type function struct {
	Name string
	// Exists reports that a DWARF subprogram (even a mere declaration)
	// or a function symbol has this name.
	Exists bool
	// Inline reports that a subprogram of this name carries
	// DW_AT_inline: it is an abstract instance, declared inline or
	// inlined. Copies lists where it was inlined.
	Inline bool
	// OutOfLine lists the function symbols of this name; several when
	// static functions of the same name exist in several units.
	OutOfLine []Symbol
	// Copies are ordered by module (in Set order), caller name, caller
	// address, then offset.
	Copies []Copy
}

// Set is the images searched for functions: a kernel first, then its
// modules by name; or the program images given.
type Set struct {
	images    []*Image
	warnings  []Warning
	kernelErr error
}

// NewSet orders the images, the kernel first and the others by module
// name, and makes a Set of them.
func NewSet(images ...*Image) *Set {
	s := &Set{images: slices.Clone(images)}
	slices.SortStableFunc(s.images, func(a, b *Image) int {
		ak, bk := a.Module != "kernel", b.Module != "kernel"
		if ak != bk {
			if !ak {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Module, b.Module)
	})
	return s
}

// Images returns the images of the set, in search order.
func (s *Set) Images() []*Image { return slices.Clone(s.images) }

// Warnings returns the problems met while building the set, such as a
// module skipped because its debug file did not match.
func (s *Set) Warnings() []Warning { return slices.Clone(s.warnings) }

// KernelError says why a set Kernel made holds no image of the running
// kernel itself, only its modules'; nil when it holds one, and for sets
// of named files.
func (s *Set) KernelError() error { return s.kernelErr }

// Searched describes the images for messages, e.g.
// "/usr/lib/debug/boot/vmlinux-6.1.0-56-amd64 (kernel), ...".
func (s *Set) Searched() string {
	var parts []string
	for _, img := range s.images {
		parts = append(parts, fmt.Sprintf("%s (%s)", img.DebugPath, img.Module))
	}
	if len(parts) == 0 {
		return "no images"
	}
	return strings.Join(parts, ", ")
}

// Close releases the files of all images.
func (s *Set) Close() error {
	var errs []error
	for _, img := range s.images {
		errs = append(errs, img.Close())
	}
	return errors.Join(errs...)
}

// UnknownFunctionError reports a name that no image knows.
type UnknownFunctionError struct {
	Name     string
	Searched string // as Set.Searched
}

func (e *UnknownFunctionError) Error() string {
	return fmt.Sprintf("function %s not found in the debug info of: %s", e.Name, e.Searched)
}

// Lookup returns what the set knows about the function name. For a name
// no image knows, Exists is false and the error is an
// *UnknownFunctionError. An image opened Lazy may index part of its
// DWARF for it first; failing that is the error.
func (s *Set) Lookup(name string) (function, error) {
	fn := function{Name: name}
	for _, img := range s.images {
		x, err := img.indexFor(name)
		if err != nil {
			return fn, err
		}
		f, ok := x.Lookup(name)
		if !ok {
			continue
		}
		fn.Exists = true
		fn.Inline = fn.Inline || f.Flags&index.FuncInline != 0
		for _, sym := range x.SymbolsNamed(name) {
			fn.OutOfLine = append(fn.OutOfLine, img.symbol(x, sym))
		}
		var nested []uint64
		first := len(fn.Copies)
		for i := f.Copies; i < f.Copies+f.N; i++ {
			c := x.CopyAt(int(i))
			if c.Flags&index.CopyNested != 0 {
				nested = append(nested, c.Entry)
				continue
			}
			cp := Copy{
				Module:     img.Module,
				Entry:      c.Entry,
				HasEntryPC: c.Flags&index.CopyEntryPC != 0,
				Ranges:     make([]Range, c.N),
				CallFile:   x.Str(c.File),
				CallLine:   int(c.Line),
				entryView:  c.View,
				lineProg:   c.Stmt,
			}
			cp.Ranges = cp.Ranges[:0]
			for j := range int(c.N) {
				rg := x.RangeAt(int(c.Ranges) + j)
				if rg.Lo == rg.Hi {
					cp.Folded = append(cp.Folded, rg.Lo)
					continue
				}
				cp.Ranges = append(cp.Ranges, Range(rg))
			}
			if c.Sym != index.NoSym {
				sym := x.Sym(c.Sym)
				cp.Caller, cp.CallerAddr, cp.CallerSize = x.Str(sym.Name), sym.Addr, sym.Size
				cp.Offset = c.Entry - sym.Addr
			}
			fn.Copies = append(fn.Copies, cp)
		}
		for k := first; k < len(fn.Copies); k++ {
			c := &fn.Copies[k]
			for _, a := range nested {
				if a >= c.CallerAddr && a < c.CallerAddr+c.CallerSize {
					c.inner = append(c.inner, a)
				}
			}
		}
	}
	if !fn.Exists {
		return fn, &UnknownFunctionError{Name: name, Searched: s.Searched()}
	}
	return fn, nil
}

// symbol returns the symbol s of x, an index of img.
func (img *Image) symbol(x *index.Index, s index.SymRec) Symbol {
	return Symbol{Module: img.Module, Name: x.Str(s.Name), Addr: s.Addr, Size: s.Size}
}

func (s *Set) image(module string) (*Image, error) {
	for _, img := range s.images {
		if img.Module == module {
			return img, nil
		}
	}
	return nil, fmt.Errorf("no module %s among: %s", module, s.Searched())
}

// Code returns the address and bytes of the function symbol caller of a
// module, read from the executable section holding it, for decoding.
// Several static functions of the same name make it an error; use
// CodeAt with the address of the one meant.
func (s *Set) Code(module, caller string) (addr uint64, code []byte, err error) {
	img, err := s.image(module)
	if err != nil {
		return 0, nil, err
	}
	x, err := img.symbols()
	if err != nil {
		return 0, nil, err
	}
	syms := x.SymbolsNamed(caller)
	switch len(syms) {
	case 0:
		return 0, nil, fmt.Errorf("no function symRec %s in %s", caller, img.Path)
	case 1:
	default:
		var addrs []string
		for _, sym := range syms {
			addrs = append(addrs, fmt.Sprintf("%#x", sym.Addr))
		}
		return 0, nil, fmt.Errorf("%d function symbols %s in %s, at %s", len(syms), caller, img.Path, strings.Join(addrs, ", "))
	}
	code, err = img.code(syms[0].Addr, syms[0].Size)
	return syms[0].Addr, code, err
}

// CodeAt returns the function symbol of a module that holds addr, and
// its bytes.
func (s *Set) CodeAt(module string, addr uint64) (Symbol, []byte, error) {
	sym, ok := s.SymbolAt(module, addr)
	if !ok {
		return sym, nil, fmt.Errorf("no function symRec holds %#x in module %s", addr, module)
	}
	img, _ := s.image(module)
	code, err := img.code(sym.Addr, sym.Size)
	return sym, code, err
}

// SymbolAt returns the function symbol of a module that holds addr.
func (s *Set) SymbolAt(module string, addr uint64) (Symbol, bool) {
	img, err := s.image(module)
	if err != nil {
		return Symbol{}, false
	}
	x, err := img.symbols()
	if err != nil {
		return Symbol{}, false
	}
	i := x.SymbolAt(addr)
	if i == index.NoSym {
		return Symbol{}, false
	}
	return img.symbol(x, x.Sym(i)), true
}

// SectionAt returns the name of the section of a module's image that
// holds addr, such as .init.text for code the kernel frees after boot.
func (s *Set) SectionAt(module string, addr uint64) (string, bool) {
	img, err := s.image(module)
	if err != nil {
		return "", false
	}
	return img.section(addr)
}

// Thunks returns the return and indirect-branch thunks of a module's
// image, by address. A jump to a ReturnThunk is a return.
func (s *Set) Thunks(module string) []thunk {
	img, err := s.image(module)
	if err != nil {
		return nil
	}
	x, err := img.symbols()
	if err != nil {
		return nil
	}
	return thunksOf(x)
}

// ReturnThunks returns the addresses of the module's return thunks
// (__x86_return_thunk and its variants).
func (s *Set) ReturnThunks(module string) []uint64 {
	var out []uint64
	for _, t := range s.Thunks(module) {
		if t.Kind == returnThunk {
			out = append(out, t.Addr)
		}
	}
	return out
}

// InlinedFunctions returns the names of the functions with inlined
// copies in any image, sorted. It builds the whole index of an image
// opened Lazy that has only parts of it; failing that is the error.
func (s *Set) InlinedFunctions() ([]string, error) {
	var names []string
	for _, img := range s.images {
		x, err := img.whole()
		if err != nil {
			return nil, err
		}
		for i := range x.Funcs.Len() {
			if f := x.Function(i); f.N > 0 {
				names = append(names, x.Str(f.Name))
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// Thunk kinds.
const (
	// returnThunk marks a function that a jump to stands for a return
	// (__x86_return_thunk and its mitigation variants).
	returnThunk ThunkKind = iota + 1
	// indirectThunk marks a function that a call or jump to stands for
	// an indirect call or jump through a register (retpolines).
	indirectThunk
)

// ThunkKind says what a jump to a thunk means.
type ThunkKind int

// thunk is a kernel thunk that replaces an instruction in compiled
// code.
type thunk struct {
	Name string
	Addr uint64
	Kind ThunkKind
}

// thunkKind classifies a symbol name.
func thunkKind(name string) ThunkKind {
	switch {
	case name == "__x86_return_thunk", name == "srso_return_thunk", name == "srso_alias_return_thunk",
		name == "retbleed_return_thunk", name == "__x86_return_skl", name == "its_return_thunk":
		return returnThunk
	case strings.HasPrefix(name, "__x86_indirect_thunk_"), strings.HasPrefix(name, "__x86_indirect_call_thunk_"),
		strings.HasPrefix(name, "__x86_indirect_jump_thunk_"), strings.HasPrefix(name, "__x86_indirect_its_thunk_"):
		return indirectThunk
	}
	return 0
}

// isThunk says whether a symbol is a thunk, the symbols the index keeps
// beside the functions.
func isThunk(name string) bool { return thunkKind(name) != 0 }

// thunksOf returns the thunks x keeps.
func thunksOf(x *index.Index) []thunk {
	var out []thunk
	for i := range x.ThunkSyms.Len() {
		s := x.ThunkSym(i)
		name := x.Str(s.Name)
		out = append(out, thunk{Name: name, Addr: s.Addr, Kind: thunkKind(name)})
	}
	return out
}
