package parser

import (
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
)

// Config holds what a parse needs from outside the source text.
type Config struct {
	// Args are the macro arguments: Args[0] is $0 (the script name),
	// Args[1] is $1 and so on.
	Args []string
	// Macros are the macro variables ($pid, $target, …) by name, as
	// decimal text.
	Macros map[string]string
	// DefaultArgs makes unset $N expand to 0 and $$N to "" (-x
	// defaultargs) instead of failing.
	DefaultArgs bool
	// StringSize is the size of D's string type (-x strsize); 0 means
	// dtrace's default, 256.
	StringSize uint64
	// AllowEmpty accepts a program with no clauses, inlines, translators
	// or providers (-x empty).
	AllowEmpty bool
	// ArgRefs skips the check that every argument is referenced (-x
	// argref).
	ArgRefs bool
	// FuncNameLen is the kernel's DTRACE_FUNCNAMELEN, which bounds the
	// function component of probe descriptions: 0 means 192, FreeBSD 14's
	// (FreeBSD 13 and illumos have 128).
	FuncNameLen int
	// CommandLine marks a program given on the command line (-n, -P, …):
	// a probe description needs no predicate or actions, and errors carry
	// no line number, as in dtrace.
	CommandLine bool
	// Types answers whether a name that the script does not declare is a
	// type, for the type checker's kernel and module types. Nil means
	// only D's built-in types and the script's own are known.
	Types TypeNames
	// Declare is called with each declaration, inline, translator and
	// provider definition as soon as it is parsed, as dtrace declares
	// them while it parses: its errors come before those of anything
	// later in the text. An error stops the parse.
	Declare func(prog *ast.Program, d ast.Decl) error
	// DefineTag is called when the definition of a named struct or
	// union begins, at its '{', where dtrace declares the tag: an error
	// (a tag defined before) stops the parse before anything in the
	// members is read.
	DefineTag func(t *ast.StructType) error
	// SetOption runs "#pragma D option name=value"; nil accepts any.
	SetOption func(name, value string) error
	// DependsOn checks "#pragma D depends_on class name"; nil accepts any.
	DependsOn func(class, name string) error
	// Probe, if set, is called with each clause's probe descriptions as
	// each is parsed, before the rest of its clause: a caller may start
	// finding the probes they match while the parse goes on. It is
	// called for the descriptions before an error too.
	Probe func(d *ast.ProbeDesc)
}

// TypeNames reports whether a name is a type.
type TypeNames interface {
	IsType(name string) bool
}

// bailout is the panic value that unwinds the parser at its first error:
// dtrace reports only the first error of a compilation.
type bailout struct{}

// pragmaIdent is an identifier named by #pragma D attributes or binding,
// which the program must declare.
type pragmaIdent struct {
	pos       token.Pos
	directive string
	name      string
}

type parser struct {
	lex  lexer
	cfg  *Config
	file string
	prog *ast.Program
	err  *diag.Error

	typedefs     map[string]bool
	typedefInts  map[string]ast.IntType // typedefs of integer types
	inlineInts   map[string]*ast.IntLit // inlines whose value is a constant
	typedefDecls map[string]typedefDecl // the script's typedefs
	structs      map[string]*ast.StructType
	defining     map[string]bool // the tags of the definitions open
	enums        map[string]bool
	layoutDepth  int
	idents       map[string]bool // declared variables and inlines
	argRefs      []bool
	pragmaIdents []pragmaIdent
	lastUnary    ast.Expr // the last expression parsed at unary level
	// nameIsDeclarator tells the lexer that a name it scans now is a
	// declarator's, never a type.
	nameIsDeclarator bool

	parens, brackets, braces int

	// prevEnd is the lexer's end (dtrace's yylineno) after the token
	// before the current one: where dtrace builds a node that ends in
	// that token when yacc needs no lookahead to end it.
	prevEnd token.Pos
	// depth is the nesting of the construct being parsed (see
	// MaxNesting); height is the height of the expression tree the last
	// expression parsing method returned.
	depth, height int
}

