package linux

import (
	"fmt"
	"io"

	"github.com/cilium/ebpf"

	"github.com/kdtrace/kdtrace/bpf"
	"github.com/kdtrace/kdtrace/kernel"
	"github.com/kdtrace/kdtrace/kernel/linux/attach"
	"github.com/kdtrace/kdtrace/probe"
)

// attachType is the attachment type a group's program is loaded for.
func (g *group) attachType() ebpf.AttachType {
	if len(g.users) > 0 || len(g.usdt) > 0 {
		return attach.UprobeAttachType()
	}
	return ebpf.AttachNone
}

// attachGroup puts a group's program in place.
func attachGroup(g *group, prog *ebpf.Program) (io.Closer, error) {
	switch {
	case g.profile != 0:
		return attach.Profile(prog, g.profile)
	case g.ctx == bpf.CtxSysEnter || g.ctx == bpf.CtxSysExit:
		return attach.Syscalls(prog, g.ctx == bpf.CtxSysExit)
	case len(g.users) > 0:
		return attach.Uprobes(prog, g.users, cookies(len(g.users)))
	case len(g.usdt) > 0:
		return attach.USDT(prog, g.usdt, cookies(len(g.usdt)))
	case len(g.kernel) > 0:
		return attach.Kprobes(prog, g.kernel, cookies(len(g.kernel)), nil)
	}
	return nil, fmt.Errorf("%s: nothing to attach", g.name)
}

// cookies are the indexes 0 … n-1, by which a program tells its sites
// apart.
func cookies(n int) []uint64 {
	c := make([]uint64, n)
	for i := range c {
		c[i] = uint64(i)
	}
	return c
}

// groupOf returns the group of probe p, made if new, and p's index in it.
func groupOf(p *probe.Probe, groups map[string]*group, order *[]*group) (*group, []uint32, error) {
	get := func(name string, ctx bpf.Context) *group {
		g := groups[name]
		if g == nil {
			g = &group{name: name, ctx: ctx, ecbs: map[*kernel.ECB]int{}, entries: map[uint32]*bpf.ProbeEntry{}, index: map[string]uint32{}}
			groups[name] = g
			*order = append(*order, g)
		}
		return g
	}
	switch d := p.Detail.(type) {
	case nil:
		if p.Provider == "dtrace" {
			g := get(p.Name, bpf.CtxRun)
			g.end = p.Name == "END"
			return g, []uint32{0}, nil
		}
	case *probe.Timer:
		if d.Tick {
			g := get(p.Name, bpf.CtxRun)
			g.tick = d.Interval
			return g, []uint32{0}, nil
		}
		g := get(p.Name, bpf.CtxPerf)
		g.profile = d.Interval
		return g, []uint32{0}, nil
	case *probe.Syscall:
		nr, ok := attach.SyscallNumber(d.Name)
		if !ok {
			return nil, nil, fmt.Errorf("%s: no system call of that name on this machine", p)
		}
		if d.Return {
			return get("syscall-return", bpf.CtxSysExit), []uint32{uint32(nr)}, nil
		}
		return get("syscall-entry", bpf.CtxSysEnter), []uint32{uint32(nr)}, nil
	case *probe.UserSite:
		name, ctx := "pid-entry", bpf.CtxEntry
		if d.Return {
			name, ctx = "pid-return", bpf.CtxReturn
		}
		g := get(name, ctx)
		return g, []uint32{g.site(p.String(), func() { g.users = append(g.users, d) })}, nil
	case *probe.USDTSite:
		// A point each, as each may find its arguments elsewhere.
		g := get("usdt", bpf.CtxUSDT)
		idx := make([]uint32, len(d.Points))
		for i, pt := range d.Points {
			args, err := parseUSDTArgs(pt.Args)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", p, err)
			}
			idx[i] = g.site(fmt.Sprintf("%s@%#x", p, pt.Addr), func() {
				g.usdt = append(g.usdt, &probe.USDTSite{PID: d.PID, Path: d.Path, Points: []probe.USDTPoint{pt}})
				g.uargs = append(g.uargs, args)
			})
		}
		return g, idx, nil
	case *probe.KernelSite:
		name, ctx := p.Provider+"-entry", bpf.CtxEntry
		if d.Return {
			name, ctx = p.Provider+"-return", bpf.CtxReturn
		}
		g := get(name, ctx)
		return g, []uint32{g.site(p.String(), func() { g.kernel = append(g.kernel, d) })}, nil
	}
	return nil, nil, fmt.Errorf("%s: the %s provider is not supported by the Linux runtime yet", p, p.Provider)
}

// site returns the index of the group's site of the named probe, adding
// it with add when new.
func (g *group) site(name string, add func()) uint32 {
	i, ok := g.index[name]
	if !ok {
		i = uint32(len(g.index))
		g.index[name] = i
		add()
	}
	return i
}
