package probe

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// A Provider makes probes: dtrace, profile, fbt and the others.
type provider interface {
	// Name returns the provider's name, as descriptions give it.
	Name() string
	// Attributes returns the provider's stability attributes.
	Attributes() attributes
	// Probes calls yield with each probe of the provider whose module,
	// function and name q matches, in a fixed order, until yield
	// returns false. The catalog has already matched the provider's
	// name. Providers that make probes on demand, as profile does for
	// profile-N, make those q names.
	Probes(q *query, yield func(*Probe) bool) error
}

// A ProviderError reports a provider that could not list its probes,
// such as fbt when the kernel's BTF cannot be read.
type providerError struct {
	Provider string
	Err      error
}

func (e *providerError) Error() string { return e.Provider + " provider: " + e.Err.Error() }
func (e *providerError) Unwrap() error { return e.Err }

// A Catalog is the set of probes descriptions are matched against. It
// may be used from several goroutines.
type Catalog struct {
	providers []provider
	byName    map[string]provider
	procs     procSource // nil where processes cannot be traced

	ids struct { // probe IDs, numbered on first use
		sync.Mutex
		byDesc   map[Desc]uint32 // the probes of idBlocks with descs
		blocks   []idBlock       // by first ID
		next     uint32          // the next ID to give
		made     map[Desc]*Probe // probes made on demand, numbered when asked
		numbered int             // the providers numbered so far, in order
	}

	mu       sync.Mutex
	pid      map[int]*pidProvider // pid providers made so far, by process
	pids     []*pidProvider       // the same, in the order made
	users    []provider           // the USDT providers made so far
	usdtDone map[int]bool         // the processes whose USDT providers are made
	made     atomic.Int64         // probes the pid providers made
	maxPID   int64                // the most they may make
	warn     func(error)          // Config.Warn
	// debugFile is Config.DebugFile.
	debugFile func(string) (string, error)
}

// New returns a catalog of the given providers, which are searched in
// order. Providers for processes (pid<PID>) exist only in Live's
// catalogs.
func New(providers ...provider) *Catalog {
	c := &Catalog{byName: map[string]provider{}, pid: map[int]*pidProvider{}, maxPID: maxPIDProbes}
	for _, p := range providers {
		c.providers = append(c.providers, p)
		c.byName[p.Name()] = p
	}
	return c
}

// Providers returns the catalog's providers, the pid and USDT providers
// made so far last.
func (c *Catalog) Providers() []provider {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps := append([]provider(nil), c.providers...)
	for _, p := range c.pids {
		ps = append(ps, p)
	}
	return append(ps, c.users...)
}

