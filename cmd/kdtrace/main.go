// Command kdtrace is a DTrace-compatible tracer centred on the kinst
// provider. It takes dtrace(1)'s options: D programs come from -s files
// (including "#!/usr/sbin/dtrace -s" scripts) and -n probe specifiers,
// are preprocessed with -C, parsed, and rewritten by the sugar pass;
// -d prints the rewritten program as dtrace -d does and -e stops after
// compiling. The compiler is package dtrace; the command parses the
// command line, says where output goes, and turns results into exit
// statuses.
package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/kdtrace/kdtrace/dtrace"
	"github.com/kdtrace/kdtrace/internal/version"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// program is one program to compile: a script file (-s), a probe
// specifier with its predicate and actions (-n), or a probe description
// given by its ID (-i), provider (-P), module (-m) or function (-f).
type program struct {
	spec dtrace.Spec
	arg  string
}

// command is a run of kdtrace: what the options say, and where its
// output goes.
type command struct {
	name           string
	stdout, stderr io.Writer
	h              *dtrace.Handle

	progs   []program
	flags   dtrace.Flags
	list    bool // -l
	verbose bool // -v
	header  bool // -h
	dofOut  bool // -G
	save    bool // -A
	// compileOnly is the first option given that only the compiler
	// reads, which a saved program does not take.
	compileOnly string
	exec        bool // false with -e
	output      string
	objects     []string // -G's operands
	// ctx is cancelled by a signal while programs compile.
	ctx context.Context
}

// interrupt cancels its context on the first SIGINT or SIGTERM while
// programs compile, which stops what the compiler waits for (a
// download of debug files) cleanly; a second signal then acts as by
// default and ends kdtrace at once. The signals are caught from the
// first wait on the context (its Done) on: most compilations wait for
// nothing, and catching signals costs the process two threads.
type interrupt struct {
	ctx    context.Context // the context to hand out, which arms on Done
	inner  context.Context
	cancel context.CancelFunc
	arm    sync.Once
	armed  bool // signals are caught
	sigs   chan os.Signal
	done   chan struct{}
	sig    os.Signal // the signal that cancelled ctx
	closed bool
}

func newInterrupt() *interrupt {
	i := &interrupt{sigs: make(chan os.Signal, 1), done: make(chan struct{})}
	i.inner, i.cancel = context.WithCancel(context.Background())
	i.ctx = armingContext{i.inner, i}
	return i
}

// catch starts catching the signals.
func (i *interrupt) catch() {
	i.armed = true
	signal.Notify(i.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case i.sig = <-i.sigs:
			signal.Stop(i.sigs)
			i.cancel()
		case <-i.done:
			i.cancel()
		}
	}()
}

// armingContext is an interrupt's context: a wait on it catches the
// signals that cancel it.
type armingContext struct {
	context.Context
	i *interrupt
}

func (c armingContext) Done() <-chan struct{} {
	c.i.arm.Do(c.i.catch)
	return c.Context.Done()
}

// ended reports, with the exit status of a process a signal ended,
// whether a signal came.
func (i *interrupt) ended(c *command) (int, bool) {
	if i.ctx.Err() == nil || i.sig == nil {
		return 0, false
	}
	fmt.Fprintf(c.stderr, "%s: interrupted\n", c.name)
	if s, ok := i.sig.(syscall.Signal); ok {
		return 128 + int(s), true
	}
	return 1, true
}

// stop restores the signals' default actions, and cancels the context;
// tracing sets its own.
func (i *interrupt) stop() {
	i.arm.Do(func() {}) // nothing catches them from now on
	if i.closed {
		return
	}
	i.closed = true
	if !i.armed {
		i.cancel()
		return
	}
	signal.Stop(i.sigs)
	close(i.done)
}

