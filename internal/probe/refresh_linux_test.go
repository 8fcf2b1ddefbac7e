//go:build linux

package probe

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// refreshLib has a function with a USDT probe.
const refreshLib = `#include <sys/sdt.h>
int foo(int x) { DTRACE_PROBE1(rfoo, probe, x); return x + 1; }
`

// refreshMain dlopen()s and dlclose()s the library argv[1] in turn, a
// line of its standard input each time, and says "ok" each time done.
const refreshMain = `#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
	char line[16];
	void *h = NULL;
	setvbuf(stdout, NULL, _IONBF, 0);
	while (fgets(line, sizeof line, stdin) != NULL) {
		if (h == NULL)
			h = dlopen(argv[1], RTLD_NOW);
		else {
			dlclose(h);
			h = NULL;
		}
		printf("ok\n");
	}
	return 0;
}
`

// TestRefresh checks that Refresh follows a process's dlopen() and
// dlclose(): the pid probes a description asked for, and the USDT
// provider's, appear with the library and go with it, keeping their
// IDs when it comes back.
func TestRefresh(t *testing.T) {
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		t.Skip("no <sys/sdt.h> (systemtap-sdt-dev)")
	}
	dir := t.TempDir()
	exe := gcctest.Build(t, dir, "refresh", refreshMain, "-ldl")
	if err := os.WriteFile(filepath.Join(dir, "foo.c"), []byte(refreshLib), 0o644); err != nil {
		t.Fatal(err)
	}
	gcctest.Run(t, dir, "gcc", "-O1", "-shared", "-fPIC", "-o", "librfoo.so", "foo.c")
	cmd := exec.Command(exe, filepath.Join(dir, "librfoo.so"))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	out := bufio.NewReader(outPipe)
	// toggle has the program dlopen() or dlclose() the library.
	toggle := func() {
		t.Helper()
		if _, err := io.WriteString(in, "x\n"); err != nil {
			t.Fatal(err)
		}
		if line, err := out.ReadString('\n'); err != nil || line != "ok\n" {
			t.Fatalf("the program said %q, %v", line, err)
		}
	}
	pid := cmd.Process.Pid
	for range 400 {
		if maps, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps"); strings.Contains(string(maps), "libc") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	c, err := Live(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Grab(pid); err != nil {
		t.Fatal(err)
	}
	id := strconv.Itoa(pid)
	descs := []Desc{{"pid" + id, "librfoo.so", "foo", "entry"}, {"rfoo" + id, "", "", ""}}
	match := func() []string {
		t.Helper()
		var got []string
		for _, d := range descs {
			ps, err := c.Match(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				got = append(got, p.String()+" "+strconv.Itoa(int(c.ID(p))))
			}
		}
		return got
	}
	refresh := func(want bool) {
		t.Helper()
		changed, err := c.Refresh(pid)
		if err != nil || changed != want {
			t.Fatalf("Refresh = %v, %v; want %v, nil", changed, err, want)
		}
	}
	if got := match(); len(got) != 0 {
		t.Fatalf("before dlopen: %q, want none", got)
	}
	refresh(false)

	toggle()
	refresh(true)
	opened := match()
	if len(opened) != 2 || !strings.HasPrefix(opened[0], "pid"+id+":librfoo.so:foo:entry ") || !strings.HasPrefix(opened[1], "rfoo"+id+":librfoo.so:foo:probe ") {
		t.Fatalf("after dlopen: %q, want librfoo.so's foo:entry and foo:probe", opened)
	}

	toggle()
	refresh(true)
	if got := match(); len(got) != 0 {
		t.Errorf("after dlclose: %q, want none", got)
	}

	toggle()
	refresh(true)
	if diff := cmp.Diff(opened, match()); diff != "" {
		t.Errorf("after the second dlopen, the probes and their IDs (-first +second):\n%s", diff)
	}
}

// TestLater checks which probes of a grabbed process a description may
// match once objects are mapped later.
func TestLater(t *testing.T) {
	pid, _ := startProgram(t)
	c, err := Live(Config{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(pid)
	if err := c.Grab(n); err != nil {
		t.Fatal(err)
	}
	type later struct{ Entry, Ret, USDT bool }
	tests := []struct {
		desc Desc
		want later
	}{
		{Desc{"pid" + pid, "libfoo.so", "", "entry"}, later{Entry: true}},
		{Desc{"pid" + pid, "libfoo.so", "f", "return"}, later{Ret: true}},
		{Desc{"pid" + pid, "libfoo.so", "f", "1a"}, later{Entry: true}},
		{Desc{"pid" + pid, "", "", ""}, later{Entry: true, Ret: true}},
		{Desc{"p*d" + pid, "", "go", "entry"}, later{Entry: true, USDT: true}},
		{Desc{"foo" + pid, "", "", "probe"}, later{USDT: true}},
		{Desc{"foo*", "", "", ""}, later{USDT: true}},
		{Desc{"foo", "", "", ""}, later{}},
		{Desc{"pid1", "", "", "entry"}, later{}},
		{Desc{"syscall", "", "read", "entry"}, later{}},
		{Desc{"dtrace", "", "", "BEGIN"}, later{}},
	}
	for _, tt := range tests {
		var got later
		got.Entry, got.Ret, got.USDT = c.Later(tt.desc)
		if got != tt.want {
			t.Errorf("Later(%v) = %+v, want %+v", tt.desc, got, tt.want)
		}
	}
}
