// Package ast declares the syntax tree of D programs.
//
// The parser (package parser) builds a *Program; the sugar pass (package
// sugar) rewrites its clauses; the -d printer (package printer) prints
// them. Every node carries the position of its first token, and
// expressions, clauses and declarations also where dtrace reports errors
// about them (DiagPos).
//
// The tree stays close to libdtrace's parse tree so that the passes can
// follow dtrace's rules: integer constants are folded as they are parsed
// (dt_node_op1 and dt_node_op2 do it in the grammar actions), macro
// arguments are already substituted, and self->x, this->x and @a[k] are
// still plain selector and index expressions; resolving them is the type
// checker's job.
package ast

import "github.com/kdtrace/kdtrace/dlang/token"

// Node is implemented by every node of the tree.
type Node interface {
	Pos() token.Pos
}

// Expressions, clauses, declarations and the parts of definitions also
// record in a DiagPos field where dtrace reports errors about them: the
// position its lexer had reached when its parser built the node (the
// dn_line of dt_node_t, yylineno at the yacc reduction), which is after
// the node's last token and, when yacc needed the next token to end the
// node, after that one too. It is often on a later line than Pos.

// DiagPos returns where dtrace reports errors about n: its DiagPos when
// the parser set one, else its position.
func DiagPos(n Node) token.Pos {
	var p token.Pos
	switch n := n.(type) {
	case *IntLit:
		p = n.DiagPos
	case *StringLit:
		p = n.DiagPos
	case *Ident:
		p = n.DiagPos
	case *UnaryExpr:
		p = n.DiagPos
	case *BinaryExpr:
		p = n.DiagPos
	case *CondExpr:
		p = n.DiagPos
	case *IndexExpr:
		p = n.DiagPos
	case *SelectorExpr:
		p = n.DiagPos
	case *CallExpr:
		p = n.DiagPos
	case *CastExpr:
		p = n.DiagPos
	case *SizeofExpr:
		p = n.DiagPos
	case *OffsetofExpr:
		p = n.DiagPos
	case *XlateExpr:
		p = n.DiagPos
	case *Clause:
		p = n.DiagPos
	case *Declaration:
		p = n.DiagPos
	case *InlineDecl:
		p = n.DiagPos
	case *Translator:
		p = n.DiagPos
	case *StructType:
		p = n.DiagPos
	case *EnumType:
		p = n.DiagPos
	}
	if p.IsValid() {
		return p
	}
	return n.Pos()
}

// Expr is an expression node.
type Expr interface {
	Node
	exprNode()
}

// Stmt is a statement node.
type Stmt interface {
	Node
	stmtNode()
}

// Decl is a top-level item of a program.
type Decl interface {
	Node
	declNode()
}

// ----------------------------------------------------------------------------
// Expressions

// IntType is the C type dt_node_int gives an integer constant.
type IntType uint8

// The integer constant types: first those dt_node_int gives literals, in
// its search order, then the narrower ones a folded cast can give.
const (
	Int IntType = iota
	Uint
	Long
	Ulong
	LLong
	ULLong
	Char
	UChar
	Short
	UShort
)

var intTypeNames = [...]string{
	"int", "unsigned int", "long", "unsigned long", "long long",
	"unsigned long long", "char", "unsigned char", "short", "unsigned short",
}

var intTypeBits = [...]int{32, 32, 64, 64, 64, 64, 8, 8, 16, 16}

func (t IntType) String() string { return intTypeNames[t] }

// Signed reports whether t is a signed type.
func (t IntType) Signed() bool { return t%2 == 0 }

// Bits returns the width of t in the LP64 data model.
func (t IntType) Bits() int { return intTypeBits[t] }

