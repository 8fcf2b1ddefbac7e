package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/scripts")

// TestScripts runs kdtrace -x errtags -e -d -s on every script in
// testdata/scripts and compares what it prints, and its exit status, with
// the script's .golden file. A script's first line may be a comment
// "/* args: ... */" giving more command-line words, and "$FILE" in them
// stands for the script itself.
func TestScripts(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("..", "..", "testdata", "scripts", "*.d"))
	if err != nil {
		t.Fatal(err)
	}
	if len(scripts) == 0 {
		t.Fatal("no scripts in testdata/scripts")
	}
	// The kinst index cache goes to a directory of the test's own.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".d")
		t.Run(name, func(t *testing.T) {
			got := runScript(t, script)
			golden := strings.TrimSuffix(script, ".d") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/kdtrace -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", script, diff)
			}
		})
	}
}

// runScript runs kdtrace on one script and renders the result: stdout,
// then stderr and the exit status when they are not empty and 0.
func runScript(t *testing.T, script string) string {
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	// The scripts see no kernel types unless their args name some, so
	// that the output does not depend on the machine's kernel.
	argv := []string{"kdtrace", "-x", "errtags", "-e", "-d", "--btf", "none"}
	first, _, _ := strings.Cut(string(src), "\n")
	names := false // the args name the programs themselves
	if rest, ok := strings.CutPrefix(first, "/* args:"); ok {
		rest = strings.TrimSuffix(strings.TrimSpace(rest), "*/")
		for _, w := range strings.Fields(rest) {
			names = names || w == "-n" || w == "-s"
			argv = append(argv, strings.ReplaceAll(w, "$FILE", filepath.ToSlash(script)))
		}
	}
	if !strings.HasPrefix(first, "/* args:") {
		// Nor on the machine's probes: a script that names no image
		// may name probes this machine lacks.
		argv = append(argv, "-Z")
	}
	if !names {
		argv = append(argv, "-s", filepath.ToSlash(script))
	}
	var stdout, stderr bytes.Buffer
	status := run(argv, &stdout, &stderr)
	var b strings.Builder
	b.WriteString(stdout.String())
	if stderr.Len() > 0 || status != 0 {
		fmt.Fprintf(&b, "--- stderr ---\n%s--- exit %d ---\n", stderr.String(), status)
	}
	return b.String()
}
