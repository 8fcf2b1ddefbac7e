package linux

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/internal/linux/attach"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// A trampoline is what a group of an fbt probe on an fentry or fexit
// program keeps to go back on a kprobe: the kprobe group it came from
// and the probe's entry there, in that group's numbering of clauses.
type trampoline struct {
	from  *group
	entry *bpf.ProbeEntry
}

// maxTrampolines is how many fbt probes (and functions of SDT probes)
// of an enabling go on trampolines where the kernel also has kprobes.
// Each is a program of its own, checked by the verifier, attached on
// its own (the kernel patches the function's text and builds the
// trampoline), and two file descriptors; past this many, one kprobe
// program serving every probe costs less to set up. A kernel without
// kprobes gets trampolines however many.
const maxTrampolines = 64

// splitTrampolines gives each fbt site that can go on a BPF trampoline
// a group of its own, of context CtxFEntry or CtxFExit, put before the
// kprobe group it leaves: a trampoline serves one function, and its
// program is loaded for it. The group of SDT sites at a function
// (fnGroup) goes on a trampoline whole. A site stays on its kprobe
// where the kernel has no trampolines, where the enabling has more than
// maxTrampolines fbt probes and the kernel has kprobes, where a clause
// of its probe reads regs[] (a trampoline saves no registers), or where
// the function's BTF rules fentry out (attach.TrampolineTarget); note
// is told which and why.
func splitTrampolines(order []*group, note func(string)) ([]*group, error) {
	n, nfbt := 0, 0
	for _, g := range order {
		switch {
		case strings.HasPrefix(g.name, "fbt-"):
			n += len(g.kernel)
			nfbt += len(g.kernel)
		case g.atFunction():
			n++
		}
	}
	if n == 0 {
		// Asking the kernel costs a reading of its BTF.
		return order, nil
	}
	haveErr := attach.HaveTrampolines()
	if haveErr != nil {
		if kerr := attach.HaveKprobes(); kerr != nil {
			what := "fbt probes"
			if nfbt == 0 {
				what = firstAtFunction(order).label()
			}
			return nil, kernelImpossible(what, haveErr, kerr)
		}
	}
	if haveErr == nil && n > maxTrampolines && attach.HaveKprobes() == nil {
		haveErr = fmt.Errorf("%d fbt probes and functions of SDT probes, over the %d trampolines kdtrace makes: one kprobe program serves them all", n, maxTrampolines)
	}
	var out []*group
	for _, g := range order {
		if g.atFunction() {
			if why := g.functionRefusal(haveErr); why != nil {
				// A kernel without kprobes that cannot put it on a
				// trampoline cannot put it in place.
				if kerr := attach.HaveKprobes(); kerr != nil {
					return nil, fmt.Errorf("%s: %w", g.label(), kerr)
				}
				note(fmt.Sprintf("%s: kprobe (%v)", g.label(), why))
			} else {
				out = append(out, g.functionTrampoline())
			}
			out = append(out, g)
			continue
		}
		if len(g.kernel) == 0 || !strings.HasPrefix(g.name, "fbt-") {
			out = append(out, g)
			continue
		}
		names := make([]string, len(g.kernel))
		for name, i := range g.index {
			names[i] = name
		}
		var kept []int
		for i, s := range g.kernel {
			why := haveErr
			if why == nil {
				why = trampolineRefusal(g, uint32(i), s)
			}
			if why != nil {
				note(fmt.Sprintf("%s: kprobe (%v)", names[i], why))
				kept = append(kept, i)
				continue
			}
			out = append(out, g.trampolineGroup(names[i], uint32(i)))
		}
		g.keep(kept)
		out = append(out, g)
	}
	return out, nil
}

// atFunction tells whether g is the group of SDT sites at a kernel
// function's entry (fnGroup).
func (g *group) atFunction() bool {
	return g.kind == probe.KindSDT && strings.HasPrefix(g.name, fnGroup)
}

// firstAtFunction returns the first group of order at a function.
func firstAtFunction(order []*group) *group {
	for _, g := range order {
		if g.atFunction() {
			return g
		}
	}
	return nil
}

// label names group g at a function by its probes and the function:
// "sched:vmlinux::tick at sched_tick()".
func (g *group) label() string {
	names := make([]string, len(g.index))
	for name, i := range g.index {
		names[i] = name
	}
	return strings.Join(names, ", ") + " at " + g.kernel[0].Function + "()"
}