type (
	// IntLit is an integer or character constant, or the result of
	// folding constants. Value holds the 64-bit two's complement bits.
	IntLit struct {
		ValuePos token.Pos
		DiagPos  token.Pos
		Value    uint64
		Type     IntType
		// Named is the type the constant has when it is not one of
		// C's integer types, as written: the typedef a folded cast or
		// an integer inline names ("ulong_t", "D`ulong_t"), or the enum
		// of an enumerator ("enum e"), which dtrace's INT node keeps as
		// its type. Type is then what it resolves to.
		Named string
	}

	// StringLit is a string constant; Value holds the bytes after escape
	// processing.
	StringLit struct {
		ValuePos token.Pos
		DiagPos  token.Pos
		Value    string
	}

	// Ident is an identifier: a variable, a builtin, self or this, an
	// aggregation (@name), or a kernel symbol (`sym or mod`sym).
	Ident struct {
		NamePos token.Pos
		DiagPos token.Pos
		Name    string
	}

	// UnaryExpr is a prefix or postfix operator applied to X. Op is one
	// of LNEG, BNEG, PREINC, PREDEC, POSTINC, POSTDEC, IPOS, INEG, DEREF,
	// ADDROF or STRINGOF.
	UnaryExpr struct {
		OpPos   token.Pos
		DiagPos token.Pos
		Op      token.Token
		X       Expr
	}

	// BinaryExpr is X Op Y, including assignments and the comma operator.
	BinaryExpr struct {
		X       Expr
		OpPos   token.Pos
		Op      token.Token
		Y       Expr
		DiagPos token.Pos
	}

	// CondExpr is Cond ? X : Y.
	CondExpr struct {
		Cond    Expr
		X, Y    Expr
		DiagPos token.Pos
	}

	// IndexExpr is X[Index...]: an array, associative array or
	// aggregation reference with one or more keys.
	IndexExpr struct {
		X       Expr
		Lbrack  token.Pos
		Index   []Expr
		DiagPos token.Pos
	}

	// SelectorExpr is X.Sel or X->Sel (Op DOT or ARROW).
	SelectorExpr struct {
		X       Expr
		Op      token.Token
		Sel     *Ident
		DiagPos token.Pos
	}

	// CallExpr is Fun(Args...): a subroutine, action or aggregating
	// function.
	CallExpr struct {
		Fun     *Ident
		Lparen  token.Pos
		Args    []Expr
		DiagPos token.Pos
	}

	// CastExpr is (Type)X.
	CastExpr struct {
		Lparen  token.Pos
		Type    *TypeName
		X       Expr
		DiagPos token.Pos
	}

	// SizeofExpr is sizeof(Type) or sizeof X; exactly one is set.
	SizeofExpr struct {
		Sizeof  token.Pos
		Type    *TypeName
		X       Expr
		DiagPos token.Pos
	}

	// OffsetofExpr is offsetof(Type, Member).
	OffsetofExpr struct {
		Offsetof token.Pos
		Type     *TypeName
		Member   *Ident
		DiagPos  token.Pos
	}

	// XlateExpr is xlate<Type>(X).
	XlateExpr struct {
		Xlate   token.Pos
		Type    *TypeName
		X       Expr
		DiagPos token.Pos
	}
)

func (x *IntLit) Pos() token.Pos    { return x.ValuePos }
func (x *StringLit) Pos() token.Pos { return x.ValuePos }
func (x *Ident) Pos() token.Pos     { return x.NamePos }
func (x *UnaryExpr) Pos() token.Pos {
	if x.Op == token.POSTINC || x.Op == token.POSTDEC {
		return x.X.Pos()
	}
	return x.OpPos
}
func (x *BinaryExpr) Pos() token.Pos   { return x.X.Pos() }
func (x *CondExpr) Pos() token.Pos     { return x.Cond.Pos() }
func (x *IndexExpr) Pos() token.Pos    { return x.X.Pos() }
func (x *SelectorExpr) Pos() token.Pos { return x.X.Pos() }
func (x *CallExpr) Pos() token.Pos     { return x.Fun.Pos() }
func (x *CastExpr) Pos() token.Pos     { return x.Lparen }
func (x *SizeofExpr) Pos() token.Pos   { return x.Sizeof }
func (x *OffsetofExpr) Pos() token.Pos { return x.Offsetof }
func (x *XlateExpr) Pos() token.Pos    { return x.Xlate }

func (*IntLit) exprNode()       {}
func (*StringLit) exprNode()    {}
func (*Ident) exprNode()        {}
func (*UnaryExpr) exprNode()    {}
func (*BinaryExpr) exprNode()   {}
func (*CondExpr) exprNode()     {}
func (*IndexExpr) exprNode()    {}
func (*SelectorExpr) exprNode() {}
func (*CallExpr) exprNode()     {}
func (*CastExpr) exprNode()     {}
func (*SizeofExpr) exprNode()   {}
func (*OffsetofExpr) exprNode() {}
func (*XlateExpr) exprNode()    {}

// ----------------------------------------------------------------------------
// Statements

