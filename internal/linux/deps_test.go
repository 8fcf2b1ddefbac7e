package linux

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoConsumerImport keeps the backend below the consumer in the
// pipeline: it hands buffers out through its Consumer interface and
// record's types, and imports no package consumer, directly or not.
func TestNoConsumerImport(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the imports:", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/kdtrace/kdtrace/internal/consumer" {
			t.Errorf("internal/linux imports %s", p)
		}
	}
}