// functionRefusal says why group g at a function stays on its kprobe:
// haveErr, a clause reading regs[], or the function's BTF; nil when it
// can go on a trampoline.
func (g *group) functionRefusal(haveErr error) error {
	if haveErr != nil {
		return haveErr
	}
	for _, c := range g.clauses {
		if bpf.ReadsRegs(c.ECB) {
			return errors.New("a clause reads regs[]")
		}
	}
	if err := attach.TrampolineTarget(g.kernel[0]); err != nil {
		return fmt.Errorf("no fentry: %w", err)
	}
	return nil
}

// functionTrampoline returns the group of group g at a function on an
// fentry trampoline: its probes, clauses and sites. g keeps them, but
// not its function, to take it back if the kernel refuses the
// trampoline.
func (g *group) functionTrampoline() *group {
	t := &group{name: g.label(), kind: g.kind, ctx: bpf.CtxFEntry, clauses: g.clauses, ecbs: g.ecbs, entries: g.entries, index: g.index,
		kernel: g.kernel, sites: g.sites, rawArgs: g.rawArgs, tramp: &trampoline{from: g}}
	g.kernel = nil
	return t
}

// backOnKprobe gives the site of group g, on a trampoline the kernel
// refused, back to the kprobe group it came from.
func (g *group) backOnKprobe() {
	if g.tramp.from.atFunction() {
		g.tramp.from.kernel = g.kernel
		return
	}
	g.tramp.from.addKernelSite(g.name, g.kernel[0], g.tramp.entry)
}

// leaveOutAtFunctions returns ps without the SDT probes whose sites are
// all at kernel functions when desc matches several probes and this
// kernel can put no probe at a function (it has neither BPF trampolines
// nor kprobes): a glob leaves out what cannot be traced, saying so once
// to warn, as the pid provider leaves out what uprobes refuse. A
// description that names one probe keeps it, and is refused in place.
func leaveOutAtFunctions(desc dof.ProbeSpec, ps []*probe.Probe, warn func(error)) []*probe.Probe {
	d := probe.Desc{Provider: desc.Provider, Module: desc.Module, Function: desc.Function, Name: desc.Name}
	if d.Name != "" && !strings.ContainsAny(d.Provider+d.Name, "*?[\\") {
		return ps
	}
	var out, left []*probe.Probe
	for _, p := range ps {
		if sdt, ok := p.Detail.(*probe.SDT); ok && allAtFunctions(sdt) {
			left = append(left, p)
			continue
		}
		out = append(out, p)
	}
	if len(left) == 0 {
		return ps
	}
	terr := attach.HaveTrampolines()
	kerr := attach.HaveKprobes()
	if terr == nil || kerr == nil {
		return ps
	}
	if warn != nil {
		what := fmt.Sprintf("%d probes", len(left))
		if len(left) == 1 {
			what = "1 probe"
		}
		warn(fmt.Errorf("description '%s' leaves out %s at kernel functions (%s): %w",
			d, what, left[0], kernelImpossible("them", terr, kerr)))
	}
	return out
}

// allAtFunctions reports whether every site of d is a kernel function's.
func allAtFunctions(d *probe.SDT) bool {
	for _, s := range d.Sites {
		if s.Function == "" {
			return false
		}
	}
	return len(d.Sites) > 0
}

// kernelImpossible names, in one sentence, both ways what (fbt probes,
// an SDT probe at a function) could go in place and why this kernel
// offers neither.
func kernelImpossible(what string, trampErr, kprobeErr error) error {
	reason := kprobeErr.Error()
	var ke *attach.KprobesError
	if errors.As(kprobeErr, &ke) {
		reason = ke.Reason
	}
	return fmt.Errorf("this kernel cannot put %s in place: it has no BPF trampolines (%v), and %s", what, trampErr, reason)
}

// trampolineRefusal says why site s, index i of kprobe group g, cannot
// go on a trampoline, or returns nil.
func trampolineRefusal(g *group, i uint32, s *probe.KernelSite) error {
	for c, epid := range g.entries[i].EPIDs {
		if epid != 0 && bpf.ReadsRegs(g.clauses[c].ECB) {
			return errors.New("a clause reads regs[]")
		}
	}
	if err := attach.TrampolineTarget(s); err != nil {
		return fmt.Errorf("no fentry: %w", err)
	}
	return nil
}

