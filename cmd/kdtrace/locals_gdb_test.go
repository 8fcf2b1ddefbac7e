package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/gdbcmp"
)

// TestLocalsGDB compares kdtrace's locals-> with gdb at every
// instruction the line table names in the fixtures' functions (and at
// each function's first), built with gcc and clang at -O0 and -O2: each
// value gdb reads there kdtrace must read, and the same, first
// execution with first execution. The figures of each build are
// logged.
func TestLocalsGDB(t *testing.T) {
	needTracing(t)
	if testing.Short() {
		t.Skip("runs gdb and kdtrace at a few hundred addresses (a minute); skipped under -short")
	}
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		t.Skip("no gdb")
	}
	setarch, err := exec.LookPath("setarch")
	if err != nil {
		t.Skip("no setarch, to run kdtrace with the address space not randomised as gdb runs the program")
	}
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fixtures := []struct {
		name, src string
		funcs     []string
	}{
		{"locals", localsFixture, []string{"work", "main"}},
		{"entry", entryFixture, []string{"work", "make", "main"}},
	}
	// One environment for both runs, kdtrace's own variables in it, so
	// that the stack is laid out alike.
	env := []string{"PATH=/usr/bin:/bin", "KDTRACE_TEST_MAIN=1", "LD_NOLAZYLOAD=1"}
	kdtrace := func(args ...string) (string, string, int) {
		cmd := exec.Command(setarch, append([]string{"x86_64", "-R", self}, args...)...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		status := 0
		if err != nil {
			status = -1
			if e, ok := err.(*exec.ExitError); ok {
				status = e.ExitCode()
			}
		}
		return stdout.String(), stderr.String(), status
	}
	var table []string
	var total gdbcmp.Figures
	for _, cc := range []string{"gcc", "clang"} {
		if _, err := exec.LookPath(cc); err != nil {
			t.Logf("no %s", cc)
			continue
		}
		for _, opt := range []string{"-O0", "-O2"} {
			for _, fx := range fixtures {
				name := fmt.Sprintf("%s-%s%s", fx.name, cc, opt)
				t.Run(name, func(t *testing.T) {
					src := filepath.Join(dir, fx.name+".c")
					if err := os.WriteFile(src, []byte(fx.src), 0o644); err != nil {
						t.Fatal(err)
					}
					bin := filepath.Join(dir, name)
					if out, err := exec.Command(cc, opt, "-g", "-fcf-protection=none", "-o", bin, src).CombinedOutput(); err != nil {
						t.Skipf("%s: %v\n%s", cc, err, out)
					}
					stops, err := gdbcmp.Lines(gdb, bin, fx.funcs)
					if err != nil {
						t.Fatal(err)
					}
					frames, err := gdbcmp.GDB(gdb, []string{bin}, env, stops)
					if err != nil {
						t.Fatal(err)
					}
					res, err := gdbcmp.Compare(kdtrace, []string{bin}, frames)
					if err != nil {
						t.Fatal(err)
					}
					for _, d := range res.Differ {
						t.Errorf("differs: %s", d)
					}
					for _, m := range res.Missing {
						t.Errorf("kdtrace does not read %s", m)
					}
					if res.Read == 0 {
						t.Errorf("gdb read nothing at %d stops", len(stops))
					}
					total.Add(res.Figures)
					var optOut, unstable int
					for _, f := range frames {
						optOut += len(f.OptimizedOut)
						unstable += len(f.Unstable)
					}
					table = append(table, fmt.Sprintf("| %s %s %s | %d | %d | %d | %d | %d | %d | %d | %d |", fx.name, cc, opt, len(stops),
						res.Read, res.Equal, res.Figures.Differ, res.Figures.Missing, res.Prologue, optOut, unstable))
				})
			}
		}
	}
	table = append(table, fmt.Sprintf("| all | | %d | %d | %d | %d | %d | | |", total.Read, total.Equal, total.Differ, total.Missing, total.Prologue))
	t.Logf("build | stops | gdb reads | kdtrace equal | differ | missing | of them parameters in the prologue | gdb <optimized out> | indeterminate (two gdb runs differ)\n%s", strings.Join(table, "\n"))
}
