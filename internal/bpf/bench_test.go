//go:build linux

package bpf_test

import (
	"testing"

	"github.com/cilium/ebpf"

	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/internal/bpf"
)

// benchSrc is a predicate-like DIFO: arithmetic, a compare, a branch,
// a global and a thread-local.
const benchSrc = `BEGIN { x = arg0 * 7 + 1; self->y = x > 3 ? x / 2 : x % 5; trace(self->y + x); }`

// BenchmarkKernel measures one run of each of benchSrc's DIFOs in the
// kernel, a BPF_PROG_RUN system call each: raw tracepoint test runs take
// no repeat count, so the figure is mostly the system calls'.
func BenchmarkKernel(b *testing.B) {
	needBPF(b)
	objs := difos(compileD(b, benchSrc))
	l, rt := newRuntime(b, nil, objs)
	defer rt.Close()
	var progs []*ebpf.Program
	for _, o := range objs {
		insns, err := bpf.Translate(o, l)
		if err != nil {
			b.Fatal(err)
		}
		p, err := rt.Load("bench", insns)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		progs = append(progs, p)
	}
	opts := &ebpf.RunOptions{Context: make([]byte, 8)}
	for b.Loop() {
		for _, p := range progs {
			if _, err := p.Run(opts); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkVM measures the same DIFOs on dif/vm.
func BenchmarkVM(b *testing.B) {
	objs := difos(compileD(b, benchSrc))
	m := vm.New(nil)
	ctx := &vm.Context{Args: []uint64{5}}
	for b.Loop() {
		m.BeginFiring()
		for _, o := range objs {
			if _, err := m.Run(o, ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}
