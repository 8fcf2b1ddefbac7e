package parser

import (
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// dtrace folds sizeof(type) and offsetof(type, member) while it parses,
// because it knows every type's layout then. The parser knows the layout
// of C's basic types, D's typedefs, and the structs, unions, enums and
// typedefs the script defines, laid out as libctf lays out D's types;
// sizeof and offsetof of other types (the kernel's) are left for the
// type checker.

// maxLayoutDepth bounds the nesting of types whose layout is computed.
const maxLayoutDepth = 64

// layout is a type's size and alignment in bytes.
type layout struct {
	size, align uint64
}

// defaultStringSize is the size of D's string type: the strsize option's
// default.
const defaultStringSize = 256

// typeLayout returns the layout of specifiers with derivations applied
// (outermost last), and whether it is known.
func (p *parser) typeLayout(s *ast.DeclSpec, derived []ast.Derivation) (layout, bool) {
	// A struct that contains itself, or a typedef chain that loops, has
	// no layout; the type checker reports it.
	if p.layoutDepth > maxLayoutDepth {
		return layout{}, false
	}
	p.layoutDepth++
	defer func() { p.layoutDepth-- }()
	if n := len(derived); n > 0 {
		switch d := derived[n-1].(type) {
		case *ast.Pointer:
			return layout{8, 8}, true
		case *ast.Array:
			n, ok := d.Len.(*ast.IntLit)
			if !ok || d.Keys != nil {
				return layout{}, false
			}
			elem, ok := p.typeLayout(s, derived[:len(derived)-1])
			return layout{elem.size * n.Value, elem.align}, ok
		}
		return layout{}, false
	}
	switch t := s.Type.(type) {
	case *ast.BasicType:
		switch strings.Join(t.Words, " ") {
		case "void":
			return layout{0, 1}, true
		case "float":
			return layout{4, 4}, true
		case "double":
			return layout{8, 8}, true
		case "long double":
			return layout{16, 16}, true
		case "string":
			size := uint64(defaultStringSize)
			if p.cfg.StringSize > 0 {
				size = p.cfg.StringSize
			}
			return layout{size, 1}, true
		}
	case *ast.StructType:
		def := t
		if t.Members == nil {
			def = p.structs[structKey(t)]
		}
		if def == nil {
			return layout{}, false
		}
		l, _, ok := p.structLayout(def)
		return l, ok
	case *ast.EnumType:
		if t.Enumerators == nil && !p.enums[t.Name] {
			return layout{}, false
		}
		return layout{4, 4}, true
	case *ast.NamedType:
		if td, ok := p.typedefDecls[t.Name]; ok {
			return p.typeLayout(td.spec, td.derived)
		}
	}
	if it, ok := p.intTypeOf(s); ok {
		n := uint64(it.Bits() / 8)
		return layout{n, n}, true
	}
	return layout{}, false
}

func structKey(t *ast.StructType) string {
	if t.Union {
		return "union " + t.Name
	}
	return "struct " + t.Name
}

// field is a member's place in a struct: its byte offset, and whether it
// is a bit-field.
type field struct {
	offset   uint64
	bitField bool
}

// structLayout lays out a struct or union definition, returning its
// layout and its members' places. The layout is libctf's, as the type
// checker's (check.Checker's layout), with its rules in
// types.CTFMemberOffset and types.BitFieldBytes; a struct ends where its
// last member ends, and is aligned as its first member (ctf_type_align).
func (p *parser) structLayout(t *ast.StructType) (layout, map[string]field, bool) {
	var (
		end    uint64 // where the last member ends, in bits
		align  uint64
		size   uint64
		first  = true
		fields = make(map[string]field)
	)
	for _, m := range t.Members {
		for _, d := range m.Decls {
			l, ok := p.typeLayout(m.Spec, d.Derived)
			if !ok || l.size == 0 {
				return layout{}, nil, false
			}
			mbits := l.size * 8
			if d.BitWidth != nil {
				w, ok := d.BitWidth.(*ast.IntLit)
				if !ok {
					return layout{}, nil, false
				}
				if w.Value == 0 {
					continue // dt_decl_member ignores it
				}
				n := uint64(types.BitFieldBytes(int64(w.Value)))
				l, mbits = layout{n, n}, w.Value
			}
			if t.Union || first {
				align = max(align, l.align)
			}
			var off uint64
			if t.Union || first {
				size = max(size, l.size)
			} else {
				off = uint64(types.CTFMemberOffset(int64(end), int64(l.align)))
				size = off + l.size
			}
			first = false
			fields[d.Name] = field{offset: off, bitField: d.BitWidth != nil}
			end = off*8 + mbits
		}
	}
	return layout{size, max(align, 1)}, fields, true
}

// offsetof folds offsetof(t, member) for a struct or union the script
// defines; other types are left for the type checker. end is after its
// ")", where dt_node_offsetof runs.
func (p *parser) offsetof(pos, end token.Pos, t *ast.TypeName, member *ast.Ident) ast.Expr {
	unfolded := &ast.OffsetofExpr{Offsetof: pos, Type: t, Member: member, DiagPos: end}
	st, ok := t.Spec.Type.(*ast.StructType)
	if n, isNamed := t.Spec.Type.(*ast.NamedType); isNamed {
		if td, known := p.typedefDecls[n.Name]; known && len(td.derived) == 0 {
			st, ok = td.spec.Type.(*ast.StructType)
		}
	}
	if len(t.Decl.Derived) > 0 {
		ok = false
	}
	if !ok {
		if p.knownLayout(t) {
			p.fail(diag.Errorf(end, diag.D_OFFSETOF_TYPE, "offsetof operand must be a struct or union type"))
		}
		return unfolded
	}
	if st.Members == nil {
		if st = p.structs[structKey(st)]; st == nil {
			return unfolded
		}
	}
	_, fields, ok := p.structLayout(st)
	if !ok {
		return unfolded
	}
	f, ok := fields[member.Name]
	switch {
	case !ok:
		p.fail(diag.Errorf(end, diag.D_UNKNOWN, "failed to determine offset of %s: Member name not found", member.Name))
	case f.bitField:
		p.fail(diag.Errorf(end, diag.D_OFFSETOF_BITFIELD, "cannot take offset of a bit-field: %s", member.Name))
	}
	return &ast.IntLit{ValuePos: pos, Value: f.offset, Type: ast.Int, DiagPos: end}
}

// knownLayout reports whether the parser knows the type completely, so
// that it can say it is not a struct.
func (p *parser) knownLayout(t *ast.TypeName) bool {
	_, ok := p.typeLayout(t.Spec, t.Decl.Derived)
	return ok
}

// typedefDecl is what a typedef name stands for.
type typedefDecl struct {
	spec    *ast.DeclSpec
	derived []ast.Derivation
}

// recordTypes remembers the struct, union and enum definitions and the
// typedefs of a declaration, for layouts.
func (p *parser) recordTypes(spec *ast.DeclSpec) {
	switch t := spec.Type.(type) {
	case *ast.StructType:
		if t.Members != nil && t.Name != "" {
			if p.structs == nil {
				p.structs = make(map[string]*ast.StructType)
			}
			p.structs[structKey(t)] = t
		}
	case *ast.EnumType:
		if t.Enumerators != nil && t.Name != "" {
			if p.enums == nil {
				p.enums = make(map[string]bool)
			}
			p.enums[t.Name] = true
		}
	}
}

func (p *parser) recordTypedef(name string, spec *ast.DeclSpec, derived []ast.Derivation) {
	if p.typedefDecls == nil {
		p.typedefDecls = make(map[string]typedefDecl)
	}
	p.typedefDecls[name] = typedefDecl{spec, derived}
}
