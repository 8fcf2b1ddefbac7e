package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestKinstMaxProbes checks that kinst::f: past -x kinstmaxprobes is
// refused before anything attaches, saying how many probes it needs.
// req_submit has 22 instructions in the demo image.
func TestKinstMaxProbes(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	demo := filepath.Join("..", "..", "examples", "kinst", "demo")
	const refused = "kdtrace: could not enable tracing: kinst::req_submit: brings the kinst probes to 22, past the limit of 10 (each is a kprobe); raise it with -x kinstmaxprobes=22\n"
	tests := []struct {
		limit   string
		refused bool
	}{
		{"10", true},
		{"21", true},
		{"22", false},
		{"0", false}, // no limit
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		st := run([]string{"kdtrace", "--kernel", demo, "-x", "kinstmaxprobes=" + tt.limit, "-n", "kinst::req_submit: {}"}, &stdout, &stderr)
		got := stderr.String()
		if tt.refused {
			want := strings.ReplaceAll(refused, "limit of 10", "limit of "+tt.limit)
			if st != 1 || got != want {
				t.Errorf("limit %s: status %d, %q; want 1 and %q", tt.limit, st, got, want)
			}
		} else if strings.Contains(got, "kinstmaxprobes") {
			// Past the limit, the run goes on to attach, which this
			// machine may refuse for want of kprobes.
			t.Errorf("limit %s: refused: %q", tt.limit, got)
		}
	}
}
