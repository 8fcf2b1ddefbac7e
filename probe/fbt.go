package probe

import "github.com/kdtrace/kdtrace/dlang/types"

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
type fbtProvider struct{ k *kernel }

func (*fbtProvider) Name() string           { return "fbt" }
func (*fbtProvider) Attributes() Attributes { return kernelAttr }

func (f *fbtProvider) Probes(q *Query, yield func(*Probe) bool) error {
	entry, ret := q.Name.Match("entry"), q.Name.Match("return")
	if !entry && !ret {
		return nil
	}
	_, err := f.k.walkFuncs(q, func(l *funcList, i int) bool {
		fn := l.name(i)
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
	n := 0
	_, err := f.k.walkFuncs(q, func(*funcList, int) bool { n += per; return true })
	return n, err
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
