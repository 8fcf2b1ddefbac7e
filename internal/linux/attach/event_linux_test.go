package attach

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// TestTraceEvent counts this process's getppid calls through the
// event's perf event, a counting one, and checks that an event the
// kernel does not have is refused in a sentence naming it.
func TestTraceEvent(t *testing.T) {
	needBPF(t)
	needTracefs(t)
	c := loadCounter(t, ebpf.TracePoint, ebpf.AttachNone, 1, syscallsOf(unix.Getpid(), 0, false)...)
	a, err := TraceEvent(c.prog, "syscalls", "sys_enter_getppid")
	if err != nil {
		t.Fatal(err)
	}
	const calls = 100
	for range calls {
		unix.Getppid()
	}
	a.Close()
	for range calls {
		unix.Getppid()
	}
	if got := c.read(t)[0]; got != calls {
		t.Errorf("TraceEvent saw %d getppid calls, want %d", got, calls)
	}
	_, err = TraceEvent(c.prog, "kdt_nosuch", "event")
	if want := "attaching to trace event kdt_nosuch:event: open "; err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("TraceEvent(kdt_nosuch:event) = %v, want %q… and not found", err, want)
	}
}

func TestTraceEventWithoutTracefs(t *testing.T) {
	saved := tracefsDirs
	defer func() { tracefsDirs = saved }()
	tracefsDirs = []string{filepath.Join(t.TempDir(), "tracing")}
	_, err := TraceEvent(nil, "task", "task_rename")
	want := "attaching to trace event task:task_rename: tracefs is not mounted (mount it with: mount -t tracefs nodev /sys/kernel/tracing)"
	if err == nil || err.Error() != want {
		t.Errorf("TraceEvent = %v, want %q", err, want)
	}
}
