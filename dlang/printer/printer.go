// Package printer prints D clauses in the format of dtrace -d, which is
// libdtrace's dt_printd.
//
// Only probe clauses are printed, each as: its probe descriptions joined
// by ",\n"; the predicate, if any, between slashes on a line of its own;
// the actions between "{" and "}", one statement a line indented by
// eight spaces a level; then a blank line. Pragmas, declarations,
// inline, translator and provider definitions are not printed, as in
// dtrace. Every expression is fully parenthesised by its own rule:
// unary operators as op(x), binary ones as (x op y), member and index
// references as (x->m) and (a[k1, k2]), conditionals as (c ? x : y).
//
// Where dt_printd's text would not read back as the same program,
// kdtrace prints valid D that does, so that -d output is deterministic
// and can be compiled again:
//
//   - Casts, sizeof(type), offsetof and xlate, which dt_printd prints as
//     "/* bad node %p */" comments, print as ((type)x), sizeof(type),
//     offsetof(type, member) and xlate<type>(x).
//   - A postfix x++ prints as (x)++, where dt_printd prints ++(x).
//   - The operand of ., ->, [] and postfix ++ and -- gets parentheses of
//     its own when it is a prefix form: (*(p)).x, where dt_printd prints
//     *(p).x, which reads back as *((p).x).
//   - An integer constant prints as dt_printd prints it, 0x followed by
//     the value in hex and a u when its type is unsigned, unless that
//     text would read back with another value or signedness: a negative
//     signed value prints as -0x… (dt_printd prints its 64-bit two's
//     complement, which reads back unsigned), and a signed value too
//     large for int gets an l suffix. Like dt_printd's, the text keeps a
//     constant's value and signedness but not the width of its type.
//   - A probe description given by probe ID prints the ID, where
//     dt_printd asks the kernel for the probe's name.
package printer

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/constant"
	"github.com/kdtrace/kdtrace/dlang/token"
)

// Fprint prints every clause of prog to w.
func Fprint(w io.Writer, prog *ast.Program) error {
	bw := bufio.NewWriter(w)
	for _, d := range prog.Decls {
		if c, ok := d.(*ast.Clause); ok {
			writeClause(bw, c)
		}
	}
	return bw.Flush()
}

// Expr returns the printed form of x.
func Expr(x ast.Expr) string {
	var b strings.Builder
	p := printer{w: &b}
	p.expr(x)
	return b.String()
}

// stringWriter is what the printer writes to; both *bufio.Writer and
// *strings.Builder are one.
type stringWriter interface {
	WriteString(string) (int, error)
	WriteByte(byte) error
}

type printer struct {
	w stringWriter
}

func writeClause(w stringWriter, c *ast.Clause) {
	p := printer{w: w}
	for i, d := range c.Probes {
		p.probe(d)
		if i < len(c.Probes)-1 {
			p.str(",")
		}
		if d.Comment != "" {
			p.str(" /* " + d.Comment + " */")
		}
		p.str("\n")
	}
	if c.Pred != nil {
		p.str("/")
		p.expr(c.Pred)
		p.str("/\n")
	}
	p.str("{\n")
	p.stmts(c.Body, 1)
	p.str("}\n\n")
}

func (p *printer) str(s string) { p.w.WriteString(s) }

func (p *printer) indent(depth int) {
	for i := 0; i < depth; i++ {
		p.str("        ")
	}
}

func (p *printer) probe(d *ast.ProbeDesc) {
	if d.ID != 0 {
		p.str(strconv.FormatUint(uint64(d.ID), 10))
		return
	}
	p.str(d.Provider)
	p.str(":")
	p.str(d.Module)
	p.str(":")
	p.str(d.Function)
	p.str(":")
	p.str(d.Name)
}

func (p *printer) stmts(list []ast.Stmt, depth int) {
	for _, s := range list {
		switch s := s.(type) {
		case *ast.ExprStmt:
			p.indent(depth)
			p.expr(s.X)
			p.str(";\n")
		case *ast.IfStmt:
			p.indent(depth)
			p.str("if (")
			p.expr(s.Cond)
			p.str(") {\n")
			p.stmts(s.Then.List, depth+1)
			p.indent(depth)
			p.str("}")
			if s.Else != nil {
				p.str(" else {\n")
				p.stmts(s.Else.List, depth+1)
				p.indent(depth)
				p.str("}")
			}
			p.str("\n")
		}
	}
}

