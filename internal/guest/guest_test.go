package guest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/dtracetest"
	"github.com/kdtrace/kdtrace/internal/kdtracebin"
)

// reads is how many one-byte reads the load generator makes: enough
// that a stray read elsewhere would show, few enough for TCG.
const reads = 1000

// A guestCase is one kdtrace run in the guest and what its output must
// say.
type guestCase struct {
	name   string
	cmd    string // a shell command line run in the guest
	status int    // its exit status
	want   string // a regular expression its output must match
}

// sendfiles is how many sendfile(2)s the load generator makes in its -s
// mode.
const sendfiles = 100

var guestCases = []guestCase{
	{
		name: "BEGIN",
		cmd:  `kdtrace -q -n 'BEGIN { printf("begin fired\n"); exit(0); }'`,
		want: `^begin fired\n`,
	},
	{
		// The first run that needs DWARF finds the -dbg vmlinux at
		// /usr/lib/debug/boot/vmlinux-$(uname -r), checks its build-id
		// against /sys/kernel/notes, and indexes it into the cache;
		// the runs after it read the cache. vfs_read+259 is the site
		// the offset case below probes.
		name: "kinst inline sites listed",
		cmd:  `kdtrace -l -n kinst::add_rchar:entry`,
		want: `(?m)^ *\d+ +kinst +vmlinux +vfs_read 259$`,
	},
	{
		name: "kinst inline entry and return",
		cmd: `kdtrace -q -n 'kinst::add_rchar:entry /pid == $target/ { @e[probefunc] = count(); }
			kinst::add_rchar:return /pid == $target/ { @r[probefunc] = count(); }
			END { printa("entry %s %@d\n", @e); printa("return %s %@d\n", @r); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\nentry vfs_read %[1]d\nreturn vfs_read %[1]d\n\n*$`, reads),
	},
	{
		// The time from start to the first firing of a program
		// compiled here, against the debug vmlinux, for
		// TestGuestSaved's figures.
		name: "kinst inline first firing",
		cmd:  `kdtrace -q -n 'kinst::add_rchar:entry /pid == $target/ { n = 1; exit(0); } END { printf("fired %d\n", n); }' -c '/bin/readzero 1'`,
		want: `^(readzero: 1 reads\n)?fired 1\n(readzero: 1 reads\n)?\n*$`,
	},
	{
		// Of fsnotify_access's nine inline copies, only vfs_read's
		// runs for the process's reads.
		name: "kinst inline fsnotify_access",
		cmd: `kdtrace -q -n 'kinst::fsnotify_access:entry /pid == $target/ { @e[probefunc] = count(); }
			kinst::fsnotify_access:return /pid == $target/ { @r[probefunc] = count(); }
			END { printa("entry %s %@d\n", @e); printa("return %s %@d\n", @r); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\nentry vfs_read %[1]d\nreturn vfs_read %[1]d\n\n*$`, reads),
	},
	{
		// sendfile(2) runs do_sendfile's inline copy of
		// fsnotify_access, whose return site (+644) is found only
		// when the call to __stack_chk_fail is known not to return.
		name: "kinst inline sendfile",
		cmd: `echo x >/tmp/small; kdtrace -q -n 'kinst::fsnotify_access:entry /pid == $target/ { @e[probefunc] = count(); }
			kinst::fsnotify_access:return /pid == $target/ { @r[probefunc] = count(); }
			END { printa("entry %s %@d\n", @e); printa("return %s %@d\n", @r); }' -c '/bin/readzero -s ` + strconv.Itoa(sendfiles) + ` /tmp/small'`,
		want: fmt.Sprintf(`^readzero: %[1]d sendfiles\nentry do_sendfile %[1]d\nreturn do_sendfile %[1]d\n\n*$`, sendfiles),
	},
	{
		// vfs_read is not inlined anywhere: its entry is fbt's.
		name: "kinst entry of a function not inlined",
		cmd:  `kdtrace -e -d -n 'kinst::vfs_read:entry'`,
		want: `(?m)^fbt::vfs_read:entry$`,
	},
	{
		name: "kinst entry as fbt",
		cmd: `kdtrace -q -n 'kinst::vfs_read:entry /pid == $target/ { @n = count(); }
			END { printa("hits %@d\n", @n); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\nhits %[1]d\n\n*$`, reads),
	},
	{
		// +5 is push %r15, the first instruction after the ftrace
		// NOP at +0 (linux-tracing.md §6.3).
		name: "kinst offset",
		cmd: `kdtrace -q -n 'kinst::vfs_read:5 /pid == $target/ { @n = count(); }
			END { printa("hits %@d\n", @n); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\nhits %[1]d\n\n*$`, reads),
	},
	{
		// +0x103 is the inline copy of add_rchar (from the -dbg
		// vmlinux's DWARF, linux-tracing.md §6.2): a site deep in the
		// function, an optimized kprobe.
		name: "kinst inline site",
		cmd: `kdtrace -q -n 'kinst::vfs_read:259 /pid == $target/ { @n = count(); }
			END { printa("hits %@d\n", @n); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\nhits %[1]d\n\n*$`, reads),
	},
	{
		// vfs_read(file, buf, count, pos): count, in rdx at entry,
		// is readzero's 1.
		name: "kinst regs",
		cmd: `kdtrace -q -n 'kinst::vfs_read:5 /pid == $target/ { @n[regs[R_RDX]] = count(); }
			END { printa("rdx %d hits %@d\n", @n); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\nrdx 1 hits %[1]d\n\n*$`, reads),
	},
	{
		name: "fbt args",
		cmd: `kdtrace -q -n 'fbt::vfs_read:entry /pid == $target/ { @n[args[2]] = count(); }
			END { printa("count %d hits %@d\n", @n); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\ncount 1 hits %[1]d\n\n*$`, reads),
	},
	{
		name: "fbt entry",
		cmd: `kdtrace -q -n 'fbt::vfs_read:entry /pid == $target/ { @n = count(); }
			END { printa("hits %@d\n", @n); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\nhits %[1]d\n\n*$`, reads),
	},
	{
		name: "fbt return",
		cmd: `kdtrace -q -n 'fbt::vfs_read:return /pid == $target/ { @n = count(); }
			END { printa("hits %@d\n", @n); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\nhits %[1]d\n\n*$`, reads),
	},
	{
		// Every instruction of ksys_read, vfs_read's caller: each one a
		// read runs fires once a read, no other fires at all.
		name: "kinst every instruction",
		cmd: `kdtrace -q -n 'kinst::ksys_read: /pid == $target/ { @n[probename] = count(); }
			END { printa("%s %@d\n", @n); }' -c '/bin/readzero 10'`,
		want: `^readzero: 10 reads\n0 10\n(\d+ 10\n)*5 10\n(\d+ 10\n)*\n*$`,
	},
	{
		// Without debug information (--debug-root an empty directory) the
		// offset is checked against the live text, where the jump to
		// the return thunk at +0xec is patched into ret and four int3s.
		name:   "kinst int3",
		cmd:    `mkdir -p /tmp/nodebug; kdtrace --debug-root /tmp/nodebug -q -n 'kinst::vfs_read:237 { exit(0); }'`,
		status: 1,
		want:   `vfs_read: offset 237 is a trap \(int3 or ud2\), which the kernel does not probe\n$`,
	},
	{
		// With it, against the vmlinux's text, where +0xec is still
		// the 5-byte jmp __x86_return_thunk.
		name:   "kinst int3 with debug information",
		cmd:    `kdtrace -q -n 'kinst::vfs_read:237 { exit(0); }'`,
		status: 1,
		want:   `vfs_read: offset 237 is not an instruction boundary \(nearest boundaries: 236 and 241\)\n$`,
	},
	{
		// +4 is inside the ftrace NOP of the live text, the call to
		// __fentry__ of the vmlinux's: refused before anything
		// attaches, naming the boundaries either side.
		name:   "kinst mid-instruction",
		cmd:    `kdtrace -q -n 'kinst::vfs_read:4 { exit(0); }'`,
		status: 1,
		want:   `vfs_read: offset 4 is inside the 5-byte ftrace NOP \(nearest boundaries: 0 and 5\)\n$`,
	},
	{
		name:   "kinst mid-instruction without debug information",
		cmd:    `kdtrace --debug-root /tmp/nodebug -q -n 'kinst::vfs_read:4 { exit(0); }'`,
		status: 1,
		want:   `vfs_read: offset 4 is inside the 5-byte ftrace NOP \(nearest boundaries: 0 and 5\)\n$`,
	},
	{
		// do_syscall_64 is noinstr code, on the kernel's kprobe
		// blacklist: refused before anything attaches, with the
		// reason, where the kernel would answer EINVAL.
		name:   "kinst blacklisted",
		cmd:    `kdtrace -q -n 'kinst::do_syscall_64:0 { exit(0); }'`,
		status: 1,
		want:   `do_syscall_64 is on the kernel's kprobe blacklist \(/sys/kernel/debug/kprobes/blacklist\), which kprobes cannot probe: noinstr or entry code, or a function marked NOKPROBE_SYMBOL\n$`,
	},
	{
		// Every instruction of vfs_read is over a limit of 100 kinst
		// probes: refused before any attaches.
		name:   "kinst probe limit",
		cmd:    `kdtrace -x kinstmaxprobes=100 -q -n 'kinst::vfs_read: { exit(0); }'`,
		status: 1,
		want:   `^kdtrace: could not enable tracing: kinst::vfs_read: brings the kinst probes to 1\d\d, past the limit of 100 \(each is a kprobe\); raise it with -x kinstmaxprobes=1\d\d\n$`,
	},
	{
		// The fbt cases above go on trampolines: -x verbose says so.
		name: "fbt entry on fentry",
		cmd: `kdtrace -x verbose -q -n 'fbt::vfs_read:entry /pid == $target/ { @n[args[2], arg6] = count(); }
			END { printa("count %d arg6 %d hits %@d\n", @n); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^kdtrace: fbt:vmlinux:vfs_read:entry: fentry\nreadzero: %[1]d reads\ncount 1 arg6 0 hits %[1]d\n\n*$`, reads),
	},
	{
		// arg0, the returning instruction's offset, is 0 as at a
		// kretprobe; arg1 the value, readzero's one byte.
		name: "fbt return on fexit",
		cmd: `kdtrace -x verbose -q -n 'fbt::vfs_read:return /pid == $target/ { @n[arg0, arg1] = count(); }
			END { printa("arg0 %d arg1 %d hits %@d\n", @n); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^kdtrace: fbt:vmlinux:vfs_read:return: fexit\nreadzero: %[1]d reads\narg0 0 arg1 1 hits %[1]d\n\n*$`, reads),
	},
	{
		// A trampoline saves no registers: the probe stays a kprobe.
		name: "fbt regs on kprobe",
		cmd: `kdtrace -x verbose -q -n 'fbt::vfs_read:entry /pid == $target/ { @n[regs[R_RDX]] = count(); }
			END { printa("rdx %d hits %@d\n", @n); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^kdtrace: fbt:vmlinux:vfs_read:entry: kprobe \(a clause reads regs\[\]\)\nreadzero: %[1]d reads\nrdx 1 hits %[1]d\n\n*$`, reads),
	},
	{
		// The stack and caller at fentry are the kprobe's at the
		// function's +0: both count under one key, the function's
		// +0x1 first.
		name: "fbt stack on fentry",
		cmd: `kdtrace -x verbose -q -n 'fbt::vfs_read:entry, kinst::vfs_read:0 /pid == $target/ { @[stack(), caller] = count(); }
			END { printa(@); }' -c '/bin/readzero 10'`,
		want: "^kdtrace: fbt:vmlinux:vfs_read:entry: fentry\nreadzero: 10 reads\n\n\n\\s+kernel`vfs_read\\+0x1\n\\s+kernel`ksys_read\\+0x[0-9a-f]+\n(\\s+kernel`\\S+\n)+\\s+-?\\d+\\s+20\n\n*$",
	},
	{
		// The links are file descriptors: a kdtrace killed with
		// SIGKILL leaves no trampoline behind.
		name: "fbt trampolines gone on kill -9",
		cmd: `kdtrace -q -n 'fbt::vfs_read:entry, fbt::vfs_read:return { @n = count(); }' & p=$!
			i=0; n=0
			while [ $i -lt 600 ]; do
				n=$(cat /proc/$p/fdinfo/* 2>/dev/null | grep -c '^link_type:.*tracing'); [ "$n" = 2 ] && break
				sleep 0.5; i=$((i+1))
			done
			echo "tracing links $n"; cat /proc/$p/fdinfo/* | grep '^attach_type' | sort
			echo "traced $(grep -c '^vfs_read ' /sys/kernel/tracing/enabled_functions)"
			kill -9 $p; wait $p; sleep 1
			echo "after kill $(grep -c '^vfs_read ' /sys/kernel/tracing/enabled_functions)"`,
		want: "^tracing links 2\nattach_type:\\s+24\nattach_type:\\s+25\ntraced 1\n(.*Killed.*\n)?after kill 0\n$",
	},
	{
		// vfs_read's copy of add_rchar returns at +173, the join
		// after if (ret > 0), which every read reaches: -d shows the
		// guard its entry (+259) sets and its exit reads.
		name: "kinst guard shown",
		cmd:  `kdtrace -e -d -n 'kinst::add_rchar:return { @ = count(); }'`,
		want: `(?m)^kinst:[^:\n]*:vfs_read:173\n\{\n\s+\(\(this->%inl_(\d+)\) = \(self->%inl_(\d+)\)\);\n\s+\(\(self->%inl_(\d+)\) = 0x0\);\n\}\n\nkinst:[^:\n]*:vfs_read:259\n\{\n\s+\(\(self->%inl_(\d+)\) = 0x1\);\n\}\n(.|\n)*^/\(this->%ok_1\)/$`,
	},
	{
		// Reads at EOF return 0 and skip add_rchar: the shared site
		// +173 fires for each, the guarded return probe for none.
		name: "kinst guard shared site without entry",
		cmd: `: >/tmp/empty; kdtrace -q -n 'kinst::add_rchar:entry /pid == $target/ { @e[probefunc] = count(); }
			kinst::add_rchar:return /pid == $target/ { @r[probefunc] = count(); }
			kinst::vfs_read:173 /pid == $target/ { @s = count(); }
			END { printa("entry %s %@d\n", @e); printa("return %s %@d\n", @r); printa("site %@d\n", @s); }' -c '/bin/readzero -z ` + strconv.Itoa(reads) + ` /tmp/empty'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads at EOF\nsite %[1]d\n\n*$`, reads),
	},
	{
		// readv(2) runs guarded copies of both: fsnotify_access in
		// do_iter_read, add_rchar in do_readv.
		name: "kinst guarded copies readv",
		cmd: `kdtrace -q -n 'kinst::add_rchar:entry, kinst::fsnotify_access:entry /pid == $target/ { @e[probefunc] = count(); }
			kinst::add_rchar:return, kinst::fsnotify_access:return /pid == $target/ { @r[probefunc] = count(); }
			END { printa("entry %s %@d\n", @e); printa("return %s %@d\n", @r); }' -c '/bin/readzero -v ` + strconv.Itoa(reads) + `'`,
		// Equal counts may print in either order.
		want: fmt.Sprintf(`^readzero: %[1]d readvs\n(entry do_iter_read %[1]d\nentry do_readv %[1]d|entry do_readv %[1]d\nentry do_iter_read %[1]d)\n(return do_iter_read %[1]d\nreturn do_readv %[1]d|return do_readv %[1]d\nreturn do_iter_read %[1]d)\n\n*$`, reads),
	},
	{
		// A glob over fbt lists only what the kernel lets fbt probe:
		// not vfs_set_acl_prepare_kgid, notrace (an inline function
		// kept out of line), nor vfs_caches_init, init code freed
		// after boot, which BTF still describes.
		name: "fbt glob lists the probeable",
		cmd: `kdtrace -l -n 'fbt::vfs_*:entry' >/tmp/vfs; s=$?
			echo "listed $(grep -c ' entry$' /tmp/vfs) vfs_read $(grep -c ' vfs_read entry$' /tmp/vfs) refused $(grep -c -e ' vfs_set_acl_prepare_kgid ' -e ' vfs_caches_init ' /tmp/vfs)"
			[ $s = 0 ]`,
		want: `^listed \d\d+ vfs_read 1 refused 0\n$`,
	},
	{
		// Enabled, the glob's probes all attach (as kprobes: there are
		// more than fbt's trampolines) and count the reads.
		name: "fbt glob",
		cmd: `kdtrace -q -n 'fbt::vfs_*:entry /pid == $target/ { @[probefunc] = count(); }
			END { printa("%s %@d\n", @); }' -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\n(vfs_\w+ \d+\n)*vfs_read %[1]d\n(vfs_\w+ \d+\n)*\n*$`, reads),
	},
	{
		// Named in full, a function fbt cannot probe is an error
		// saying why.
		name:   "fbt notrace named",
		cmd:    `kdtrace -q -n 'fbt::vfs_set_acl_prepare_kgid:entry { exit(0); }'`,
		status: 1,
		want:   `the kernel refuses kprobes in vfs_set_acl_prepare_kgid: it is notrace \(not in /sys/kernel/tracing/available_filter_functions\)`,
	},
	{
		// lockstat's acquire and release probes at the entry of
		// mutex_lock and mutex_unlock, each function's on an fentry
		// trampoline: a one-byte write(2) or read(2) of a pipe takes
		// its mutex once, and nothing else. Each release is of the
		// lock the thread took last.
		name: "lockstat adaptive on fentry",
		cmd: `kdtrace -x verbose -q -n 'syscall::write:entry, syscall::read:entry /pid == $target && arg2 == 1/ { self->in = 1; }
			syscall::write:return, syscall::read:return /self->in/ { self->in = 0; }
			lockstat:::adaptive-acquire /self->in/ { self->lock = args[0]; @a = count(); }
			lockstat:::adaptive-release /self->in/ { @r[args[0] == self->lock] = count(); }
			END { printa("acquire %@d\n", @a); printa("release same %d %@d\n", @r); }' -c '/bin/readzero -p ` + strconv.Itoa(pipeTrips) + `'`,
		want: fmt.Sprintf(`^%sreadzero: %d pipe round trips\nacquire %[3]d\nrelease same 1 %[3]d\n\n*$`, lockstatNotes("fentry"), pipeTrips, 2*pipeTrips),
	},
	{
		// A clause reading regs[] keeps them on kprobes, where arg0
		// is the first argument's register.
		name: "lockstat adaptive on kprobe",
		cmd: `kdtrace -x verbose -q -n 'syscall::write:entry, syscall::read:entry /pid == $target && arg2 == 1/ { self->in = 1; }
			syscall::write:return, syscall::read:return /self->in/ { self->in = 0; }
			lockstat:::adaptive-acquire, lockstat:::adaptive-release /self->in/ { @[probename, regs[R_RDI] == arg0] = count(); }
			END { printa("%s %d %@d\n", @); }' -c '/bin/readzero -p ` + strconv.Itoa(pipeTrips) + `'`,
		want: fmt.Sprintf(`^%sreadzero: %d pipe round trips\nadaptive-acquire 1 %[3]d\nadaptive-release 1 %[3]d\n\n*$`,
			lockstatNotes(`kprobe \(a clause reads regs\[\]\)`), pipeTrips, 2*pipeTrips),
	},
	{
		// The guest's one CPU, kept busy, fires sched:::tick at
		// scheduler_tick's entry (sched_tick's name before 6.10), as
		// an fbt probe there does, tick for tick: the 100 ticks after
		// the tenth (n counts them) are the fbt probe's 100, whichever
		// of the two runs first.
		name: "sched tick",
		cmd: `(while :; do :; done) & p=$!
			kdtrace -q -n 'sched:::tick { n++; }
			sched:::tick /n > 10 && n <= 110/ { @s[arg0 == (uint64_t)curthread, args[1]->pr_pid == pid] = count(); }
			fbt::scheduler_tick:entry /n > 10 && n <= 110/ { @f = count(); }
			sched:::tick /n == 120/ { exit(0); }
			END { printa("sched %d %d %@d\n", @s); printa("fbt %@d\n", @f); }'
			s=$?; kill $p; (exit $s)`,
		want: `^sched 1 1 100\nfbt 100\n\n*$`,
	},
	{
		// 6.1 inlines enqueue_task: sched:::enqueue, which fires at
		// its entry, is refused, the trampoline and the kprobe saying
		// why.
		name:   "sched enqueue inlined",
		cmd:    `kdtrace -x verbose -q -n 'sched:::enqueue { exit(0); }'`,
		status: 1,
		want:   `^kdtrace: sched:vmlinux::enqueue at enqueue_task\(\): kprobe \(no fentry: the kernel's BTF does not describe function enqueue_task\)\nkdtrace: could not enable tracing: enqueue_task: the kernel refuses kprobes in enqueue_task: `,
	},
}

