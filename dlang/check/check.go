package check

import (
	"errors"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/dlang/printf"
)

// Config holds what checking needs from outside the program.
type Config struct {
	// StringSize is the size of D's string type (-x strsize); 0 means
	// dtrace's default, 256.
	StringSize int64
	// Modules are the kernel's type containers (BTF, DWARF), searched
	// after D's own; nil means D's and C's built-in types only.
	Modules []types.Module
	// LoadModule opens the types of a kernel module that Modules lacks,
	// when a type name is scoped by it; nil means none can be.
	LoadModule func(name string) (types.Module, error)
	// Probes matches probe descriptions and gives the argument types
	// of probes, for args[]; nil accepts every description, with no
	// argument types.
	Probes Probes
	// ZeroMatch accepts descriptions that match no probe (-Z).
	ZeroMatch bool
	// Symbols gives the types of kernel symbols (`sym); nil means no
	// symbol can be resolved.
	Symbols Symbols
	// Target says that a target process is given (-p or -c).
	Target bool
	// AllowEmpty accepts a program that declares only types and
	// variables (-x empty).
	AllowEmpty bool
	// Destructive allows destructive actions (-w).
	Destructive bool
	// OS selects the builtin variables' types: "linux" or "freebsd".
	OS string
}

// Probes describes the probes a clause may enable: the runtime's side
// of probe matching, asked at compile time as dtrace does.
type Probes interface {
	// Match reports the probes desc matches.
	Match(desc *ast.ProbeDesc) (ProbeMatch, error)
}

// ProbeMatch is what the probes a description matches have in common.
type ProbeMatch struct {
	Count int
	// Typed is set when the probes have the same native argument
	// types, Args; args[] may be used only then.
	Typed bool
	Args  []types.Type
	// XArgs are the types the provider translates each argument to,
	// written as D types ("psinfo_t *"); "" where an argument is not
	// translated. args[N] is then translated by the D library's
	// translators, as dtrace's stable providers' arguments are.
	XArgs []string
	// Locals, when set, gives the traced function's variables at the
	// probes, for locals->; it is called only when a clause uses them.
	// An error says why the probes have none.
	Locals func() (*Frame, error)
}

// Symbols describes the kernel's symbols.
type Symbols interface {
	// Symbol looks up the symbol name in module mod, or in the kernel
	// and then its modules when mod is "". An unknown module or symbol
	// is an error worded as dtrace's (ksym.ErrUnknownModule,
	// ksym.ErrUnknownSymbol), which the checker reports after "failed to
	// resolve mod`name: ".
	Symbol(mod, name string) (*KernelSymbol, error)
}

// KernelSymbol is a kernel symbol, as the checker and the code generator need
// it.
type KernelSymbol struct {
	Name   string
	Module string // the module defining it: vmlinux, ext4, …
	// Addr is the symbol's address, when HasAddr is set: the code
	// generator loads it as a constant.
	Addr    uint64
	HasAddr bool
	// NoAddr says why the address is not known ("" when it is).
	NoAddr string
	// Func marks a function; dtrace types a function symbol as
	// int (*)(), whatever its prototype.
	Func bool
	// Type is a data symbol's type; nil when none is known, which
	// dtrace reports as D_SYM_NOTYPES.
	Type types.Type
	// Primary marks a symbol of the kernel itself, not of a module
	// (dtrace's DT_IDFLG_PRIM, for -x linkmode=primary).
	Primary bool
	// PerCPU marks a per-CPU variable: its address is an offset into
	// each CPU's area.
	PerCPU bool
}

// Flags are the properties of a checked expression, as dtrace's
// DT_NF_* node flags.
type Flags uint8

// The expression flags.
const (
	Signed   Flags = 1 << iota // an integer of signed type
	Ref                        // passed by reference (struct, array, string)
	LValue                     // may be assigned or have its address taken
	Writable                   // the program may write it
	BitField                   // a bit-field member
	Userland                   // refers to user memory
)

