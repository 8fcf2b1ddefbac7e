package kinst_test

import (
	"github.com/kdtrace/kdtrace/internal/amd64"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/kinst"
)

func demoResolver(t *testing.T, compat bool) *kinst.Resolver {
	t.Helper()
	set, err := debuginfo.Open(filepath.Join("..", "..", "examples", "kinst", "demo"), nil, debuginfo.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return &kinst.Resolver{Set: set, Compat: compat}
}

// TestEntrySitesAgreeWithPerf checks kinst::req_valid:entry against the
// sites perf probe finds for the same inline function in the bundled
// demo binary, an oracle that shares no code with kdtrace: perf probe
// places one probe per inline copy, at DW_AT_entry_pc, and every one
// of those is an entry site. kdtrace finds more where GCC duplicated a
// call's code (its entry markers), and each of those more must be one.
func TestEntrySitesAgreeWithPerf(t *testing.T) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf is not installed")
	}
	bin, _ := filepath.Abs(filepath.Join("..", "..", "examples", "kinst", "demo"))
	out, err := exec.Command(perf, "probe", "-x", bin, "-D", "req_valid").CombinedOutput()
	if err != nil {
		t.Skipf("perf probe -D failed: %v\n%s", err, out)
	}
	var want []uint64
	for _, m := range regexp.MustCompile(`:0x([0-9a-f]+)`).FindAllStringSubmatch(string(out), -1) {
		v, _ := strconv.ParseUint(m[1], 16, 64)
		want = append(want, v)
	}

	r := demoResolver(t, false)
	sites, err := r.Sites("req_valid", false)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint64]string{}
	for _, s := range sites.Sites {
		sym, ok := symbol(t, r, s.Func)
		if !ok {
			t.Fatalf("no symbol %s", s.Func)
		}
		got[sym+s.Offset] = s.Rule
	}
	for _, a := range want {
		if _, ok := got[a]; !ok {
			t.Errorf("perf probe's entry %#x is not an entry site of kdtrace's %v", a, sites.Sites)
		}
		delete(got, a)
	}
	for a, rule := range got {
		if rule != amd64.ByMarker {
			t.Errorf("entry site %#x, which perf probe does not list, placed by %q, want the compiler's entry marker", a, rule)
		}
	}
}

func symbol(t *testing.T, r *kinst.Resolver, name string) (uint64, bool) {
	addr, _, err := r.Set.Code("kernel", name)
	return addr, err == nil
}

// TestReturnSitesAreInstructions checks that every return site is an
// instruction of its function and that kinstcompat gives one site per
// range of each copy, as the reference does.
func TestReturnSitesAreInstructions(t *testing.T) {
	for _, compat := range []bool{false, true} {
		r := demoResolver(t, compat)
		sites, err := r.Sites("req_valid", true)
		if err != nil {
			t.Fatal(err)
		}
		if len(sites.Sites) == 0 {
			t.Fatalf("compat=%v: no return sites", compat)
		}
		for _, s := range sites.Sites {
			if err := r.CheckOffset(s.Func, s.Offset); err != nil {
				t.Errorf("compat=%v: site %s+%d: %v", compat, s.Func, s.Offset, err)
			}
		}
		if compat {
			f, _ := r.Set.Lookup("req_valid")
			n := 0
			for _, c := range f.Copies {
				n += len(c.Ranges)
			}
			if len(sites.Sites) != n {
				t.Errorf("compat: %d sites for %d ranges", len(sites.Sites), n)
			}
		}
	}
}
