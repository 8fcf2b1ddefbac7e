// Package emit is D's code generator: it turns a checked program into
// DIF and lays its clauses out as the ECBs of a DOF program, as
// libdtrace's dt_cg and dt_cc do.
//
// Data flows from the checker: for each clause and each of its probe
// descriptions, one ECB, whose code comes from the clause as checked for
// that description (check.Info.Variant: args[] has each description's
// types), shared between descriptions that checked alike. The predicate
// becomes a DIFO that returns its value, and each statement becomes the
// actions dtrace records for it — a DIFEXPR for trace(), and one of
// type void, which records nothing, for any other expression (as
// dt_compile_exp makes it), one PRINTF action per printf argument with
// the format on the first, the tuple actions and the aggregating action
// of an aggregation, and so on. Each DIFO is built as a dif.IR by
// walking the expression tree with the types and identifiers the checker
// recorded (check.Info), then assembled by dif.AssembleTo.
//
// An Emitter takes the clauses one at a time, as the checker hands them
// over (check.Checker.CheckClauses), and appends their ECBs to the
// program; Program does the same for a program checked as a whole. A
// large program's DIFOs are mostly alike: each is generated in one IR,
// assembled and converted into tables the emitter reuses, and only those
// the program does not have yet are copied into its dof.Pool. Spill
// slots are numbered after all the program's clause-local variables,
// which are known only once its last clause is checked: a clause that
// spills before then is generated again by Finish (few do).
//
// Registers are handed out from %r1 to %r7 as dt_regset does; an
// expression that needs more fails with D_NOREG, as in dtrace.
package emit
