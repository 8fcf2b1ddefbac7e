package attach

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// TraceEvent attaches prog, a tracepoint program, to the trace event
// system:event ("task", "task_rename") through a perf event that counts
// rather than samples: the program runs at every firing either way, and
// the kernel refuses a sampling event on the events that would recurse
// through perf's own interrupts (irq_vectors's, as irq_work_exit). The
// event's ID comes from tracefs, which must be mounted.
func TraceEvent(prog *ebpf.Program, system, event string) (*attachment, error) {
	name := system + ":" + event
	if err := haveTracefs(); err != nil {
		return nil, fmt.Errorf("attaching to trace event %s: %w", name, err)
	}
	id, err := eventID(system, event)
	if err != nil {
		return nil, fmt.Errorf("attaching to trace event %s: %w", name, err)
	}
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_TRACEPOINT,
		Config: id,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
	}
	// A tracepoint's program runs on every CPU, whichever the event is
	// opened on.
	fd, err := unix.PerfEventOpen(&attr, -1, 0, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("attaching to trace event %s: opening its perf event: %w", name, err)
	}
	a := &attachment{}
	a.add(os.NewFile(uintptr(fd), "perf_event "+name))
	l, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: prog, Attach: ebpf.AttachPerfEvent})
	if err != nil {
		return a.fail(fmt.Errorf("attaching to trace event %s: %w", name, err))
	}
	a.add(l)
	return a, nil
}

// eventID returns the ID of trace event system:event, from the first
// tracefs that has it.
func eventID(system, event string) (uint64, error) {
	var err error
	for _, dir := range tracefsDirs {
		var b []byte
		if b, err = os.ReadFile(filepath.Join(dir, "events", system, event, "id")); err == nil {
			return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		}
	}
	return 0, err
}
