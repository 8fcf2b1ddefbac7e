package dtrace

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/buildid"
	"github.com/kdtrace/kdtrace/internal/probe"
	"github.com/kdtrace/kdtrace/internal/version"
)

// The values $target takes while a program is compiled to be saved:
// above any pid Linux gives (pid_max is at most 2^22), of type int as a
// pid is. A program is compiled with each; the integer slots that hold
// the first in one and the second in the other are $target's.
const (
	savedTarget1 = 1987654301
	savedTarget2 = 1987654303
	// savedTargetPid is a pid, prime and unlikely a program's own
	// constant.
	savedTargetPid = 7919
)

// IsSaved reports whether b is a saved program rather than D: it starts
// with DOF's magic, which no D program can.
func IsSaved(b []byte) bool {
	return bytes.HasPrefix(b, []byte{dof.Mag0, dof.Mag1, dof.Mag2, dof.Mag3})
}

// Save returns the programs as a saved program (kdtrace -A): their DOF,
// with kdtrace's SectSaved section recording the build-ids of the
// kernel and modules they were compiled against, the runtime options
// set, and the integer slots of their DIF that hold $target. The handle
// must be opened with Config.Save, and the programs compiled by it.
//
// A program is compiled again with $target other values, to find its
// slots: one where $target went into a constant expression, which a
// run could not patch, is refused. Where the target is a process the
// handle created (-c), the programs were compiled against it and are
// compiled again against two more processes of its command, so that
// probe descriptions of its pid (pid$target) are found as what differs
// in their providers; the section then records them, and the build-id
// of each object of the process they name. The processes are killed
// unrun.
func (h *Handle) Save(progs ...*Program) ([]byte, error) {
	if !h.cfg.Save {
		return nil, errors.New("the handle was not opened to save programs")
	}
	all, err := ecbsOf(progs)
	if err != nil {
		return nil, err
	}
	saved := &dof.Saved{}
	// Compiled with $target savedTarget2, the program differs from
	// this one in $target's slots only; with a pid too, so that most
	// comparisons of $target with a constant, which compile to a
	// constant of their own, differ elsewhere and are refused. (0 and
	// other small values cannot serve: the code of a constant 0, or
	// of one the DIFO has already, is not that of another.) Against
	// processes, each has a pid of its own.
	first, values := savedTarget1, []int{savedTarget2, savedTargetPid}
	cmd := h.targetCommand()
	switch {
	case cmd != nil:
		first = h.target
	case h.target != 0:
		return nil, fmt.Errorf("cannot save: process %d was grabbed: a saved program is compiled against processes of a command the handle creates", h.target)
	}
	for k, v := range values {
		other, pid, err := h.compileAgain(progs, v, cmd)
		if err != nil {
			return nil, err
		}
		if k == 0 && len(all.ECBs) == len(other.ECBs) {
			for i := range all.ECBs {
				a, b := &all.ECBs[i], &other.ECBs[i]
				saved.Target = append(saved.Target, targetSlots(i, -1, a.Pred, b.Pred, first, pid)...)
				for j := range min(len(a.Actions), len(b.Actions)) {
					saved.Target = append(saved.Target, targetSlots(i, j, a.Actions[j].DIFO, b.Actions[j].DIFO, first, pid)...)
				}
				if _, ok := targetProvider(a.Probe.Provider, first); ok && a.Probe.Provider != b.Probe.Provider {
					saved.TargetProbes = append(saved.TargetProbes, i)
				}
			}
		}
		same, err := sameBut(all, other, saved, first, pid)
		if err != nil {
			return nil, err
		}
		if !same {
			return nil, errors.New("$target cannot be saved where it is compiled into a constant (an expression of constants, or a probe description other than a process's provider): a saved program takes it as a value only")
		}
	}
	for id := uint32(0); h.checker.Aggregation(id) != nil; id++ {
		saved.Aggregations = append(saved.Aggregations, dof.SavedAggregation{ID: id, Name: h.checker.Aggregation(id).Name})
	}
	if saved.BuildIDs, err = h.compiledFor(); err != nil {
		return nil, err
	}
	if saved.Objects, err = h.targetObjects(all, saved.TargetProbes); err != nil {
		return nil, err
	}
	for _, o := range h.opts.Runtime() {
		saved.Options = append(saved.Options, dof.SavedOption{Name: o.Name, Value: o.Value})
	}
	opts := &dof.Options{Comments: version.String(), Saved: saved}
	if h.cfg.Kernel == "" {
		opts.UTSName = utsname()
	}
	return dof.Write(all, opts)
}

