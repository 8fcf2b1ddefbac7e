package probe

import (
	"fmt"

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
type fbtProvider struct{ k *kernel }

func (*fbtProvider) Name() string           { return "fbt" }
func (*fbtProvider) Attributes() Attributes { return kernelAttr }

func (f *fbtProvider) Probes(q *Query, yield func(*Probe) bool) error {
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

func (f *fbtProvider) countProbes(q *Query) (int, error) {
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

// walkAll calls yield with each function fbt has probes for, in
// Probes' order, and the place of its entry probe among them all (its
// return probe is the next), until yield returns false.
func (f *fbtProvider) walkAll(yield func(at int, mod, fn string) bool) {
	q := NewQuery(Desc{Provider: "fbt"})
	pr, err := f.probeable(q)
	if err != nil {
		return
	}
	at := 0
	f.k.walkFuncs(q, func(l *funcList, i int) bool {
		fn := l.name(i)
		if pr != nil && !pr.has(l.module, fn) {
			return true
		}
		at += 2
		return yield(at-2, l.module, fn)
	})
}

func (f *fbtProvider) probeIndex(d Desc) (int, bool) {
	if d.Provider != "fbt" || d.Name != "entry" && d.Name != "return" {
		return 0, false
	}
	found := -1
	f.walkAll(func(at int, mod, fn string) bool {
		if fn == d.Function && mod == d.Module {
			found = at
			return false
		}
		return true
	})
	if found < 0 {
		return 0, false
	}
	if d.Name == "return" {
		found++
	}
	return found, true
}

func (f *fbtProvider) probeAt(i int) (Desc, bool) {
	var d Desc
	f.walkAll(func(at int, mod, fn string) bool {
		if i >= at+2 {
			return true
		}
		d = Desc{Provider: "fbt", Module: mod, Function: fn, Name: "entry"}
		if i > at {
			d.Name = "return"
		}
		return false
	})
	return d, d.Provider != ""
}

// probeable returns the functions q may match, nil for any: q's
// function is named in full, or the catalog does not know which the
// kernel lets fbt probe.
func (f *fbtProvider) probeable(q *Query) (*probeable, error) {
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
