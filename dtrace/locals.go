package dtrace

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarftypes"
	"github.com/kdtrace/kdtrace/internal/debuginfo/locals"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// locals-> is resolved here, between the probe catalog, which knows
// where each probe is (a kinst probe's function and offset, a pid
// probe's object, symbol and offset), and the debug information of the
// image the probe is in, which knows the variables in scope at that
// address and where each lives.

// maxLocalsProbes bounds the probes one description's locals are read
// at: a glob over a function's instructions is refused beyond it.
const maxLocalsProbes = 4096

// localsProbes adds locals-> to the catalog's answers.
type localsProbes struct {
	probe.Matcher
	r *localsReader
}

func (p localsProbes) Match(d *ast.ProbeDesc) (check.ProbeMatch, error) {
	m, err := p.Matcher.Match(d)
	if err != nil || m.Count == 0 {
		return m, err
	}
	desc := probe.Desc{Provider: d.Provider, Module: d.Module, Function: d.Function, Name: d.Name}
	if d.ID != 0 {
		if pr := p.Catalog.ByID(d.ID); pr != nil {
			desc = pr.Desc()
		}
	}
	m.Locals = sync.OnceValues(func() (*check.Frame, error) { return p.r.frame(p.Catalog, desc) })
	return m, nil
}

// localsReader opens the images probes are in, once each.
type localsReader struct {
	kernel func() (*debuginfo.Set, error) // the kernel's images, kinst's
	// live says the kernel's images are the running kernel's, placed
	// where its symbols' addresses say (KASLR), not where they link.
	live bool
	// debug are the options that find a stripped object's debug file.
	debug  func() debuginfo.Options
	mu     sync.Mutex
	types  map[string]*typesOrErr // by file
	frames locals.Reader
}

type typesOrErr struct {
	t   *dwarftypes.Types
	err error
}

