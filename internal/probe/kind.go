package probe

import "errors"

// A Kind is how a probe is put in place: which type its Detail is, and
// so, for the runtime, which program context it gets and how that
// program is attached. Providers share kinds: fbt and kinst make
// KernelSites, every provider made of tracepoints (proc, sched, io,
// lockstat, ip, tcp, udp) makes SDTs, and sdt and rawtp make
// Tracepoints. The runtime dispatches on the kind once, in one table
// (internal/linux's kinds), so a provider of an existing kind adds
// nothing there.
type Kind uint8

// The kinds of probes, one per Detail type.
const (
	// KindRun is the dtrace provider's BEGIN, END and ERROR, whose
	// programs the consumer runs itself (*Run).
	KindRun Kind = iota
	// KindTimer is profile-N and tick-N (*Timer).
	KindTimer
	// KindSyscall is a system call's entry or return, from the raw
	// sys_enter and sys_exit tracepoints (*Syscall).
	KindSyscall
	// KindKernel is a kernel function's entry, return or instruction:
	// a kprobe, or a BPF trampoline (*KernelSite).
	KindKernel
	// KindUser is a function's entry, return or instruction in a
	// process: a uprobe (*UserSite).
	KindUser
	// KindUSDT is a USDT probe's points in a process: a uprobe each
	// (*USDTSite).
	KindUSDT
	// KindSDT is a probe made of the kernel's tracepoints, each site
	// with a condition and arguments given in D (*SDT).
	KindSDT
	// KindCPC is a cpc probe: a perf event on each CPU (*CPC).
	KindCPC
	// KindTracepoint is a trace event of the sdt or rawtp provider
	// (*Tracepoint), which fires as an SDT site does.
	KindTracepoint
)

// A Detail says how a probe is put in place, for the runtime: a *Run,
// *Timer, *Syscall, *KernelSite, *UserSite, *USDTSite, *SDT, *CPC or
// *Tracepoint, as its Kind says.
type Detail interface {
	Kind() Kind
}

// A Run is the detail of the dtrace provider's probes, which the
// consumer fires itself: BEGIN before tracing starts, END after it
// stops, ERROR where a clause faults.
type Run struct{}

func (*Run) Kind() Kind        { return KindRun }
func (*Timer) Kind() Kind      { return KindTimer }
func (*Syscall) Kind() Kind    { return KindSyscall }
func (*KernelSite) Kind() Kind { return KindKernel }
func (*UserSite) Kind() Kind   { return KindUser }
func (*USDTSite) Kind() Kind   { return KindUSDT }
func (*SDT) Kind() Kind        { return KindSDT }
func (*CPC) Kind() Kind        { return KindCPC }
func (*Tracepoint) Kind() Kind { return KindTracepoint }

// ErrNoFrame is Probe.Frame's error for a probe that fires in no traced
// function's frame.
var ErrNoFrame = errors.New("locals-> reads a function's variables at kinst and pid probes")

// Frame returns nil when the probe fires inside a traced function's
// frame, where locals-> reads the function's variables: a kinst probe,
// or a pid probe at a function's entry or an offset in it. It returns
// ErrNoFrame for any other probe, and another error for a pid return
// probe, which fires once the frame is gone.
func (p *Probe) Frame() error {
	switch site := p.Detail.(type) {
	case *KernelSite:
		if p.Provider == "kinst" {
			return nil
		}
	case *UserSite:
		if site.Return {
			return errors.New("a return probe fires once the function's frame is gone")
		}
		if site.Addr != 0 {
			return nil
		}
	}
	return ErrNoFrame
}