// MaxNesting bounds how deeply a program may nest: parentheses, casts,
// unary operators, conditionals, assignments, index and call brackets,
// if statements, struct and union definitions, declarators, and the
// height of every expression tree, left-associative operator chains
// included. It is the stack depth byacc's parser gives dtrace's grammar
// (YYMAXDEPTH, 10000 in the skeleton FreeBSD builds dt_grammar.y with),
// so kdtrace refuses nesting at the scale dtrace does, with its message,
// and every later pass, which recurses over the tree, runs in a small
// bounded stack: deeper input would otherwise end in Go's unrecoverable
// stack overflow.
const MaxNesting = 10000

// nest enters one level of nesting; the caller leaves it with
// p.depth--. The limit is checked before the recursion it guards.
func (p *parser) nest() {
	if p.depth++; p.depth > MaxNesting {
		p.tooDeep()
	}
}

// tooDeep reports nesting beyond MaxNesting as dtrace reports byacc's
// stack overflow, saying the limit.
func (p *parser) tooDeep() {
	p.fail(diag.Errorf(p.lex.pos, diag.D_SYNTAX, "yacc stack overflow %s: nesting exceeds %d levels", p.near(), MaxNesting))
}

// grow returns the height of x, a node built over children of the
// heights given, and fails when it exceeds MaxNesting. A node that folded
// into a constant is a leaf.
func (p *parser) grow(x ast.Expr, heights ...int) int {
	if _, ok := x.(*ast.IntLit); ok {
		return 1
	}
	h := 0
	for _, c := range heights {
		h = max(h, c)
	}
	if h++; h > MaxNesting {
		p.tooDeep()
	}
	return h
}

// ParseFile parses a D program. The file name is used in positions and
// errors. On error it returns a *diag.Error, and never panics.
func ParseFile(file string, src []byte, cfg *Config) (prog *ast.Program, err error) {
	if cfg == nil {
		cfg = &Config{}
	}
	p := &parser{cfg: cfg, file: file, prog: &ast.Program{File: file}}
	// dtrace's prelude: inline long NULL = 0;
	p.inlineInts = map[string]*ast.IntLit{"NULL": {Type: ast.Long}}
	p.argRefs = make([]bool, len(cfg.Args))
	p.lex.init(p, file, string(src))
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			prog, err = nil, p.err
		}
	}()
	p.parseProgram()
	p.prog.End = p.lex.here()
	p.checkUnused()
	if !cfg.AllowEmpty && p.empty() {
		p.fail(diag.Errorf(p.lex.here(), diag.D_EMPTY, "empty D program translation unit"))
	}
	return p.prog, nil
}

// fail records err and unwinds to ParseFile.
func (p *parser) fail(err *diag.Error) {
	if p.cfg.CommandLine {
		err.Pos.Line = 0
	}
	p.err = err
	panic(bailout{})
}

// syntaxError reports a syntax error at the current token, naming it as
// yacc's yyerror does.
func (p *parser) syntaxError() {
	p.fail(diag.Errorf(p.lex.end, diag.D_SYNTAX, "syntax error %s", p.near()))
}

func (p *parser) near() string {
	if p.lex.tok == token.EOF {
		return "near end of input"
	}
	text := p.lex.lit
	switch p.lex.tok {
	case token.STRING, token.INT:
		text = p.rawText()
	}
	return "near \"" + text + "\""
}

// rawText returns the source text of the current token.
func (p *parser) rawText() string {
	l := &p.lex
	start := l.lineStart + int(p.lex.pos.Col) - 1
	if int(p.lex.pos.Line) != l.line || start > l.off || start < 0 {
		return p.lex.lit
	}
	return l.src[start:l.off]
}

func (p *parser) next() {
	p.prevEnd = p.lex.end
	scope := p.lex.scope
	p.lex.next()
	if scope != scopeExpr && p.lex.tok != token.LBRACE {
		return // the outer scope counts only '{'
	}
	switch p.lex.tok {
	case token.LPAREN:
		p.parens++
	case token.RPAREN:
		if p.parens--; p.parens < 0 {
			p.fail(diag.Errorf(p.lex.end, diag.D_SYNTAX, "extra ) in input stream"))
		}
	case token.LBRACK:
		p.brackets++
	case token.RBRACK:
		if p.brackets--; p.brackets < 0 {
			p.fail(diag.Errorf(p.lex.end, diag.D_SYNTAX, "extra ] in input stream"))
		}
	case token.LBRACE:
		p.braces++
	case token.RBRACE:
		if p.braces--; p.braces < 0 {
			p.fail(diag.Errorf(p.lex.end, diag.D_SYNTAX, "extra } in input stream"))
		}
	case token.EPRED:
		if p.parens != 0 {
			p.fail(diag.Errorf(p.lex.end, diag.D_SYNTAX, "closing ) expected in predicate before /"))
		}
		if p.brackets != 0 {
			p.fail(diag.Errorf(p.lex.end, diag.D_SYNTAX, "closing ] expected in predicate before /"))
		}
	}
}

