package parser

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/constant"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
)

// scope is the lexer state that the grammar selects, as dt_lex.l's S0
// and S2: the outer scope, where words are probe specifiers, and the
// expression scope inside predicates, actions and declarations.
type scope uint8

const (
	scopeClause scope = iota // S2: probe specifiers and declarations
	scopeExpr                // S0: expressions and declarations
)

// lexer turns D source into tokens. It runs control lines (#pragma,
// #line, cpp line markers) itself as it meets them, substitutes macro
// arguments, and asks the parser's type table whether a name is a type,
// as dt_lex.l does.
type lexer struct {
	p *parser

	src       string
	off       int // next byte to read
	line      int
	lineStart int // offset of the first byte of line
	file      token.FileID
	scope     scope

	// Token just scanned.
	tok  token.Token
	lit  string // source text, or the processed value of a STRING
	pos  token.Pos
	ival uint64
	ityp ast.IntType
	ineg bool // a macro argument's "-" prefix, for INT
	ipos bool // a macro argument's "+" prefix, for INT
	// end is where dt_lex.l's yylineno stands once it has returned the
	// token: after the token, and after the blanks that follow it when
	// the lexer looked past them for the next character (after "/", and
	// after a type name in an expression).
	end    token.Pos
	peeked bool

	// The run of name characters and dots scanIdent last scanned ends at
	// runEnd, its last backquote at runTick: the names a run of dots
	// splits into (s.a.a.a …) are scanned in one pass, not one each.
	runEnd, runTick int
}

func (l *lexer) init(p *parser, file, src string) {
	l.p = p
	l.src = src
	l.file = token.File(file)
	l.line = 1
}

func (l *lexer) errorf(pos token.Pos, tag diag.Tag, format string, args ...any) {
	l.p.fail(diag.Errorf(pos, tag, format, args...))
}

func (l *lexer) here() token.Pos {
	return token.Pos{File: l.file, Line: int32(l.line), Col: int32(l.off - l.lineStart + 1)}
}

func (l *lexer) newline() {
	l.line++
	l.lineStart = l.off
}

// atLineStart reports whether only blanks precede offset i on its line.
func (l *lexer) atLineStart(i int) bool {
	for j := i - 1; j >= l.lineStart; j-- {
		switch l.src[j] {
		case ' ', '\t', '\f', '\v':
		default:
			return false
		}
	}
	return true
}

// skip skips white space, comments, backslash-newlines and control lines.
func (l *lexer) skip() {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch c {
		case '\n':
			l.off++
			l.newline()
		case ' ', '\t', '\r', '\f', '\v':
			l.off++
		case '\\':
			if l.off+1 < len(l.src) && l.src[l.off+1] == '\n' {
				l.off += 2
				l.newline()
				continue
			}
			return
		case '/':
			if l.off+1 < len(l.src) && l.src[l.off+1] == '*' {
				l.comment()
				continue
			}
			return
		case '#':
			if !l.atLineStart(l.off) {
				return
			}
			l.control()
		default:
			return
		}
	}
}

func (l *lexer) comment() {
	l.off += 2
	for l.off < len(l.src) {
		switch c := l.src[l.off]; {
		case c == '\n':
			l.off++
			l.newline()
		case c == '*' && l.off+1 < len(l.src) && l.src[l.off+1] == '/':
			l.off += 2
			return
		case c == '/' && l.off+1 < len(l.src) && l.src[l.off+1] == '*':
			l.errorf(l.here(), diag.D_SYNTAX, "/* encountered inside a comment")
		default:
			l.off++
		}
	}
	l.errorf(l.here(), diag.D_SYNTAX, "end-of-file encountered before matching */")
}

// next scans the next token into l.tok and friends.
func (l *lexer) next() {
	l.skip()
	l.pos = l.here()
	l.ineg, l.ipos = false, false
	l.peeked = false
	defer func() {
		if !l.peeked {
			l.end = l.here()
		}
	}()
	if l.off >= len(l.src) {
		l.tok, l.lit = token.EOF, ""
		return
	}
	if l.scope == scopeClause {
		l.scanClause()
		return
	}
	l.scanExpr()
}

