package types

import (
	"strconv"
	"strings"
)

// Names are written the way ctf_type_name writes them, because dtrace's
// messages quote them: the base type, then the declarator with pointers
// before and arrays and parameter lists after, parenthesised where C
// needs it ("int (*)[4]", "void (*)()"). Function types print without
// their parameters, as CTF does.

func (Void) String() string     { return "void" }
func (t *Int) String() string   { return t.Name }
func (t *Float) String() string { return t.Name }
func (t *Struct) String() string {
	kw := "struct "
	if t.Union {
		kw = "union "
	}
	if t.Name == "" {
		return kw + "(anon)"
	}
	return kw + t.Name
}
func (t *Enum) String() string {
	if t.Name == "" {
		return "enum (anon)"
	}
	return "enum " + t.Name
}
func (t *Typedef) String() string { return t.Name }
func (t *String) String() string  { return "string" }

func (t *Pointer) String() string   { return declString(t) }
func (t *Array) String() string     { return declString(t) }
func (t *Func) String() string      { return declString(t) }
func (t *Qualified) String() string { return declString(t) }

// declString writes a derived type: it walks down to the named base,
// building the declarator from the inside out.
func declString(t Type) string {
	var quals []string // qualifiers of the base type, written before it
	decl := ""
	prev := "" // the kind of the last derivation: "*", "[]" or "()"
	for range 64 {
		switch u := t.(type) {
		case *Pointer:
			decl = "*" + decl
			prev = "*"
			t = u.Elem
			continue
		case *Array:
			if prev == "*" {
				decl = "(" + decl + ")"
			}
			decl += "[" + strconv.FormatInt(u.Len, 10) + "]"
			prev = "[]"
			t = u.Elem
			continue
		case *Func:
			if prev == "*" {
				decl = "(" + decl + ")"
			}
			decl += "()"
			prev = "()"
			t = u.Result
			continue
		case *Qualified:
			q := qualString(u.Qual)
			if p, ok := u.Type.(*Pointer); ok {
				// A qualified pointer: the qualifier follows its star.
				decl = "*" + q + " " + decl
				prev = "*"
				t = p.Elem
				continue
			}
			quals = append(quals, q)
			t = u.Type
			continue
		}
		break
	}
	base := t.String()
	if len(quals) > 0 {
		base = strings.Join(quals, " ") + " " + base
	}
	decl = strings.TrimSuffix(decl, " ")
	if decl == "" {
		return base
	}
	return base + " " + decl
}

func qualString(q Qual) string {
	var w []string
	if q&Const != 0 {
		w = append(w, "const")
	}
	if q&Volatile != 0 {
		w = append(w, "volatile")
	}
	if q&Restrict != 0 {
		w = append(w, "restrict")
	}
	return strings.Join(w, " ")
}