// run is the command with its environment made explicit; it returns the
// exit status.
func run(argv []string, stdout, stderr io.Writer) int {
	c := &command{name: "kdtrace", stdout: stdout, stderr: stderr, exec: true}
	if len(argv) > 0 {
		c.name = filepath.Base(argv[0])
	}
	if len(argv) < 2 {
		usage(stderr, c.name)
		return 2
	}
	opts, operands, err := getopt(argv[1:])
	if errors.Is(err, errHelp) {
		usage(stdout, c.name)
		return 0
	}
	if errors.Is(err, errVersion) {
		fmt.Fprintln(stdout, version.String())
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", c.name, err)
		usage(stderr, c.name)
		return 2
	}
	if traces(opts) {
		// As dtrace, whose first step is opening the device: a run
		// that would trace is refused before anything else is done.
		if err := dtrace.CheckPrivileges(); err != nil {
			return c.fail("failed to initialize dtrace: %v", err)
		}
	}
	intr := newInterrupt()
	defer intr.stop()
	c.ctx = intr.ctx
	if st, ok := c.open(opts, operands); !ok {
		return st
	}
	defer c.h.Close()
	if st, ok := c.apply(opts); !ok {
		return st
	}
	if len(c.progs) == 0 && c.dofOut {
		fmt.Fprintf(c.stderr, "%s: -G requires one or more scripts or enabling options\n", c.name)
		return 2
	}
	if len(c.progs) == 0 && !c.list {
		return c.fail("no probes specified")
	}
	if c.save && c.output == "" {
		// dtrace -A writes /boot/dtrace.dof for the next boot; Linux
		// has no boot-time enabling, so the file must be named.
		fmt.Fprintf(c.stderr, "%s: -A requires -o, the file to save the program in\n", c.name)
		return 2
	}
	if c.output != "" && !c.header && !c.dofOut && !c.save {
		// As dtrace, the output file is opened (for appending) before
		// anything is compiled, so that a bad path fails at once.
		f, err := os.OpenFile(c.output, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return c.fail("failed to open output file '%s': %v", c.output, errors.Unwrap(err))
		}
		defer f.Close()
	}
	restoreGC := delayCollection()
	defer restoreGC()
	var progs []*dtrace.Program
	for _, p := range c.progs {
		var prog *dtrace.Program
		var err error
		if src, ok := scriptText(p); !ok {
			prog, err = c.h.Compile(p.spec, p.arg, c.flags)
		} else if dtrace.IsSaved(src) {
			prog, st := c.load(p.arg, src)
			if st != 0 {
				return st
			}
			progs = append(progs, prog)
			continue
		} else {
			prog, err = c.h.CompileScript(p.arg, src, c.flags)
		}
		if st, ok := intr.ended(c); ok {
			return st
		}
		if err != nil {
			return c.compileFailure(err)
		}
		progs = append(progs, prog)
	}
	intr.stop()
	switch {
	case c.save:
		return c.saveProgram(progs)
	case c.list:
		if err := c.h.ListProbes(stdout, c.verbose, progs...); err != nil {
			return c.fail("%v", err)
		}
		return 0
	case c.header:
		return c.writeHeader(progs)
	case c.dofOut:
		return c.link(progs)
	case !c.exec:
		return 0
	}
	return c.trace(progs, restoreGC)
}

// trace enables the programs and runs them until a clause exits, a
// signal comes, or the traced process ends, as dtrace's main loop.
func (c *command) trace(progs []*dtrace.Program, restoreGC func()) int {
	tr, err := c.h.Enable(progs...)
	restoreGC()
	if err != nil {
		return c.fail("could not enable tracing: %v", err)
	}
	defer tr.Close()
	// The first signal stops the tracing, a second the printing of
	// the aggregations at the end, as dtrace's.
	stop, impatient := make(chan struct{}), make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for _, c := range []chan struct{}{stop, impatient} {
			select {
			case <-sigs:
				close(c)
			case <-done:
				return
			}
		}
	}()
	for i, p := range c.progs {
		n := tr.Matched(i)
		s := "s"
		if n == 1 {
			s = ""
		}
		what := "description"
		if p.spec == dtrace.Script {
			what = "script"
		}
		// A notice, which quiet silences, as dtrace's.
		if _, quiet := c.h.Option("quiet"); !quiet {
			fmt.Fprintf(c.stderr, "%s: %s '%s' matched %d probe%s\n", c.name, what, describe(p), n, s)
		}
	}
	out := c.stdout
	if c.output != "" {
		f, err := os.OpenFile(c.output, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return c.fail("failed to open output file '%s': %v", c.output, errors.Unwrap(err))
		}
		defer f.Close()
		out = f
	}
	status, err := tr.Run(dtrace.RunConfig{Out: out, Err: c.stderr, Stop: stop, Impatient: impatient})
	if err != nil {
		return c.fail("%v", err)
	}
	return status
}

