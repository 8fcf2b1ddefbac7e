// Package probe knows which probes exist and matches probe descriptions
// against them, as dtrace does when it compiles a clause (dt_setcontext
// calling dtrace_probe_info): a description that matches no probe is
// the compiler's D_PDESC_ZERO unless -Z is given. It is also where the
// compiler finds the native types of a probe's arguments, args[].
//
// Probe matching belongs to the runtime side; the compiler asks through
// Matcher (compile.go), which implements check.Probes over a Catalog,
// and with an offline kernel it asks a catalog of that kernel's files.
//
// # Data flow
//
//	Desc (provider:module:function:name, filled from the right by the parser)
//	  │
//	  ▼
//	Catalog.Walk / Match / Count / Info
//	  │  1. pid<N>: make the process's pid probes first (dt_pid.c's rules)
//	  │  2. match the provider's name; a literal one is a map lookup
//	  ▼
//	Provider.Probes(Query) ──► yield(*Probe) ... ──► the caller
//	  dtrace   BEGIN END ERROR
//	  profile  profile-N, tick-N: listed ones, and any other made on demand
//	  syscall  tracefs events/syscalls, or the kernel's __x64_sys_* handlers
//	  fbt      function lists ◄── BTF FUNC records (/sys/kernel/btf), kallsyms,
//	  kinst                       or an image's ELF symbol table (Offline)
//	  pid<N>   /proc/N/maps ──► each object's ELF symbols (amd64 decoding
//	                            for offsets)
//	  proc     fixed tables of probes made from Linux tracepoints (an
//	  sched    *SDT each: sites, conditions and arguments as D
//	  io       expressions)
//	  │
//	  ▼
//	Probe.Args ◄── KernelTypes (package btf) on first use: listing probes
//	               converts no types
//	Probe.XArgs    the types proc, sched and io translate args[] to
//	               (psinfo_t *, …), through the D library's translators
//	Probe.Detail   how the runtime puts the probe in place; its Kind
//	               picks the runtime's code for it (internal/linux's kinds)
//
// A Desc's empty field matches anything; a field holding * ? [ or \ is
// a glob, matched as the kernel's dtrace_match_glob does (Glob); any
// other field matches only itself. Providers look at the literal fields
// first: fbt::vfs_read:entry is a hash lookup, and a name other than
// entry or return never lists the kernel's functions.
//
// Info answers the compiler's question as dtrace_probe_info does: it
// stops at the second probe, and when two or more match it gives
// argument types only if the provider vouches that they agree (its
// argument data is at least Evolving and no field of Evolving name
// stability was left empty or globbed). For fbt, syscall, profile,
// kinst and pid, whose argument data is Private, only a description
// matching exactly one probe has typed arguments. proc, sched and io
// declare theirs Evolving, as illumos does: a description that gives the
// probe's name types args[] even when it matches several probes
// (:::start is proc's and io's).
//
// Probe.Args are the arguments' native types, those of the kernel's
// data; Probe.XArgs are the types dtrace's provider declares them as
// when it translates them, and Info gives both. Where the two differ,
// the D compiler makes args[N] an XArgs[N] through the D library's
// translator from Args[N] (psinfo_t from struct task_struct *), as
// dt_idcook_args does.
//
// # Providers
//
// dtrace: BEGIN, END and ERROR, with empty module and function.
//
// profile: profile-N and tick-N, N a positive decimal number with an
// optional unit (ns nsec us usec ms msec s sec m min h hour d day hz, in
// any case; none means hz); intervals under 200 µs do not exist, as in
// FreeBSD's and illumos's provider. profile-97, -199, -499, -997, -1999,
// -4001, -4999 and tick-1, -10, -100, -500, -1000, -5000 are listed from
// the start; any other is made when a description names it, and stays,
// so a later glob matches it as dtrace's would.
//
// fbt: entry and return of each kernel function, module vmlinux or the
// module's name. Entry arguments are the BTF prototype's parameters;
// return probes have args[0], the offset of the returning instruction
// (int), and args[1], the return value, as FreeBSD's fbt; a void
// function's return probe has args[0] only. In a live catalog a glob
// over functions matches only those the kernel lets fbt probe: in
// tracefs's available_filter_functions and not on the kprobe blacklist,
// both read once, when a glob first needs them (a function named in full
// is matched regardless, so that enabling it says why it cannot be).
//
// kinst: kinst:module:function:offset, made on demand as FreeBSD's: the
// function must be literal; a decimal offset names one probe; an empty
// or glob name names every instruction of the function's code, read
// from the image offline and, on a running Linux kernel, from
// /proc/kcore at the address and size kallsyms gives (the distance to
// the next symbol). Where the code cannot be read, such a description
// is an error that says why; on FreeBSD, until the runtime asks the
// kernel, it names the entry, offset 0, alone.
//
// syscall: syscall:vmlinux:call:entry and :return, as Oracle's DTrace
// for Linux names them, entry arguments typed from the tracepoint's
// format, or where tracefs cannot be read, from a table of x86-64's
// formats (zsysargs.go, made by TestSyscallTableUpdate -update), or from
// __do_sys_call's prototype; return arguments long.
//
// proc, sched and io: dtrace's stable providers, whose probes illumos
// and FreeBSD compile into their kernels. Linux has none of them, so
// each probe is made from the kernel's tracepoints (or, for
// sched:::enqueue, dequeue and tick, a kernel function's entry): its
// Detail, an *SDT, lists the sites it fires from, the condition at each
// and the D expressions that compute its arguments from the site's.
// Module vmlinux and function "", as in Oracle's DTrace for Linux, so
// proc:::create names one probe. The names and argument types are
// illumos's: proc create, exec, exec-failure, exec-success,
// lwp-create, start, lwp-start, lwp-exit, exit, signal-send,
// signal-discard, signal-clear, signal-handle; sched change-pri,
// dequeue, enqueue, preempt, sleep, off-cpu, on-cpu, remain-cpu,
// surrender, tick, wakeup; io start and done. Those Linux cannot make
// are left out: proc:::fault, sched's schedctl-* and cpucaps-*,
// FreeBSD's lend-pri and load-change, io's wait-start and wait-done.
// They are listed whether or not the running kernel has their sites;
// the runtime finds out when it enables them.
//
// pid<N>: for a running process, function entry and return and
// instruction offsets (named in hex) in any object it maps, made as
// dt_pid.c makes them, with its errors (*ProcError, carrying dtrace's
// tag: D_PROC_GRAB, D_PROC_FUNC, D_PROC_NAME, D_PROC_OFF, …).
//
// USDT: a description whose provider ends in a process ID and is not
// pid<N> (foo<N>, or a glob such as foo*<N>) makes all of that
// process's USDT providers, from the .note.stapsdt notes that
// <sys/sdt.h>'s macros leave in each object it maps: provider<N>:
// object:function:name, "__" in a C probe name read as "-", one probe
// (a *USDTSite) for all the points of a name in one function, its
// arguments typed by the sizes the notes give them (int32_t for
// "-4@%edi"). Unknown providers match nothing.
//
// # Adding a provider
//
// A provider is a type implementing Provider (its name, its stability
// Attributes, Probes to list what a Query matches) whose probes carry
// a Detail; it is made in one place, the providers table
// (providers.go), which Live and Offline build their catalogs from, in
// its order: a new row goes last, so that no existing probe's ID
// changes. What a provider says of its probes is all here, in probe:
//
//   - dtrace -l lists what Probes yields; -lv adds the provider's
//     Attributes, each probe's Args (the native types, found through
//     the probe's argSource on first use) and XArgs (the translated
//     types), and, where Probe.Frame says the probe fires in a
//     function's frame, the locals there;
//   - the compiler types args[] from Catalog.Info, which takes the same
//     Args and XArgs, vouched for by the Attributes;
//   - the runtime puts each probe in place by its Detail's Kind.
//
// A provider made of the kernel's tracepoints is a table of sdtSpecs,
// each a probe's name, argument types and the sites it fires from
// (sdt.go), and a row naming the table: sdtRow(specs), with
// tracepoints set so that offline catalogs leave it out. Its probes are
// *SDTs, of KindSDT, which the Linux runtime already places (a program
// per tracepoint, the sites' D expressions compiled into it) and
// attaches: no other code changes.
//
// A provider whose probes are put in place as an existing kind's are (a
// *KernelSite on a kernel function, a *UserSite in a process, a *Timer)
// is a type here and a row; nothing outside probe changes.
//
// A provider of a new kind of probe also needs: a Detail type and its
// Kind constant (kind.go); in internal/linux, an entry in its kinds table
// (kinds.go) that places the probes in groups, one BPF program each,
// choosing the program's context (bpf.Context) and each probe's index
// in it (its cookie), and attaches a group's program (through a
// function of package internal/linux/attach, which owns what it
// attaches); and a bpf.Context only if the program is of a type no
// other kind's is. Where its probes fire in a function's frame,
// Probe.Frame says so and package dtrace's locals reader reads the
// frame.
//
// # Catalogs
//
// Live is the running system's catalog (Linux; elsewhere
// ErrLiveUnsupported: on FreeBSD it would come from /dev/dtrace).
// Offline is a catalog of kernel image files, for compiling without the
// kernel running. New builds a catalog of any providers. Everything is
// read lazily: the kernel's function list on the first description that
// needs it (about 5 ms for the 56,000 functions of a 5.5 MB BTF,
// mapped), after which an exact description costs about a microsecond.
// A loaded module without BTF (/proc/modules names it, /sys/kernel/btf
// does not: an out-of-tree module built against a distribution's
// headers) has its functions listed from kallsyms.
//
// Errors say what could not be read and why: a provider's as a
// *ProviderError, the pid provider's refusals as a *ProcError.
package probe
