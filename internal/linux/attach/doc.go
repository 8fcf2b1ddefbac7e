// Package attach puts loaded BPF programs in place in the Linux kernel
// and takes them out again: the Linux runtime's probes. It knows the
// kernel facts that takes: the x86-64 system call numbers, which probe
// kinds the kernel has, where a user probe may go.
//
// # Data flow
//
// The runtime builds one BPF program per attachment group of a D program
// (every syscall entry probe; every pid probe; every profile-N of one
// rate) and hands it here with the group's sites, from package probe:
//
//	raw_tp program ──► Syscalls ──► raw tracepoint sys_enter or sys_exit;
//	                                the program tells calls apart by
//	                                their number (SyscallNumber)
//	raw_tp program ──► RawTracepoint ──► a tracepoint by name
//	tracepoint prog ─► Tracepoint ──► system:event, through a perf event
//	perf_event prog ─► Profile ──► a cpu-clock perf event per online CPU
//	kprobe program ──► Uprobes (*probe.UserSite)  ┐ one link per file,
//	                   USDT (*probe.USDTSite)     ┘ process and kind
//	kprobe program ──► Kprobes (*probe.KernelSite)
//	tracing program ─► Trampoline (one *probe.KernelSite) ──► fentry, fexit
//
// Each call attaches one group and returns an *Attachment whose Close
// detaches everything the call made. A program that serves several
// sites learns which one fired from bpf_get_attach_cookie: the caller
// gives a cookie per site (the probe's index in the program), and every
// point of a USDT site carries its site's. Entry and return sites may
// share a program: a site's Return picks the uprobe or the uretprobe,
// the kprobe or the kretprobe, and its cookie tells the program which.
//
// # Decisions
//
// Nothing outlives the process. Every probe is a BPF link or a perf
// event file descriptor, which the kernel releases when the process
// ends, even by SIGKILL. cilium/ebpf falls back to tracefs text entries
// (uprobe_events, kprobe_events) on kernels without the uprobe or
// kprobe event source (before 4.17); those entries would stay behind,
// so there the calls refuse, saying why.
//
// All or nothing. Every site is checked before anything is attached,
// and an error while attaching detaches what was attached. A site's
// refusal is a *SiteError carrying the site's index, so the caller can
// name the probe.
//
// Instruction boundaries. The kernel puts a uprobe wherever it is told,
// and one inside an instruction corrupts the traced program
// (linux-tracing.md §4.3). Uprobes decodes each function that has a
// probe at an offset, once per call, with package amd64, and refuses an
// offset inside an instruction with a *BoundaryError naming the nearest
// boundaries (in hex, as the pid provider names offsets); an address
// given without a function (pid's function "-") is checked against the
// function that holds it, and refused when none does. A syscall
// instruction is refused too: on Linux 6.18 a uprobe there fires, then
// the traced process dies of SIGSEGV. Kprobes does the
// same for kinst offsets when given the kernel's symbol table and code
// (the kernel checks kprobes itself, but its refusal reaches us as a
// misleading "no such file"). USDT points are the assembler's labels on
// <sys/sdt.h>'s nop and are not checked.
//
// uprobe_multi. Where the kernel has uprobe_multi links (Linux 6.6),
// Uprobes and USDT attach all the sites of one file, process and kind
// (entry or return) with one link: 1,000 offsets attach and detach in
// about 40 ms on the development machines. Elsewhere each site gets a
// perf event link, which attaches as fast but takes the kernel about
// 100 ms to remove. The two want programs loaded differently:
// UprobeAttachType says how. HaveUprobeMulti is asked once.
//
// Processes. A site with a PID fires only in that process, all of its
// threads: uprobe_multi filters by process, and the kernel's uprobe
// perf events match a task by its address space. Objects are opened
// through /proc/PID/root, as the process sees them.
//
// USDT semaphores. A point's semaphore is given to the kernel as the
// uprobe's reference counter (its file offset), and the kernel counts
// it up in the process while the probe is attached and down when it is
// removed, however the tracer ends.
//
// Kernel probes. kinst, and fbt where no trampoline serves, go on
// kprobes at function+offset, the function named as kallsyms names it.
// An fbt probe goes on a BPF trampoline (Trampoline: an fentry or fexit
// link) where HaveTrampolines says the kernel has them, with the
// helpers that read a function's arguments and return value (Linux
// 5.17), and TrampolineTarget finds nothing in the function's BTF that
// a trampoline cannot carry (over six arguments, a structure passed or
// returned by value, a name BTF gives several functions). A trampoline
// program is loaded for its one function, so each such probe is a
// program and a link of its own. HaveKprobes finds, once and in linux-tracing.md §10.1's order (the
// kprobe event source, then tracefs's kprobe_events, then the kernel's
// configuration to say why), whether the kernel has them; on the
// development machines it has not, and Kprobes says so in one sentence.
//
// Profile. profile-N is a PERF_COUNT_SW_CPU_CLOCK event per online CPU
// in period mode, the period being N's interval. An idle CPU's clock
// does not run, so it samples little or not at all; CPUs brought online
// later are not covered.
//
// System calls. SyscallNumber and SyscallName use a table generated by
// gensyscalls.go from golang.org/x/sys's, at the version go.mod pins
// (the newest kernel headers), with the names of the calls' entry
// points, as their tracepoints and the syscall provider name them:
// stat(2) is "newstat", umount2(2) "umount".
package attach
