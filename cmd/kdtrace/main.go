// Command kdtrace is a DTrace-compatible tracer centred on the kinst
// provider. It takes dtrace(1)'s options: D programs come from -s files
// (including "#!/usr/sbin/dtrace -s" scripts) and -n probe specifiers,
// are preprocessed with -C, parsed, and rewritten by the sugar pass;
// -d prints the rewritten program as dtrace -d does and -e stops after
// compiling.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/cpp"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/emit"
	"github.com/kdtrace/kdtrace/dlang/header"
	"github.com/kdtrace/kdtrace/dlang/library"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dlang/printer"
	"github.com/kdtrace/kdtrace/dlang/sugar"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/ksym"
	"github.com/kdtrace/kdtrace/option"
	"github.com/kdtrace/kdtrace/probe"
)

// version is what -V reports: the D language version kdtrace implements.
const version = "Sun D 1.13"

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// command is one program to compile: a script file (-s), a probe
// specifier with its predicate and actions (-n), or a probe description
// given by its ID (-i), provider (-P), module (-m) or function (-f).
type command struct {
	kind byte // 's', 'n', 'i', 'P', 'm' or 'f'
	arg  string
}

// config is everything the options say.
type config struct {
	cmds    []command
	args    []string // macro arguments $1…
	cpp     bool
	cppOpts cpp.Options
	dump    bool // -d
	list    bool // -l
	verbose bool // -v
	listDIF bool // -S
	dofOut  bool // -G
	header  bool // -h
	exec    bool // false with -e
	zdefs   bool // -Z
	output  string
	opts    option.Set
	kinst   kinstConfig
	btf     string // --btf: the kernel types' file, or "none"
	libDirs []string
	// brokenLibs are kdtrace's own libraries that did not compile
	// against this kernel's types.
	brokenLibs []*library.Error
	modules    []types.Module // the kernel's types
	ksyms      *ksym.Resolver // the kernel's symbols, read on first use
	catalog    *probe.Catalog // the probes descriptions match, if any
	target     int            // the process of -p, $target; 0 for none
	progName   string
}

// run is the command with its environment made explicit; it returns the
// exit status.
func run(argv []string, stdout, stderr io.Writer) int {
	name := "kdtrace"
	if len(argv) > 0 {
		name = filepath.Base(argv[0])
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "%s: %s\n", name, fmt.Sprintf(format, args...))
		return 1
	}
	if len(argv) < 2 {
		usage(stderr, name)
		return 2
	}
	opts, operands, err := getopt(argv[1:])
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		usage(stderr, name)
		return 2
	}
	cfg := &config{exec: true, args: operands, progName: name}
	if st, ok := cfg.apply(opts, stdout, stderr); !ok {
		return st
	}
	if len(cfg.cmds) == 0 && !cfg.list {
		return fail("no probes specified")
	}
	if cfg.output != "" && !cfg.header {
		// As dtrace, the output file is opened (for appending) before
		// anything is compiled, so that a bad path fails at once.
		f, err := os.OpenFile(cfg.output, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fail("failed to open output file '%s': %v", cfg.output, errors.Unwrap(err))
		}
		defer f.Close()
	}
	kinst := &lazyKinst{cfg: &cfg.kinst, zeroMatch: cfg.zdefs, compat: cfg.opts.IsSet("kinstcompat"), warn: stderr, progName: name}
	defer kinst.close()
	exp := &sugar.Expander{Kinst: kinst}
	checker, err := cfg.newChecker(stderr)
	if err != nil {
		return fail("%v", err)
	}
	deps, err := cfg.loadLibraries(checker, stderr)
	if err != nil {
		return fail("%v", err)
	}
	if cfg.target != 0 && cfg.catalog != nil {
		// The process of -p brings its USDT providers.
		if err := cfg.catalog.Grab(cfg.target); err != nil {
			return fail("%v", err)
		}
	}
	var progs []*ast.Program
	var object dof.Program // the ECBs of every program
	destructive := false
	for _, c := range cfg.cmds {
		prog, err := cfg.compile(c, exp, checker, deps, stderr)
		if err == nil && cfg.header {
			// Provider definitions are checked as each program compiles.
			err = header.Write(io.Discard, prog, "", cfg.headerStyle())
		}
		if err != nil {
			return cfg.compileFailure(c, err, fail, stderr)
		}
		if cfg.dump {
			// As dtrace, -d prints the program once the syntactic
			// rewrites are done, before types are checked.
			if err := printer.Fprint(stdout, prog); err != nil {
				return fail("failed to write output: %v", err)
			}
		}
		info, err := checker.Check(prog)
		if err != nil {
			return cfg.compileFailure(c, err, fail, stderr)
		}
		destructive = destructive || info.Destructive
		if !cfg.header && !cfg.list {
			// Compiling ends with the DIF of every clause.
			p, err := emit.Program(prog, info, &emit.Config{StringSize: checker.StringSize()})
			if err != nil {
				return cfg.compileFailure(c, err, fail, stderr)
			}
			if cfg.listDIF {
				// As dtrace -S, the intermediate code goes to stderr.
				if err := emit.List(stderr, p); err != nil {
					return fail("failed to write output: %v", err)
				}
			}
			object.ECBs = append(object.ECBs, p.ECBs...)
		}
		progs = append(progs, prog)
	}
	if cfg.list {
		return cfg.listProbes(progs, stdout, stderr)
	}
	if cfg.header {
		return cfg.writeHeader(progs, fail)
	}
	if cfg.dofOut {
		return cfg.writeDOF(object, fail)
	}
	if !cfg.exec {
		return 0
	}
	if destructive && !cfg.opts.IsSet("destructive") {
		// What the kernel answers dtrace when it enables them.
		return fail("could not enable tracing: Destructive actions not allowed")
	}
	return fail("failed to enable probes: the tracing runtime is not available in this build (compile only with -e)")
}