// Value is what the checker records for an expression.
type Value struct {
	Type  types.Type
	Flags Flags
	// Ident is the identifier the expression names or calls, if any.
	Ident *Ident
	// Const is set for integer constants, with their value in Int.
	Const bool
	Int   uint64
	// Local is the traced function's variable locals->name reads.
	Local *Local
}

// Info holds the results of checking a program.
//
// As in dtrace, a clause is checked once for each of its probe
// descriptions, with the argument types of the probes that one matches
// (args[]), and becomes one ECB per description. Values and Formats
// hold what checking each clause for its first description gave; where
// checking it for a later one gave other results, Variant has them.
type Info struct {
	// Values maps every checked expression to its type and flags;
	// with CheckClauses, those of the clause handed over.
	Values map[ast.Expr]*Value
	// Formats maps the calls of printf, printa, system and freopen to
	// their checked formats.
	Formats map[*ast.CallExpr]*printf.Format
	// variants holds, for each clause that has a Variant, one entry per
	// probe description (Variant).
	variants map[*ast.Clause][]*Variant
	// NextLocal is the first clause-local variable id the program
	// does not use, where the code generator's own may start; 0 while
	// CheckClauses hands out clauses, as later clauses may use more.
	NextLocal uint32
	// Declared maps the expressions of the declarations of every
	// program the checker has seen (inlines, translators' members),
	// which the code generator expands where they are used.
	Declared map[ast.Expr]*Value
}

// Checker checks the programs of one dtrace session. Declarations,
// global variables and aggregations carry over from one program to the
// next, as in dtrace, where all programs share one handle.
type Checker struct {
	cfg      Config
	universe *types.Universe
	d        *types.Scope // D's container: the script's declarations
	strType  types.Type

	globals *scope
	tls     *scope
	aggs    *scope
	locals  *scope // the clause being checked

	// xlators are the translators declared, in order, by the struct
	// or union they translate to (xlatorKey): a lookup looks only at
	// those of its output type, so that a script of thousands of
	// translators checks in linear time.
	xlators    map[string][]*Translator
	probeArgs  []types.Type // the argument types of the clause's probes; nil when untyped
	probeXArgs []string     // the types they are translated to
	// probeLocals gives the variables locals-> reads at the clause's
	// probes; nil when they have none.
	probeLocals func() (*Frame, error)
	probeDesc   string // the probe description being checked
	// values and formats are where checking records its results:
	// Info.Values and Info.Formats, or scratch's while a clause is
	// checked for a probe description after its first.
	values     map[ast.Expr]*Value
	formats    map[*ast.CallExpr]*printf.Format
	scratch    Variant
	clauseActs clauseActions
	inlineArgs map[string]*Ident // an inline's or translator's parameters
	inClause   bool
	// clausePos is where dtrace reports errors about the clause being
	// checked: after its closing brace.
	clausePos token.Pos
	prog      *ast.Program
	// matches holds what the program's probe descriptions matched: a
	// large program names the same few probes again and again.
	matches    map[matchKey]ProbeMatch
	undefined  func(name string) bool      // OnUndefined
	refused    func(string) (string, bool) // Refuse
	defining   bool                        // undefined is running
	declValues map[ast.Expr]*Value         // Info.Declared
	aligns     map[*types.Struct]int64     // ctf_type_align of structs laid out so far
	declared   map[ast.Decl]bool
	cdefs      *types.Scope // C's container: declarations of #included files
	file       string       // the program's file
	symAddrOf  bool         // the symbol checked next is the operand of &

	info  *Info
	err   *diag.Error
	label string // "predicate" or "action list", for errors without a line
}

// matchKey is a probe description: a probe's ID (dtrace -i), or its
// names.
type matchKey struct {
	id   uint32
	desc string
}

// bailout unwinds the checker at its first error: dtrace reports only
// the first error of a compilation.
type bailout struct{}

