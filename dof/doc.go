// Package dof is the DTrace Object Format: the contract between kdtrace's
// compiler and whatever runs a program, FreeBSD's kernel or kdtrace's
// own runtime.
//
// # Data flow
//
//	emit ──► *Program ──► Write ──► []byte ──► enabling.Load ──► *enabling.Program
//	          (ECBs, options,          │            (the kernel's checks;
//	           providers, DIFOs)       │             DIF through package dif)
//	                                   ├──► ioctl(DTRACEIOC_ENABLE) on FreeBSD
//	                                   └──► Read ──► *File ──► File.Program
//	                                                (sections)  (tools, tests)
//
// A Program is what a compiled D program is in DOF's terms: ECBs (a
// probe description, an optional predicate DIFO and actions, each with
// its kind, argument, tuple count, user argument, optional format string
// and optional DIFO), option settings, USDT providers and translators.
// A DIFO here is the raw sections a DIF object travels in: the
// instruction words, integer and string tables, variable table,
// translator references and relocations; package dif gives them meaning.
//
// Write lays a Program out exactly as libdtrace's dtrace_dof_create
// does: the global string table is section 0, sections follow in the
// order the ECBs, DIFOs and providers are visited, each at its
// alignment, with dtrace.h's sizes and entry sizes, and the header's
// dofh_loadsz and dofh_filesz separate what the kernel loads from the
// non-loadable comments. OptionsDOF writes the separate options DOF
// dtrace sends before it starts tracing (dtrace_getopt_dof).
//
// Read decodes a file's header and section headers, checking only that
// every structure it decodes lies within the file; File.Program decodes
// the program back. Package enabling (internal) does the checks the kernel does
// before it accepts DOF.
//
// A saved program (kdtrace -A) is a Write of its ECBs with
// Options.Saved: kdtrace's own non-loadable SectSaved section, whose type
// lies outside dtrace.h's range, records the build-ids of the images
// the program was compiled against, its runtime options and the integer
// table slots that hold $target (Saved); File.Saved reads it back.
//
// The types named after dtrace.h's structures (Header, Sec, ECBDesc,
// ProbeDesc, ActDesc, DIFType, DIFVar, RelHdr, RelDesc, OptDesc,
// ProviderDesc, ProbeEntry, XlatorDesc, XlMemberDesc, XlRef) are those
// structures field for field; their Append methods and Decode functions
// encode them little-endian, as amd64 and arm64 kernels read them.
//
// Probe function names are limited by the kernel's DTRACE_FUNCNAMELEN:
// 192 bytes with the terminating NUL on FreeBSD 14 and later, 128 on
// older kernels. Options.FuncNameLen selects it for Write and for
// File.Program, and enabling.Config.FuncNameLen for the loader.
package dof