func (p *parser) expect(t token.Token) token.Pos {
	pos := p.lex.pos
	if p.lex.tok != t {
		p.syntaxError()
	}
	p.next()
	return pos
}

// expectClosing consumes a closing token, switching the lexer to s first
// so that the token after it is scanned in the right scope.
func (p *parser) expectClosing(t token.Token, s scope) {
	if p.lex.tok != t {
		p.syntaxError()
	}
	p.lex.scope = s
	p.next()
}

// ----------------------------------------------------------------------------
// Names, macros and types

// isType reports whether name, possibly scoped as mod`name, is a type.
func (p *parser) isType(name string) bool {
	if p.typedefs[name] || isBuiltinType(name) {
		return true
	}
	if p.cfg.Types != nil && p.cfg.Types.IsType(name) {
		return true
	}
	if i := strings.LastIndexByte(name, '`'); i >= 0 {
		base := name[i+1:]
		return p.typedefs[base] || isBuiltinType(base) || isTypeKeyword(base)
	}
	return false
}

// isBuiltinType reports whether name is a typedef of D's own "D"
// module (dt_open.c), all integers (builtinIntType) whose names end in
// _t.
func isBuiltinType(name string) bool {
	if !strings.HasSuffix(name, "_t") {
		return false
	}
	_, ok := builtinIntType(name)
	return ok
}

// isTypeKeyword reports whether name is a type keyword that names a
// type alone, and so also when scoped (D`int).
func isTypeKeyword(name string) bool {
	switch name {
	case "char", "short", "int", "long", "float", "double", "void", "string", "signed", "unsigned":
		return true
	}
	return false
}

// Names that are neither declared nor known types are decided from the
// syntax around them, as a C parser without a symbol table would: the
// type checker reports the ones that name no type. This lets scripts
// that name kernel types parse without the kernel's type information.

// declaratorFollows reports whether the text at offset i continues a
// declaration of a variable: optional "*"s, then a name, then one of
// ; , [ ( : =.
func (p *parser) declaratorFollows(i int) bool {
	src := p.lex.src
	i = p.lex.nextNonBlank(i)
	for i < len(src) && src[i] == '*' {
		i = p.lex.nextNonBlank(i + 1)
	}
	if i >= len(src) || !(isLetter(src[i]) || src[i] == '`') {
		return false
	}
	for i < len(src) && isIdentChar(src[i]) {
		i++
	}
	i = p.lex.nextNonBlank(i)
	return i < len(src) && strings.IndexByte(";,[(:=)", src[i]) >= 0
}

// declarationFollows is declaratorFollows for a word in the outer scope,
// where a probe description list may also continue with a comma: there
// the text must also reach a ';' before any '{' or '/'.
func (p *parser) declarationFollows(i int) bool {
	if !p.declaratorFollows(i) {
		return false
	}
	src := p.lex.src
	for ; i < len(src); i++ {
		switch src[i] {
		case ';':
			return true
		case '{', '/':
			return false
		}
	}
	return false
}

// castFollows reports whether the text at offset i, just after a name
// that follows "(", makes the name a cast's type: "*"s then ")", or ")"
// followed by the start of an operand.
func (p *parser) castFollows(i int) bool {
	src := p.lex.src
	i = p.lex.nextNonBlank(i)
	stars := false
	for i < len(src) && src[i] == '*' {
		stars = true
		i = p.lex.nextNonBlank(i + 1)
	}
	if i >= len(src) || src[i] != ')' {
		return false
	}
	if stars {
		return true
	}
	i = p.lex.nextNonBlank(i + 1)
	if i >= len(src) {
		return false
	}
	c := src[i]
	if c == '!' && i+1 < len(src) && src[i+1] == '=' {
		return false // the != operator, not a logical negation
	}
	return isLetter(c) || isDigit(c) || strings.IndexByte("`\"'(@$!~", c) >= 0
}

