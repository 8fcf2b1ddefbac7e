package parser

import (
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
)

// ----------------------------------------------------------------------------
// Statements

// parseStmtList parses statements up to the closing brace, which it
// leaves as the current token. The last statement may be an expression
// without its semicolon, as in dt_grammar.y's statement_list.
func (p *parser) parseStmtList() []ast.Stmt {
	var list []ast.Stmt
	for {
		switch p.lex.tok {
		case token.RBRACE:
			return list
		case token.SEMI:
			p.next()
		case token.IF:
			list = append(list, p.parseIf())
		default:
			x := p.parseExpr()
			list = append(list, &ast.ExprStmt{X: x})
			if p.lex.tok == token.RBRACE {
				return list
			}
			p.expect(token.SEMI)
		}
	}
}

func (p *parser) parseIf() *ast.IfStmt {
	s := &ast.IfStmt{If: p.lex.pos}
	p.nest()
	defer func() { p.depth-- }()
	p.next()
	p.expect(token.LPAREN)
	s.Cond = p.parseExpr()
	p.expect(token.RPAREN)
	s.Then = p.parseStmtOrBlock()
	if p.lex.tok == token.ELSE {
		p.next()
		s.Else = p.parseStmtOrBlock()
	}
	return s
}

// parseStmtOrBlock parses an if or else body: a braced statement list or
// one statement.
func (p *parser) parseStmtOrBlock() *ast.Block {
	b := &ast.Block{Lbrace: p.lex.pos}
	switch p.lex.tok {
	case token.LBRACE:
		p.next()
		b.List = p.parseStmtList()
		p.expect(token.RBRACE)
	case token.SEMI:
		p.next()
	case token.IF:
		b.List = []ast.Stmt{p.parseIf()}
	default:
		b.List = []ast.Stmt{&ast.ExprStmt{X: p.parseExpr()}}
		p.expect(token.SEMI)
	}
	return b
}

// ----------------------------------------------------------------------------
// Expressions

// Each method that parses an expression leaves the height of the tree it
// returns in p.height, so that the left-associative chains built in loops
// (a + b + c …, a, b, c …, a[0][0] …), which need no recursion to parse
// but make trees that every later pass recurses over, are bounded too.

// parseExpr parses an expression, including the comma operator.
func (p *parser) parseExpr() ast.Expr {
	x := p.parseAssign()
	h := p.height
	for p.lex.tok == token.COMMA {
		pos := p.lex.pos
		p.next()
		y := p.parseAssign()
		x = p.binary(x, pos, token.COMMA, y)
		h = p.grow(x, h, p.height)
	}
	p.height = h
	return x
}

// parseAssign parses an assignment expression. Only a unary expression
// may be assigned to; anything else is a syntax error at the operator,
// as in the yacc grammar.
func (p *parser) parseAssign() ast.Expr {
	x := p.parseCond()
	if !p.lex.tok.IsAssign() {
		return x
	}
	if x != p.lastUnary {
		p.syntaxError()
	}
	op, pos := p.lex.tok, p.lex.pos
	h := p.height
	p.nest()
	p.next()
	y := p.parseAssign()
	p.depth--
	x = p.binary(x, pos, op, y)
	p.height = p.grow(x, h, p.height)
	return x
}

func (p *parser) parseCond() ast.Expr {
	c := p.parseBinary(1)
	if p.lex.tok != token.QUESTION {
		return c
	}
	hc := p.height
	p.nest()
	p.next()
	x := p.parseExpr()
	hx := p.height
	p.expect(token.COLON)
	y := p.parseCond()
	p.depth--
	p.lastUnary = nil // a conditional, folded or not, is not assignable
	e := p.cond(c, x, y)
	switch e {
	case x:
		p.height = hx
	case y:
	default:
		p.height = p.grow(e, hc, hx, p.height)
	}
	return e
}

// parseBinary parses binary operators of precedence prec and higher by
// precedence climbing.
func (p *parser) parseBinary(prec int) ast.Expr {
	x := p.parseCast()
	h := p.height
	for {
		oprec := p.lex.tok.Precedence()
		if oprec < prec {
			p.height = h
			return x
		}
		op, pos := p.lex.tok, p.lex.pos
		p.next()
		y := p.parseBinary(oprec + 1)
		x = p.binary(x, pos, op, y)
		h = p.grow(x, h, p.height)
	}
}