// pipeTrips is how many times the load generator's -p mode writes a
// byte to a pipe and reads it back.
const pipeTrips = 1000

// lockstatNotes is what -x verbose says of lockstat's adaptive-acquire
// and adaptive-release, each function's group going where how says (a
// regular expression).
func lockstatNotes(how string) string {
	var b strings.Builder
	for _, s := range []struct{ probe, fn string }{
		{"adaptive-acquire", "mutex_lock"}, {"adaptive-acquire", "mutex_lock_interruptible"},
		{"adaptive-acquire", "mutex_lock_killable"}, {"adaptive-release", "mutex_unlock"},
	} {
		fmt.Fprintf(&b, `kdtrace: lockstat:vmlinux::%s at %s\(\): %s\n`, s.probe, s.fn, how)
	}
	return b.String()
}

// guestScript runs each case in turn, its output between two marker
// lines, the second carrying its exit status and the guest's uptime
// before and after, for the log (TCG's timings are no test's business).
func guestScript(cases []guestCase) string {
	var b strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&b, "echo '=== %s'\nt0=$(cut -d' ' -f1 /proc/uptime)\n%s\n", c.name, c.cmd)
		fmt.Fprintf(&b, "s=$?\necho \"=== status $s uptime $t0 $(cut -d' ' -f1 /proc/uptime)\"\n")
	}
	return b.String()
}

