// Package dif is DTrace's D Intermediate Format: the instruction set of
// the small register machine the kernel runs for a clause's predicate and
// actions, and the DIF object (DIFO) that carries a piece of code with
// its constant tables and the variables it uses.
//
// # Instructions
//
// An Instr is one 32-bit word, op[31:24] r1[23:16] r2[15:8] rd[7:0],
// encoded exactly as dtrace.h's DIF_INSTR_* macros encode it. Op names the
// 79 opcodes (OR … XLARG) and their Form (operand layout); constructors
// (ALU, Branch, Load, Store, Setx, Sets, Ldv, Stv, Lda, Call, Pushtr,
// Pushtv, Xlate, …) build words and accessors (Op, R1, R2, RD, Label,
// Index, Var, Subr, Type) take them apart. Code has eight registers, %r0
// always reading zero, a tuple stack of eight entries that passes
// arguments to subroutines and keys to associative arrays, condition codes
// set by cmp, scmp and tst, and branches that may only go forward, so
// every DIFO terminates.
//
// # Data flow
//
//	code generator ──IR──► Assemble ──► *Object ──► Validate      (kernel's checks)
//	 (emit)                                │    └──► Disassemble   (dtrace -S)
//	                                       └──► DOF writer: DIF, INTTAB, STRTAB,
//	                                            VARTAB, DIFOHDR, RELTAB/xRELHDR
//
// The code generator builds an IR, as libdtrace's dt_cg builds its list of
// dt_irnode_t: it emits instructions, asks for Labels and places them
// (Mark), branches to them, interns integer constants (Setx, shared among
// equal values) and strings (Sets, deduplicated, offset 0 being "") as it
// goes, names variables by VarRef (name, id, kind, scope, type) when it
// loads or stores them, loads symbol addresses (SetxSym) and translator
// members (Xlate). Assemble then does what dt_as does: it resolves labels
// to absolute instruction indices, writes the variable table (each
// variable once, with FlagRef/FlagMod from its uses, thread-locals then
// globals then clause-locals, each by id, names appended to the string
// table), writes kernel and user relocations according to the LinkMode,
// numbers translator references and sets the return type. The result is
// an Object, the fields of libdtrace's dtrace_difo_t.
//
// Validate applies the checks FreeBSD's kernel makes when it loads a DIFO
// from DOF (dtrace_dof_difo, dtrace_difo_validate, optionally
// dtrace_difo_validate_helper), refusing with an *Error that names the
// instruction or table entry and the kernel's own reason, and by default
// also kdtrace's stricter checks (every variable used is in the variable
// table, no register is read before it is written, the tuple stack does
// not overflow, …). A Validator keeps, like the kernel's per-consumer
// variable state, the user variables of the DIFOs it has accepted so that
// later ones cannot redefine them. Disassemble prints an Object as
// dtrace -S does (dt_dis), column for column.
//
// # How DOF carries a DIFO
//
// In DOF each DIFO is a group of sections: DIF (the code, 4-byte words),
// INTTAB (8-byte integers), STRTAB (the DIFO's own strings), VARTAB
// (20-byte dtrace_difv_t records) and XLTAB (12-byte dof_xlref_t), each
// present only when non-empty, then a DIFOHDR holding the return type
// (an 8-byte dtrace_diftype_t) and the indices of those sections. Kernel
// and user relocations follow as a RELTAB of 24-byte dof_relodesc_t and a
// KRELHDR or URELHDR naming the RELTAB, the DIFO's STRTAB and its INTTAB.
// ECB and action descriptions refer to a DIFO by its DIFOHDR. The Append*
// and Parse* functions lay these records out in a given byte order; the
// DOF writer and loader arrange the sections.
//
// # Subroutines
//
// The subroutine codes (Subr*, DIF_SUBR_* in FreeBSD's numbering, which
// is the ABI) and their names (SubrName) are defined once, in const.go;
// the D compiler's builtins table (dlang/check/builtin.go) names each
// subroutine by its code, and a test checks the two agree. Each
// subroutine then has two bodies: Go in the reference machine, dif/vm,
// and hand-written BPF in package bpf. Both stay as long as dif/vm earns
// its place as the oracle: bpf's tests (TestD, TestDIFO, TestRandom,
// TestScratch, TestCorpusRun) run each DIFO on it and in the kernel and
// compare values and faults, and it is DIF's semantics written once in
// plain Go, held to FreeBSD's by its own tests. Adding a subroutine is
// one table row and its two bodies:
//
//  1. dif/const.go: the Subr constant, its name in subrNames and SubrMax
//     (only when DTrace's numbering gains a code).
//  2. dlang/check/builtin.go: the builtins row — name, kind Func, id
//     dif.Subr…, the prototype as dtrace writes it — and the count in
//     abi_test.go's TestBuiltinSubroutines.
//  3. dif/vm/subr.go: the case in Machine.call and its body.
//  4. bpf/translate.go: the case in translator.call, its body there or
//     beside its family (strsubr.go, substr.go, inet.go, json.go).
//  5. Tests: a row in dif/vm/subr_test.go's TestSubroutines (the
//     machine against FreeBSD's results) and a D line in
//     bpf/bpf_test.go's TestD (the translation against the machine).
//
// That is seven files: four of code (const.go, builtin.go, subr.go,
// translate.go) and three of tests; one more when the BPF body goes
// into its family's file, one fewer when the code already exists.
package dif
