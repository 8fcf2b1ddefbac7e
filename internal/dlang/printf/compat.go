package printf

import "github.com/kdtrace/kdtrace/dlang/types"

// keyCompatible reports whether two aggregations' keys of types l and r
// may print in one printa table: dt_node_is_argcompat for keys, which
// are never constants.
func keyCompatible(l, r types.Type) bool {
	switch {
	case types.IsInteger(l) && types.IsInteger(r),
		strCompatible(l) && strCompatible(r),
		l == types.Stack && r == types.Stack,
		l == types.SymAddr && r == types.SymAddr,
		l == types.USymAddr && r == types.USymAddr:
		return true
	}
	switch types.Resolve(l).(type) {
	case *types.Func, *types.Struct:
		return ctfCompat(l, r)
	}
	return ptrCompatible(l, r)
}

// strCompatible reports whether t converts to a string: a string, or a
// pointer to or array of char.
func strCompatible(t types.Type) bool {
	switch u := types.Resolve(t).(type) {
	case *types.String:
		return true
	case *types.Pointer:
		return isChar(u.Elem)
	case *types.Array:
		return isChar(u.Elem)
	}
	return false
}

// ptrCompatible reports whether l and r are pointers or arrays to
// compatible types, or one of them to void.
func ptrCompatible(l, r types.Type) bool {
	if l == types.Dyn || r == types.Dyn || types.IsInteger(l) || types.IsInteger(r) {
		return false
	}
	lref, lok := referent(l)
	rref, rok := referent(r)
	return lok && rok && (isVoid(lref) || isVoid(rref) || ctfCompat(lref, rref))
}

// referent returns what a pointer or array type points to. D's string
// is an array of char to dtrace.
func referent(t types.Type) (types.Type, bool) {
	if _, ok := types.Resolve(t).(*types.String); ok {
		return types.Char, true
	}
	return types.Elem(t)
}

// isVoid reports whether t resolves to void, as dtrace's own types
// (stack, _symaddr, …) do too.
func isVoid(t types.Type) bool {
	_, ok := types.Resolve(t).(types.Void)
	return ok
}

// ctfCompat is ctf_type_compat: the same type, or, once typedefs and
// qualifiers are removed, the same kind and name with the same encoding
// (integers, floats), size (structs, unions), length (arrays) or
// compatible referents (pointers, arrays). Integer names are compared
// in their usual spelling (see intName).
func ctfCompat(l, r types.Type) bool {
	for depth := 0; depth < 32; depth++ {
		if l == r {
			return true
		}
		l, r = types.Resolve(l), types.Resolve(r)
		switch x := l.(type) {
		case types.Void:
			_, ok := r.(types.Void)
			return ok
		case *types.Int:
			y, ok := r.(*types.Int)
			return ok && intName(x.Name) == intName(y.Name) && x.Bytes == y.Bytes &&
				x.Signed == y.Signed && x.Char == y.Char && x.Bool == y.Bool
		case *types.Float:
			y, ok := r.(*types.Float)
			return ok && x.Name == y.Name && x.Bytes == y.Bytes
		case *types.String:
			_, ok := r.(*types.String)
			return ok
		case *types.Struct:
			y, ok := r.(*types.Struct)
			return ok && x.Union == y.Union && x.Name == y.Name && x.Size() == y.Size()
		case *types.Enum:
			y, ok := r.(*types.Enum)
			return ok && x.Name == y.Name
		case *types.Pointer:
			y, ok := r.(*types.Pointer)
			if !ok {
				return false
			}
			l, r = x.Elem, y.Elem
		case *types.Array:
			y, ok := r.(*types.Array)
			if !ok || x.Len != y.Len {
				return false
			}
			l, r = x.Elem, y.Elem
		default:
			// Function types have no name to compare; distinct ones
			// never match.
			return false
		}
	}
	return false
}
