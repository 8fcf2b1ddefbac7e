package types

// Type is a D type.
type Type interface {
	// Size returns the size of a value of the type in bytes; 0 for void,
	// functions and incomplete types.
	Size() int64
	// Align returns the alignment of the type in bytes.
	Align() int64
	// String returns the type's name in C's declaration syntax, as
	// ctf_type_name writes it: "int", "char *", "struct foo",
	// "int [4]".
	String() string
}

// Qual is a set of type qualifiers.
type Qual uint8

// The qualifiers.
const (
	Const Qual = 1 << iota
	Volatile
	Restrict
)

type (
	// Void is C's void.
	Void struct{}

	// Int is an integer type: char, short, int, long, long long and
	// their unsigned forms, _Bool, and the kernel's own encodings.
	Int struct {
		Name   string
		Bytes  int64
		Signed bool
		Char   bool // the type is a character type (prints as char)
		Bool   bool
	}

	// Float is a floating-point type.
	Float struct {
		Name  string
		Bytes int64
	}

	// Pointer is a pointer to Elem.
	Pointer struct {
		Elem Type
	}

	// Array is an array of Len elements of Elem. D's string is not an
	// Array but a String.
	Array struct {
		Elem Type
		Len  int64
	}

	// Func is a function type.
	Func struct {
		Result   Type
		Params   []Type
		Variadic bool
	}

	// Struct is a struct or union. A forward declaration has
	// Incomplete set and no members. Its members are set with
	// SetMembers, or left to a loader with LoadMembers: a kernel's
	// struct reaches thousands of others through its pointers, and most
	// programs look at few of them.
	Struct struct {
		Module     string // the module that defines it; "" for D's own
		Name       string // "" when anonymous
		Union      bool
		Bytes      int64
		Incomplete bool

		members []Member
		load    func() ([]Member, error) // until the members are loaded
		err     error                    // the loader's failure
		align   int64                    // once computed; 0 before
	}

	// Enum is an enumeration. A forward declaration has Incomplete set.
	Enum struct {
		Module     string
		Name       string
		Bytes      int64
		Values     []Enumerator
		Incomplete bool
	}

	// Typedef names Type.
	Typedef struct {
		Module string
		Name   string
		Type   Type
	}

	// Qualified is Type with qualifiers.
	Qualified struct {
		Qual Qual
		Type Type
	}

	// String is D's string type: strsize bytes of characters.
	String struct {
		Bytes int64
	}
)

// Member is a member of a struct or union.
type Member struct {
	Name    string // "" for an anonymous struct or union member
	Type    Type
	Offset  int64 // in bits from the start of the enclosing type
	BitSize int64 // the width of a bit-field; 0 for other members
}

// Enumerator is a name and value of an enumeration.
type Enumerator struct {
	Name  string
	Value int64
}

func (Void) Size() int64         { return 0 }
func (t *Int) Size() int64       { return t.Bytes }
func (t *Float) Size() int64     { return t.Bytes }
func (*Pointer) Size() int64     { return 8 }
func (t *Array) Size() int64     { return t.Len * t.Elem.Size() }
func (*Func) Size() int64        { return 0 }
func (t *Struct) Size() int64    { return t.Bytes }
func (t *Enum) Size() int64      { return t.Bytes }
func (t *Typedef) Size() int64   { return t.Type.Size() }
func (t *Qualified) Size() int64 { return t.Type.Size() }
func (t *String) Size() int64    { return t.Bytes }

func (Void) Align() int64     { return 1 }
func (t *Int) Align() int64   { return max(t.Bytes, 1) }
func (t *Float) Align() int64 { return max(t.Bytes, 1) }
func (*Pointer) Align() int64 { return 8 }
func (t *Array) Align() int64 { return t.Elem.Align() }
func (*Func) Align() int64    { return 1 }
func (t *Struct) Align() int64 {
	// Kept once computed: a struct that nests others by value would
	// otherwise recompute theirs each time it is laid out, in time
	// quadratic in the nesting.
	if t.align == 0 {
		// A struct that reaches itself by value, which only a broken
		// definition can make, sees 1 here rather than recursing
		// without end.
		t.align = 1
		a := int64(1)
		for _, m := range t.Members() {
			a = max(a, m.Type.Align())
		}
		t.align = a
	}
	return t.align
}
func (t *Enum) Align() int64      { return max(t.Bytes, 1) }
func (t *Typedef) Align() int64   { return t.Type.Align() }
func (t *Qualified) Align() int64 { return t.Type.Align() }
func (*String) Align() int64      { return 1 }

