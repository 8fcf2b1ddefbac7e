// Package check is D's type checker: it does what libdtrace's dt_cook
// and the checks of dt_cc.c do, so that a program it accepts is ready for
// code generation and one it refuses fails with dtrace's tag and message.
//
// A Checker holds the state of one dtrace session: D's builtin types and
// identifiers (the _dtrace_globals table, typed for Linux or FreeBSD),
// the kernel's types through the modules in Config, and every
// declaration, global, thread-local variable, aggregation and translator
// the session's programs define. Data flows as in dtrace:
//
//   - the parser asks the Checker which names are types (IsType) and
//     hands it each declaration as soon as it is parsed (Declare), so
//     that errors come in dtrace's order and typedefs feed back into the
//     lexer;
//   - after the sugar pass, Check walks the program's clauses: the
//     actions, then the predicate (or the other way round when the
//     actions use a variable the predicate defines), giving every
//     expression a Value (type and DT_NF_* flags) and every name an
//     Ident, creating variables at their first assignment, and applying
//     each action's argument rules, printf's format rules (package
//     printf) and the rules on the order of speculative actions;
//   - as dtrace's dt_compile_one_clause, a clause is checked once for
//     each of its probe descriptions, with the argument types of the
//     probes that one matches in args[]; variables created while it is
//     checked for one are there for the next. What a later description
//     checks differently from the first (other struct layouts, sizes,
//     signs) is kept as a Variant of the clause, and descriptions that
//     check alike share one, so that a clause of many descriptions of
//     one prototype costs one set of results;
//   - the results come back in an Info for the code generator: for the
//     whole program from Check, or clause by clause from CheckClauses,
//     which hands each clause's results to a function (the code
//     generator's emit.Emitter.Clause) and drops them before checking
//     the next, as dtrace cooks a clause and generates its code before
//     the next one. A program of a hundred thousand clauses so holds
//     one clause's results at a time, not a Value for every expression
//     of the program; errors come in the same order, the first clause's
//     first, and those raised once all clauses are checked (D_EMPTY)
//     after the last. Clause-local variables are numbered across the
//     whole program either way: Info.NextLocal, which the code
//     generator numbers its own after, is known once the last clause
//     is checked.
//
// Only the first error is reported, as a *diag.Error, as in dtrace.
package check
