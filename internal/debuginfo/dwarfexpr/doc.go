// Package dwarfexpr is DWARF's expressions (DWARF 5, §2.5 and §2.6) as
// values: the operations of a location description, a CFA rule or a
// call site's value, decoded into one Op per operation with the
// operand forms folded (DW_OP_lit0..31, reg0..31 and breg0..31 into
// OpLit, OpReg and OpBreg with the number as operand; the fixed-size
// constants into OpConstu and OpConsts; addrx and constx resolved).
//
// # Data flow
//
//	DWARF bytes ──► debuginfo's readers (locals, call sites, CFI) ──► Expr
//	                                                                    │
//	      dlang/check (where a local lives) ◄───────────────────────────┤
//	      emit (the DIF that reads it) ◄────────────────────────────────┘
//
// The package only describes; nothing here evaluates an expression:
// package emit turns one into DIF that reads registers and memory at the
// probe. Expr's String prints the operations as readelf does, for
// messages and tests.
package dwarfexpr