// identOrType classifies a name scanned in the expression scope, as
// dt_lex.l's id_or_type: a declared identifier stays one; a type name is
// a TNAME unless the next token shows it is being used as a variable.
func (p *parser) identOrType(name string) token.Token {
	if p.idents[name] || p.nameIsDeclarator {
		return token.IDENT
	}
	// id_or_type reads past the blanks after a type name in an
	// expression, which moves dtrace's line on when they hold a newline.
	if p.lex.scope == scopeExpr && p.newlineFollows() && p.isType(name) {
		p.lex.peekPast()
	}
	// In an expression, a name followed by = [ ++ or -- is a variable
	// even when it names a type, and dt_lex.l registers such a type
	// name as one from here on; registering every such name is the
	// same for names that are no type, and spares the type lookup,
	// which may read the kernel's types.
	if next := p.followedBy(); next != 0 {
		if p.lex.scope == scopeExpr {
			p.declareIdent(name)
			return token.IDENT
		}
		if next == '=' {
			// A declarator's name: inline int N = 1.
			return token.IDENT
		}
	}
	if !p.isType(name) {
		return token.IDENT
	}
	return token.TNAME
}

// newlineFollows reports whether the blanks after the current token hold
// a newline.
func (p *parser) newlineFollows() bool {
	src := p.lex.src
	for i := p.lex.off; i < len(src); i++ {
		switch src[i] {
		case '\n':
			return true
		case ' ', '\t', '\r', '\f', '\v':
			continue
		}
		return false
	}
	return false
}

// followedBy returns what follows the current token when it is one of
// [, = (not ==), ++ or --: '[', '=', '+' or '-'; else 0.
func (p *parser) followedBy() byte {
	src := p.lex.src
	i := p.lex.nextNonBlank(p.lex.off)
	if i >= len(src) {
		return 0
	}
	switch c := src[i]; {
	case c == '[',
		c == '=' && (i+1 >= len(src) || src[i+1] != '='),
		(c == '+' || c == '-') && i+1 < len(src) && src[i+1] == c:
		return c
	}
	return 0
}

// macro returns the text of macro $name: an argument when name is a
// number, else a macro variable.
// str is set for $$ references, whose default under -x defaultargs is ""
// rather than 0.
func (p *parser) macro(name string, str bool) (text string, isArg, ok bool) {
	if isAllDigits(name) {
		n, err := strconv.Atoi(name)
		if err == nil && n < len(p.cfg.Args) {
			p.argRefs[n] = true
			return p.cfg.Args[n], true, true
		}
		if p.cfg.DefaultArgs {
			if str {
				return "", true, true
			}
			return "0", true, true
		}
		return "", true, false
	}
	v, ok := p.cfg.Macros[name]
	return v, false, ok
}

func (p *parser) declareIdent(name string) {
	if p.idents == nil {
		p.idents = make(map[string]bool)
	}
	p.idents[name] = true
}

func (p *parser) declareType(name string) {
	if p.typedefs == nil {
		p.typedefs = make(map[string]bool)
	}
	p.typedefs[name] = true
}

// checkUnused runs dtrace's checks after parsing: every identifier a
// pragma names must be declared by the program, and every macro argument
// referenced.
func (p *parser) checkUnused() {
	for _, pi := range p.pragmaIdents {
		// "binding ... translator" versions the file's translators.
		if pi.directive == "binding" && pi.name == "translator" {
			continue
		}
		if !p.idents[pi.name] {
			p.fail(diag.Errorf(pi.pos, diag.D_PRAGMA_UNUSED, "unused #pragma %s", pi.directive))
		}
	}
	if p.cfg.ArgRefs {
		return
	}
	// As dtrace, only the last argument is checked.
	if n := len(p.argRefs) - 1; n > 0 && !p.argRefs[n] {
		p.fail(diag.Errorf(p.lex.here(), diag.D_MACRO_UNUSED, "extraneous argument '%s' ($%d is not referenced)", p.cfg.Args[n], n))
	}
}

// empty reports whether the program has nothing but declarations, which
// dtrace counts as an empty translation unit.
func (p *parser) empty() bool {
	for _, d := range p.prog.Decls {
		if _, ok := d.(*ast.Declaration); !ok {
			return false
		}
	}
	return true
}
