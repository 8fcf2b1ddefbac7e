package probe

import (
	"path/filepath"
	"slices"
)

// A source is what a kernel's providers are made over: the kernel, and
// for a running one, where its tracefs may be and how its syscall
// handlers are listed.
type source struct {
	k    *kernel
	cfg  *Config
	arch string // the kernel's GOARCH
	// live is set for the running kernel, whose tracepoints the
	// providers made of them (tracepoints rows) fire from.
	live bool
	// tracefs are the directories tracefs may be mounted on, in order
	// of preference; none offline.
	tracefs []string
	// handlers lists the kernel's syscall handlers (syscallProvider's);
	// nil offline.
	handlers func() ([]string, error)
	// events are the trace events the sdt and rawtp providers share.
	events *tpEvents
}

// A providerRow is one provider of a kernel's catalogs.
type providerRow struct {
	name string
	// tracepoints is set for a provider made of the running kernel's
	// tracepoints, which an offline catalog does not have.
	tracepoints bool
	// make makes the provider, called name, over s.
	make func(name string, s *source) provider
}

// providers are the providers of a kernel's catalogs (Live, Offline),
// in the order Walk lists them, which numbers their probes
// (Catalog.ID): a new provider goes last, so that no probe's ID
// changes. The pid and USDT providers are not here: they are made for
// each process a description names (Catalog.makeProcProbes). Its
// makers are function literals, not calls, so that the table is
// static data, made at no cost at start-up.
var providers = []providerRow{
	{name: "dtrace", make: func(string, *source) provider { return Dtrace() }},
	{name: "profile", make: func(string, *source) provider { return profile() }},
	{name: "syscall", make: newSyscallProvider},
	{name: "fbt", make: func(_ string, s *source) provider { return &fbtProvider{k: s.k} }},
	{name: "kinst", make: func(_ string, s *source) provider { return &kinstProvider{s.k} }},
	// dtrace's stable providers, made of Linux's tracepoints: a table
	// of probes each (sdt.go).
	{name: "proc", tracepoints: true, make: func(n string, s *source) provider { return newSDTProvider(n, procSpecs, s.k) }},
	{name: "sched", tracepoints: true, make: func(n string, s *source) provider { return newSDTProvider(n, schedSpecs, s.k) }},
	{name: "io", tracepoints: true, make: func(n string, s *source) provider { return newSDTProvider(n, ioSpecs, s.k) }},
	// The network providers, made of tracepoints too (net.go).
	{name: "ip", tracepoints: true, make: func(n string, s *source) provider { return newSDTProvider(n, ipSpecs, s.k) }},
	{name: "tcp", tracepoints: true, make: func(n string, s *source) provider { return newSDTProvider(n, tcpSpecs, s.k) }},
	{name: "udp", tracepoints: true, make: func(n string, s *source) provider { return newSDTProvider(n, udpSpecs, s.k) }},
	{name: "lockstat", tracepoints: true, make: func(n string, s *source) provider { return newSDTProvider(n, lockstatSpecs, s.k) }},
	// The running machine's performance counters: live catalogs only.
	{name: "cpc", tracepoints: true, make: newCPCProvider},
	// Oracle's providers of every trace event, its fields or its raw
	// tracepoint's arguments (tracepoint.go).
	{name: "sdt", tracepoints: true, make: func(n string, s *source) provider { return s.tpProvider(n, false) }},
	{name: "rawtp", tracepoints: true, make: func(n string, s *source) provider { return s.tpProvider(n, true) }},
}

// kernelCatalog returns a catalog of the providers over s.
func kernelCatalog(s *source) *Catalog {
	var ps []provider
	for _, r := range providers {
		if r.tracepoints && !s.live {
			continue
		}
		ps = append(ps, r.make(r.name, s))
	}
	return New(ps...)
}

// tpProvider makes the sdt provider, or with raw the rawtp provider,
// over the trace events they share.
func (s *source) tpProvider(name string, raw bool) provider {
	if s.events == nil {
		s.events = newTPEvents(s.tracefs)
	}
	return newTPProvider(name, raw, s.k, s.events)
}

// newSyscallProvider makes the syscall provider over s.
func newSyscallProvider(_ string, s *source) provider {
	sys := &syscallProvider{k: s.k, table: syscallTable(s.arch), handlers: s.handlers}
	if names := s.cfg.Syscalls; names != nil {
		sys.numbered = names
		sys.isCall = func(name string) bool { _, ok := slices.BinarySearch(names, name); return ok }
	}
	for _, dir := range s.tracefs {
		sys.eventDirs = append(sys.eventDirs, filepath.Join(dir, "events/syscalls"))
	}
	return sys
}
