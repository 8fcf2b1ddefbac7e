package debuginfo

import (
	"strings"
	"testing"
)

// TestKernelNotFound checks, on a machine without the running kernel's
// debug files under an empty debug root, that the error says where it
// looked.
func TestKernelNotFound(t *testing.T) {
	root := t.TempDir()
	s, err := Kernel(Options{DebugRoot: root, NoCache: true})
	if err == nil {
		s.Close()
		t.Skip("the running kernel's debug info is installed outside the debug root")
	}
	for _, want := range []string{"running kernel", root + "/boot/vmlinux-", root + "/lib/modules/"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
