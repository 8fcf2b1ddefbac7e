// Package linux is kdtrace's Linux backend: it plays the part FreeBSD's
// kernel plays for dtrace(1). It takes a program's ECBs as enabling.Load
// checked them, enables them on the probes they match, runs their
// predicates and actions as BPF programs, and hands what they record to
// a consumer in DTrace's record format.
//
// # Data flow
//
//	[]enabling.ECB ──► probe.Catalog (each description's probes) ──► record.Layout (EPIDs, records)
//	      │
//	      ▼  one group per attachment: BEGIN, END, each tick-N, each profile-N, sys_enter, sys_exit, …
//	bpf.ProbeProgram ──► bpf.BuildProbe ──► bpf.Runtime.LoadProbe ──► attach (links, perf events)
//	                                                                      │ probes fire
//	      ring buffer (RecPrefix + a firing's records) ◄──────────────────┘
//	      aggregation maps (per-CPU entries by key)
//	      │
//	      ▼  Tracing.Work, every switchrate
//	per-CPU record buffers (record.CPUBuffer), aggregation snapshots ──► Consumer (an interface: *consumer.Consumer)
//
// The backend imports no consumer: Work hands its buffers and snapshots
// to the Consumer interface it defines, with record's types, the
// contract between the two.
//
// A group's program finds which of its probes fired by an index (the
// system call's number, the attachment's cookie, 0) and, in its
// MapProbes, the probe's ID and each clause's EPID for it: one raw
// sys_enter attachment serves every syscall entry probe.
//
// Which groups a probe goes in, their programs' context and how they are
// attached is the business of the probe's kind (probe.Kind, from its
// Detail), looked up once in one table, kinds (kinds.go): a provider
// whose probes are of a kind there needs nothing here, and a new kind
// is one entry, its place and attach functions, and the fields of
// group it keeps its sites in.
//
// BEGIN, END and tick-N run from user space, by BPF_PROG_RUN on CPU 0:
// BEGIN before the tracing is made active, so before any other probe
// runs a clause; END after every other attachment is closed; tick-N
// from the work loop at its interval, which fires once a second on an
// idle machine, where the CPU clock's perf events do not.
//
// An aggregation's entries are per-CPU; Work snapshots them as dtrace
// switches each CPU's aggregation buffer for its other, empty one: the
// map the probes aggregate into is swapped for an empty one, and once
// the kernel has waited for the programs that were using it, it is read
// and emptied into the consumer, which keeps the sum. No update is lost
// in between, and the maps hold the keys of one snapshot's interval:
// trunc() and clear() act on the consumer's keys alone.
//
// A speculated firing's records reach the ring buffer marked with the
// speculation's id; Work keeps them, up to specsize bytes of each
// CPU's, until the control sample of commit() or discard() comes, then
// appends them to their CPUs' buffers or drops them, and frees the
// speculation.
//
// An fbt probe goes on a BPF trampoline where it can (splitTrampolines):
// a group of its own, whose fentry or fexit program is loaded for its
// function; a kprobe group serves the others, and takes back a probe
// whose trampoline the kernel refuses when it is loaded or attached.
// Where a clause of the probe reads regs[] it stays on the kprobe,
// whose context holds the registers. Config.Note is told each choice.
//
// proc, sched, io and lockstat probes fire from tracepoints or kernel
// functions' entries: each SDT site's condition and arguments, D
// expressions, are compiled (Config.Compile) and run in the
// tracepoint's or the function's program before the probe's clauses,
// one site after another. A function's program, over its parameters,
// is a kprobe's or goes on an fentry trampoline whole, as an fbt
// probe's does.
package linux
