package probe

// dtraceProvider is the dtrace provider: BEGIN, END and ERROR, which the
// consumer fires itself. Their module and function are empty.
type dtraceProvider struct {
	probes [3]*Probe
}

// Dtrace returns the dtrace provider.
func Dtrace() provider {
	d := &dtraceProvider{}
	for i, name := range []string{"BEGIN", "END", "ERROR"} {
		d.probes[i] = &Probe{Provider: "dtrace", Name: name, Detail: &Run{}}
	}
	return d
}

func (*dtraceProvider) Name() string           { return "dtrace" }
func (*dtraceProvider) Attributes() attributes { return dtraceAttr }

func (d *dtraceProvider) Probes(q *query, yield func(*Probe) bool) error {
	for _, p := range d.probes {
		if q.matchesMFN(p.Module, p.Function, p.Name) && !yield(p) {
			break
		}
	}
	return nil
}
