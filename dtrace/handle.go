package dtrace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/btf"
	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/debuginfod"
	"github.com/kdtrace/kdtrace/internal/dlang/cpp"
	"github.com/kdtrace/kdtrace/internal/dlang/library"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
	"github.com/kdtrace/kdtrace/internal/ksym"
	"github.com/kdtrace/kdtrace/internal/option"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// Version is the D language version kdtrace implements, as dtrace -V
// reports it.
const Version = "Sun D 1.13"

// Config says which kernel a handle compiles for and where it reports.
// The zero Config compiles for the running kernel.
type Config struct {
	// Kernel is a kernel image to compile against instead of the
	// running kernel (--kernel): its functions, probes and types.
	Kernel string
	// Modules are kernel module images read with Kernel (--module).
	Modules []string
	// DebugRoot is where separate debug files are (--debug-root);
	// "" means /usr/lib/debug.
	DebugRoot string
	// BTF is the file of the kernel's types (--btf), "none" for none;
	// "" means Kernel's .BTF or DWARF, else the running kernel's BTF.
	BTF string
	// LibDirs are directories of D libraries loaded before the
	// system's (-L).
	LibDirs []string
	// Save compiles programs for Handle.Save (kdtrace -A): $target is
	// a placeholder that a run patches, and kernel symbols have no
	// address, as the kernel that runs the program places itself.
	Save bool
	// Args are the macro arguments $1, $2, … of every program.
	Args []string
	// Name is the program's name that starts warnings and notes
	// ("kdtrace: warning: …"); "kdtrace" when empty.
	Name string
	// Stdout receives what dtrace prints on its standard output while
	// it compiles: the -d text (Sugar). Stderr receives warnings, the
	// -S listing (DIFV) and cpp's -H list. Nil discards.
	Stdout, Stderr io.Writer
	// Context, when cancelled, stops what the compiler waits for: the
	// download of a debug file from the debuginfod servers that
	// DEBUGINFOD_URLS names. Nil means context.Background().
	Context context.Context
}

// A Handle holds what every program of one session shares, as
// libdtrace's dtrace_hdl_t: options, the kernel's types, the catalog
// of probes, the D libraries, and the declarations and variables of
// the programs compiled so far.
type Handle struct {
	cfg     Config
	opts    option.Set
	cppOpts cpp.Options
	cpp     bool // -C
	zdefs   bool // -Z
	target  int  // the process of -p or -c, $target; 0 for none
	// savedTarget is $target's placeholder while compiling with
	// Config.Save.
	savedTarget int
	// savedAggs names the aggregations of a saved program Load read,
	// by the compiler's IDs.
	savedAggs map[uint32]string
	procs     []*Process
	env       []string // of the processes Create starts; nil until first changed

	modules func() []types.Module // the kernel's types, once read
	// printed numbers the types of the programs' print() values, which
	// the consumer resolves, as libdtrace resolves its CTF ids.
	printed types.Table

	modBTFMu sync.Mutex
	modBTF   map[string]loadedBTF // the modules' BTF read so far, by name

	// Made by the first compile, once every option is set.
	ready      bool
	checker    *check.Checker
	catalog    *probe.Catalog // nil where no catalog can be had
	kinst      *lazyKinst
	locals     *localsReader  // the images locals-> reads, opened on first use
	ksyms      *ksym.Resolver // the kernel's symbols, read on first use
	expander   *sugar.Expander
	deps       func(class, name string) error
	brokenLibs []*library.Error   // own libraries that do not fit this kernel
	pidInline  *lazyPid           // the objects pid inline probes read, opened on first use
	debuginfod *debuginfod.Client // from the environment; nil without DEBUGINFOD_URLS
}

// FileError is a file named in the Config that cannot be used: it does
// not exist, or is not what it is named as.
type FileError struct {
	Option string // the command-line option that names it: "--kernel"
	Err    error  // names the file
}

func (e *FileError) Error() string { return fmt.Sprintf("%s: %v", e.Option, e.Err) }
func (e *FileError) Unwrap() error { return e.Err }

