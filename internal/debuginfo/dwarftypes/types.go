package dwarftypes

// Types: the C types of an image, for D's type checker.
//
// Open opens the image's debug file again (the one the kinst
// index was built from, checked against the image's build-id) and maps
// its DWARF sections. Nothing else happens until the first lookup,
// which builds a name index: the unit headers are parsed, and
// GOMAXPROCS goroutines walk the units, each with its own reader and
// maps, decoding only the DIEs at the top of each unit that name
// structs, unions, enums, typedefs, base types, functions and
// variables, and the enumerators of those enums; subtrees are jumped
// over by DW_AT_sibling, other DIEs skipped by their forms' sizes. The
// workers' maps are merged keeping, for each name, a definition over a
// forward declaration and then the first in the section. A kernel
// repeats its header types in each of its thousands of units; the
// index keeps one DIE per name.
//
// Lookups then convert from DIE offsets on demand, memoising by offset,
// so that a DIE always converts to the same Go pointer and recursive
// types end. A named struct, union, enum or typedef met in another unit
// is replaced by the index's DIE of that name when both have the same
// shape (size, members' names, offsets and widths, enumerators,
// typedef targets), so that a kernel's struct task_struct is one Go
// value however many units it is reached from, and a forward
// declaration always becomes the definition, wherever the definition
// is. Same-named types that differ are kept apart.
//
// On Debian's 6.1 vmlinux (174 MB of .debug_info in 2,352 units, 2.3
// million named DIEs for 125,000 names and 16,000 enumerators) the index takes 0.35 s on one
// core and 13 MB of heap, and lookups of converted types take
// microseconds. A struct's members convert when first asked for, with
// the structs they hold by value: converting all that struct file
// reaches through its pointers, as vfs_read's type did, took 11,000
// DIEs, 25 to 45 ms and 9 MB; its members alone take 100 DIEs. The mapped file's pages the walk touches (200 MB) are
// the kernel's page cache, not the process's heap, but they count in
// the process's resident size.
//
// So the index, the unit headers and Scope's unit table are cached by
// the debug file's build-id next to the kinst index (types_cache.go),
// and a second Types of the same file reads them instead. The index is
// then searched in the file's bytes, sorted tables rather than maps: on
// that vmlinux it loads in 8 ms and 6 MB, and a locals probe's compile
// by kdtrace takes 0.2 s and 135 MB at most resident, against 2.6 s and
// 380 MB when it walks every unit.

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/cachefile"
	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
	"github.com/kdtrace/kdtrace/internal/debuginfo/unwind"
)

// Types holds the C types of one image's DWARF: a kernel's, a kernel
// module's or a program's. It implements types.Module and
// types.EnumValues, and finds the types of functions (for fbt's
// args[]) and variables (for the kernel's symbols).
//
// The module's name is the image's Module, as debuginfo records it:
// "kernel" for the kernel (the name FreeBSD's dtrace gives it, and the
// one kinst probes use), the module's name for a module, the file's
// base name for a program. Linux's BTF calls the kernel vmlinux; a
// caller that wants D programs to write vmlinux`struct task_struct for
// a DWARF kernel should wrap the module to rename it.
//
// Type names are the compiler's: base types keep DWARF's spelling
// ("long unsigned int" from gcc, "unsigned long" from clang), and
// LookupType finds integer types by any of C's spellings. Types are
// converted on demand and memoised, so that the same name always gives
// the same Go pointer. A Types may be used from several goroutines; the
// types it returns, whose structs load their members when first asked
// for, by one goroutine at a time, as package types says.
type Types struct {
	name string
	file string // the debug file

	mu      sync.Mutex
	ef      *elffile.File
	r       *typeReader
	x       *nameIndex
	indexed bool
	err     error // why the index could not be built
	closed  bool
	conv    typeConv
	units   *unitTable        // for Scope, built on its first call
	opts    debuginfo.Options // where the index and unit table are cached

	image      string // the image, for its call frame information (cfi.go)
	framesOnce sync.Once
	frames     *unwind.Frames
	framesErr  error
}

var (
	_ types.Module     = (*Types)(nil)
	_ types.EnumValues = (*Types)(nil)
)