// frame returns the locals at the probes d matches: those whose
// location and type are the same at every one of them.
func (r *localsReader) frame(cat *probe.Catalog, d probe.Desc) (*check.Frame, error) {
	ps, err := cat.Match(d)
	if err != nil {
		return nil, err
	}
	if len(ps) > maxLocalsProbes {
		return nil, fmt.Errorf("the description matches %d probes, more than the %d locals-> is read at", len(ps), maxLocalsProbes)
	}
	var f *check.Frame
	for _, p := range ps {
		g, err := r.probeFrame(p)
		if errors.Is(err, probe.ErrNoFrame) {
			return nil, fmt.Errorf("%s is no kinst probe nor pid probe in a function, where locals-> reads a traced function's variables", p)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if f == nil {
			f = g
			continue
		}
		f = locals.Merge(f, g, p.String())
	}
	if f == nil {
		return nil, errors.New("the description matches no probe")
	}
	return f, nil
}

// usesAddr reports whether a location holds DW_OP_addr.
func usesAddr(e dwarfexpr.Expr) bool {
	for _, op := range e {
		if op.Code == dwarfexpr.OpAddr {
			return true
		}
	}
	return false
}

// probeFrame reads the locals at one probe, where probe.Probe.Frame
// says it has them: a function's in the kernel's image or in a
// process's object.
func (r *localsReader) probeFrame(p *probe.Probe) (*check.Frame, error) {
	if err := p.Frame(); err != nil {
		return nil, err
	}
	switch site := p.Detail.(type) {
	case *probe.KernelSite:
		return r.kernelFrame(site)
	case *probe.UserSite:
		return r.userFrame(site)
	}
	return nil, probe.ErrNoFrame
}

func (r *localsReader) kernelFrame(site *probe.KernelSite) (*check.Frame, error) {
	if r.kernel == nil {
		return nil, errors.New("no kernel image to read debugging information from")
	}
	set, err := r.kernel()
	if err != nil {
		return nil, err
	}
	var img *debuginfo.Image
	for _, i := range set.Images() {
		if i.Module == site.Module || site.Module == "vmlinux" && i.Module == "kernel" || len(set.Images()) == 1 {
			img = i
			break
		}
	}
	if img == nil {
		return nil, fmt.Errorf("no debugging information for module %s", site.Module)
	}
	fn, err := set.Lookup(site.Function)
	if err != nil {
		return nil, err
	}
	var sym *debuginfo.Symbol
	for i, s := range fn.OutOfLine {
		if s.Module != img.Module {
			continue
		}
		if sym != nil && site.Addr == 0 {
			return nil, fmt.Errorf("%s has several symbols in %s: its locals are ambiguous", site.Function, img.Path)
		}
		if sym == nil || s.Addr == site.Addr {
			sym = &fn.OutOfLine[i]
		}
	}
	if sym == nil {
		return nil, fmt.Errorf("no function symbol %s in %s", site.Function, img.Path)
	}
	path := img.DebugPath
	if path == "" {
		path = img.Path
	}
	// The image's own types find its ORC and .eh_frame beside the debug
	// file's .debug_frame.
	t, err := r.open(path, func() (*dwarftypes.Types, error) { return dwarftypes.Open(img) })
	if err != nil {
		return nil, err
	}
	pc := sym.Addr + site.Offset
	f, err := r.frames.Frame(t, pc, locals.Func{Name: site.Function, Addr: sym.Addr, Size: sym.Size}, site.Offset == 0, false)
	if err != nil {
		return nil, err
	}
	if site.Addr != 0 {
		// A running kernel's address (KASLR) or a module's load address.
		f.Place.Bias = site.Addr - sym.Addr
	}
	if r.live && site.Addr == 0 {
		// The symbol table hides the running kernel's addresses
		// (kptr_restrict): where its data is is not known, nor where
		// its callers' return addresses are.
		for _, l := range f.Locals {
			switch {
			case usesAddr(l.Loc):
				l.Loc, l.Unavailable = nil, "it is static, and the running kernel's symbols hide where its data is"
			case l.CallValues != nil:
				l.Loc, l.Unavailable, l.Source, l.CallValues = nil, "it is its value on entry, which its callers' call sites give, and the running kernel's symbols hide where they are", "", nil
			}
		}
	}
	if img.Module != "kernel" && img.Module != "vmlinux" {
		// A module's sections are placed apart: its text's bias is
		// not its data's.
		for _, l := range f.Locals {
			switch {
			case usesAddr(l.Loc):
				l.Loc, l.Unavailable = nil, "it is static in a module, whose data's load address kdtrace does not know"
			case slices.ContainsFunc(l.CallValues, func(v check.CallValue) bool { return usesAddr(v.Value) }):
				l.Loc, l.Unavailable, l.Source, l.CallValues = nil, "it is its value on entry, which its callers compute from a module's static data, whose load address kdtrace does not know", "", nil
			}
		}
	}
	return f, nil
}

func (r *localsReader) userFrame(site *probe.UserSite) (*check.Frame, error) {
	openFile := func(path string) (*dwarftypes.Types, error) {
		return r.open(path, func() (*dwarftypes.Types, error) {
			t, err := dwarftypes.OpenFile(path, "a.out")
			var nf *debuginfo.NotFoundError
			if !errors.As(err, &nf) || r.debug == nil {
				return t, err
			}
			// A stripped object: its separate debug file, installed
			// or from the debuginfod servers.
			dbg, err := debuginfo.DebugFile(path, r.debug())
			if err != nil {
				return nil, err
			}
			return dwarftypes.OpenDebugFile(path, dbg, "a.out")
		})
	}
	t, err := openFile(site.Path)
	if err != nil && site.PID != 0 {
		// The file as the process sees it, from another mount namespace.
		if t2, err2 := openFile("/proc/" + strconv.Itoa(site.PID) + "/root" + site.Path); err2 == nil {
			t, err = t2, nil
		}
	}
	if err != nil {
		return nil, err
	}
	pc := site.Addr + site.Offset
	f, err := r.frames.Frame(t, pc, locals.Func{Addr: site.Addr, Size: site.Size}, site.Offset == 0, true)
	if err != nil {
		return nil, err
	}
	// The object may be placed anywhere (a PIE, a library): the bias is
	// the probe's address at run time minus its link address.
	f.Place.User, f.Place.PCBias, f.Place.PC = true, true, pc
	return f, nil
}

// open opens the DWARF of the file at path with openTypes, once.
func (r *localsReader) open(path string, openTypes func() (*dwarftypes.Types, error)) (*dwarftypes.Types, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if x, ok := r.types[path]; ok {
		return x.t, x.err
	}
	t, err := openTypes()
	if r.types == nil {
		r.types = map[string]*typesOrErr{}
	}
	r.types[path] = &typesOrErr{t, err}
	return t, err
}

// close releases the files open.
func (r *localsReader) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.types {
		if x.t != nil {
			x.t.Close()
		}
	}
	r.types = nil
	r.frames.Reset()
}
