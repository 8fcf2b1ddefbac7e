package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain lets the kill test run the command as a process of its own:
// the test binary, re-executed with KDTRACE_TEST_MAIN set, is kdtrace.
func TestMain(m *testing.M) {
	if os.Getenv("KDTRACE_TEST_MAIN") != "" {
		os.Exit(run(os.Args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
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
	before, evBefore := loadedPrograms(t), events()
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
	if n := loadedPrograms(t); n <= before {
		t.Errorf("%d BPF programs loaded while tracing, as many as before", n)
	}
	cmd.Process.Kill()
	cmd.Wait()
	checkReleased(t, before)
	if ev := events(); ev != evBefore {
		t.Errorf("tracefs probe events changed: %q, was %q", ev, evBefore)
	}
}
