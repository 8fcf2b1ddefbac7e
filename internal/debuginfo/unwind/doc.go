// Package unwind reads call frame information: for an address of an
// image's code, where the caller's frame is (the canonical frame
// address, CFA) and where the caller's registers were saved. gcc's
// DW_AT_frame_base is DW_OP_call_frame_cfa, so a local at DW_OP_fbreg
// needs the CFA at the probe's address, and a call site's entry value
// needs the registers the callee saved.
//
// # Data flow
//
//	image (+ separate debug file) ──► OpenImage / Open ──► *Frames ──► Row(pc) ──► CFA rule, register rules
//	  .debug_frame, .eh_frame, ORC                          (indexed     │
//	                                                         by address) └──► debuginfo/locals (CFA, entry values)
//
// Row gives the CFA's rule (a DWARF register plus an offset, or an
// expression), the registers' rules, the return address column and the
// range of addresses where the row holds; CFA gives the CFA's rule
// alone. Open reads one file; OpenImage an image and its separate debug
// file (.debug_frame from the debug file, .eh_frame and ORC from the
// image, since a separate debug file keeps only empty copies of those).
// The tables read are .debug_frame (CIE versions 1, 3 and 4, 32- and
// 64-bit entries) and .eh_frame (augmentations z, R, P, L, S and the
// pointer encodings, indirect ones read from the file), DWARF 5 §6.4
// and the LSB's .eh_frame format, and for a Linux x86-64 kernel built
// with CONFIG_UNWINDER_ORC, which keeps neither, its ORC tables (Linux
// 6.1's layout, and 6.4's when .orc_header is present). The
// instructions run up to the address; expressions are decoded
// (dwarfexpr), not evaluated. Where a kernel has both ORC and DWARF, ORC
// decides the CFA (objtool checks it on the final code, inline assembly
// included) and DWARF's row is kept when it agrees. Register numbers
// are DWARF's: on amd64 7 is rsp, 6 rbp, 16 the return address.
//
// The files stay mapped while the tables are used. Lookups read ORC
// where it lies, a binary search of .orc_unwind_ip decoding the one
// entry found, and CFA takes ORC's rule where it has one. Where
// .eh_frame is an image's only table, a lookup searches .eh_frame_hdr's
// sorted table of its FDEs, decoding the FDEs the search meets (most
// often one). Otherwise the FDEs are indexed, from the entries
// themselves, on the first lookup that needs DWARF's rows. A kernel
// probe's CFA so costs a few pages of the image, where decoding the
// 400,000 ORC entries and indexing the 50,000 FDEs of Debian's vmlinux
// took 45 ms and 35 MB, and a program's as little, where indexing
// nodejs's 76,000 FDEs takes 20 to 40 ms.
//
// A damaged entry is a *CFIError naming the section and the offset; an
// address no table covers is ErrNoFrame, which names the damaged
// entries the index met (a search of .eh_frame_hdr meets only those
// near the address). Not read: the CFA rules of ORC's register frames
// (entry code), which Row gives as the address of the saved registers.
package unwind
