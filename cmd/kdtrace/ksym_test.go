package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestKernelSymbols resolves `sym against a --kernel image's symbol
// table, typed by its DWARF, and -S shows the address loaded.
func TestKernelSymbols(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	demo := filepath.Join("..", "..", "examples", "kinst", "demo")
	out, err := exec.Command("nm", demo).Output()
	if err != nil {
		t.Skipf("nm: %v", err)
	}
	m := regexp.MustCompile(`(?m)^0*([0-9a-f]+) [Dd] bytes_fn$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("nm lists no bytes_fn:\n%s", out)
	}
	for _, tt := range []struct {
		prog   string
		status int
		stderr string
	}{
		{"BEGIN { trace(`bytes_fn); }", 0, "setx DT_INTEGER[0], %r1\t\t! 0x" + string(m[1])},
		{"BEGIN { trace(vmlinux`bytes_fn); }", 0, "ldx  [%r1], %r1"},
		{"BEGIN { trace(`req_submit); }", 0, ""},
		{"BEGIN { trace(`nosuch); }", 1, "failed to resolve `nosuch: Unknown symbol name"},
		{"BEGIN { trace(vmlinux``bytes_fn); }", 1, "kernel module 'vmlinux' symbol 'bytes_fn' may not be referenced as a user symbol"},
	} {
		var stdout, stderr bytes.Buffer
		status := run([]string{"kdtrace", "--kernel", demo, "-S", "-e", "-n", tt.prog}, &stdout, &stderr)
		if status != tt.status || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("%s: status %d, stderr %q; want %d and %q", tt.prog, status, stderr.String(), tt.status, tt.stderr)
		}
	}
}

// TestKinstWithoutDWARF compiles and lists kinst offsets against an
// image without debug information: its symbol table and code give the
// same answers as its DWARF.
func TestKinstWithoutDWARF(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	strip, err := exec.LookPath("strip")
	if err != nil {
		t.Skip("no strip (binutils)")
	}
	demo := filepath.Join("..", "..", "examples", "kinst", "demo")
	bare := filepath.Join(t.TempDir(), "demo")
	if b, err := exec.Command(strip, "-g", "-o", bare, demo).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, b)
	}
	kdtrace := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		st := run(append([]string{"kdtrace"}, args...), &stdout, &stderr)
		return st, stdout.String(), stderr.String()
	}
	st, _, stderr := kdtrace("--kernel", bare, "-e", "-n", "kinst::req_submit:4 { }")
	if want := `invalid probe description "kinst::req_submit:4": req_submit: offset 4 is not an instruction boundary (nearest boundaries: 3 and 5)`; st != 1 || !strings.Contains(stderr, want) {
		t.Errorf("kinst::req_submit:4: status %d, %q; want 1 and %q", st, stderr, want)
	}
	if st, _, stderr := kdtrace("--kernel", bare, "-e", "-n", "kinst::req_submit:5 { }"); st != 0 {
		t.Errorf("kinst::req_submit:5: status %d, %q", st, stderr)
	}
	if st, _, stderr := kdtrace("--kernel", bare, "-e", "-n", "kinst::req_submit: { }"); st != 0 {
		t.Errorf("kinst::req_submit: status %d, %q", st, stderr)
	}
	_, want, _ := kdtrace("--kernel", demo, "-l", "-n", "kinst::req_submit:")
	st, got, stderr := kdtrace("--kernel", bare, "-l", "-n", "kinst::req_submit:")
	if st != 0 || got != want || strings.Count(got, "\n") < 5 {
		t.Errorf("-l kinst::req_submit: without DWARF: status %d, %q\n%s\nwith DWARF:\n%s", st, stderr, got, want)
	}
}

// TestSymbolTypesBTFThenDWARF types a --kernel image's symbols by its
// BTF and, for the variables its BTF lacks, by its DWARF: gcc gives
// a.c's BTF and both files' DWARF.
func TestSymbolTypesBTFThenDWARF(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.c"), filepath.Join(dir, "b.c")
	os.WriteFile(a, []byte("struct ops { long open; int flags; } file_ops = { 7, 9 };\nint main(void) { return file_ops.flags; }\n"), 0o644)
	os.WriteFile(b, []byte("unsigned long max_pfn_like = 5;\n"), 0o644)
	ao, bo, img := filepath.Join(dir, "a.o"), filepath.Join(dir, "b.o"), filepath.Join(dir, "vmlinux")
	for _, args := range [][]string{
		{"-c", "-O1", "-gbtf", "-gdwarf", "-o", ao, a},
		{"-c", "-O1", "-g", "-o", bo, b},
		{"-no-pie", "-o", img, ao, bo},
	} {
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Skipf("gcc %q: %v\n%s", args, err, out)
		}
	}
	for _, tt := range []struct{ prog, want string }{
		{"BEGIN { trace(`file_ops.flags); }", "ldsw"}, // BTF's VAR
		{"BEGIN { trace(`max_pfn_like); }", "ldx"},    // DWARF's variable
		{"BEGIN { trace(`max_pfn_like + `file_ops.open); }", "add"},
	} {
		var stdout, stderr bytes.Buffer
		if st := run([]string{"kdtrace", "--kernel", img, "-S", "-e", "-n", tt.prog}, &stdout, &stderr); st != 0 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%s: status %d, %s; want %q", tt.prog, st, stderr.String(), tt.want)
		}
	}
}
