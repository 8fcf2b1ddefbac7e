// Package debuginfo finds the debugging information of kernel and
// program images, and where functions are in them: their out-of-line
// definitions and every copy the compiler inlined, with the caller,
// offset and address ranges a kinst probe needs. The D compiler's sugar
// pass asks it to rewrite kinst::f:entry and kinst::f:return into
// kinst::caller:offset probes.
//
// # Packages
//
// Each job on the debugging information is a package of its own:
//
//   - debuginfo (this one): finding an image's debug file (OpenImage,
//     Kernel, Open), and the index of its functions and their inlined
//     copies, cached by build-id (Image, Set).
//   - debuginfo/dwarftypes: the image's DWARF as D reads it: C types by
//     name, and the scope at an address (locals, call sites).
//   - debuginfo/locals: the frame locals-> reads at a probe, made from a
//     dwarftypes scope, the call frame information and the calling
//     convention.
//   - debuginfo/unwind: call frame information (.debug_frame, .eh_frame,
//     ORC).
//   - debuginfo/dwarfexpr: DWARF expressions as values, for the locations
//     the code generator reads.
//
// and under internal/ the inline index itself (index: built from the
// DWARF, encoded for the cache, read in place) and what the packages
// share: dwarfread (the DWARF reader: units, abbreviations, forms, line
// programs, expressions), elffile (ELF files, mapped and relocated); and
// kinstindex, a command that times the index. The cache files' encoding
// and trimming are kdtrace's internal/cachefile, which the kernel BTF's
// index shares. Dependencies run one way, downwards:
//
//	locals ──► dwarftypes ──► debuginfo ──► internal/{index, dwarfread, elffile}
//	               └────────► unwind ─────────────┘            │
//	                                  dwarfexpr (a leaf) ◄──────┘
//
// The public subpackages may import debuginfo and the packages below
// them; debuginfo imports none of them, only its internal packages.
//
// # Data flow
//
// An image is an ELF file: a vmlinux, a kernel module, a program.
//
//  1. OpenImage reads the image's build-id and looks for its DWARF: in
//     the image itself; at <debug-root>/.build-id/xx/rest.debug; at the
//     name in .gnu_debuglink, in the image's directory, its .debug
//     subdirectory and <debug-root>/<dir>, checking the CRC32 the link
//     records; at FreeBSD's <debug-root>/<image path>.debug. Kernel adds
//     the distributions' kernel layouts. A debug file that does not
//     match its image (build-id or CRC) is a *MismatchError, also
//     reported through Options.Warn; a set skips such a module rather
//     than use it. Failing all these, Options.Debuginfod, when set,
//     fetches the debug file of the build-id from the debuginfod
//     servers into their cache, shared with gdb and perf (package
//     internal/debuginfod; Kernel asks for the running kernel's
//     build-id from /sys/kernel/notes and each module's from
//     /sys/module/<name>/notes). When nothing is found, a
//     *NotFoundError lists every place looked, the servers asked
//     included, with why each failed.
//  2. The DWARF sections are mapped, not read (compressed sections,
//     SHF_COMPRESSED or .zdebug, are inflated), and a DIE scanner of our
//     own walks every compile unit on GOMAXPROCS goroutines. It decodes
//     only DW_TAG_subprogram and DW_TAG_inlined_subroutine entries and
//     skips the others by their forms' sizes. On Debian's 6.1 vmlinux
//     one goroutine builds the whole index in under a second, where a
//     walk with debug/dwarf's Reader, which decodes every attribute of
//     every DIE into an Entry, took about 5 s. DWARF 2 to 5 are read,
//     with ranges from .debug_ranges or .debug_rnglists and high pc as
//     address or offset.
//     With Options.Lazy (the kdtrace command's), an image whose whole
//     index is not cached is indexed per function looked up instead:
//     the units that can hold the function (they hold one of the
//     offsets of its name in .debug_str as four bytes, or refer across
//     units; a search of .debug_info read with pread, whose pages the
//     process does not keep) are walked, and the index of those names
//     alone is cached; see index.BuildFor, which builds the whole index
//     when those units are over a quarter of .debug_info. Its answers
//     equal the whole index's. InlinedFunctions builds the whole index.
//  3. The index joins each copy to the name of its abstract origin
//     (through DW_AT_specification when needed) and to the function
//     symbol of the image's symbol table holding its entry, and sorts the
//     copies by function, caller and offset.
//  4. The index is written to the cache, Options.CacheDir or kdtrace
//     under os.UserCacheDir, in a file named by the build-id. The format
//     is ours: fixed-size records behind a magic, a version and the
//     inputs' paths, sizes and modification times, with a CRC32-C of the
//     whole. The next run maps the file and queries it in place, reading
//     no DWARF; a stale or damaged file is rebuilt (a damaged one with a
//     warning). Writes go to a temporary file renamed into place, and
//     every file is reached through the directory's descriptor, without
//     following links, in a directory that no other user could change
//     (internal/cachedir says which are refused). A partial index in the
//     cache answers for its functions only, and only a Lazy image uses
//     it.
//  5. A Set holds the images searched, the kernel first and then the
//     modules by name, and answers Lookup, Code, SymbolAt and Thunks.
//
// # Rules
//
// A copy's entry is its DW_AT_entry_pc when present (an address, or in
// DWARF 5 possibly a constant offset from the copy's low pc or lowest
// address), else its lowest address, counting the empty ranges gcc
// leaves where instructions were optimised away (as perf probe does). Its caller is the function symbol
// holding the entry, so a copy nested in other inlined copies belongs to
// the outermost out-of-line function, and Copy.Offset is relative to
// that symbol's start, as kinst::caller:offset is. Ranges are sorted,
// merged and non-empty (gcc emits empty ones); they may extend into
// other symbols, such as a caller's .cold part. A copy whose code was
// optimised away entirely (gcc: low pc equal to high pc) is kept with
// no ranges, as perf probe lists it: its entry is still where the call
// happens. A copy inside an instance of the same function (gcc emits
// these for recursion and partial inlining) is left out: the enclosing
// instance's probe already fires there. Function.Inline reports
// DW_AT_inline on a subprogram of that name, the test the reference
// implementation uses; Function.Copies is where it was actually
// inlined. Function.Exists also counts declarations and symbols without
// DWARF (assembly functions).
//
// Kernel modules and other ET_REL files have all their sections at
// address 0; the package places the SHF_ALLOC sections one after another
// and applies the debug sections' relocations, so addresses are
// consistent within the module and offsets from symbols are right. Code
// for such a module is the file's, with the relocations of its branches
// applied: a symbol the module does not define is placed past its last
// section, so that a call or jump to one (the kernel's return thunk, a
// tail call) leaves the module's code, as it does once loaded.
//
// Not supported: split DWARF (-gsplit-dwarf), references into DWZ
// supplementary files (.gnu_debugaltlink; copies whose origin lies there
// are counted in BuildStats.Unresolved), and big-endian
// files. The FreeBSD Kernel constructor is compiled but has not run on
// FreeBSD yet.
//
// A Set may be queried from several goroutines. It must not be used
// after Close, which unmaps its cache files.
package debuginfo
