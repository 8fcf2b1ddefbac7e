// Package constant folds D integer constant expressions with the rules
// libdtrace applies while it parses (dt_node_op1, dt_node_op2 and
// dt_type_promote): the parser folds as it builds the tree, and the
// sugar pass folds the conditions it builds, exactly as dtrace does.
package constant

import (
	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/token"
)

// Unary folds op applied to an integer constant as dt_node_op1
// does, reporting false for operators it does not fold. Negating an
// unsigned constant truncates the result to the constant's width.
func Unary(op token.Token, c *ast.IntLit) (*ast.IntLit, bool) {
	v := *c
	switch op {
	case token.INEG:
		v.Value = -v.Value
		if !v.Type.Signed() {
			v.Value &= ^uint64(0) >> (64 - v.Type.Bits())
		}
	case token.IPOS:
	case token.BNEG:
		v.Value = ^v.Value
	case token.LNEG:
		v.Value = b2u(v.Value == 0)
	default:
		return nil, false
	}
	return &v, true
}

// Binary folds l op r as dt_node_op2 does, reporting false for
// operators it does not fold. Logical operators and comparisons give an
// int; shifts keep the left type; the others take the promoted type. A
// zero divisor is not folded.
func Binary(op token.Token, l, r *ast.IntLit) (*ast.IntLit, bool) {
	a, b := l.Value, r.Value
	res := &ast.IntLit{ValuePos: l.ValuePos, Type: ast.Int}
	promoted := promote(l.Type, r.Type)
	signed := promoted.Signed()
	switch op {
	case token.LOR:
		res.Value = b2u(a != 0 || b != 0)
	case token.LXOR:
		res.Value = b2u((a != 0) != (b != 0))
	case token.LAND:
		res.Value = b2u(a != 0 && b != 0)
	case token.EQU:
		res.Value = b2u(a == b)
	case token.NEQ:
		res.Value = b2u(a != b)
	case token.LT, token.LE, token.GT, token.GE:
		res.Value = b2u(compare(op, a, b, signed))
	case token.BOR:
		res.Value, res.Type = a|b, promoted
	case token.XOR:
		res.Value, res.Type = a^b, promoted
	case token.BAND:
		res.Value, res.Type = a&b, promoted
	case token.SHL:
		res.Value, res.Type = a<<b, l.Type
	case token.SHR:
		res.Value, res.Type = a>>b, l.Type
	case token.ADD:
		res.Value, res.Type = a+b, promoted
	case token.SUB:
		res.Value, res.Type = a-b, promoted
	case token.MUL:
		res.Value, res.Type = a*b, promoted
	case token.DIV, token.MOD:
		if b == 0 {
			return nil, false
		}
		res.Type = promoted
		switch {
		case signed && op == token.DIV:
			res.Value = uint64(int64(a) / int64(b))
		case signed:
			res.Value = uint64(int64(a) % int64(b))
		case op == token.DIV:
			res.Value = a / b
		default:
			res.Value = a % b
		}
	default:
		return nil, false
	}
	return res, true
}

func compare(op token.Token, a, b uint64, signed bool) bool {
	if signed {
		x, y := int64(a), int64(b)
		switch op {
		case token.LT:
			return x < y
		case token.LE:
			return x <= y
		case token.GT:
			return x > y
		}
		return x >= y
	}
	switch op {
	case token.LT:
		return a < b
	case token.LE:
		return a <= b
	case token.GT:
		return a > b
	}
	return a >= b
}

// promote returns the type dt_type_promote picks for a binary operation
// on constants: the higher rank, where rank is the width plus one for
// unsigned, with ties going to the type declared later (long long over
// long).
func promote(l, r ast.IntType) ast.IntType {
	lr, rr := rank(l), rank(r)
	switch {
	case lr > rr:
		return l
	case rr > lr:
		return r
	}
	return max(l, r)
}

func rank(t ast.IntType) int {
	r := t.Bits()
	if !t.Signed() {
		r++
	}
	return r
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Convert returns the value of constant c converted to type to, as
// libdtrace folds a cast of a constant (see Cast).
func Convert(c *ast.IntLit, to ast.IntType) uint64 {
	return Cast(c.Value, c.Type.Bits(), c.Type.Signed(), to.Bits())
}

// Cast returns v, a constant of width from bits and signedness signed,
// converted to width to bits as dt_cast folds it: narrowing keeps the low
// bits, widening extends the source's sign up to the new width (and no
// further), and a cast between types of one width changes nothing.
func Cast(v uint64, from int, signed bool, to int) uint64 {
	switch {
	case to < from:
		v &= mask(to)
	case to > from:
		if signed {
			shift := 64 - from
			v = uint64(int64(v<<shift) >> shift)
		} else {
			v &= mask(from)
		}
		v &= mask(to)
	}
	return v
}

func mask(bits int) uint64 { return ^uint64(0) >> (64 - bits) }

var literalLimits = [...]uint64{
	ast.Int:    0x7fffffff,
	ast.Uint:   0xffffffff,
	ast.Long:   0x7fffffffffffffff,
	ast.Ulong:  0xffffffffffffffff,
	ast.LLong:  0x7fffffffffffffff,
	ast.ULLong: 0xffffffffffffffff,
}

// LiteralType returns the type dt_node_int gives an integer literal of
// value v with the given suffix, written in decimal or not: each u moves
// the search one type on and each l two, and the search steps over the
// unsigned types when the literal is decimal or its suffix starts with a
// lower-case u (so it visits only signed or only unsigned types). It
// reports false when no type can hold v.
func LiteralType(v uint64, suffix string, decimal bool) (ast.IntType, bool) {
	i := 0
	for _, c := range suffix {
		switch c {
		case 'u', 'U':
			i++
		case 'l', 'L':
			i += 2
		}
	}
	step := 1
	if decimal || suffix != "" && suffix[0] == 'u' {
		step = 2
	}
	for ; i < len(literalLimits); i += step {
		if v <= literalLimits[i] {
			return ast.IntType(i), true
		}
	}
	return 0, false
}
