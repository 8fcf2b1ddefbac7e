package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/benchsrc"
)

// The Scale benchmarks run the command in-process on the script of
// bench/scale (120,419 small clauses, about 10 MB), so that the whole
// pipeline can be profiled with -cpuprofile and -memprofile; bench/scale
// measures the built command's time and peak memory.
func BenchmarkScaleE(b *testing.B) { benchmarkScale(b, "-e") }

func BenchmarkScaleG(b *testing.B) {
	benchmarkScale(b, "-G", "-o", filepath.Join(b.TempDir(), "scale.dof"))
}

func benchmarkScale(b *testing.B, args ...string) {
	script := filepath.Join(b.TempDir(), "scale.d")
	if err := os.WriteFile(script, []byte(benchsrc.Clauses(120419)), 0o644); err != nil {
		b.Fatal(err)
	}
	argv := append([]string{"kdtrace", "--btf", "none", "-Z"}, args...)
	argv = append(argv, "-s", script)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var stderr strings.Builder
		if st := run(argv, io.Discard, &stderr); st != 0 {
			b.Fatalf("%q: status %d: %s", argv, st, stderr.String())
		}
	}
}

// TestScaleScript checks that the benchmarks' script compiles, every
// shape of clause in it, and that -S lists a DIFO for each.
func TestScaleScript(t *testing.T) {
	script := filepath.Join(t.TempDir(), "scale.d")
	if err := os.WriteFile(script, []byte(benchsrc.Clauses(100)), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	if st := run([]string{"kdtrace", "--btf", "none", "-Z", "-S", "-e", "-s", script}, io.Discard, &stderr); st != 0 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	if n := strings.Count(stderr.String(), "\nDIFO "); n < 100 {
		t.Errorf("-S lists %d DIFOs for 100 clauses", n)
	}
}
