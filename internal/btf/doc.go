// Package btf reads BPF Type Format (BTF) and gives its types as D
// types. It is the kernel's type source for D's checker on Linux, as CTF
// is dtrace's: the kernel publishes its types as BTF in
// /sys/kernel/btf/vmlinux, and each module's in /sys/kernel/btf/<module>,
// as split BTF that extends the kernel's.
//
// # Data flow
//
//  1. Open maps the file (or reads it where it cannot be mapped), finds
//     the BTF in it, raw or in an ELF file's .BTF section, and checks the
//     header. Kernel, LoadModule and Modules name the running kernel's
//     files.
//  2. The first lookup walks the type section once, recording where each
//     type's record starts, since records vary in length and IDs index
//     them: 1.5 ms for the kernel's 5.5 MB of BTF, 126,000 types.
//  3. Names are hashed into a table per kind of name when first needed:
//     types (14,000 in the kernel, 0.7 ms), functions (56,000, 3 ms),
//     variables and enumerators (19,000, 1.5 ms). A program that looks
//     up only types never hashes a function's name.
//  4. A type found by name is converted to a types.Type together with
//     the types it refers to, up to structs and unions: their members
//     are converted when first asked for (types.Struct.LoadMembers), as
//     struct task_struct alone reaches 6,000 of the kernel's types
//     through its pointers (3 to 5 ms to convert them all) and a program
//     reads a few members. Conversion memoises by ID, so the same ID
//     always gives the same Go pointer and recursive types (struct
//     list_head) become cycles.
//
// A Module implements types.Module and types.EnumValues, so a
// types.Universe searches it like D's own containers. Split BTF
// converts the types it shares with its base through the base's Module:
// a kernel type reached through a module is the kernel's, with module
// vmlinux.
//
// # Conversion
//
// Types keep BTF's names, as D's messages print them; dtrace on Linux
// prints the kernel's own names too ("long unsigned int"). LookupType
// also finds integer types by C's other spellings ("unsigned long").
// INT records become *types.Int, char types marked Char whether or not
// the compiler set BTF's CHAR encoding (neither gcc nor clang does);
// FLOAT *types.Float; PTR *types.Pointer; ARRAY *types.Array; STRUCT and
// UNION *types.Struct, with bit-fields from kind_flag's member offsets
// or, in older BTF, from the INT a member's type resolves to; FWD an
// incomplete *types.Struct; ENUM and ENUM64 *types.Enum, signed when
// kind_flag says so, incomplete when they have no values; TYPEDEF
// *types.Typedef; CONST, VOLATILE and RESTRICT *types.Qualified;
// FUNC_PROTO *types.Func, variadic when its last parameter is void.
// TYPE_TAG and DECL_TAG annotations are looked through. FUNC and VAR are
// not types: LookupFunc and LookupVar give their types.
//
// Malformed BTF is reported as an *Error naming the file: by Open for a
// bad header, by the lookups for bad records, and by a struct's Err for
// bad members. So are types that refer to themselves other than through
// a struct and a pointer, as C's cannot, and on which the types
// package's methods would not return.
package btf
