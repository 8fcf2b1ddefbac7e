package dtrace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/printer"
	"github.com/kdtrace/kdtrace/dlang/token"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dlang/cpp"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
	"github.com/kdtrace/kdtrace/internal/dlang/header"
	"github.com/kdtrace/kdtrace/internal/option"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// Spec says what a program's text is, as dtrace's options say it.
type Spec byte

// The kinds of program text (dtrace_probespec_t, and -s).
const (
	Script   Spec = 's' // a D script (-s)
	Name     Spec = 'n' // a probe description by name, then an optional predicate and actions (-n)
	ID       Spec = 'i' // a probe ID, then … (-i)
	Provider Spec = 'P' // a provider, then … (-P)
	Module   Spec = 'm' // [provider:]module, then … (-m)
	Function Spec = 'f' // [[provider:]module:]function, then … (-f)
)

// Flags select what compiling does beyond checking, as libdtrace's
// DTRACE_C_* flags.
type Flags uint

const (
	// Sugar writes each program to Config.Stdout after the syntactic
	// rewrites, before its types are checked, in dtrace -d's format.
	Sugar Flags = 1 << iota
	// DIFV lists the DIF of each clause on Config.Stderr, as dtrace -S.
	DIFV
	// NoCode checks the program and generates no DIF (dtrace -l).
	NoCode
	// Header checks the providers the program defines as dtrace -h
	// does before it writes their header; it implies NoCode.
	Header
	// Link keeps the providers the program defines, checked as Header
	// checks them, for Handle.Link (dtrace -G).
	Link

	// noArgs compiles without the macro arguments, as libdtrace
	// compiles its own clauses.
	noArgs Flags = 1 << 30
)

// A Program is a compiled D program, as dtrace_prog_t.
type Program struct {
	Spec Spec
	// Source is the script's path for a Script, else the text given.
	Source string
	// tree is the program after the syntactic rewrites, kept for what
	// needs it after compiling (-l, -h, Print): nil unless compiled
	// with NoCode, Header or Sugar.
	tree *ast.Program
	// info is what checking learned of its types and identifiers; as
	// clauses are checked one at a time and their code generated, it
	// keeps no clause's Values unless compiled with NoCode or Header.
	info *check.Info
	// object is the program's ECBs, with their DIF; nil with NoCode.
	// DOF writes it.
	object *dof.Program

	providers []ast.Decl // its provider definitions, with Link

	// src and flags are what it was compiled from, kept with
	// Config.Save for Handle.Save to compile it again.
	src   []byte
	flags Flags
}

// Print writes the program after the syntactic rewrites, in dtrace
// -d's format; the program must have kept its AST (NoCode, Header,
// Sugar).
func (p *Program) Print(w io.Writer) error { return printer.Fprint(w, p.tree) }

// ListDIF writes the DIF of each of the program's clauses, as dtrace -S
// lists it; nothing for a program compiled with NoCode.
func (p *Program) ListDIF(w io.Writer) error {
	if p.object == nil {
		return nil
	}
	return emit.List(w, p.object)
}

// Compile compiles a program given as text of kind spec, as
// dtrace_program_strcompile, or as dtrace_program_fcompile for a
// Script, whose text is the path of the file to read ("-" for the
// standard input). A program that fails to compile is a *CompileError;
// other errors (the handle's libraries, output) are returned as they
// are.
func (h *Handle) Compile(spec Spec, text string, flags Flags) (*Program, error) {
	if spec != Script {
		return h.compile(spec, text, nil, flags)
	}
	// As dtrace, the script is read before the libraries load, and
	// they load while its probes are looked up (warm).
	var src []byte
	var err error
	if text == "-" {
		src, err = io.ReadAll(os.Stdin)
	} else {
		src, err = os.ReadFile(text)
	}
	if err != nil {
		return nil, h.failure(spec, text, &openError{err})
	}
	return h.compile(spec, text, src, flags)
}

// CompileScript compiles src as the D script called name, as if read
// from that file.
func (h *Handle) CompileScript(name string, src []byte, flags Flags) (*Program, error) {
	return h.compile(Script, name, src, flags)
}

