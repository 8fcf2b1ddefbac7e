package harness

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/dtracetest"
	"github.com/kdtrace/kdtrace/internal/kdtracebin"
)

var update = flag.Bool("update", false, "rewrite the README's list of the suite's tests that cannot pass")

// minPass is how many of the suite's tests with an expected output
// pass; a regression lowers it.
const minPass = 216

// TestSuite runs every test of the suite that has an expected output
// through the harness's rules with kdtrace as dtrace, and reports the
// pass count and each failure with its reason.
func TestSuite(t *testing.T) {
	root := dtracetest.Dir(t)
	if testing.Short() {
		t.Skip("the suite takes minutes")
	}
	if dtracetest.Race {
		t.Skip("the suite's programs run without the race detector")
	}
	if os.Geteuid() != 0 {
		t.Skip("tracing needs root")
	}
	for _, tool := range []string{"ksh", "cc", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the suite needs %s: %v", tool, err)
		}
	}
	tests := suiteTests(t, root)
	bin := filepath.Join(t.TempDir(), "bin")
	dtrace := filepath.Join(bin, "dtrace")
	kdtracebin.Build(t, dtrace)
	r := &Runner{
		DTrace:  dtrace,
		Env:     []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")},
		Timeout: time.Minute,
		Work:    t.TempDir(),
	}
	results := make([]Result, len(tests))
	var wg sync.WaitGroup
	next := make(chan int)
	// Two at a time: the suite's tests mostly wait for timers.
	for range 2 {
		wg.Go(func() {
			for i := range next {
				results[i] = r.Run(root, tests[i])
			}
		})
	}
	for i := range tests {
		next <- i
	}
	close(next)
	wg.Wait()

	pass := 0
	var unexpected, known, fixed []string
	for _, res := range results {
		reason, listed := cannotPass[res.Test]
		switch {
		case res.Pass && listed:
			fixed = append(fixed, res.Test)
		case res.Pass:
		case listed:
			known = append(known, fmt.Sprintf("%s: %s", res.Test, reason))
		default:
			unexpected = append(unexpected, fmt.Sprintf("%s (%.1fs): %s", res.Test, res.Time.Seconds(), res.Reason))
		}
		if res.Pass {
			pass++
		}
	}
	t.Logf("%d of %d pass", pass, len(results))
	t.Logf("%d fail that cannot pass on Linux:\n%s", len(known), strings.Join(known, "\n"))
	t.Logf("%d fail otherwise:\n%s", len(unexpected), strings.Join(unexpected, "\n"))
	for _, f := range fixed {
		t.Errorf("%s passes: take it off the list of tests that cannot pass", f)
	}
	if pass < minPass {
		t.Errorf("%d of the suite's %d tests pass, want at least %d", pass, len(results), minPass)
	}
}

// suiteTests returns the suite's tests that have an expected output:
// the files the .out files name, whether or not the suite has them.
func suiteTests(t *testing.T, root string) []string {
	var tests []string
	for _, f := range dtracetest.Files(t, "tst.*.out") {
		tests = append(tests, strings.TrimSuffix(f, ".out"))
	}
	return tests
}

// TestCannotPassListed checks that the README lists the tests that
// cannot pass, with their reasons, as cannotPass does.
func TestCannotPassListed(t *testing.T) {
	const readme = "../../README.md"
	const begin, end = "<!-- cannot pass: begin -->\n", "<!-- cannot pass: end -->\n"
	src, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(src, []byte(begin)), bytes.Index(src, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", readme, begin, end)
	}
	var b strings.Builder
	b.WriteString("| test | why it cannot pass on Linux |\n|---|---|\n")
	names := make([]string, 0, len(cannotPass))
	for name := range cannotPass {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, "| `%s` | %s |\n", name, cannotPass[name])
	}
	got, want := string(src[i+len(begin):j]), b.String()
	if got == want {
		return
	}
	if *update {
		out := append(append(append([]byte{}, src[:i+len(begin)]...), want...), src[j:]...)
		if err := os.WriteFile(readme, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the README's list of tests that cannot pass is not cannotPass's; run go test ./internal/harness -update")
}
