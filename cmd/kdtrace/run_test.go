package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/enabling"
)

// TestRun checks the command's verdicts beyond what -d prints.
func TestRun(t *testing.T) {
	tests := []struct {
		args   []string
		status int
		stderr string // a part of what it says
	}{
		{[]string{"-n", "BEGIN { raise(9); }"}, 1, "could not enable tracing: Destructive actions not allowed"},
		{[]string{"-w", "-e", "-n", "BEGIN { raise(9); }"}, 0, ""},
		{[]string{"-n", `inline int f = (copyoutstr("x", 0, 1), 1); BEGIN /f/ { }`}, 1, "could not enable tracing: Destructive actions not allowed"},
		{[]string{"-e", "-n", `inline int f = (copyoutstr("x", 0, 1), 1); BEGIN /f/ { }`}, 0, ""},
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

// loadDOF runs kdtrace -G with args, into a file, and returns the DOF
// written as the kernel's checks load it.
func loadDOF(t *testing.T, args ...string) *enabling.Program {
	t.Helper()
	out := filepath.Join(t.TempDir(), "p.dof")
	var stdout, stderr bytes.Buffer
	if st := run(append([]string{"kdtrace", "-G", "-x", "linktype=dof", "-o", out}, args...), &stdout, &stderr); st != 0 {
		t.Fatalf("kdtrace -G: status %d: %s", st, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p, err := enabling.Load(b, nil)
	if err != nil {
		t.Fatalf("the kernel's checks refuse -G's DOF: %v", err)
	}
	return p
}

// TestDOF checks that -G writes DOF the kernel's checks accept, and
// that -S lists the DIF.
func TestDOF(t *testing.T) {
	prog := `BEGIN /pid != 0/ { @c[execname] = count(); printf("%d %s\n", pid, execname); exit(0); }`
	p := loadDOF(t, "-n", prog)
	if len(p.ECBs) != 1 || p.ECBs[0].Pred == nil || len(p.ECBs[0].Actions) != 6 {
		t.Errorf("DOF has %d ECBs; want 1 with a predicate and 6 actions (id and key, count, printf 2, exit): %+v", len(p.ECBs), p.ECBs)
	}
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-S", "-e", "-n", prog}, &stdout, &stderr); st != 0 || !strings.Contains(stderr.String(), "ldgs DT_VAR(278), %r1") {
		t.Errorf("kdtrace -S: status %d:\n%s", st, stderr.String())
	}
}
