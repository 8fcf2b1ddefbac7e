package debuginfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKernelNotFound checks, on a machine without the running kernel's
// debug files under an empty debug root, that the error says where it
// looked.
func TestKernelNotFound(t *testing.T) {
	root := t.TempDir()
	s, err := Kernel(Options{DebugRoot: root, NoCache: true})
	if err == nil {
		s.Close()
		t.Skip("the running kernel's debug info is installed outside the debug root")
	}
	for _, want := range []string{"running kernel", root + "/boot/vmlinux-", root + "/lib/modules/"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestKernelModulesOnly finds an out-of-tree module loaded with insmod
// (at extra/, which modules.dep does not list) on a system without the
// kernel's debug image: the set holds the module alone, answers for its
// functions, and says why the kernel is missing. Without the module,
// the missing kernel is the error.
func TestKernelModulesOnly(t *testing.T) {
	f := build(t, "gcc")
	const release = "6.1.0-56-amd64"
	sysroot := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(sysroot, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/sys/kernel/osrelease", release+"\n")
	write("proc/modules", "")
	debugRoot := t.TempDir()
	opts := Options{DebugRoot: debugRoot, NoCache: true}
	if s, err := kernelAt(sysroot, opts); err == nil {
		s.Close()
		t.Fatal("no kernel image and no module: no error")
	} else if !strings.Contains(err.Error(), "running kernel "+release) {
		t.Errorf("error %q does not name the running kernel", err)
	}

	ko, err := os.ReadFile(f.mod)
	if err != nil {
		t.Fatal(err)
	}
	write("proc/modules", "kinst_test 16384 0 - Live 0xffffffffc0347000 (OE)\n")
	write("lib/modules/"+release+"/extra/kinst-test.ko", string(ko))
	s, err := kernelAt(sysroot, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.KernelError(); err == nil || !strings.Contains(err.Error(), "running kernel "+release) {
		t.Errorf("KernelError() = %v, want the running kernel's", err)
	}
	var mods []string
	for _, img := range s.Images() {
		mods = append(mods, img.Module+" "+strings.TrimPrefix(img.Path, sysroot))
	}
	if diff := cmp.Diff([]string{"kinst_test /lib/modules/" + release + "/extra/kinst-test.ko"}, mods); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	fn, err := s.Lookup("modleaf")
	if err != nil {
		t.Fatal(err)
	}
	if len(fn.Copies) != 3 || fn.Copies[0].Module != "kinst_test" {
		t.Errorf("modleaf's copies: %+v", fn.Copies)
	}
}