// compileAgain compiles the programs again, in a handle of its own, as
// a handle's compiles are not independent (declarations, the sugar's
// variables), and returns their ECBs and the $target they were
// compiled with: v, or with cmd, the pid of a process of cmd it
// creates, which is killed before it returns.
func (h *Handle) compileAgain(progs []*Program, v int, cmd *exec.Cmd) (*dof.Program, int, error) {
	// What it would print (-d, -S, warnings) the first compile
	// printed.
	cfg := h.cfg
	cfg.Stdout, cfg.Stderr = nil, nil
	h2, err := Open(&cfg)
	if err != nil {
		return nil, 0, err
	}
	defer h2.Close()
	h2.opts, h2.cppOpts, h2.cpp, h2.zdefs = h.opts.Clone(), h.cppOpts, h.cpp, h.zdefs
	h2.cppOpts.Defines, h2.cppOpts.Undefs, h2.cppOpts.Includes = slices.Clone(h.cppOpts.Defines), slices.Clone(h.cppOpts.Undefs), slices.Clone(h.cppOpts.Includes)
	h2.savedTarget = v
	if cmd != nil {
		// Its standard files are none: it never runs.
		proc := exec.Command(cmd.Path)
		proc.Args, proc.Env, proc.Dir = cmd.Args, cmd.Env, cmd.Dir
		p, err := h2.Create(proc)
		if err != nil {
			return nil, 0, err
		}
		v = p.pid
	}
	again := make([]*Program, len(progs))
	for i, p := range progs {
		q, err := h2.compile(p.Spec, p.Source, p.src, p.flags)
		if err != nil {
			return nil, 0, err
		}
		again[i] = q
	}
	ecbs, err := ecbsOf(again)
	return ecbs, v, err
}

// targetCommand returns the command of the process the handle created
// that is $target, or nil if it created none.
func (h *Handle) targetCommand() *exec.Cmd {
	for _, p := range h.procs {
		if p.created && p.pid == h.target {
			return p.cmd
		}
	}
	return nil
}

// targetProvider returns the provider's name without pid at its end
// (pid for pid1234), and whether it ends in pid.
func targetProvider(prov string, pid int) (string, bool) {
	n := strconv.Itoa(pid)
	prefix, ok := strings.CutSuffix(prov, n)
	if !ok || prefix == "" || prefix[len(prefix)-1] >= '0' && prefix[len(prefix)-1] <= '9' {
		return "", false
	}
	return prefix, true
}

// sameBut reports whether b is a, compiled with $target first, with
// the saved program's slots holding v and its target probes' providers
// ending in v.
func sameBut(a, b *dof.Program, saved *dof.Saved, first, v int) (bool, error) {
	retarget := func(from, to int) error {
		for _, s := range saved.Target {
			d, err := s.DIFO(a)
			if err != nil {
				return err
			}
			d.Ints[s.Int] = uint64(to)
		}
		for _, e := range saved.TargetProbes {
			p := &a.ECBs[e].Probe
			prefix, _ := targetProvider(p.Provider, from)
			p.Provider = prefix + strconv.Itoa(to)
		}
		return nil
	}
	if err := retarget(first, v); err != nil {
		return false, err
	}
	x, err := dof.Write(a, nil)
	if rerr := retarget(v, first); err == nil {
		err = rerr
	}
	if err != nil {
		return false, err
	}
	y, err := dof.Write(b, nil)
	if err != nil {
		return false, err
	}
	return bytes.Equal(x, y), nil
}

// ecbsOf returns the ECBs of the programs, as a copy DOF writes.
func ecbsOf(progs []*Program) (*dof.Program, error) {
	b, err := DOF(progs...)
	if err != nil {
		return nil, err
	}
	f, err := dof.Read(b, nil)
	if err != nil {
		return nil, err
	}
	return f.Program()
}

// targetSlots returns the slots of a, a DIFO compiled with $target
// t1, that hold t2 in b, its compile with that.
func targetSlots(ecb, action int, a, b *dof.DIFO, t1, t2 int) []dof.TargetSlot {
	if a == nil || b == nil || len(a.Ints) != len(b.Ints) {
		return nil
	}
	var slots []dof.TargetSlot
	for i := range a.Ints {
		if a.Ints[i] == uint64(t1) && b.Ints[i] == uint64(t2) {
			slots = append(slots, dof.TargetSlot{ECB: ecb, Action: action, Int: i})
		}
	}
	return slots
}