// peekPast records that dt_lex.l has read the blanks after the current
// token to see the next character, counting the newlines among them.
func (l *lexer) peekPast() {
	l.peeked = true
	l.end = l.here()
	for i := l.off; i < len(l.src); i++ {
		switch l.src[i] {
		case '\n':
			l.end.Line++
			l.end.Col = 1
			continue
		case ' ', '\t', '\r', '\f', '\v':
			l.end.Col++
			continue
		}
		break
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isIdentChar(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '`'
}

// isPspecChar reports whether c may continue a probe specifier
// (RGX_PSPEC); isPspecStart whether it may begin one.
func isPspecChar(c byte) bool {
	return isLetter(c) || isDigit(c) || strings.IndexByte("-$:.`?*\\[]!", c) >= 0
}
func isPspecStart(c byte) bool {
	return isLetter(c) || strings.IndexByte("-$:.?*\\[]!", c) >= 0
}

// scanClause scans in the outer scope: probe specifiers, probe IDs,
// declaration keywords, "/", ",", "{", ";" and the rest of the
// punctuation declarations use.
func (l *lexer) scanClause() {
	c := l.src[l.off]
	switch {
	case isDigit(c):
		l.scanInt()
		return
	case isPspecStart(c):
		start := l.off
		end := start + 1
		for end < len(l.src) && isPspecChar(l.src[end]) {
			end++
		}
		text := l.src[start:end]
		if t, ok := outerKeyword(text); ok {
			l.off = end
			l.tok, l.lit = t, text
			l.scope = scopeExpr
			return
		}
		// A word with no ':' that starts with a type name is a
		// declaration such as "int*x;" or "foo_t x;": return the type
		// name and leave the rest for the expression scope.
		if strings.IndexByte(text, ':') < 0 {
			name := text
			if i := strings.IndexByte(name, '*'); i >= 0 {
				name = name[:i]
			}
			kw, isKeyword := outerKeyword(name)
			// Only a word a declarator can follow may be a type: the
			// test spares probe names such as BEGIN a type lookup.
			typeCanBe := len(name) < len(text) || l.declaratorCanFollow(start+len(name))
			if name != "" && (isKeyword || typeCanBe && l.p.isType(name) || validIdent(name) && l.p.declarationFollows(start+len(name))) {
				l.off = start + len(name)
				l.tok, l.lit = token.TNAME, name
				if isKeyword {
					l.tok = kw
				}
				l.scope = scopeExpr
				return
			}
		}
		l.off = end
		l.tok, l.lit = token.PSPEC, text
		return
	case c == '/' || c == ',' || c == '{' || c == ';' || c == '}':
		l.scanExpr()
		return
	}
	// The outer scope has no other tokens: dt_lex.l's catch-all rule
	// names the one character.
	l.badChar(l.off)
}

// outerKeyword returns the keyword name is if it is one of those
// dt_lex.l recognises in the outer scope (S2); every other word there,
// return or sizeof included, is a probe specifier.
func outerKeyword(name string) (token.Token, bool) {
	switch t := token.Lookup(name); t {
	case token.AUTO, token.CHAR, token.CONST, token.COUNTER, token.DOUBLE, token.ENUM,
		token.EXTERN, token.FLOAT, token.IMPORT, token.INLINE, token.INTKW, token.LONG,
		token.PROVIDER, token.REGISTER, token.RESTRICT, token.SELF, token.SHORT,
		token.SIGNED, token.STATIC, token.STRINGKW, token.STRUCT, token.THIS,
		token.XLATOR, token.TYPEDEF, token.UNION, token.UNSIGNED, token.VOID, token.VOLATILE:
		return t, true
	}
	return token.ILLEGAL, false
}

// scanExpr scans in the expression scope.
func (l *lexer) scanExpr() {
	c := l.src[l.off]
	switch {
	case isLetter(c) || c == '`':
		l.scanIdent()
		return
	case isDigit(c):
		l.scanInt()
		return
	case c == '.' && l.off+1 < len(l.src) && isDigit(l.src[l.off+1]):
		l.scanInt() // reports the floating-point constant
		return
	}
	l.off++
	switch c {
	case '"':
		l.scanString()
	case '\'':
		l.scanChar()
	case '@':
		start := l.off - 1
		if l.off < len(l.src) && isLetter(l.src[l.off]) {
			for l.off < len(l.src) && (isLetter(l.src[l.off]) || isDigit(l.src[l.off])) {
				l.off++
			}
		}
		l.tok, l.lit = token.AGG, l.src[start:l.off]
		if l.lit == "@" {
			l.lit = "@_"
		}
	case '$':
		l.scanMacro()
	case '/':
		if l.scope == scopeExpr && l.peekByte() != '=' {
			// dt_lex.l reads ahead to tell division from the end of
			// a predicate.
			l.peekPast()
		}
		if l.scope == scopeExpr && l.endsPredicate() {
			l.tok, l.lit = token.EPRED, "/"
			return
		}
		l.op2('=', token.DIV_ASGN, token.DIV)
	case ',':
		l.tok = token.COMMA
	case ';':
		l.tok = token.SEMI
	case '(':
		l.tok = token.LPAREN
	case ')':
		l.tok = token.RPAREN
	case '[':
		l.tok = token.LBRACK
	case ']':
		l.tok = token.RBRACK
	case '{':
		l.tok = token.LBRACE
	case '}':
		l.tok = token.RBRACE
	case '?':
		l.tok = token.QUESTION
	case ':':
		l.tok = token.COLON
	case '~':
		l.tok = token.BNEG
	case '.':
		if strings.HasPrefix(l.src[l.off:], "..") {
			l.off += 2
			l.tok = token.ELLIPSIS
		} else {
			l.tok = token.DOT
		}
	case '=':
		l.op2('=', token.EQU, token.ASGN)
	case '!':
		l.op2('=', token.NEQ, token.LNEG)
	case '*':
		l.op2('=', token.MUL_ASGN, token.MUL)
	case '%':
		l.op2('=', token.MOD_ASGN, token.MOD)
	case '+':
		switch l.peekByte() {
		case '+':
			l.off++
			l.tok = token.INC
		case '=':
			l.off++
			l.tok = token.ADD_ASGN
		default:
			l.tok = token.ADD
		}
	case '-':
		switch l.peekByte() {
		case '-':
			l.off++
			l.tok = token.DEC
		case '=':
			l.off++
			l.tok = token.SUB_ASGN
		case '>':
			l.off++
			l.tok = token.ARROW
		default:
			l.tok = token.SUB
		}
	case '&':
		switch l.peekByte() {
		case '&':
			l.off++
			l.tok = token.LAND
		case '=':
			l.off++
			l.tok = token.AND_ASGN
		default:
			l.tok = token.BAND
		}
	case '|':
		switch l.peekByte() {
		case '|':
			l.off++
			l.tok = token.LOR
		case '=':
			l.off++
			l.tok = token.OR_ASGN
		default:
			l.tok = token.BOR
		}
	case '^':
		switch l.peekByte() {
		case '^':
			l.off++
			l.tok = token.LXOR
		case '=':
			l.off++
			l.tok = token.XOR_ASGN
		default:
			l.tok = token.XOR
		}
	case '<':
		switch l.peekByte() {
		case '<':
			l.off++
			l.op2('=', token.SHL_ASGN, token.SHL)
		case '=':
			l.off++
			l.tok = token.LE
		default:
			l.tok = token.LT
		}
	case '>':
		switch l.peekByte() {
		case '>':
			l.off++
			l.op2('=', token.SHR_ASGN, token.SHR)
		case '=':
			l.off++
			l.tok = token.GE
		default:
			l.tok = token.GT
		}
	default:
		l.badChar(l.off - 1)
	}
	if l.tok.IsOperator() {
		l.lit = l.tok.String()
	}
}

// badChar reports the character at offset i, which starts no token. As
// dt_lex.l's catch-all rule it is a syntax error near that character,
// but where dtrace would print a raw control byte this names the byte by
// its escape, and says when the script is not text at all (it holds a
// NUL byte or is not UTF-8: a binary given to -s).
func (l *lexer) badChar(i int) {
	r, n := utf8.DecodeRuneInString(l.src[i:])
	if r >= 0x20 && r != 0x7f && (r != utf8.RuneError || n > 1) {
		l.errorf(l.pos, diag.D_SYNTAX, "syntax error near \"%s\"", l.src[i:i+n])
	}
	esc := fmt.Sprintf("\\x%02x", l.src[i])
	if r == 0 {
		esc = "\\0"
	}
	if strings.IndexByte(l.src, 0) >= 0 || !utf8.ValidString(l.src) {
		l.errorf(l.pos, diag.D_SYNTAX, "invalid character '%s': the script is not text", esc)
	}
	l.errorf(l.pos, diag.D_SYNTAX, "invalid character '%s'", esc)
}

func (l *lexer) peekByte() byte {
	if l.off < len(l.src) {
		return l.src[l.off]
	}
	return 0
}

func (l *lexer) op2(next byte, two, one token.Token) {
	if l.peekByte() == next {
		l.off++
		l.tok = two
		return
	}
	l.tok = one
}

// endsPredicate reports whether the "/" just read ends a predicate: the
// next non-blank character is EOF, ';', '{' or '/'.
func (l *lexer) endsPredicate() bool {
	for i := l.off; i < len(l.src); i++ {
		switch l.src[i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			continue
		case ';', '{', '/':
			return true
		}
		return false
	}
	return true
}

// scanIdent scans RGX_IDENT, RGX_MOD_IDENT RGX_IDENT or RGX_MOD_IDENT:
// names with backquote scoping, whose module part may contain dots.
func (l *lexer) scanIdent() {
	start := l.off
	end, lastTick := l.runEnd, l.runTick
	if start >= end {
		end, lastTick = start, -1
		for end < len(l.src) {
			c := l.src[end]
			if isIdentChar(c) {
				if c == '`' {
					lastTick = end
				}
				end++
				continue
			}
			if c == '.' {
				end++
				continue
			}
			break
		}
		l.runEnd, l.runTick = end, lastTick
	}
	if lastTick < start {
		lastTick = -1
	}
	// Dots are allowed only before the last backquote.
	cut := end
	from := start
	if lastTick >= 0 {
		from = lastTick
	}
	if i := strings.IndexByte(l.src[from:end], '.'); i >= 0 {
		cut = from + i
	}
	l.off = cut
	text := l.src[start:cut]
	if lastTick < 0 || lastTick >= cut {
		if t := token.Lookup(text); t != token.IDENT {
			l.tok, l.lit = t, text
			return
		}
	}
	l.tok, l.lit = l.p.identOrType(text), text
}

// nextNonBlank returns the offset of the next non-blank byte at or after
// i, or len(src).
// declaratorCanFollow reports whether the text at offset i can start a
// declarator: a name, *, ( or a scoped name.
func (l *lexer) declaratorCanFollow(i int) bool {
	i = l.nextNonBlank(i)
	if i >= len(l.src) {
		return false
	}
	c := l.src[i]
	return isLetter(c) || c == '*' || c == '(' || c == '`'
}

func (l *lexer) nextNonBlank(i int) int {
	for i < len(l.src) {
		switch l.src[i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			i++
			continue
		}
		break
	}
	return i
}

// scanInt scans RGX_INT (and reports RGX_FP), converting as strtoull
// with base 0 would, then types the value as dt_node_int does.
func (l *lexer) scanInt() {
	start := l.off
	n, hex := intDigits(l.src[start:])
	i := start + n
	digitsEnd := i
	// A floating-point constant is longer than the integer it starts
	// with; dt_lex.l refuses those.
	if !hex {
		j := i
		if j < len(l.src) && l.src[j] == '.' {
			j++
			for j < len(l.src) && isDigit(l.src[j]) {
				j++
			}
		}
		if j < len(l.src) && (l.src[j] == 'e' || l.src[j] == 'E') {
			k := j + 1
			if k < len(l.src) && (l.src[k] == '+' || l.src[k] == '-') {
				k++
			}
			if k < len(l.src) && isDigit(l.src[k]) {
				j = k
				for j < len(l.src) && isDigit(l.src[j]) {
					j++
				}
			}
		}
		if j < len(l.src) && (l.src[j] == 'f' || l.src[j] == 'F') {
			j++ // RGX_FP's suffix, which makes 1f longer than the integer 1
		}
		if j > i {
			l.off = j
			l.errorf(l.pos, diag.D_SYNTAX, "floating-point constants are not permitted")
		}
	}
	// RGX_INT's suffix is [uU]?[lL]?[lL]?; anything after it starts the
	// next token.
	if i < len(l.src) && (l.src[i] == 'u' || l.src[i] == 'U') {
		i++
	}
	for n := 0; n < 2 && i < len(l.src) && (l.src[i] == 'l' || l.src[i] == 'L'); n++ {
		i++
	}
	l.off = i
	text := l.src[start:i]
	v, suffix, err := parseUint(l.src[start:digitsEnd], hex)
	suffix += l.src[digitsEnd:i]
	if err == errRange {
		l.errorf(l.pos, diag.D_INT_OFLOW, "constant %s results in integer overflow", text)
	}
	if strings.Trim(suffix, "uUlL") != "" {
		l.errorf(l.pos, diag.D_INT_DIGIT, "constant %s contains invalid digit %c", text, strings.Trim(suffix, "uUlL")[0])
	}
	l.tok, l.lit = token.INT, text
	l.ival = v
	typ, ok := constant.LiteralType(v, suffix, l.src[start] != '0')
	if !ok {
		l.errorf(l.pos, diag.D_INT_OFLOW, "integer constant 0x%x cannot be represented in any built-in integral type", v)
	}
	l.ityp = typ
}

// intDigits returns the length of the digits of the integer constant at
// the start of s, 0x and hex digits or decimal (and octal) digits, as
// RGX_INT matches them.
func intDigits(s string) (n int, hex bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isHex(s[2]) {
		n = 2
		for n < len(s) && isHex(s[n]) {
			n++
		}
		return n, true
	}
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n, false
}

func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

type rangeError struct{}

func (rangeError) Error() string { return "out of range" }

var errRange error = rangeError{}

// parseUint converts digits as strtoull(s, &end, 0) does: a leading 0
// means octal, and conversion stops at the first invalid digit, whose
// text is returned as the start of the suffix.
func parseUint(s string, hex bool) (v uint64, rest string, err error) {
	base := uint64(10)
	switch {
	case hex:
		base = 16
		s = s[2:]
	case len(s) > 1 && s[0] == '0':
		base = 8
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d uint64
		switch {
		case isDigit(c):
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		}
		if d >= base {
			return v, s[i:], err
		}
		hi, lo := bits.Mul64(v, base)
		lo, carry := bits.Add64(lo, d, 0)
		if hi != 0 || carry != 0 {
			err = errRange
		}
		v = lo
	}
	return v, "", err
}

// scanString scans a string constant after its opening quote.
func (l *lexer) scanString() {
	start := l.off
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch c {
		case '"':
			raw := l.src[start:l.off]
			l.off++
			l.tok, l.lit = token.STRING, cString(unescape(raw))
			return
		case '\\':
			if l.off+1 < len(l.src) && l.src[l.off+1] != '\n' {
				l.off += 2
				continue
			}
		case '\n':
		default:
			l.off++
			continue
		}
		break
	}
	l.unterminated(diag.D_STR_NL, "string literal")
}

// unterminated reports a string or character constant that the line
// ends, or the input. dt_lex.l's rule for the first matches the newline
// as trailing context, and flex counts it, so dtrace reports the line
// after it. For the second dtrace has no rule and reports a syntax
// error near the quote.
func (l *lexer) unterminated(tag diag.Tag, what string) {
	if l.off < len(l.src) && l.src[l.off] == '\n' {
		pos := l.here()
		pos.Line++
		pos.Col = 1
		l.errorf(pos, tag, "newline encountered in %s", what)
	}
	l.errorf(l.here(), diag.D_SYNTAX, "unterminated %s: end of input before its closing quote", what)
}

// scanChar scans a character constant after its opening quote.
func (l *lexer) scanChar() {
	start := l.off
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch c {
		case '\'':
			raw := l.src[start:l.off]
			l.off++
			s := unescape(raw)
			if s == "" {
				l.errorf(l.pos, diag.D_CHR_NULL, "empty character constant")
			}
			if len(s) > 8 {
				l.errorf(l.pos, diag.D_CHR_OFLOW, "character constant is too long")
			}
			var v uint64
			for i := 0; i < len(s); i++ {
				v = v<<8 | uint64(s[i])
			}
			l.tok, l.lit, l.ival = token.INT, l.src[start-1:l.off], v
			l.ityp, _ = constant.LiteralType(v, "", true)
			return
		case '\\':
			if l.off+1 < len(l.src) && l.src[l.off+1] != '\n' {
				l.off += 2
				continue
			}
		case '\n':
		default:
			l.off++
			continue
		}
		break
	}
	l.unterminated(diag.D_CHR_NL, "character constant")
}

