package attach

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestExplainRefusal(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "available_filter_functions")
	if err := os.WriteFile(list, []byte("vfs_read\nkinst_test_fbtconvert [kinst_test]\nshared [mod_a]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// As cilium/ebpf reports the kernel's refusal of a perf kprobe.
	refused := fmt.Errorf("creating perf_kprobe PMU: token __x64_f: not found: %w", fs.ErrNotExist)
	for _, tc := range []struct {
		name        string
		err         error
		module, fn  string
		dirs        []string
		wantNotrace bool
	}{
		{"traceable kernel function", refused, "vmlinux", "vfs_read", []string{dir}, false},
		{"traceable module function", refused, "kinst_test", "kinst_test_fbtconvert", []string{dir}, false},
		{"notrace module function", refused, "kinst_test", "kinst_test_notrace", []string{dir}, true},
		{"notrace kernel function", refused, "vmlinux", "native_pmd_val", []string{dir}, true},
		{"EINVAL", unix.EINVAL, "", "native_pmd_val", []string{dir}, true},
		{"module's name is another's function", refused, "mod_b", "shared", []string{dir}, true},
		{"kernel function of a module's name", refused, "vmlinux", "shared", []string{dir}, true},
		{"other error", unix.EPERM, "vmlinux", "native_pmd_val", []string{dir}, false},
		{"no tracefs", refused, "vmlinux", "native_pmd_val", []string{filepath.Join(dir, "none")}, false},
		{"second tracefs", refused, "vmlinux", "native_pmd_val", []string{filepath.Join(dir, "none"), dir}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := explainRefusal(tc.err, tc.module, tc.fn, tc.dirs)
			var ne *notraceError
			if errors.As(got, &ne) != tc.wantNotrace {
				t.Fatalf("explainRefusal(%v, %s, %s) = %v", tc.err, tc.module, tc.fn, got)
			}
			if !tc.wantNotrace && got != tc.err {
				t.Errorf("explainRefusal changed %v into %v", tc.err, got)
			}
		})
	}
	err := explainRefusal(refused, "kinst_test", "kinst_test_notrace", []string{dir})
	want := "the kernel refuses kprobes in kinst_test_notrace [kinst_test]: it is notrace (not in " + list +
		"), and kprobe events refuse notrace functions (CONFIG_KPROBE_EVENTS_ON_NOTRACE is off)"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}
