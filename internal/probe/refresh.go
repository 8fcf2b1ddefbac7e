package probe

import (
	"slices"
	"strconv"
	"strings"
)

// Processes returns the IDs of the processes the catalog has grabbed,
// in the order grabbed: those whose pid or USDT providers it made.
func (c *Catalog) Processes() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	pids := make([]int, len(c.pids))
	for i, p := range c.pids {
		pids[i] = p.pid
	}
	return pids
}

// Objects returns the paths of the objects process pid maps, as last
// read; none when it was not grabbed.
func (c *Catalog) Objects(pid int) []string {
	c.mu.Lock()
	p := c.pid[pid]
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	paths := make([]string, len(p.proc.objects))
	for i, o := range p.proc.objects {
		paths[i] = o.path
	}
	return paths
}

// rtldDebugState is the function glibc's run-time linker calls each time
// it has mapped or unmapped objects (dlopen, dlclose) and its list of
// them is consistent again, for debuggers to break on: the r_brk of
// its r_debug.
const rtldDebugState = "_dl_debug_state"

// RtldSite returns where a probe on process pid's run-time linker fires
// each time the linker has changed the objects the process maps, as
// dtrace's rtld_db breakpoint on r_brk: the entry of _dl_debug_state in
// the object that defines it. It returns nil when the process maps no
// such linker (a static executable), or was not grabbed.
func (c *Catalog) RtldSite(pid int) *UserSite {
	c.mu.Lock()
	p := c.pid[pid]
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	objs := p.proc.objects
	exec := p.proc.exec
	p.mu.Unlock()
	for _, o := range objs {
		if o == exec {
			continue
		}
		syms, err := o.symbols()
		if err != nil {
			continue
		}
		if s, ok := syms.lookup(rtldDebugState, p.debugFile); ok && s.fn && s.defined {
			return &UserSite{PID: pid, Path: o.path, Addr: s.value, Size: s.size}
		}
	}
	return nil
}

// Refresh reads again the objects process pid maps, after its run-time
// linker reported a change (RtldSite), as dtrace re-creates a process's
// probes on its rtld events: the probes of the objects no longer mapped
// are dropped, the pid probes of every description asked of the
// process so far are made again over the objects mapped now, and its
// USDT providers are listed again from their notes. A probe keeps its
// ID when its object is mapped again. Refresh reports whether the
// objects changed; its error is a *ProcError when the process cannot
// be read (it exited).
func (c *Catalog) Refresh(pid int) (bool, error) {
	c.mu.Lock()
	p := c.pid[pid]
	c.mu.Unlock()
	if p == nil {
		return false, nil
	}
	proc, err := c.procs.grab(pid)
	if err != nil {
		return false, procErrorf("D_PROC_GRAB", err, "failed to grab process %d", pid)
	}
	p.mu.Lock()
	old := p.proc
	if slices.EqualFunc(old.objects, proc.objects, func(a, b *procObject) bool { return a.path == b.path }) {
		p.mu.Unlock()
		return false, nil
	}
	// The objects still mapped keep what was read of them.
	byPath := map[string]*procObject{}
	for _, o := range old.objects {
		byPath[o.path] = o
	}
	mapped := map[string]bool{}
	for i, o := range proc.objects {
		mapped[o.path] = true
		if k := byPath[o.path]; k != nil {
			if proc.exec == o {
				proc.exec = k
			}
			proc.objects[i] = k
		}
	}
	p.proc = proc
	var kept []*Probe
	for _, pr := range p.probes {
		if site, ok := pr.Detail.(*UserSite); ok && mapped[site.Path] {
			kept = append(kept, pr)
			continue
		}
		delete(p.have, pr.Desc())
		c.made.Add(-1)
	}
	p.probes = kept
	descs := make([]Desc, 0, len(p.done))
	for d := range p.done {
		descs = append(descs, d)
	}
	clear(p.done)
	p.mu.Unlock()
	// Sorted, so that the probes are made in the same order each time.
	slices.SortFunc(descs, func(a, b Desc) int { return compareDesc(a, b) })
	for _, d := range descs {
		// What a description left out was said when it was first made.
		p.create(d, &c.made, c.maxPID, nil)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.usdtDone[pid] {
		had := map[string]*usdtProvider{}
		for _, u := range c.users {
			if u, ok := u.(*usdtProvider); ok && u.pid == pid {
				had[u.name] = u
			}
		}
		for _, u := range usdtProviders(proc) {
			if h := had[u.name]; h != nil {
				// The provider keeps its place, so that the IDs
				// numbered in the catalog's order stay as they are.
				h.mu.Lock()
				h.probes = u.probes
				h.mu.Unlock()
				delete(had, u.name)
				continue
			}
			c.users = append(c.users, u)
		}
		for _, h := range had {
			h.mu.Lock()
			h.probes = nil
			h.mu.Unlock()
		}
	}
	return true, nil
}

func compareDesc(a, b Desc) int {
	for _, f := range [][2]string{{a.Provider, b.Provider}, {a.Module, b.Module}, {a.Function, b.Function}, {a.Name, b.Name}} {
		if f[0] != f[1] {
			if f[0] < f[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Later reports which probes of the grabbed processes description d
// may match that are made only once the tracing runs, in objects a
// process maps later: pid probes at functions' entries or offsets
// (entry), at their returns (ret), and USDT probes (usdt). A
// description naming a provider of the catalog's own, or given by ID,
// matches none.
func (c *Catalog) Later(d Desc) (entry, ret, usdt bool) {
	if _, ok := c.byName[d.Provider]; ok {
		return false, false, false
	}
	prov := NewPattern(d.Provider)
	lit, literal := prov.Literal()
	for _, pid := range c.Processes() {
		id := strconv.Itoa(pid)
		if prov.Match("pid" + id) {
			_, off := strtoull16(d.Name)
			entry = entry || d.Name == "" || isGlob(d.Name) || d.Name == "entry" || off
			ret = ret || NewPattern(d.Name).Match("return")
		}
		// A USDT provider is its name and the process's ID; a glob
		// may match one of any name.
		if !literal || strings.HasSuffix(lit, id) && len(lit) > len(id) && lit != "pid"+id {
			usdt = true
		}
	}
	return entry, ret, usdt
}
