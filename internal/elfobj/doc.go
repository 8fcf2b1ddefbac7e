// Package elfobj writes ELF relocatable objects, the .o files a C
// compiler makes and a linker takes: sections of data and the symbols
// that name places in them. It writes what dtrace -G leaves for the
// link, so it has no relocations and writes 64-bit objects only; its
// output is read back with debug/elf.
//
// An Object lists its sections in order; Bytes lays them out after the
// ELF header, adds the symbol table, its string table and the section
// name table, and puts the local symbols before the others, as the ELF
// specification asks.
package elfobj
