package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRun checks the command's verdicts beyond what -d prints.
func TestRun(t *testing.T) {
	tests := []struct {
		args   []string
		status int
		stderr string // a part of what it says
	}{
		{[]string{"-n", "BEGIN { raise(9); }"}, 1, "could not enable tracing: Destructive actions not allowed"},
		{[]string{"-w", "-n", "BEGIN { raise(9); }"}, 1, "the tracing runtime is not available"},
		{[]string{"-e", "-n", "BEGIN { raise(9); }"}, 0, ""},
		{[]string{"-x", "version=1.0", "-e", "-n", "BEGIN { strstr = 1; }"}, 0, ""},
		{[]string{"-x", "version=nine", "-e", "-n", "BEGIN { }"}, 1, "failed to set -x version"},
		{[]string{"-e", "-n", "BEGIN { trace(EINVAL + SIGUSR1 + R_RSI + DTRACEFLT_BADADDR); }"}, 0, ""},
		{[]string{"-x", "nolibs", "-e", "-n", "BEGIN { trace(EINVAL); }"}, 1, "failed to resolve EINVAL"},
		{[]string{"-e", "-n", "nosuchprovider:::probe { }"}, 1, "does not match any probes"},
		{[]string{"-Z", "-e", "-n", "nosuchprovider:::probe { }"}, 0, ""},
		{[]string{"--btf", "none", "-e", "-n", "BEGIN { trace(curthread->pid); }"}, 1, "failed to resolve type struct task_struct *"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		status := run(append([]string{"kdtrace"}, tt.args...), &stdout, &stderr)
		if status != tt.status || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("kdtrace %q: status %d, stderr %q; want %d and %q", tt.args, status, stderr.String(), tt.status, tt.stderr)
		}
	}
}
