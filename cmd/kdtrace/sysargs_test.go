package main

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSyscallArgsWithoutTracefs compiles a clause that uses a system
// call's third argument as nobody, who cannot read tracefs's formats,
// and checks that every system call's entry arguments are the same for
// root with tracefs (where it is mounted), nobody, and root in a mount
// namespace without tracefs. read's __do_sys_read is inlined: BTF has
// no prototype of it, and without the table of the formats its args[]
// were none.
func TestSyscallArgsWithoutTracefs(t *testing.T) {
	asNobody := unprivileged(t)
	const script = "syscall::read:entry { @[pid] = sum(args[2]); }"
	if stdout, stderr, status := asNobody("-e", "-n", script); status != 0 || stdout != "" || stderr != "" {
		t.Errorf("kdtrace -e -n %q as nobody: status %d, stdout %q, stderr %q; want 0 and nothing", script, status, stdout, stderr)
	}
	list := []string{"-lv", "-n", "syscall:::entry"}
	var want, wantErr bytes.Buffer
	if st := run(append([]string{"kdtrace"}, list...), &want, &wantErr); st != 0 {
		t.Fatalf("kdtrace %q as root: status %d: %s", list, st, wantErr.String())
	}
	if !bytes.Contains(want.Bytes(), []byte("\t\targs[2]: size_t\n")) {
		t.Fatalf("kdtrace %q as root gives no read's args[2]:\n%s", list, want.String())
	}
	stdout, stderr, status := asNobody(list...)
	if status != 0 || stderr != "" {
		t.Errorf("kdtrace %q as nobody: status %d, stderr %q", list, status, stderr)
	}
	if diff := cmp.Diff(want.String(), stdout); diff != "" {
		t.Errorf("kdtrace %q (-root +nobody):\n%s", list, diff)
	}

	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("unshare (util-linux) is not installed, to run without tracefs")
	}
	_, bin := nobodyBinary(t)
	// Unmount tracefs, and debugfs, under which it would mount itself
	// again, in a mount namespace of kdtrace's own: the system's stay.
	const noTracefs = `for m in /sys/kernel/debug/tracing /sys/kernel/debug /sys/kernel/tracing; do
	! mountpoint -q $m || umount -l $m || exit 99
done
[ ! -e /sys/kernel/tracing/events ] || exit 99
"$@"`
	for _, args := range [][]string{list, {"-e", "-n", script}} {
		cmd := exec.Command(unshare, append([]string{"--mount", "--propagation", "private", "sh", "-c", noTracefs, "sh", bin}, args...)...)
		cmd.Env = append(os.Environ(), "KDTRACE_TEST_MAIN=1")
		cmd.Dir = "/"
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 99 {
			t.Skipf("tracefs cannot be unmounted in a mount namespace: %s", stderr.String())
		}
		if err != nil || stderr.Len() != 0 {
			t.Errorf("kdtrace %q as root without tracefs: %v: %s", args, err, stderr.String())
		}
		if args[0] == "-lv" {
			if diff := cmp.Diff(want.String(), stdout.String()); diff != "" {
				t.Errorf("kdtrace %q (-with tracefs +without):\n%s", list, diff)
			}
		}
	}
}
