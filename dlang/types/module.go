package types

import (
	"fmt"
	"slices"
	"strings"
)

// Module is a container of named types. Names are written as in C:
// "int", "unsigned long", "struct task_struct", "union u", "enum e",
// "size_t". Lookup returns nil when the module has no type of that
// name.
type Module interface {
	ModuleName() string
	LookupType(name string) (Type, error)
}

// EnumValues is implemented by modules that can find an enumerator by
// name, which D resolves as an integer constant.
type EnumValues interface {
	LookupEnumerator(name string) (*Enum, int64, bool)
}

// Scope is a module whose types are added one at a time: D's built-in
// containers and the script's declarations.
type Scope struct {
	name   string
	types  map[string]Type
	order  []string
	parent *Scope
}

// NewScope returns an empty module called name.
func NewScope(name string) *Scope {
	return &Scope{name: name, types: map[string]Type{}}
}

// ModuleName returns the module's name.
func (s *Scope) ModuleName() string { return s.name }

// LookupType returns the type called name, or nil.
func (s *Scope) LookupType(name string) (Type, error) {
	if t, ok := s.types[name]; ok || s.parent == nil {
		return t, nil
	}
	return s.parent.LookupType(name)
}

// Insert adds t under name, replacing an earlier type of that name.
func (s *Scope) Insert(name string, t Type) {
	if _, ok := s.types[name]; !ok {
		s.order = append(s.order, name)
	}
	s.types[name] = t
}

// LookupEnumerator finds an enumerator of one of the scope's enums.
func (s *Scope) LookupEnumerator(name string) (*Enum, int64, bool) {
	for _, n := range s.order {
		if e, ok := s.types[n].(*Enum); ok {
			if v, ok := e.Value(name); ok {
				return e, v, true
			}
		}
	}
	return nil, 0, false
}

// Universe is the ordered list of modules a program's type names are
// looked up in: D's containers first, then the kernel's.
type Universe struct {
	Modules []Module
	// Load, when set, opens a module that Modules lacks the first time
	// a name is scoped by it (ext4`struct ext4_inode_info): the kernel
	// has hundreds of modules, whose types are read only when named.
	Load func(name string) (Module, error)
}

// A LookupError says why a type name did not resolve.
type LookupError struct {
	Name   string
	Module string // the module named in Name, if any
	NoMod  bool   // Module names no module
	Err    error  // a module's failure to load, if any
}

func (e *LookupError) Error() string {
	switch {
	case e.Err != nil:
		return fmt.Sprintf("%s: %v", e.Name, e.Err)
	case e.NoMod:
		return fmt.Sprintf("%s: module %s does not exist", e.Name, e.Module)
	}
	return fmt.Sprintf("%s: no such type", e.Name)
}

func (e *LookupError) Unwrap() error { return e.Err }

// Lookup finds a type by name, possibly scoped by module as
// mod`name, searching the modules in order. It returns the type and the
// module that holds it.
func (u *Universe) Lookup(name string) (Type, Module, error) {
	if i := strings.LastIndexByte(name, '`'); i >= 0 {
		mod, base := name[:i], name[i+1:]
		m := u.Module(mod)
		if m == nil && u.Load != nil {
			if lm, err := u.Load(mod); err == nil && lm != nil {
				u.Modules = append(u.Modules, lm)
				m = lm
			}
		}
		if m == nil {
			return nil, nil, &LookupError{Name: name, Module: mod, NoMod: true}
		}
		t, err := m.LookupType(base)
		if err != nil {
			return nil, nil, &LookupError{Name: name, Module: mod, Err: err}
		}
		if t == nil {
			return nil, nil, &LookupError{Name: name, Module: mod}
		}
		return t, m, nil
	}
	for _, m := range u.Modules {
		t, err := m.LookupType(name)
		if err != nil {
			return nil, nil, &LookupError{Name: name, Module: m.ModuleName(), Err: err}
		}
		if t != nil {
			return t, m, nil
		}
	}
	return nil, nil, &LookupError{Name: name}
}

// Module returns the module called name, or nil.
func (u *Universe) Module(name string) Module {
	for _, m := range u.Modules {
		if m.ModuleName() == name {
			return m
		}
	}
	return nil
}

// LookupEnumerator finds an enumerator by name in the modules that can
// list theirs.
func (u *Universe) LookupEnumerator(name string) (*Enum, int64, bool) {
	for _, m := range u.Modules {
		if ev, ok := m.(EnumValues); ok {
			if e, v, ok := ev.LookupEnumerator(name); ok {
				return e, v, true
			}
		}
	}
	return nil, 0, false
}

