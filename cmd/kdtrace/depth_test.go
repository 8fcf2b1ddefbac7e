package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestDeepNesting checks that a script nesting far deeper than the
// parser's limit ends as a compile error in dtrace's form, exit status 1,
// at once: not in Go's unrecoverable stack overflow.
func TestDeepNesting(t *testing.T) {
	// Far less stack than Go's default 1 GiB: the limit is enforced
	// before the recursion gets deep.
	defer debug.SetMaxStack(debug.SetMaxStack(16 << 20))
	const n = 3_000_000
	script := filepath.Join(t.TempDir(), "deep.d")
	src := "BEGIN { x = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "; }\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-e", "-s", script},
			"kdtrace: failed to compile script " + script + ": line 1: yacc stack overflow near \"(\": nesting exceeds 10000 levels\n"},
		{[]string{"-x", "errtags", "-e", "-s", script},
			"kdtrace: failed to compile script " + script + ": [D_SYNTAX] line 1: yacc stack overflow near \"(\": nesting exceeds 10000 levels\n"},
	} {
		var stdout, stderr bytes.Buffer
		status := run(append([]string{"kdtrace"}, tt.args...), &stdout, &stderr)
		if status != 1 || stderr.String() != tt.want {
			t.Errorf("kdtrace %q: status %d, stderr %q; want 1 and %q", tt.args[:len(tt.args)-1], status, stderr.String(), tt.want)
		}
	}
}
