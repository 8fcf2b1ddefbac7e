// Package bpf translates DIF, the code of DTrace's D programs, into BPF
// programs for the Linux kernel: kdtrace's Linux runtime runs a clause's
// predicate and actions as BPF where FreeBSD's kernel would run their
// DIF. The translation is built with cilium/ebpf's asm package and
// loaded by its loader; no C compiler is involved.
//
// # Data flow
//
//	*dif.Object ──► Layout.Add (variable slots, string tables) ──► NewRuntime (maps)
//	     │                                                             │
//	     └──────────► Translate ──► asm.Instructions ──► Runtime.Load ─┴─► *ebpf.Program
//	                                                                        │ run (probe firing,
//	        ReadState ◄── kd_state: return value or fault ◄─────────────────┘  or BPF_PROG_RUN)
//
// A Layout is built first from every DIFO of a program, because the maps
// are sized by it: each scalar global and clause-local variable gets an
// 8-byte slot (ids are shared among a program's DIFOs, as in the kernel)
// and each DIFO's string table a place in the string map. Translate then
// turns one DIFO into a whole raw tracepoint program, and Runtime.Load
// ties the program's map references (MapState, MapGlobals, …) to the
// runtime's maps and loads it. dif/vm runs the same DIFOs in-process;
// the tests run both on the same DIFOs — D compiled through the
// pipeline, hand-written DIFOs and random ones — with BPF_PROG_RUN and
// compare values and faults.
//
// # Machine state
//
// BPF registers hold what lives throughout a program: R6 this CPU's
// MapScratch value, R7 this CPU's MapState value, R8 MapGlobals' value,
// R9 this CPU's MapLocals value; the context is kept at R10-112 and
// MapStrBuf's value at R10-120. R0–R5 are scratch within one DIF instruction: helper
// calls clobber them, so nothing is kept there across instructions.
//
// The DIF registers %r1–%r7 live in the stack frame, 8 bytes each at
// R10-8·i (%r0 reads as 0 and writes to it are lost); then the condition
// codes as the two operands of the last cmp (R10-64, R10-72), from which
// each branch recomputes its condition: unsigned conditions compare the
// operands, signed conditions look at the sign of their difference only,
// as the kernel sets cc_n from the difference and cc_v to 0. tst stores
// (r1 != 0, 0); before any cmp or tst the pair is (1, 0), for which no
// condition holds. A load's destination (R10-80), a thread-local's key
// (R10-96: the variable's ID, 4 bytes of padding, the thread's ID) and
// the key 0 of the single-entry maps (R10-104) follow. The prologue zeroes the DIF registers, as the verifier wants
// every stack slot written before it is read. The tuple stack lives
// below the probe program's frame (tupleSlot): 16 bytes an entry, its
// value then its size. Its depth where each instruction runs is the
// translator's, as the compiler pushes a call's arguments in
// straight-line code; where paths of different depths meet, the stack
// cannot be used until the next flushts.
//
// DIF values are all scalars, addresses included. sets yields the kernel
// address of the string in MapStrings: the prologue stores the map value's
// pointer at StateStrBase and reads it back as a scalar, which a
// privileged program may do (dtrace-utils' "scalarizer" does the same).
// Loads (ld*, and rld* alike: the runtime is privileged) read any address
// through bpf_probe_read_kernel, uld* through bpf_probe_read_user, into
// the stack, and sign-extend by shifts; a refused read is
// DTRACEFLT_BADADDR. Scratch memory (MapScratch) is addressed the same
// way, its address at StateScrBase: allocs hands out 8-aligned, zeroed
// pieces of it (DTRACEFLT_NOSCRATCH when it is used up), and stb … stx
// store to it alone, anywhere in it, as the kernel checks (elsewhere
// DTRACEFLT_BADADDR, misaligned DTRACEFLT_BADALIGN). The map's value is
// twice the scratch size and its upper half is never written: allocs
// copies its zeroes from there, so that the verifier can bound both
// ends of the copy.
//
// # Maps
//
//   - MapState, per CPU: the return value (StateRet), the fault (code,
//     DIF instruction index, address), the count of thread-local stores
//     dropped for want of room, the string map's address.
//   - MapGlobals: one value holding the global scalars, at their Layout
//     slots, then the by-reference globals' storage as the kernel keeps
//     it: a word set by a store of NULL, then the bytes (a string's
//     strsize, and a NUL). A load yields the bytes' address (as a
//     scalar: the prologue keeps the value's address at StateGlobBase),
//     a store copies the bytes, a string up to its NUL. Shared by all
//     CPUs, unlocked, as DTrace's globals are.
//   - MapLocals, per CPU: the clause-local scalars, then the
//     by-reference ones' storage, as MapGlobals'. They live for one
//     probe firing: whoever fires the clauses zeroes them at the start of
//     a firing (Runtime.BeginFiring from user space for now).
//   - MapThreads, a hash: thread-local scalars under (variable id,
//     thread id). A load of a missing one reads 0, a store of 0 deletes
//     it, as the kernel frees a dynamic variable set to zero; a store the
//     map has no room for is counted at StateDrops (dtrace's dynamic
//     variable drops).
//   - MapThreadRefs, a hash: by-reference thread-locals under the same
//     keys, each value the size of the largest. A load yields the
//     value's address or 0 if missing; a store of 0 deletes it, any
//     other makes it zeroed if missing and copies the bytes.
//   - MapStrings: the string tables of all DIFOs, read-only by use.
//   - MapStrBuf, per CPU: the two strings an scmp compares, copied by
//     bpf_probe_read_kernel_str (strsize bytes and a NUL each), then
//     compared by a bpf_loop callback; the two strings strjoin joins,
//     the strings the other string subroutines scan; the frames bpf_get_stack writes for the
//     stack depths and callers (127 at most).
//   - kd_assoc0, kd_assoc1, …, hashes: one associative array each (its
//     elements, global or thread-local, under keys built in MapKey from
//     the tuple stack: the array's id, then each entry's 8-byte value or
//     a string's bytes zero-padded to strsize and a NUL, then for a
//     thread-local array the thread's id). A load of a missing element
//     reads 0, a store of 0 deletes it, as MapThreads'.
//   - MapProbeNames, a hash: each probe's provider, module, function
//     and name under its ID, set from user space (SetProbeNames).
//   - MapScratch, per CPU: scratch memory (Config.Scratch bytes), then
//     as many zero bytes. The bytes allocated so far are at StateScratch;
//     a new firing starts from none (Runtime.BeginFiring for now).
//
// # Faults
//
// A fault stops the program where the kernel would stop the DIFO: the
// code (DTRACEFLT_DIVZERO for a division or remainder by zero,
// DTRACEFLT_BADADDR for a load bpf_probe_read_kernel refuses), the
// index of the faulting DIF instruction (×4 is the DIF offset dtrace
// reports) and the address are written to MapState and the program
// returns 1. These are the arg3, arg4 and arg5 of dtrace:::ERROR.
//
// # What is translated
//
// The ALU (or, xor, and, sll, srl, sra with the count taken modulo 64,
// sub, add, mul, sdiv and srem on magnitudes — BPF's signed division
// needs Linux 6.6 —, udiv, urem, not, mov), cmp, tst, the string
// compare scmp, every branch (forward only, inside the DIFO), nop, ret,
// setx, sets, the loads ld*, rld* and uld*, allocs and the stores stb …
// stx to scratch and to by-reference globals and clause-locals, the
// variables ldgs/stgs, ldls/stls and ldts/stts, scalar or by reference,
// and these built-in variables:
//
//   - arg0 … arg9 and args[], from StateArgs, which the probe's
//     prologue fills (at fentry and fexit by bpf_get_func_arg and
//     bpf_get_func_ret);
//   - pid, tid (of the initial PID namespace), ppid (the parent's tgid,
//     read at the offsets the kernel's BTF gives), uid, gid, cpu,
//     curthread (the task_struct's address);
//   - timestamp (CLOCK_MONOTONIC), walltimestamp (the same plus the
//     offset to CLOCK_REALTIME the runtime keeps in MapCtl);
//   - execname, copied into scratch;
//   - id and epid, from StateProbeID and StateEPID;
//   - probeprov, probemod, probefunc and probename, from MapProbeNames
//     under the probe's ID (Runtime.SetProbeNames; a probe without
//     names reads empty strings);
//   - errno, at a system call's return (sys_exit) its error, else 0;
//   - stackdepth, ustackdepth, caller and ucaller, from bpf_get_stack,
//     frames as stack() and ustack() record them;
//   - regs[] and uregs[], numbered as regs.d numbers them on amd64:
//     regs[] from the registers the probe's context holds (kprobe,
//     uprobe, perf event), uregs[] (and regs[] elsewhere) from the
//     thread's user registers, task_pt_regs; regs[] is refused at
//     fentry and fexit, whose context holds none.
//
// The tuple stack (pushtr, pushtv, popts, flushts) and call for the
// subroutines strlen, strjoin (into scratch, through MapStrBuf), alloca,
// copyin and copyinstr (bpf_probe_read_user, into scratch), rand (from
// bpf_get_prandom_u32), htons … ntohll, strchr, strrchr, lltostr,
// substr, strstr, index, rindex, strtok, strtoll, basename, dirname,
// cleanpath, inet_ntoa, inet_ntoa6, inet_ntop and speculation (a
// compare-and-swap on MapSpec); associative arrays (ldgaa, stgaa, ldtaa,
// sttaa) keyed by values and strings; stores and copys into scratch,
// by-reference variables and the by-reference element of an
// associative array looked up last (its pointer kept at elemPtr; all
// such elements are as big as the largest, so that one bound serves the
// verifier whichever array it is in).
//
// # Loops
//
// The subroutines that scan strings copy them into MapStrBuf and scan
// the copies in bpf_loop callbacks (loop.go): subprograms after the
// program's code, one for each kind of loop, which the verifier checks
// once for each call however many bytes they take, so that a clause of
// many such calls stays within its limits. A callback keeps its state
// in MapState's words at StateLoop, looks up the maps it needs itself
// and cannot fault: what may fault is done before the loop. A program
// with callbacks describes its functions in BTF (func_info), as the
// kernel requires. chill() spins in nested bpf_loops on
// bpf_ktime_get_ns, within dtrace's 500 ms a second per CPU.
//
// execargs reads the current process's arguments from its memory
// (mm->arg_start to arg_end) with bpf_probe_read_user, and a bpf_loop
// turns the NULs between them into spaces.
//
// Everything else — the other subroutines, vtimestamp, ipl, zonename,
// keys of other by-reference types, stores into
// by-reference thread-locals, translators — is refused with an
// *Error naming the instruction: never translated wrongly. As the kernel
// does, Translate also refuses a DIFO whose last instruction is not ret,
// a branch that does not go forward, a store to %r0.
//
// # Probe programs
//
// BuildProbe makes the program of one attachment (ProbeProgram): a
// prologue for its Context finds which probe fired (an index: the
// system call's number, the attachment's cookie, 0) in its MapProbes,
// with the probe's ID and each clause's EPID for it, reads the probe's
// arguments if a clause does, and runs each clause that applies as
// dtrace_probe runs ECBs: predicate, actions, each translated in place;
// the records are built in the CPU's entry of MapRec, behind RecPrefix
// (the CPU, the speculation), and sent through MapRing; aggregations go
// to per-CPU hash maps shared by shape, each found in its slot (an array
// of maps) where SwapAggs trades it for another; a fault runs the ERROR probe's
// clauses with dtrace_probe_error's arguments. exit() makes the tracing
// drain (MapCtl) and ends the firing; programs other than END run only
// while it is active. SDT programs (CtxRawTP, CtxSyscallTP, CtxTP, and CtxEntry or
// CtxFEntry at a kernel function) run each Site's condition and
// arguments before the clauses its probe runs.
//
// BuildChain splits the clauses of a large program over a chain of
// programs, each calling the next by a tail call through MapChain
// (chain.go): the verifier's work grows as the square of a program's
// length, so that many short programs load much faster than one long
// one, and 10,000 clauses pass none of its limits. A program of sites
// is split the same way, its sites' evaluations and their clauses in
// order.
package bpf
