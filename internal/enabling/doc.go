// Package enabling is the runtime's side of the DOF contract: it takes
// the DOF a compiler wrote, refuses anything DTrace's kernel would
// refuse, and makes of the rest an enabling (dtrace.c's
// dtrace_enabling_t): the ECBs a backend puts in place. It runs in
// kdtrace's own process; the name says what it makes, not where.
//
// # Data flow
//
//	emit ──► dof.Program ──► dof.Write ──► []byte ──► Load ──► *Program
//	                                         │          │
//	                                         │          ├─ header: magic, model, encoding,
//	                                         │          │  versions, registers, section table
//	                                         │          ├─ sections: types, load flags,
//	                                         │          │  alignment, bounds, string tables
//	                                         │          ├─ relocations
//	                                         │          ├─ ECBs: probe descriptions, predicates,
//	                                         │          │  actions, DIFOs and their sub-sections,
//	                                         │          │  DIF through package dif
//	                                         │          ├─ options
//	                                         │          └─ actions as ECBs take them, or, for
//	                                         │             helper DOF, USDT providers
//	                                         └─ FreeBSD: the same bytes to DTRACEIOC_ENABLE
//
// Load does what FreeBSD's kernel does between DTRACEIOC_ENABLE and a
// program ready to enable (dtrace.c): dtrace_dof_copyin's size checks,
// dtrace_dof_slurp and its helpers (dtrace_dof_sect,
// dtrace_dof_probedesc, dtrace_dof_actdesc, dtrace_dof_difo,
// dtrace_dof_ecbdesc, dtrace_dof_relocate), dtrace_dof_options and
// dtrace_state_option, and the checks dtrace_ecb_create makes of an
// ECB's actions (dtrace_ecb_action_add, dtrace_ecb_aggregation_create,
// dtrace_ecb_resize). With Config.Helper it takes helper DOF instead, as
// dtrace_helper_slurp does (dtrace_helper_provider_validate,
// dtrace_helper_action_add). Each refusal is an *Error naming the
// section, the file offset and the reason, in the kernel's words.
//
// kdtrace is stricter than the kernel where the kernel would read
// outside the structure it was pointed at, truncate silently or crash:
// section headers smaller than dof_sec_t, probe descriptions, action
// and option tables and USDT probe tables that do not hold whole
// entries, empty string tables and DIF sections, probe names longer than
// the kernel's fields (DTRACE_FUNCNAMELEN is 192 on FreeBSD 14 and
// later, 128 before: Config.FuncNameLen), action kinds wider than 16
// bits, printm without a DIFO, records larger than 32 bits, and a
// speculate after a data-recording action, which the kernel means to
// refuse and no longer does. A program is Destructive when DIF anywhere
// in an ECB calls copyout or copyoutstr, where the kernel looks only at
// the expressions of DIFEXPR actions. It also checks kernel
// relocations, which the kernel ignores but kdtrace's runtime applies,
// and relocation names. Relocations are checked, not applied: the
// runtime knows where things are.
//
// The DIF of each DIFO is checked by package dif (dtrace_difo_validate)
// as the DIFO is read, with one dif.Validator for the file so that its
// DIFOs agree on their variables, as the kernel's consumer state makes
// them; helper actions are then held to what helpers may do
// (dtrace_difo_validate_helper). dif's own stricter checks apply unless
// Config.KernelOnlyDIF is set. Its refusals are placed in the DIF,
// VARTAB, STRTAB or RELTAB section they concern, and wrap the
// *dif.Error.
//
// A Program's ECBs are ready for a runtime: probe descriptions as Go
// strings, predicates and actions with their DIF as *dif.Object, format
// strings resolved, string variables of size 0 given the default string
// size.
package enabling