// Resolve returns t with typedefs and qualifiers removed, as
// ctf_type_resolve does. It stops on a typedef cycle.
func Resolve(t Type) Type {
	for range 64 {
		switch u := t.(type) {
		case *Typedef:
			t = u.Type
		case *Qualified:
			t = u.Type
		default:
			return t
		}
	}
	return t
}

// Unqualified returns t with its outer qualifiers removed, keeping
// typedef names.
func Unqualified(t Type) Type {
	for {
		q, ok := t.(*Qualified)
		if !ok {
			return t
		}
		t = q.Type
	}
}

// Quals returns the qualifiers that apply to t itself, through typedefs.
func Quals(t Type) Qual {
	var q Qual
	for range 64 {
		switch u := t.(type) {
		case *Typedef:
			t = u.Type
		case *Qualified:
			q |= u.Qual
			t = u.Type
		default:
			return q
		}
	}
	return q
}

// Member looks up the member called name in the struct or union t,
// descending into anonymous members as C does. The offset returned is
// the member's offset in bits from the start of t.
func (t *Struct) Member(name string) (Member, bool) {
	for _, m := range t.Members() {
		if m.Name == name {
			return m, true
		}
		if m.Name == "" {
			if s, ok := Resolve(m.Type).(*Struct); ok {
				if inner, ok := s.Member(name); ok {
					inner.Offset += m.Offset
					return inner, true
				}
			}
		}
	}
	return Member{}, false
}

// Members returns the members of t, loading them the first time if
// they were left to a loader. A loader's failure leaves t without
// members; Err reports it. While the loader runs, t has no members, so
// a loader that reaches t again by value (a struct that contains
// itself, which C cannot write) sees an empty struct and ends.
//
// Loading is not safe for concurrent use: the types of one Universe are
// used by one goroutine at a time.
func (t *Struct) Members() []Member {
	if t.load != nil {
		load := t.load
		t.load = nil
		ms, err := load()
		if err != nil {
			ms = nil
		}
		t.members, t.err = ms, err
	}
	return t.members
}

// SetMembers sets the members of t.
func (t *Struct) SetMembers(ms []Member) {
	t.members, t.load, t.err, t.align = ms, nil, nil, 0
}

// LoadMembers leaves the members of t to load, which Members calls the
// first time they are needed.
func (t *Struct) LoadMembers(load func() ([]Member, error)) {
	t.members, t.load, t.err, t.align = nil, load, nil, 0
}

// Err returns the error that loading the members of t met, if any.
func (t *Struct) Err() error {
	t.Members()
	return t.err
}

// Value returns the value of the enumerator called name.
func (t *Enum) Value(name string) (int64, bool) {
	for _, e := range t.Values {
		if e.Name == name {
			return e.Value, true
		}
	}
	return 0, false
}

// Well-known types of D's containers, compared by identity.
var (
	// Dyn is D's <DYN> type: a value whose type the probe decides when
	// it fires, such as args[] of a probe without argument types.
	Dyn = &Typedef{Module: "D", Name: "<DYN>", Type: Void{}}
	// Stack is the type of stack() and ustack() values.
	Stack = &Typedef{Module: "D", Name: "stack", Type: Void{}}
	// SymAddr is the type of sym() and func() values.
	SymAddr = &Typedef{Module: "D", Name: "_symaddr", Type: Void{}}
	// USymAddr is the type of usym(), ufunc() and uaddr() values.
	USymAddr = &Typedef{Module: "D", Name: "_usymaddr", Type: Void{}}
)