var caseRE = regexp.MustCompile(`(?s)=== ([^\n]*)\n(.*?)=== status (\d+) uptime ([\d.]+) ([\d.]+)\n`)

// guestDebugImage returns a copy of the -dbg vmlinux, in dir, without
// the sections kdtrace does not read: the relocations (.rela.*, which
// the vmlinux keeps for KASLR and which are half its size) and
// .debug_frame. The copy keeps the build-id, the symbols, the code and
// the DWARF the index and the types come from, and halves what the
// guest must hold in RAM.
func guestDebugImage(t *testing.T, vmlinux, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("objcopy"); err != nil {
		t.Skip("objcopy not found (binutils), to make the guest's debug image")
	}
	out := filepath.Join(dir, "vmlinux")
	cmd := exec.Command("objcopy", "--remove-section=.rela*", "--remove-section=.debug_frame", vmlinux, out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, b)
	}
	return out
}

// guestSetup skips the test where the guest cannot run: under -short or
// the race detector, or without qemu, a static busybox or the tools
// named. It returns the busybox and the kernel cache's directory.
func guestSetup(t *testing.T, tools ...string) (busybox, cache string) {
	t.Helper()
	if testing.Short() {
		t.Skip("boots a kernel under QEMU TCG (minutes); skipped under -short")
	}
	// The guests are single CPUs: two boot side by side, so that the
	// package's time is the longer boot's, not their sum.
	t.Parallel()
	if dtracetest.Race {
		// The guest runs a kdtrace built without it; the run adds
		// minutes for nothing the race detector sees.
		t.Skip("the guest's kdtrace runs without the race detector")
	}
	busybox, err := Available()
	if err != nil {
		t.Skip(err)
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found, to build the guest's programs", tool)
		}
	}
	if cache, err = CacheDir(); err != nil {
		t.Skip(err)
	}
	return busybox, cache
}