// parseCast parses a cast expression, or a unary expression. After "("
// a type name means a cast; anything else is a parenthesised expression.
func (p *parser) parseCast() ast.Expr {
	if p.lex.tok != token.LPAREN {
		return p.parseUnary()
	}
	lparen := p.lex.pos
	p.nest()
	p.next()
	if p.lex.tok == token.IDENT && !p.idents[p.lex.lit] && p.castFollows(p.lex.off) {
		p.lex.tok = token.TNAME
	}
	if p.startsTypeName() {
		t := p.parseTypeName()
		p.expect(token.RPAREN)
		x := p.parseCast()
		p.depth--
		e := p.cast(lparen, t, x)
		p.height = p.grow(e, p.height)
		return e
	}
	x := p.parseParenRest()
	p.depth--
	return p.parsePostfix(x)
}

// parseParenRest parses the expression and ")" of a parenthesised
// expression whose "(" is consumed.
func (p *parser) parseParenRest() ast.Expr {
	x := p.parseExpr()
	p.expect(token.RPAREN)
	p.lastUnary = x
	return x
}

func (p *parser) parseUnary() ast.Expr {
	pos := p.lex.pos
	switch p.lex.tok {
	case token.INC, token.DEC, token.BAND, token.MUL, token.ADD, token.SUB, token.BNEG, token.LNEG,
		token.SIZEOF, token.STRINGOF:
		p.nest()
		x := p.parseUnaryOp(pos)
		p.depth--
		p.height = p.grow(x, p.height)
		return p.unaryResult(x)
	}
	return p.parsePostfix(p.parsePrimary())
}

// parseUnaryOp parses a unary operator and its operand.
func (p *parser) parseUnaryOp(pos token.Pos) ast.Expr {
	switch p.lex.tok {
	case token.INC, token.DEC:
		op := token.PREINC
		if p.lex.tok == token.DEC {
			op = token.PREDEC
		}
		p.next()
		x := p.parseUnary()
		return &ast.UnaryExpr{OpPos: pos, Op: op, X: x, DiagPos: p.lex.end}
	case token.SIZEOF:
		p.next()
		if p.lex.tok == token.LPAREN {
			p.next()
			if p.startsTypeName() {
				t := p.parseTypeName()
				p.expect(token.RPAREN)
				p.height = 0
				// yacc ends sizeof(T) at its ")".
				return p.sizeof(pos, p.prevEnd, t, nil)
			}
			x := p.parsePostfix(p.parseParenRest())
			return p.sizeof(pos, p.lex.end, nil, x)
		}
		x := p.parseUnary()
		return p.sizeof(pos, p.lex.end, nil, x)
	case token.STRINGOF:
		p.next()
		x := p.parseUnary()
		return &ast.UnaryExpr{OpPos: pos, Op: token.STRINGOF, X: x, DiagPos: p.lex.end}
	}
	op := unaryOp(p.lex.tok)
	p.next()
	return p.unary(pos, op, p.parseCast())
}

// unaryOp returns the unary operator of token t, ILLEGAL for a token
// that is none.
func unaryOp(t token.Token) token.Token {
	switch t {
	case token.BAND:
		return token.ADDROF
	case token.MUL:
		return token.DEREF
	case token.ADD:
		return token.IPOS
	case token.SUB:
		return token.INEG
	case token.BNEG, token.LNEG:
		return t
	}
	return token.ILLEGAL
}

func (p *parser) unaryResult(x ast.Expr) ast.Expr {
	p.lastUnary = x
	return x
}