// The first id of each namespace's variables defined by the program
// (DIF_VAR_OTHER_UBASE); ids below it are builtins.
const userBase = 0x500

// NewChecker returns a checker with D's builtin types and identifiers.
func NewChecker(cfg *Config) *Checker {
	c := &Checker{cfg: *cfg}
	if c.cfg.StringSize == 0 {
		c.cfg.StringSize = 256
	}
	cdefs, ddefs := types.Builtin(c.cfg.StringSize)
	c.d, c.cdefs = ddefs, cdefs
	c.strType, _ = ddefs.LookupType("string")
	mods := []types.Module{ddefs, cdefs}
	c.universe = &types.Universe{Modules: append(mods, c.cfg.Modules...), Load: c.cfg.LoadModule}
	c.globals = newScope(Global, userBase)
	c.tls = newScope(ThreadLocal, userBase)
	c.aggs = newScope(Aggregations, 0)
	c.declareBuiltins()
	return c
}

// StringSize returns the size of D's string type.
func (c *Checker) StringSize() int64 { return c.cfg.StringSize }

// SetStringSize resizes D's string type, as dt_opt_strsize does when a
// program's pragma sets strsize: what is checked after it has strings
// of n bytes.
func (c *Checker) SetStringSize(n int64) {
	if n <= 0 {
		return
	}
	c.cfg.StringSize = n
	if st, ok := c.strType.(*types.String); ok {
		st.Bytes = n
	}
}

// Aggregation returns the aggregation the checked programs numbered
// id (Ident.ID), or nil: what a consumer names an aggregation by.
func (c *Checker) Aggregation(id uint32) *Ident {
	for _, a := range c.aggs.idents {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// IsType reports whether name, possibly scoped by module, names a type
// known to the checker; the parser asks it about names the script does
// not declare.
func (c *Checker) IsType(name string) bool {
	// As in dt_lex.l, an identifier hides a type of the same name.
	if c.lookupGlobal(name) != nil {
		return false
	}
	t, err := c.lookup(name)
	return err == nil && t != nil
}

// Check checks prog: it resolves identifiers and types every
// expression, applying dtrace's rules, and returns the results, or the
// first error as a *diag.Error.
func (c *Checker) Check(prog *ast.Program) (info *Info, err error) {
	return c.check(prog, nil)
}

// CheckClauses checks prog as Check does, but hands over each clause's
// results as soon as the clause is checked, as dtrace's
// dt_compile_one_clause cooks a clause and generates its code before
// the next: yield is called with the clause and an Info whose Values,
// Formats and Variant hold that clause's results only, which are valid
// until yield returns. Declared is the program's so far; NextLocal is
// 0 until the Info returned, which is the program's without any
// clause's values. A program of many clauses so never holds
// the results of all; as each element of prog.Decls is read once, before
// it is checked, yield may also set the clause's element to nil once it
// needs the clause no more, to free its syntax tree. An error yield
// returns stops checking and is returned; else the first error of
// checking, a *diag.Error.
func (c *Checker) CheckClauses(prog *ast.Program, yield func(cl *ast.Clause, info *Info) error) (*Info, error) {
	return c.check(prog, yield)
}

func (c *Checker) check(prog *ast.Program, yield func(*ast.Clause, *Info) error) (info *Info, err error) {
	c.begin(prog)
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			info, err = nil, c.err
		}
	}()
	isEmpty := empty(prog) // before yield may drop clauses
	for _, d := range prog.Decls {
		if c.declared[d] {
			continue
		}
		c.declare(d)
		cl, ok := d.(*ast.Clause)
		if !ok || yield == nil {
			continue
		}
		if err := yield(cl, c.info); err != nil {
			return nil, err
		}
		// The maps are kept for the next clause: they are as large as
		// the largest clause needs, and not grown again.
		clear(c.info.Values)
		clear(c.info.Formats)
		c.info.variants = nil
	}
	if !c.cfg.AllowEmpty && isEmpty {
		c.errorf(prog.End, diag.D_EMPTY, "empty D program translation unit\n")
	}
	if yield != nil {
		c.info.Values, c.info.Formats = map[ast.Expr]*Value{}, map[*ast.CallExpr]*printf.Format{}
		c.values, c.formats = c.info.Values, c.info.Formats
	}
	c.info.NextLocal = c.locals.nextID
	return c.info, nil
}