func (h *Handle) compile(spec Spec, text string, src []byte, flags Flags) (*Program, error) {
	args := h.cfg.Args
	if flags&noArgs != 0 {
		args = nil
	}
	macros := macroVariables(cmp.Or(h.target, h.savedTarget))
	if err := h.setupWarm(func() { h.warm(spec, text, src, args, macros) }); err != nil {
		return nil, err
	}
	prog, err := h.parse(spec, text, src, args, macros)
	var provs []ast.Decl
	if err == nil && flags&Link != 0 {
		for _, d := range prog.Decls {
			if pd, ok := d.(*ast.ProviderDecl); ok {
				provs = append(provs, pd)
			}
		}
		_, err = header.Providers(&ast.Program{Decls: provs})
	}
	if err == nil && flags&Header != 0 {
		// Provider definitions are checked as each program compiles.
		err = header.Write(io.Discard, prog, "", h.headerStyle())
	}
	if err != nil {
		return nil, h.failure(spec, text, err)
	}
	p := &Program{Spec: spec, Source: text, tree: prog, providers: provs}
	if h.cfg.Save {
		p.src, p.flags = src, flags
	}
	if flags&Sugar != 0 {
		// As dtrace, -d prints the program once the syntactic
		// rewrites are done, before types are checked.
		if err := p.Print(h.cfg.Stdout); err != nil {
			return nil, fmt.Errorf("failed to write output: %v", err)
		}
	}
	if flags&(NoCode|Header) != 0 {
		if p.info, err = h.checker.Check(prog); err != nil {
			return nil, h.failure(spec, text, err)
		}
		return p, nil
	}
	// As dtrace, each clause is checked, then its DIF generated, before
	// the next: what checking a clause gave is dropped once its code is
	// made, and its syntax tree once only -l, -h and Print would need
	// it, which keeps a program of many clauses small.
	keepAST := flags&Sugar != 0
	if !keepAST {
		p.tree = nil
	}
	em := emit.NewEmitter(prog, &emit.Config{StringSize: h.checker.StringSize(), Types: &h.printed})
	i := 0 // where the clause is in prog.Decls
	if p.info, err = h.checker.CheckClauses(prog, func(cl *ast.Clause, info *check.Info) error {
		if err := em.Clause(cl, info); err != nil {
			return err
		}
		if keepAST {
			return nil
		}
		for prog.Decls[i] != cl {
			i++
		}
		prog.Decls[i] = nil
		return nil
	}); err != nil {
		return nil, h.failure(spec, text, err)
	}
	if p.object, err = em.Finish(p.info); err != nil {
		return nil, h.failure(spec, text, err)
	}
	if flags&DIFV != 0 {
		// As dtrace -S, the intermediate code goes to stderr.
		if err := p.ListDIF(h.cfg.Stderr); err != nil {
			return nil, fmt.Errorf("failed to write output: %v", err)
		}
	}
	return p, nil
}

// parse turns a program's text into a parsed and rewritten program;
// its declarations are checked as they are parsed.
func (h *Handle) parse(spec Spec, text string, src []byte, args []string, macros map[string]string) (*ast.Program, error) {
	name, src, err := programText(spec, text, src)
	if err != nil {
		return nil, err
	}
	if h.cpp && spec == Script { // as dtrace, -C applies to script files
		res, err := cpp.Preprocess(context.Background(), name, src, h.cppOpts)
		if err != nil {
			return nil, err
		}
		if h.cppOpts.Headers {
			h.cfg.Stderr.Write(res.Headers)
		}
		src = res.Text
	}
	pcfg := &parser.Config{
		Args:        append([]string{name}, args...),
		Macros:      macros,
		DefaultArgs: h.opts.IsSet("defaultargs"),
		ArgRefs:     h.opts.IsSet("argref"),
		AllowEmpty:  true, // the checker decides, after the declarations
		CommandLine: spec != Script,
		SetOption: func(name, value string) error {
			if err := h.opts.SetFromScript(name, value); err != nil {
				return err
			}
			switch name {
			case "version":
				return h.checker.SetVersion(value)
			case "strsize":
				n, _ := option.ParseSize(value)
				h.checker.SetStringSize(int64(n))
			}
			return nil
		},
		Types:     h.checker,
		Declare:   h.checker.Declare,
		DefineTag: h.checker.DefineTag,
		DependsOn: h.deps,
	}
	prog, err := parser.ParseFile(name, src, pcfg)
	if err != nil {
		return nil, err
	}
	if err := h.expander.Expand(prog); err != nil {
		return nil, err
	}
	return prog, nil
}

// programText returns the name and the text of a program: a script's
// own (src), or what the other kinds of spec make of text.
func programText(spec Spec, text string, src []byte) (string, []byte, error) {
	switch spec {
	case Script:
		return text, src, nil
	case Name, ID:
		// -i gives a probe ID where -n gives names.
		return "kdtrace", []byte(text), nil
	}
	t, err := specProgram(spec, text)
	return "kdtrace", []byte(t), err
}

// warm starts looking up the probes that a program's descriptions
// match, on another goroutine, while setup compiles the libraries
// (Catalog.Warm): a description such as BEGIN is looked up among every
// trace event of the kernel, which costs about as much as the
// libraries. The goroutine parses the program for its descriptions
// alone, without the types of the libraries and the kernel: a parse
// those would be needed for stops early, and warms only what came
// before. The compile that follows parses it again, and reports its
// errors.
func (h *Handle) warm(spec Spec, text string, src []byte, args []string, macros map[string]string) {
	if h.catalog == nil || h.cpp && spec == Script {
		// What cpp makes of a script is known only once it has run.
		return
	}
	name, src, err := programText(spec, text, src)
	if err != nil || len(src) > maxWarmed {
		return
	}
	cat := h.catalog
	cfg := &parser.Config{
		Args:        append([]string{name}, args...),
		Macros:      macros, // read alike by both parses
		DefaultArgs: h.opts.IsSet("defaultargs"),
		ArgRefs:     true,
		AllowEmpty:  true,
		CommandLine: spec != Script,
		Probe: func(d *ast.ProbeDesc) {
			if d.ID == 0 {
				cat.Warm(probe.Desc{Provider: d.Provider, Module: d.Module, Function: d.Function, Name: d.Name})
			}
		},
	}
	go parser.ParseFile(name, src, cfg)
}

