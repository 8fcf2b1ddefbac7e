package linux

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/kdtrace/kdtrace/bpf"
	"github.com/kdtrace/kdtrace/dif"
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
	case g.ctx == bpf.CtxSyscallTP:
		return attach.Tracepoint(prog, g.tp.System, g.tp.Event)
	case g.ctx == bpf.CtxRawTP:
		return attach.RawTracepoint(prog, g.tp.Event)
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

// A placement is where a probe fires from: a group, and the probe's
// index in it.
type placement struct {
	g     *group
	index uint32
}

// groupOf returns the groups of probe p, made if new, and p's indexes in
// them: most probes have one, a USDT probe one per point, an SDT probe
// one per site. desc is the provider of the description that matched
// p: a USDT probe whose description would match the provider of any
// process fires in every process that maps its file (see
// probe.USDTSite.AnyProcess).
func groupOf(p *probe.Probe, desc string, groups map[string]*group, order *[]*group, compile func(string) (*dif.Object, error)) ([]placement, error) {
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
			return []placement{{g, 0}}, nil
		}
	case *probe.Timer:
		if d.Tick {
			g := get(p.Name, bpf.CtxRun)
			g.tick = d.Interval
			return []placement{{g, 0}}, nil
		}
		g := get(p.Name, bpf.CtxPerf)
		g.profile = d.Interval
		return []placement{{g, 0}}, nil
	case *probe.Syscall:
		nr, ok := attach.SyscallNumber(d.Name)
		if !ok {
			return nil, fmt.Errorf("%s: no system call of that name on this machine", p)
		}
		if d.Return {
			return []placement{{get("syscall-return", bpf.CtxSysExit), uint32(nr)}}, nil
		}
		return []placement{{get("syscall-entry", bpf.CtxSysEnter), uint32(nr)}}, nil
	case *probe.UserSite:
		name, ctx := "pid-entry", bpf.CtxEntry
		if d.Return {
			name, ctx = "pid-return", bpf.CtxReturn
		}
		g := get(name, ctx)
		return []placement{{g, g.site(p.String(), func() { g.users = append(g.users, d) })}}, nil
	case *probe.USDTSite:
		// A point each, as each may find its arguments elsewhere.
		g := get("usdt", bpf.CtxUSDT)
		anyProc := usdtAnyProcess(p, d, desc)
		var pl []placement
		for _, pt := range d.Points {
			args, err := parseUSDTArgs(pt.Args)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			// A point of any process is a site of its own: the
			// clauses of descriptions naming PID's provider alone do
			// not fire in the others.
			name := fmt.Sprintf("%s@%#x", p, pt.Addr)
			if anyProc {
				name += " in any process"
			}
			pl = append(pl, placement{g, g.site(name, func() {
				g.usdt = append(g.usdt, &probe.USDTSite{PID: d.PID, Path: d.Path, Points: []probe.USDTPoint{pt}, AnyProcess: anyProc})
				g.uargs = append(g.uargs, args)
			})})
		}
		return pl, nil
	case *probe.SDT:
		var pl []placement
		for _, st := range d.Sites {
			var g *group
			switch {
			case st.Function != "":
				err := attach.HaveKprobes()
				if err == nil {
					err = fmt.Errorf("the site %s needs a kprobe, not supported yet", st.String())
				}
				return nil, fmt.Errorf("%s: %w", p, err)
			case st.System == "syscalls":
				g = get("tp:"+st.Event, bpf.CtxSyscallTP)
			default:
				g = get("rawtp:"+st.Event, bpf.CtxRawTP)
			}
			g.tp = st
			var err error
			idx := g.site(p.String(), func() {
				var s bpf.Site
				if st.Cond != "" {
					if s.Cond, err = compile(st.Cond); err != nil {
						return
					}
				}
				for _, a := range st.Args {
					o, cerr := compile(a)
					if cerr != nil {
						err = cerr
						return
					}
					s.Args = append(s.Args, o)
				}
				g.sites = append(g.sites, s)
				g.rawArgs = max(g.rawArgs, argsRead(st))
			})
			if err != nil {
				return nil, fmt.Errorf("%s: site %s: %w", p, st.String(), err)
			}
			g.sites[idx].Index = idx
			pl = append(pl, placement{g, idx})
		}
		return pl, nil
	case *probe.KernelSite:
		name, ctx := p.Provider+"-entry", bpf.CtxEntry
		if d.Return {
			name, ctx = p.Provider+"-return", bpf.CtxReturn
		}
		g := get(name, ctx)
		return []placement{{g, g.site(p.String(), func() { g.kernel = append(g.kernel, d) })}}, nil
	}
	return nil, fmt.Errorf("%s: the %s provider is not supported by the Linux runtime yet", p, p.Provider)
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

var argRE = regexp.MustCompile(`\barg([0-9])\b`)

// usdtAnyProcess tells whether the description's provider desc, which
// matched USDT probe p of process site.PID, matches the provider of
// the same name in any process: test_prov* does, test_prov1234 and
// test_prov*1234 do not.
func usdtAnyProcess(p *probe.Probe, site *probe.USDTSite, desc string) bool {
	base, ok := strings.CutSuffix(p.Provider, strconv.Itoa(site.PID))
	if !ok {
		return false
	}
	pat := probe.NewPattern(desc)
	// No process is 0: a pattern matching it names none in particular.
	return pat.Match(base+"0") && pat.Match(p.Provider)
}

// argsRead returns how many of its tracepoint's arguments a site's
// expressions read: arg0 up to the highest named.
func argsRead(st probe.SDTSite) int {
	n := 0
	for _, e := range append([]string{st.Cond}, st.Args...) {
		for _, m := range argRE.FindAllStringSubmatch(e, -1) {
			n = max(n, int(m[1][0]-'0')+1)
		}
	}
	return n
}
