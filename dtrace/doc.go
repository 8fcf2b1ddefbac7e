// Package dtrace is kdtrace's D compiler as a library, as libdtrace is
// the library behind dtrace(1): the command kdtrace is a thin layer over
// it, and a Go program (the runtime's tests among them) compiles D the
// same way, with the same errors.
//
// # Flow
//
// Open makes a Handle from a Config that names the kernel to compile
// for: the running one, or images given as files (Config.Kernel,
// Config.Modules), and where the kernel's types come from
// (Config.BTF). Every file named must open as what it is named as, or
// Open fails with a *FileError naming it. The kernel's types are found
// here and read one name at a time as programs name them.
//
// SetOpt then sets options, as dtrace_setopt: -x options, and the
// options the command's single-letter flags stand for (-C is "cpp",
// -D "define", -Z "zdefs", …). Grab makes a running process the
// target ($target, -p); Create starts a command stopped before its
// program runs and makes it the target (-c). Tracing.Run sets the
// created processes running once BEGIN has fired and stops when every
// process has exited; Close kills the created ones still alive.
//
// The first Compile (or ListProbes) does what libdtrace does on its
// first compile: it makes the type checker with the options, the
// catalog of the system's probes (or the images'), and loads the D
// libraries (kdtrace's own on Linux, -L directories, -x libdir). Each
// Compile then runs one program through the passes:
//
//	text ─► cpp (-C, scripts only) ─► parser ─► sugar (if/else, kinst
//	and pid inline entry/return) ─► [Sugar: -d text] ─► checker ─► emit
//	(DIF, ECBs) ─► [DIFV: -S listing]
//
// The sugar pass finds kinst's inline sites in the kernel's images,
// opened on the first kinst question, and the pid provider's in the
// DWARF of the object a pid entry or return description names, found
// among the objects the process maps (so -c and -p come before
// Compile) and opened on the first question about it; both use package
// kinst's rules.
//
// The checker and the code generator take one clause at a time, as
// dtrace's dt_compile_one_clause: a clause is checked, its ECBs are
// generated, and what checking it gave, then its syntax tree, are
// dropped before the next, so that a script of a hundred thousand
// clauses never holds all of them in every form at once.
//
// Declarations, variables and aggregations carry over from program to
// program, as they share dtrace's handle. The Flags say what else to do:
// Sugar writes the program after the rewrites to Config.Stdout, as
// dtrace -d; DIFV lists its DIF on Config.Stderr, as dtrace -S; NoCode
// stops after checking (-l); Header checks the providers as -h needs;
// Link keeps them for -G.
// A program that fails is a *CompileError whose text is dtrace's
// ("failed to compile script FILE: …", "invalid probe specifier TEXT:
// …"), with the D error, its tag and position, inside.
//
// A compiled Program carries what checking learned and its ECBs, and its
// syntax tree when something needs it after (NoCode for -l, Header for
// -h, Sugar for Print). DOF writes programs as one DOF object, the
// contract with whatever runs them; Link writes what dtrace -G writes
// for programs compiled with Link and the objects they are linked with;
// WriteHeader writes the C header of their
// USDT providers (-h); ListProbes lists the probes their descriptions
// match (-l, -lv).
//
// Enabling programs and consuming what they trace come with the
// runtime, as methods of the Handle over compiled Programs.
package dtrace
