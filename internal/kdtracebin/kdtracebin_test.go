package kdtracebin

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuild builds the command, under another name as the harness
// does, runs it, and finds kdtrace-debuginfod beside it.
func TestBuild(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "dtrace")
	Build(t, bin, "CGO_ENABLED=0")
	out, err := exec.Command(bin, "-V").Output()
	if err != nil || !strings.Contains(string(out), "kdtrace") {
		t.Fatalf("kdtrace -V: %q, %v", out, err)
	}
	// Without arguments, kdtrace-debuginfod says how it is used.
	out, err = exec.Command(filepath.Join(dir, "kdtrace-debuginfod")).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.HasPrefix(string(out), "usage: kdtrace-debuginfod") {
		t.Errorf("kdtrace-debuginfod beside kdtrace: %q, %v; want its usage", out, err)
	}
}