type (
	// ExprStmt is an expression used as a statement: an action, a
	// subroutine call or an assignment.
	ExprStmt struct {
		X Expr
	}

	// IfStmt is if (Cond) Then [else Else]. A body written without
	// braces holds its one statement. Else is nil when there is no else.
	IfStmt struct {
		If   token.Pos
		Cond Expr
		Then *Block
		Else *Block
	}
)

// Block is a statement list, with or without braces in the source.
type Block struct {
	Lbrace token.Pos
	List   []Stmt
}

func (s *ExprStmt) Pos() token.Pos { return s.X.Pos() }
func (s *IfStmt) Pos() token.Pos   { return s.If }

func (*ExprStmt) stmtNode() {}
func (*IfStmt) stmtNode()   {}

// ----------------------------------------------------------------------------
// Types and declarations

// StorageClass is the storage class of a declaration.
type StorageClass uint8

// The storage classes; Self and This are D's thread-local and clause-local
// classes.
const (
	NoClass StorageClass = iota
	Auto
	Register
	Static
	Extern
	Typedef
	Self
	This
)

var classNames = [...]string{"", "auto", "register", "static", "extern", "typedef", "self", "this"}

func (c StorageClass) String() string { return classNames[c] }

// Qualifier is a set of type qualifiers.
type Qualifier uint8

// The type qualifiers.
const (
	Const Qualifier = 1 << iota
	Restrict
	Volatile
)

// DeclSpec holds a declaration's specifiers: its storage class, qualifiers
// and base type.
type DeclSpec struct {
	SpecPos  token.Pos
	Class    StorageClass
	Qual     Qualifier
	Userland bool
	Type     TypeSpec
}

// TypeSpec is the base type named in declaration specifiers.
type TypeSpec interface {
	Node
	typeSpec()
}

type (
	// BasicType is a type written with C's type keywords (int, unsigned
	// long, char, void, string …); Words keeps them in source order.
	BasicType struct {
		WordPos token.Pos
		Words   []string
	}

	// NamedType is a typedef or kernel type name, possibly scoped by a
	// module (mod`name).
	NamedType struct {
		NamePos token.Pos
		Name    string
	}

	// StructType is a struct or union reference or definition. Members is
	// nil for a reference, non-nil (possibly empty) for a definition.
	StructType struct {
		Keyword token.Pos
		Union   bool
		Name    string
		Members []*Member
		// DiagPos is after the "{" of a definition, where dt_decl_sou
		// checks the specifiers, else where the reference ends.
		DiagPos token.Pos
	}

	// EnumType is an enum reference or definition. Enumerators is nil for
	// a reference.
	EnumType struct {
		Keyword     token.Pos
		Name        string
		Enumerators []*Enumerator
		DiagPos     token.Pos
	}
)

// Member is one member declaration of a struct or union: specifiers and
// the declarators they apply to.
type Member struct {
	Spec  *DeclSpec
	Decls []*Declarator
}

// Enumerator is NAME [= Value] in an enum definition.
type Enumerator struct {
	Name    *Ident
	Value   Expr
	DiagPos token.Pos // where dt_decl_enumerator runs
}

func (t *BasicType) Pos() token.Pos  { return t.WordPos }
func (t *NamedType) Pos() token.Pos  { return t.NamePos }
func (t *StructType) Pos() token.Pos { return t.Keyword }
func (t *EnumType) Pos() token.Pos   { return t.Keyword }

func (*BasicType) typeSpec()  {}
func (*NamedType) typeSpec()  {}
func (*StructType) typeSpec() {}
func (*EnumType) typeSpec()   {}

// Declarator applies pointer, array and function derivations to a base
// type and names the result. Derived lists the derivations from the name
// outwards, the order in which C reads them: int *x[4] is "x is an array
// of 4 pointers to int", so Derived is [Array(4), Pointer].
type Declarator struct {
	NamePos  token.Pos
	Name     string // empty in abstract declarators
	Derived  []Derivation
	BitWidth Expr // a bit-field's width, or nil
	// DiagPos is where dtrace declares the name (dt_node_decl,
	// dt_decl_member): after the token that follows the declarator.
	DiagPos token.Pos
}

// Derivation is one step of a declarator.
type Derivation interface {
	derivation()
}

type (
	// Pointer derives a pointer, with its qualifiers.
	Pointer struct {
		Qual Qualifier
	}

	// Array derives an array. Len is its dimension (nil for []), or Keys
	// lists the key types of an associative array declaration x[int,
	// string]; Variadic is set when the key list ends in "...".
	Array struct {
		Len      Expr
		Keys     []*Param
		Variadic bool
		DiagPos  token.Pos // after the "]", where dt_decl_array runs
	}

	// Func derives a function type.
	Func struct {
		Params   []*Param
		Variadic bool
	}
)