func (p *printer) expr(x ast.Expr) {
	switch x := x.(type) {
	case *ast.IntLit:
		p.str(IntLiteral(x.Value, x.Type))
	case *ast.StringLit:
		p.str(`"`)
		p.str(Escape(x.Value))
		p.str(`"`)
	case *ast.Ident:
		p.str(x.Name)
	case *ast.UnaryExpr:
		switch x.Op {
		case token.POSTINC, token.POSTDEC:
			p.str("(")
			p.operand(x.X)
			p.str(")")
			p.str(x.Op.String())
			return
		}
		p.str(x.Op.String())
		p.str("(")
		p.expr(x.X)
		p.str(")")
	case *ast.BinaryExpr:
		p.str("(")
		p.expr(x.X)
		p.str(" ")
		p.str(x.Op.String())
		p.str(" ")
		p.expr(x.Y)
		p.str(")")
	case *ast.CondExpr:
		p.str("(")
		p.expr(x.Cond)
		p.str(" ? ")
		p.expr(x.X)
		p.str(" : ")
		p.expr(x.Y)
		p.str(")")
	case *ast.IndexExpr:
		p.str("(")
		p.operand(x.X)
		p.str("[")
		for i, k := range x.Index {
			if i > 0 {
				p.str(", ")
			}
			p.expr(k)
		}
		p.str("])")
	case *ast.SelectorExpr:
		p.str("(")
		p.operand(x.X)
		p.str(x.Op.String())
		p.str(x.Sel.Name)
		p.str(")")
	case *ast.CallExpr:
		p.str(x.Fun.Name)
		p.str("(")
		for i, a := range x.Args {
			if i > 0 {
				p.str(", ")
			}
			p.expr(a)
		}
		p.str(")")
	case *ast.CastExpr:
		p.str("((")
		p.typeName(x.Type)
		p.str(")")
		p.expr(x.X)
		p.str(")")
	case *ast.SizeofExpr:
		p.str("sizeof(")
		if x.Type != nil {
			p.typeName(x.Type)
		} else {
			p.expr(x.X)
		}
		p.str(")")
	case *ast.OffsetofExpr:
		p.str("offsetof(")
		p.typeName(x.Type)
		p.str(", ")
		p.str(x.Member.Name)
		p.str(")")
	case *ast.XlateExpr:
		p.str("xlate<")
		p.typeName(x.Type)
		p.str(">(")
		p.expr(x.X)
		p.str(")")
	}
}

// operand prints the operand of a postfix operator. dt_printd prints it
// as any expression, but a prefix form such as *(p) would then take the
// postfix operator into its operand when read back: *(p).x is *((p).x).
// Such operands get parentheses of their own.
func (p *printer) operand(x ast.Expr) {
	prefix := false
	switch x := x.(type) {
	case *ast.UnaryExpr:
		prefix = x.Op != token.POSTINC && x.Op != token.POSTDEC
	case *ast.SizeofExpr:
		prefix = true
	case *ast.IntLit:
		prefix = strings.HasPrefix(IntLiteral(x.Value, x.Type), "-")
	}
	if prefix {
		p.str("(")
		p.expr(x)
		p.str(")")
		return
	}
	p.expr(x)
}

// IntLiteral returns the text -d prints for an integer constant: dtrace's
// 0x…[u] when that reads back as a constant of the same value and
// signedness, else the nearest text that does (see the package comment).
func IntLiteral(v uint64, t ast.IntType) string {
	hex := "0x" + strconv.FormatUint(v, 16)
	u := ""
	if !t.Signed() {
		u = "u"
	}
	for _, l := range [...]string{"", "l", "ll"} {
		if typ, ok := constant.LiteralType(v, u+l, false); ok && typ.Signed() == t.Signed() {
			return hex + u + l
		}
	}
	if t.Signed() && v == 1<<63 {
		return "(-0x7fffffffffffffff - 0x1)" // no literal has this value
	}
	if t.Signed() && int64(v) < 0 {
		m := -v
		for _, l := range [...]string{"", "l"} {
			typ, ok := constant.LiteralType(m, l, false)
			if !ok {
				continue
			}
			neg, _ := constant.Unary(token.INEG, &ast.IntLit{Value: m, Type: typ})
			if neg.Type.Signed() && neg.Value == v {
				return "-0x" + strconv.FormatUint(m, 16) + l
			}
		}
	}
	return hex + u
}

