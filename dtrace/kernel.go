package dtrace

import (
	"errors"
	"io/fs"
	"runtime"
	"sync"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/btf"
	"github.com/kdtrace/kdtrace/internal/buildid"
	"github.com/kdtrace/kdtrace/internal/cachefile"
	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarftypes"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
	"github.com/kdtrace/kdtrace/internal/kinst"
	"github.com/kdtrace/kdtrace/internal/ksym"
	"github.com/kdtrace/kdtrace/internal/linux/attach"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// kernelTypes returns the kernel's types for the checker: the BTF file
// Config.BTF names ("none" for no kernel types); for a Config.Kernel
// image, its .BTF section, else its DWARF; for the running kernel, its
// BTF on Linux and its DWARF on FreeBSD. Files are opened here but read
// only when a program names a type. A kernel without types is not an
// error: programs that name none still compile, and those that do are
// told which type is missing. A BTF file that was named but does not
// open is.
// debugOptions are how the handle opens debug information: the
// problems met, such as a cache not used, are warnings, and an image is
// indexed for the functions a program names, not wholly (Lazy).
func (h *Handle) debugOptions() debuginfo.Options {
	return debuginfo.Options{DebugRoot: h.cfg.DebugRoot, Warn: func(w debuginfo.Warning) { h.warnf("%v", w) },
		Debuginfod: h.debuginfod, Context: h.cfg.Context, Lazy: true}
}

// kernelTypes returns the kernel's types that the Config names: none
// (--btf none), a BTF file's, or the --kernel image's; on FreeBSD, the
// running kernel's DWARF. The running Linux kernel's are runningTypes'.
func (h *Handle) kernelTypes() ([]types.Module, error) {
	switch {
	case h.cfg.BTF == "none":
		return nil, nil
	case h.cfg.BTF != "":
		m, err := btf.Open(h.cfg.BTF, nil)
		if err != nil {
			return nil, &FileError{"--btf", err}
		}
		return []types.Module{m}, nil
	case h.cfg.Kernel != "":
		if m, err := btf.Open(h.cfg.Kernel, nil); err == nil {
			return []types.Module{m}, nil
		}
		img, err := debuginfo.OpenImage(h.cfg.Kernel, h.debugOptions())
		if err == nil {
			return h.dwarfTypes(img), nil
		}
		h.warnf("no kernel types in %s: %v", h.cfg.Kernel, err)
		return nil, nil
	}
	set, err := debuginfo.Kernel(h.debugOptions())
	if err != nil || len(set.Images()) == 0 {
		return nil, nil
	}
	return h.dwarfTypes(set.Images()[0]), nil
}

// runningTypes reads the running Linux kernel's BTF on another
// goroutine, from Open on: the D libraries first need it, once the
// probe catalog and the checker are made and the program's probes are
// being looked up (warm), which it costs as much as. The function it
// returns waits for the types, and warns once if there are none.
func (h *Handle) runningTypes() func() []types.Module {
	type result struct {
		mods []types.Module
		err  error
	}
	done := make(chan result, 1)
	go func() {
		m, err := runningKernelTypes()
		done <- result{m, err}
	}()
	return sync.OnceValue(func() []types.Module {
		r := <-done
		if r.err != nil {
			h.warnf("no kernel types: %v", r.err)
		}
		return r.mods
	})
}

// runningKernelTypes returns the running kernel's BTF, none for a
// kernel built without it.
func runningKernelTypes() ([]types.Module, error) {
	m, err := btf.Kernel()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // a kernel built without BTF
	}
	if err != nil {
		return nil, err
	}
	// The index of the kernel's types is kept between runs. A cache
	// directory refused here is not reported: it costs only speed,
	// and the debug information's caches say so when they need it.
	if id, err := buildid.Running("/", btf.KernelModule); err == nil {
		m.UseCache(cachefile.Open("", false, nil), id)
	}
	return []types.Module{m}, nil
}

