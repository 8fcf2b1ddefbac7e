package dtrace_test

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// status reads fields of /proc/pid/status; nil when the process is gone.
func status(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		m[k] = strings.TrimSpace(v)
	}
	return m
}

// TestCreate checks where Create stops a process for each evaltime,
// that it is traced by this process and stopped there, and that Close
// kills and reaps it.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	bin := gcctest.Build(t, dir, "sleeper", `#include <unistd.h>
int main(void) { sleep(100); return 0; }`)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var main uint64
	for _, s := range syms {
		if s.Name == "main" {
			main = s.Value
		}
	}
	// /proc/pid/syscall: the call a process stopped in (59, execve),
	// or -1, its stack pointer and its program counter.
	atExec := regexp.MustCompile(`^59 `)
	at := func(pc uint64) *regexp.Regexp { return regexp.MustCompile(fmt.Sprintf(`^-1 0x[0-9a-f]+ 0x%x\n`, pc)) }
	tests := []struct {
		evaltime string
		libc     bool // libc is mapped where it stops
		syscall  *regexp.Regexp
	}{
		{"", true, at(f.Entry)},
		{"exec", false, atExec},
		{"preinit", true, at(f.Entry)},
		{"postinit", true, at(f.Entry)},
		{"main", true, at(main)},
	}
	for _, tt := range tests {
		h := open(t, nil, nil)
		if tt.evaltime != "" {
			if err := h.SetOpt("evaltime", tt.evaltime); err != nil {
				t.Fatal(err)
			}
		}
		p, err := h.Create(exec.Command(bin))
		if err != nil {
			t.Fatalf("evaltime %q: %v", tt.evaltime, err)
		}
		st := status(t, p.Pid())
		// The tracer is a thread of this process.
		_, err = os.Stat("/proc/self/task/" + st["TracerPid"])
		if st == nil || st["State"] != "t (tracing stop)" || err != nil {
			t.Errorf("evaltime %q: process %d: state %q, tracer %q; want stopped, traced by a thread of %d", tt.evaltime, p.Pid(), st["State"], st["TracerPid"], os.Getpid())
		}
		maps, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/maps")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(maps), "/libc."); got != tt.libc {
			t.Errorf("evaltime %q: libc mapped: %v, want %v:\n%s", tt.evaltime, got, tt.libc, maps)
		}
		sc, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/syscall")
		if err != nil {
			t.Fatal(err)
		}
		if !tt.syscall.Match(sc) {
			t.Errorf("evaltime %q: stopped at %q, want %v", tt.evaltime, sc, tt.syscall)
		}
		h.Close()
		if st := status(t, p.Pid()); st != nil {
			t.Errorf("evaltime %q: process %d still there after Close: %v", tt.evaltime, p.Pid(), st["State"])
		}
	}
}

// TestCreateErrors checks dtrace's messages for commands that cannot
// be run.
func TestCreateErrors(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		evaltime string
		argv     []string
		err      string
	}{
		{"", []string{"/nonexistent/prog"}, "failed to execute /nonexistent/prog: No such file or directory"},
		{"", []string{"kdtrace-no-such-command"}, "failed to execute kdtrace-no-such-command: No such file or directory"},
		{"", []string{plain}, "failed to execute " + plain + ": Permission denied"},
		{"", []string{""}, "failed to execute : No such file or directory"},
		{"never", []string{"true"}, "failed to set -x evaltime: Invalid value for specified option"},
	}
	for _, tt := range tests {
		h := open(t, nil, nil)
		if tt.evaltime != "" {
			if err := h.SetOpt("evaltime", tt.evaltime); err != nil {
				t.Fatal(err)
			}
		}
		_, err := h.Create(exec.Command(tt.argv[0], tt.argv[1:]...))
		if err == nil || err.Error() != tt.err {
			t.Errorf("Create %q: %v, want %q", tt.argv, err, tt.err)
		}
	}
}
