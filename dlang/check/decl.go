package check

import (
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// declaration checks a top-level declaration: typedefs, struct, union
// and enum definitions, and variables of each storage class, as
// dt_node_decl does.
func (c *Checker) declaration(d *ast.Declaration) {
	base := c.specType(d.Spec)
	if len(d.Decls) == 0 {
		switch d.Spec.Type.(type) {
		case *ast.StructType, *ast.EnumType:
			return
		}
		c.errorf(ast.DiagPos(d), diag.D_DECL_USELESS, "useless declaration\n")
	}
	for _, dd := range d.Decls {
		c.declarator(d.Spec, base, dd)
	}
}

func (c *Checker) declarator(spec *ast.DeclSpec, base types.Type, dd *ast.Declarator) {
	pos := declPos(dd)
	name := dd.Name
	if strings.Contains(name, "`") {
		c.errorf(pos, diag.D_DECL_SCOPE, "D scoping operator may not be used in a declaration name (%s)\n", name)
	}
	class := spec.Class
	t := c.derive(base, dd, "function")
	if types.IsFunc(t) && (class == ast.NoClass || class == ast.Static) {
		class = ast.Extern
	}
	switch class {
	case ast.Auto, ast.Register, ast.Static:
		c.errorf(pos, diag.D_DECL_BADCLASS, "specified storage class not appropriate in D\n")
	case ast.Extern:
		// An extern declares the type of a kernel symbol; the symbol's
		// own type wins where the kernel provides one.
		return
	case ast.Typedef:
		if c.globals.lookup(name) != nil {
			c.errorf(pos, diag.D_DECL_IDRED, "global variable identifier redeclared: %s\n", name)
		}
		// Declarations of #included files go in C's container, as
		// dtrace's, so that a header may declare what D also defines.
		target := c.d
		if pos.Filename() != c.file {
			target = c.cdefs
		}
		if old, _ := target.LookupType(name); old != nil {
			c.errorf(pos, diag.D_DECL_IDRED, "typedef redeclared: %s\n", name)
		}
		target.Insert(name, &types.Typedef{Module: target.ModuleName(), Name: name, Type: t})
		return
	}
	sc, flags := c.globals, IdentFlags(0)
	switch class {
	case ast.This:
		sc, flags = c.locals, FlagLocal
	case ast.Self:
		sc, flags = c.tls, FlagTLS
	}
	var arr *ast.Array
	if len(dd.Derived) > 0 {
		arr, _ = dd.Derived[0].(*ast.Array)
	}
	if arr != nil && arr.Len == nil && arr.Keys == nil {
		c.errorf(pos, diag.D_DECL_ARRNULL, "array declaration requires array dimension or tuple signature: %s\n", name)
	}
	old := sc.lookup(name)
	if sc == c.globals {
		old = c.lookupGlobal(name)
	}
	if old != nil && old.Builtin {
		c.errorf(pos, diag.D_DECL_IDRED, "built-in identifier redeclared: %s\n", name)
	}
	if t, _ := c.d.LookupType(name); t != nil {
		c.errorf(pos, diag.D_DECL_IDRED, "typedef identifier redeclared: %s\n", name)
	}
	assoc := arr != nil && arr.Keys != nil
	kind := Scalar
	var keys []types.Type
	if assoc {
		kind = Array
		if class == ast.This {
			c.errorf(pos, diag.D_DECL_LOCASSC, "associative arrays may not be declared as local variables: %s\n", name)
		}
		keys = c.prototype(arr.Keys, "array", false)
		t = c.derive(base, &ast.Declarator{NamePos: dd.NamePos, Derived: dd.Derived[1:]}, "array")
	}
	if old != nil {
		if old.Kind != kind || old.Type != nil && !types.Identical(old.Type, t) {
			c.errorf(pos, diag.D_DECL_IDRED, "identifier redeclared: %s\n\t current: %s %s\n\tprevious: %s %s\n",
				name, kind, typeString(t), old.Kind, typeString(old.Type))
		}
		if assoc && old.Keys != nil {
			for i := 0; i < len(keys) && i < len(old.Keys); i++ {
				if !types.Identical(keys[i], old.Keys[i]) {
					c.errorf(pos, diag.D_DECL_IDRED, "identifier redeclared: %s\n\t current: %s, key #%d of type %s\n\tprevious: %s, key #%d of type %s\n",
						name, kind, i+1, typeString(keys[i]), old.Kind, i+1, typeString(old.Keys[i]))
				}
			}
			if len(keys) != len(old.Keys) {
				c.errorf(pos, diag.D_DECL_IDRED, "identifier redeclared: %s\n\t current: %s of %s, tuple length %d\n\tprevious: %s of %s, tuple length %d\n",
					name, kind, typeString(t), len(keys), old.Kind, typeString(old.Type), len(old.Keys))
			}
		}
		return
	}
	switch r := types.Resolve(t).(type) {
	case types.Void:
		if !types.IsVoid(t) {
			break
		}
		c.errorf(pos, diag.D_DECL_VOIDOBJ, "cannot have void object: %s\n", name)
	case *types.Struct:
		if r.Incomplete || r.Bytes == 0 {
			c.errorf(pos, diag.D_DECL_INCOMPLETE, "incomplete struct/union/enum %s: %s\n", typeString(t), name)
		}
	case *types.Enum:
		if r.Incomplete {
			c.errorf(pos, diag.D_DECL_INCOMPLETE, "incomplete struct/union/enum %s: %s\n", typeString(t), name)
		}
	}
	id := sc.create(name, kind, flags|FlagWrite|FlagDecl)
	id.Type = t
	if spec.Userland {
		id.Flags |= FlagUser
	}
	if assoc {
		id.Keys = keys
	}
}

// inline checks inline T name = expr; and defines name.
func (c *Checker) inline(d *ast.InlineDecl) {
	pos := ast.DiagPos(d) // dt_node_inline runs after the ";"
	if d.Spec.Class != ast.NoClass {
		c.errorf(pos, diag.D_DECL_BADCLASS, "specified storage class not appropriate for inline declaration\n")
	}
	name := d.Decl.Name
	if name == "" {
		c.errorf(pos, diag.D_DECL_USELESS, "inline declaration requires a name\n")
	}
	if old := c.lookupGlobal(name); old != nil {
		prev := ""
		if old.Inline != nil {
			prev = "inline"
		}
		c.errorf(pos, diag.D_DECL_IDRED, "identifier redefined: %s\n\t current: inline definition\n\tprevious: %s %s\n", name, old.Kind, prev)
	}
	base := c.specType(d.Spec)
	var arr *ast.Array
	if len(d.Decl.Derived) > 0 {
		arr, _ = d.Decl.Derived[0].(*ast.Array)
	}
	kind := Scalar
	t := base
	var params map[string]*Ident
	var inlineParams []*Ident
	if arr != nil {
		if arr.Len == nil && arr.Keys == nil {
			c.errorf(pos, diag.D_DECL_ARRNULL, "inline declaration requires array tuple signature: %s\n", name)
		}
		if arr.Keys == nil {
			c.errorf(pos, diag.D_DECL_ARRNULL, "inline declaration cannot be of scalar array type: %s\n", name)
		}
		kind = Array
		keys := c.prototype(arr.Keys, "array", false)
		params = map[string]*Ident{}
		for i, k := range arr.Keys {
			p := &Ident{Name: "", Kind: Scalar, Type: keys[i], Flags: FlagRef}
			if k.Decl != nil && k.Decl.Name != "" {
				p.Name = k.Decl.Name
				params[k.Decl.Name] = p
			}
			inlineParams = append(inlineParams, p)
		}
		t = c.derive(base, &ast.Declarator{NamePos: pos, Derived: d.Decl.Derived[1:]}, "array")
	} else {
		t = c.derive(base, d.Decl, "inline")
	}
	if types.IsVoid(t) {
		c.errorf(pos, diag.D_DECL_VOIDOBJ, "cannot declare void inline: %s\n", name)
	}
	if s, ok := types.Resolve(t).(*types.Struct); ok && s.Incomplete {
		c.errorf(pos, diag.D_DECL_INCOMPLETE, "incomplete struct/union/enum %s: %s\n", typeString(t), name)
	}
	saved := c.inlineArgs
	c.inlineArgs = params
	defer func() { c.inlineArgs = saved }()
	v := c.expr(d.Value, FlagRef)
	id := &Ident{Name: name, Kind: kind, Flags: FlagInline | FlagRef | FlagDecl, Type: t, Inline: d, InlineParams: inlineParams}
	if v.Ident != nil && v.Ident.Flags&FlagUser != 0 {
		id.Flags |= FlagUser
	}
	if v.Ident != nil && (v.Ident.Kind == XlateSOU || v.Ident.Kind == XlatePtr) {
		id.xlator = v.Ident.xlator
		lt := types.Resolve(t)
		if p, ok := lt.(*types.Pointer); ok {
			lt = types.Resolve(p.Elem)
		}
		if !types.Compatible(lt, v.Ident.xlator.To) {
			c.errorf(pos, diag.D_OP_INCOMPAT, "inline %s definition uses incompatible types: \"%s\" = \"%s\"\n", name, typeString(lt), typeString(v.Ident.xlator.To))
		}
	} else if kind == Scalar && !c.argCompat(typed(t, false), v) {
		c.errorf(pos, diag.D_OP_INCOMPAT, "inline %s definition uses incompatible types: \"%s\" = \"%s\"\n", name, typeString(t), typeName(v))
	}
	c.globals.insert(id)
}

// Translator is a translator definition: how to build a value of type
// To from a value of type From named Arg.
type Translator struct {
	Decl *ast.Translator
	To   types.Type // the output struct or union, resolved
	// Out is the output type as the definition names it: To, or a
	// typedef of it, which is the type of translated data
	// (dx_souid's).
	Out  types.Type
	From types.Type
	// Arg is the identifier the members' expressions name the input by.
	Arg *Ident
}

// Member returns the expression that translates member name, or nil.
func (xl *Translator) Member(name string) ast.Expr {
	if m := xl.member(name); m != nil {
		return m.Value
	}
	return nil
}

func (xl *Translator) member(name string) *ast.XlateMember {
	for _, m := range xl.Decl.Members {
		if m.Name.Name == name {
			return m
		}
	}
	return nil
}

// translator checks a translator definition, as dt_node_xlator and
// dt_cook_xlator do.
func (c *Checker) translator(d *ast.Translator) {
	to, _ := c.typeName(d.To)
	from, _ := c.typeName(d.From)
	if old := c.exactXlator(from, to); old != nil {
		c.errorf(ast.DiagPos(d), diag.D_XLATE_REDECL, "translator from %s to %s has already been declared\n", typeString(from), typeString(to))
	}
	r := types.Resolve(to)
	s, ok := r.(*types.Struct)
	switch {
	case ok && s.Incomplete:
		c.errorf(ast.DiagPos(d), diag.D_XLATE_SOU, "incomplete struct/union/enum %s\n", typeString(to))
	case !ok:
		c.errorf(ast.DiagPos(d), diag.D_XLATE_SOU, "translator output type must be a struct or union\n")
	}
	xl := &Translator{Decl: d, To: s, Out: to, From: from}
	argName := "T"
	if d.Arg != nil {
		argName = d.Arg.Name
	}
	xl.Arg = &Ident{Name: argName, Kind: Scalar, Type: from, Flags: FlagRef}
	saved := c.inlineArgs
	c.inlineArgs = map[string]*Ident{argName: xl.Arg}
	defer func() { c.inlineArgs = saved }()
	for _, m := range d.Members {
		mem, ok := c.member(m.Name.Pos(), s, m.Name.Name)
		if !ok {
			c.errorf(ast.DiagPos(d), diag.D_XLATE_MEMB, "translator member %s is not a member of %s\n", m.Name.Name, s)
		}
		v := c.expr(m.Value, FlagRef)
		if !c.argCompat(typed(mem.Type, false), v) {
			c.errorf(ast.DiagPos(d), diag.D_XLATE_INCOMPAT, "translator member %s definition uses incompatible types: \"%s\" = \"%s\"\n",
				m.Name.Name, typeString(mem.Type), typeName(v))
		}
	}
	if c.xlators == nil {
		c.xlators = map[string][]*Translator{}
	}
	k := xlatorKey(xl.To)
	c.xlators[k] = append(c.xlators[k], xl)
}

// xlatorKey returns the key of the translators to t: its struct or
// union's name, which types.Compatible requires to be the same, or ""
// for a type that is neither.
func xlatorKey(t types.Type) string {
	s, ok := types.Resolve(t).(*types.Struct)
	if !ok {
		return ""
	}
	if s.Union {
		return "union " + s.Name
	}
	return "struct " + s.Name
}

// exactXlator finds a translator declared from exactly from to to.
func (c *Checker) exactXlator(from, to types.Type) *Translator {
	for _, xl := range c.xlators[xlatorKey(to)] {
		if types.Compatible(xl.From, from) && types.Compatible(xl.To, types.Resolve(to)) {
			return xl
		}
	}
	return nil
}

// lookupXlator finds the translator xlate<to>(x) uses, as
// dt_xlator_lookup does: to may be a pointer to the output struct; the
// input matches exactly, after typedefs, or as an argument would.
func (c *Checker) lookupXlator(from, to types.Type) *Translator {
	dst := types.Resolve(to)
	if p, ok := dst.(*types.Pointer); ok {
		dst = types.Resolve(p.Elem)
	}
	if _, ok := dst.(*types.Struct); !ok || from == nil {
		return nil
	}
	xls := c.xlators[xlatorKey(dst)]
	for _, xl := range xls {
		if types.Compatible(xl.To, dst) && types.Identical(xl.From, from) {
			return xl
		}
	}
	for _, xl := range xls {
		if types.Compatible(xl.To, dst) && types.Compatible(xl.From, from) {
			return xl
		}
	}
	for _, xl := range xls {
		if types.Compatible(xl.To, dst) && c.argCompat(typed(from, false), typed(xl.From, false)) {
			return xl
		}
	}
	return nil
}

// declPos returns where dtrace reports errors about a declarator: where
// it declares the name, once yacc has seen the token after it.
func declPos(d *ast.Declarator) token.Pos {
	if d.DiagPos.IsValid() {
		return d.DiagPos
	}
	return d.NamePos
}

// enumPos returns where dt_decl_enumerator reports errors about an
// enumerator: once yacc has seen the token after it.
func enumPos(e *ast.Enumerator) token.Pos {
	if e.DiagPos.IsValid() {
		return e.DiagPos
	}
	return e.Name.Pos()
}