// errTypesClosed is returned by lookups after Close.
var errTypesClosed = errors.New("dwarftypes: Types used after Close")

// Open opens the image's DWARF for type lookups. It maps the debug
// sections and reads nothing more; the name index is built on the
// first lookup. Each call opens the file again: callers keep the
// result, and Close it when done.
//
// Not supported: DWARF 4's .debug_types section (DWARF 5 type units in
// .debug_info are, except in object files, which keep each in a
// section of its own), references into a DWZ supplementary file, split
// DWARF, and big-endian files (as for the rest of the package). Types
// declared inside functions are not found by name.
func Open(img *debuginfo.Image) (*Types, error) {
	return openTypes(img.Module, img.Path, img.DebugPath, img.BuildID, img.Options())
}

// openTypes opens the types of module, whose image is at path and its
// DWARF at debugPath ("" for path itself); buildID, when not "", is the
// image's, which the debug file must have.
func openTypes(module, image, debugPath, buildID string, opts debuginfo.Options) (*Types, error) {
	path := debugPath
	if path == "" {
		path = image
	}
	ef, err := elffile.Open(path)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Types, error) {
		ef.Close()
		return nil, err
	}
	if !ef.HasDWARF() {
		return fail(&debuginfo.NotFoundError{Image: image, Looked: []string{path + " (no DWARF)"}})
	}
	if id := ef.BuildID(); buildID != "" && id != "" && id != buildID {
		return fail(&debuginfo.MismatchError{Image: image, DebugFile: path, Reason: fmt.Sprintf("build-id %s, image has %s", id, buildID)})
	}
	secs, err := ef.Dwarf()
	if err != nil {
		return fail(fmt.Errorf("reading DWARF of %s: %w", path, err))
	}
	t := &Types{name: module, file: path, image: image, ef: ef, opts: opts}
	units, table := t.cachedUnits(len(secs.Info))
	if units == nil {
		if units, err = dwarfread.ParseUnits(secs.Info); err != nil {
			return fail(fmt.Errorf("reading DWARF of %s: %w", path, err))
		}
	}
	t.r, t.units = newTypeReader(secs, units), table
	t.conv.init()
	// Converted types copy what they keep from the sections, so the
	// mapping may go with t.
	runtime.AddCleanup(t, func(ef *elffile.File) { ef.Close() }, ef)
	return t, nil
}

// Close unmaps the debug file. Types already returned stay valid, but
// for the members of structs not asked for yet, which then fail to
// load (their Err says so); later lookups fail.
func (t *Types) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	t.r, t.x = nil, nil
	return t.ef.Close()
}

// ModuleName returns the image's module name: "kernel" for the kernel.
func (t *Types) ModuleName() string { return t.name }

// index builds the name index on first use. The caller holds t.mu.
func (t *Types) index() error {
	if t.closed {
		return errTypesClosed
	}
	if !t.indexed {
		t.indexed = true
		if d, ok := t.loadTypesCache(".types", typesCacheMagic); ok {
			if x, err := decodeTypeIndex(d); err == nil {
				t.x = x
				return nil
			}
		}
		x, err := buildTypeIndex(t.r.secs, t.r.units, t.opts.Workers)
		if err != nil {
			t.err = fmt.Errorf("indexing the types of %s: %w", t.file, err)
			return t.err
		}
		var e cachefile.Encoder
		encodeTypeIndex(&e, x)
		if t.x, err = decodeTypeIndex(&cachefile.Decoder{B: e.B}); err != nil {
			t.err = fmt.Errorf("indexing the types of %s: %w", t.file, err) // a bug of ours
			return t.err
		}
		t.storeTypesCache(".types", typesCacheMagic, e.B)
	}
	return t.err
}

