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

// parseExpr parses an expression, including the comma operator.
func (p *parser) parseExpr() ast.Expr {
	x := p.parseAssign()
	for p.lex.tok == token.COMMA {
		pos := p.lex.pos
		p.next()
		x = p.binary(x, pos, token.COMMA, p.parseAssign())
	}
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
	p.next()
	return p.binary(x, pos, op, p.parseAssign())
}

func (p *parser) parseCond() ast.Expr {
	c := p.parseBinary(1)
	if p.lex.tok != token.QUESTION {
		return c
	}
	p.next()
	x := p.parseExpr()
	p.expect(token.COLON)
	y := p.parseCond()
	p.lastUnary = nil // a conditional, folded or not, is not assignable
	return p.cond(c, x, y)
}

// parseBinary parses binary operators of precedence prec and higher by
// precedence climbing.
func (p *parser) parseBinary(prec int) ast.Expr {
	x := p.parseCast()
	for {
		oprec := p.lex.tok.Precedence()
		if oprec < prec {
			return x
		}
		op, pos := p.lex.tok, p.lex.pos
		p.next()
		x = p.binary(x, pos, op, p.parseBinary(oprec+1))
	}
}

// parseCast parses a cast expression, or a unary expression. After "("
// a type name means a cast; anything else is a parenthesised expression.
func (p *parser) parseCast() ast.Expr {
	if p.lex.tok != token.LPAREN {
		return p.parseUnary()
	}
	lparen := p.lex.pos
	p.next()
	if p.lex.tok == token.IDENT && !p.idents[p.lex.lit] && p.castFollows(p.lex.off) {
		p.lex.tok = token.TNAME
	}
	if p.startsTypeName() {
		t := p.parseTypeName()
		p.expect(token.RPAREN)
		return p.cast(lparen, t, p.parseCast())
	}
	return p.parsePostfix(p.parseParenRest())
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
	case token.INC, token.DEC:
		op := token.PREINC
		if p.lex.tok == token.DEC {
			op = token.PREDEC
		}
		p.next()
		x := p.parseUnary()
		return p.unaryResult(&ast.UnaryExpr{OpPos: pos, Op: op, X: x, DiagPos: p.lex.end})
	case token.BAND, token.MUL, token.ADD, token.SUB, token.BNEG, token.LNEG:
		op := unaryOps[p.lex.tok]
		p.next()
		return p.unaryResult(p.unary(pos, op, p.parseCast()))
	case token.SIZEOF:
		p.next()
		if p.lex.tok == token.LPAREN {
			p.next()
			if p.startsTypeName() {
				t := p.parseTypeName()
				p.expect(token.RPAREN)
				// yacc ends sizeof(T) at its ")".
				return p.unaryResult(p.sizeof(pos, p.prevEnd, t, nil))
			}
			x := p.parsePostfix(p.parseParenRest())
			return p.unaryResult(p.sizeof(pos, p.lex.end, nil, x))
		}
		x := p.parseUnary()
		return p.unaryResult(p.sizeof(pos, p.lex.end, nil, x))
	case token.STRINGOF:
		p.next()
		x := p.parseUnary()
		return p.unaryResult(&ast.UnaryExpr{OpPos: pos, Op: token.STRINGOF, X: x, DiagPos: p.lex.end})
	}
	return p.parsePostfix(p.parsePrimary())
}

var unaryOps = map[token.Token]token.Token{
	token.BAND: token.ADDROF,
	token.MUL:  token.DEREF,
	token.ADD:  token.IPOS,
	token.SUB:  token.INEG,
	token.BNEG: token.BNEG,
	token.LNEG: token.LNEG,
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
		p.next()
		return p.parseParenRest()
	case token.OFFSETOF:
		p.next()
		p.expect(token.LPAREN)
		t := p.parseTypeNameIn(true)
		p.expect(token.COMMA)
		m := p.parseMemberName()
		p.expect(token.RPAREN)
		return p.unaryResult(p.offsetof(pos, p.prevEnd, t, m))
	case token.XLATE:
		p.next()
		p.expect(token.LT)
		t := p.parseTypeNameIn(true)
		p.expect(token.GT)
		p.expect(token.LPAREN)
		x := p.parseExpr()
		p.expect(token.RPAREN)
		return p.unaryResult(&ast.XlateExpr{Xlate: pos, Type: t, X: x, DiagPos: p.prevEnd})
	default:
		p.syntaxError()
	}
	p.next()
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
	for {
		switch p.lex.tok {
		case token.LBRACK:
			lbrack := p.lex.pos
			p.next()
			var index []ast.Expr
			for {
				index = append(index, p.parseAssign())
				if p.lex.tok != token.COMMA {
					break
				}
				p.next()
			}
			p.expect(token.RBRACK)
			x = &ast.IndexExpr{X: x, Lbrack: lbrack, Index: index, DiagPos: p.prevEnd}
		case token.LPAREN:
			lparen := p.lex.pos
			fun, ok := x.(*ast.Ident)
			if !ok {
				p.fail(diag.Errorf(lparen, diag.D_FUNC_IDENT, "function designator is not of function type"))
			}
			p.next()
			var args []ast.Expr
			if p.lex.tok != token.RPAREN {
				for {
					args = append(args, p.parseAssign())
					if p.lex.tok != token.COMMA {
						break
					}
					p.next()
				}
			}
			p.expect(token.RPAREN)
			x = &ast.CallExpr{Fun: fun, Lparen: lparen, Args: args, DiagPos: p.prevEnd}
		case token.DOT, token.ARROW:
			op := p.lex.tok
			p.next()
			sel := p.parseMemberName()
			x = &ast.SelectorExpr{X: x, Op: op, Sel: sel, DiagPos: sel.DiagPos}
		case token.INC, token.DEC:
			op := token.POSTINC
			if p.lex.tok == token.DEC {
				op = token.POSTDEC
			}
			x = &ast.UnaryExpr{OpPos: p.lex.pos, Op: op, X: x, DiagPos: p.lex.end}
			p.next()
		default:
			p.lastUnary = x
			return x
		}
	}
}
