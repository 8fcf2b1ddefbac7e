package header

import (
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
)

// TypeName returns the name that dtrace -h prints for a parameter of
// type s with declarator d (which may be nil or abstract): the name
// ctf_type_name gives the CTF type that dt_decl_type builds for it.
//
// This differs from printer.TypeString, which prints the declaration as
// written. dt_decl_type drops qualifiers, storage classes and userland,
// names integer types canonically, turns every function type into the
// one representative int () and every pointer to function into int
// (*)(), and the parameter's own name is no part of its type.
func TypeName(s *ast.DeclSpec, d *ast.Declarator) string {
	t := &ctype{kind: kBase, name: baseName(s.Type)}
	if d != nil {
		// Derived goes from the name outwards, so its first element is
		// the outermost type; build the chain from the base up.
		for i := len(d.Derived) - 1; i >= 0; i-- {
			switch dv := d.Derived[i].(type) {
			case *ast.Pointer:
				t = &ctype{kind: kPointer, ref: t}
			case *ast.Array:
				t = &ctype{kind: kArray, n: arrayLen(dv), ref: t}
			case *ast.Func:
				t = &ctype{kind: kFunc, ref: &ctype{kind: kBase, name: "int"}}
			}
		}
	}
	return t.String()
}

// baseName returns the CTF name of a base type.
func baseName(t ast.TypeSpec) string {
	switch t := t.(type) {
	case *ast.BasicType:
		return basicName(t.Words)
	case *ast.NamedType:
		return unscoped(t.Name)
	case *ast.StructType:
		if t.Union {
			return "union " + unscoped(t.Name)
		}
		return "struct " + unscoped(t.Name)
	case *ast.EnumType:
		return "enum " + unscoped(t.Name)
	}
	return "int"
}

// unscoped strips a module scope (mod`name): the CTF type found has the
// bare name.
func unscoped(name string) string {
	return name[strings.LastIndexByte(name, '`')+1:]
}

// basicName builds the name of a type written with type keywords as
// dt_decl_type does before looking it up: sign, then size, then the
// base keyword unless it is an int qualified by a size; a bare sign or
// size stands alone, and no keyword at all means int.
func basicName(words []string) string {
	var signed, unsigned, short bool
	longs := 0
	base := ""
	for _, w := range words {
		switch w {
		case "signed":
			signed = true
		case "unsigned":
			unsigned = true
		case "short":
			short = true
		case "long":
			longs++
		default:
			base = w
		}
	}
	var parts []string
	if signed {
		parts = append(parts, "signed")
	}
	if unsigned {
		parts = append(parts, "unsigned")
	}
	if short {
		parts = append(parts, "short")
	}
	switch longs {
	case 1:
		parts = append(parts, "long")
	case 2:
		parts = append(parts, "long long")
	}
	sized := short || longs > 0
	switch {
	case base == "" && len(parts) == 0:
		parts = append(parts, "int")
	case base == "int" && sized:
		// "long int" is looked up as "long".
	case base != "":
		parts = append(parts, base)
	}
	return strings.Join(parts, " ")
}

func arrayLen(a *ast.Array) uint32 {
	if lit, ok := a.Len.(*ast.IntLit); ok {
		return uint32(lit.Value)
	}
	return 0
}

// A ctype is the part of a CTF type that its name depends on.
type ctype struct {
	kind int
	name string // kBase: the full name, with any struct/union/enum tag
	n    uint32 // kArray: the number of elements
	ref  *ctype // the type pointed to, the element or return type
}

// Kinds, and precedences: ctf_type_name groups the parts of a
// declaration by C precedence.
const (
	kBase = iota
	kPointer
	kArray
	kFunc
	nPrec
)

// String renders t as libctf's ctf_type_lname does: the parts of the
// type are grouped by precedence (base, pointer, array, function), each
// group is printed in turn, and the pointer or array group is
// parenthesised when the type nests them against C's precedence, as in
// int (*)[4] or int (*)().
func (t *ctype) String() string {
	var nodes [nPrec][]*ctype
	var order [nPrec]int
	for i := range order {
		order[i] = -1
	}
	next := 0
	var push func(t *ctype)
	push = func(t *ctype) {
		if t.ref != nil {
			push(t.ref)
		}
		prec := t.kind
		if len(nodes[prec]) == 0 {
			order[prec] = next
			next++
		}
		if t.kind == kArray {
			// Array declarators read inside out.
			nodes[prec] = append([]*ctype{t}, nodes[prec]...)
		} else {
			nodes[prec] = append(nodes[prec], t)
		}
	}
	push(t)

	ptr := order[kPointer] > kPointer
	arr := order[kArray] > kArray
	rp, lp := -1, -1
	switch {
	case arr:
		rp = kArray
	case ptr:
		rp = kPointer
	}
	switch {
	case ptr:
		lp = kPointer
	case arr:
		lp = kArray
	}

	var b strings.Builder
	last := kPointer // no space before the first part
	for prec := range nodes {
		for _, n := range nodes[prec] {
			if last != kPointer && last != kArray {
				b.WriteByte(' ')
			}
			if lp == prec {
				b.WriteByte('(')
				lp = -1
			}
			switch n.kind {
			case kBase:
				b.WriteString(n.name)
			case kPointer:
				b.WriteByte('*')
			case kArray:
				b.WriteString("[" + strconv.FormatUint(uint64(n.n), 10) + "]")
			case kFunc:
				b.WriteString("()")
			}
			last = n.kind
		}
		if rp == prec {
			b.WriteByte(')')
		}
	}
	return b.String()
}
