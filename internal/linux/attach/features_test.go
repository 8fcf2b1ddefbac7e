package attach

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

// TestHaveKprobes asks kernels made of files which probes they have,
// in linux-tracing.md §10.1's order.
func TestHaveKprobes(t *testing.T) {
	tests := []struct {
		name    string
		pmu     bool   // a kprobe event source
		events  bool   // tracefs kprobe_events
		config  string // /proc/config.gz's content; "-" for none
		wantErr string
	}{
		{"pmu", true, true, "CONFIG_KPROBES=y\n", ""},
		{"pmu without config", true, false, "-", ""},
		{"tracefs only", false, true, "CONFIG_KPROBES=y\n", "this kernel cannot probe kernel instructions: it has no kprobe event source (Linux 4.17), only tracefs kprobe_events, whose probes would outlive kdtrace"},
		{"not set", false, false, "CONFIG_UPROBES=y\n# CONFIG_KPROBES is not set\n", "this kernel cannot probe kernel instructions: it has no kprobes (CONFIG_KPROBES is not set)"},
		{"absent from config", false, false, "CONFIG_UPROBES=y\n", "this kernel cannot probe kernel instructions: it has no kprobes (CONFIG_KPROBES is not set)"},
		{"no events", false, false, "CONFIG_KPROBES=y\n# CONFIG_KPROBE_EVENTS is not set\n", "this kernel cannot probe kernel instructions: it has kprobes but no kprobe events (CONFIG_KPROBE_EVENTS is not set)"},
		{"no config", false, false, "-", "this kernel cannot probe kernel instructions: it has no kprobes (no kprobe event source, no kprobe_events in tracefs)"},
	}
	saved := [...]any{eventSources, tracefsDirs, kernelConfig}
	defer func() {
		eventSources, tracefsDirs, kernelConfig = saved[0].(string), saved[1].([]string), saved[2].(string)
	}()
	for _, tt := range tests {
		dir := t.TempDir()
		eventSources = filepath.Join(dir, "devices")
		tracefsDirs = []string{filepath.Join(dir, "tracing")}
		kernelConfig = filepath.Join(dir, "config.gz")
		mkdir(t, eventSources+"/uprobe")
		mkdir(t, tracefsDirs[0])
		if tt.pmu {
			mkdir(t, eventSources+"/kprobe")
			writeFile(t, eventSources+"/kprobe/type", "6\n")
		}
		if tt.events {
			writeFile(t, tracefsDirs[0]+"/kprobe_events", "")
		}
		if tt.config != "-" {
			f, err := os.Create(kernelConfig)
			if err != nil {
				t.Fatal(err)
			}
			z := gzip.NewWriter(f)
			z.Write([]byte(tt.config))
			z.Close()
			f.Close()
		}
		err := haveKprobes()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: haveKprobes() = %v, want nil", tt.name, err)
		case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
			t.Errorf("%s: haveKprobes() = %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTracepointWithoutTracefs: where tracefs is not mounted, a
// tracepoint is refused with how to mount it, not cilium/ebpf's words.
func TestTracepointWithoutTracefs(t *testing.T) {
	saved := tracefsDirs
	defer func() { tracefsDirs = saved }()
	dir := t.TempDir()
	tracefsDirs = []string{filepath.Join(dir, "tracing"), filepath.Join(dir, "debug", "tracing")}
	mkdir(t, tracefsDirs[0]) // the mount point, empty
	_, err := Tracepoint(nil, "sched", "sched_process_exec")
	want := "attaching to tracepoint sched:sched_process_exec: tracefs is not mounted (mount it with: mount -t tracefs nodev /sys/kernel/tracing)"
	if err == nil || err.Error() != want {
		t.Errorf("Tracepoint = %v, want %q", err, want)
	}
	mkdir(t, tracefsDirs[1]+"/events")
	if err := haveTracefs(); err != nil {
		t.Errorf("haveTracefs with events under the second place = %v", err)
	}
}
