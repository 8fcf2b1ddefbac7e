package guest

import (
	"fmt"
	"strconv"
)

// The locals-> cases join TestGuest's boot. The vfs_read offsets are
// those of the pinned kernel (Debian12), from the -dbg vmlinux's DWARF
// and code:
//
//	+5    push %r15, after the ftrace NOP: the parameters still in
//	      their argument registers (count in rdx);
//	+151  before the call to f_op->read (/dev/zero's path): count,
//	      clamped to MAX_RW_COUNT, in rdx, buf in r12;
//	+241  in the inline copy of fsnotify_access and its fsnotify_file:
//	      file in rbp, path rbp+16 (DW_OP_breg6 16; DW_OP_stack_value),
//	      mask the constant FS_ACCESS; count only an entry value there;
//	+276  in fsnotify_parent's copy inside it: dentry in rdi, inode
//	      in r9;
//	+438  in new_sync_read's copy (a file with read_iter and no read,
//	      as tmpfs's), after a call: count spilled to the stack at
//	      DW_OP_fbreg -160, the frame base the CFA, which the guest's
//	      image gives only in ORC (it carries no .debug_frame).
func init() {
	guestCases = append(guestCases, localsCases...)
}

// apart runs kdtrace with its trace output in a file of its own (-o),
// then prints the file's lines sorted and counted: N lines of the same
// value read as one. A clause that prints while the traced program
// runs must not share the program's standard output, where the
// program's own line can land between two of kdtrace's writes, which
// end where its buffer fills, not where a line does. The status is
// kdtrace's.
func apart(args string) string {
	return `rm -f /tmp/trace; kdtrace -o /tmp/trace ` + args + `; s=$?; sort /tmp/trace | uniq -c; (exit $s)`
}

// fromCallers is why count is not read from vfs_read's callers either:
// their call sites compute it from r12 or r13, and the guest's image
// has ORC tables, which say where rbp is saved and not those.
const fromCallers = `; nor from its callers: at the call returning to 0x[0-9a-f]+ it is computed from r1[23], which the kernel's ORC tables do not say where the function saves(; at the call returning to 0x[0-9a-f]+ it is computed from r1[23], which the kernel's ORC tables do not say where the function saves)*`

