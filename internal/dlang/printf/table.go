package printf

import (
	"strings"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// A spec is an entry of dtrace's conversion table.
type spec struct {
	name  string // length modifier and character: "lld"
	ofmt  string // what printf(3) prints the value with; "s" for the text-making kinds
	proto string // the types it takes, as messages name them
	kind  kind
	// ok reports whether a value of type t suits the conversion; target
	// says whether a target process is set (-p or -c).
	ok func(t types.Type, target bool) bool
}

// defaultOut is Out before checking: the conversion's own name, or "s"
// for those that make text, as dtrace's consumer sets it.
func (s *spec) defaultOut() string {
	if s.ofmt == "s" {
		return "s"
	}
	return s.name
}

// The prototypes that messages quote.
const (
	protoXint  = "char, short, int, long, or long long"
	protoCSI   = "char, short, or int"
	protoFP    = "float, double, or long double"
	protoAddr  = "pointer or integer"
	protoUAddr = "pointer or integer (with -p/-c) or _usymaddr (without -p/-c)"
	protoCStr  = "char [] or string (or use stringof)"
	protoWStr  = "wchar_t []"
)

// specs is dtrace's conversion table, FreeBSD's variant: %wc and %ws
// print as %lc and %ls. It has no hh conversions. It is static data,
// searched by lookupSpec: a map would be made at every start.
var specs = [...]spec{
	{"a", "s", protoAddr, Addr, isKAddr},
	{"A", "s", protoUAddr, UAddr, isUAddr},
	{"c", "c", protoCSI, Signed, isCSI},
	{"C", "s", protoCSI, EscChar, isCSI},
	{"d", "d", protoXint, Decimal, isInteger},
	{"e", "e", protoFP, Float, isFloat},
	{"E", "E", protoFP, Float, isFloat},
	{"f", "f", protoFP, Float, isFloat},
	{"g", "g", protoFP, Float, isFloat},
	{"G", "G", protoFP, Float, isFloat},
	{"hd", "d", "short", Signed, isShort},
	{"hi", "i", "short", Signed, isShort},
	{"ho", "o", "unsigned short", Unsigned, isUShort},
	{"hu", "u", "unsigned short", Unsigned, isUShort},
	{"hx", "x", "short", Unsigned, isShortX},
	{"hX", "X", "short", Unsigned, isShortX},
	{"i", "i", protoXint, Signed, isInteger},
	{"I", "s", protoCStr, InetAddr, isCStr},
	{"k", "s", "stack", Stack, isStack},
	{"lc", "lc", "int", Signed, isInt},
	{"ld", "d", "long", Signed, isLong},
	{"li", "i", "long", Signed, isLong},
	{"lo", "o", "unsigned long", Unsigned, isULong},
	{"lu", "u", "unsigned long", Unsigned, isULong},
	{"ls", "ls", protoWStr, WideString, isWStr},
	{"lx", "x", "long", Unsigned, isLongX},
	{"lX", "X", "long", Unsigned, isLongX},
	{"lld", "d", "long long", Signed, isLLong},
	{"lli", "i", "long long", Signed, isLLong},
	{"llo", "o", "unsigned long long", Unsigned, isULLong},
	{"llu", "u", "unsigned long long", Unsigned, isULLong},
	{"llx", "x", "long long", Unsigned, isLongLong},
	{"llX", "X", "long long", Unsigned, isLongLong},
	{"Le", "e", "long double", Float, isLongDbl},
	{"LE", "E", "long double", Float, isLongDbl},
	{"Lf", "f", "long double", Float, isLongDbl},
	{"Lg", "g", "long double", Float, isLongDbl},
	{"LG", "G", "long double", Float, isLongDbl},
	{"o", "o", protoXint, Unsigned, isInteger},
	{"p", "x", protoAddr, Unsigned, isAddr},
	{"P", "s", "uint16_t", Port, isUShort},
	{"s", "s", protoCStr, String, isCStr},
	{"S", "s", protoCStr, EscString, isCStr},
	{"T", "s", "int64_t", RFC822Time, isTime},
	{"u", "u", protoXint, Unsigned, isInteger},
	{"wc", "lc", "int", Signed, isInt},
	{"ws", "ls", protoWStr, WideString, isWStr},
	{"x", "x", protoXint, Unsigned, isInteger},
	{"X", "X", protoXint, Unsigned, isInteger},
	{"Y", "s", "int64_t", Time, isTime},
	{"%", "%", "void", Percent, nil},
}

// lookupSpec returns the conversion called name, or nil: a format
// string has a few, and the table fifty.
func lookupSpec(name string) *spec {
	for i := range specs {
		if specs[i].name == name {
			return &specs[i]
		}
	}
	return nil
}

// The checks are dtrace's pfcheck_* routines. D's own types (stack,
// _symaddr, _usymaddr) are told by identity, as dtrace compares type
// ids; types.IsInteger and the other predicates already exclude them.

func isInteger(t types.Type, _ bool) bool { return types.IsInteger(t) }
func isFloat(t types.Type, _ bool) bool   { return types.IsFloat(t) }
func isStack(t types.Type, _ bool) bool   { return t == types.Stack }

// isPointer is dt_node_is_pointer: arrays count, strings do not.
func isPointer(t types.Type) bool {
	if types.IsString(t) {
		return false
	}
	return types.IsPointer(t) || types.IsArray(t)
}

func isAddr(t types.Type, _ bool) bool { return isPointer(t) || types.IsInteger(t) }

func isKAddr(t types.Type, _ bool) bool {
	return isPointer(t) || types.IsInteger(t) || t == types.SymAddr
}

// isUAddr accepts plain addresses only when a target process says whose
// addresses they are.
func isUAddr(t types.Type, target bool) bool {
	return t == types.USymAddr || target && (isPointer(t) || types.IsInteger(t))
}

func isCSI(t types.Type, _ bool) bool {
	return types.IsInteger(t) && size(t) <= 4
}

func isTime(t types.Type, _ bool) bool {
	return types.IsInteger(t) && size(t) == 8
}

// isCStr accepts D strings and arrays of char or signed char; not of
// unsigned char, whose CTF encoding lacks the signed bit dtrace tests.
func isCStr(t types.Type, _ bool) bool {
	if types.IsString(t) {
		return true
	}
	a, ok := types.Resolve(t).(*types.Array)
	return ok && isChar(a.Elem)
}

// isChar accepts a signed char, as dtrace's IS_CHAR, and plain char of
// either sign: Linux builds its kernel with -funsigned-char, so the char
// of its BTF (task_struct's comm, a trace event's char fields) is
// unsigned, and is still the C type char.
func isChar(t types.Type) bool {
	i, ok := types.Resolve(t).(*types.Int)
	return ok && i.Char && i.Bytes == 1 && (i.Signed || i.Name == "char")
}

// isWStr accepts arrays of any 4-byte integer: wchar_t is one.
func isWStr(t types.Type, _ bool) bool {
	a, ok := types.Resolve(t).(*types.Array)
	if !ok {
		return false
	}
	i, ok := types.Resolve(a.Elem).(*types.Int)
	return ok && i.Bytes == 4
}

// The checks of the conversions that take exactly one C type, by
// ctf_type_compat's rule: the same name and encoding once typedefs are
// removed, so %ld takes int64_t but not long long.
func isShort(t types.Type, _ bool) bool   { return ctfCompat(t, types.Short) }
func isUShort(t types.Type, _ bool) bool  { return ctfCompat(t, types.UShort) }
func isInt(t types.Type, _ bool) bool     { return ctfCompat(t, types.IntType) }
func isLong(t types.Type, _ bool) bool    { return ctfCompat(t, types.Long) }
func isULong(t types.Type, _ bool) bool   { return ctfCompat(t, types.ULong) }
func isLLong(t types.Type, _ bool) bool   { return ctfCompat(t, types.LongLong) }
func isULLong(t types.Type, _ bool) bool  { return ctfCompat(t, types.ULongLong) }
func isLongDbl(t types.Type, _ bool) bool { return ctfCompat(t, types.LongDbl) }

// isShortX and isLongX are the checks of %hx and %lx, which take either
// signedness of their integer.
func isShortX(t types.Type, _ bool) bool { return isNamed(t, "short") }
func isLongX(t types.Type, _ bool) bool  { return isNamed(t, "long") }

// isNamed reports whether t is the integer called name, of either
// signedness.
func isNamed(t types.Type, name string) bool {
	i, ok := types.Resolve(t).(*types.Int)
	if !ok {
		return false
	}
	n := intName(i.Name)
	return n == name || n == "unsigned "+name
}

// isLongLong is %llx's check: a long long of either signedness or, since
// they are long long elsewhere though long in LP64, an int64_t or
// uint64_t or a typedef of one.
func isLongLong(t types.Type, _ bool) bool {
	if isNamed(t, "long long") {
		return true
	}
	for {
		td, ok := t.(*types.Typedef)
		if !ok {
			return false
		}
		if td.Name == "int64_t" || td.Name == "uint64_t" {
			return true
		}
		t = td.Type
	}
}

// intName returns the usual spelling of a C integer type name, so that
// the names compilers write in debug information ("long int", "short
// unsigned int", "signed") match the ones dtrace's table uses. Other
// names are returned as they are.
func intName(name string) string {
	words := strings.Fields(name)
	if len(words) == 0 {
		return name
	}
	var nsigned, nunsigned, nchar, nshort, nint, nlong int
	for _, w := range words {
		switch w {
		case "signed":
			nsigned++
		case "unsigned":
			nunsigned++
		case "char":
			nchar++
		case "short":
			nshort++
		case "int":
			nint++
		case "long":
			nlong++
		default:
			return name
		}
	}
	if nsigned+nunsigned > 1 || nchar+nshort+min(nlong, 1) > 1 || nchar+nint > 1 ||
		nint > 1 || nlong > 2 {
		return name
	}
	u := ""
	if nunsigned > 0 {
		u = "unsigned "
	}
	switch {
	case nchar > 0 && nsigned > 0:
		return "signed char"
	case nchar > 0:
		return u + "char"
	case nshort > 0:
		return u + "short"
	case nlong == 2:
		return u + "long long"
	case nlong == 1:
		return u + "long"
	}
	return u + "int"
}

// size is the size of a value of type t, as dt_node_type_size gives it
// for the values printf takes.
func size(t types.Type) int64 {
	if t == nil {
		return 0
	}
	return t.Size()
}