// A guestKernel is a kernel fetched for a test: its image, and what
// the test's Needs asked for.
type guestKernel struct {
	*Image
	vmlinux string   // the -dbg vmlinux, with Needs.Debug
	headers *Headers // with Needs.Headers
}

// fetchGuestKernel returns the best kernel of Debian 12's 6.1 for amd64
// that the test can have, with what needs names (with pins, the first
// of them it can have). It fails the test, saying what is missing, when
// apt knows the series but no kernel has all its packages in the
// archive or in the cache, or when a download fails for any reason but
// the network. It skips it when the machine has no apt that knows the
// series, or no network to the archive, and nothing usable cached.
func fetchGuestKernel(t *testing.T, cache string, needs Needs, pins ...Kernel) *guestKernel {
	t.Helper()
	ctx := context.Background()
	a, err := QueryArchive(ctx, "6.1", "amd64")
	cached := Cached(cache, "6.1", "amd64", needs)
	switch {
	case err == nil:
	case len(cached) > 0:
		t.Logf("%v: the cache's kernels only", err)
		a = Archive{}
	case errors.Is(err, ErrNoApt) || errors.Is(err, exec.ErrNotFound):
		t.Skipf("no Debian 12 kernel to boot: %v, and none cached in %s", err, cache)
	default:
		t.Fatal(err)
	}
	ks, err := Choose(a, cached, needs, pins...)
	if err != nil {
		if len(pins) > 0 {
			t.Fatalf("%v\n(the test's expectations are those builds'; pin one Debian still has, with its own)", err)
		}
		t.Fatal(err)
	}
	var offline []string
	for _, k := range ks {
		g, err := fetchKernel(ctx, cache, k, needs)
		var fe *FetchError
		if errors.As(err, &fe) && fe.Offline() {
			offline = append(offline, err.Error())
			continue
		}
		if err != nil {
			t.Fatalf("%v\n(apt's package lists may be older than the archive: apt-get update)", err)
		}
		t.Logf("guest kernel %s %s (%s)", k.Release, k.Version, k.Package())
		return g
	}
	t.Skipf("no network to the archive, and nothing usable in %s:\n%s", cache, strings.Join(offline, "\n"))
	return nil
}