// Open opens a handle, as dtrace_open. Every file the Config names must
// open as what it is named as, or Open fails with a *FileError; a
// kernel image without types is only warned about, since its symbols
// and code still serve. Options are then set with SetOpt; they are
// read when the first program compiles.
func Open(cfg *Config) (*Handle, error) {
	h := &Handle{cfg: *cfg}
	if h.cfg.Save {
		h.savedTarget = savedTarget1
	}
	if h.cfg.Name == "" {
		h.cfg.Name = "kdtrace"
	}
	if h.cfg.Stdout == nil {
		h.cfg.Stdout = io.Discard
	}
	if h.cfg.Stderr == nil {
		h.cfg.Stderr = io.Discard
	}
	if h.cfg.Context == nil {
		h.cfg.Context = context.Background()
	}
	// As gdb and perf, the servers and the cache are the environment's.
	h.debuginfod = debuginfod.NewFromEnv(os.Getenv, h.cfg.Stderr)
	if h.cfg.Kernel != "" {
		if err := debuginfo.CheckFile(h.cfg.Kernel); err != nil {
			return nil, &FileError{"--kernel", err}
		}
	}
	for _, m := range h.cfg.Modules {
		if err := debuginfo.CheckFile(m); err != nil {
			return nil, &FileError{"--module", err}
		}
	}
	if dir := h.cfg.DebugRoot; dir != "" {
		if st, err := os.Stat(dir); err != nil {
			return nil, &FileError{"--debug-root", fmt.Errorf("%s: %w", dir, errors.Unwrap(err))}
		} else if !st.IsDir() {
			return nil, &FileError{"--debug-root", fmt.Errorf("%s: not a directory", dir)}
		}
	}
	if h.cfg.BTF == "" && h.cfg.Kernel == "" && runtime.GOOS != "freebsd" {
		h.modules = h.runningTypes()
		return h, nil
	}
	mods, err := h.kernelTypes()
	if err != nil {
		return nil, err
	}
	h.modules = func() []types.Module { return mods }
	return h, nil
}

// Close kills the processes the handle created that are still alive,
// and releases the images it opened.
func (h *Handle) Close() error {
	h.closeProcesses()
	if h.pidInline != nil {
		h.pidInline.close()
	}
	if h.kinst != nil {
		h.kinst.close()
	}
	if h.locals != nil {
		h.locals.close()
	}
	return nil
}

// SetOpt sets an option as -x name=value does (value "" for none);
// the single-letter flags are options too: -C is cpp, -D define, -U
// undef, -I incdir, -H cpphdrs, -Z zdefs, -q quiet, -w destructive.
func (h *Handle) SetOpt(name, value string) error {
	if name == "unsetenv" && strings.Contains(value, "=") {
		return option.ErrValue
	}
	if err := h.opts.Set(name, value); err != nil {
		return err
	}
	switch name {
	case "setenv", "unsetenv":
		h.setEnv(name == "setenv", value)
	case "define":
		h.cppOpts.Defines = append(h.cppOpts.Defines, value)
	case "undef":
		h.cppOpts.Undefs = append(h.cppOpts.Undefs, value)
	case "incdir":
		h.cppOpts.Includes = append(h.cppOpts.Includes, value)
	case "cpphdrs":
		h.cppOpts.Headers = true
	case "cpppath":
		h.cppOpts.Path = value
	case "cpp":
		h.cpp = true
	case "zdefs":
		h.zdefs = true
	}
	return nil
}

// environ returns the environment of the processes Create starts:
// kdtrace's, with LD_NOLAZYLOAD=1 as dtrace adds it (dt_proc_init: lazy
// loading would hide functions from pid probes; glibc ignores it),
// then as the setenv and unsetenv options changed it.
func (h *Handle) environ() []string {
	if h.env != nil {
		return h.env
	}
	env := slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "LD_NOLAZYLOAD=") })
	return append(env, "LD_NOLAZYLOAD=1")
}

// setEnv changes the environment of the processes Create starts, as
// dtrace's setenv and unsetenv options do: the variable that arg names
// is removed, and with set, arg (name=value) is added.
func (h *Handle) setEnv(set bool, arg string) {
	h.env = h.environ()
	name, _, _ := strings.Cut(arg, "=")
	h.env = slices.DeleteFunc(h.env, func(v string) bool {
		n, _, _ := strings.Cut(v, "=")
		return n == name
	})
	if set {
		h.env = append(h.env, arg)
	}
}

// Option returns an option's value and whether it is set, by the
// command line or by a program's pragmas.
func (h *Handle) Option(name string) (string, bool) { return h.opts.Value(name) }

// setup makes the checker, the probe catalog and the kinst resolver,
// and loads the D libraries, as libdtrace does on the first compile
// (dt_load_libs).
func (h *Handle) setup() error { return h.setupWarm(nil) }