// compiledFor returns the build-ids of the images the handle compiles
// against: the --kernel image's, or the running kernel's, and each
// --module image's, by the module's name.
func (h *Handle) compiledFor() ([]dof.BuildID, error) {
	var ids []dof.BuildID
	if h.cfg.Kernel != "" {
		id, err := buildid.Path(h.cfg.Kernel)
		if err != nil {
			return nil, fmt.Errorf("cannot save: --kernel %s: %v", h.cfg.Kernel, err)
		}
		ids = append(ids, dof.BuildID{Name: "vmlinux", ID: id})
	} else {
		// The running kernel's probes and types were compiled
		// against, with --module's images or without.
		id, err := buildid.Running(sysRoot, "vmlinux")
		if err != nil {
			return nil, fmt.Errorf("cannot save: %v", err)
		}
		ids = append(ids, dof.BuildID{Name: "vmlinux", ID: id})
	}
	for _, m := range h.cfg.Modules {
		id, err := buildid.Path(m)
		if err != nil {
			return nil, fmt.Errorf("cannot save: --module %s: %v", m, err)
		}
		ids = append(ids, dof.BuildID{Name: moduleName(m), ID: id})
	}
	return ids, nil
}

// targetObjects returns the build-ids of the objects of the target
// process that the probes of ECBs probes name, by the names a run
// finds them by: a module the description names, or for a pattern
// (or none), the base name of each object whose probes it matched.
func (h *Handle) targetObjects(p *dof.Program, probes []int) ([]dof.BuildID, error) {
	if len(probes) == 0 {
		return nil, nil
	}
	if h.catalog == nil {
		return nil, errors.New("cannot save: no probes can be found on this system")
	}
	var ids []dof.BuildID
	seen := make(map[string]bool)
	add := func(mod string) error {
		if seen[mod] {
			return nil
		}
		seen[mod] = true
		file, err := h.catalog.ObjectFile(h.target, mod)
		if err != nil || file == "" {
			return err
		}
		id, err := buildid.Path(file)
		if err != nil {
			return fmt.Errorf("process %d's object %s (%s) cannot be checked by a run: %v", h.target, mod, file, err)
		}
		ids = append(ids, dof.BuildID{Name: mod, ID: id})
		return nil
	}
	for _, e := range probes {
		d := p.ECBs[e].Probe
		if d.Module != "" && !strings.ContainsAny(d.Module, "*?[\\") {
			if err := add(d.Module); err != nil {
				return nil, fmt.Errorf("cannot save: %v", err)
			}
			continue
		}
		matched, err := h.catalog.Match(probe.Desc{Provider: d.Provider, Module: d.Module, Function: d.Function, Name: d.Name})
		if err != nil {
			return nil, fmt.Errorf("cannot save: %v", err)
		}
		for _, m := range matched {
			if err := add(m.Module); err != nil {
				return nil, fmt.Errorf("cannot save: %v", err)
			}
		}
	}
	return ids, nil
}

// checkObjects checks that the objects a saved program was compiled for
// are those the target process maps, by their build-ids.
func (h *Handle) checkObjects(name string, objs []dof.BuildID) error {
	if err := h.setup(); err != nil {
		return err
	}
	if h.catalog == nil {
		return errors.New("no probes can be found on this system")
	}
	for _, o := range objs {
		file, err := h.catalog.ObjectFile(h.target, o.Name)
		if err != nil {
			return err
		}
		if file == "" {
			return fmt.Errorf("%s was compiled for object %s, which process %d does not map", name, o.Name, h.target)
		}
		id, err := buildid.Path(file)
		if err != nil {
			return fmt.Errorf("process %d's object %s: %v", h.target, o.Name, err)
		}
		if id != o.ID {
			return &BuildIDError{File: name, Image: o.Name, Saved: o.ID, Running: id, Pid: h.target}
		}
	}
	return nil
}