// trampolineGroup returns the group of site i of kprobe group g on a
// trampoline: the clauses of its probe, its entry at index 0.
func (g *group) trampolineGroup(name string, i uint32) *group {
	ctx := bpf.CtxFEntry
	if g.kernel[i].Return {
		ctx = bpf.CtxFExit
	}
	ent := g.entries[i]
	t := &group{name: name, kind: g.kind, ctx: ctx, ecbs: map[*enabling.ECB]int{}, kernel: []*probe.KernelSite{g.kernel[i]},
		index: map[string]uint32{name: 0}, tramp: &trampoline{from: g, entry: ent}}
	mine := &bpf.ProbeEntry{ID: ent.ID}
	for c, epid := range ent.EPIDs {
		if epid == 0 {
			continue
		}
		t.ecbs[g.clauses[c].ECB] = len(t.clauses)
		t.clauses = append(t.clauses, g.clauses[c])
		mine.EPIDs = append(mine.EPIDs, epid)
	}
	t.entries = map[uint32]*bpf.ProbeEntry{0: mine}
	return t
}

// keep leaves kprobe group g the sites of the given indexes, numbered
// anew from 0.
func (g *group) keep(sites []int) {
	names := make(map[uint32]string, len(g.index))
	for name, i := range g.index {
		names[i] = name
	}
	kernel, entries := g.kernel, g.entries
	g.kernel, g.entries, g.index = nil, map[uint32]*bpf.ProbeEntry{}, map[string]uint32{}
	for _, i := range sites {
		g.addKernelSite(names[uint32(i)], kernel[i], entries[uint32(i)])
	}
}

// addKernelSite adds a site, of the named probe, to kprobe group g with
// its entry.
func (g *group) addKernelSite(name string, s *probe.KernelSite, ent *bpf.ProbeEntry) {
	n := uint32(len(g.kernel))
	g.kernel = append(g.kernel, s)
	g.entries[n] = ent
	g.index[name] = n
}

// trampolines loads the programs of the groups of fbt probes on
// trampolines, together, and attaches them. A probe whose program or
// link the kernel refuses goes back on the kprobe group it came from:
// when the programs cannot be loaded together, each is loaded alone, to
// find which.
func (t *Tracing) trampolines(order []*group, pps []*bpf.ProbeProgram, lay *bpf.Layout, note func(string)) error {
	var (
		gs []*group
		ts []bpf.Trampoline
	)
	for i, g := range order {
		if g.tramp == nil {
			continue
		}
		// A trampoline's program is never split (BuildChain): one link.
		links, own, err := t.build(g, pps[i], lay)
		if err != nil {
			return err
		}
		gs = append(gs, g)
		ts = append(ts, bpf.Trampoline{Name: "kdt_" + progName(g.kernel[0].Function), Context: g.ctx, Insns: links[0].Insns, Own: own, Function: g.kernel[0].Function})
	}
	if len(ts) == 0 {
		return nil
	}
	progs, err := t.rt.LoadTrampolines(ts, attach.KernelTypes())
	errs := make([]error, len(ts))
	if err != nil {
		progs = make([]*ebpf.Program, len(ts))
		for i := range ts {
			var p []*ebpf.Program
			if p, errs[i] = t.rt.LoadTrampolines(ts[i:i+1], attach.KernelTypes()); errs[i] == nil {
				progs[i] = p[0]
			}
		}
	}
	if err := t.aggsMade(); err != nil {
		return err
	}
	for i, g := range gs {
		if errs[i] == nil {
			a, err := attach.Trampoline(progs[i], g.kernel[0])
			if err == nil {
				t.progs = append(t.progs, progs[i])
				t.closers = append(t.closers, a)
				kind := "fentry"
				if g.ctx == bpf.CtxFExit {
					kind = "fexit"
				}
				note(g.name + ": " + kind)
				continue
			}
			progs[i].Close()
			errs[i] = err
		}
		note(fmt.Sprintf("%s: kprobe (the kernel refused its trampoline: %v)", g.name, errs[i]))
		g.backOnKprobe()
	}
	return nil
}