// traces reports whether the options ask for a run that enables
// probes: not one that lists (-l), compiles (-e), or writes a header
// (-h), an object (-G) or the version (-V), which need no privilege.
func traces(opts []opt) bool {
	for _, o := range opts {
		switch o.name {
		case "l", "e", "h", "G", "V", "A":
			return false
		}
	}
	return true
}

// describe is how dtrace names a program in its "matched" message: a
// script by its path, a description by its text up to its predicate or
// actions.
func describe(p program) string {
	if p.spec == dtrace.Script {
		return p.arg
	}
	if i := strings.IndexAny(p.arg, "{/;"); i >= 0 {
		return p.arg[:i]
	}
	return p.arg
}

// fail reports an error as dtrace does and returns exit status 1.
func (c *command) fail(format string, args ...any) int {
	fmt.Fprintf(c.stderr, "%s: %s\n", c.name, fmt.Sprintf(format, args...))
	return 1
}

// compileFailure reports a program that failed to compile, with the
// notes of its error.
func (c *command) compileFailure(err error) int {
	st := c.fail("%v", err)
	var ce *dtrace.CompileError
	if errors.As(err, &ce) {
		for _, n := range ce.Notes {
			fmt.Fprintf(c.stderr, "%s: note: %s\n", c.name, n)
		}
	}
	return st
}

// open checks that one mode is asked for, answers -V, and opens the
// handle with the files the options name; it returns false with an exit
// status when the run must stop.
func (c *command) open(opts []opt, operands []string) (int, bool) {
	modes := ""
	cfg := &dtrace.Config{Args: operands, Name: c.name, Stdout: c.stdout, Stderr: c.stderr, Context: c.ctx}
	for _, o := range opts {
		switch o.name {
		case "A", "G", "h", "l", "V":
			modes += o.name
		case "kernel":
			cfg.Kernel = o.arg
		case "module":
			cfg.Modules = append(cfg.Modules, o.arg)
		case "debug-root":
			cfg.DebugRoot = o.arg
		case "btf":
			cfg.BTF = o.arg
		case "L":
			cfg.LibDirs = append(cfg.LibDirs, o.arg)
		}
	}
	if len(modes) > 1 {
		fmt.Fprintf(c.stderr, "%s: only one of the [-AGhlV] options can be specified at a time\n", c.name)
		return 2, false
	}
	if modes == "G" {
		// As dtrace's, -G takes its operands as the object files
		// to link, not as macro arguments.
		c.objects, cfg.Args = operands, nil
	}
	if modes == "A" {
		c.save, cfg.Save = true, true
	}
	if modes == "V" {
		// dtrace's line, then which kdtrace says it.
		fmt.Fprintf(c.stdout, "%s: %s (%s)\n", c.name, dtrace.Version, version.String())
		return 0, false
	}
	h, err := dtrace.Open(cfg)
	if err != nil {
		// A file the user named that cannot be used is a usage error.
		fmt.Fprintf(c.stderr, "%s: %v\n", c.name, err)
		return 2, false
	}
	c.h = h
	return 0, true
}

