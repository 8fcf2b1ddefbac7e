package probe

import (
	"fmt"
	"sort"
	"sync"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// A KernelSite is where an fbt or kinst probe goes.
type KernelSite struct {
	Module, Function string
	// Return is set for an fbt return probe.
	Return bool
	// Offset is a kinst probe's offset from the function's entry.
	Offset uint64
	// Addr and Size are the function's address and size in bytes where
	// the catalog knows them (offline images, kallsyms), else 0.
	Addr, Size uint64
}

// fbtProvider is the fbt provider: fbt:module:function:entry and
// :return for every function of the kernel and its modules. Entry
// probes' arguments are the function's parameters; return probes have
// args[0], the offset of the returning instruction (int), and args[1],
// the return value, as FreeBSD's fbt.
//
// As dtrace's fbt makes probes only for the functions it can
// instrument, a glob over functions matches only the functions the
// kernel lets fbt probe, where the catalog knows them (see probeable);
// a function named in full is matched whatever the kernel says of it,
// so that enabling it fails with the kernel's reason rather than with
// "no probes".
type fbtProvider struct {
	k *kernel

	orderOnce sync.Once
	order     []fbtModule // for probe IDs, made on first use
}

func (*fbtProvider) Name() string           { return "fbt" }
func (*fbtProvider) Attributes() attributes { return kernelAttr }

func (f *fbtProvider) Probes(q *query, yield func(*Probe) bool) error {
	entry, ret := q.Name.Match("entry"), q.Name.Match("return")
	if !entry && !ret {
		return nil
	}
	pr, err := f.probeable(q)
	if err != nil {
		return err
	}
	_, err = f.k.walkFuncs(q, func(l *funcList, i int) bool {
		fn := l.name(i)
		if pr != nil && !pr.has(l.module, fn) {
			return true
		}
		var r symRange
		if l.syms != nil {
			r = l.syms[i]
		}
		if entry && !yield(f.probe(l.module, fn, r, false)) {
			return false
		}
		return !ret || yield(f.probe(l.module, fn, r, true))
	})
	return err
}

func (f *fbtProvider) countProbes(q *query) (int, error) {
	per := 0
	if q.Name.Match("entry") {
		per++
	}
	if q.Name.Match("return") {
		per++
	}
	if per == 0 {
		return 0, nil
	}
	pr, err := f.probeable(q)
	if err != nil {
		return 0, err
	}
	n := 0
	_, err = f.k.walkFuncs(q, func(l *funcList, i int) bool {
		if pr == nil || pr.has(l.module, l.name(i)) {
			n += per
		}
		return true
	})
	return n, err
}

// An fbtModule places a module's probes in Probes' order over all of
// fbt's: its functions' entry and return probes, two by two, from first.
// Every function has its place, whether or not fbt has probes for it:
// which it has depends on what tracefs says, which only root may read,
// and a probe's ID must not depend on who lists it. Nor does a place
// need tracefs's list to be read (seconds under emulation): only
// probeAt, which finds the probe at a place, reads it.
type fbtModule struct {
	l     *funcList
	first int
}

func (m *fbtModule) place(i int) int { return m.first + 2*i }

// ordered returns where each module's probes are in Probes' order over
// all of fbt's, worked out once so that a probe's place costs a lookup,
// not a walk of every kernel function.
func (f *fbtProvider) ordered() []fbtModule {
	f.orderOnce.Do(func() {
		mods, err := f.k.modules()
		if err != nil {
			return
		}
		at := 0
		for _, l := range mods {
			f.order = append(f.order, fbtModule{l: l, first: at})
			at += 2 * l.len()
		}
	})
	return f.order
}

func (f *fbtProvider) probePlaces() (int, error) {
	order := f.ordered()
	if len(order) == 0 {
		// The functions could not be listed: say why.
		_, err := f.k.modules()
		return 0, err
	}
	last := order[len(order)-1]
	return last.first + 2*last.l.len(), nil
}

// probeIndex returns the place of d, a probe of a function the kernel
// may not let fbt probe: a description naming the function in full
// matches it all the same (see fbtProvider).
func (f *fbtProvider) probeIndex(d Desc) (int, bool) {
	if d.Provider != "fbt" || d.Name != "entry" && d.Name != "return" {
		return 0, false
	}
	for _, m := range f.ordered() {
		if m.l.module != d.Module {
			continue
		}
		i, ok := m.l.lookup(d.Function)
		if !ok {
			return 0, false
		}
		at := m.place(i)
		if d.Name == "return" {
			at++
		}
		return at, true
	}
	return 0, false
}

func (f *fbtProvider) probeAt(at int) (Desc, bool) {
	order := f.ordered()
	k := sort.Search(len(order), func(k int) bool { return order[k].first > at }) - 1
	if k < 0 {
		return Desc{}, false
	}
	m := &order[k]
	// The function whose probes hold place at, if fbt has them.
	i := (at - m.first) / 2
	if i >= m.l.len() {
		return Desc{}, false
	}
	pr, err := f.probeable(newQuery(Desc{Provider: "fbt"}))
	if err != nil || pr != nil && !pr.has(m.l.module, m.l.name(i)) {
		return Desc{}, false
	}
	d := Desc{Provider: "fbt", Module: m.l.module, Function: m.l.name(i), Name: "entry"}
	if (at-m.first)%2 == 1 {
		d.Name = "return"
	}
	return d, true
}

// probeable returns the functions q may match, nil for any: q's
// function is named in full, or the catalog does not know which the
// kernel lets fbt probe.
func (f *fbtProvider) probeable(q *query) (*probeable, error) {
	if _, literal := q.Function.Literal(); literal || f.k.probeable == nil {
		return nil, nil
	}
	pr, err := f.k.probeable()
	if err != nil {
		return nil, fmt.Errorf("the functions the kernel lets fbt probe: %w", err)
	}
	return pr, nil
}

// fbtProbe is an fbt probe and its site, allocated together.
type fbtProbe struct {
	Probe
	site KernelSite
}

func (f *fbtProvider) probe(mod, fn string, r symRange, ret bool) *Probe {
	p := &fbtProbe{
		Probe: Probe{Provider: "fbt", Module: mod, Function: fn, Name: "entry", args: f},
		site:  KernelSite{Module: mod, Function: fn, Return: ret, Addr: r.addr, Size: r.size},
	}
	if ret {
		p.Name = "return"
	}
	p.Detail = &p.site
	return &p.Probe
}

func (f *fbtProvider) probeArgs(p *Probe) ([]types.Type, error) {
	proto, err := f.k.prototype(p.Module, p.Function)
	if proto == nil || err != nil {
		return nil, err
	}
	if p.Name == "entry" {
		return proto.Params, nil
	}
	if proto.Result == nil || types.Resolve(proto.Result) == (types.Void{}) {
		return []types.Type{types.IntType}, nil
	}
	return []types.Type{types.IntType, proto.Result}, nil
}
