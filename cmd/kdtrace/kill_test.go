package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
)

// TestMain lets the kill test run the command as a process of its own:
// the test binary, re-executed with KDTRACE_TEST_MAIN set, is kdtrace.
func TestMain(m *testing.M) {
	if os.Getenv("KDTRACE_TEST_MAIN") != "" {
		status := run(os.Args, os.Stdout, os.Stderr)
		if p := os.Getenv("KDTRACE_TEST_HWM"); p != "" {
			saveHWM(p)
		}
		os.Exit(status)
	}
	os.Exit(m.Run())
}

// kdtracePrograms returns the IDs of the system's BPF programs that
// kdtrace names (kdt_…).
func kdtracePrograms(t *testing.T) map[ebpf.ProgramID]bool {
	t.Helper()
	ids := map[ebpf.ProgramID]bool{}
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if err != nil {
			return ids
		}
		id = next
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue // gone meanwhile
		}
		if info, err := p.Info(); err == nil && strings.HasPrefix(info.Name, "kdt_") {
			ids[id] = true
		}
		p.Close()
	}
}

// TestKillLeavesNothing kills a tracing kdtrace with SIGKILL and checks
// that the kernel released everything it had attached: its programs are
// gone, and it made no tracefs entry that could outlive it.
func TestKillLeavesNothing(t *testing.T) {
	needTracing(t)
	events := func() string {
		var b strings.Builder
		for _, f := range []string{"/sys/kernel/tracing/uprobe_events", "/sys/kernel/tracing/kprobe_events"} {
			s, _ := os.ReadFile(f)
			b.Write(s)
		}
		return b.String()
	}
	evBefore := events()
	before := kdtracePrograms(t)
	cmd := exec.Command(os.Args[0], "-n", `syscall:::entry { @[execname] = count(); } syscall:::return { @r = quantize(arg0); } profile-97 { @p = count(); } tick-1s { @t = count(); }`)
	cmd.Env = append(os.Environ(), "KDTRACE_TEST_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() || !strings.Contains(sc.Text(), "matched") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("kdtrace did not start tracing: %q", sc.Text())
	}
	// Its programs: kdtrace's that were not loaded before (other
	// tests' may be among them; they are released by their tests).
	var its []ebpf.ProgramID
	for id := range kdtracePrograms(t) {
		if !before[id] {
			its = append(its, id)
		}
	}
	if len(its) == 0 {
		t.Error("no program loaded while tracing")
	}
	cmd.Process.Kill()
	cmd.Wait()
	// The kernel frees them shortly after, later when it is busy.
	for range 500 {
		left := 0
		for _, id := range its {
			if p, err := ebpf.NewProgramFromID(id); err == nil {
				p.Close()
				left++
			}
		}
		if left == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, id := range its {
		if p, err := ebpf.NewProgramFromID(id); err == nil {
			p.Close()
			t.Errorf("program %d still loaded after kdtrace was killed", id)
		}
	}
	if ev := events(); ev != evBefore {
		t.Errorf("tracefs probe events changed: %q, was %q", ev, evBefore)
	}
}
