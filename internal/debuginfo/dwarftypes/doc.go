// Package dwarftypes is a program's DWARF as D's type checker reads it:
// the C types its names have (struct, union, enum, typedef, function
// and variable types as dlang/types values), and, at an address of its
// code, what is in scope there: the function, its locals and
// parameters with their locations, and the call sites that passed
// them (for entry values). A kernel image whose BTF lacks what D asks
// for, and the programs the pid provider traces, are read through it.
//
// # Data flow
//
//	debuginfo.Image (debug file found, build-id checked) ──► Open ──► *Types
//	                                   OpenFile(path) ───────────┘      │
//	        ┌───────────────────────────────────────────────────────────┤
//	        ▼                                                           ▼
//	LookupType, LookupFunc, LookupVar, LookupEnumerator       Scope(pc) ──► *Scope: Locals (dwarfexpr.Expr locations)
//	  name index (built on first lookup, cached) ──►                │            CFA (unwind, through Types.CFA)
//	  DIEs converted on demand, memoised by offset                  └──► CallSites(scope): entry values
//
// Open maps the debug sections and reads nothing more. The first lookup
// builds a name index of the top-level DIEs of every unit, on
// GOMAXPROCS goroutines; DIEs convert to types on demand, memoised by
// offset, so a DIE is always the same Go value and recursive types end;
// a struct's members convert when first asked for. Scope finds the unit and function holding an address through a table
// of units by address, then descends through the lexical blocks and
// inlined copies holding it, keeping each level's variables with their
// location at that address.
//
// The name index, the unit headers and the table of units by address
// are cached in <build-id>.types and <build-id>.units beside the inline
// index (internal/cachefile), keyed and checked by the debug file's
// path, size, mtime and build-id; a file that does not check is rebuilt
// silently.
//
// Types and scopes are one package because they are one reading of the
// same DIEs: a local's type is converted by the same memoised reader,
// under the same lock, as a type found by name, and the unit table
// serves both. Splitting them would make that reader public.
//
// Not supported: DWARF 4's .debug_types section, references into a DWZ
// supplementary file, split DWARF, and big-endian files. A Types may be
// used from several goroutines; it must not be used after Close.
package dwarftypes
