// Package vm is the reference DIF machine: it runs DIF in the calling
// process as FreeBSD's kernel runs it in dtrace_dif_emulate and
// dtrace_dif_subr, and is the oracle the BPF translation of DIF (package
// bpf) is tested against. kdtrace itself never runs it — BEGIN, END and
// every other clause run as BPF (see internal/linux) — and only tests
// import it.
//
// # Who uses it
//
// bpf's TestD, TestDIFO, TestRandom, TestScratch, TestScmp and
// TestCorpusRun run the same DIFOs here and in the kernel with
// BPF_PROG_RUN and compare values and faults (bpf_test.go's differ);
// BenchmarkVM times them here. consumer's golden tests (vm_test.go,
// aggregate_test.go) run compiled programs here to make the records the
// consumer prints, without a kernel. kinst's TestGuardedReturnInVM,
// ksym's TestSymbolValues, dtrace's TestLocalsKinstOffline and
// cmd/kdtrace's TestPerDescription run the DIF the compiler makes for
// them against memory taken from an image. The package's own tests pin
// its behaviour to the kernel's, instruction by instruction and
// subroutine by subroutine.
//
// The machine stays as long as it earns that place: it is the one
// implementation of DIF's semantics that can be read and checked
// without a kernel, and so the one the BPF translation is held to. Each
// subroutine therefore has two bodies, the Go one in subr.go (and
// json.go) and the BPF one in package bpf; dif's package documentation
// says how to add one.
//
// # Data flow
//
//	*dif.Object (from the emitter or DOF programs) ──► Machine.Run ──► value (or *Fault)
//	                                                        │   ▲
//	            Context (pid, execname, args[], regs, …) ───┘   │
//	             Memory (kernel image, a process's) ◄───────────┴── variables, scratch,
//	                                                                string tables
//
// A Machine holds what the DIFOs of one program share, as the kernel's
// consumer state does: global variables, thread-local variables (of one
// thread), clause-local variables, associative arrays, scratch memory,
// and the variable definitions of the DIFOs it has run. The caller
// fires a probe by calling BeginFiring, then for each of the probe's
// ECBs BeginClause and Run on its predicate and, if that returns
// non-zero, on each action's DIFO in order. Run returns the DIFO's
// value; a by-reference value (a string, a structure) is an address,
// whose bytes ReadMemory and ReadString give.
//
// Run validates each DIFO the first time it meets it, as the kernel
// validates a DIFO it loads (dif.Validator with the kernel's checks
// only, keeping the variables of the DIFOs before it), and runs its own
// copy. It then executes every DIF instruction as the kernel does: the
// ALU with its divide-by-zero fault, condition codes set by cmp, scmp
// and tst (the signed conditions taken from the sign of the difference
// alone, as the kernel takes them), forward branches, loads of each
// width with sign extension from kernel memory (ld*, rld*) and user
// memory (uld*), aligned stores to scratch and variables only, the
// variable loads and stores of every scope by value and by reference,
// the tuple stack, allocs, copys, and the subroutines that need no
// kernel structure: strings (strlen, strjoin, substr, index, rindex,
// strchr, strrchr, strstr, strtok, toupper, tolower, lltostr, strtoll,
// basename, dirname, cleanpath, json), byte order (htons … ntohll),
// inet_ntop, inet_ntoa, inet_ntoa6, rand, alloca, bcopy, memref,
// memstr, copyin, copyinstr, copyinto, copyout, copyoutstr,
// speculation (ids up to the nspec option) and progenyof (the thread's process and its
// parent). The others (mutex_owned, rw_read_held, ddi_pathname, …) and
// translator references stop the DIFO with an *UnsupportedError.
//
// A fault stops the DIFO with a *Fault carrying dtrace's fault code
// (DTRACEFLT_*), the index of the faulting instruction and, for faults
// of memory, the address: what the kernel passes to the ERROR probe.
// Branches only go forward, so every DIFO ends.
//
// # Memory
//
// The machine's own memory — scratch, the string tables of its DIFOs
// (sets loads an address in them), by-reference variables and dynamic
// variables — is served from Go slices at addresses from SpaceStart to
// SpaceEnd, a range no amd64 or arm64 pointer can hold. Every other
// address is read through a Memory: Config.Kernel for ld*, rld* and
// the subroutines, Config.User for uld*, copyin and its kin. As in the
// kernel, DIF stores only to scratch and variables; copyout and
// copyoutstr write a process's memory through Config.User. With
// Config.Restricted the machine has no kernel privilege: rld* and the
// subroutines may read only its own memory and fault KPRIV elsewhere.
//
// Where the kernel leaves memory as it finds it — alloca(), scratch
// freed by a new clause — the machine gives zeroes, so that runs are
// reproducible.
package vm