// LookupType returns the type called name: "struct task_struct",
// "union u", "enum e", a typedef such as "pid_t", or a base type, found
// by any of C's spellings of an integer type ("unsigned long" finds
// gcc's "long unsigned int"). A definition is preferred to a forward
// declaration, then the first in the file. It returns nil when there is
// no such type, and an error when the DWARF is malformed.
func (t *Types) LookupType(name string) (types.Type, error) {
	class, names, ok := parseCTypeName(name)
	if !ok {
		return nil, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.index(); err != nil {
		return nil, err
	}
	for _, n := range names {
		if r, ok := t.x.lookup(class, n); ok {
			return t.convertTop(r.off)
		}
	}
	return nil, nil
}

// LookupEnumerator returns the enum that has an enumerator called name,
// and its value. Enumerators of enums declared inside functions are not
// found.
func (t *Types) LookupEnumerator(name string) (*types.Enum, int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.index() != nil {
		return nil, 0, false
	}
	off, ok := t.x.enum(name)
	if !ok {
		return nil, 0, false
	}
	ty, err := t.convertTop(off)
	if err != nil {
		return nil, 0, false
	}
	e, ok := ty.(*types.Enum)
	if !ok {
		return nil, 0, false
	}
	v, ok := e.Value(name)
	return e, v, ok
}

// LookupFunc returns the type of the function called name and the
// names of its parameters ("" where DWARF has none), or nil if the
// image has no such function. The definition is preferred (its
// parameters have names) to a declaration; of several static functions
// of that name, the first in the file is taken.
func (t *Types) LookupFunc(name string) (*types.Func, []string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.index(); err != nil {
		return nil, nil, err
	}
	r, ok := t.x.lookup(kindFunc, name)
	if !ok {
		return nil, nil, nil
	}
	f, names, err := t.function(r.off)
	if err != nil {
		return nil, nil, err
	}
	return f, slices.Clone(names), nil
}

// LookupVar returns the type of the variable called name (a global or
// file-scope static variable), or nil if the image has none.
func (t *Types) LookupVar(name string) (types.Type, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.index(); err != nil {
		return nil, err
	}
	r, ok := t.x.lookup(kindVar, name)
	if !ok {
		return nil, nil
	}
	d, err := t.r.read(r.off)
	if err != nil {
		return nil, t.wrap(err)
	}
	off, err := t.target(&d, d.typ)
	if err != nil {
		return nil, t.wrap(err)
	}
	return t.convertTop(off)
}

func (t *Types) wrap(err error) error {
	return fmt.Errorf("%s: %w", t.file, err)
}

// parseCTypeName returns the class of the type name and the names to
// try in it.
func parseCTypeName(name string) (class int, names []string, ok bool) {
	w := strings.Fields(name)
	if len(w) == 0 {
		return 0, nil, false
	}
	if len(w) == 2 {
		switch w[0] {
		case "struct":
			return classStruct, w[1:], true
		case "union":
			return classUnion, w[1:], true
		case "enum":
			return classEnum, w[1:], true
		}
	}
	if alt, ok := types.IntSpellings(w); ok {
		return classOther, alt, true
	}
	return classOther, []string{strings.Join(w, " ")}, true
}

// OpenFile opens the DWARF of the ELF file at path, which must carry
// it, for type lookups alone: unlike debuginfo.OpenImage it builds no
// kinst index. The types are named module. It serves the variables' types of
// a kernel image whose BTF lacks them.
func OpenFile(path, module string) (*Types, error) {
	return openTypes(module, path, "", "", debuginfo.Options{})
}

// OpenDebugFile is OpenFile for an image whose DWARF is in the separate
// debug file debugPath, which debuginfo.DebugFile found and checked.
func OpenDebugFile(path, debugPath, module string) (*Types, error) {
	return openTypes(module, path, debugPath, "", debuginfo.Options{})
}

// Frames returns the call frame information of the image the types
// come from (.eh_frame and ORC from the image, .debug_frame from the
// debug file), read on the first call.
func (t *Types) Frames() (*unwind.Frames, error) {
	t.framesOnce.Do(func() {
		image := t.image
		if image == "" {
			image = t.file
		}
		t.frames, t.framesErr = unwind.OpenImage(image, t.file)
	})
	return t.frames, t.framesErr
}

// CFA returns the rule of the canonical frame address at pc, an address
// of the image as Scope takes it.
func (t *Types) CFA(pc uint64) (unwind.CFARule, error) {
	f, err := t.Frames()
	if err != nil {
		return unwind.CFARule{}, err
	}
	return f.CFA(pc)
}
