package check

import (
	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// IdentKind is what an identifier names, as dtrace's DT_IDENT_* kinds.
type IdentKind uint8

// The identifier kinds.
const (
	Array         IdentKind = iota // an associative array, or args[], regs[]
	Scalar                         // a scalar variable
	Ptr                            // self or this
	Func                           // a subroutine
	Agg                            // an aggregation
	AggFunc                        // an aggregating function
	ActFunc                        // an action
	XlateSOU                       // the result of xlate to a struct
	XlatePtr                       // the result of xlate to a pointer to a struct
	Symbol                         // a kernel or user symbol
	Enumerator                     // an enumerator of an enum
	PragmaAttr                     // a name given by #pragma D attributes
	PragmaBinding                  // a name given by #pragma D binding
	ProbeDef                       // a probe of a provider definition
)

// String returns the kind's name as dt_idkind_name writes it in messages.
func (k IdentKind) String() string {
	switch k {
	case Array:
		return "associative array"
	case Scalar:
		return "scalar"
	case Ptr:
		return "pointer"
	case Func:
		return "function"
	case Agg:
		return "aggregation"
	case AggFunc:
		return "aggregating function"
	case ActFunc:
		return "tracing function"
	case XlateSOU:
		return "translated data"
	case XlatePtr:
		return "pointer to translated data"
	case Symbol:
		return "external symbol reference"
	case Enumerator:
		return "enumerator"
	case PragmaAttr:
		return "#pragma attributes"
	case PragmaBinding:
		return "#pragma binding"
	case ProbeDef:
		return "probe definition"
	}
	return "<?>"
}

// IdentFlags are the DT_IDFLG_* properties of an identifier.
type IdentFlags uint16

// The identifier flags.
const (
	FlagTLS      IdentFlags = 1 << iota // thread-local (self->)
	FlagLocal                           // clause-local (this->)
	FlagWrite                           // the program may assign it
	FlagInline                          // an inline definition
	FlagRef                             // the program reads it
	FlagMod                             // the program assigns it
	FlagUser                            // it refers to user memory
	FlagDecl                            // declared, not just assigned
	FlagDestruct                        // a destructive action
)

// Space is the namespace an identifier lives in.
type Space uint8

// The namespaces, with the names dtrace gives them in messages.
const (
	Global Space = iota
	ThreadLocal
	ClauseLocal
	Aggregations
)

func (s Space) String() string {
	return [...]string{"global", "thread-local", "clause-local", "aggregation"}[s]
}

// Ident is a resolved identifier: a variable, builtin, function,
// aggregation, inline, enumerator or symbol.
type Ident struct {
	Name  string
	Kind  IdentKind
	Space Space
	Flags IdentFlags
	// ID is the DIF variable id (DIF_VAR_*), subroutine (DIF_SUBR_*),
	// action (DT_ACT_*) or aggregating function (DTRACEAGG_*).
	ID uint32
	// Type is the variable's type; nil while a variable has been
	// created but not yet assigned or declared.
	Type types.Type
	// Keys is an associative array's or aggregation's key signature;
	// nil until its first use fixes it.
	Keys []types.Type
	// Proto is a function's prototype.
	Proto *Proto
	// AggFunc is the aggregating function an aggregation was first
	// assigned, and AggLine the line where dtrace created the
	// aggregation, which its redefinition error names.
	AggFunc *Ident
	AggLine int
	// aggParams are the parameters of an aggregation's lquantize or
	// llquantize, which every use must repeat.
	aggParams []int64
	// InlineParams are the parameters of an array inline, in order;
	// its definition names them.
	InlineParams []*Ident
	// Inline is an inline's definition.
	Inline *ast.InlineDecl
	// Value is an enumerator's or a constant inline's value.
	Value int64
	// Builtin is set for the identifiers D defines (dtrace's di_gen 0).
	Builtin bool
	// cook selects the special rules some builtins need (args[],
	// regs[], printf …).
	cook cookKind
	// proto is a builtin's type or prototype as D's table writes it,
	// kernel types by their @ names (kernelNames), resolved on first use.
	proto string
	// xlator is the translator of an XlateSOU or XlatePtr identifier.
	xlator *Translator
	// Input is the expression translated: xlate's operand, or args[N]
	// for a provider's translated argument.
	Input ast.Expr
	// Sym is a Symbol's kernel symbol.
	Sym *KernelSymbol
}

// Translator returns the translator of translated data, or nil.
func (id *Ident) Translator() *Translator { return id.xlator }

// unref reports whether the identifier has no type yet (dt_ident_unref).
// D's builtins never do: args[] and its kin, which have no type of their
// own, are typed where they are used, and as in dtrace (di_gen 0) a use
// such as *args[0] must not give them one.
func (id *Ident) unref() bool {
	return !id.Builtin && id.Type == nil && id.Kind != Func && id.Kind != ActFunc && id.Kind != AggFunc
}

// cookKind selects how references to a builtin are checked.
type cookKind uint8

const (
	cookPlain cookKind = iota // by type, or by prototype for functions
	cookArgs                  // args[]: typed by the probe's arguments
	cookRegs                  // regs[] and uregs[]
)

// scope is one namespace: a table of identifiers by name.
type scope struct {
	space  Space
	idents map[string]*Ident
	nextID uint32
}

func newScope(space Space, base uint32) *scope {
	return &scope{space: space, idents: map[string]*Ident{}, nextID: base}
}

func (s *scope) lookup(name string) *Ident { return s.idents[name] }

// create makes a new variable of the given kind, with the next id.
func (s *scope) create(name string, kind IdentKind, flags IdentFlags) *Ident {
	id := &Ident{Name: name, Kind: kind, Space: s.space, Flags: flags, ID: s.nextID}
	s.nextID++
	s.idents[name] = id
	return id
}

func (s *scope) insert(id *Ident) {
	id.Space = s.space
	s.idents[id.Name] = id
}
