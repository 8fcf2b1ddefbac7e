package kinst_test

import (
	"debug/elf"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/kinst"
	"github.com/kdtrace/kdtrace/internal/ksym"
)

// strippedDemo is the demo binary without its DWARF (strip -g), and the
// resolver of it that the symbol table gives.
func strippedDemo(t *testing.T) (string, *kinst.Resolver) {
	t.Helper()
	strip, err := exec.LookPath("strip")
	if err != nil {
		t.Skip("no strip (binutils)")
	}
	out := filepath.Join(t.TempDir(), "demo")
	if b, err := exec.Command(strip, "-g", "-o", out, filepath.Join("..", "..", "examples", "kinst", "demo")).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, b)
	}
	tab, err := ksym.ReadELF(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, &kinst.Resolver{Symbols: tab, NoDebug: errors.New("no debug info for demo")}
}

// TestCheckOffsetWithoutDWARF checks every offset of every function of
// the demo against its symbol table and code alone: the answers must be
// those the DWARF-indexed images give.
func TestCheckOffsetWithoutDWARF(t *testing.T) {
	path, bare := strippedDemo(t)
	full := demoResolver(t, false)
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Section(".debug_info") != nil {
		t.Fatal("strip -g left .debug_info")
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 || s.Section == elf.SHN_UNDEF {
			continue
		}
		if fn, err := full.Set.Lookup(s.Name); err != nil || len(fn.OutOfLine) != 1 {
			continue // several functions of one name, or none DWARF knows
		}
		for off := uint64(0); off <= s.Size; off++ {
			want := full.CheckOffset(s.Name, off)
			got := bare.CheckOffset(s.Name, off)
			if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
				t.Errorf("%s:%d: without DWARF %v, with DWARF %v", s.Name, off, got, want)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("only %d offsets checked", checked)
	}
	t.Logf("%d offsets agree", checked)
}

func TestWithoutDWARFErrors(t *testing.T) {
	_, r := strippedDemo(t)
	if err := r.CheckOffset("nosuch", 0); err == nil || !strings.Contains(err.Error(), "function nosuch not found in the kernel's symbol table") {
		t.Errorf("unknown function: %v", err)
	}
	// Inline copies need DWARF.
	if _, err := r.Sites("req_valid", false); err == nil || err.Error() != "no debug info for demo" {
		t.Errorf("Sites: %v", err)
	}
	r.ZeroMatch = true
	if err := r.CheckOffset("nosuch", 0); err != nil {
		t.Errorf("unknown function with -Z: %v", err)
	}
	// A symbol table without code cannot check.
	tab, err := ksym.ReadKallsyms(strings.NewReader("ffffffff816d5b70 T vfs_read\nffffffff816d5d40 T vfs_write\n"))
	if err != nil {
		t.Fatal(err)
	}
	r = &kinst.Resolver{Symbols: tab}
	if err := r.CheckOffset("vfs_read", 5); err == nil || !strings.Contains(err.Error(), "cannot check that offset 5 of vfs_read is an instruction: reading its code: ") {
		t.Errorf("no code: %v", err)
	}
}

// TestModulesWithoutKernel resolves against a running kernel's set that
// holds a module's image but not the kernel's: the module's functions
// are answered from its DWARF, with one warning that the kernel's copies
// are missing, and the kernel's functions fall back to the symbol table
// for offsets and fail, naming the missing image, for inline sites.
func TestModulesWithoutKernel(t *testing.T) {
	set, err := debuginfo.Open("", []string{filepath.Join("..", "..", "examples", "kinst", "demo")}, debuginfo.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	tab, err := ksym.ReadKallsyms(strings.NewReader("ffffffff816d5b70 T vfs_read\nffffffff816d5d40 T vfs_write\n"))
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	r := &kinst.Resolver{Set: set, Symbols: tab, NoKernel: errors.New("no debug info for kernel"),
		Warn: func(err error) { warnings = append(warnings, err.Error()) }}
	for _, ret := range []bool{false, true} {
		s, err := r.Sites("req_valid", ret)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Sites) == 0 || s.Sites[0].Module != "demo" {
			t.Errorf("kinst::req_valid (return %v): sites %+v", ret, s.Sites)
		}
	}
	// The one warning about the kernel, and the doubt about
	// req_retry's copy said once for the entry and the return both.
	want := []string{"kinst::req_valid: only the copies in modules are listed, the kernel's debug info is missing: no debug info for kernel",
		"inline copy of req_valid in req_retry: at req_retry+0x52, the call's entry marker is in the loop's latch, before its test: the compiler may have put the next iteration's call there, counted even when the loop ends; its entry and return counts may be wrong"}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if _, err := r.Sites("vfs_read", false); err == nil || err.Error() != "vfs_read is in no module's debug info, and the kernel's is missing: no debug info for kernel" {
		t.Errorf("kinst::vfs_read:entry: %v", err)
	}
	if err := r.CheckOffset("vfs_read", 5); err == nil || !strings.Contains(err.Error(), "cannot check that offset 5 of vfs_read is an instruction: reading its code: ") {
		t.Errorf("kinst::vfs_read:5 is not checked against the symbol table: %v", err)
	}
	// main is the module's, which the symbol table does not list.
	if err := r.CheckOffset("main", 0); err != nil {
		t.Errorf("kinst::main:0: %v", err)
	}
}
