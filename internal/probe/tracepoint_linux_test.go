//go:build linux

package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// liveTracefs returns the running kernel's tracefs, or skips the test.
func liveTracefs(t *testing.T) string {
	for _, dir := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		if _, err := os.ReadFile(filepath.Join(dir, "available_events")); err == nil {
			return dir
		}
	}
	t.Skip("tracefs is not mounted or cannot be read (mount -t tracefs nodev /sys/kernel/tracing, as root)")
	return ""
}

// TestLiveTracepoints checks the sdt and rawtp providers over the
// running kernel: a probe each for every event available_events lists
// but the syscall provider's (and tracers'), typed from the events'
// formats and BTF.
func TestLiveTracepoints(t *testing.T) {
	dir := liveTracefs(t)
	data, err := os.ReadFile(filepath.Join(dir, "available_events"))
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		sys, _, _ := strings.Cut(line, ":")
		if sys != "syscalls" && sys != "kprobes" && sys != "uprobes" && !strings.HasPrefix(sys, "dt_") {
			want++
		}
	}
	c, err := Live(btfTypes(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, pv := range []string{"sdt", "rawtp"} {
		ps, err := c.Match(Desc{Provider: pv})
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != want {
			t.Errorf("%s: %d probes, want %d", pv, len(ps), want)
		}
		untyped := 0
		for _, p := range ps {
			args, err := p.Args()
			if err != nil {
				t.Errorf("%v: %v", p, err)
			}
			for i, a := range args {
				if a == nil {
					t.Errorf("%v: args[%d] has no type", p, i)
				}
			}
			if args == nil {
				untyped++
			}
		}
		t.Logf("%s: %d probes, %d without arguments", pv, len(ps), untyped)
	}
	for _, tt := range []struct {
		desc Desc
		args []string
	}{
		{Desc{"sdt", "task", "", "task_rename"}, []string{"pid_t", "char [16]", "char [16]", "short int"}},
		{Desc{"sdt", "sched", "", "sched_process_exec"}, []string{"char *", "pid_t", "pid_t"}},
		{Desc{"rawtp", "sched", "", "sched_process_fork"}, []string{"struct task_struct *", "struct task_struct *"}},
	} {
		info, err := c.Info(tt.desc)
		if err != nil {
			t.Fatal(err)
		}
		got := typeStrings(info.Args)
		if len(got) == 4 && got[3] == "short" {
			got[3] = "short int" // as clang names it, not gcc
		}
		if info.Matches != 1 || !cmp.Equal(got, tt.args) {
			t.Errorf("Info(%v) = %d matches, args %q; want 1, %q", tt.desc, info.Matches, got, tt.args)
		}
	}
}

// TestLiveTracepointsNamed checks that looking an event up by name in
// the running kernel's events directory finds what the list has: every
// 40th event of the list, an event of ftrace's own, which the list
// leaves out, and BEGIN, which no event is called.
func TestLiveTracepointsNamed(t *testing.T) {
	dir := liveTracefs(t)
	listed, err := Live(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	n := 0
	if err := listed.Walk(Desc{Provider: "sdt"}, func(p *Probe) bool {
		if n++; n%40 == 1 {
			names = append(names, p.Name)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "events/ftrace/function")); err == nil {
		names = append(names, "function")
	}
	names = append(names, "BEGIN")
	for _, name := range names {
		d := Desc{Name: name}
		want, err := listed.Match(d)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Live(Config{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Match(d)
		if err != nil {
			t.Fatal(err)
		}
		str := func(ps []*Probe) []string {
			var s []string
			for _, p := range ps {
				s = append(s, p.String())
			}
			return s
		}
		if diff := cmp.Diff(str(want), str(got)); diff != "" {
			t.Errorf("%s: by name (+) and in the list (-):\n%s", name, diff)
		}
		if ev := c.byName["sdt"].(*tpProvider).ev; len(got) < 3 && ev.listed.Load() {
			t.Errorf("%s: the list was read", name)
		}
	}
	t.Logf("%d names of %d events", len(names), n)
}