// maxWarmed is the longest program warm parses twice: a longer one's
// own compile takes far longer than the lookups warm saves.
const maxWarmed = 64 << 10

// specProgram returns the program that -P, -m or -f gives: a probe
// description and, optionally, a predicate and actions. As
// dtrace_xstr2desc, the description's fields are read from the right,
// the last one being the provider (-P), the module (-m) or the function
// (-f).
func specProgram(spec Spec, arg string) (string, error) {
	desc, rest := arg, ""
	if i := strings.IndexAny(arg, "/{"); i >= 0 {
		desc, rest = arg[:i], arg[i:]
	}
	desc = strings.TrimSpace(desc)
	after := map[Spec]int{Provider: 3, Module: 2, Function: 1}[spec]
	if strings.Count(desc, ":") > 3-after {
		return "", diag.Errorf(token.Pos{}, diag.D_PDESC_INVAL, "invalid probe description \"%s\": Overspecified probe description", desc)
	}
	return desc + strings.Repeat(":", after) + " " + rest, nil
}

// A CompileError is a program that failed to compile. Its text is
// dtrace's: "failed to compile script FILE: …" for a script, "invalid
// probe specifier TEXT: …" for a program given as a string, "failed to
// open FILE: …" for a script that cannot be read.
type CompileError struct {
	Spec   Spec
	Source string
	Err    error // a *diag.Error for an error in the program
	// Notes name the libraries left out of this compile, as this
	// kernel's types do not fit them, when the error is a name or type
	// that one of them may have defined.
	Notes []string
	msg   string
}

func (e *CompileError) Error() string { return e.msg }
func (e *CompileError) Unwrap() error { return e.Err }

// openError is a script that cannot be read.
type openError struct{ err error }

func (e *openError) Error() string { return e.err.Error() }
func (e *openError) Unwrap() error { return e.err }

// failure describes a compile failure as dtrace does.
func (h *Handle) failure(spec Spec, text string, err error) *CompileError {
	ce := &CompileError{Spec: spec, Source: text, Err: err}
	var oe *openError
	if errors.As(err, &oe) {
		ce.Err = oe.err
		var pe *os.PathError
		if errors.As(oe.err, &pe) {
			ce.msg = fmt.Sprintf("failed to open %s: %s", text, strerror(pe.Err))
		} else {
			ce.msg = fmt.Sprintf("failed to open %s: %v", text, oe.err)
		}
		return ce
	}
	msg := err.Error()
	var de *diag.Error
	if errors.As(err, &de) {
		e := *de
		main := text
		if spec != Script {
			// dtrace gives no line for programs given as strings.
			main, e.Pos.Line = "kdtrace", 0
		}
		msg = e.Format(main, h.opts.IsSet("errtags"))
		// A name or type that is not defined may be one that a
		// library left out for this kernel would define.
		if de.Tag == diag.D_IDENT_UNDEF || de.Tag == diag.D_UNKNOWN {
			for _, le := range h.brokenLibs {
				ce.Notes = append(ce.Notes, fmt.Sprintf("library %s was left out, as this kernel's types do not fit it: %v", le.File, le))
			}
		}
	}
	if n := strconv.Itoa(h.savedTarget); h.savedTarget != 0 && h.target == 0 && strings.Contains(msg, n) {
		// Where compiling to save without a process, $target's
		// placeholder is named as what it stands for: the process
		// of the run, which a probe description can name only when
		// compiled against one.
		msg = strings.ReplaceAll(msg, n, "$target") + " (a saved program takes $target in probe descriptions only with -c, the command it is compiled against)"
	}
	if spec == Script {
		ce.msg = fmt.Sprintf("failed to compile script %s: %s", text, msg)
	} else {
		ce.msg = fmt.Sprintf("invalid probe specifier %s: %s", text, msg)
	}
	return ce
}

// macroVariables returns the values of $pid, $ppid, $uid and the other
// macro variables for this process.
func macroVariables(target int) map[string]string {
	itoa := strconv.Itoa
	m := map[string]string{
		"pid": itoa(os.Getpid()), "ppid": itoa(os.Getppid()),
		"uid": itoa(os.Getuid()), "gid": itoa(os.Getgid()),
		"euid": itoa(os.Geteuid()), "egid": itoa(os.Getegid()),
		"target": itoa(target), "projid": "0", "taskid": "0",
	}
	m["pgid"], m["sid"] = processGroup()
	return m
}

// strerror capitalises an error's text as C's strerror does.
func strerror(err error) string {
	s := err.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
