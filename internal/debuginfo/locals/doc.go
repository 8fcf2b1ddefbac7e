// Package locals makes the frame D's locals-> reads at a probe: the
// variables and parameters in scope at the probe's address, each with
// the location the code generator reads it from there, or the reason it
// has none, as a check.Frame.
//
// # Data flow
//
//	dwarftypes.Types ──► Scope(pc) ──► Reader.Frame ──► *check.Frame ──► dlang/check, emit
//	                                     │   ▲                 │
//	       unwind (CFA at pc, rows) ─────┘   │        Merge (one per further probe
//	       SysV x86-64 argument places ──────┤         the description matches)
//	       callers' call sites (entry values)┘
//
// Reader.Frame turns a dwarftypes.Scope into a frame: DWARF's location
// for each local at pc; at a function's first instruction and in its
// prologue, the places the System V calling convention leaves the
// arguments in (DWARF's -O0 frame slots are not written yet); for a
// parameter optimised code gives only as its value on entry
// (DW_OP_entry_value) past the first instruction, the value its
// callers' call sites say how to compute again from what the probe can
// read; and the CFA, from the call frame information. What cannot be
// read says why, in the words -lv lists and the checker reports.
//
// Merge joins the frames of the probes one description matches: a
// local keeps its location only where the code reading it would be the
// same at every probe.
//
// The caller finds the probe's image, function symbol and address
// (dtrace does, from the probe catalog) and keeps the Types open; a
// Reader keeps the call sites read, once per function.
package locals