// apply sets the options in order, as dtrace's option passes do; it
// returns false with an exit status when the run must stop.
func (c *command) apply(opts []opt) (int, bool) {
	var procs []opt // -c and -p
	for _, o := range opts {
		var err error
		switch o.name {
		case "h":
			c.header, c.exec = true, false
			c.flags |= dtrace.Header
		case "s", "n", "P", "m", "f", "i":
			c.progs = append(c.progs, program{dtrace.Spec(o.name[0]), o.arg})
		case "c", "p":
			if c.save && o.name == "p" {
				// Its probes of the process's objects are found
				// by compiling it against more processes of
				// -c's command, which a grabbed process has not.
				fmt.Fprintf(c.stderr, "%s: -A cannot be used with -p: a saved program is compiled against processes of -c's command\n", c.name)
				return 2, false
			}
			procs = append(procs, o)
		case "l":
			// As dtrace, -l lists what descriptions match, and a
			// description that matches nothing is no compile error.
			c.list, c.exec = true, false
			c.flags |= dtrace.NoCode
			err = c.h.SetOpt("zdefs", "")
		case "v":
			c.verbose = true
		case "C", "D", "U", "I", "H", "Z":
			if o.name != "Z" && c.compileOnly == "" {
				c.compileOnly = o.name
			}
			// These set options, as in dtrace: -D is -x define and so on.
			if err := c.h.SetOpt(flagOptions[o.name], o.arg); err != nil {
				fmt.Fprintf(c.stderr, "%s: failed to set -%s %s: %v\n", c.name, o.name, o.arg, err)
				return 1, false
			}
		case "d":
			c.flags |= dtrace.Sugar
			c.compileOnly = cmp.Or(c.compileOnly, o.name)
		case "S":
			c.flags |= dtrace.DIFV
			c.compileOnly = cmp.Or(c.compileOnly, o.name)
		case "G":
			// -G implies -Z, as in dtrace: the probes are the ones
			// the program defines.
			c.dofOut, c.exec = true, false
			c.flags |= dtrace.Link
			err = c.h.SetOpt("zdefs", "")
		case "e":
			c.exec = false
		case "o":
			c.output = o.arg
		case "q":
			err = c.h.SetOpt("quiet", "")
		case "w":
			err = c.h.SetOpt("destructive", "")
		case "F":
			err = c.h.SetOpt("flowindent", "")
		case "b", "X":
			if err = c.h.SetOpt(flagOptions[o.name], o.arg); err != nil {
				fmt.Fprintf(c.stderr, "%s: failed to set -%s %s: %v\n", c.name, o.name, o.arg, err)
				return 1, false
			}
		case "x":
			name, value, _ := strings.Cut(o.arg, "=")
			if err := c.h.SetOpt(name, value); err != nil {
				fmt.Fprintf(c.stderr, "%s: failed to set -x %s: %v\n", c.name, name, err)
				return 1, false
			}
		case "O", "libxo":
			style, _, _ := strings.Cut(o.arg, ",")
			if style == "" && o.name == "O" {
				style = "json"
			}
			if style != "json" {
				flag := "-O"
				if o.name == "libxo" {
					flag = "--libxo"
				}
				fmt.Fprintf(c.stderr, "%s: %s %s: only json is supported\n", c.name, flag, o.arg)
				return 2, false
			}
			err = c.h.SetOpt("oformat", "json")
		case "A":
			c.exec = false
		case "kernel", "module", "debug-root", "btf", "L", "V":
			// Taken by open.
		default:
			fmt.Fprintf(c.stderr, "%s: option -%s is not supported yet\n", c.name, o.name)
			return 2, false
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "%s: failed to set -%s: %v\n", c.name, o.name, err)
			return 1, false
		}
	}
	if c.verbose && !c.list {
		fmt.Fprintf(c.stderr, "%s: option -v is not supported yet without -l\n", c.name)
		return 2, false
	}
	// As dtrace's third pass, processes are created and grabbed once
	// every option is set, before anything is compiled; the last one
	// is $target.
	for _, o := range procs {
		if o.name == "c" {
			if err := c.create(o.arg); err != nil {
				fmt.Fprintf(c.stderr, "%s: %v\n", c.name, err)
				return 1, false
			}
			continue
		}
		// dtrace reads the pid with strtol, which skips leading white
		// space (the DTraceToolkit's wrappers pass " 81").
		pid, perr := strconv.ParseInt(strings.TrimLeft(o.arg, " \t\n\v\f\r"), 10, 0)
		if perr != nil || o.arg == "" {
			fmt.Fprintf(c.stderr, "%s: invalid pid: %s\n", c.name, o.arg)
			return 1, false
		}
		if err := c.h.Grab(int(pid)); err != nil {
			fmt.Fprintf(c.stderr, "%s: %v\n", c.name, err)
			return 1, false
		}
	}
	return 0, true
}