// begin starts checking prog, unless its declarations already started it.
func (c *Checker) begin(prog *ast.Program) {
	if c.prog == prog {
		return
	}
	c.prog = prog
	if c.declValues == nil {
		c.declValues = map[ast.Expr]*Value{}
	}
	c.info = &Info{Values: map[ast.Expr]*Value{}, Formats: map[*ast.CallExpr]*printf.Format{}, Declared: c.declValues}
	c.values, c.formats = c.info.Values, c.info.Formats
	c.declared = map[ast.Decl]bool{}
	c.matches = map[matchKey]ProbeMatch{}
	// this-> variables belong to the program: every clause for a probe
	// sees the values earlier clauses gave them.
	c.locals = newScope(ClauseLocal, userBase)
	c.file = prog.File
}

// Declare checks a declaration, inline, translator or provider of prog
// as the parser meets it (parser.Config.Declare), so that its errors
// come in dtrace's order; Check then skips it.
func (c *Checker) Declare(prog *ast.Program, d ast.Decl) (err error) {
	c.begin(prog)
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			err = c.err
		}
	}()
	c.declare(d)
	c.declared[d] = true
	return nil
}

func (c *Checker) declare(d ast.Decl) {
	switch d := d.(type) {
	case *ast.Declaration:
		c.declaration(d)
	case *ast.InlineDecl:
		c.inline(d)
	case *ast.Translator:
		c.translator(d)
	case *ast.ProviderDecl:
		// Provider definitions are checked when -h or -G writes them.
	case *ast.Clause:
		c.clause(d)
	}
}

// empty reports whether prog declares nothing but types and variables.
func empty(prog *ast.Program) bool {
	for _, d := range prog.Decls {
		if _, ok := d.(*ast.Declaration); !ok {
			return false
		}
	}
	return true
}

// errorf stops checking with an error at pos.
func (c *Checker) errorf(pos token.Pos, tag diag.Tag, format string, args ...any) {
	// dtrace's messages end in a newline, which dt_set_errmsg cuts.
	c.err = diag.Errorf(pos, tag, strings.TrimSuffix(format, "\n"), args...)
	if c.inClause {
		c.err.Region = c.label
	}
	panic(bailout{})
}