func (p *parser) parsePrimary() ast.Expr {
	pos := p.lex.pos
	var x ast.Expr
	switch p.lex.tok {
	case token.IDENT:
		if c, ok := p.inlineInts[p.lex.lit]; ok {
			// An integer inline is replaced by its value where it is
			// named, as dt_node_ident does.
			v := *c
			v.ValuePos, v.DiagPos = pos, p.lex.end
			x = &v
			break
		}
		x = &ast.Ident{NamePos: pos, Name: p.lex.lit, DiagPos: p.lex.end}
	case token.AGG:
		x = &ast.Ident{NamePos: pos, Name: p.lex.lit, DiagPos: p.lex.end}
	case token.SELF, token.THIS:
		x = &ast.Ident{NamePos: pos, Name: p.lex.lit, DiagPos: p.lex.end}
	case token.INT:
		lit := &ast.IntLit{ValuePos: pos, Value: p.lex.ival, Type: p.lex.ityp, DiagPos: p.lex.end}
		switch {
		case p.lex.ineg:
			x = p.unary(pos, token.INEG, lit)
		case p.lex.ipos:
			x = p.unary(pos, token.IPOS, lit)
		default:
			x = lit
		}
	case token.STRING:
		x = &ast.StringLit{ValuePos: pos, Value: p.lex.lit, DiagPos: p.lex.end}
	case token.LPAREN:
		p.nest()
		p.next()
		x := p.parseParenRest()
		p.depth--
		return x
	case token.OFFSETOF:
		p.next()
		p.expect(token.LPAREN)
		t := p.parseTypeNameIn(true)
		p.expect(token.COMMA)
		m := p.parseMemberName()
		p.expect(token.RPAREN)
		p.height = 1
		return p.unaryResult(p.offsetof(pos, p.prevEnd, t, m))
	case token.XLATE:
		p.nest()
		p.next()
		p.expect(token.LT)
		t := p.parseTypeNameIn(true)
		p.expect(token.GT)
		p.expect(token.LPAREN)
		x := p.parseExpr()
		p.expect(token.RPAREN)
		p.depth--
		e := &ast.XlateExpr{Xlate: pos, Type: t, X: x, DiagPos: p.prevEnd}
		p.height = p.grow(e, p.height)
		return p.unaryResult(e)
	default:
		p.syntaxError()
	}
	p.next()
	p.height = p.grow(x)
	return p.unaryResult(x)
}

// parseMemberName parses a member name after "." or "->" or in offsetof:
// an identifier, a type name, or one of the keywords dtrace allows there.
func (p *parser) parseMemberName() *ast.Ident {
	if strings.IndexByte(p.lex.lit, '`') >= 0 {
		p.syntaxError() // a member name is never scoped
	}
	switch p.lex.tok {
	case token.IDENT, token.TNAME,
		token.PROBE, token.PROVIDER, token.SELF, token.STRINGKW, token.STRINGOF,
		token.USERLAND, token.XLATE, token.XLATOR,
		// D reserves these words but gives them no meaning; Linux
		// structs use them as member names (atomic_t's counter), so
		// kdtrace accepts them here where dtrace does not.
		token.COUNTER, token.IMPORT:
		id := &ast.Ident{NamePos: p.lex.pos, Name: p.lex.lit, DiagPos: p.lex.end}
		p.next()
		return id
	}
	p.syntaxError()
	return nil
}

func (p *parser) parsePostfix(x ast.Expr) ast.Expr {
	h := p.height
	for {
		switch p.lex.tok {
		case token.LBRACK:
			lbrack := p.lex.pos
			p.nest()
			p.next()
			var index []ast.Expr
			for {
				index = append(index, p.parseAssign())
				h = max(h, p.height)
				if p.lex.tok != token.COMMA {
					break
				}
				p.next()
			}
			p.expect(token.RBRACK)
			p.depth--
			x = &ast.IndexExpr{X: x, Lbrack: lbrack, Index: index, DiagPos: p.prevEnd}
			h = p.grow(x, h)
		case token.LPAREN:
			lparen := p.lex.pos
			fun, ok := x.(*ast.Ident)
			if !ok {
				p.fail(diag.Errorf(lparen, diag.D_FUNC_IDENT, "function designator is not of function type"))
			}
			p.nest()
			p.next()
			var args []ast.Expr
			if p.lex.tok != token.RPAREN {
				for {
					args = append(args, p.parseAssign())
					h = max(h, p.height)
					if p.lex.tok != token.COMMA {
						break
					}
					p.next()
				}
			}
			p.expect(token.RPAREN)
			p.depth--
			x = &ast.CallExpr{Fun: fun, Lparen: lparen, Args: args, DiagPos: p.prevEnd}
			h = p.grow(x, h)
		case token.DOT, token.ARROW:
			op := p.lex.tok
			p.next()
			sel := p.parseMemberName()
			x = &ast.SelectorExpr{X: x, Op: op, Sel: sel, DiagPos: sel.DiagPos}
			h = p.grow(x, h)
		case token.INC, token.DEC:
			op := token.POSTINC
			if p.lex.tok == token.DEC {
				op = token.POSTDEC
			}
			x = &ast.UnaryExpr{OpPos: p.lex.pos, Op: op, X: x, DiagPos: p.lex.end}
			h = p.grow(x, h)
			p.next()
		default:
			p.height = h
			p.lastUnary = x
			return x
		}
	}
}