// Provider returns the provider called name, or nil.
func (c *Catalog) Provider(name string) provider {
	if p, ok := c.byName[name]; ok {
		return p
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pids {
		if p.Name() == name {
			return p
		}
	}
	for _, p := range c.users {
		if p.Name() == name {
			return p
		}
	}
	return nil
}

// Walk calls yield with each probe d matches until yield returns false,
// building no list: Walk(fbt:::entry) with a counting yield costs the
// probes' descriptions but no slice of them.
//
// As dtrace does at compile time, a description whose provider ends in
// a digit and names no provider first makes the probes of a process's
// pid provider (see Live); the errors of that step are *ProcErrors.
// A description matching no probe is not an error: Walk yields
// nothing, and the compiler reports D_PDESC_ZERO unless -Z was given.
func (c *Catalog) Walk(d Desc, yield func(*Probe) bool) error {
	q, err := c.makeProcProbes(newQuery(d))
	if err != nil {
		return err
	}
	if name, ok := q.Provider.Literal(); ok {
		p := c.Provider(name)
		if p == nil {
			return nil // an unknown provider matches nothing
		}
		return walkProvider(p, q, yield)
	}
	stopped := false
	y := func(p *Probe) bool {
		if !yield(p) {
			stopped = true
			return false
		}
		return true
	}
	for _, p := range c.Providers() {
		if !q.Provider.Match(p.Name()) {
			continue
		}
		if err := walkProvider(p, q, y); err != nil || stopped {
			return err
		}
	}
	return nil
}

func walkProvider(p provider, q *query, yield func(*Probe) bool) error {
	if err := p.Probes(q, yield); err != nil {
		return &providerError{p.Name(), err}
	}
	return nil
}

// Warm reads ahead what a Walk of d will need from the running system
// and keeps it, so that the Walk, on another goroutine, finds it read.
// A description naming a probe but no module, as BEGIN does, must be
// looked up among every system's trace events: tracefs answers in
// about half a millisecond, which a caller can spend compiling the
// libraries. Warm reports nothing: what fails is left for the Walk to
// find and report.
func (c *Catalog) Warm(d Desc) {
	q := newQuery(d)
	for _, p := range c.providers {
		if w, ok := p.(interface{ warm(*query) }); ok && q.Provider.Match(p.Name()) {
			w.warm(q)
		}
	}
}

// Match returns the probes d matches, in order. See Walk.
func (c *Catalog) Match(d Desc) ([]*Probe, error) {
	var ps []*Probe
	err := c.Walk(d, func(p *Probe) bool {
		ps = append(ps, p)
		return true
	})
	return ps, err
}

// Count returns the number of probes d matches. For fbt it counts
// functions and makes no probes.
func (c *Catalog) Count(d Desc) (int, error) {
	q, err := c.makeProcProbes(newQuery(d))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range c.Providers() {
		if !q.Provider.Match(p.Name()) {
			continue
		}
		if pc, ok := p.(probeCounter); ok {
			m, err := pc.countProbes(q)
			if err != nil {
				return 0, &providerError{p.Name(), err}
			}
			n += m
			continue
		}
		if err := walkProvider(p, q, func(*Probe) bool { n++; return true }); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// A probeCounter counts its probes without making them.
type probeCounter interface {
	countProbes(q *query) (int, error)
}

// info is what the compiler learns about a clause's probes, as
// dtrace_probe_info reports it.
type info struct {
	// Matches counts the probes matched up to two: 0, 1, or 2 for two
	// or more.
	Matches int
	// Probe is the first probe matched, nil when none.
	Probe *Probe
	// Unstable is set when two or more probes matched and dtrace does
	// not vouch that their arguments agree (EDT_UNSTABLE): their
	// provider's argument data is less than Evolving, or a field whose
	// name stability is Evolving or more was empty or a glob; or the
	// probes' argument types disagree. args[] then has no types.
	Unstable bool
	// Args are the native argument types of Probe when Unstable is not
	// set; nil when the probe has none.
	Args []types.Type
	// XArgs are the types Probe's provider translates its arguments to
	// (Probe.XArgs) when Args are given; nil when it translates none.
	XArgs []string
}

// Info matches d and reports, as dtrace_probe_info does, how many
// probes it matches (stopping at two) and what types args[] has. It is
// cheap for descriptions matching many probes: it looks at two, unless
// their provider vouches for their argument types, when it looks at
// every probe matched to see that they agree.
func (c *Catalog) Info(d Desc) (info, error) {
	var info info
	err := c.Walk(d, func(p *Probe) bool {
		if info.Matches++; info.Matches == 1 {
			info.Probe = p
		}
		return info.Matches < 2
	})
	if err != nil || info.Probe == nil {
		return info, err
	}
	if info.Matches > 1 {
		pv := c.Provider(info.Probe.Provider)
		if pv == nil {
			info.Unstable = true
			return info, nil
		}
		a := pv.Attributes()
		unset := func(s string) bool { return s == "" || isGlob(s) }
		if a.Args.Data < evolving ||
			a.Module.Name >= evolving && unset(d.Module) ||
			a.Function.Name >= evolving && unset(d.Function) ||
			a.Name.Name >= evolving && unset(d.Name) {
			info.Unstable = true
			return info, nil
		}
	}
	args, err := info.Probe.Args()
	if err != nil {
		return info, fmt.Errorf("argument types of %s: %w", info.Probe, err)
	}
	if info.Matches > 1 {
		// dtrace takes the first probe's types on the provider's word
		// that the others' are the same. A USDT probe's are its notes',
		// which may type an argument differently in each function: where
		// the probes disagree, the set is unstable.
		same := true
		err := c.Walk(d, func(p *Probe) bool {
			pargs, err := p.Args()
			same = err == nil && sameArgs(args, pargs) && slices.Equal(p.XArgs, info.Probe.XArgs)
			return same
		})
		if err != nil {
			return info, err
		}
		if !same {
			info.Unstable = true
			return info, nil
		}
	}
	info.Args = args
	if args != nil {
		info.XArgs = info.Probe.XArgs
	}
	return info, nil
}

// sameArgs reports whether two probes' arguments have the same types.
func sameArgs(a, b []types.Type) bool {
	return slices.EqualFunc(a, b, func(x, y types.Type) bool {
		return x == y || x != nil && y != nil && types.Identical(x, y) && x.Size() == y.Size()
	})
}

// ID returns the probe's ID, which -l lists and a description may give
// instead of its names: its place, from 1, in the order Walk lists every
// probe of the catalog, so a probe keeps its ID while the system's
// probes stay the same. fbt holds a place for each function, whether or
// not the kernel lets it probe the function (which only root may find
// out), so that IDs do not depend on who asks. Probes made on demand (of pid and USDT
// providers, and kinst's) are numbered after those, in the order asked.
func (c *Catalog) ID(p *Probe) uint32 {
	c.ids.Lock()
	defer c.ids.Unlock()
	d := p.Desc()
	// The providers are numbered in order up to the probe's, so that
	// BEGIN's ID costs no walk of the kernel's functions.
	for {
		if id, ok := c.numberedLocked(d); ok {
			return id
		}
		if !c.numberNextLocked(func(name string) bool { return name == p.Provider }) {
			break
		}
	}
	if id, ok := c.numberedLocked(d); ok {
		return id
	}
	id := c.addLocked(d)
	c.ids.made[d] = p
	return id
}

// An idBlock is a run of IDs from first: the probes in descs, or the n
// probes of an indexer in its order.
type idBlock struct {
	first uint32
	descs []Desc
	n     uint32
	index probeIndexer
	prov  string // the indexer's
}

func (b *idBlock) len() uint32 {
	if b.index != nil {
		return b.n
	}
	return uint32(len(b.descs))
}

// A probeIndexer finds a probe's place among all its probes, and the
// probe at a place, without making the others: fbt, whose probes are
// every kernel function's entry and return, so that numbering one costs
// no probe made for each.
type probeIndexer interface {
	probeCounter
	// probeIndex returns d's place in Probes' order over all the
	// provider's probes.
	probeIndex(d Desc) (int, bool)
	// probeAt returns the probe at place i of that order, if there
	// is one there.
	probeAt(i int) (Desc, bool)
	// probePlaces returns the number of places in that order, the
	// IDs the provider's probes are given among: a place may hold no
	// probe.
	probePlaces() (int, error)
}

// numberedLocked returns d's ID if its provider is numbered.
func (c *Catalog) numberedLocked(d Desc) (uint32, bool) {
	if id, ok := c.ids.byDesc[d]; ok {
		return id, true
	}
	for i := range c.ids.blocks {
		b := &c.ids.blocks[i]
		if b.index != nil && b.prov == d.Provider {
			if at, ok := b.index.probeIndex(d); ok && uint32(at) < b.n {
				return b.first + uint32(at), true
			}
		}
	}
	return 0, false
}

// addLocked gives d the next ID.
func (c *Catalog) addLocked(d Desc) uint32 {
	if c.ids.next == 0 {
		c.ids.next = 1
	}
	bs := c.ids.blocks
	if len(bs) == 0 || bs[len(bs)-1].index != nil {
		c.ids.blocks = append(bs, idBlock{first: c.ids.next})
	}
	b := &c.ids.blocks[len(c.ids.blocks)-1]
	b.descs = append(b.descs, d)
	id := c.ids.next
	c.ids.next++
	c.ids.byDesc[d] = id
	return id
}

// ByID returns the probe with the given ID, or nil.
func (c *Catalog) ByID(id uint32) *Probe {
	c.ids.Lock()
	for id >= c.ids.next && c.numberNextLocked(func(string) bool { return false }) {
	}
	if id == 0 || id >= c.ids.next {
		c.ids.Unlock()
		return nil
	}
	bs := c.ids.blocks
	b := &bs[sort.Search(len(bs), func(i int) bool { return bs[i].first+bs[i].len() > id })]
	var d Desc
	ok := true
	if b.index != nil {
		d, ok = b.index.probeAt(int(id - b.first))
	} else {
		d = b.descs[id-b.first]
	}
	p := c.ids.made[d]
	c.ids.Unlock()
	if !ok {
		return nil
	}
	if p != nil {
		return p
	}
	// Only the descriptions are kept: the probe is found again.
	var found *Probe
	c.Walk(d, func(q *Probe) bool { found = q; return false })
	return found
}

// numberNextLocked numbers the probes of the next provider not yet
// numbered, in Walk's order, and reports whether there was one; stop
// ends the numbering after the provider it accepts.
func (c *Catalog) numberNextLocked(stop func(name string) bool) bool {
	if c.ids.byDesc == nil {
		c.ids.byDesc = make(map[Desc]uint32)
		c.ids.made = make(map[Desc]*Probe)
		c.ids.next = 1
	}
	ps := c.Providers()
	if c.ids.numbered >= len(ps) {
		return false
	}
	p := ps[c.ids.numbered]
	c.ids.numbered++
	q := newQuery(Desc{Provider: p.Name()})
	if x, ok := p.(probeIndexer); ok {
		// A provider that cannot count its places has none to number.
		if n, err := x.probePlaces(); err == nil && n > 0 {
			c.ids.blocks = append(c.ids.blocks, idBlock{first: c.ids.next, n: uint32(n), index: x, prov: p.Name()})
			c.ids.next += uint32(n)
		}
		return !stop(p.Name())
	}
	walkProvider(p, q, func(p *Probe) bool {
		if d := p.Desc(); c.ids.byDesc[d] == 0 {
			c.addLocked(d)
		}
		return true
	})
	return !stop(p.Name())
}
