package kinst_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/debuginfo"
	"github.com/kdtrace/kdtrace/kinst"
)

func demoResolver(t *testing.T, compat bool) *kinst.Resolver {
	t.Helper()
	set, err := debuginfo.Open(filepath.Join("..", "examples", "kinst", "demo"), nil, debuginfo.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return &kinst.Resolver{Set: set, Compat: compat}
}

// TestEntrySitesAgreeWithPerf checks kinst::req_valid:entry against the
// sites perf probe finds for the same inline function in the bundled
// demo binary, an oracle that shares no code with kdtrace.
func TestEntrySitesAgreeWithPerf(t *testing.T) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skip("perf is not installed")
	}
	bin, _ := filepath.Abs(filepath.Join("..", "examples", "kinst", "demo"))
	out, err := exec.Command(perf, "probe", "-x", bin, "-D", "req_valid").CombinedOutput()
	if err != nil {
		t.Skipf("perf probe -D failed: %v\n%s", err, out)
	}
	var want []uint64
	for _, m := range regexp.MustCompile(`:0x([0-9a-f]+)`).FindAllStringSubmatch(string(out), -1) {
		v, _ := strconv.ParseUint(m[1], 16, 64)
		want = append(want, v)
	}
	sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })

	r := demoResolver(t, false)
	sites, err := r.Sites("req_valid", false)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, s := range sites.Sites {
		sym, ok := symbol(t, r, s.Func)
		if !ok {
			t.Fatalf("no symbol %s", s.Func)
		}
		got = append(got, sym+s.Offset)
	}
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entry addresses differ from perf probe's (-perf +kdtrace):\n%s", diff)
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