// fetchKernel fetches k's image and what needs names into cache.
func fetchKernel(ctx context.Context, cache string, k Kernel, needs Needs) (*guestKernel, error) {
	img, err := FetchKernel(ctx, k, cache)
	if err != nil {
		return nil, err
	}
	g := &guestKernel{Image: img}
	if needs.Debug {
		if g.vmlinux, err = FetchDebug(ctx, k, cache); err != nil {
			return nil, err
		}
	}
	if needs.Headers {
		if g.headers, err = FetchHeaders(ctx, k, cache); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// buildKdtrace builds a static kdtrace in dir for the guest.
func buildKdtrace(t *testing.T, dir string) string {
	t.Helper()
	kdtrace := filepath.Join(dir, "kdtrace")
	kdtracebin.Build(t, kdtrace, "CGO_ENABLED=0")
	return kdtrace
}

// TestGuest boots the pinned Debian kernel, whose offsets its cases
// name, and runs kdtrace in it: BEGIN, then probes on the read path
// counted against a program that makes a known number of reads.
func TestGuest(t *testing.T) {
	busybox, cache := guestSetup(t, "gcc")
	g := fetchGuestKernel(t, cache, Needs{Debug: true}, Debian12)
	ctx := context.Background()
	if ok, err := g.HasConfig("CONFIG_KPROBES"); err != nil || !ok {
		t.Fatalf("%s has no CONFIG_KPROBES=y (%v)", g.Config, err)
	}

	dir := t.TempDir()
	debug := guestDebugImage(t, g.vmlinux, dir)
	kdtrace := buildKdtrace(t, dir)
	readzero := filepath.Join(dir, "readzero")
	if out, err := exec.Command("gcc", "-static", "-O2", "-o", readzero, "testdata/readzero.c").CombinedOutput(); err != nil {
		t.Fatalf("building readzero: %v\n%s", err, out)
	}

	res, err := Run(ctx, Config{
		Image:   g.Image,
		Busybox: busybox,
		Files:   map[string]string{"bin/kdtrace": kdtrace, "bin/readzero": readzero},
		Data:    map[string]string{"usr/lib/debug/boot/vmlinux-" + g.Release: debug},
		// The initramfs holds the debug image twice while the kernel
		// unpacks it, and kdtrace maps it to index it.
		Memory:  "3G",
		Script:  guestScript(guestCases),
		Timeout: 8 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	judge(t, res, guestCases)
}

// judge checks each case's exit status and output in what the guest
// printed, a subtest each, and logs the guest time each took.
func judge(t *testing.T, res *Result, cases []guestCase) {
	t.Helper()
	t.Logf("guest wall time %v; output:\n%s", res.Wall.Round(time.Millisecond), res.Output)
	got := map[string][2]string{}
	for _, m := range caseRE.FindAllStringSubmatch(res.Output, -1) {
		got[m[1]] = [2]string{m[2], m[3]}
		t0, _ := strconv.ParseFloat(m[4], 64)
		t1, _ := strconv.ParseFloat(m[5], 64)
		t.Logf("%s: %.2f s of guest time", m[1], t1-t0)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, ok := got[c.name]
			if !ok {
				t.Fatalf("no output in the guest's:\n%s", res.Output)
			}
			if r[1] != strconv.Itoa(c.status) {
				t.Errorf("exit status %s, want %d; output:\n%s", r[1], c.status, r[0])
			}
			if !regexp.MustCompile(c.want).MatchString(r[0]) {
				t.Errorf("output does not match %q:\n%s", c.want, r[0])
			}
		})
	}
}
