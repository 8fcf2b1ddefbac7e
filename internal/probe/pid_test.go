//go:build linux

package probe

import (
	"debug/elf"
	"errors"
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

// startProgram builds testProgram and runs it idle, returning its
// process ID and executable's base name.
func startProgram(t *testing.T) (pid string, exe string) {
	path := gcctest.Build(t, t.TempDir(), "traced", testProgram)
	return start(t, path, "idle"), filepath.Base(path)
}

// start runs path with args until the test ends, and returns its
// process ID once the dynamic linker has mapped libc.
func start(t *testing.T, path string, args ...string) string {
	cmd := exec.Command(path, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// Wait until the dynamic linker has mapped libc.
	for range 200 {
		if maps, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/maps"); strings.Contains(string(maps), "libc") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return strconv.Itoa(cmd.Process.Pid)
}

func TestPID(t *testing.T) {
	pid, exe := startProgram(t)
	c, err := Live(Config{})
	if err != nil {
		t.Fatal(err)
	}
	prov := "pid" + pid
	tests := []struct {
		desc Desc
		want []string
	}{
		{Desc{prov, "a.out", "work", "entry"}, []string{prov + ":" + exe + ":work:entry"}},
		{Desc{prov, exe, "work", "return"}, []string{prov + ":" + exe + ":work:return"}},
		{Desc{prov, "", "work", "0"}, []string{prov + ":" + exe + ":work:0"}},
		{Desc{prov, "", "work", "0x0"}, nil}, // made as "0", which 0x0 does not match
		{Desc{prov, "libc", "malloc", "entry"}, []string{prov + ":libc.so.6:malloc:entry"}},
		{Desc{prov, "libbmc_sucks.so.1", "", "entry"}, nil},
		{Desc{prov, "a.out", "-", "401000"}, []string{prov + ":" + exe + ":-:401000"}},
		{Desc{"pidgin", "", "", "entry"}, nil},
		{Desc{"usdt" + pid, "", "", ""}, nil}, // a USDT provider the process does not have
	}
	for _, tt := range tests {
		got, err := c.Match(tt.desc)
		if err != nil {
			t.Errorf("Match(%v): %v", tt.desc, err)
			continue
		}
		if diff := cmp.Diff(tt.want, names(got)); diff != "" {
			t.Errorf("Match(%v) (-want +got):\n%s", tt.desc, diff)
		}
	}

	// work: lists return, entry and every instruction offset, in the
	// order dtrace makes them.
	c, _ = Live(Config{})
	ps, err := c.Match(Desc{prov, "a.out", "work", ""})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 4 || ps[0].Name != "return" || ps[1].Name != "entry" || ps[2].Name != "0" {
		t.Errorf("%s:a.out:work: = %v", prov, names(ps))
	}
	site := ps[1].Detail.(*UserSite)
	f, err := elf.Open(site.Path)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	for _, s := range syms {
		if s.Name == "work" && (s.Value != site.Addr || s.Size != site.Size) {
			t.Errorf("entry site %+v, want work's symbol %#x+%d", site, s.Value, s.Size)
		}
	}
	if info, err := c.Info(Desc{prov, "", "work", "entry"}); err != nil || info.Matches != 1 || info.Args != nil {
		t.Errorf("Info(%s::work:entry) = %+v, %v", prov, info, err)
	}
	// The probes made stay: a later glob over providers finds them.
	if n, err := c.Count(Desc{"pid*", "", "work", "entry"}); n != 1 || err != nil {
		t.Errorf("Count(pid*::work:entry) = %d, %v; want 1", n, err)
	}
}

// TestPIDErrors checks the errors of the suite's pid tests
// (tst/common/pid/err.*.d), with the tags dtrace gives them.
func TestPIDErrors(t *testing.T) {
	pid, _ := startProgram(t)
	prov := "pid" + pid
	tests := []struct {
		desc Desc
		tag  string
		msg  string
	}{
		{Desc{"pid0", "", "", "entry"}, "D_PROC_BADPID", "'pid0' does not contain a valid pid"},
		{Desc{"12", "", "", "entry"}, "D_PROC_BADPROV", "'12' is not a valid provider"},
		{Desc{"pid2147483647", "", "", "entry"}, "D_PROC_GRAB", "failed to grab process 2147483647"},
		{Desc{prov, "a.out", "ahl_r00lz", "entry"}, "D_PROC_FUNC", "failed to lookup 'ahl_r00lz' in module 'traced'"},
		{Desc{prov, "libc", "-", "800"}, "D_PROC_LIB", "only the a.out module is valid with the '-' function"},
		{Desc{prov, "", "-", ""}, "D_PROC_NAME", "only individual addresses may be specified with the '-' function"},
		{Desc{prov, "", "-", "10*"}, "D_PROC_NAME", "only individual addresses may be specified with the '-' function"},
		{Desc{prov, "a.out", "", "beginning"}, "D_PROC_NAME", "'beginning' is an invalid probe name"},
		{Desc{prov, "", "_exit", "100"}, "D_PROC_OFF", "offset 0x100 outside of function '_exit'"},
		{Desc{prov, "", "work", "1"}, "D_PROC_ALIGN", "offset 0x1 is not aligned on an instruction"},
		// fasttrap's limit: lower than the default, which a process
		// with a stripped libc does not reach on Linux.
		{Desc{prov, "", "", ""}, "D_PROC_CREATEFAIL", ""},
	}
	for _, tt := range tests {
		c, err := Live(Config{MaxPIDProbes: 1000})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Match(tt.desc)
		pe, ok := errors.AsType[*procError](err)
		if !ok || pe.Tag != tt.tag || tt.msg != "" && pe.Msg != tt.msg {
			t.Errorf("Match(%v) error = %v, want %s %q", tt.desc, err, tt.tag, tt.msg)
		}
	}
}

// TestPIDRefusedEntry checks that a glob over functions leaves out the
// entry and return probes of a function whose first instruction uprobes
// refuse, saying so once, and that naming the function alone is an
// error; its other instructions are still probes.
func TestPIDRefusedEntry(t *testing.T) {
	prov := "pid" + start(t, gcctest.Build(t, t.TempDir(), "locked", gcctest.LockedEntry), "pause")
	var warnings []string
	c, err := Live(Config{Warn: func(err error) { warnings = append(warnings, err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Match(Desc{prov, "a.out", "lock*", "entry"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{prov + ":locked:lockless:entry"}, names(ps)); diff != "" {
		t.Errorf("%s:a.out:lock*:entry (-want +got):\n%s", prov, diff)
	}
	// Asked again, the description is made once and warned of once.
	if _, err := c.Match(Desc{prov, "a.out", "lock*", "entry"}); err != nil {
		t.Fatal(err)
	}
	want := []string{prov + ":locked:lock*:entry: function locked left out: uprobes refuse its first instruction (a lock or segment prefix, or a system call)"}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	_, err = c.Match(Desc{prov, "a.out", "locked", "entry"})
	var perr *procError
	if !errors.As(err, &perr) || perr.Tag != "D_PROC_CREATEFAIL" || !strings.Contains(err.Error(), "uprobes refuse its first instruction") {
		t.Errorf("%s:a.out:locked:entry: %v, want D_PROC_CREATEFAIL naming the refused instruction", prov, err)
	}
	// The ret after the lock incl is a probe; offset 0 is left out.
	ps, err = c.Match(Desc{prov, "a.out", "locked", "*"})
	if err != nil || len(ps) != 1 || ps[0].Name == "0" {
		t.Errorf("%s:a.out:locked:* = %v, want its one probe-able offset", prov, names(ps))
	}
}
