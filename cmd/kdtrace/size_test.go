package main

import (
	"bytes"
	"math/bits"
	"regexp"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/kdtrace/kdtrace/internal/linux"
	"github.com/kdtrace/kdtrace/internal/option"
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

// TestBufsizeLowered checks that a bufsize lowered is lowered for the
// ring of every CPU's bufsize to fit a 128th of the machine's memory,
// as FreeBSD's dtrace bounds bufsize over all CPUs, and no further; and
// that the size said is a CPU's, as dtrace says it.
func TestBufsizeLowered(t *testing.T) {
	needTracing(t)
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Skipf("cannot count the CPUs: %v", err)
	}
	limit := linux.MemLimit()
	if limit == 0 {
		t.Skip("the machine's memory is not known")
	}
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-q", "-x", "bufsize=100t", "-n", `BEGIN { exit(0); }`}, &stdout, &stderr); st != 0 {
		t.Fatalf("status %d, stderr %q", st, stderr.String())
	}
	m := regexp.MustCompile(`^kdtrace: buffer size lowered to (\d+[kmg])\n$`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("stderr %q, want the buffer size lowered", stderr.String())
	}
	v, err := option.ParseSize(m[1])
	if err != nil {
		t.Fatal(err)
	}
	ring := func(bufsize uint64) uint64 { return 1 << bits.Len64(bufsize*uint64(ncpu)-1) }
	if ring(v) > limit || ring(2*v) <= limit {
		t.Errorf("bufsize lowered to %s on %d CPUs: a ring of %d bytes, twice it %d; want the largest within %d",
			m[1], ncpu, ring(v), ring(2*v), limit)
	}
}