// headerStyle returns the form of -h's probe macros: -x headerstyle, or
// by default <sys/sdt.h>'s notes on Linux, where nothing links dtrace's
// stubs into probe points, and dtrace's stubs elsewhere.
func (c *config) headerStyle() header.Style {
	v, ok := c.opts.Value("headerstyle")
	switch {
	case v == "stubs":
		return header.Stubs
	case ok || runtime.GOOS == "linux":
		return header.Notes
	}
	return header.Stubs
}

// writeHeader writes the C header for the providers of all programs, as
// dtrace -h does: to the -o file, or to the first script's name with .h
// for .d.
func (c *config) writeHeader(progs []*ast.Program, fail func(string, ...any) int) int {
	name := c.output
	if name == "" {
		for _, cmd := range c.cmds {
			if cmd.kind == 's' {
				n, err := header.OutputName(cmd.arg)
				if err != nil {
					return fail("%v", err)
				}
				name = n
				break
			}
		}
	}
	if name == "" {
		return fail("%v", header.ErrNoOutputName)
	}
	all := &ast.Program{}
	for _, p := range progs {
		all.Decls = append(all.Decls, p.Decls...)
	}
	var out bytes.Buffer
	if err := header.Write(&out, all, name, c.headerStyle()); err != nil {
		return fail("failed to create header file %s: %v", name, err)
	}
	if err := os.WriteFile(name, out.Bytes(), 0o666); err != nil {
		return fail("failed to open header file '%s': %v", name, err)
	}
	return 0
}

