package attach

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
)

// The kernel's answers, where this package looks for them. Tests point
// them elsewhere to ask about other kernels.
var (
	eventSources = "/sys/bus/event_source/devices"
	tracefsDirs  = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}
	kernelConfig = "/proc/config.gz"
)

// haveUprobeMulti reports whether the kernel has uprobe_multi links
// (Linux 6.6), which attach a program at many places of a file with one
// link. The answer is found once.
func haveUprobeMulti() bool {
	return features.HaveBPFLinkUprobeMulti() == nil
}

// UprobeAttachType is the attach type a program given to Uprobes or
// USDT must be loaded with: ebpf.AttachTraceUprobeMulti where the
// kernel has uprobe_multi links, else ebpf.AttachNone, for the per-site
// perf events, which refuse a program loaded for uprobe_multi.
func UprobeAttachType() ebpf.AttachType {
	if uprobeMulti() {
		return ebpf.AttachTraceUprobeMulti
	}
	return ebpf.AttachNone
}

// uprobeMulti says whether Uprobes and USDT use uprobe_multi links;
// tests turn it off to try the per-site links on a kernel that has both.
var uprobeMulti = haveUprobeMulti

var kprobes = sync.OnceValue(func() error { return haveKprobes() })

// HaveKprobes returns nil if the kernel can put BPF programs on kernel
// instructions through kprobe perf events, else one sentence saying
// what it lacks. The answer is found once.
func HaveKprobes() error { return kprobes() }

// A KprobesError is HaveKprobes' answer for a kernel without them:
// Reason says what it lacks ("it has no kprobes (CONFIG_KPROBES is not
// set)"), so that a caller naming more than kprobes can say it in its
// own sentence.
type KprobesError struct{ Reason string }

func (e *KprobesError) Error() string {
	return "this kernel cannot probe kernel instructions: " + e.Reason
}

func haveKprobes() error {
	if _, err := os.Stat(eventSources + "/kprobe/type"); err == nil {
		return nil
	}
	for _, dir := range tracefsDirs {
		if _, err := os.Stat(dir + "/kprobe_events"); err == nil {
			// A kernel older than 4.17: only tracefs text entries make
			// kprobes, and they outlive a process killed with SIGKILL.
			return &KprobesError{"it has no kprobe event source (Linux 4.17), only tracefs kprobe_events, whose probes would outlive kdtrace"}
		}
	}
	switch configSays("CONFIG_KPROBES") {
	case "n":
		return &KprobesError{"it has no kprobes (CONFIG_KPROBES is not set)"}
	case "y":
		return &KprobesError{"it has kprobes but no kprobe events (CONFIG_KPROBE_EVENTS is not set)"}
	}
	return &KprobesError{"it has no kprobes (no kprobe event source, no kprobe_events in tracefs)"}
}

// configSays returns "y" or "n" for option in the running kernel's
// configuration, or "" when it cannot be read.
func configSays(option string) string {
	f, err := os.Open(kernelConfig)
	if err != nil {
		return ""
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(kernelConfig, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return ""
		}
		r = z
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		switch line := sc.Text(); line {
		case "# " + option + " is not set":
			return "n"
		case option + "=y":
			return "y"
		}
	}
	if sc.Err() != nil {
		return ""
	}
	return "n" // a readable configuration that does not name it
}
