//go:build linux

package bpf_test

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cilium/ebpf"
)

// TestSwapAggs counts firings on two CPUs into an aggregation whose
// map is swapped out, read and emptied again and again meanwhile: every
// firing is counted once, in one of the maps swapped out.
func TestSwapAggs(t *testing.T) {
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Skip(err)
	}
	r := newProbeRun(t, `BEGIN { @[arg0 % 100] = count(); }`)
	const n = 100000
	ncpu = min(ncpu, 2)
	var wg sync.WaitGroup
	var fired atomic.Int64
	var done atomic.Bool
	for cpu := range ncpu {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ctx := make([]byte, 8*7)
			for i := range uint64(n) {
				binary.NativeEndian.PutUint64(ctx[8:], i)
				if _, err := r.prog.Run(&ebpf.RunOptions{Context: ctx, Flags: testRunOnCPU, CPU: uint32(cpu)}); err != nil {
					t.Errorf("test run on CPU %d: %v", cpu, err)
					return
				}
				fired.Add(1)
			}
		})
	}
	go func() {
		wg.Wait()
		done.Store(true)
	}()
	var counted int64
	swaps := 0
	for last := false; !last; {
		last = done.Load()
		old, err := r.rt.SwapAggs([]int{0})
		if err != nil {
			t.Fatal(err)
		}
		swaps++
		counted += drainCounts(t, old[0])
	}
	if n := entries(t, r.rt.Aggs[0]); n != 0 {
		t.Errorf("%d entries left in the map in place", n)
	}
	t.Logf("%d firings, %d swaps", fired.Load(), swaps)
	if counted != fired.Load() || counted != int64(ncpu*n) {
		t.Errorf("counted %d firings of %d (%d fired)", counted, ncpu*n, fired.Load())
	}
}

// drainCounts returns the sum of count()'s words over every key and
// CPU of m, and deletes the keys.
func drainCounts(t *testing.T, m *ebpf.Map) int64 {
	t.Helper()
	var key []byte
	var vals [][]byte
	var keys [][]byte
	var sum int64
	it := m.Iterate()
	for it.Next(&key, &vals) {
		for _, v := range vals {
			sum += int64(binary.NativeEndian.Uint64(v))
		}
		keys = append(keys, append([]byte(nil), key...))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := m.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	return sum
}

// entries counts the keys of m.
func entries(t *testing.T, m *ebpf.Map) int {
	t.Helper()
	var key []byte
	var vals [][]byte
	n := 0
	it := m.Iterate()
	for it.Next(&key, &vals) {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}
