package probe

import (
	"strconv"
	"strings"
)

// A CPC says how a cpc probe is put in place: a perf event on each
// CPU, which fires the probe every Count of its events, counted in the
// modes the probe names (illumos's CPU performance counters, from
// Linux's perf events).
type CPC struct {
	// Event is the event's name, as the probe names it.
	Event string
	// Type and Config are the event's perf_event_attr type and config.
	Type   uint32
	Config uint64
	// Count is the number of events between firings.
	Count uint64
	// User and Kernel say whether events in user mode and in kernel
	// mode count: "user" counts the first alone, "kernel" the second,
	// "all" both.
	User, Kernel bool
}

// The perf event types of CPC.Type (PERF_TYPE_*, linux/perf_event.h).
const (
	PerfTypeHardware = 0
	PerfTypeSoftware = 1
)

// A cpcEvent is an event of the cpc provider: its name as libpfm4's
// perf_events table gives it, which Oracle's DTrace for Linux lists in
// lower case, its other names (perf(1)'s, and illumos's generic PAPI
// names for the hardware events it has), and its perf type and config.
type cpcEvent struct {
	name    string
	aliases []string
	typ     uint32
	config  uint64
}

// cpcEvents are the generic events of Linux's perf events: the
// hardware ones, which a machine has when its CPU's performance
// counters are exposed, and the software ones, which every kernel has.
var cpcEvents = []cpcEvent{
	{"perf_count_hw_cpu_cycles", []string{"cycles", "cpu_cycles", "papi_tot_cyc"}, PerfTypeHardware, 0},
	{"perf_count_hw_instructions", []string{"instructions", "papi_tot_ins"}, PerfTypeHardware, 1},
	{"perf_count_hw_cache_references", []string{"cache_references"}, PerfTypeHardware, 2},
	{"perf_count_hw_cache_misses", []string{"cache_misses"}, PerfTypeHardware, 3},
	{"perf_count_hw_branch_instructions", []string{"branch_instructions", "branches", "papi_br_ins"}, PerfTypeHardware, 4},
	{"perf_count_hw_branch_misses", []string{"branch_misses", "papi_br_msp"}, PerfTypeHardware, 5},
	{"perf_count_hw_bus_cycles", []string{"bus_cycles"}, PerfTypeHardware, 6},
	{"perf_count_hw_stalled_cycles_frontend", []string{"stalled_cycles_frontend", "idle_cycles_frontend"}, PerfTypeHardware, 7},
	{"perf_count_hw_stalled_cycles_backend", []string{"stalled_cycles_backend", "idle_cycles_backend"}, PerfTypeHardware, 8},
	{"perf_count_hw_ref_cpu_cycles", []string{"ref_cycles"}, PerfTypeHardware, 9},
	{"perf_count_sw_cpu_clock", []string{"cpu_clock"}, PerfTypeSoftware, 0},
	{"perf_count_sw_task_clock", []string{"task_clock"}, PerfTypeSoftware, 1},
	{"perf_count_sw_page_faults", []string{"page_faults", "faults"}, PerfTypeSoftware, 2},
	{"perf_count_sw_context_switches", []string{"context_switches", "cs"}, PerfTypeSoftware, 3},
	{"perf_count_sw_cpu_migrations", []string{"cpu_migrations", "migrations"}, PerfTypeSoftware, 4},
	{"perf_count_sw_page_faults_min", []string{"minor_faults"}, PerfTypeSoftware, 5},
	{"perf_count_sw_page_faults_maj", []string{"major_faults"}, PerfTypeSoftware, 6},
	{"perf_count_sw_alignment_faults", []string{"alignment_faults"}, PerfTypeSoftware, 7},
	{"perf_count_sw_emulation_faults", []string{"emulation_faults"}, PerfTypeSoftware, 8},
}

// cpcListSuffix ends the names of the probes the provider lists, one
// for each event the machine has, as Oracle's does: all modes, and a
// count (10^9) large enough that even the fastest event fires it
// rarely.
const cpcListSuffix = "-all-1000000000"

// minHardwareCount is the least count of a probe of a hardware event,
// illumos's dcpc-min-overflow: a counter that overflows more often
// would flood the CPU with interrupts. illumos's cpc has only hardware
// events; the software ones count events the kernel takes anyway (a
// page fault, a context switch) or, for the clocks, fire at most every
// 10 µs whatever the count, and take any count, as Oracle's.
const minHardwareCount = 5000

