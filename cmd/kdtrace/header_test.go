package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeaderMode checks -h: the header goes to -o, or next to the
// current directory under the script's name with .h for .d, and a
// provider error fails the compile.
func TestHeaderMode(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "myapp.d")
	os.WriteFile(script, []byte("provider myapp { probe query__start(char *, int); };\n"), 0o644)
	out := filepath.Join(dir, "out.h")
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-h", "-s", script, "-o", out}, &stdout, &stderr); st != 0 {
		t.Fatalf("exit %d: %s", st, stderr.String())
	}
	h, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#ifndef\t_OUT_H", "#define\tMYAPP_QUERY_START(arg0, arg1) \\\n\t__dtrace_myapp___query__start(arg0, arg1)", "extern void __dtrace_myapp___query__start(char *, int);"} {
		if !strings.Contains(string(h), want) {
			t.Errorf("header lacks %q:\n%s", want, h)
		}
	}

	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	if st := run([]string{"kdtrace", "-h", "-s", "myapp.d"}, &stdout, &stderr); st != 0 {
		t.Fatalf("exit %d: %s", st, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "myapp.h")); err != nil {
		t.Errorf("default output name: %v", err)
	}

	bad := filepath.Join(dir, "bad.d")
	os.WriteFile(bad, []byte("provider p1 { probe a(); };\n"), 0o644)
	stderr.Reset()
	if st := run([]string{"kdtrace", "-h", "-s", bad, "-o", out}, &stdout, &stderr); st != 1 || !strings.Contains(stderr.String(), "may not end with a digit") {
		t.Errorf("provider name ending in a digit: exit %d, %q", st, stderr.String())
	}
}
