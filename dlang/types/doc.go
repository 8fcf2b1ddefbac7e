// Package types declares the types of D programs and the containers that
// name them.
//
// The model follows CTF, the type format dtrace's compiler works on: C's
// integers, floats, pointers, arrays, functions, structs, unions, enums,
// typedefs and qualifiers, plus D's string and the few types that exist
// only in D (stack, _symaddr, _usymaddr, <DYN>). Sizes and offsets are in
// bytes except member offsets and bit-field widths, which are in bits as
// in CTF and BTF; the data model is LP64.
//
// Types live in modules. A Module is a container of named types: D's
// built-in containers C and D (see Builtin), the script's own
// declarations (a *Scope), and the kernel's and its modules' types, which
// package btf and package debuginfo load lazily, one name at a time (btf
// converts a struct's members only when Struct.Members is first called). A
// Universe searches its modules in order, as dt_type_lookup does, and
// resolves names scoped by module (vmlinux`struct task_struct).
//
// The predicates (IsInteger, IsScalar, …), Promote and the compatibility
// rules are the type-only parts of dtrace's dt_node_is_* functions; the
// checker (package check) adds what depends on expressions.
package types