// clause checks a probe clause: its actions, then its predicate, as
// dt_cook_clause does. If the actions refer to a variable that only the
// predicate defines, the predicate is checked first instead.
// As dtrace's dt_compile_one_clause, the clause is checked once for
// each of its probe descriptions, which must match probes (unless -Z):
// args[] takes the types of the probes each one matches. Variables the
// checking for one description creates are there for the next, as in
// dtrace, where all share the handle's and the program's identifier
// hashes.
func (c *Checker) clause(cl *ast.Clause) {
	c.inClause = true
	c.clausePos = ast.DiagPos(cl)
	defer func() {
		c.inClause = false
		c.values, c.formats = c.info.Values, c.info.Formats
	}()
	var variants []*Variant
	for i, d := range cl.Probes {
		if i > 0 {
			// Later descriptions check into scratch maps, and keep what
			// differs from the first's results.
			if c.scratch.Values == nil {
				c.scratch = Variant{Values: map[ast.Expr]*Value{}, Formats: map[*ast.CallExpr]*printf.Format{}}
			}
			clear(c.scratch.Values)
			clear(c.scratch.Formats)
			c.values, c.formats = c.scratch.Values, c.scratch.Formats
		}
		c.clauseActs = clauseActions{}
		c.probeArgs, c.probeXArgs, c.probeLocals = nil, nil, nil
		c.probeDesc = d.String()
		c.label = "" // matching the description is no part of the clause
		if c.cfg.Probes != nil {
			key := matchKey{d.ID, c.probeDesc}
			m, ok := c.matches[key]
			if !ok {
				var err error
				m, err = c.cfg.Probes.Match(d)
				var de *diag.Error
				switch {
				case errors.As(err, &de):
					c.err = de
					panic(bailout{})
				case err != nil:
					c.errorf(d.Pos(), diag.D_PDESC_INVAL, "%s\n", err)
				}
				c.matches[key] = m
			}
			if m.Count == 0 && !c.cfg.ZeroMatch {
				c.errorf(d.Pos(), diag.D_PDESC_ZERO, "probe description %s does not match any probes\n", d)
			}
			c.probeLocals = m.Locals
			if m.Typed {
				c.probeArgs, c.probeXArgs = m.Args, m.XArgs
				if c.probeArgs == nil {
					// A probe with no typed arguments has an argc of
					// 0: args[N] is out of range (D_ARGS_IDX), as
					// dt_idcook_args says; nil is for an unstable set.
					c.probeArgs = []types.Type{}
				}
			}
		}
		c.clauseFor(cl)
		if i == 0 {
			continue
		}
		if v := c.variant(variants); v != nil {
			if variants == nil {
				variants = make([]*Variant, len(cl.Probes))
			}
			variants[i] = v
		}
	}
	if variants != nil {
		if c.info.variants == nil {
			c.info.variants = map[*ast.Clause][]*Variant{}
		}
		c.info.variants[cl] = variants
	}
}

// clauseFor checks the clause for one probe description.
func (c *Checker) clauseFor(cl *ast.Clause) {
	if cl.Pred != nil {
		if err := c.tryActions(cl); err != nil {
			if err.Tag != diag.D_IDENT_UNDEF && err.Tag != diag.D_VAR_UNDEF {
				c.err = err
				panic(bailout{})
			}
			c.predicate(cl.Pred)
			c.actions(cl.Body)
		} else {
			c.predicate(cl.Pred)
		}
	} else {
		c.actions(cl.Body)
	}
	c.compile(cl.Body)
}

// tryActions checks the actions and returns the error instead of
// stopping, so that the clause can be checked again in the other order.
// As in dtrace, variables the failed attempt created stay.
func (c *Checker) tryActions(cl *ast.Clause) (err *diag.Error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			err = c.err
		}
	}()
	c.actions(cl.Body)
	return nil
}

func (c *Checker) predicate(e ast.Expr) {
	c.label = "predicate"
	v := c.expr(e, FlagRef)
	if !types.IsScalar(v.Type) {
		c.errorf(c.clausePos, diag.D_PRED_SCALAR, "predicate result must be of scalar type\n")
	}
}

// actions checks the types of a clause's statements (dt_cook_clause).
func (c *Checker) actions(list []ast.Stmt) {
	c.label = "action list"
	for _, s := range list {
		switch s := s.(type) {
		case *ast.ExprStmt:
			c.expr(s.X, FlagRef)
		case *ast.IfStmt:
			// The sugar pass turns if statements into clauses before
			// checking; one left here is checked as the clauses it
			// becomes would be.
			c.predicate(s.Cond)
			c.actions(s.Then.List)
			if s.Else != nil {
				c.actions(s.Else.List)
			}
		}
	}
}

// compile applies the checks dtrace makes as it compiles each
// statement into actions (dt_compile_one_clause), in order.
func (c *Checker) compile(list []ast.Stmt) {
	c.label = "action list"
	for _, s := range list {
		switch s := s.(type) {
		case *ast.ExprStmt:
			c.statement(s.X)
		case *ast.IfStmt:
			c.compile(s.Then.List)
			if s.Else != nil {
				c.compile(s.Else.List)
			}
		}
	}
}
