// Package token defines the lexical tokens of the D language and the
// source positions that every token and syntax tree node carries.
package token

import (
	"strconv"
	"sync"
)

// Pos is a position in D source text. Line and Col count from 1; a zero
// Pos means "no position". File names the source: the name it was given,
// or the one set by a #line control line or a preprocessor line marker.
//
// A Pos holds no pointers, so that syntax trees cost the garbage
// collector little: file names are interned in a process-wide table.
type Pos struct {
	File FileID
	Line int32
	Col  int32
}

// FileID identifies an interned file name; 0 is the empty name.
type FileID uint32

var files struct {
	sync.Mutex
	names []string
	ids   map[string]FileID
}

// File returns the ID of the file name, interning it.
func File(name string) FileID {
	if name == "" {
		return 0
	}
	files.Lock()
	defer files.Unlock()
	if id, ok := files.ids[name]; ok {
		return id
	}
	if files.ids == nil {
		files.ids = make(map[string]FileID)
		files.names = []string{""}
	}
	id := FileID(len(files.names))
	files.names = append(files.names, name)
	files.ids[name] = id
	return id
}

// Name returns the file name of id.
func (id FileID) Name() string {
	if id == 0 {
		return ""
	}
	files.Lock()
	defer files.Unlock()
	return files.names[id]
}

// Filename returns the name of the position's file.
func (p Pos) Filename() string { return p.File.Name() }

// IsValid reports whether the position is set.
func (p Pos) IsValid() bool { return p.Line > 0 }

func (p Pos) String() string {
	s := p.Filename()
	if s == "" {
		s = "-"
	}
	if p.IsValid() {
		s += ":" + strconv.Itoa(int(p.Line))
		if p.Col > 0 {
			s += ":" + strconv.Itoa(int(p.Col))
		}
	}
	return s
}

// Token is the kind of a lexical token.
type Token uint8

// The tokens of D. The operator names follow dt_grammar.y's DT_TOK_*
// names where D gives them one.
const (
	ILLEGAL Token = iota
	EOF

	literalBeg
	IDENT  // pid, `sym, mod`sym
	AGG    // @name
	TNAME  // a name known to be a type
	INT    // 42, 0x2a, 'c'
	STRING // "text"
	PSPEC  // a probe specifier in the outer scope
	literalEnd

	operatorBeg
	COMMA    // ,
	ELLIPSIS // ...
	ASGN     // =
	ADD_ASGN // +=
	SUB_ASGN // -=
	MUL_ASGN // *=
	DIV_ASGN // /=
	MOD_ASGN // %=
	AND_ASGN // &=
	XOR_ASGN // ^=
	OR_ASGN  // |=
	SHL_ASGN // <<=
	SHR_ASGN // >>=
	QUESTION // ?
	COLON    // :
	LOR      // ||
	LXOR     // ^^
	LAND     // &&
	BOR      // |
	XOR      // ^
	BAND     // &
	EQU      // ==
	NEQ      // !=
	LT       // <
	LE       // <=
	GT       // >
	GE       // >=
	SHL      // <<
	SHR      // >>
	ADD      // +
	SUB      // -
	MUL      // *
	DIV      // /
	MOD      // %
	LNEG     // !
	BNEG     // ~
	INC      // ++ as written
	DEC      // -- as written
	LPAREN   // (
	RPAREN   // )
	LBRACK   // [
	RBRACK   // ]
	LBRACE   // {
	RBRACE   // }
	ARROW    // ->
	DOT      // .
	SEMI     // ;
	EPRED    // the / that ends a predicate

	// Operators that only appear in syntax trees, never from the lexer.
	PREINC  // ++x
	PREDEC  // --x
	POSTINC // x++
	POSTDEC // x--
	IPOS    // +x
	INEG    // -x
	DEREF   // *x
	ADDROF  // &x
	operatorEnd

	keywordBeg
	AUTO
	BREAK
	CASE
	CHAR
	CONST
	CONTINUE
	COUNTER
	DEFAULT
	DO
	DOUBLE
	ELSE
	ENUM
	EXTERN
	FLOAT
	FOR
	GOTO
	IF
	IMPORT
	INLINE
	INTKW // int
	LONG
	PROBE
	PROVIDER
	REGISTER
	RESTRICT
	RETURN
	SELF
	SHORT
	SIGNED
	STATIC
	STRINGKW // string
	STRUCT
	SWITCH
	THIS
	TYPEDEF
	UNION
	UNSIGNED
	USERLAND
	VOID
	VOLATILE
	WHILE
	XLATOR // translator
	// Keyword-like operators.
	OFFSETOF
	SIZEOF
	STRINGOF
	XLATE
	keywordEnd
)

