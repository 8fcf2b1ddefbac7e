package probe

import (
	"sync"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// A Probe is one probe a program can enable.
type Probe struct {
	Provider, Module, Function, Name string

	// Detail says how the probe is put in place, for the runtime; its
	// Kind says which type it is: a *Run for the dtrace provider's
	// probes, a *Timer for profile and tick probes, a *Syscall for
	// syscall, a *KernelSite for fbt and kinst, a *UserSite for pid, a
	// *USDTSite for USDT, an *SDT for proc, sched, io, lockstat, ip,
	// tcp and udp, a *CPC for cpc, a *Tracepoint for sdt and rawtp.
	Detail Detail

	// XArgs are the types of the arguments, args[0] on, as dtrace's
	// provider declares them when it translates them from their native
	// types (Args) through the D library's translators: "psinfo_t *"
	// for proc:::create's args[0], natively a struct task_struct *.
	// An element is "" where the argument is not translated; XArgs is
	// nil when none is. Only the proc, sched and io providers translate.
	XArgs []string

	args     argSource // nil when the probe has no typed arguments
	argsOnce sync.Once
	argTypes []types.Type
	argsErr  error
}

// Desc returns the probe's full description.
func (p *Probe) Desc() Desc {
	return Desc{p.Provider, p.Module, p.Function, p.Name}
}

// String returns provider:module:function:name.
func (p *Probe) String() string { return p.Desc().String() }

// Args returns the native types of the probe's arguments, args[0] on,
// with nil where a type is unknown; nil when the probe has no typed
// arguments (dtrace's argc of 0). The types are looked up on the first
// call: listing probes costs no type conversion.
func (p *Probe) Args() ([]types.Type, error) {
	if p.args == nil {
		return nil, nil
	}
	p.argsOnce.Do(func() {
		p.argTypes, p.argsErr = p.args.probeArgs(p)
	})
	return p.argTypes, p.argsErr
}

// An argSource finds the argument types of its probes: a provider.
type argSource interface {
	probeArgs(p *Probe) ([]types.Type, error)
}

// stability is dtrace's stability level of a name or of data.
type stability uint8

// The stability levels, lowest first (DTRACE_STABILITY_*).
const (
	internal stability = iota
	private
	obsolete
	external
	unstable
	evolving
	stable
	standard
)

var stabilityNames = [...]string{"Internal", "Private", "Obsolete", "External", "Unstable", "Evolving", "Stable", "Standard"}

func (s stability) String() string {
	if int(s) < len(stabilityNames) {
		return stabilityNames[s]
	}
	return "Unknown"
}

// class is dtrace's dependency class: how widely an interface exists.
type class uint8

// The dependency classes, narrowest first (DTRACE_CLASS_*).
const (
	classUnknown class = iota
	classCPU
	classPlatform
	classGroup
	classISA
	classCommon
)

var classNames = [...]string{"Unknown", "CPU", "Platform", "Group", "ISA", "Common"}

func (c class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "Unknown"
}

// Attr is the stability of a name and of its data, and its class.
type Attr struct {
	Name, Data stability
	Class      class
}

// attributes are a provider's attributes: those of the provider's name,
// of the three other fields of its probes' descriptions, and of their
// arguments (dtrace_pattr_t).
type attributes struct {
	Provider, Module, Function, Name, Args Attr
}

// The attributes of the providers here, as their FreeBSD counterparts
// register them.
var (
	// dtrace: BEGIN, END, ERROR.
	dtraceAttr = attributes{
		Provider: Attr{stable, stable, classCommon},
		Module:   Attr{private, private, classUnknown},
		Function: Attr{private, private, classUnknown},
		Name:     Attr{stable, stable, classCommon},
		Args:     Attr{stable, stable, classCommon},
	}
	// profile, fbt, kinst and syscall (systrace) share these.
	kernelAttr = attributes{
		Provider: Attr{evolving, evolving, classCommon},
		Module:   Attr{private, private, classUnknown},
		Function: Attr{private, private, classISA},
		Name:     Attr{evolving, evolving, classCommon},
		Args:     Attr{private, private, classISA},
	}
	// USDT from <sys/sdt.h> notes: as pid's, but the arguments are the
	// program's own, typed alike at every point of a probe, so args[]
	// may be used on a description that matches the probe in several
	// functions, as a provider declaring Evolving args allows in dtrace.
	usdtAttr = attributes{
		Provider: Attr{evolving, evolving, classISA},
		Module:   Attr{private, private, classUnknown},
		Function: Attr{private, private, classUnknown},
		Name:     Attr{evolving, evolving, classISA},
		Args:     Attr{evolving, evolving, classISA},
	}
	// pid (fasttrap).
	pidAttr = attributes{
		Provider: Attr{evolving, evolving, classISA},
		Module:   Attr{private, private, classUnknown},
		Function: Attr{private, private, classUnknown},
		Name:     Attr{evolving, evolving, classISA},
		Args:     Attr{private, private, classUnknown},
	}
)
