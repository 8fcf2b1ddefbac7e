package ksym_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
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
	if runtime.GOARCH != "amd64" {
		t.Skip("the fixture's code is decoded as amd64")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("no gcc: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "kernel.c")
	if err := os.WriteFile(src, []byte(kernelC), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "vmlinux")
	args := append([]string{"-O1", "-fno-pie", "-no-pie", "-fcf-protection=none", "-o", out, src}, flags...)
	if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Skipf("gcc %v: %v\n%s", args, err, b)
	}
	return out
}