// Escape escapes s as libdtrace's strchr2esc does: C escapes for the
// usual control characters, quote and backslash; three octal digits for
// other bytes outside '!'..'~'; spaces as they are.
func Escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case 0:
			b.WriteString(`\0`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\v':
			b.WriteString(`\v`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c != ' ' && (c < '!' || c > '~') {
				b.WriteByte('\\')
				b.WriteByte('0' + c>>6)
				b.WriteByte('0' + c>>3&7)
				b.WriteByte('0' + c&7)
				continue
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// typeName prints a type name as C writes it.
func (p *printer) typeName(t *ast.TypeName) {
	p.str(TypeString(t.Spec, t.Decl))
}

// TypeString returns the C text of specifiers with a declarator applied.
func TypeString(s *ast.DeclSpec, d *ast.Declarator) string {
	var parts []string
	if s.Class != ast.NoClass {
		parts = append(parts, s.Class.String())
	}
	if s.Qual&ast.Const != 0 {
		parts = append(parts, "const")
	}
	if s.Qual&ast.Volatile != 0 {
		parts = append(parts, "volatile")
	}
	if s.Qual&ast.Restrict != 0 {
		parts = append(parts, "restrict")
	}
	if s.Userland {
		parts = append(parts, "userland")
	}
	switch t := s.Type.(type) {
	case *ast.BasicType:
		parts = append(parts, t.Words...)
	case *ast.NamedType:
		parts = append(parts, t.Name)
	case *ast.StructType:
		parts = append(parts, structString(t))
	case *ast.EnumType:
		parts = append(parts, enumString(t))
	}
	base := strings.Join(parts, " ")
	if d == nil {
		return base
	}
	decl := declarator(d)
	if decl == "" {
		return base
	}
	return base + " " + decl
}

// structString prints a struct or union reference, or its definition.
func structString(t *ast.StructType) string {
	s := "struct"
	if t.Union {
		s = "union"
	}
	if t.Name != "" {
		s += " " + t.Name
	}
	if t.Members == nil {
		return s
	}
	s += " {"
	for _, m := range t.Members {
		s += " " + TypeString(m.Spec, nil)
		for i, d := range m.Decls {
			if i > 0 {
				s += ","
			}
			if decl := declarator(d); decl != "" {
				s += " " + decl
			}
			if d.BitWidth != nil {
				s += " : " + Expr(d.BitWidth)
			}
		}
		s += ";"
	}
	return s + " }"
}

// enumString prints an enum reference, or its definition.
func enumString(t *ast.EnumType) string {
	s := "enum"
	if t.Name != "" {
		s += " " + t.Name
	}
	if t.Enumerators == nil {
		return s
	}
	s += " {"
	for i, e := range t.Enumerators {
		if i > 0 {
			s += ","
		}
		s += " " + e.Name.Name
		if e.Value != nil {
			s += " = " + Expr(e.Value)
		}
	}
	return s + " }"
}

// declarator rebuilds C declarator syntax from the derivations, which go
// from the name outwards.
func declarator(d *ast.Declarator) string {
	s := d.Name
	for _, dv := range d.Derived {
		switch dv := dv.(type) {
		case *ast.Pointer:
			q := ""
			if dv.Qual&ast.Const != 0 {
				q += "const "
			}
			if dv.Qual&ast.Volatile != 0 {
				q += "volatile "
			}
			if dv.Qual&ast.Restrict != 0 {
				q += "restrict "
			}
			if q != "" && s != "" {
				s = "*" + q + s
			} else {
				s = "*" + strings.TrimSuffix(q, " ") + s
			}
		case *ast.Array:
			if strings.HasPrefix(s, "*") {
				s = "(" + s + ")"
			}
			s += "["
			if dv.Len != nil {
				s += Expr(dv.Len)
			}
			for i, k := range dv.Keys {
				if i > 0 {
					s += ", "
				}
				s += TypeString(k.Spec, k.Decl)
			}
			if dv.Variadic {
				if len(dv.Keys) > 0 {
					s += ", "
				}
				s += "..."
			}
			s += "]"
		case *ast.Func:
			if strings.HasPrefix(s, "*") {
				s = "(" + s + ")"
			}
			var ps []string
			for _, prm := range dv.Params {
				ps = append(ps, TypeString(prm.Spec, prm.Decl))
			}
			if dv.Variadic {
				ps = append(ps, "...")
			}
			s += "(" + strings.Join(ps, ", ") + ")"
		}
	}
	return s
}