// Load reads a program saved by Save from the file called name, to be
// enabled as a compiled one: the images it was compiled for must be
// the running kernel and modules, and the objects of the target process
// its pid and USDT probes name, by their build-ids, or Load returns a
// *BuildIDError. The runtime options it was saved with are set unless
// already set (by the command line); $target's slots, and those probe
// descriptions' providers, take the target process of -c or -p, as a
// compile would.
func (h *Handle) Load(name string, b []byte) (*Program, error) {
	f, err := dof.Read(b, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	saved, err := f.Saved()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if saved == nil {
		return nil, fmt.Errorf("%s: not a program saved by %s -A: it records no build-ids to check", name, h.cfg.Name)
	}
	for _, id := range saved.BuildIDs {
		running, err := buildid.Running(sysRoot, id.Name)
		if err != nil {
			return nil, fmt.Errorf("%s was compiled for %s: %v", name, id.Name, err)
		}
		if running != id.ID {
			return nil, &BuildIDError{File: name, Image: id.Name, Saved: id.ID, Running: running}
		}
	}
	prog, err := f.Program()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if (len(saved.TargetProbes) > 0 || len(saved.Objects) > 0) && h.target == 0 {
		return nil, fmt.Errorf("%s probes its target process's objects (pid$target): it runs with the process given by -c or -p", name)
	}
	for _, e := range saved.TargetProbes {
		if e >= len(prog.ECBs) {
			return nil, fmt.Errorf("%s: target probe ECB %d of %d", name, e, len(prog.ECBs))
		}
		p := &prog.ECBs[e].Probe
		p.Provider = strings.TrimRight(p.Provider, "0123456789") + strconv.Itoa(h.target)
	}
	for _, s := range saved.Target {
		d, err := s.DIFO(prog)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		d.Ints[s.Int] = uint64(h.target)
	}
	for _, o := range saved.Options {
		if _, ok := h.opts.Value(o.Name); ok {
			continue
		}
		if err := h.SetOpt(o.Name, o.Value); err != nil {
			return nil, fmt.Errorf("%s: failed to set option %s: %v", name, o.Name, err)
		}
	}
	// Once its options are set, which setting up the handle, as
	// finding the process's objects does, reads.
	if len(saved.Objects) > 0 {
		if err := h.checkObjects(name, saved.Objects); err != nil {
			return nil, err
		}
	}
	h.savedAggs = make(map[uint32]string)
	for _, a := range saved.Aggregations {
		h.savedAggs[a.ID] = a.Name
	}
	return &Program{Spec: Script, Source: name, object: prog}, nil
}

// BuildIDError is a saved program refused because an image it was
// compiled for is not the one running, as libdtrace refuses a debug
// file whose build-id is not its object's.
type BuildIDError struct {
	File    string // the saved program
	Image   string // vmlinux, the module's name, or the process's object's
	Saved   string // the build-id it was compiled for
	Running string // the running image's
	Pid     int    // the process whose object Image is; 0 for the kernel's
}

func (e *BuildIDError) Error() string {
	what := "the running kernel"
	switch {
	case e.Pid != 0:
		what = fmt.Sprintf("process %d's %s", e.Pid, e.Image)
	case e.Image != "vmlinux":
		what = "the running module " + e.Image
	}
	return fmt.Sprintf("%s was compiled for %s build-id %s, but %s has build-id %s", e.File, e.Image, e.Saved, what, e.Running)
}

// sysRoot is where the running kernel's /sys is; tests move it.
var sysRoot = "/"

// moduleName returns the name a module image is loaded by: its
// .modinfo's name, else its file name without .ko, as the kernel names
// modules (dashes as underscores).
func moduleName(path string) string {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		if s := f.Section(".modinfo"); s != nil && s.Type != elf.SHT_NOBITS {
			if d, err := s.Data(); err == nil {
				for _, kv := range strings.Split(string(d), "\x00") {
					if n, ok := strings.CutPrefix(kv, "name="); ok && n != "" {
						return n
					}
				}
			}
		}
	}
	base := filepath.Base(path)
	if i := strings.Index(base, ".ko"); i > 0 {
		base = base[:i]
	}
	return strings.ReplaceAll(base, "-", "_")
}

// savedSymbols gives the checker kernel symbols without their
// addresses: those of the image compiled against are not those of the
// kernel that runs a saved program, which relocates itself at boot.
type savedSymbols struct{ check.Symbols }

func (s savedSymbols) Symbol(mod, name string) (*check.KernelSymbol, error) {
	ks, err := s.Symbols.Symbol(mod, name)
	if err != nil {
		return nil, err
	}
	c := *ks
	c.Addr, c.HasAddr = 0, false
	c.NoAddr = "a saved program cannot hold a kernel address, as the kernel that runs it places itself at boot (KASLR)"
	return &c, nil
}

// utsname returns the running system's struct utsname, as dtrace
// writes it in DOF's UTSNAME section.
func utsname() []byte {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return nil
	}
	return bytes.Clone(unsafe.Slice((*byte)(unsafe.Pointer(&u)), unsafe.Sizeof(u)))
}
