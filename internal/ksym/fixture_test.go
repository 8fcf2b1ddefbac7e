package ksym_test

import (
	"testing"

	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// kernelC stands for a kernel: a function, and data of the kinds D
// reads through symbols.
const kernelC = `
int max_pfn_like = 0x12345;
const char linux_banner[] = "Linux version 9.9-test";
struct ops { long open; int flags; } file_ops = { 7, -9 };
unsigned char small = 200;
__attribute__((section(".data..percpu"))) long pcpu_counter = 3;
__attribute__((noinline)) int vfs_read_like(int x) { return x * 3 + 1; }
int main(void) { return vfs_read_like(max_pfn_like) + linux_banner[0] + file_ops.flags + small + pcpu_counter; }
`

// buildKernel compiles kernelC with gcc and the given flags, skipping
// the test where gcc cannot.
func buildKernel(t *testing.T, flags ...string) string {
	t.Helper()
	return gcctest.Build(t, t.TempDir(), "vmlinux", kernelC, flags...)
}
