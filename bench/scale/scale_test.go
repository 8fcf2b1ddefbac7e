package scale

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/benchsrc"
)

// clauses is the script's size: by default that of the 10 MB script of
// issue 10 (120,419 clauses).
var clauses = flag.Int("clauses", 120419, "clauses in the generated script")

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// command builds kdtrace once per run of the benchmarks and writes the
// script beside it.
func command(b *testing.B) (bin, script string) {
	b.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "kdtrace-scale")
		if buildErr != nil {
			return
		}
		bin := filepath.Join(buildDir, "kdtrace")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/kdtrace/kdtrace/cmd/kdtrace").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err, out}
			return
		}
		buildErr = os.WriteFile(filepath.Join(buildDir, "scale.d"), []byte(benchsrc.Clauses(*clauses)), 0o644)
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "kdtrace"), filepath.Join(buildDir, "scale.d")
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// BenchmarkCompile is kdtrace -e: compiling to DOF in memory.
func BenchmarkCompile(b *testing.B) {
	bin, script := command(b)
	measure(b, bin, "--btf", "none", "-Z", "-e", "-s", script)
}

// BenchmarkDOF is kdtrace -G: compiling and writing the DOF file.
func BenchmarkDOF(b *testing.B) {
	bin, script := command(b)
	out := filepath.Join(filepath.Dir(script), "scale.dof")
	measure(b, bin, "--btf", "none", "-Z", "-G", "-o", out, "-s", script)
	if fi, err := os.Stat(out); err == nil {
		b.ReportMetric(float64(fi.Size())/1e6, "dof-MB")
	}
}

// measure runs the command b.N times and reports its wall and CPU time
// and the largest resident set of any run.
func measure(b *testing.B, bin string, args ...string) {
	if runtime.GOOS != "linux" && runtime.GOOS != "freebsd" {
		b.Skip("needs rusage's ru_maxrss in KiB")
	}
	var cpu time.Duration
	var maxrss int64
	b.ResetTimer()
	for range b.N {
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %q: %v\n%s", bin, args, err, stderr.Bytes())
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		maxrss = max(maxrss, int64(ru.Maxrss)) // KiB on Linux and FreeBSD
	}
	b.StopTimer()
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(maxrss)/1024, "maxrss-MB")
}