// setupWarm is setup, calling warm, when setup has not run before, once
// the probe catalog is made and before the libraries load.
func (h *Handle) setupWarm(warm func()) error {
	if h.ready {
		return nil
	}
	h.ready = true
	h.ksyms = h.symbols()
	h.kinst = &lazyKinst{h: h, compat: h.opts.IsSet("kinstcompat")}
	h.pidInline = &lazyPid{h: h}
	h.expander = &sugar.Expander{Kinst: h.kinst, Pid: h.pidInline}
	var strsize int64
	if v, ok := h.opts.Value("strsize"); ok {
		n, _ := option.ParseSize(v)
		strsize = int64(n)
	}
	var symbols check.Symbols = h.ksyms
	if h.cfg.Save {
		symbols = savedSymbols{h.ksyms}
	}
	probes := h.probes()
	if warm != nil {
		warm()
	}
	h.checker = check.NewChecker(&check.Config{
		StringSize:  strsize,
		Destructive: h.opts.IsSet("destructive"),
		AllowEmpty:  h.opts.IsSet("empty"),
		OS:          runtime.GOOS,
		Modules:     h.modules(),
		LoadModule:  h.loadModule,
		Probes:      probes,
		ZeroMatch:   h.zdefs,
		Symbols:     symbols,
		Target:      h.target != 0 || h.cfg.Save,
	})
	if v, ok := h.opts.Value("version"); ok {
		if err := h.checker.SetVersion(v); err != nil {
			return fmt.Errorf("failed to set -x version: %v", err)
		}
	}
	if err := h.loadLibraries(); err != nil {
		return err
	}
	if h.target != 0 && h.catalog != nil {
		// The process of -p brings its USDT providers.
		if err := h.catalog.Grab(h.target); err != nil {
			return err
		}
	}
	return nil
}

// loadLibraries compiles D's libraries into the checker, as dtrace does
// when it opens its handle: the directories of -L and -x libdir first,
// so that their files override the system's, then the system's
// (kdtrace's own on Linux, /usr/lib/dtrace on FreeBSD, or -x
// syslibdir), unless -x nolibs.
func (h *Handle) loadLibraries() error {
	var files []library.File
	dirs := h.cfg.LibDirs
	if v, ok := h.opts.Value("libdir"); ok {
		dirs = append(dirs, v)
	}
	for _, dir := range dirs {
		fs, err := library.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("failed to load libraries: %v", err)
		}
		files = append(files, fs...)
	}
	own := false
	if !h.opts.IsSet("nolibs") {
		var fs []library.File
		var err error
		if dir, ok := h.opts.Value("syslibdir"); ok {
			fs, err = library.ReadDir(dir)
		} else {
			fs, err = library.System(runtime.GOOS)
			own = runtime.GOOS == "linux"
		}
		if err != nil {
			return fmt.Errorf("failed to load libraries: %v", err)
		}
		files = append(files, fs...)
	}
	cfg := &library.Config{
		Modules:    h.modules(),
		StringSize: h.checker.StringSize(),
		SetOption:  h.opts.SetFromScript,
		// kdtrace's own libraries name kernel types that vary between
		// kernels: one that does not compile here is left out, with a
		// warning, rather than stopping every script.
		SkipBroken: own,
		// Those that read kernel types are compiled when a script
		// first names what they define.
		Lazy: own,
		Late: h.noteSkip,
	}
	skipped, err := library.Load(h.checker, files, cfg)
	if err != nil {
		return fmt.Errorf("failed to compile library %v", err)
	}
	for _, s := range skipped {
		h.noteSkip(s)
	}
	if own {
		// Made when a program first leaves a name undefined.
		refused := sync.OnceValue(func() map[string]string { return library.Refused(runtime.GOOS) })
		h.checker.Refuse(func(name string) (string, bool) {
			why, ok := refused()[name]
			return why, ok
		})
	}
	h.deps = library.Dependencies(cfg, files, skipped)
	return nil
}

// noteSkip records a library left out because it did not compile. It
// is said only with -x verbose, or when a program fails for a name the
// library would have defined (CompileError.Notes).
func (h *Handle) noteSkip(s library.Skip) {
	var le *library.Error
	if errors.As(s.Err, &le) {
		h.brokenLibs = append(h.brokenLibs, le)
		if h.opts.IsSet("verbose") {
			h.warnf("library %s left out: %v", s.File, le)
		}
	}
}

// warnf writes a warning in dtrace's form.
func (h *Handle) warnf(format string, args ...any) {
	fmt.Fprintf(h.cfg.Stderr, "%s: warning: %s\n", h.cfg.Name, fmt.Sprintf(format, args...))
}

// btfKernel reports whether the kernel's types are the running
// kernel's BTF, whose modules have BTF of their own beside it.
func (h *Handle) btfKernel() (*btf.Module, bool) {
	if h.cfg.BTF != "" || h.cfg.Kernel != "" {
		return nil, false
	}
	k := h.kernelBTF()
	return k, k != nil
}

// kernelBTF returns the kernel's types if they are BTF, else nil.
func (h *Handle) kernelBTF() *btf.Module {
	for _, m := range h.modules() {
		if k, ok := m.(*btf.Module); ok && m.ModuleName() == btf.KernelModule {
			return k
		}
	}
	return nil
}
