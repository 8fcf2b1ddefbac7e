package bpf_test

import (
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/internal/bpf"
)

// threadCPU is this thread's CPU time as the kernel counts it.
func threadCPU(t *testing.T) int64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		t.Fatal(err)
	}
	return ts.Nano()
}

// TestVtime runs vtimestamp in this thread with the sched_switch
// program keeping MapVtime: once the thread has slept, it has an entry,
// on the CPU; over a spin of 20 ms of its CPU time vtimestamp grows by
// at least half that and at most twice, and over a sleep by less than
// half the time slept. A runtime whose DIFOs do not read vtimestamp
// keeps no MapVtime and attaches nothing.
func TestVtime(t *testing.T) {
	needBPF(t)
	_, none := newRuntime(t, nil, difos(compileD(t, "BEGIN { trace(timestamp); }")))
	if prog, err := none.LoadVtime(); prog != nil || err != nil || none.Vtime != nil {
		t.Errorf("without vtimestamp: LoadVtime = %v, %v; MapVtime %v", prog, err, none.Vtime)
	}
	none.Close()

	objs := difos(compileD(t, "BEGIN { trace(vtimestamp); }"))
	l, rt := newRuntime(t, nil, objs)
	defer rt.Close()
	keeper, err := rt.LoadVtime()
	if err != nil || keeper == nil {
		t.Fatalf("LoadVtime = %v, %v", keeper, err)
	}
	defer keeper.Close()
	lk, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: "sched_switch", Program: keeper})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	insns, err := bpf.Translate(objs[0], l)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := rt.Load("vtime", insns)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	defer onCPU0(t)()
	// Each read is a firing of its own: a firing has one time.
	vtime := func() int64 {
		if err := rt.BeginFiring(); err != nil {
			t.Fatal(err)
		}
		if _, err := prog.Run(&ebpf.RunOptions{Context: make([]byte, 8), Flags: testRunOnCPU, CPU: 0}); err != nil {
			t.Fatalf("test run: %v", err)
		}
		st, err := rt.ReadState(0)
		if err != nil || st.Fault != 0 {
			t.Fatalf("state %+v, %v", st, err)
		}
		return int64(st.Ret)
	}

	time.Sleep(time.Millisecond)
	var entry [2]uint64
	if err := rt.Vtime.Lookup(uint32(unix.Gettid()), &entry); err != nil || entry[1] == 0 {
		t.Fatalf("this thread's entry after a sleep: %v, %v; want one on the CPU", entry, err)
	}

	const spin = 20 * time.Millisecond
	v0, c0 := vtime(), threadCPU(t)
	for threadCPU(t)-c0 < int64(spin) {
	}
	v1, c1 := vtime(), threadCPU(t)
	if dv, dc := v1-v0, c1-c0; dv < dc/2 || dv > 2*dc {
		t.Errorf("a spin of %d ns of CPU time: vtimestamp grew %d ns", dc, dv)
	}

	start := time.Now()
	time.Sleep(50 * time.Millisecond)
	v2 := vtime()
	if dv, dt := v2-v1, time.Since(start); dv < 0 || dv >= int64(dt)/2 {
		t.Errorf("a sleep of %v: vtimestamp grew %d ns", dt, dv)
	}
}
