//go:build linux

package bpf_test

import (
	"math/bits"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/kdtrace/kdtrace/internal/bpf"
)

// TestRuntimeRing checks that the ring buffer the runtime makes holds
// bufsize of each possible CPU's records, as dtrace makes a buffer of
// bufsize for each CPU: bufsize × CPUs, rounded up to the power of two
// the kernel's ring needs.
func TestRuntimeRing(t *testing.T) {
	needBPF(t)
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Skipf("cannot count the CPUs: %v", err)
	}
	for _, bufsize := range []uint64{64 << 10, 100 << 10, 1 << 20} {
		_, rt := newRuntime(t, &bpf.Config{BufSize: bufsize}, nil)
		got := rt.Ring.MaxEntries()
		rt.Close()
		want := uint32(1) << bits.Len64(bufsize*uint64(ncpu)-1)
		if got != want {
			t.Errorf("bufsize %d on %d CPUs: a ring of %d bytes, want %d", bufsize, ncpu, got, want)
		}
	}
}
