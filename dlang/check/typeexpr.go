package check

import (
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// typeString is dt_type_name: a type as messages write it.
func typeString(t types.Type) string {
	switch t {
	case nil:
		return "<none>"
	case types.Dyn:
		return "dynamic variable"
	}
	return t.String()
}

// mustType returns one of D's own types by name.
func (c *Checker) mustType(name string) types.Type {
	t, _, err := c.universe.Lookup(name)
	if err != nil {
		c.errorf(token.Pos{}, diag.D_TYPE_ERR, "failed to lookup %s\n", name)
	}
	return t
}

// typeName resolves a type written in an expression, and reports
// whether it was declared userland.
func (c *Checker) typeName(tn *ast.TypeName) (types.Type, bool) {
	base := c.specType(tn.Spec)
	if tn.Decl == nil {
		return base, tn.Spec.Userland
	}
	return c.derive(base, tn.Decl, "cast"), tn.Spec.Userland
}

// specType resolves declaration specifiers to their base type, with the
// qualifiers applied.
func (c *Checker) specType(s *ast.DeclSpec) types.Type {
	var t types.Type
	switch ts := s.Type.(type) {
	case nil:
		t = types.IntType
	case *ast.BasicType:
		t = c.basicType(ts)
	case *ast.NamedType:
		t = c.lookupType(ts.Pos(), ts.Name, ts.Name)
	case *ast.StructType:
		t = c.structType(ts)
	case *ast.EnumType:
		t = c.enumType(ts)
	}
	if q := qual(s.Qual); q != 0 {
		t = &types.Qualified{Qual: q, Type: t}
	}
	return t
}

// qual converts the qualifiers of the syntax tree to the type model's.
func qual(aq ast.Qualifier) types.Qual {
	var q types.Qual
	if aq&ast.Const != 0 {
		q |= types.Const
	}
	if aq&ast.Volatile != 0 {
		q |= types.Volatile
	}
	if aq&ast.Restrict != 0 {
		q |= types.Restrict
	}
	return q
}

// basicType looks up the type C's type keywords name, by the name
// dt_decl_type builds for them.
func (c *Checker) basicType(b *ast.BasicType) types.Type {
	var sign, base string
	short, longs := false, 0
	for _, w := range b.Words {
		switch w {
		case "signed", "unsigned":
			sign = w
		case "short":
			short = true
		case "long":
			longs++
		default:
			base = w
		}
	}
	// dt_decl_type looks the type up by the name it builds, whose
	// trailing blank ctf_lookup_by_name ignores.
	written := declName(sign, short, longs, base)
	return c.lookupType(b.Pos(), strings.TrimSpace(written), written)
}

// declName words a type as dt_decl_type names it in its messages,
// whatever order the script wrote the keywords in: sign, short, long or
// long long, then the base word, which a size drops from integer types
// (leaving the space after the size): "short long " for long short.
func declName(sign string, short bool, longs int, base string) string {
	var b strings.Builder
	if sign != "" {
		b.WriteString(sign + " ")
	}
	if short {
		b.WriteString("short ")
	}
	switch longs {
	case 1:
		b.WriteString("long ")
	case 2:
		b.WriteString("long long ")
	}
	sized := short || longs > 0
	switch {
	case base == "" && b.Len() == 0:
		b.WriteString("int")
	case base == "float" || base == "double" || base != "" && !sized:
		b.WriteString(base)
	}
	return b.String()
}

// lookupType finds a named type; written is the name as the script
// wrote it, for the message.
func (c *Checker) lookupType(pos token.Pos, name, written string) types.Type {
	t, err := c.lookup(name)
	if err != nil {
		c.errorf(pos, diag.D_UNKNOWN, "failed to resolve type %s: %s\n", written, lookupReason(err))
	}
	return t
}

func lookupReason(err error) string {
	if le, ok := err.(*types.LookupError); ok {
		switch {
		case le.Err != nil:
			return le.Err.Error()
		case le.NoMod:
			return "Module does not exist"
		}
	}
	return "Invalid type name"
}

// DefineTag reports the definition of a struct or union whose tag the
// program has defined before, as dt_decl_sou does when the definition
// begins: the parser calls it at the definition's '{'
// (parser.Config.DefineTag), so the error comes before any in the
// members.
func (c *Checker) DefineTag(st *ast.StructType) error {
	kw := "struct "
	if st.Union {
		kw = "union "
	}
	if t, _ := c.d.LookupType(kw + st.Name); t != nil {
		if old, ok := t.(*types.Struct); ok && !old.Incomplete {
			return diag.Errorf(ast.DiagPos(st), diag.D_DECL_TYPERED, "type redeclared: %s%s", kw, st.Name)
		}
	}
	return nil
}

// structType resolves a struct or union reference, or defines one.
func (c *Checker) structType(st *ast.StructType) types.Type {
	kw := "struct "
	if st.Union {
		kw = "union "
	}
	if st.Members == nil {
		if st.Name == "" {
			c.errorf(st.Pos(), diag.D_UNKNOWN, "failed to resolve type %s: Invalid type name\n", kw)
		}
		return c.tagType(scoped(kw, st.Name), func() types.Type {
			return &types.Struct{Module: "D", Name: st.Name, Union: st.Union, Incomplete: true}
		})
	}
	var s *types.Struct
	if st.Name != "" {
		if t, _ := c.d.LookupType(kw + st.Name); t != nil {
			if old, ok := t.(*types.Struct); ok {
				if !old.Incomplete {
					c.errorf(ast.DiagPos(st), diag.D_DECL_TYPERED, "type redeclared: %s%s\n", kw, st.Name)
				}
				s = old
			}
		}
	}
	if s == nil {
		s = &types.Struct{Module: "D", Name: st.Name, Union: st.Union, Incomplete: true}
		if st.Name != "" {
			c.d.Insert(kw+st.Name, s)
		}
	}
	c.layout(s, st)
	return s
}

// scoped writes a tag name for lookup: struct mod`s is mod`struct s.
func scoped(kw, name string) string {
	if i := strings.LastIndexByte(name, '`'); i >= 0 {
		return name[:i+1] + kw + name[i+1:]
	}
	return kw + name
}

// tagType looks up a struct, union or enum tag; an unknown tag is
// declared forward in D's container, as dt_decl_type does.
func (c *Checker) tagType(name string, forward func() types.Type) types.Type {
	if t, err := c.lookup(name); err == nil {
		return t
	}
	t := forward()
	c.d.Insert(name, t)
	return t
}

// layout lays out a struct or union definition as libctf's
// ctf_add_member lays out the members dt_decl_member adds, which is not
// C's layout: a member starts at the first byte after the end of the one
// before it (a bit-field too), rounded up to its alignment, and a struct
// ends where its last member ends, unpadded; a union is as large as its
// largest member. A bit-field's type is an integer of its width, as
// large and as aligned as the power of two bytes that hold it.
func (c *Checker) layout(s *types.Struct, st *ast.StructType) {
	var members []types.Member
	var end, size int64 // the end of the last member in bits; the size in bytes
	seen := map[string]bool{}
	for _, m := range st.Members {
		base := c.specType(m.Spec)
		for _, d := range m.Decls {
			if d.Name == "" && d.BitWidth == nil {
				c.errorf(m.Spec.SpecPos, diag.D_DECL_MNAME, "member declaration requires a name\n")
			}
			if strings.Contains(d.Name, "`") {
				c.errorf(declPos(d), diag.D_DECL_SCOPE, "D scoping operator may not be used in a member name (%s)\n", d.Name)
			}
			t := c.derive(base, d, "member")
			if t == types.Dyn {
				c.errorf(declPos(d), diag.D_DECL_DYNOBJ, "cannot have dynamic member: %s\n", d.Name)
			}
			if r, ok := types.Resolve(t).(*types.Struct); ok && (r.Incomplete || r.Bytes == 0 && len(r.Members()) == 0) {
				c.errorf(declPos(d), diag.D_DECL_INCOMPLETE, "incomplete struct/union/enum %s: %s\n", typeString(t), d.Name)
			}
			if r, ok := types.Resolve(t).(*types.Enum); ok && r.Incomplete {
				c.errorf(declPos(d), diag.D_DECL_INCOMPLETE, "incomplete struct/union/enum %s: %s\n", typeString(t), d.Name)
			}
			if t.Size() == 0 && !types.IsArray(t) {
				c.errorf(declPos(d), diag.D_DECL_VOIDOBJ, "cannot have void member: %s\n", d.Name)
			}
			var bits int64
			if d.BitWidth != nil {
				w := c.expr(d.BitWidth, FlagRef)
				named := d.Name != ""
				if !w.Const || (int64(w.Int) <= 0 && named) || int64(w.Int) < 0 {
					c.errorf(declPos(d), diag.D_DECL_BFCONST, "positive integral constant expression expected as bit-field size\n")
				}
				if !types.IsInteger(t) {
					name := d.Name
					if name == "" {
						name = "(anon)"
					}
					c.errorf(declPos(d), diag.D_DECL_BFTYPE, "invalid type for bit-field: %s\n", name)
				}
				if int64(w.Int) > t.Size()*8 {
					c.errorf(declPos(d), diag.D_DECL_BFSIZE, "bit-field too big for type: %s\n", d.Name)
				}
				bits = int64(w.Int)
				if bits == 0 {
					continue
				}
			}
			if seen[d.Name] && d.Name != "" {
				c.errorf(declPos(d), diag.D_UNKNOWN, "failed to define member '%s': %s\n", d.Name, "Duplicate member or variable name")
			}
			seen[d.Name] = true
			msize, malign := t.Size(), c.ctfAlign(t)
			mbits := msize * 8
			if bits != 0 {
				msize = types.BitFieldBytes(bits)
				malign, mbits = msize, bits
			}
			var moff int64
			if s.Union || len(members) == 0 {
				size = max(size, msize)
			} else {
				off := types.CTFMemberOffset(end, malign)
				moff = off * 8
				size = off + msize
			}
			end = moff + mbits
			members = append(members, types.Member{Name: d.Name, Type: t, Offset: moff, BitSize: bits})
		}
	}
	s.SetMembers(members)
	s.Bytes, s.Incomplete = size, false
}

// ctfAlign is ctf_type_align: a scalar is aligned to its size, an array
// to its element, a union to its most aligned member, and a struct to
// its first member only. A struct's is kept once computed, as structs
// nesting others by value would otherwise recompute theirs each time,
// in time quadratic in the nesting.
func (c *Checker) ctfAlign(t types.Type) int64 {
	switch r := types.Resolve(t).(type) {
	case *types.Array:
		return c.ctfAlign(r.Elem)
	case *types.Struct:
		if a, ok := c.aligns[r]; ok {
			return a
		}
		if c.aligns == nil {
			c.aligns = make(map[*types.Struct]int64)
		}
		// A struct that reaches itself by value, which only a broken
		// definition can make, sees 1 here rather than recursing
		// without end.
		c.aligns[r] = 1
		var a int64
		for _, m := range r.Members() {
			ma := c.ctfAlign(m.Type)
			if m.BitSize != 0 {
				ma = types.BitFieldBytes(m.BitSize)
			}
			a = max(a, ma)
			if !r.Union {
				break
			}
		}
		if r.Incomplete {
			// Its members may yet be defined.
			delete(c.aligns, r)
		} else {
			c.aligns[r] = a
		}
		return a
	case *types.String, *types.Func, types.Void:
		return 1
	}
	return t.Size()
}

// enumType resolves an enum reference, or defines one and its
// enumerators.
func (c *Checker) enumType(et *ast.EnumType) types.Type {
	if et.Enumerators == nil {
		return c.tagType(scoped("enum ", et.Name), func() types.Type {
			return &types.Enum{Module: "D", Name: et.Name, Bytes: 4, Incomplete: true}
		})
	}
	var e *types.Enum
	if et.Name != "" {
		if t, _ := c.d.LookupType("enum " + et.Name); t != nil {
			if old, ok := t.(*types.Enum); ok {
				if !old.Incomplete {
					c.errorf(ast.DiagPos(et), diag.D_DECL_TYPERED, "type redeclared: enum %s\n", et.Name)
				}
				e = old
			}
		}
	}
	if e == nil {
		e = &types.Enum{Module: "D", Name: et.Name, Bytes: 4}
		if et.Name != "" {
			c.d.Insert("enum "+et.Name, e)
		}
	}
	var next int64
	var values []types.Enumerator
	for _, en := range et.Enumerators {
		name := en.Name.Name
		if strings.Contains(name, "`") {
			c.errorf(enumPos(en), diag.D_DECL_SCOPE, "D scoping operator may not be used in an enumerator name (%s)\n", name)
		}
		if en.Value != nil {
			v := c.enumValue(en, values)
			next = v
		}
		if next < -1<<31 || next > 1<<31-1 {
			c.errorf(enumPos(en), diag.D_DECL_ENOFLOW, "enumerator '%s' value overflows INT_MAX (%d)\n", name, int32(1<<31-1))
		}
		for _, old := range values {
			if old.Name == name {
				c.errorf(enumPos(en), diag.D_UNKNOWN, "failed to define enumerator '%s': %s\n", name, "Duplicate member or variable name")
			}
		}
		if c.globals.lookup(name) != nil {
			c.errorf(enumPos(en), diag.D_DECL_IDRED, "identifier redeclared: %s\n", name)
		}
		values = append(values, types.Enumerator{Name: name, Value: next})
		c.globals.insert(&Ident{Name: name, Kind: Enumerator, Flags: FlagInline | FlagRef, Type: e, Value: next})
		next++
	}
	e.Values, e.Incomplete = values, false
	return e
}

func (c *Checker) enumValue(en *ast.Enumerator, earlier []types.Enumerator) int64 {
	if id, ok := en.Value.(*ast.Ident); ok {
		for _, e := range earlier {
			if e.Name == id.Name {
				return e.Value
			}
		}
	}
	v := c.expr(en.Value, FlagRef)
	if !v.Const || !types.IsInteger(v.Type) {
		c.errorf(enumPos(en), diag.D_DECL_ENCONST, "enumerator '%s' must be assigned to an integral constant expression\n", en.Name.Name)
	}
	if v.Flags&Signed != 0 {
		return int64(v.Int)
	}
	if v.Int > 1<<63-1 {
		c.errorf(enumPos(en), diag.D_DECL_ENOFLOW, "enumerator '%s' value overflows INT_MAX (%d)\n", en.Name.Name, int32(1<<31-1))
	}
	return int64(v.Int)
}

// derive applies a declarator's pointers, arrays and function
// parameters to a base type. An associative array declarator gives
// <DYN>; its key types are checked by the declaration. kind names the
// declaration for prototype errors.
func (c *Checker) derive(base types.Type, d *ast.Declarator, kind string) types.Type {
	t := base
	for i := len(d.Derived) - 1; i >= 0; i-- {
		switch dv := d.Derived[i].(type) {
		case *ast.Pointer:
			t = &types.Pointer{Elem: t}
			if q := qual(dv.Qual); q != 0 {
				t = &types.Qualified{Qual: q, Type: t}
			}
		case *ast.Array:
			if dv.Variadic {
				c.errorf(d.NamePos, diag.D_DECL_PROTO_VARARGS, "array prototype may not use a variable-length argument list\n")
			}
			if dv.Keys != nil {
				if i != 0 {
					c.errorf(arrayPos(d, dv), diag.D_DECL_DYNOBJ, "cannot declare array of associative arrays\n")
				}
				c.prototype(dv.Keys, "array", false)
				return types.Dyn
			}
			if types.IsVoid(t) {
				c.errorf(arrayPos(d, dv), diag.D_DECL_VOIDOBJ, "cannot declare array of void\n")
			}
			var n int64
			if dv.Len != nil {
				v := c.expr(dv.Len, FlagRef)
				if !v.Const || !types.IsInteger(v.Type) || v.Int == 0 || v.Flags&Signed != 0 && int64(v.Int) < 0 {
					c.errorf(arrayPos(d, dv), diag.D_DECL_ARRSUB, "positive integral constant expression or tuple signature expected as array declaration subscript\n")
				}
				if v.Int > 1<<32-1 {
					c.errorf(arrayPos(d, dv), diag.D_DECL_ARRBIG, "array dimension too big\n")
				}
				n = int64(v.Int)
			}
			t = &types.Array{Elem: t, Len: n}
		case *ast.Func:
			// dt_decl_type gives every function D declares CTF's one
			// function type, int (), whatever its result and
			// parameters: a pointer to it is an int (*)().
			c.prototype(dv.Params, "function", true)
			t = &types.Func{Result: types.IntType}
		}
	}
	return t
}

// prototype checks the parameters of a function declarator or the keys
// of an associative array declaration, as dt_decl_prototype, and
// returns their types.
func (c *Checker) prototype(params []*ast.Param, kind string, allowVoid bool) []types.Type {
	var list []types.Type
	void := false
	for i, p := range params {
		if p.Spec.Class != ast.NoClass && p.Spec.Class != ast.Register {
			c.errorf(paramPos(p), diag.D_DECL_PARMCLASS, "inappropriate storage class for function or associative array parameter\n")
		}
		t := c.specType(p.Spec)
		name := ""
		if p.Decl != nil {
			t = c.derive(t, p.Decl, kind)
			name = p.Decl.Name
		}
		shown := name
		if shown == "" {
			shown = "(anonymous)"
		}
		switch {
		case t == types.Dyn:
			c.errorf(paramPos(p), diag.D_DECL_PROTO_TYPE, "%s prototype may not use parameter of type %s: %s, parameter #%d\n", kind, typeString(t), shown, i+1)
		case types.IsVoid(t) && !allowVoid:
			c.errorf(paramPos(p), diag.D_DECL_PROTO_TYPE, "%s prototype may not use parameter of type %s: %s, parameter #%d\n", kind, typeString(t), shown, i+1)
		case types.IsVoid(t) && name != "":
			c.errorf(paramPos(p), diag.D_DECL_PROTO_NAME, "void parameter may not have a name: %s\n", name)
		}
		if types.IsVoid(t) {
			void = true
		}
		list = append(list, t)
	}
	if void && len(params) > 1 {
		c.errorf(params[0].Spec.SpecPos, diag.D_DECL_PROTO_VOID, "void must be sole parameter\n")
	}
	if void {
		return nil
	}
	return list
}

// arrayPos returns where dt_decl_array reports errors about an array
// declarator: after its "]".
func arrayPos(d *ast.Declarator, a *ast.Array) token.Pos {
	if a.DiagPos.IsValid() {
		return a.DiagPos
	}
	return d.NamePos
}

// paramPos returns where dtrace reports errors about a parameter: the
// line of its node (dnerror in dt_decl_prototype).
func paramPos(p *ast.Param) token.Pos {
	if p.DiagPos.IsValid() {
		return p.DiagPos
	}
	return p.Spec.SpecPos
}
