package probe

import "sync"

// namedProbes are the probes of a provider that lists a few and makes
// any other on demand, when a description names it exactly (profile's
// profile-N and tick-N, cpc's event-mode-count): parse makes a name's
// detail, or says it names no probe.
type namedProbes struct {
	provider string
	parse    func(name string) (Detail, bool)

	mu     sync.Mutex
	probes []*Probe          // listed and made, in order
	byName map[string]*Probe // the same, by name
}

// add makes the probe called name, if the name is valid and the probe
// is new. The caller holds n.mu, or owns n.
func (n *namedProbes) add(name string) {
	if _, ok := n.byName[name]; ok {
		return
	}
	d, ok := n.parse(name)
	if !ok {
		return
	}
	if n.byName == nil {
		n.byName = map[string]*Probe{}
	}
	pr := &Probe{Provider: n.provider, Name: name, Detail: d}
	n.probes = append(n.probes, pr)
	n.byName[name] = pr
}

// walk yields the probes q matches, having made the one q names
// exactly, as dtrace's providers see every description before it is
// matched; first runs before, under n.mu: it makes the listed probes.
func (n *namedProbes) walk(q *query, first func(), yield func(*Probe) bool) error {
	n.mu.Lock()
	first()
	if name, ok := q.Name.Literal(); ok {
		n.add(name)
	}
	probes := n.probes
	n.mu.Unlock()
	for _, pr := range probes {
		if q.matchesMFN(pr.Module, pr.Function, pr.Name) && !yield(pr) {
			break
		}
	}
	return nil
}
