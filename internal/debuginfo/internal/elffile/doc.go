// Package elffile reads the ELF files the debuginfo packages work from:
// a kernel, a module, a program or their separate debug files. It maps
// the file (or reads it where mapping is refused), inflates compressed
// sections (SHF_COMPRESSED and .zdebug), places the sections of an
// ET_REL file one after another and applies the debug and text
// relocations, and gives the build-id, the .gnu_debuglink, the function
// symbols and the DWARF sections (as dwarfread.DwarfSections).
//
// # Data flow
//
//	path ──► Open ──► *File ──► BuildID, DebugLink, Symbols   (debug-file lookup, the inline index)
//	                     ├────► Dwarf ──► dwarfread            (index, types, locals)
//	                     └────► Data, Relocate, Code           (call frame information, kinst's code)
//
// Only little-endian files are accepted. It is internal: debuginfo's
// packages share it; users name files by path.
package elffile
