package kinst_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/kinst"
)

// nameless.c has an inline copy in .init.text, as a kernel's init code
// does, in a caller whose symbol the test strips: the copy then lies
// where no function symbol is, like native_pmd_val's copy in Debian 6.1's
// vmlinux past the end of pcpu_embed_first_chunk.
const nameless = `
static inline __attribute__((always_inline)) int twice(int x) { return 2 * x + (x > 3); }
__attribute__((section(".init.text"), noinline)) int setup(int x) { return twice(x) + 1; }
int main(int argc, char **argv) { return setup(argc); }
`

func TestNamelessCopyLeftOut(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found")
	}
	if _, err := exec.LookPath("objcopy"); err != nil {
		t.Skip("objcopy not found")
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "nameless.c"), filepath.Join(dir, "nameless")
	if err := os.WriteFile(src, []byte(nameless), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-g", "-O2", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if out, err := exec.Command("objcopy", "--strip-symbol=setup", bin).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	set, err := debuginfo.Open(bin, nil, debuginfo.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	var warnings []string
	r := &kinst.Resolver{Set: set, Warn: func(err error) { warnings = append(warnings, err.Error()) }}
	for _, ret := range []bool{false, true} {
		warnings = nil
		sites, err := r.Sites("twice", ret)
		if err != nil {
			t.Fatal(err)
		}
		if len(sites.Sites) != 0 {
			t.Errorf("return=%v: sites %v, want none", ret, sites.Sites)
		}
		const want = "no function symbol holds it, in .init.text, which the kernel frees after boot"
		if len(warnings) != 1 || !strings.Contains(warnings[0], "inline copy of twice at 0x") || !strings.Contains(warnings[0], want) {
			t.Errorf("return=%v: warnings %q, want one saying %q", ret, warnings, want)
		}
	}
}
