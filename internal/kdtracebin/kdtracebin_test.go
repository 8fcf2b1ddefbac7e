package kdtracebin

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuild builds the command and runs it.
func TestBuild(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kdtrace")
	Build(t, bin, "CGO_ENABLED=0")
	out, err := exec.Command(bin, "-V").Output()
	if err != nil || !strings.Contains(string(out), "kdtrace") {
		t.Fatalf("kdtrace -V: %q, %v", out, err)
	}
}
