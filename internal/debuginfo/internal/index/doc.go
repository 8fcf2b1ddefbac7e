// Package index is the inline index of one image: its function
// symbols, its subprograms, and every copy the compiler inlined, with
// the caller, entry, offset and address ranges a kinst probe needs,
// built from the image's DWARF and kept in a file of our own format.
//
// # Data flow
//
//	dwarfread.DwarfSections + elffile.File (symbols) ──► Build ──► *Tables, Stats
//	                                                                 │
//	                                   Header (the inputs) ──► Encode ──► bytes ──► the cache (debuginfo)
//	                                                                                   │ (mapped)
//	   debuginfo.Set's Lookup, Code, SymbolAt, Thunks ◄── *Index (read in place) ◄── Decode
//
// Build scans every unit on several goroutines with a DIE scanner that
// decodes only subprograms and inlined subroutines, joins each copy to
// the name of its abstract origin and to the symbol holding its entry,
// and sorts the copies by function, caller and offset. Encode lays the
// tables out as fixed-size records behind a magic, a version and the
// inputs' paths, sizes and modification times, with a CRC32-C of the
// whole; Decode checks that and answers queries from the bytes in place,
// so a cached kernel index is usable without decoding its copies. A
// change of the format must bump cacheVersion.
//
// BuildFor builds the part of the index that answers for some
// functions, from the units that can hold them (see its comment for why
// that is exact); such an index is partial (Index.Covers).
//
// debuginfo finds the files, decides whether the cache is current and
// turns the records into its public Function, Copy and Symbol values.
package index