// lookupCPCEvent returns the event called name: its libpfm4 name or one
// of its others, in any case, with '_' or '-' between words (perf(1)'s
// cpu-clock is cpu_clock).
func lookupCPCEvent(name string) (*cpcEvent, bool) {
	name = strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	for i := range cpcEvents {
		ev := &cpcEvents[i]
		if ev.name == name {
			return ev, true
		}
		for _, a := range ev.aliases {
			if a == name {
				return ev, true
			}
		}
	}
	return nil, false
}

// parseCPC parses a cpc probe's name, event-mode-count, as illumos's
// and Oracle's cpc provider name their probes: an event (lookupCPCEvent;
// its words may be joined by '-', as perf(1) names it), a mode (user,
// kernel or all) and a positive decimal count, at least
// minHardwareCount for a hardware event. illumos's optional attributes
// between mode and count are refused, as Oracle refuses them: Linux's
// generic events take none.
func parseCPC(name string) (CPC, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return CPC{}, false
	}
	digits := name[i+1:]
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return CPC{}, false
	}
	count, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || count == 0 {
		return CPC{}, false
	}
	rest := name[:i]
	j := strings.LastIndexByte(rest, '-')
	if j < 0 {
		return CPC{}, false
	}
	c := CPC{Event: rest[:j], Count: count}
	switch rest[j+1:] {
	case "all":
		c.User, c.Kernel = true, true
	case "user":
		c.User = true
	case "kernel":
		c.Kernel = true
	default:
		return CPC{}, false
	}
	ev, ok := lookupCPCEvent(c.Event)
	if !ok {
		return CPC{}, false
	}
	if ev.typ == PerfTypeHardware && count < minHardwareCount {
		return CPC{}, false
	}
	c.Type, c.Config = ev.typ, ev.config
	return c, true
}

// cpcAttr are the cpc provider's attributes, as Oracle's DTrace for
// Linux gives them.
var cpcAttr = attributes{
	Provider: Attr{evolving, evolving, classCommon},
	Module:   Attr{unstable, unstable, classUnknown},
	Function: Attr{private, private, classUnknown},
	Name:     Attr{evolving, evolving, classCommon},
	Args:     Attr{evolving, evolving, classCommon},
}

// cpcProvider is the cpc provider. Like Oracle's, it lists a probe for
// each event the machine can count (event-all-1000000000), and makes
// any other on demand, when a description names it exactly: for an
// event the machine cannot count, too, so that enabling it says why.
// Its probes have neither module nor function; arg0 and arg1 are the
// kernel's and the user's pc where the event fired, as profile's.
type cpcProvider struct {
	// has reports whether the machine can count events of a type and
	// config; nil lists none.
	has func(typ uint32, config uint64) bool

	listed bool // under mu
	namedProbes
}

// newCPCProvider makes the cpc provider, which lists the events the
// machine can count (has).
func newCPCProvider(string, *source) provider { return newCPC(perfEventHas) }

// newCPC makes the cpc provider over has.
func newCPC(has func(typ uint32, config uint64) bool) *cpcProvider {
	return &cpcProvider{has: has, namedProbes: namedProbes{provider: "cpc", parse: func(name string) (Detail, bool) {
		c, ok := parseCPC(name)
		return &c, ok
	}}}
}

func (*cpcProvider) Name() string           { return "cpc" }
func (*cpcProvider) Attributes() attributes { return cpcAttr }

func (p *cpcProvider) Probes(q *query, yield func(*Probe) bool) error {
	return p.walk(q, func() {
		if p.listed {
			return
		}
		if name, ok := q.Name.Literal(); ok && !strings.HasSuffix(name, cpcListSuffix) {
			// No listed probe has this name (BEGIN, tick-1s): asking
			// the machine for its events, a system call each, can
			// wait for a description that could match one.
			return
		}
		// The machine is asked once, when the provider is first walked.
		p.listed = true
		for _, ev := range cpcEvents {
			if p.has != nil && p.has(ev.typ, ev.config) {
				p.add(ev.name + cpcListSuffix)
			}
		}
	}, yield)
}
