package layers

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/kdtracebin"
)

// The most a package of kdtrace may allocate initialising itself, and
// all of them together: every run, kdtrace -V included, pays for it.
// Tables are static data (arrays of constants, switches, function
// literals), not maps or strings built at start-up; a big table needed
// only on some paths is made on first use (sync.OnceValue). The
// heaviest now is internal/dlang/printf's conversion map, 9
// allocations and 3.5 KB.
const (
	maxInitAllocs      = 16
	maxInitBytes       = 6 << 10
	maxTotalInitAllocs = 64
	maxTotalInitBytes  = 12 << 10
)

// TestKdtraceInit runs kdtrace -V with GODEBUG=inittrace=1 and checks
// what each of kdtrace's packages (and its main) allocates in its
// initialisation, and all of them together.
func TestKdtraceInit(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "kdtrace")
	kdtracebin.Build(t, bin, "CGO_ENABLED=0")
	cmd := exec.Command(bin, "-V")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kdtrace -V: %v\n%s", err, stderr.Bytes())
	}
	var n, allocs, nbytes int
	for line := range strings.Lines(stderr.String()) {
		// init github.com/kdtrace/kdtrace/internal/probe @1.6 ms, 0.12 ms clock, 28848 bytes, 183 allocs
		pkg, rest, ok := strings.Cut(strings.TrimPrefix(line, "init "), " @")
		if !ok || !strings.HasPrefix(line, "init ") {
			continue
		}
		var ms, clock float64
		var b, a int
		if _, err := fmt.Sscanf(rest, "%g ms, %g ms clock, %d bytes, %d allocs", &ms, &clock, &b, &a); err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		n++
		if pkg != "main" && !strings.HasPrefix(pkg, module) {
			continue
		}
		allocs += a
		nbytes += b
		if a > maxInitAllocs || b > maxInitBytes {
			t.Errorf("%s's initialisation allocates %d times, %d bytes; at most %d times and %d bytes may be", pkg, a, b, maxInitAllocs, maxInitBytes)
		}
	}
	if n < 10 {
		t.Fatalf("kdtrace -V traced %d packages' initialisation; GODEBUG=inittrace=1 printed:\n%s", n, stderr.Bytes())
	}
	t.Logf("kdtrace's packages' initialisation allocates %d times, %d bytes", allocs, nbytes)
	if allocs > maxTotalInitAllocs || nbytes > maxTotalInitBytes {
		t.Errorf("kdtrace's packages' initialisation allocates %d times, %d bytes; at most %d times and %d bytes may be", allocs, nbytes, maxTotalInitAllocs, maxTotalInitBytes)
	}
}
