// Package ksym is a kernel's symbol table: the names, modules, addresses
// and kinds of its functions and data, for D's backquoted symbols
// (`vfs_read, vmlinux`linux_banner, ext4`ext4_file_operations) and for
// finding a function's code where there is no debug information (kinst
// offsets).
//
// # Sources
//
// A Table is read from the running kernel's /proc/kallsyms (ReadKallsyms,
// Kallsyms), whose fourth column names a module's symbols, or from the
// .symtab of a kernel image (ReadELF), offline. kallsyms shows addresses
// only to a reader the kernel trusts (root, or kptr_restrict 0): others
// see zeros, which the table reports as unknown (Table.ZeroAddrs). It
// gives no sizes: a symbol's size is taken to reach the next symbol's
// address (Symbol.Padded). Without CONFIG_KALLSYMS_ALL it lists
// functions only. The modules' files, relocatable objects with no
// addresses, are not read.
//
// Reading /proc/kallsyms costs the kernel about 40 ms of system time for
// 120,000 lines, whatever the reader does, and parsing it 15 to 20 ms
// more; so a Resolver reads its table on first use only, and a D
// program without a backquoted symbol never reads it. Names are looked
// up by scanning the entries (about 1 ms) until a program has asked for
// many, when they are indexed by name. Where kallsyms lists the bounds
// of the kernel's per-CPU section, the data symbols within are per-CPU.
//
// # Code
//
// Table.Code returns the bytes of a function: from the image's file for
// an ELF table, from the live kernel's memory through /proc/kcore (an
// ELF core file whose PT_LOAD segments map the kernel's virtual
// addresses) for a kallsyms table. Either may be missing: a stripped
// image, a kernel built without CONFIG_PROC_KCORE; Code then says why.
//
// # Lists
//
// ReadFilterFunctions and ReadKprobeBlacklist parse the kernel's lists of
// the functions tracing can reach: ftrace's available_filter_functions
// and the kprobe blacklist, which fbt's listing and kprobes' refusals
// read.
//
// # Types
//
// Resolver joins a table with the kernel's type information (BTF VARs,
// DWARF variables) and implements the D checker's Symbols: a function
// symbol is typed as dtrace types one, a data symbol by its variable's
// type where one is known; BTF's DATASEC says which variables are
// per-CPU.
package ksym
