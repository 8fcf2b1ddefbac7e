package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"testing"
)

// TestCompileDelaysCollection checks that compiling a program that reads
// the kernel's process structures, a few megabytes of garbage, runs no
// collection: Go's first, at a 4 MB heap, cost a small program's compile
// a third of its time.
func TestCompileDelaysCollection(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-e", "-n",
		`BEGIN { printf("%d %d %s %d\n", curlwpsinfo->pr_pri, curpsinfo->pr_pid, curpsinfo->pr_psargs, curlwpsinfo->pr_lwpid); exit(0); }`)
	cmd.Env = append(os.Environ(), "KDTRACE_TEST_MAIN=1", "GODEBUG=gctrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kdtrace -e: %v\n%s", err, stderr.Bytes())
	}
	if gcs := regexp.MustCompile(`(?m)^gc \d+ @`).FindAll(stderr.Bytes(), -1); len(gcs) != 0 {
		t.Errorf("compiling ran %d collections, want none:\n%s", len(gcs), stderr.Bytes())
	}
}