// cString cuts s at its first NUL byte: dtrace keeps strings as C strings.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// unescape processes C escapes as libdtrace's stresc2chr does; an escape
// it does not know keeps its backslash.
func unescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b = append(b, c)
			continue
		}
		i++
		c = s[i]
		switch c {
		case 'a':
			c = '\a'
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'v':
			c = '\v'
		case 'x':
			v, n := 0, 0
			for i+1 < len(s) && isHex(s[i+1]) {
				i++
				n++
				d, _ := strconv.ParseUint(s[i:i+1], 16, 8)
				v = v<<4 | int(d)
			}
			c = byte(v) // \x with no digits is NUL, as stresc2chr makes it
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for n := 1; n < 3 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'; n++ {
				i++
				v = v<<3 | int(s[i]-'0')
			}
			c = byte(v)
		case '"', '\\':
		default:
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return string(b)
}

// scanMacro scans $N, $$N, $name and $$name after the "$".
func (l *lexer) scanMacro() {
	str := false
	if l.peekByte() == '$' {
		str = true
		l.off++
	}
	start := l.off
	if l.off < len(l.src) && isDigit(l.src[l.off]) {
		for l.off < len(l.src) && isDigit(l.src[l.off]) {
			l.off++
		}
	} else {
		for l.off < len(l.src) && (isLetter(l.src[l.off]) || isDigit(l.src[l.off])) {
			l.off++
		}
	}
	name := l.src[start:l.off]
	if name == "" {
		l.errorf(l.pos, diag.D_SYNTAX, "syntax error near \"$\"")
	}
	text, isArg, ok := l.p.macro(name, str)
	if !ok {
		if isArg {
			l.errorf(l.pos, diag.D_MACRO_UNDEF, "macro argument %s is not defined", l.src[start-1-b2i(str):l.off])
		}
		l.errorf(l.pos, diag.D_MACRO_UNDEF, "macro variable %s is not defined", l.src[start-1-b2i(str):l.off])
	}
	if str {
		l.tok, l.lit = token.STRING, text
		return
	}
	if !isArg {
		// A macro variable is an integer.
		v, _ := strconv.ParseInt(text, 10, 64)
		l.tok, l.lit, l.ival = token.INT, text, uint64(v)
		l.ityp, _ = constant.LiteralType(uint64(v), "", true)
		return
	}
	l.macroArg(text)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// macroArg turns the text of argument $N into a token: an integer when
// it starts with a digit or sign, an identifier or type name when it is a
// valid name, and a string otherwise.
func (l *lexer) macroArg(text string) {
	s, neg, pos := text, false, false
	if s != "" {
		switch s[0] {
		case '-':
			neg, s = true, s[1:]
		case '+':
			pos, s = true, s[1:]
		}
	}
	// A value that is a number or a name (strbadidnum accepts letters,
	// digits and _ after an optional sign) starting with a digit is an
	// integer: strtoull's value, whatever follows the digits.
	if s != "" && isDigit(s[0]) && isAlnum(s) {
		end, hex := intDigits(s)
		v, _, err := parseUint(s[:end], hex)
		suffix := s[end:]
		if strings.Trim(suffix, "uUlL") != "" {
			suffix = ""
		}
		typ, ok := constant.LiteralType(v, suffix, s[0] != '0')
		if err != nil || !ok {
			l.errorf(l.pos, diag.D_MACRO_OFLOW, "macro argument %s constant %s results in integer overflow", l.src[int(l.pos.Col)-1+l.lineStart:l.off], s)
		}
		l.tok, l.lit, l.ival, l.ityp = token.INT, text, v, typ
		l.ineg, l.ipos = neg, pos
		return
	}
	if validIdent(text) {
		if t := token.Lookup(text); t != token.IDENT {
			l.tok, l.lit = t, text
			return
		}
		l.tok, l.lit = l.p.identOrType(text), text
		return
	}
	if len(s) >= 2 && text[0] == '"' && text[len(text)-1] == '"' {
		text = text[1 : len(text)-1]
	}
	l.tok, l.lit = token.STRING, cString(unescape(text))
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func validIdent(s string) bool {
	if s == "" || !(isLetter(s[0]) || s[0] == '`') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}