// create starts -c's command, split at white space as dtrace splits
// it (no shell), stopped until tracing starts. It inherits kdtrace's
// standard files.
func (c *command) create(arg string) error {
	argv := strings.FieldsFunc(arg, func(r rune) bool { return strings.ContainsRune("\f\n\r\t\v ", r) })
	if len(argv) == 0 {
		argv = []string{arg}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	_, err := c.h.Create(cmd)
	return err
}

// flagOptions are the options that single-letter flags set.
var flagOptions = map[string]string{
	"C": "cpp", "D": "define", "U": "undef", "I": "incdir", "H": "cpphdrs", "Z": "zdefs",
	"b": "bufsize", "X": "stdc",
}

// writeHeader writes the C header for the providers of all programs, as
// dtrace -h does: to the -o file, or to the first script's name with .h
// for .d.
func (c *command) writeHeader(progs []*dtrace.Program) int {
	name := c.output
	if name == "" {
		n, err := dtrace.HeaderName(progs...)
		if err != nil {
			return c.fail("%v", err)
		}
		name = n
	}
	var out bytes.Buffer
	if err := c.h.WriteHeader(&out, name, progs...); err != nil {
		return c.fail("failed to create header file %s: %v", name, err)
	}
	if err := os.WriteFile(name, out.Bytes(), 0o666); err != nil {
		return c.fail("failed to open header file '%s': %v", name, err)
	}
	return 0
}

// link writes what dtrace -G writes for each program: an object that
// carries its DOF and defines what its providers' header leaves for the
// link (see dtrace.Handle.Link), named as dtrace names it. Several
// programs and -o make one object, as dtrace's final ld -r does.
func (c *command) link(progs []*dtrace.Program) int {
	objs := make([][]byte, len(progs))
	for i, p := range progs {
		b, err := c.h.Link(c.objects, p)
		if err != nil {
			what := "description"
			if c.progs[i].spec == dtrace.Script {
				what = "script"
			}
			return c.fail("failed to link %s %s: %v", what, describe(c.progs[i]), err)
		}
		objs[i] = b
	}
	if len(progs) > 1 && c.output != "" {
		b, err := c.h.Link(c.objects, progs...)
		if err != nil {
			return c.fail("failed to link %s: %v", c.output, err)
		}
		return c.writeObject(c.output, b)
	}
	for i, p := range progs {
		if st := c.writeObject(dtrace.LinkName(p, i, len(progs), c.output), objs[i]); st != 0 {
			return st
		}
	}
	return 0
}

// writeObject writes -G's output to name, whole or not at all.
func (c *command) writeObject(name string, b []byte) int {
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".*")
	if err != nil {
		return c.fail("failed to create temporary file %s: %v", name, errors.Unwrap(err))
	}
	_, err = tmp.Write(b)
	if err == nil {
		// By descriptor, not by name: as root, in a directory another
		// user can write, the name could be that user's link by now.
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return c.fail("failed to write %s: %v", name, err)
	}
	return 0
}

// scriptText returns the contents of -s's file, read once whether it is
// a script or a saved program (kdtrace -A): false for another kind of
// program, the standard input, and a file that cannot be read, which
// Compile reports as dtrace does.
func scriptText(p program) ([]byte, bool) {
	if p.spec != dtrace.Script || p.arg == "-" {
		return nil, false
	}
	b, err := os.ReadFile(p.arg)
	return b, err == nil
}

// load takes a saved program in place of compiling one: only to run it
// (or check it, with -e), and without the options that only compiling
// reads.
func (c *command) load(name string, b []byte) (*dtrace.Program, int) {
	switch {
	case c.save:
		fmt.Fprintf(c.stderr, "%s: -A: %s is a saved program already\n", c.name, name)
		return nil, 2
	case c.list || c.header || c.dofOut:
		fmt.Fprintf(c.stderr, "%s: %s is a saved program: it can only be run (or checked, with -e)\n", c.name, name)
		return nil, 2
	case len(c.progs) > 1:
		// Its variables and aggregations are numbered as its own
		// compile numbered them, which another program's would
		// share.
		fmt.Fprintf(c.stderr, "%s: saved program %s runs alone: it cannot be given with other programs\n", c.name, name)
		return nil, 2
	case c.compileOnly != "":
		fmt.Fprintf(c.stderr, "%s: -%s cannot be used with saved program %s, which is compiled already\n", c.name, c.compileOnly, name)
		return nil, 2
	}
	prog, err := c.h.Load(name, b)
	if err != nil {
		return nil, c.fail("failed to load saved program: %v", err)
	}
	return prog, 0
}

// saveProgram writes what -A writes: the programs, compiled, as a
// saved program in the -o file, whole or not at all.
func (c *command) saveProgram(progs []*dtrace.Program) int {
	b, err := c.h.Save(progs...)
	if err != nil {
		return c.fail("failed to save program: %v", err)
	}
	if st := c.writeObject(c.output, b); st != 0 {
		return st
	}
	// dtrace's words, on stderr whatever the quiet option, as the
	// program's pragmas may set it.
	fmt.Fprintf(c.stderr, "%s: saved anonymous enabling in %s\n", c.name, c.output)
	return 0
}