func (*Pointer) derivation() {}
func (*Array) derivation()   {}
func (*Func) derivation()    {}

// Param is a parameter or key type: specifiers and an optional,
// possibly abstract, declarator.
type Param struct {
	Spec *DeclSpec
	Decl *Declarator
	// DiagPos is where dtrace builds the parameter's node: once yacc
	// sees the "," or ")" after it.
	DiagPos token.Pos
}

// TypeName is a type written in an expression or a definition: (T)x,
// sizeof(T), xlate<T>, translator T < U x >.
type TypeName struct {
	Spec *DeclSpec
	Decl *Declarator
}

// Pos returns the position of the type's first token.
func (t *TypeName) Pos() token.Pos { return t.Spec.SpecPos }

// ----------------------------------------------------------------------------
// Top-level items

// ProbeDesc is a probe description: provider:module:function:name with
// fields possibly empty or glob patterns. ID is set instead for a
// description given as a probe ID.
type ProbeDesc struct {
	DescPos  token.Pos
	Provider string
	Module   string
	Function string
	Name     string
	ID       uint32
	// Comment is printed after the description by -d: the rule that
	// placed a site of a rewritten inline probe.
	Comment string
}

// Pos returns the position of the description.
func (d *ProbeDesc) Pos() token.Pos { return d.DescPos }

// String returns the description in provider:module:function:name form,
// or ":::" for one given by ID, as dt_printd prints it.
func (d *ProbeDesc) String() string {
	return d.Provider + ":" + d.Module + ":" + d.Function + ":" + d.Name
}

type (
	// Clause is a probe clause: descriptions, an optional predicate and
	// the action statements.
	Clause struct {
		Probes []*ProbeDesc
		Pred   Expr // nil when there is none
		Body   []Stmt
		// DiagPos is after the closing "}", where dtrace checks the
		// clause.
		DiagPos token.Pos
	}

	// Declaration declares variables, types or typedef names.
	Declaration struct {
		Spec    *DeclSpec
		Decls   []*Declarator
		DiagPos token.Pos // after the ";"
	}

	// InlineDecl is inline T name = Value;.
	InlineDecl struct {
		Inline  token.Pos
		Spec    *DeclSpec
		Decl    *Declarator
		Value   Expr
		DiagPos token.Pos // after the ";"
	}

	// Translator is translator To < From Arg > { members };.
	Translator struct {
		Xlator  token.Pos
		To      *TypeName
		From    *TypeName
		Arg     *Ident
		Members []*XlateMember
		DiagPos token.Pos // after the ";" that ends it
	}

	// ProviderDecl is a provider definition for USDT: provider name {
	// probe p(args) [: (xargs)]; ... };.
	ProviderDecl struct {
		Provider token.Pos
		Name     *Ident
		Probes   []*ProviderProbe
	}
)

// XlateMember is one member = expression; of a translator.
type XlateMember struct {
	Name  *Ident
	Value Expr
}

// ProviderProbe is one probe declaration of a provider definition.
// XParams is nil when the probe has no translated argument list.
type ProviderProbe struct {
	Name    *Ident
	Params  []*Param
	XParams []*Param
}

func (d *Clause) Pos() token.Pos       { return d.Probes[0].DescPos }
func (d *Declaration) Pos() token.Pos  { return d.Spec.SpecPos }
func (d *InlineDecl) Pos() token.Pos   { return d.Inline }
func (d *Translator) Pos() token.Pos   { return d.Xlator }
func (d *ProviderDecl) Pos() token.Pos { return d.Provider }

func (*Clause) declNode()       {}
func (*Declaration) declNode()  {}
func (*InlineDecl) declNode()   {}
func (*Translator) declNode()   {}
func (*ProviderDecl) declNode() {}

// Pragma is a control line the lexer executed: #pragma D option, binding,
// depends_on, attributes, error or ident, and #line. Words holds the
// words after "#pragma D" (or after "#" for other control lines).
type Pragma struct {
	Hash  token.Pos
	Words []string
}

// Program is a parsed D program: its top-level items in source order and
// the control lines met while lexing it.
type Program struct {
	File    string // the name the program was parsed under
	Decls   []Decl
	Pragmas []*Pragma
	End     token.Pos // the end of the source text
}
