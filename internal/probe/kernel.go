package probe

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/ksym"
	"github.com/kdtrace/kdtrace/internal/mmap"
)

// KernelTypes gives the types of a kernel's or kernel module's
// functions and named types: *btf.Module implements it.
type KernelTypes interface {
	// LookupFunc returns the type of the function called name and its
	// parameters' names, or nil when there is no such function.
	LookupFunc(name string) (*types.Func, []string, error)
	// LookupType returns the type called name ("struct file",
	// "size_t"), or nil when there is none.
	LookupType(name string) (types.Type, error)
}

// KernelModule is the module of the kernel's own functions in fbt,
// kinst and syscall probes, as Linux's BTF names it.
const KernelModule = "vmlinux"

// A kernel is what fbt, kinst and syscall know of a kernel: its
// functions by module, listed on first use, and where there are any,
// their types and code.
type kernel struct {
	load func() ([]*funcList, error)
	// types returns a module's types; nil, or a nil KernelTypes, when
	// there are none.
	types func(module string) (KernelTypes, error)
	// code returns the code of a function; nil when it cannot be read.
	code func(l *funcList, i int) (addr uint64, code []byte, err error)
	// probeable returns the functions fbt can instrument; nil, or a
	// nil set, when every function listed is taken to be.
	probeable func() (*probeable, error)
	// syscallPrefix starts the names of the syscall handlers
	// (__x64_sys_ on amd64).
	syscallPrefix string

	once sync.Once
	mods []*funcList
	err  error

	typesMu sync.Mutex
	typesBy map[string]typesResult
}

type typesResult struct {
	t   KernelTypes
	err error
}

// modules returns the kernel's function lists, the kernel's first.
func (k *kernel) modules() ([]*funcList, error) {
	k.once.Do(func() { k.mods, k.err = k.load() })
	return k.mods, k.err
}

// module returns the function list of the module called name.
func (k *kernel) module(name string) (*funcList, error) {
	mods, err := k.modules()
	if err != nil {
		return nil, err
	}
	for _, m := range mods {
		if m.module == name {
			return m, nil
		}
	}
	return nil, nil
}

// typesOf returns the types of module, nil when there are none.
func (k *kernel) typesOf(module string) (KernelTypes, error) {
	if k.types == nil {
		return nil, nil
	}
	k.typesMu.Lock()
	defer k.typesMu.Unlock()
	if r, ok := k.typesBy[module]; ok {
		return r.t, r.err
	}
	t, err := k.types(module)
	if err != nil {
		err = fmt.Errorf("types of module %s: %w", module, err)
	}
	if k.typesBy == nil {
		k.typesBy = map[string]typesResult{}
	}
	k.typesBy[module] = typesResult{t, err}
	return t, err
}

// prototype returns the type of function fn of module, nil when it is
// unknown.
func (k *kernel) prototype(module, fn string) (*types.Func, error) {
	t, err := k.typesOf(module)
	if t == nil || err != nil {
		return nil, err
	}
	f, _, err := t.LookupFunc(fn)
	return f, err
}

// walkFuncs calls yield with each function whose module and name match
// q, until yield returns false; it reports whether it ran to the end.
func (k *kernel) walkFuncs(q *query, yield func(l *funcList, i int) bool) (bool, error) {
	var mods []*funcList
	var err error
	if name, ok := q.Module.Literal(); ok {
		var m *funcList
		if m, err = k.module(name); m != nil {
			mods = []*funcList{m}
		}
	} else {
		mods, err = k.modules()
	}
	if err != nil {
		return false, err
	}
	fn, literal := q.Function.Literal()
	for _, m := range mods {
		if !q.Module.Match(m.module) {
			continue
		}
		if literal {
			if i, ok := m.lookup(fn); ok && !yield(m, i) {
				return false, nil
			}
			continue
		}
		for i := range m.len() {
			if q.Function.Match(m.name(i)) && !yield(m, i) {
				return false, nil
			}
		}
	}
	return true, nil
}

// RawBTF is what KernelTypes read from a BTF file may give besides
// (*btf.Module does): the file, and its type section, little-endian,
// and string section, which the caller must not modify.
type RawBTF interface {
	RawBTF() (file string, types, strs []byte)
}

// loadBTFFuncs lists the functions of the BTF file at path as module.
// baseStrs is the size of the base's string section for a module's
// split BTF, else 0. When the module's types (types, if not nil) were
// read from that file, the functions are listed from them, without
// reading it again: the kernel's BTF is 4 MB that sysfs gives a page a
// read, a third of a second of CPU under emulation.
// It also returns the size of the file's string section, the base of
// its modules' name offsets.
func loadBTFFuncs(path, module string, baseStrs uint32, types func(module string) (KernelTypes, error)) (*funcList, uint32, error) {
	if types != nil {
		if kt, err := types(module); err == nil {
			if raw, ok := kt.(RawBTF); ok {
				if file, typ, str := raw.RawBTF(); file == path {
					// A copy: the module may unmap its sections.
					l, strLen, err := sectionFuncs(typ, string(str), baseStrs, module)
					runtime.KeepAlive(kt) // its sections may be mapped while it lives
					if err != nil {
						return nil, 0, fmt.Errorf("%s: %w", path, err)
					}
					return l, strLen, nil
				}
			}
		}
	}
	data, release, err := mapFile(path)
	if err != nil {
		return nil, 0, err
	}
	l, strLen, err := btfFuncs(data, baseStrs, module)
	if err != nil {
		release()
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	// The names are the file's string section, in place: copying the
	// kernel's 2.5 MB cost fbt::: more than listing its functions. The
	// mapping is never released, as names taken from the list may
	// outlive it; /sys/kernel/btf/vmlinux maps the kernel's own pages.
	return l, strLen, nil
}

// tableFuncs lists the functions of a kernel's symbol table by module,
// the kernel's first; only the modules in only when it is not nil.
// Addresses are those the table has (zero without the privilege to see
// them); sizes are left unknown.
func tableFuncs(t *ksym.Table, only map[string]bool) []*funcList {
	builders := map[string]*funcListBuilder{}
	var order []string
	if only == nil {
		builders[KernelModule] = &funcListBuilder{}
		order = append(order, KernelModule)
	}
	for s := range t.All() {
		if !s.Func || only != nil && !only[s.Module] {
			continue
		}
		b, ok := builders[s.Module]
		if !ok {
			b = &funcListBuilder{}
			builders[s.Module] = b
			order = append(order, s.Module)
		}
		b.addSym([]byte(s.Name), symRange{addr: s.Addr})
	}
	ls := make([]*funcList, 0, len(order))
	for _, m := range order {
		ls = append(ls, builders[m].build(m))
	}
	return ls
}

// mapFile maps the file at path read-only, or reads it where it cannot
// be mapped; release undoes the mapping.
func mapFile(path string) (data []byte, release func(), err error) {
	data, err = mmap.MapFile(path)
	if err == nil {
		return data, func() { mmap.Unmap(data) }, nil
	}
	if !errors.Is(err, mmap.ErrUnsupported) {
		return nil, nil, err
	}
	data, err = os.ReadFile(path)
	return data, func() {}, err
}