// The C types every D program knows, as dt_open.c defines them for LP64.
var (
	Char      = &Int{Name: "char", Bytes: 1, Signed: true, Char: true}
	SChar     = &Int{Name: "signed char", Bytes: 1, Signed: true, Char: true}
	UChar     = &Int{Name: "unsigned char", Bytes: 1, Char: true}
	Short     = &Int{Name: "short", Bytes: 2, Signed: true}
	UShort    = &Int{Name: "unsigned short", Bytes: 2}
	IntType   = &Int{Name: "int", Bytes: 4, Signed: true}
	UInt      = &Int{Name: "unsigned int", Bytes: 4}
	Long      = &Int{Name: "long", Bytes: 8, Signed: true}
	ULong     = &Int{Name: "unsigned long", Bytes: 8}
	LongLong  = &Int{Name: "long long", Bytes: 8, Signed: true}
	ULongLong = &Int{Name: "unsigned long long", Bytes: 8}
	Bool      = &Int{Name: "_Bool", Bytes: 1, Bool: true}
	FloatType = &Float{Name: "float", Bytes: 4}
	Double    = &Float{Name: "double", Bytes: 8}
	LongDbl   = &Float{Name: "long double", Bytes: 16}
)

// VoidPtr is void *.
var VoidPtr = &Pointer{Elem: Void{}}

// Builtin returns new C and D containers: C holds C's basic types, D
// holds D's typedefs (int8_t … uint64_t, size_t, …), string with the
// given size (the strsize option), and D's own types. The script's
// declarations go in D, which is searched first.
func Builtin(strsize int64) (c, d *Scope) {
	c = NewScope("C")
	for _, t := range []*Int{Char, SChar, UChar, Short, UShort, IntType, UInt, Long, ULong, LongLong, ULongLong, Bool} {
		c.Insert(t.Name, t)
	}
	// dt_open.c's C container also has these as types of their own,
	// which dtrace names as written: "unsigned" for unsigned x.
	for _, t := range []*Int{
		{Name: "signed", Bytes: 4, Signed: true}, {Name: "unsigned", Bytes: 4},
		{Name: "signed short", Bytes: 2, Signed: true}, {Name: "signed int", Bytes: 4, Signed: true},
		{Name: "signed long", Bytes: 8, Signed: true}, {Name: "signed long long", Bytes: 8, Signed: true},
	} {
		c.Insert(t.Name, t)
	}
	c.Insert("float", FloatType)
	c.Insert("double", Double)
	c.Insert("long double", LongDbl)
	c.Insert("void", Void{})

	// D's container is a child of C's, so that D`int names int.
	d = NewScope("D")
	d.parent = c
	for _, td := range []struct {
		name string
		t    Type
	}{
		{"int8_t", Char}, {"int16_t", Short}, {"int32_t", IntType}, {"int64_t", Long},
		{"intptr_t", Long}, {"ssize_t", Long}, {"uint8_t", UChar}, {"uint16_t", UShort},
		{"uint32_t", UInt}, {"uint64_t", ULong}, {"uchar_t", UChar}, {"ushort_t", UShort},
		{"uint_t", UInt}, {"ulong_t", ULong}, {"u_longlong_t", ULongLong}, {"longlong_t", LongLong},
		{"ptrdiff_t", Long}, {"uintptr_t", ULong}, {"size_t", ULong}, {"id_t", IntType},
		{"pid_t", IntType},
	} {
		d.Insert(td.name, &Typedef{Module: "D", Name: td.name, Type: td.t})
	}
	d.Insert("string", &String{Bytes: strsize})
	for _, t := range []*Typedef{Dyn, Stack, SymAddr, USymAddr} {
		d.Insert(t.Name, t)
	}
	return c, d
}

// IntSpellings returns the spellings of the integer type named by the
// words w (unsigned long int, long unsigned …): as written, as clang
// writes it in debug information (unsigned long) and as gcc does (long
// unsigned int), for type sources whose names come from either.
func IntSpellings(w []string) ([]string, bool) {
	var signed, unsigned, char, short, int_, long int
	for _, s := range w {
		switch s {
		case "signed":
			signed++
		case "unsigned":
			unsigned++
		case "char":
			char++
		case "short":
			short++
		case "int":
			int_++
		case "long":
			long++
		default:
			return nil, false
		}
	}
	if signed+unsigned > 1 || char > 1 || short > 1 || int_ > 1 || long > 2 ||
		char+short+min(long, 1) > 1 || char == 1 && int_ == 1 {
		return nil, false
	}
	var clang, gcc string
	u := ""
	if unsigned == 1 {
		u = "unsigned "
	}
	switch {
	case char == 1:
		switch {
		case signed == 1:
			clang = "signed char"
		case unsigned == 1:
			clang = "unsigned char"
		default:
			clang = "char"
		}
		gcc = clang
	case short == 1:
		clang, gcc = u+"short", "short "+u+"int"
	case long == 1:
		clang, gcc = u+"long", "long "+u+"int"
	case long == 2:
		clang, gcc = u+"long long", "long long "+u+"int"
	default:
		clang, gcc = u+"int", u+"int"
	}
	written := strings.Join(w, " ")
	names := []string{written}
	for _, s := range []string{clang, gcc} {
		if !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	return names, true
}
