package parser

import (
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/constant"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
)

// unary builds op x, folding integer constants as dt_node_op1 does.
func (p *parser) unary(pos token.Pos, op token.Token, x ast.Expr) ast.Expr {
	if c, ok := x.(*ast.IntLit); ok {
		if v, ok := constant.Unary(op, c); ok {
			// dt_node_op1 folds into the operand's node.
			v.ValuePos, v.DiagPos = pos, c.DiagPos
			return v
		}
	}
	return &ast.UnaryExpr{OpPos: pos, Op: op, X: x, DiagPos: p.lex.end}
}

// binary builds x op y, refusing a constant zero divisor and folding
// integer constants as dt_node_op2 does.
func (p *parser) binary(x ast.Expr, pos token.Pos, op token.Token, y ast.Expr) ast.Expr {
	if c, ok := y.(*ast.IntLit); ok && c.Value == 0 {
		switch op {
		case token.DIV, token.MOD, token.DIV_ASGN, token.MOD_ASGN:
			p.fail(diag.Errorf(p.lex.end, diag.D_DIV_ZERO, "expression contains division by zero"))
		}
	}
	if l, ok := x.(*ast.IntLit); ok {
		if r, ok := y.(*ast.IntLit); ok {
			if v, ok := constant.Binary(op, l, r); ok {
				v.DiagPos = p.lex.end
				return v
			}
		}
	}
	return &ast.BinaryExpr{X: x, OpPos: pos, Op: op, Y: y, DiagPos: p.lex.end}
}

// cond builds c ? x : y; a constant condition selects its branch at once,
// as dt_node_op3 does.
func (p *parser) cond(c, x, y ast.Expr) ast.Expr {
	if v, ok := c.(*ast.IntLit); ok {
		if v.Value != 0 {
			return x
		}
		return y
	}
	return &ast.CondExpr{Cond: c, X: x, Y: y, DiagPos: p.lex.end}
}

// cast builds (t)x, folding a cast of an integer constant to an integer
// type as dt_node_op2 does.
func (p *parser) cast(lparen token.Pos, t *ast.TypeName, x ast.Expr) ast.Expr {
	if c, ok := x.(*ast.IntLit); ok && len(t.Decl.Derived) == 0 {
		if to, ok := p.intTypeOf(t.Spec); ok {
			// dt_node_op2 casts the constant's own node.
			return &ast.IntLit{ValuePos: lparen, Value: constant.Convert(c, to), Type: to, DiagPos: c.DiagPos, Named: typedefName(t.Spec)}
		}
	}
	return &ast.CastExpr{Lparen: lparen, Type: t, X: x, DiagPos: p.lex.end}
}

// sizeof builds sizeof(t) or sizeof x, folding the size of a string
// constant or of a type whose size the parser knows, as dt_node_op1 does.
// end is where yacc ends it.
func (p *parser) sizeof(pos, end token.Pos, t *ast.TypeName, x ast.Expr) ast.Expr {
	size, known := uint64(0), false
	switch {
	case x != nil:
		if s, ok := x.(*ast.StringLit); ok {
			size, known = uint64(len(s.Value))+1, true
		}
	default:
		var l layout
		l, known = p.typeLayout(t.Spec, t.Decl.Derived)
		size = l.size
		if known && size == 0 {
			p.fail(diag.Errorf(end, diag.D_SIZEOF_TYPE, "cannot apply sizeof to an operand of unknown size"))
		}
	}
	if known {
		// dt_node_op1 folds into the operand's node.
		if x != nil {
			end = ast.DiagPos(x)
		}
		return &ast.IntLit{ValuePos: pos, Value: size, Type: ast.Ulong, DiagPos: end}
	}
	return &ast.SizeofExpr{Sizeof: pos, Type: t, X: x, DiagPos: end}
}

// intTypeOf returns the integer type named by specifiers, when it is one
// the parser knows: C's integer types and D's and the script's integer
// typedefs.
func (p *parser) intTypeOf(s *ast.DeclSpec) (ast.IntType, bool) {
	switch t := s.Type.(type) {
	case *ast.BasicType:
		return basicIntType(t.Words)
	case *ast.NamedType:
		name := t.Name
		if i := strings.LastIndexByte(name, '`'); i >= 0 {
			if it, ok := basicIntType([]string{name[i+1:]}); ok {
				return it, true
			}
			name = name[i+1:]
		}
		if it, ok := builtinIntType(name); ok {
			return it, true
		}
		it, ok := p.typedefInts[name]
		return it, ok
	}
	return 0, false
}

// typedefName returns the typedef that specifiers name, "" for C's
// types.
func typedefName(s *ast.DeclSpec) string {
	if t, ok := s.Type.(*ast.NamedType); ok {
		return t.Name
	}
	return ""
}

// basicIntType maps C integer type words to a type.
func basicIntType(words []string) (ast.IntType, bool) {
	unsigned, short, char, longs, other := false, false, false, 0, false
	for _, w := range words {
		switch w {
		case "unsigned":
			unsigned = true
		case "signed", "int":
		case "short":
			short = true
		case "char":
			char = true
		case "long":
			longs++
		default:
			other = true
		}
	}
	var t ast.IntType
	switch {
	case other, short && longs > 0:
		return 0, false
	case char:
		t = ast.Char
	case short:
		t = ast.Short
	case longs == 1:
		t = ast.Long
	case longs == 2:
		t = ast.LLong
	default:
		t = ast.Int
	}
	if unsigned {
		t++
	}
	return t, true
}

// builtinIntType returns the integer type of D's integer typedef name,
// in the LP64 data model, and false for a name that is none. They are
// all the typedefs of D's own "D" module (dt_open.c).
func builtinIntType(name string) (ast.IntType, bool) {
	switch name {
	case "int8_t":
		return ast.Char, true
	case "uint8_t", "uchar_t":
		return ast.UChar, true
	case "int16_t":
		return ast.Short, true
	case "uint16_t", "ushort_t":
		return ast.UShort, true
	case "int32_t", "id_t", "pid_t":
		return ast.Int, true
	case "uint32_t", "uint_t":
		return ast.Uint, true
	case "int64_t", "intptr_t", "ssize_t", "ptrdiff_t":
		return ast.Long, true
	case "uint64_t", "uintptr_t", "size_t", "ulong_t":
		return ast.Ulong, true
	case "longlong_t":
		return ast.LLong, true
	case "u_longlong_t":
		return ast.ULLong, true
	}
	return 0, false
}
