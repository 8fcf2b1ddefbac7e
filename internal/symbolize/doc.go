// Package symbolize names the addresses a trace records, as dtrace's
// consumer names them: the running kernel's through its symbol table
// (/proc/kallsyms), a process's through the ELF symbol tables of the
// files it maps (/proc/PID/maps). System implements consumer.Symbols,
// which prints stack(), ustack(), sym(), usym(), mod(), umod(), uaddr()
// and printf's %a and %A:
//
//	syms := symbolize.New(symbolize.Config{Kallsyms: resolver.Table})
//	defer syms.Close()
//	c := consumer.New(desc, consumer.Config{Out: os.Stdout, Symbols: syms})
//	// and, as each process's first record arrives:
//	syms.Grab(pid)
//
// # The kernel
//
// Kernel is a ksym.Table sorted by address. kallsyms gives no sizes, so
// a symbol is taken to run to the next symbol's address, as far as the
// end of its module; the last symbol of a module whose extent is
// unknown (/proc/modules lists loaded modules' memory, not vmlinux's or
// BPF programs') covers its own address only, as a symbol of size 0
// does in dtrace (dt_module_symaddr64: addr - value < MAX(size, 1)).
// The linker's section markers (_etext, __start_rodata, __stop_*) are
// such symbols: an address past _etext is in the kernel but in no
// function. Of the names at one address, a function's is shown over a
// marker's, as dtrace's sort of an ELF table puts sized, typed symbols
// before NOTYPE ones; then, kallsyms telling no binding, the name with
// the fewest leading underscores, as libproc prefers (_stext loses to
// the function it starts), then the first in byte order.
// The kernel's own symbols are shown in object "kernel", as FreeBSD's
// dtrace shows them (kernel`vfs_read+0x12); a module's in its name
// (ext4`ext4_file_open).
//
// # Processes
//
// A process's objects are its file mappings, grouped in the order maps
// lists them: one load of a file is its run of mappings whose file
// offsets do not fall. Each object's file is opened through
// /proc/PID/map_files (the very file mapped, even deleted or in another
// mount namespace), else /proc/PID/root, else its path. Its load bias
// comes from its mappings' addresses and file offsets and the PT_LOAD
// segments holding those offsets (each mapping votes, as segments may
// share a page of the file), so position-independent executables and
// shared objects whose segments' addresses differ from their offsets
// resolve; an object extends over its segments' memory size, so a
// variable in .bss, mapped anonymously after the file, is found.
//
// Names are looked up as FreeBSD's libproc looks them up
// (proc_addr2sym): in .dynsym first, then in .symtab; a symbol holds
// the addresses [value, value+size), so one of size 0 holds none; of
// the symbols holding an address, the one starting last is chosen,
// and of those starting there a global over a local, then the name
// with the fewest leading underscores (read over __read). FUNC,
// OBJECT, GNU_IFUNC and sized NOTYPE symbols count; TLS symbols,
// whose values are offsets, do not. An object whose file has no
// .symtab is looked up in its separate debug file where one is
// installed (/usr/lib/debug/.build-id/xx/yyyy.debug, or its
// .gnu_debuglink's file next to it, in .debug/ or under
// /usr/lib/debug). An address in an object but in no symbol gives the
// object alone (libc.so.6`0x7f…), and one in no object (the heap, the
// stack, anonymous memory) gives nothing. The object is named by its
// file's base name, as dtrace's dt_basename(Pobjname()) names it: the
// executable by its own name (ls`main), never "a.out", which only
// probe descriptions use; [vdso] by that name.
//
// # Caching
//
// A process's maps are read when an address of it is first looked up,
// or earlier by Grab: a backend that grabs a process when its first
// record arrives lets its addresses be named after it exits, which is
// when most traces print. An address in none of its objects makes a
// live process's maps be read again (it may have loaded a library
// since), at most once per RefreshInterval. Files are read once per
// device, inode, size and modification time, whichever processes map
// them, and their symbol tables only when an address in them is first
// looked up (.symtab only when .dynsym has no symbol there); until then
// a file stays open, at most Config.MaxOpenFiles of them, the oldest
// read at once past that.
package symbolize
