package main

import (
	"github.com/kdtrace/kdtrace/btf"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/probe"
)

// probes returns what the checker asks about probe descriptions: the
// catalog of the --kernel image's probes, or of the running system's.
// Where no catalog can be had (FreeBSD until the runtime talks to
// /dev/dtrace), descriptions are not matched.
func (c *config) probes() check.Probes {
	cfg := probe.Config{Types: c.probeTypes, Symbols: c.ksyms.Table}
	var cat *probe.Catalog
	var err error
	if c.kinst.kernel != "" {
		cat, err = probe.Offline(c.kinst.kernel, c.kinst.modules, cfg)
	} else {
		cat, err = probe.Live(cfg)
	}
	if err != nil {
		return nil
	}
	c.catalog = cat
	return probe.Matcher{Catalog: cat}
}

// probeTypes gives fbt and syscall probes their argument types from the
// kernel's types the checker uses, and a module's own BTF.
func (c *config) probeTypes(module string) (probe.KernelTypes, error) {
	for _, m := range c.modules {
		if m.ModuleName() == module {
			if kt, ok := m.(probe.KernelTypes); ok {
				return kt, nil
			}
		}
	}
	if c.kinst.kernel != "" || c.btf == "none" {
		return nil, nil
	}
	for _, m := range c.modules {
		if k, ok := m.(*btf.Module); ok && m.ModuleName() == btf.KernelModule {
			mb, err := btf.LoadModule(k, module)
			if err != nil {
				return nil, err
			}
			return mb, nil
		}
	}
	return nil, nil
}
