//go:build linux

package attach

import (
	"os"
	"runtime"
	"testing"

	"github.com/cilium/ebpf/btf"
)

// TestHaveTrampolinesReadsKernelTypes checks that asking whether the
// kernel has trampolines reads the kernel's BTF into the cache that
// TrampolineTarget and the programs' loads read it from, whatever the
// kernel answers (the development machines' refuse every trampoline):
// after it, the cache gives the kernel's BTF without reading it, where
// a program loaded with a cache of its own had it read and indexed
// again, half a second of CPU under emulation.
func TestHaveTrampolinesReadsKernelTypes(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("the kernel publishes no BTF: %v", err)
	}
	c := btf.NewCache()
	t.Logf("HaveTrampolines: %v", haveTrampolines(c))
	if n := allocated(func() { c.Kernel() }); n >= cachedBTF {
		t.Errorf("the cache allocated %d bytes to give the kernel's BTF: it read it again", n)
	}
}

// cachedBTF bounds what a cache that holds the kernel's BTF allocates to
// give it: next to nothing, where reading and indexing the BTF of
// 100,000 types allocates megabytes (the offset of each, by ID, alone
// takes 8 bytes a type).
const cachedBTF = 64 << 10

// allocated returns how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