var localsCases = []guestCase{
	{
		// Once the debug image is indexed (the first case that needs
		// it), -lv lists the locals at each offset, and why count is
		// not readable where only its entry value says where it is.
		name: "locals listed",
		cmd: `kdtrace -lv -n kinst::vfs_read:5 -n kinst::vfs_read:151 -n kinst::vfs_read:241 -n kinst::vfs_read:276 -n kinst::vfs_read:438 |
			grep -E '^ *[0-9]+ +kinst|locals->(count|buf|dentry|inode):' | grep -v hidden`,
		want: `^ *\d+ +kinst +vmlinux +vfs_read 5\n` +
			`\t\tlocals->buf: char \* \(parameter\)\n\t\tlocals->count: size_t \(parameter\)\n` +
			` *\d+ +kinst +vmlinux +vfs_read 151\n` +
			`\t\tlocals->buf: char \* \(parameter\)\n\t\tlocals->count: size_t \(parameter\)\n` +
			` *\d+ +kinst +vmlinux +vfs_read 241\n` +
			`\t\tlocals->buf: char \* \(parameter\)\n` +
			`\t\tlocals->count: size_t \(parameter; available only as its value on entry to the function \(DW_OP_entry_value \(DW_OP_reg1\)\), which nothing keeps past the function's first instruction` + fromCallers + `\)\n` +
			` *\d+ +kinst +vmlinux +vfs_read 276\n` +
			`\t\tlocals->inode: struct inode \* \(of inlined fsnotify_parent\)\n` +
			`\t\tlocals->dentry: struct dentry \* \(parameter; of inlined fsnotify_parent\)\n` +
			`\t\tlocals->buf: char \* \(parameter\)\n` +
			`\t\tlocals->count: size_t \(parameter; available only as its value on entry to the function \(DW_OP_entry_value \(DW_OP_reg1\)\), which nothing keeps past the function's first instruction` + fromCallers + `\)\n` +
			` *\d+ +kinst +vmlinux +vfs_read 438\n` +
			`\t\tlocals->buf: char \* \(parameter; of inlined new_sync_read\)\n\t\tlocals->count: size_t \(parameter\)\n$`,
	},
	{
		// One run of readzero: at entry and in the middle, one line a
		// read, each the 1 readzero asked for; buf the address
		// readzero passed to read(2), which syscall::read:entry's arg1
		// has, at entry (rsi) and in the middle (r12); and the
		// parameters and locals of inline copies, compared with what
		// they are computed from at fbt's entry: file, the computed
		// &file->f_path, the constant mask, and in fsnotify_parent's
		// copy the dentry and inode that vfs_read's own parameters do
		// not hold. Sorted and counted, the lines of one value read
		// as one.
		name: "locals count, buf and inline copies",
		cmd: apart(`-q -n 'syscall::read:entry /pid == $target/ { self->ubuf = arg1; }
			fbt::vfs_read:entry /pid == $target/ { self->f = args[0]; }
			kinst::vfs_read:5, kinst::vfs_read:151 /pid == $target/ { printf("%s %d\n", probename, locals->count); @b[probename, (uint64_t)locals->buf == self->ubuf] = count(); }
			kinst::vfs_read:241 /pid == $target/ { @f[locals->file == self->f, locals->path == &self->f->f_path, locals->mask] = count(); }
			kinst::vfs_read:276 /pid == $target/ { @d[locals->dentry == self->f->f_path.dentry, locals->inode == self->f->f_inode] = count(); }
			END { printa("%s buf %d hits %@d\n", @b); printa("file %d path %d mask %d hits %@d\n", @f); printa("dentry %d inode %d hits %@d\n", @d); }' -c '/bin/readzero ` +
			strconv.Itoa(reads) + `'`),
		want: fmt.Sprintf(`^readzero: %[1]d reads\n`+
			`(\s*\d+ \n)?`+
			`\s*%[1]d 151 1\n\s*1 151 buf 1 hits %[1]d\n`+
			`\s*%[1]d 5 1\n\s*1 5 buf 1 hits %[1]d\n`+
			`\s*1 dentry 1 inode 1 hits %[1]d\n\s*1 file 1 path 1 mask 1 hits %[1]d\n$`, reads),
	},
	{
		// dd's 7-byte reads of a tmpfs file go through new_sync_read,
		// where count is on the stack: read through the CFA that ORC
		// gives at +438. dd's record counts on stderr are dropped.
		name: "locals on the stack",
		cmd: `head -c 700 /dev/zero >/tmp/seven
			kdtrace -q -n 'syscall::read:entry /pid == $target/ { self->ubuf = arg1; }
			kinst::vfs_read:438 /pid == $target/ { @[locals->count, (uint64_t)locals->buf == self->ubuf] = count(); }
			END { printa("count %d same %d hits %@d\n", @); }' -c 'dd if=/tmp/seven of=/dev/null bs=7 count=100' 2>/tmp/dd.err
			s=$?; grep -v -e records -e bytes /tmp/dd.err; (exit $s)`,
		want: `^count 7 same 1 hits 100\n\n*$`,
	},
	{
		name:   "locals optimised out",
		cmd:    `kdtrace -q -n 'kinst::vfs_read:5 { trace(locals->ret); }'`,
		status: 1,
		want:   `^kdtrace: invalid probe specifier kinst::vfs_read:5 \{ trace\(locals->ret\); \}: in action list: locals->ret is not available at kinst::vfs_read:5: optimized out at vfs_read\+0x5; available at \[vfs_read\+0x72, vfs_read\+0xad\), \[vfs_read\+0xf1, vfs_read\+0x1b5\), \[vfs_read\+0x256, vfs_read\+0x262\), \[vfs_read\+0x267, vfs_read\+0x293\)\n$`,
	},
}
