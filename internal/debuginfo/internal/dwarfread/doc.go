// Package dwarfread is the DWARF reader the debuginfo packages share:
// a cursor over a section's bytes (Buf: fixed-size and LEB128 integers,
// strings, offsets and addresses of either DWARF format), the headers of
// compile and type units (ParseUnits), abbreviation tables
// (ParseAbbrevs), attribute values by form (Buf.Value, FormSize), and
// the sections that give attributes their meaning (DwarfSections:
// strings through .debug_str, .debug_line_str and .debug_str_offsets,
// addresses through .debug_addr, ranges through .debug_ranges or
// .debug_rnglists), line programs (DecodeLines, LineFiles,
// PrologueEnd) and DWARF expressions (DecodeExpr, into dwarfexpr's
// values).
//
// # Data flow
//
//	ELF file (debuginfo) ──► DwarfSections ──► ParseUnits ──► Unit ──► ParseAbbrevs
//	                                                            │
//	     inline index, D types, locals, line tables ◄── Buf.Value, AttrString, Address, AppendRanges
//
// It decodes only what its callers ask for and skips the rest by the
// forms' sizes, which is why it exists beside debug/dwarf: that package
// decodes every attribute of every DIE it walks. Errors are sticky: a
// Buf that runs out of data records ErrTruncated and reads zeroes from
// then on, so a caller checks Err once per DIE. It is internal: its
// names are the vocabulary of DWARF's encoding, not an API.
package dwarfread
