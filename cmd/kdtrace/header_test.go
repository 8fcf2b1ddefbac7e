package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
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
	if st := run([]string{"kdtrace", "-x", "headerstyle=stubs", "-h", "-s", script, "-o", out}, &stdout, &stderr); st != 0 {
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

// notesProgram uses the header kdtrace -h writes for notesProvider, in
// two files, so the semaphores must link.
const (
	notesProvider = "provider myapp { probe query__start(const char *, int); probe tick(); };\n"
	notesMain     = `#include <unistd.h>
#include "myapp.h"
void other(int);
int main(void) {
	for (;;) {
		if (MYAPP_QUERY_START_ENABLED())
			MYAPP_QUERY_START("select", 3);
		other(1);
		pause();
	}
}
`
	notesOther = `#include "myapp.h"
void other(int n) { MYAPP_TICK(); MYAPP_QUERY_START("other", n); }
`
)

// TestHeaderNotes checks the Linux form of -h end to end: a program
// built with the header has probes that kdtrace finds in its notes,
// with the argument types the provider declares.
func TestHeaderNotes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("USDT notes are read on Linux")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	for name, src := range map[string]string{"myapp.d": notesProvider, "main.c": notesMain, "other.c": notesOther} {
		os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644)
	}
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-h", "-s", filepath.Join(dir, "myapp.d"), "-o", filepath.Join(dir, "myapp.h")}, &stdout, &stderr); st != 0 {
		t.Fatalf("kdtrace -h: exit %d: %s", st, stderr.String())
	}
	exe := filepath.Join(dir, "myapp")
	if out, err := exec.Command(gcc, "-O1", "-o", exe, filepath.Join(dir, "main.c"), filepath.Join(dir, "other.c")).CombinedOutput(); err != nil {
		if strings.Contains(string(out), "sys/sdt.h") {
			t.Skipf("no <sys/sdt.h> (Debian's systemtap-sdt-dev): %s", out)
		}
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	cmd := exec.Command(exe)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := mappedPID(t, cmd)

	// Two probes of one name in two functions; string, int32 and no
	// arguments as declared.
	stderr.Reset()
	if st := run([]string{"kdtrace", "-e", "-n", "myapp" + pid + ":::query-start { trace(copyinstr(args[0])); trace(args[1]); }",
		"-n", "myapp" + pid + "::other:tick { trace(1); }"}, &stdout, &stderr); st != 0 {
		t.Fatalf("kdtrace -e: exit %d: %s", st, stderr.String())
	}
	stderr.Reset()
	if st := run([]string{"kdtrace", "-e", "-n", "myapp" + pid + ":::tick { trace(args[0]); }"}, &stdout, &stderr); st != 1 ||
		!strings.Contains(stderr.String(), "index 0 is out of range") {
		t.Errorf("args[0] of a probe without arguments: exit %d, %q", st, stderr.String())
	}
	stderr.Reset()
	if st := run([]string{"kdtrace", "-e", "-n", "myapp" + pid + ":::query-start { x = args[1]; }", "-S"}, &stdout, &stderr); st != 0 ||
		!strings.Contains(stderr.String(), `"x"`) || !strings.Contains(stderr.String(), "(size 4)") {
		t.Errorf("args[1] is not an int: exit %d:\n%s", st, stderr.String())
	}
	// -p grabs the process, which brings its USDT providers into
	// listings by any name.
	stdout.Reset()
	stderr.Reset()
	if st := run([]string{"kdtrace", "--btf", "none", "-l", "-p", pid, "-n", "myapp*:::"}, &stdout, &stderr); st != 0 || stderr.Len() != 0 {
		t.Errorf("-l -p %s -n myapp*:::: exit %d: %s", pid, st, stderr.String())
	}
	for _, want := range []string{
		fmt.Sprintf("%10s %17s %33s %s\n", "myapp"+pid, "myapp", "main", "query-start"),
		fmt.Sprintf("%10s %17s %33s %s\n", "myapp"+pid, "myapp", "other", "query-start"),
		fmt.Sprintf("%10s %17s %33s %s\n", "myapp"+pid, "myapp", "other", "tick"),
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("-l -p lacks %q:\n%s", want, stdout.String())
		}
	}
	out, err := exec.Command("readelf", "-n", exe).Output()
	if err == nil && strings.Count(string(out), "Semaphore: 0x0000000000000000") != 0 {
		t.Errorf("a probe without its semaphore:\n%s", out)
	}
}

// mappedPID takes a started process, to be killed when the test ends,
// and returns its pid once it has its C library mapped: until then the
// dynamic linker is still loading its objects.
func mappedPID(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	pid := strconv.Itoa(cmd.Process.Pid)
	for range 400 {
		if maps, _ := os.ReadFile("/proc/" + pid + "/maps"); strings.Contains(string(maps), "libc") {
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %s never mapped libc", pid)
	return ""
}