// dwarfTypes returns an image's DWARF types, named as the target's
// kernel module is named in D: vmlinux on Linux, kernel on FreeBSD.
func (h *Handle) dwarfTypes(img *debuginfo.Image) []types.Module {
	t, err := dwarftypes.Open(img)
	if err != nil {
		h.warnf("no kernel types: %v", err)
		return nil
	}
	if runtime.GOOS == "freebsd" {
		return []types.Module{t}
	}
	return []types.Module{linuxKernel{t}}
}

// linuxKernel names a kernel's DWARF types vmlinux, as BTF names them.
type linuxKernel struct{ *dwarftypes.Types }

func (linuxKernel) ModuleName() string { return btf.KernelModule }

// loadModule opens the BTF of a running kernel's module the first time
// a program scopes a type name by it.
func (h *Handle) loadModule(name string) (types.Module, error) {
	k, ok := h.btfKernel()
	if !ok {
		return nil, nil
	}
	m, err := h.moduleBTF(k, name)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// moduleBTF reads the BTF of the running kernel's module name, split
// from k, once per handle: the checker, the probe catalog and the
// symbol resolver each ask for it, the resolver at every symbol.
func (h *Handle) moduleBTF(k *btf.Module, name string) (*btf.Module, error) {
	h.modBTFMu.Lock()
	defer h.modBTFMu.Unlock()
	if r, ok := h.modBTF[name]; ok {
		return r.m, r.err
	}
	m, err := btf.LoadModule(k, name)
	if h.modBTF == nil {
		h.modBTF = make(map[string]loadedBTF)
	}
	h.modBTF[name] = loadedBTF{m, err}
	return m, err
}

// loadedBTF is a module's BTF or the error of reading it.
type loadedBTF struct {
	m   *btf.Module
	err error
}

// probes returns what the checker asks about probe descriptions: the
// catalog of the Config.Kernel image's probes, or of the running
// system's. Where no catalog can be had (FreeBSD until the runtime
// talks to /dev/dtrace), descriptions are not matched.
func (h *Handle) probes() check.Probes {
	cfg := probe.Config{Types: h.probeTypes, Symbols: h.ksyms.Table, Warn: func(err error) { h.warnf("%v", err) },
		DebugFile: func(path string) (string, error) { return debuginfo.DebugFile(path, h.debugOptions()) }}
	var cat *probe.Catalog
	var err error
	if h.cfg.Kernel != "" {
		cat, err = probe.Offline(h.cfg.Kernel, h.cfg.Modules, cfg)
	} else {
		// The calls the backend can attach to: the running
		// kernel's own.
		cfg.Syscalls = attach.SyscallNames()
		cfg.Cache = cachefile.Open("", false, nil)
		cat, err = probe.Live(cfg)
	}
	if err != nil {
		return nil
	}
	h.catalog = cat
	h.locals = &localsReader{kernel: h.kinst.images, live: !h.kinst.offline(), debug: h.debugOptions}
	return localsProbes{probe.Matcher{Catalog: cat}, h.locals}
}

// probeTypes gives fbt and syscall probes their argument types from the
// kernel's types the checker uses, and a module's own BTF.
func (h *Handle) probeTypes(module string) (probe.KernelTypes, error) {
	for _, m := range h.modules() {
		if m.ModuleName() == module {
			if kt, ok := m.(probe.KernelTypes); ok {
				return kt, nil
			}
		}
	}
	if h.cfg.Kernel != "" || h.cfg.BTF == "none" {
		return nil, nil
	}
	if k := h.kernelBTF(); k != nil {
		mb, err := h.moduleBTF(k, module)
		if errors.Is(err, fs.ErrNotExist) {
			// A module built without BTF (out of tree): its probes'
			// arguments are untyped, as without any kernel types.
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return mb, nil
	}
	return nil, nil
}

// lazyKinst opens the images on the first kinst question, so that
// programs without kinst probes never read debug information.
type lazyKinst struct {
	h      *Handle
	compat bool

	set *debuginfo.Set
	r   *kinst.Resolver
	err error
}

// offline reports whether images were named, rather than the running
// kernel's to be read.
func (l *lazyKinst) offline() bool {
	return l.h.cfg.Kernel != "" || len(l.h.cfg.Modules) > 0
}

func (l *lazyKinst) resolver() (*kinst.Resolver, error) {
	if l.r != nil || l.err != nil {
		return l.r, l.err
	}
	cfg := &l.h.cfg
	opts := l.h.debugOptions()
	if l.offline() {
		l.set, l.err = debuginfo.Open(cfg.Kernel, cfg.Modules, opts)
	} else {
		l.set, l.err = debuginfo.Kernel(opts)
	}
	// A running kernel whose own debug image is missing while some
	// modules' are found answers for the modules' functions.
	var noKernel error
	if l.err == nil && !l.offline() {
		noKernel = l.set.KernelError()
	}
	var syms *ksym.Table
	if (l.err != nil || noKernel != nil) && (cfg.Kernel != "" || len(cfg.Modules) == 0) {
		// Without debug information, offsets are checked against the
		// code the kernel's symbol table finds (modules' files have
		// none to give).
		var serr error
		if syms, serr = l.h.ksyms.Table(); serr != nil && l.err != nil {
			return nil, l.err
		}
	}
	if l.err != nil && syms == nil {
		return nil, l.err
	}
	if syms != nil {
		warnDebuginfod(l.h, l.err, noKernel)
	}
	l.r = &kinst.Resolver{Set: l.set, Symbols: syms, NoDebug: l.err, NoKernel: noKernel, Compat: l.compat, ZeroMatch: l.h.zdefs,
		Warn: func(err error) { l.h.warnf("%v", err) }}
	l.err = nil
	return l.r, nil
}

// images returns the kernel's images with debug information, for
// locals->.
func (l *lazyKinst) images() (*debuginfo.Set, error) {
	r, err := l.resolver()
	if err != nil {
		return nil, err
	}
	if l.set == nil {
		return nil, r.NoDebug
	}
	return l.set, nil
}

func (l *lazyKinst) Sites(fn string, ret bool) (*sugar.Sites, error) {
	r, err := l.resolver()
	if err != nil {
		return nil, err
	}
	return r.Sites(fn, ret)
}

// CheckOffset checks kinst::fn:off against the code of fn: that of the
// images named in the Config, or the running kernel's, found through
// debug information or the symbol table.
func (l *lazyKinst) CheckOffset(fn string, off uint64) error {
	r, err := l.resolver()
	if err != nil {
		return err
	}
	return r.CheckOffset(fn, off)
}

// close releases the images, if they were opened.
func (l *lazyKinst) close() {
	if l.set != nil {
		l.set.Close()
	}
}

// symbols resolves the kernel's symbols (`sym): the Config.Kernel
// image's symbol table, or the running kernel's kallsyms, read when a
// program first names one; typed by the kernel's types, and for a
// Config.Kernel image whose types are BTF, which seldom lists more than
// the per-CPU variables, then by its DWARF.
func (h *Handle) symbols() *ksym.Resolver {
	load := func() (*ksym.Table, error) { return ksym.Kallsyms("/proc/kallsyms", "/proc/kcore") }
	if h.cfg.Kernel != "" {
		load = func() (*ksym.Table, error) { return ksym.ReadELF(h.cfg.Kernel) }
	}
	dwarf := sync.OnceValue(func() ksym.VarTypes {
		if t, err := dwarftypes.OpenFile(h.cfg.Kernel, btf.KernelModule); err == nil {
			return t
		}
		return nil
	})
	return &ksym.Resolver{Load: load, Types: func(mod string) ([]ksym.VarTypes, error) {
		var srcs []ksym.VarTypes
		for _, m := range h.modules() {
			if v, ok := m.(ksym.VarTypes); ok && m.ModuleName() == mod {
				srcs = append(srcs, v)
				if _, ok := m.(*btf.Module); ok && mod == btf.KernelModule && h.cfg.Kernel != "" && h.cfg.BTF == "" && dwarf() != nil {
					srcs = append(srcs, dwarf())
				}
			}
		}
		if len(srcs) == 0 && mod != btf.KernelModule {
			if m, err := h.loadModule(mod); err == nil {
				if v, ok := m.(ksym.VarTypes); ok {
					srcs = append(srcs, v)
				}
			}
		}
		return srcs, nil
	}}
}
