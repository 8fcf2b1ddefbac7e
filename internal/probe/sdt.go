package probe

import (
	"sync"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// An SDT says how a probe of the proc, sched, io, ip, tcp or udp
// provider is put in place on Linux. illumos and FreeBSD compile these probes into their
// kernels (statically defined tracing); Linux has none of them, so each
// is made from Linux's own tracepoints: the probe fires when one of its
// Sites fires and that site's condition holds, with arguments computed
// from the site's.
//
// Probes that share a site fire in the order the provider lists them,
// which is the order illumos fires them in: proc:::start before
// proc:::lwp-start, proc:::lwp-exit before proc:::exit,
// proc:::signal-send before proc:::signal-discard, sched:::preempt and
// sched:::sleep before sched:::off-cpu.
type SDT struct {
	Sites []SDTSite
}

// An SDTSite is a kernel event an SDT probe fires from: a tracepoint or,
// where Linux has no tracepoint, a kernel function's entry.
//
// Cond and Args are D expressions over the site's own arguments arg0,
// arg1, … (uint64_t, as D's built-in argN), curthread and constants:
//
//   - for a tracepoint of System "syscalls", the system call's arguments
//     (the format's fields after __syscall_nr) at sys_enter_*, its return
//     value at sys_exit_*;
//   - for another tracepoint, the parameters of its prototype after the
//     context pointer (the kernel's BTF type btf_trace_<Event>), as
//     raw tracepoint and tp_btf programs see them;
//   - for a Record site, arg0 is the address of the event's record;
//   - for a function, its parameters.
//
// Every site runs in the thread the probe fires in, as illumos
// documents it (sched:::on-cpu in the thread coming on the CPU, at the
// end of the switch), so that curthread, pid, execname and the other
// built-in variables at the probe are those of the thread running the
// site.
type SDTSite struct {
	// System and Event name a Linux tracepoint: "sched" and
	// "sched_switch", "syscalls" and "sys_enter_execve". System is ""
	// for a tracepoint the kernel declares without a trace event
	// (DECLARE_TRACE, as sched_exit_tp): it is not in tracefs, and only
	// raw tracepoint and tp_btf programs reach it.
	System, Event string
	// Record is set for a site whose arg0 is the address of its trace
	// event's record, as a perf event program on the event sees it,
	// instead of the raw tracepoint's first argument: the sdt
	// provider's, whose arguments are the record's fields.
	Record bool
	// Function is set instead of Event for a site with no tracepoint:
	// the entry of that function of the kernel (vmlinux), which needs a
	// kprobe or an fentry program; a kernel without kprobes that
	// refuses BPF trampolines cannot make the probe.
	Function string
	// Since, for a tracepoint, names an event of the same System the
	// thread passes before this one with the same arg0, such as
	// contention_begin before contention_end for one lock: arg8 is
	// then the time (as timestamp) the thread passed Since, and arg9
	// Since's arg1; both are 0 when it did not pass Since since it last
	// passed this site, or not while tracing.
	Since string
	// Cond must be true for the probe to fire; "" when it always fires.
	Cond string
	// Args give the probe's arguments, args[0] on, in their native types
	// (Probe.Args).
	Args []string
}

// String returns the site as system:event, :event for a tracepoint
// without a trace event, or the function's name followed by ().
func (s *SDTSite) String() string {
	if s.Function != "" {
		return s.Function + "()"
	}
	return s.System + ":" + s.Event
}

// stabAttr are the attributes of dtrace's stable SDT providers (proc,
// sched, io), as illumos's sdt registers them and Oracle's DTrace for
// Linux does: argument types are Evolving, so a description that names
// its probe types args[] even when it matches several probes.
var stabAttr = attributes{
	Provider: Attr{evolving, evolving, classISA},
	Module:   Attr{private, private, classUnknown},
	Function: Attr{private, private, classUnknown},
	Name:     Attr{evolving, evolving, classISA},
	Args:     Attr{evolving, evolving, classISA},
}

// An sdtArg is the type of an SDT probe's argument: native, a C type
// name looked up in the kernel's types ("string" is D's string), and
// xlate, dtrace's type when the provider translates the argument, else
// "".
type sdtArg struct {
	native, xlate string
}

// An sdtSpec is an SDT probe: its name, argument types and sites. The
// providers' specs are composite literals of constants, which the
// compiler makes static data, at no cost at start-up; it does so only
// while no variable of the package initialised before them calls a
// function (TestKdtraceInit, in internal/layers, would see the cost).
type sdtSpec struct {
	name  string
	args  []sdtArg
	sites []SDTSite
	// older are the sites on a kernel that does not have the
	// tracepoint or function of sites[0] (its BTF has no
	// btf_trace_<Event>, or no such function), older than the one it
	// came with; nil when there are none.
	older []SDTSite
}

// The types that recur in the specs.
var (
	argLWP  = sdtArg{"struct task_struct *", "lwpsinfo_t *"}
	argProc = sdtArg{"struct task_struct *", "psinfo_t *"}
	argInt  = sdtArg{"int", ""}
)

// Flags and values of the kernel's that the specs test, from its headers
// (they are #defines, not in BTF).
const (
	// cloneThread is CLONE_THREAD (uapi/linux/sched.h).
	cloneThread = "0x10000"
	// enqueueHead is ENQUEUE_HEAD (kernel/sched/sched.h, 6.17 on).
	enqueueHead = "0x10000"
)

// The D expressions the specs share.
const (
	task0 = "(struct task_struct *)arg0"
	task1 = "(struct task_struct *)arg1"
	task2 = "(struct task_struct *)arg2"
	// firstRun is true at sched_exit_tp when the thread runs for the
	// first time: it has never been switched out.
	firstRun = "arg0 != 0 && curthread->nvcsw + curthread->nivcsw == 0"
	// exitReason is proc:::exit's args[0] from sched_process_exit's
	// task: CLD_EXITED (1), CLD_DUMPED (3) or CLD_KILLED (2), decoded
	// from its exit code as wait(2) decodes the status.
	exitReason = "(((struct task_struct *)arg0)->exit_code & 0x7f) == 0 ? 1 : " +
		"(((struct task_struct *)arg0)->exit_code & 0x80) != 0 ? 3 : 2"
	// newPrio is the priority sched_pi_setprio sets, computed as the
	// tracepoint's own newprio field.
	newPrio = "(struct task_struct *)arg1 != NULL && " +
		"((struct task_struct *)arg1)->prio < ((struct task_struct *)arg0)->normal_prio ? " +
		"((struct task_struct *)arg1)->prio : ((struct task_struct *)arg0)->normal_prio"
)

// procSpecs are the proc provider's probes: those of FreeBSD's and
// illumos's proc provider that Linux's tracepoints can make, with
// illumos's argument types (FreeBSD's leave struct proc * and struct
// thread * untranslated). proc:::fault is illumos's only one missing:
// Linux has no event for a machine fault that becomes a signal.
var procSpecs = []sdtSpec{{
	// In the parent, once the child exists. FreeBSD's arguments, the
	// child, the parent and the fork flags (illumos gives the child
	// only); the flags are clone's.
	name: "create",
	args: []sdtArg{argProc, argProc, {"u64", "int"}},
	sites: []SDTSite{{System: "task", Event: "task_newtask",
		Cond: "(arg1 & " + cloneThread + ") == 0",
		Args: []string{task0, "curthread", "arg1"}}},
}, {
	// Before the exec is attempted: the path is in user memory.
	name: "exec",
	args: []sdtArg{{"string", ""}},
	sites: []SDTSite{
		{System: "syscalls", Event: "sys_enter_execve", Args: []string{"copyinstr(arg0)"}},
		{System: "syscalls", Event: "sys_enter_execveat", Args: []string{"copyinstr(arg1)"}},
	},
}, {
	name: "exec-failure",
	args: []sdtArg{argInt},
	sites: []SDTSite{
		{System: "syscalls", Event: "sys_exit_execve", Cond: "(long)arg0 < 0", Args: []string{"-(int)arg0"}},
		{System: "syscalls", Event: "sys_exit_execveat", Cond: "(long)arg0 < 0", Args: []string{"-(int)arg0"}},
	},
}, {
	// In the new image.
	name:  "exec-success",
	sites: []SDTSite{{System: "sched", Event: "sched_process_exec"}},
}, {
	// In the creating thread.
	name: "lwp-create",
	args: []sdtArg{argLWP, argProc},
	sites: []SDTSite{{System: "task", Event: "task_newtask",
		Cond: "(arg1 & " + cloneThread + ") != 0",
		Args: []string{task0, task0}}},
}, {
	// In the new process, the first time it runs.
	name: "start",
	sites: []SDTSite{{Event: "sched_exit_tp",
		Cond: firstRun + " && curthread->pid == curthread->tgid"}},
}, {
	// In the new thread, the first time it runs.
	name:  "lwp-start",
	sites: []SDTSite{{Event: "sched_exit_tp", Cond: firstRun}},
}, {
	name:  "lwp-exit",
	sites: []SDTSite{{System: "sched", Event: "sched_process_exit"}},
}, {
	// When the process's last thread exits (group_dead).
	name: "exit",
	args: []sdtArg{argInt},
	sites: []SDTSite{{System: "sched", Event: "sched_process_exit",
		Cond: "arg1 != 0", Args: []string{exitReason}}},
}, {
	// To the thread or process the signal is sent to.
	name: "signal-send",
	args: []sdtArg{argLWP, argProc, argInt},
	sites: []SDTSite{{System: "signal", Event: "signal_generate",
		Args: []string{task2, task2, "(int)arg0"}}},
}, {
	// The signal is ignored (TRACE_SIGNAL_IGNORED).
	name: "signal-discard",
	args: []sdtArg{argLWP, argProc, argInt},
	sites: []SDTSite{{System: "signal", Event: "signal_generate",
		Cond: "arg4 == 1", Args: []string{task2, task2, "(int)arg0"}}},
}, {
	// A pending signal is taken by sigwait(2) and its kin.
	name: "signal-clear",
	args: []sdtArg{argInt},
	sites: []SDTSite{{System: "syscalls", Event: "sys_exit_rt_sigtimedwait",
		Cond: "(long)arg0 > 0", Args: []string{"(int)arg0"}}},
}, {
	// In the receiving thread, before its handler or default action.
	// illumos declares the handler void (*)(void); it is the kernel's
	// __sighandler_t, void (*)(int), and needs no translation.
	name: "signal-handle",
	args: []sdtArg{argInt, {"struct kernel_siginfo *", "siginfo_t *"}, {"__sighandler_t", ""}},
	sites: []SDTSite{{System: "signal", Event: "signal_deliver",
		Args: []string{"(int)arg0", "(struct kernel_siginfo *)arg1", "((struct k_sigaction *)arg2)->sa.sa_handler"}}},
}}

// schedSpecs are the sched provider's probes: those of illumos's and
// FreeBSD's sched provider that Linux's tracepoints, or for enqueue,
// dequeue and tick a kernel function, can make, with illumos's argument
// types. illumos's schedctl-nopreempt, schedctl-preempt,
// schedctl-yield, cpucaps-sleep and cpucaps-wakeup and FreeBSD's
// lend-pri and load-change are missing: Linux has no schedctl, CPU
// caps or priority lending, and no event for a run queue's length
// with the thread that changed it.
var schedSpecs = []sdtSpec{{
	// Only priority inheritance: Linux has no tracepoint where nice(2)
	// or sched_setscheduler(2) changes a priority. The priority is the
	// kernel's (0 to 139, lower runs first), as lwpsinfo_t's pr_pri.
	name: "change-pri",
	args: []sdtArg{argLWP, argProc, argInt},
	sites: []SDTSite{{System: "sched", Event: "sched_pi_setprio",
		Args: []string{task0, task0, newPrio}}},
}, {
	name: "dequeue",
	args: []sdtArg{argLWP, argProc, {"struct rq *", "cpuinfo_t *"}},
	sites: []SDTSite{{Function: "dequeue_task",
		Args: []string{task1, task1, "(struct rq *)arg0"}}},
}, {
	// args[3] is set when the thread goes to the front of the queue.
	name: "enqueue",
	args: []sdtArg{argLWP, argProc, {"struct rq *", "cpuinfo_t *"}, argInt},
	sites: []SDTSite{{Function: "enqueue_task",
		Args: []string{task1, task1, "(struct rq *)arg0", "(arg2 & " + enqueueHead + ") != 0"}}},
}, {
	// The thread is switched out while it can still run: preempted, or
	// giving up the CPU without blocking. The idle thread is not.
	name: "preempt",
	sites: []SDTSite{{System: "sched", Event: "sched_switch",
		Cond: "(arg0 != 0 || arg3 == 0) && ((struct task_struct *)arg1)->pid != 0"}},
}, {
	// The thread is switched out to block.
	name:  "sleep",
	sites: []SDTSite{{System: "sched", Event: "sched_switch", Cond: "arg0 == 0 && arg3 != 0"}},
}, {
	// In the thread leaving the CPU; the arguments are the next one.
	name: "off-cpu",
	args: []sdtArg{argLWP, argProc},
	sites: []SDTSite{{System: "sched", Event: "sched_switch",
		Args: []string{task2, task2}}},
}, {
	// In the thread, once it is on the CPU: __schedule's end after a
	// switch, or schedule_tail's for a new thread.
	name:  "on-cpu",
	sites: []SDTSite{{Event: "sched_exit_tp", Cond: "arg0 != 0"}},
}, {
	// __schedule chose the thread that was running.
	name:  "remain-cpu",
	sites: []SDTSite{{Event: "sched_exit_tp", Cond: "arg0 == 0"}},
}, {
	// The thread running on a CPU is told to reschedule.
	name: "surrender",
	args: []sdtArg{argLWP, argProc},
	sites: []SDTSite{{Event: "sched_set_need_resched_tp",
		Args: []string{task0, task0}}},
}, {
	// The scheduler's clock tick, in the thread it interrupts.
	name:  "tick",
	args:  []sdtArg{argLWP, argProc},
	sites: []SDTSite{{Function: "sched_tick", Args: []string{"curthread", "curthread"}}},
	// Before Linux 6.10, sched_tick was scheduler_tick.
	older: []SDTSite{{Function: "scheduler_tick", Args: []string{"curthread", "curthread"}}},
}, {
	// In the waking thread; the arguments are the one woken.
	name: "wakeup",
	args: []sdtArg{argLWP, argProc},
	sites: []SDTSite{{System: "sched", Event: "sched_waking",
		Args: []string{task0, task0}}},
}}

// ioSpecs are the io provider's probes, illumos's four, with its
// argument types.
//
// start and done are made of blk-mq's requests, the I/O Linux sends to
// a device (as illumos's fire for the buf a disk driver is given), so
// that each request fires one start and, once completed, one done with
// the same args[0] (and arg0): start where the request is made from its
// first bio, in the thread that submitted the bio (block_io_start; on a
// kernel before 6.5, which lacks it, where the request is sent to the
// device driver, block_rq_issue, in whichever thread sends it), done
// at its completion (block_rq_complete) before any of its bytes are
// accounted. Requests without a bio, the flushes the block layer makes
// for its own sequence, fire neither; a request completed in parts
// fires done at the last. A cache flush a file system asks for (an
// empty write with REQ_PREFLUSH) is a write of 0 bytes. A bio-based device (device mapper, md, zram)
// makes no requests: its I/O fires at the devices beneath it.
//
// wait-start and wait-done are the thread's wait for I/O, in it: Linux
// does not say which request a thread waits for, only that it waits in
// io_schedule() (in_iowait, which the kernel counts as iowait), so they
// have no arguments. wait-start is the thread leaving the CPU with
// in_iowait set, wait-done the thread back on it: mostly a sleep, but
// also a preemption while io_schedule() flushes the thread's plugged
// requests, so that each wait-start has its wait-done.
var ioSpecs = []sdtSpec{{
	name: "start",
	args: ioArgs,
	sites: []SDTSite{{System: "block", Event: "block_io_start",
		Cond: "((struct request *)arg0)->bio != NULL",
		Args: []string{"(struct request *)arg0", "(struct request *)arg0", "(struct request *)arg0"}}},
	older: []SDTSite{{System: "block", Event: "block_rq_issue",
		Cond: "((struct request *)arg0)->bio != NULL",
		Args: []string{"(struct request *)arg0", "(struct request *)arg0", "(struct request *)arg0"}}},
}, {
	// arg2 is the bytes completed, the request's __data_len when it
	// completes them all.
	name: "done",
	args: ioArgs,
	sites: []SDTSite{{System: "block", Event: "block_rq_complete",
		Cond: "((struct request *)arg0)->bio != NULL && (unsigned int)arg2 >= ((struct request *)arg0)->__data_len",
		Args: []string{"(struct request *)arg0", "(struct request *)arg0", "(struct request *)arg0"}}},
}, {
	name: "wait-start",
	sites: []SDTSite{{System: "sched", Event: "sched_switch",
		Cond: "((struct task_struct *)arg1)->in_iowait"}},
}, {
	name:  "wait-done",
	sites: []SDTSite{{Event: "sched_exit_tp", Cond: "arg0 != 0 && curthread->in_iowait"}},
}}

// ioArgs are the arguments of io:::start and io:::done.
var ioArgs = []sdtArg{{"struct request *", "bufinfo_t *"}, {"struct request *", "devinfo_t *"}, {"struct request *", "fileinfo_t *"}}

// sdtProvider is a provider made of tracepoints (proc, sched, io,
// lockstat, ip, tcp, udp): a fixed list of probes,
// module vmlinux and function "", as Oracle's DTrace for Linux names
// them, made from Linux's tracepoints (see SDT). The probes are made
// from the specs when the provider is first walked: a run that names
// none of its probes makes none.
type sdtProvider struct {
	name   string
	k      *kernel
	specs  []sdtSpec
	made   sync.Once
	probes []*sdtProbe
}

// sdtProbe is an SDT probe with its spec and detail, allocated together.
type sdtProbe struct {
	Probe
	spec   *sdtSpec
	detail SDT
	// sites chooses the detail's sites, spec.sites or spec.older, the
	// first time the probe is listed.
	sites sync.Once
}

func newSDTProvider(name string, specs []sdtSpec, k *kernel) *sdtProvider {
	return &sdtProvider{name: name, k: k, specs: specs}
}

// list returns the provider's probes, made the first time.
func (s *sdtProvider) list() []*sdtProbe {
	s.made.Do(func() {
		for i := range s.specs {
			spec := &s.specs[i]
			p := &sdtProbe{
				Probe:  Probe{Provider: s.name, Module: KernelModule, Name: spec.name},
				spec:   spec,
				detail: SDT{Sites: spec.sites},
			}
			p.Detail = &p.detail
			if len(spec.args) > 0 {
				p.args = s
				for j, a := range spec.args {
					if a.xlate == "" {
						continue
					}
					if p.XArgs == nil {
						p.XArgs = make([]string, len(spec.args))
					}
					p.XArgs[j] = a.xlate
				}
			}
			s.probes = append(s.probes, p)
		}
	})
	return s.probes
}

func (s *sdtProvider) Name() string         { return s.name }
func (*sdtProvider) Attributes() attributes { return stabAttr }

func (s *sdtProvider) Probes(q *query, yield func(*Probe) bool) error {
	for _, p := range s.list() {
		if !q.matchesMFN(p.Module, p.Function, p.Name) {
			continue
		}
		p.sites.Do(func() {
			if p.spec.older != nil && !s.hasSite(&p.spec.sites[0]) {
				p.detail.Sites = p.spec.older
			}
		})
		if !yield(&p.Probe) {
			break
		}
	}
	return nil
}

// hasSite reports whether the kernel has site st's tracepoint or
// function: whether its BTF has the type of the tracepoint's probes,
// btf_trace_<Event>, or the function. Without the kernel's types it
// cannot tell, and says yes: the sites of the newest kernels are kept.
func (s *sdtProvider) hasSite(st *SDTSite) bool {
	kt, err := s.k.typesOf(KernelModule)
	if kt == nil || err != nil {
		return true
	}
	if st.Function != "" {
		f, _, err := kt.LookupFunc(st.Function)
		return f != nil && err == nil
	}
	t, err := kt.LookupType("btf_trace_" + st.Event)
	return t != nil && err == nil
}

// spec returns the spec of the provider's probe p, nil if p is not one.
func (s *sdtProvider) spec(p *Probe) *sdtSpec {
	for _, sp := range s.list() {
		if &sp.Probe == p {
			return sp.spec
		}
	}
	return nil
}

// probeArgs returns the native types of p's arguments from the kernel's
// types, nil where a type is not found; nil when there are no types.
func (s *sdtProvider) probeArgs(p *Probe) ([]types.Type, error) {
	spec := s.spec(p)
	if spec == nil {
		return nil, nil
	}
	kt, err := s.k.typesOf(KernelModule)
	if kt == nil || err != nil {
		return nil, err
	}
	args := make([]types.Type, len(spec.args))
	for i, a := range spec.args {
		args[i] = sdtType(a.native, kt)
	}
	return args, nil
}

// defaultStrSize is the size of D's string type under dtrace's default
// strsize option, for arguments whose native type is string.
const defaultStrSize = 256

// sdtType returns the type called name: D's string, or a C type name
// ("int", "struct task_struct *") of kt; nil when it is not found.
func sdtType(name string, kt KernelTypes) types.Type {
	if name == "string" {
		return &types.String{Bytes: defaultStrSize}
	}
	return parseCType(name+" _", kt)
}
