// Package library provides D's libraries: the D source files whose
// types, inlines and translators every D program may use, as dtrace's
// /usr/lib/dtrace provides them on Solaris and FreeBSD.
//
// On Linux the libraries are part of kdtrace, embedded in the binary;
// Files("linux") returns them:
//
//	errno.d   Linux's error numbers, EPERM to EHWPOISON
//	signal.d  the x86-64 signal numbers, SIGHUP to SIGSYS, SIGRTMIN and
//	          SIGRTMAX as the kernel has them (32 and 64), and CLD_* codes
//	regs.d    indices into regs[] and uregs[], numbered as illumos and
//	          FreeBSD number them (R_EAX, R_RSI, R_PC, …)
//	unistd.d  the DTRACEFLT_* fault codes of the ERROR probe
//	procfs.d  psinfo_t and lwpsinfo_t with their translators from struct
//	          task_struct, curpsinfo and curlwpsinfo, the pr_flag bits
//	          (PR_*) Linux can honour, and cwd and root (by d_path())
//	sched.d   cpuinfo_t, translated from struct rq or a task, and curcpu
//	time.d    hrtime_t, time_t and struct timespec, which Linux's kernel lacks
//	io.d      bufinfo_t and devinfo_t from struct bio and struct request,
//	          fileinfo_t from struct file (by d_path()) and from a folio,
//	          bio_vec, bio or request (by d_path_dentry()), and fds[]
//
// Refused names what illumos's libraries define and these leave out on
// purpose, with why, for the checker to say so.
//
// procfs.d and io.d depend on the kernel's types ("#pragma D depends_on
// module vmlinux"), which the checker finds in the kernel's BTF; without
// them they are skipped. On FreeBSD the system's own libraries are used:
// Files returns none, and System reads SystemDir. ReadDir reads the
// libraries of a directory given with -L or -x libdir.
//
// Load compiles library files into a checker before the first program,
// as dtrace does when it opens its handle. It first reads each file's
// control lines for "#pragma D depends_on library" and orders the files
// so that each follows the libraries it depends on. It then parses each
// file with the checker as the parser's source of type names and the
// checker of its declarations as they are parsed, so that a library may
// use the types of those before it and the kernel's, and checks the
// rest; the checker keeps the file's declarations, inlines and
// translators for every later program. A file whose depends_on names a module, provider
// or library that is missing fails to parse with D_PRAGMA_DEPEND and is
// skipped, as dtrace skips it; any other error stops Load with an *Error
// that names the file and carries the D error.
//
//	c := check.NewChecker(&check.Config{Modules: mods})
//	files, err := library.System(runtime.GOOS)
//	// … append library.ReadDir(dir) for each -L dir
//	skipped, err := library.Load(c, files, &library.Config{Modules: mods})
//	// parse and check the script with c
package library