// apply records the options in order, as dtrace's option passes do; it
// returns false with an exit status when the run must stop.
func (c *config) apply(opts []opt, stdout, stderr io.Writer) (int, bool) {
	modes := ""
	for _, o := range opts {
		switch o.name {
		case "A", "G", "h", "l", "V":
			modes += o.name
		}
	}
	if len(modes) > 1 {
		fmt.Fprintf(stderr, "%s: only one of the [-AGhlV] options can be specified at a time\n", c.progName)
		return 2, false
	}
	for _, o := range opts {
		var err error
		switch o.name {
		case "V":
			fmt.Fprintf(stdout, "%s: %s\n", c.progName, version)
			return 0, false
		case "h":
			c.header, c.exec = true, false
		case "s", "n", "P", "m", "f", "i":
			c.cmds = append(c.cmds, command{o.name[0], o.arg})
		case "p":
			// Processes are grabbed before anything is compiled, and
			// the last one is $target.
			pid, perr := strconv.ParseInt(o.arg, 10, 0)
			if perr != nil || o.arg == "" {
				fmt.Fprintf(stderr, "%s: invalid pid: %s\n", c.progName, o.arg)
				return 1, false
			}
			if err := grabProcess(int(pid)); err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", c.progName, err)
				return 1, false
			}
			c.target = int(pid)
		case "l":
			// As dtrace, -l lists what descriptions match, and a
			// description that matches nothing is no compile error.
			c.list, c.exec = true, false
			err = c.setX("zdefs", "")
		case "v":
			c.verbose = true
		case "C", "D", "U", "I", "H", "Z":
			// These set options, as in dtrace: -D is -x define and so on.
			if err := c.setX(flagOptions[o.name], o.arg); err != nil {
				fmt.Fprintf(stderr, "%s: failed to set -%s %s: %v\n", c.progName, o.name, o.arg, err)
				return 1, false
			}
		case "d":
			c.dump = true
		case "S":
			c.listDIF = true
		case "G":
			c.dofOut, c.exec = true, false
		case "e":
			c.exec = false
		case "o":
			c.output = o.arg
		case "q":
			err = c.opts.Set("quiet", "")
		case "w":
			err = c.opts.Set("destructive", "")
		case "F":
			err = c.opts.Set("flowindent", "")
		case "b":
			if err = c.opts.Set("bufsize", o.arg); err != nil {
				fmt.Fprintf(stderr, "%s: failed to set -b %s: %v\n", c.progName, o.arg, err)
				return 1, false
			}
		case "X":
			if err = c.opts.Set("stdc", o.arg); err != nil {
				fmt.Fprintf(stderr, "%s: failed to set -X %s: %v\n", c.progName, o.arg, err)
				return 1, false
			}
		case "x":
			name, value, _ := strings.Cut(o.arg, "=")
			if err := c.setX(name, value); err != nil {
				fmt.Fprintf(stderr, "%s: failed to set -x %s: %v\n", c.progName, name, err)
				return 1, false
			}
		case "kernel":
			c.kinst.kernel = o.arg
		case "module":
			c.kinst.modules = append(c.kinst.modules, o.arg)
		case "debug-root":
			c.kinst.debugRoot = o.arg
		case "btf":
			c.btf = o.arg
		case "L":
			c.libDirs = append(c.libDirs, o.arg)
		default:
			fmt.Fprintf(stderr, "%s: option -%s is not supported yet\n", c.progName, o.name)
			return 2, false
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: failed to set -%s: %v\n", c.progName, o.name, err)
			return 1, false
		}
	}
	if c.verbose && !c.list {
		fmt.Fprintf(stderr, "%s: option -v is not supported yet without -l\n", c.progName)
		return 2, false
	}
	return 0, true
}

// flagOptions are the options that single-letter flags set.
var flagOptions = map[string]string{
	"C": "cpp", "D": "define", "U": "undef", "I": "incdir", "H": "cpphdrs", "Z": "zdefs",
}

// setX sets a -x option; some also configure the preprocessor or the
// compiler directly.
func (c *config) setX(name, value string) error {
	if err := c.opts.Set(name, value); err != nil {
		return err
	}
	switch name {
	case "define":
		c.cppOpts.Defines = append(c.cppOpts.Defines, value)
	case "undef":
		c.cppOpts.Undefs = append(c.cppOpts.Undefs, value)
	case "incdir":
		c.cppOpts.Includes = append(c.cppOpts.Includes, value)
	case "cpphdrs":
		c.cppOpts.Headers = true
	case "cpppath":
		c.cppOpts.Path = value
	case "cpp":
		c.cpp = true
	case "zdefs":
		c.zdefs = true
	}
	return nil
}

// newChecker returns the type checker of the run: all programs share its
// declarations and variables, as they share dtrace's handle.
func (c *config) newChecker(warn io.Writer) (*check.Checker, error) {
	c.modules = c.kernelTypes(warn)
	c.ksyms = c.symbols()
	c.kinst.symbols = c.ksyms.Table
	var strsize int64
	if v, ok := c.opts.Value("strsize"); ok {
		n, _ := option.ParseSize(v)
		strsize = int64(n)
	}
	checker := check.NewChecker(&check.Config{
		StringSize:  strsize,
		Destructive: c.opts.IsSet("destructive"),
		AllowEmpty:  c.opts.IsSet("empty"),
		OS:          runtime.GOOS,
		Modules:     c.modules,
		LoadModule:  c.loadModule,
		Probes:      c.probes(),
		ZeroMatch:   c.zdefs,
		Symbols:     c.ksyms,
	})
	if v, ok := c.opts.Value("version"); ok {
		if err := checker.SetVersion(v); err != nil {
			return nil, fmt.Errorf("failed to set -x version: %v", err)
		}
	}
	return checker, nil
}

// writeDOF writes the compiled programs as a DOF object, as dtrace -G
// does: to the -o file, or to d.out.
func (c *config) writeDOF(p dof.Program, fail func(string, ...any) int) int {
	b, err := dof.Write(&p, nil)
	if err != nil {
		return fail("failed to create DOF: %v", err)
	}
	name := c.output
	if name == "" {
		name = "d.out"
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		return fail("failed to write %s: %v", name, err)
	}
	return 0
}

