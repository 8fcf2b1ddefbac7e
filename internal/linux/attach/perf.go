package attach

// A PerfEvent is an event of Linux's perf events that a perf event
// program samples on every CPU, every Period of its events.
type PerfEvent struct {
	// Name names the event in errors: "cpu-clock", "cpc:::cycles-all-10000".
	Name string
	// Type and Config are perf_event_attr's.
	Type   uint32
	Config uint64
	Period uint64
	// ExcludeUser and ExcludeKernel leave out the events in user mode,
	// in kernel mode.
	ExcludeUser, ExcludeKernel bool
}
