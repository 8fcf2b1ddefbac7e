package check

import (
	"maps"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/dlang/printf"
)

// A Variant is what checking a clause for one of its probe descriptions
// gave where it differs from checking the clause for its first one:
// args[] of other types (another struct, size or sign) give the
// expressions that use them other values, which need other code.
// Values and Formats hold only those differences.
type Variant struct {
	Values  map[ast.Expr]*Value
	Formats map[*ast.CallExpr]*printf.Format
}

// Variant returns the results of checking clause cl for its i-th probe
// description, to be looked up through Value and Format: nil when they
// are those of the first description. Descriptions whose results are
// alike share one Variant, so that their code may be shared too.
func (info *Info) Variant(cl *ast.Clause, i int) *Variant {
	if vs := info.variants[cl]; vs != nil {
		return vs[i]
	}
	return nil
}

// Value returns what checking gave e in the clause variant v (nil for
// the first description's): v's own value, else the one in Values, else
// the one in Declared.
func (info *Info) Value(v *Variant, e ast.Expr) *Value {
	if v != nil {
		if x, ok := v.Values[e]; ok {
			return x
		}
	}
	if x, ok := info.Values[e]; ok {
		return x
	}
	return info.Declared[e]
}

// Format returns the checked format of call in the clause variant v.
func (info *Info) Format(v *Variant, call *ast.CallExpr) *printf.Format {
	if v != nil {
		if f, ok := v.Formats[call]; ok {
			return f
		}
	}
	return info.Formats[call]
}

// value returns what checking gave e: in the probe description being
// checked, else in the clause's first.
func (c *Checker) value(e ast.Expr) *Value {
	if v, ok := c.values[e]; ok {
		return v
	}
	return c.info.Values[e]
}

// variant returns what the clause just checked into c.scratch for a
// probe description after its first differs in from the first's: nil
// when nothing does, one of earlier (the clause's variants so far)
// when it differs alike, else a new Variant.
func (c *Checker) variant(earlier []*Variant) *Variant {
	var v *Variant
	for e, x := range c.scratch.Values {
		if !sameValue(x, c.info.Values[e]) {
			if v == nil {
				v = &Variant{Values: map[ast.Expr]*Value{}}
			}
			v.Values[e] = x
		}
	}
	for call, f := range c.scratch.Formats {
		if g := c.info.Formats[call]; g == nil || f.String() != g.String() {
			if v == nil {
				v = &Variant{Values: map[ast.Expr]*Value{}}
			}
			if v.Formats == nil {
				v.Formats = map[*ast.CallExpr]*printf.Format{}
			}
			v.Formats[call] = f
		}
	}
	if v == nil {
		return nil
	}
	for _, w := range earlier {
		if w != nil && sameVariant(v, w) {
			return w
		}
	}
	return v
}

// sameVariant reports whether two variants of a clause give the same
// results.
func sameVariant(v, w *Variant) bool {
	return maps.EqualFunc(v.Values, w.Values, sameValue) &&
		maps.EqualFunc(v.Formats, w.Formats, func(f, g *printf.Format) bool { return f.String() == g.String() })
}

// sameValue reports whether two values of an expression need the same
// code.
func sameValue(x, y *Value) bool {
	if x == y {
		return true
	}
	return x != nil && y != nil && x.Flags == y.Flags && x.Ident == y.Ident && x.Const == y.Const &&
		x.Int == y.Int && sameType(x.Type, y.Type, 0) && sameLocal(x.Local, y.Local)
}

// sameLocal reports whether two variables are read alike: the same
// location at places read the same way.
func sameLocal(a, b *Local) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Loc.String() != b.Loc.String() {
		return false
	}
	p, q := &a.Frame.Place, &b.Frame.Place
	return p.User == q.User && p.Entry == q.Entry && p.FrameBase.String() == q.FrameBase.String() &&
		p.CFA.Reg == q.CFA.Reg && p.CFA.Off == q.CFA.Off && (p.CFA.Err == nil) == (q.CFA.Err == nil) &&
		p.Bias == q.Bias && p.PCBias == q.PCBias && p.PC == q.PC
}

// sameType reports whether a and b are the same type down to the
// layout of their structs, unions and enums, which must be the same
// ones: two modules' struct foo, which types.Identical takes for one,
// may have other members.
func sameType(a, b types.Type, depth int) bool {
	if a == b {
		return true
	}
	if depth > 32 {
		return false
	}
	switch x := a.(type) {
	case types.Void:
		_, ok := b.(types.Void)
		return ok
	case *types.Int:
		y, ok := b.(*types.Int)
		return ok && *x == *y
	case *types.Float:
		y, ok := b.(*types.Float)
		return ok && *x == *y
	case *types.String:
		y, ok := b.(*types.String)
		return ok && x.Bytes == y.Bytes
	case *types.Pointer:
		y, ok := b.(*types.Pointer)
		return ok && sameType(x.Elem, y.Elem, depth+1)
	case *types.Array:
		y, ok := b.(*types.Array)
		return ok && x.Len == y.Len && sameType(x.Elem, y.Elem, depth+1)
	case *types.Typedef:
		y, ok := b.(*types.Typedef)
		return ok && x.Name == y.Name && x.Module == y.Module && sameType(x.Type, y.Type, depth+1)
	case *types.Qualified:
		y, ok := b.(*types.Qualified)
		return ok && x.Qual == y.Qual && sameType(x.Type, y.Type, depth+1)
	case *types.Func:
		y, ok := b.(*types.Func)
		if !ok || x.Variadic != y.Variadic || len(x.Params) != len(y.Params) || !sameType(x.Result, y.Result, depth+1) {
			return false
		}
		for i := range x.Params {
			if !sameType(x.Params[i], y.Params[i], depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// Clone returns a copy of info with maps of its own, for results needed
// after CheckClauses has moved on to the next clause.
func (info *Info) Clone() *Info {
	c := *info
	c.Values, c.Formats, c.variants = maps.Clone(info.Values), maps.Clone(info.Formats), maps.Clone(info.variants)
	return &c
}