var tokens = [...]string{
	ILLEGAL: "ILLEGAL",
	EOF:     "EOF",
	IDENT:   "<ident>",
	AGG:     "<agg>",
	TNAME:   "<type>",
	INT:     "<int>",
	STRING:  "<string>",
	PSPEC:   "<pspec>",

	COMMA:    ",",
	ELLIPSIS: "...",
	ASGN:     "=",
	ADD_ASGN: "+=",
	SUB_ASGN: "-=",
	MUL_ASGN: "*=",
	DIV_ASGN: "/=",
	MOD_ASGN: "%=",
	AND_ASGN: "&=",
	XOR_ASGN: "^=",
	OR_ASGN:  "|=",
	SHL_ASGN: "<<=",
	SHR_ASGN: ">>=",
	QUESTION: "?",
	COLON:    ":",
	LOR:      "||",
	LXOR:     "^^",
	LAND:     "&&",
	BOR:      "|",
	XOR:      "^",
	BAND:     "&",
	EQU:      "==",
	NEQ:      "!=",
	LT:       "<",
	LE:       "<=",
	GT:       ">",
	GE:       ">=",
	SHL:      "<<",
	SHR:      ">>",
	ADD:      "+",
	SUB:      "-",
	MUL:      "*",
	DIV:      "/",
	MOD:      "%",
	LNEG:     "!",
	BNEG:     "~",
	INC:      "++",
	DEC:      "--",
	LPAREN:   "(",
	RPAREN:   ")",
	LBRACK:   "[",
	RBRACK:   "]",
	LBRACE:   "{",
	RBRACE:   "}",
	ARROW:    "->",
	DOT:      ".",
	SEMI:     ";",
	EPRED:    "/",
	PREINC:   "++",
	PREDEC:   "--",
	POSTINC:  "++",
	POSTDEC:  "--",
	IPOS:     "+",
	INEG:     "-",
	DEREF:    "*",
	ADDROF:   "&",

	AUTO:     "auto",
	BREAK:    "break",
	CASE:     "case",
	CHAR:     "char",
	CONST:    "const",
	CONTINUE: "continue",
	COUNTER:  "counter",
	DEFAULT:  "default",
	DO:       "do",
	DOUBLE:   "double",
	ELSE:     "else",
	ENUM:     "enum",
	EXTERN:   "extern",
	FLOAT:    "float",
	FOR:      "for",
	GOTO:     "goto",
	IF:       "if",
	IMPORT:   "import",
	INLINE:   "inline",
	INTKW:    "int",
	LONG:     "long",
	PROBE:    "probe",
	PROVIDER: "provider",
	REGISTER: "register",
	RESTRICT: "restrict",
	RETURN:   "return",
	SELF:     "self",
	SHORT:    "short",
	SIGNED:   "signed",
	STATIC:   "static",
	STRINGKW: "string",
	STRUCT:   "struct",
	SWITCH:   "switch",
	THIS:     "this",
	TYPEDEF:  "typedef",
	UNION:    "union",
	UNSIGNED: "unsigned",
	USERLAND: "userland",
	VOID:     "void",
	VOLATILE: "volatile",
	WHILE:    "while",
	XLATOR:   "translator",
	OFFSETOF: "offsetof",
	SIZEOF:   "sizeof",
	STRINGOF: "stringof",
	XLATE:    "xlate",
}

// String returns the token's source text for operators and keywords and a
// bracketed class name (as dt_printd's opstr does) for the others.
func (t Token) String() string {
	if int(t) < len(tokens) && tokens[t] != "" {
		return tokens[t]
	}
	return "token(" + strconv.Itoa(int(t)) + ")"
}

// IsKeyword reports whether t is a keyword.
func (t Token) IsKeyword() bool { return keywordBeg < t && t < keywordEnd }

// IsOperator reports whether t is an operator or punctuation.
func (t Token) IsOperator() bool { return operatorBeg < t && t < operatorEnd }

// IsAssign reports whether t is = or a compound assignment.
func (t Token) IsAssign() bool { return ASGN <= t && t <= SHR_ASGN }

// Lookup returns the keyword token for name, or IDENT. A switch, not a
// map, so that it costs nothing at start-up; Go compiles it to a
// search by length and bytes, as fast as a map's hash for an
// identifier. TestLookup checks it against the tokens' texts.
func Lookup(name string) Token {
	switch name {
	case "auto":
		return AUTO
	case "break":
		return BREAK
	case "case":
		return CASE
	case "char":
		return CHAR
	case "const":
		return CONST
	case "continue":
		return CONTINUE
	case "counter":
		return COUNTER
	case "default":
		return DEFAULT
	case "do":
		return DO
	case "double":
		return DOUBLE
	case "else":
		return ELSE
	case "enum":
		return ENUM
	case "extern":
		return EXTERN
	case "float":
		return FLOAT
	case "for":
		return FOR
	case "goto":
		return GOTO
	case "if":
		return IF
	case "import":
		return IMPORT
	case "inline":
		return INLINE
	case "int":
		return INTKW
	case "long":
		return LONG
	case "probe":
		return PROBE
	case "provider":
		return PROVIDER
	case "register":
		return REGISTER
	case "restrict":
		return RESTRICT
	case "return":
		return RETURN
	case "self":
		return SELF
	case "short":
		return SHORT
	case "signed":
		return SIGNED
	case "static":
		return STATIC
	case "string":
		return STRINGKW
	case "struct":
		return STRUCT
	case "switch":
		return SWITCH
	case "this":
		return THIS
	case "typedef":
		return TYPEDEF
	case "union":
		return UNION
	case "unsigned":
		return UNSIGNED
	case "userland":
		return USERLAND
	case "void":
		return VOID
	case "volatile":
		return VOLATILE
	case "while":
		return WHILE
	case "translator":
		return XLATOR
	case "offsetof":
		return OFFSETOF
	case "sizeof":
		return SIZEOF
	case "stringof":
		return STRINGOF
	case "xlate":
		return XLATE
	}
	return IDENT
}

// Precedence returns the binary precedence of op, from 1 (||) to 11
// (* / %), or 0 when op is not a binary operator of that range. The comma,
// assignment and conditional operators are parsed separately.
func (op Token) Precedence() int {
	switch op {
	case LOR:
		return 1
	case LXOR:
		return 2
	case LAND:
		return 3
	case BOR:
		return 4
	case XOR:
		return 5
	case BAND:
		return 6
	case EQU, NEQ:
		return 7
	case LT, LE, GT, GE:
		return 8
	case SHL, SHR:
		return 9
	case ADD, SUB:
		return 10
	case MUL, DIV, MOD:
		return 11
	}
	return 0
}