// compileFailure reports a program that failed to compile. A name or
// type that is not defined may be one that a library left out for this
// kernel would define: then the libraries left out are named too.
func (c *config) compileFailure(cmd command, err error, fail func(string, ...any) int, stderr io.Writer) int {
	st := fail("%s", c.describe(cmd, err))
	var de *diag.Error
	if errors.As(err, &de) && (de.Tag == diag.D_IDENT_UNDEF || de.Tag == diag.D_UNKNOWN) {
		for _, le := range c.brokenLibs {
			fmt.Fprintf(stderr, "%s: note: library %s was left out, as this kernel's types do not fit it: %v\n", c.progName, le.File, le)
		}
	}
	return st
}

// loadLibraries compiles D's libraries into the checker, as dtrace does
// when it opens its handle: the directories of -L and -x libdir first,
// so that their files override the system's, then the system's (kdtrace's
// own on Linux, /usr/lib/dtrace on FreeBSD, or -x syslibdir), unless -x
// nolibs. It returns the check of the scripts' "#pragma D depends_on".
func (c *config) loadLibraries(checker *check.Checker, warn io.Writer) (func(class, name string) error, error) {
	var files []library.File
	dirs := c.libDirs
	if v, ok := c.opts.Value("libdir"); ok {
		dirs = append(dirs, v)
	}
	for _, dir := range dirs {
		fs, err := library.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("failed to load libraries: %v", err)
		}
		files = append(files, fs...)
	}
	own := false
	if !c.opts.IsSet("nolibs") {
		var fs []library.File
		var err error
		if dir, ok := c.opts.Value("syslibdir"); ok {
			fs, err = library.ReadDir(dir)
		} else {
			fs, err = library.System(runtime.GOOS)
			own = runtime.GOOS == "linux"
		}
		if err != nil {
			return nil, fmt.Errorf("failed to load libraries: %v", err)
		}
		files = append(files, fs...)
	}
	cfg := &library.Config{
		Modules:    c.modules,
		StringSize: checker.StringSize(),
		SetOption:  c.opts.SetFromScript,
		// kdtrace's own libraries name kernel types that vary between
		// kernels: one that does not compile here is left out, with a
		// warning, rather than stopping every script.
		SkipBroken: own,
		// Those that read kernel types are compiled when a script
		// first names what they define.
		Lazy: own,
	}
	cfg.Late = func(s library.Skip) { c.noteSkip(s, warn) }
	skipped, err := library.Load(checker, files, cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to compile library %v", err)
	}
	for _, s := range skipped {
		c.noteSkip(s, warn)
	}
	return library.Dependencies(cfg, files, skipped), nil
}

// noteSkip records a library left out because it did not compile. It
// is said only with -x verbose, or when a script fails for a name the
// library would have defined (compileFailure).
func (c *config) noteSkip(s library.Skip, warn io.Writer) {
	var le *library.Error
	if errors.As(s.Err, &le) {
		c.brokenLibs = append(c.brokenLibs, le)
		if c.opts.IsSet("verbose") {
			fmt.Fprintf(warn, "%s: warning: library %s left out: %v\n", c.progName, s.File, le)
		}
	}
}

// compile turns one command into a parsed and rewritten program; its
// declarations are checked as they are parsed.
func (c *config) compile(cmd command, exp *sugar.Expander, checker *check.Checker, deps func(class, name string) error, stderr io.Writer) (*ast.Program, error) {
	var (
		name = "kdtrace"
		src  []byte
	)
	if cmd.kind == 's' {
		name = cmd.arg
		var err error
		if cmd.arg == "-" {
			src, err = io.ReadAll(os.Stdin)
		} else {
			src, err = os.ReadFile(cmd.arg)
		}
		if err != nil {
			return nil, &openError{err}
		}
	} else if cmd.kind == 'n' || cmd.kind == 'i' {
		// -i gives a probe ID where -n gives names.
		src = []byte(cmd.arg)
	} else {
		text, err := specProgram(cmd.kind, cmd.arg)
		if err != nil {
			return nil, err
		}
		src = []byte(text)
	}
	if c.cpp && cmd.kind == 's' { // as dtrace, -C applies to script files
		res, err := cpp.Preprocess(context.Background(), name, src, c.cppOpts)
		if err != nil {
			return nil, err
		}
		if c.cppOpts.Headers {
			stderr.Write(res.Headers)
		}
		src = res.Text
	}
	pcfg := &parser.Config{
		Args:        append([]string{name}, c.args...),
		Macros:      macroVariables(c.target),
		DefaultArgs: c.opts.IsSet("defaultargs"),
		ArgRefs:     c.opts.IsSet("argref"),
		AllowEmpty:  true, // the checker decides, after the declarations
		CommandLine: cmd.kind != 's',
		SetOption: func(name, value string) error {
			if err := c.opts.SetFromScript(name, value); err != nil {
				return err
			}
			if name == "version" {
				return checker.SetVersion(value)
			}
			return nil
		},
		Types:     checker,
		Declare:   checker.Declare,
		DefineTag: checker.DefineTag,
		DependsOn: deps,
	}
	prog, err := parser.ParseFile(name, src, pcfg)
	if err != nil {
		return nil, err
	}
	if err := exp.Expand(prog); err != nil {
		return nil, err
	}
	return prog, nil
}

