package main

import (
	"bytes"
	"regexp"
	"testing"
)

// TestSizeOptions checks that sizes past what the machine allows are
// lowered and said so, as dtrace says so, or refused under
// bufresize=manual; and that a needed buffer set to 0 is refused (the
// suite's buffering/tst.resize*.d, err.resize*.d and err.zerobuf.d).
func TestSizeOptions(t *testing.T) {
	needTracing(t)
	const (
		plain = `BEGIN { exit(0); }`
		agg   = `BEGIN { @a[probeprov] = count(); exit(0); }`
		spec  = `BEGIN { s = speculation(); } BEGIN { speculate(s); trace(epid); } BEGIN { commit(s); } BEGIN { exit(0); }`
		dyn   = `BEGIN { self->x = 1; a[1] = 2; exit(0); }`
	)
	tests := []struct {
		args   []string
		status int
		stderr string // a regular expression for all of it
	}{
		{[]string{"-x", "bufsize=100t", "-n", plain}, 0, `^kdtrace: buffer size lowered to \d+[kmg]\n$`},
		{[]string{"-x", "aggsize=100t", "-n", agg}, 0, `^kdtrace: aggregation size lowered to \d+[kmg]\n$`},
		{[]string{"-x", "specsize=100t", "-n", spec}, 0, `^kdtrace: speculation size lowered to \d+[kmg]\n$`},
		{[]string{"-x", "dynvarsize=100t", "-n", dyn}, 0, `^kdtrace: dynamic variable size lowered to \d+[kmg]\n$`},
		{[]string{"-x", "bufsize=100t", "-x", "aggsize=100t", "-x", "dynvarsize=100t", "-n", agg + dyn}, 0,
			`^kdtrace: buffer size lowered to \d+[kmg]\nkdtrace: aggregation size lowered to \d+[kmg]\nkdtrace: dynamic variable size lowered to \d+[kmg]\n$`},
		{[]string{"-x", "bufsize=1m", "-n", plain}, 0, `^$`},
		{[]string{"-x", "bufresize=manual", "-x", "bufsize=100t", "-n", plain}, 1, `^kdtrace: could not enable tracing: Cannot allocate memory\n$`},
		{[]string{"-x", "bufresize=manual", "-x", "aggsize=100t", "-n", agg}, 1, `^kdtrace: could not enable tracing: Cannot allocate memory\n$`},
		{[]string{"-x", "bufresize=manual", "-x", "specsize=100t", "-n", spec}, 1, `^kdtrace: could not enable tracing: Cannot allocate memory\n$`},
		{[]string{"-x", "bufresize=manual", "-x", "dynvarsize=100t", "-n", dyn}, 1, `^kdtrace: could not enable tracing: Cannot allocate memory\n$`},
		{[]string{"-x", "bufsize=0", "-n", plain}, 1, `^kdtrace: could not enable tracing: Enabling exceeds size of buffer\n$`},
		{[]string{"-x", "strsize=4g", "-n", plain}, 1, `^kdtrace: could not enable tracing: bpf: strsize 4294967296 is over 4096\n$`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		status := run(append([]string{"kdtrace", "-q"}, tt.args...), &stdout, &stderr)
		if status != tt.status || !regexp.MustCompile(tt.stderr).MatchString(stderr.String()) {
			t.Errorf("kdtrace %q: status %d, stderr %q; want %d and %q", tt.args, status, stderr.String(), tt.status, tt.stderr)
		}
	}
}
