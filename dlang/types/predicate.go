package types

// The predicates look through typedefs and qualifiers. D's own typedefs
// (stack, _symaddr, _usymaddr, <DYN>) name void but are not void.

// IsVoid reports whether t is void.
func IsVoid(t Type) bool {
	if isSpecial(t) {
		return false
	}
	_, ok := Resolve(t).(Void)
	return ok
}

// isSpecial reports whether t is one of D's own types, seen through
// qualifiers.
func isSpecial(t Type) bool {
	t = Unqualified(t)
	return t == Dyn || t == Stack || t == SymAddr || t == USymAddr
}

// IsInteger reports whether t is an integer or enum type.
func IsInteger(t Type) bool {
	switch Resolve(t).(type) {
	case *Int, *Enum:
		return !isSpecial(t)
	}
	return false
}

// IsFloat reports whether t is a floating-point type.
func IsFloat(t Type) bool {
	_, ok := Resolve(t).(*Float)
	return ok
}

// IsArith reports whether t is an integer or floating-point type.
func IsArith(t Type) bool { return IsInteger(t) || IsFloat(t) }

// IsPointer reports whether t is a pointer. Arrays are not, though they
// decay to pointers in expressions; the checker decides that.
func IsPointer(t Type) bool {
	_, ok := Resolve(t).(*Pointer)
	return ok
}

// IsScalar reports whether t is an integer, enum or pointer: a value
// that fits a DIF register.
func IsScalar(t Type) bool {
	switch Resolve(t).(type) {
	case *Int, *Enum, *Pointer:
		return !isSpecial(t)
	}
	return false
}

// IsString reports whether t is D's string type.
func IsString(t Type) bool {
	_, ok := Resolve(t).(*String)
	return ok
}

// IsSOU reports whether t is a struct or union.
func IsSOU(t Type) bool {
	_, ok := Resolve(t).(*Struct)
	return ok
}

// IsArray reports whether t is an array.
func IsArray(t Type) bool {
	_, ok := Resolve(t).(*Array)
	return ok
}

// IsFunc reports whether t is a function type.
func IsFunc(t Type) bool {
	_, ok := Resolve(t).(*Func)
	return ok
}

// IsSigned reports whether values of t are signed: signed integers,
// enums and floats.
func IsSigned(t Type) bool {
	switch u := Resolve(t).(type) {
	case *Int:
		return u.Signed
	case *Enum, *Float:
		return true
	}
	return false
}

// IsComplete reports whether t has a known size: not void, not a
// forward declaration, not an array of those.
func IsComplete(t Type) bool {
	switch u := Resolve(t).(type) {
	case *Struct:
		return !u.Incomplete
	case *Enum:
		return !u.Incomplete
	case *Array:
		return IsComplete(u.Elem)
	case Void, *Func:
		return false
	}
	return true
}

// Elem returns what a pointer or array type t refers to, and whether t
// is one.
func Elem(t Type) (Type, bool) {
	switch u := Resolve(t).(type) {
	case *Pointer:
		return u.Elem, true
	case *Array:
		return u.Elem, true
	}
	return nil, false
}

// Promote returns the type of a binary arithmetic operation on values of
// types l and r, as dt_type_promote gives it: enums count as int, the
// operand of greater rank (width, then unsignedness) wins, and a tie
// keeps the left operand's type unless the right one is the later
// defined.
func Promote(l, r Type) Type {
	lt, rt := promoteOperand(l), promoteOperand(r)
	lr, rr := rank(lt), rank(rt)
	if rr > lr {
		return rt
	}
	return lt
}

// promoteOperand maps an enum to int; others are kept with their
// typedef names, as dtrace keeps the node's type.
func promoteOperand(t Type) Type {
	if _, ok := Resolve(t).(*Enum); ok {
		return IntType
	}
	return t
}

// rank is an integer type's conversion rank: its width in bits, plus one
// when it is unsigned, so that unsigned wins over signed of the same
// width.
func rank(t Type) int64 {
	switch u := Resolve(t).(type) {
	case *Int:
		r := u.Bytes * 8
		if !u.Signed {
			r++
		}
		return r
	case *Float:
		return u.Bytes*8 + 1000
	}
	return 0
}

// Identical reports whether a and b are the same type, comparing named
// structs, unions, enums and typedefs by kind and name so that the same
// kernel type read twice, or from two modules, is one type.
func Identical(a, b Type) bool {
	return identical(a, b, 0)
}

func identical(a, b Type, depth int) bool {
	if a == b {
		return true
	}
	if depth > 32 {
		return false
	}
	switch x := a.(type) {
	case Void:
		_, ok := b.(Void)
		return ok
	case *Int:
		y, ok := b.(*Int)
		return ok && x.Bytes == y.Bytes && x.Signed == y.Signed && x.Name == y.Name
	case *Float:
		y, ok := b.(*Float)
		return ok && x.Bytes == y.Bytes
	case *Pointer:
		y, ok := b.(*Pointer)
		return ok && identical(x.Elem, y.Elem, depth+1)
	case *Array:
		y, ok := b.(*Array)
		return ok && x.Len == y.Len && identical(x.Elem, y.Elem, depth+1)
	case *Func:
		y, ok := b.(*Func)
		if !ok || x.Variadic != y.Variadic || len(x.Params) != len(y.Params) || !identical(x.Result, y.Result, depth+1) {
			return false
		}
		for i := range x.Params {
			if !identical(x.Params[i], y.Params[i], depth+1) {
				return false
			}
		}
		return true
	case *Struct:
		y, ok := b.(*Struct)
		return ok && x.Union == y.Union && x.Name != "" && x.Name == y.Name
	case *Enum:
		y, ok := b.(*Enum)
		return ok && x.Name != "" && x.Name == y.Name
	case *Typedef:
		y, ok := b.(*Typedef)
		return ok && x.Name == y.Name && identical(x.Type, y.Type, depth+1)
	case *Qualified:
		y, ok := b.(*Qualified)
		return ok && x.Qual == y.Qual && identical(x.Type, y.Type, depth+1)
	case *String:
		_, ok := b.(*String)
		return ok
	}
	return false
}

// Compatible reports whether a and b are compatible as ctf_type_compat
// decides: the same after typedefs and qualifiers are removed, integers
// and floats of the same width and kind, and pointers and arrays to
// compatible types.
func Compatible(a, b Type) bool {
	return compatible(a, b, 0)
}

func compatible(a, b Type, depth int) bool {
	if depth > 32 {
		return false
	}
	ra, rb := Resolve(a), Resolve(b)
	if ra == rb {
		return true
	}
	switch x := ra.(type) {
	case *Int:
		y, ok := rb.(*Int)
		return ok && x.Bytes == y.Bytes && x.Signed == y.Signed && x.Char == y.Char && x.Bool == y.Bool
	case *Float:
		y, ok := rb.(*Float)
		return ok && x.Bytes == y.Bytes
	case *Pointer:
		y, ok := rb.(*Pointer)
		return ok && compatible(x.Elem, y.Elem, depth+1)
	case *Array:
		y, ok := rb.(*Array)
		return ok && x.Len == y.Len && compatible(x.Elem, y.Elem, depth+1)
	case *Enum:
		y, ok := rb.(*Enum)
		return ok && x.Name == y.Name && x.Bytes == y.Bytes
	case *Struct:
		y, ok := rb.(*Struct)
		return ok && x.Union == y.Union && x.Name == y.Name && (x.Name != "" || len(x.Members()) == len(y.Members()))
	}
	return identical(ra, rb, depth)
}