// openError is a script that cannot be read.
type openError struct{ err error }

func (e *openError) Error() string { return e.err.Error() }

// describe formats a compile failure as dtrace does.
func (c *config) describe(cmd command, err error) string {
	var oe *openError
	if errors.As(err, &oe) {
		var pe *os.PathError
		if errors.As(oe.err, &pe) {
			return fmt.Sprintf("failed to open %s: %s", cmd.arg, strerror(pe.Err))
		}
		return fmt.Sprintf("failed to open %s: %v", cmd.arg, oe.err)
	}
	msg := err.Error()
	var de *diag.Error
	if errors.As(err, &de) {
		e := *de
		main := cmd.arg
		if cmd.kind != 's' {
			// dtrace gives no line for programs given as strings.
			main, e.Pos.Line = "kdtrace", 0
		}
		msg = e.Format(main, c.opts.IsSet("errtags"))
	}
	if cmd.kind == 's' {
		return fmt.Sprintf("failed to compile script %s: %s", cmd.arg, msg)
	}
	return fmt.Sprintf("invalid probe specifier %s: %s", cmd.arg, msg)
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

func usage(w io.Writer, name string) {
	fmt.Fprintf(w, `Usage: %s [-32|-64] [-aACdeFGhHlqSvVwZ] [-b bufsz] [-c cmd] [-D name[=def]]
	[-I path] [-L path] [-o output] [-p pid] [-s script] [-U name]
	[-x opt[=val]] [-X a|c|s|t]
	[--kernel image] [--module image] [--debug-root dir] [--btf file|none]

	[-P provider [[ predicate ] action ]]
	[-m [ provider: ] module [[ predicate ] action ]]
	[-f [[ provider: ] module: ] func [[ predicate ] action ]]
	[-n [[[ provider: ] module: ] func: ] name [[ predicate ] action ]]
	[-i probe-id [[ predicate ] action ]] [ args ... ]

	predicate -> '/' D-expression '/'
	   action -> '{' D-statements '}'

	-C  run cpp(1) preprocessor on script files
	-d  dump script after syntactic transformations
	-D  define symbol when invoking preprocessor
	-e  exit after compiling request but prior to enabling probes
	-f  enable or list probes matching the specified function name
	-F  coalesce trace output by function
	-G  write a DOF object of the compiled programs (-o file, default d.out)
	-h  generate a header file with definitions for static probes
	-H  print included files when invoking preprocessor
	-i  enable or list probes matching the specified probe id
	-I  add include directory to preprocessor search path
	-l  list probes matching specified criteria
	-L  add library directory to library search path
	-m  enable or list probes matching the specified module name
	-n  enable or list probes matching the specified probe name
	-o  set output file
	-p  look up the specified process-ID and make it $target
	-P  enable or list probes matching the specified provider name
	-q  set quiet mode (only output explicitly traced data)
	-s  enable or list probes according to the specified D script
	-S  print D compiler intermediate code
	-U  undefine symbol when invoking preprocessor
	-v  set verbose mode (report stability attributes, arguments)
	-V  report DTrace API version
	-w  permit destructive actions
	-x  enable or modify compiler and tracing options
	-X  specify ISO C conformance settings for preprocessor
	-Z  permit probe descriptions that match zero probes

	--kernel      kernel image whose inline functions kinst probes name
	--module      kernel module image (repeatable)
	--debug-root  where separate debug files are (default /usr/lib/debug)
	--btf         the kernel's types: a BTF file, or none (default: the --kernel
	              image's .BTF, else /sys/kernel/btf/vmlinux)
`, name)
}

// strerror capitalises an error's text as C's strerror does.
func strerror(err error) string {
	s := err.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
