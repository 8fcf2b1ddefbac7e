package probe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// tpTestTypes are the kernel types the trace events of tpTestFS use.
type tpTestTypes struct{}

var (
	tpTestPid  = &types.Typedef{Module: "vmlinux", Name: "pid_t", Type: types.IntType}
	tpTestTask = &types.Pointer{Elem: &types.Struct{Module: "vmlinux", Name: "task_struct", Incomplete: true}}
)

func (tpTestTypes) LookupFunc(string) (*types.Func, []string, error) { return nil, nil, nil }

func (tpTestTypes) LookupType(name string) (types.Type, error) {
	switch name {
	case "char":
		return types.Char, nil
	case "short":
		return types.Short, nil
	case "unsigned int":
		return types.UInt, nil
	case "pid_t":
		return tpTestPid, nil
	case "btf_trace_sched_process_fork":
		return &types.Pointer{Elem: &types.Func{Result: types.Void{},
			Params: []types.Type{types.VoidPtr, tpTestTask, tpTestTask}}}, nil
	}
	return nil, nil
}

// tpTestEvents is an available_events file: two events of the sdt and
// rawtp providers, then those of other providers and tracers.
const tpTestEvents = `task:task_rename
sched:sched_process_fork
sched:sched_gone
syscalls:sys_enter_read
kprobes:myprobe
uprobes:p_bash_0x1
dt_pid:pid_1_main
dt_123_myprov:probe
dt_x_y:kept
`

// tpTestFormats are the format files of tpTestEvents, as Linux 6.18
// writes them, and one made up of the rarer kinds of fields.
var tpTestFormats = map[string]string{
	"task/task_rename": `name: task_rename
ID: 204
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:pid_t pid;	offset:8;	size:4;	signed:1;
	field:char oldcomm[16];	offset:12;	size:16;	signed:0;
	field:char newcomm[16];	offset:28;	size:16;	signed:0;
	field:short oom_score_adj;	offset:44;	size:2;	signed:1;

print fmt: "pid=%d oldcomm=%s newcomm=%s oom_score_adj=%hd", REC->pid, REC->oldcomm, REC->newcomm, REC->oom_score_adj
`,
	"sched/sched_process_fork": `name: sched_process_fork
ID: 330
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:__data_loc char[] parent_comm;	offset:8;	size:4;	signed:0;
	field:pid_t parent_pid;	offset:12;	size:4;	signed:1;
	field:__data_loc char[] child_comm;	offset:16;	size:4;	signed:0;
	field:pid_t child_pid;	offset:20;	size:4;	signed:1;

print fmt: "comm=%s pid=%d child_comm=%s child_pid=%d", __get_str(parent_comm), REC->parent_pid, __get_str(child_comm), REC->child_pid
`,
	"dt_x_y/kept": `name: kept
ID: 9999
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:__rel_loc unsigned int[] mask;	offset:8;	size:4;	signed:0;
	field:u8 addr[TASK_COMM_LEN];	offset:12;	size:16;	signed:0;
	field:void __seg_gs * pcpu;	offset:32;	size:8;	signed:0;
	field:unknown_t big;	offset:40;	size:8;	signed:1;
	field:struct odd blob;	offset:48;	size:12;	signed:0;
	field:unsigned long bits[];	offset:60;	size:0;	signed:0;

print fmt: "none"
`,
}

// tpTestFS makes a tracefs of tpTestEvents in a temporary directory:
// the list, and each event's directory with its enable file and format,
// but for sched_gone, whose directory is gone, and for an event of
// ftrace's own, which has no enable file and is not listed.
func tpTestFS(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "available_events"), []byte(tpTestEvents), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(path, text string) {
		t.Helper()
		path = filepath.Join(dir, "events", path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, ev := range strings.Fields(tpTestEvents) {
		if ev != "sched:sched_gone" {
			write(strings.Replace(ev, ":", "/", 1)+"/enable", "0\n")
		}
	}
	for ev, format := range tpTestFormats {
		write(ev+"/format", format)
	}
	write("ftrace/function/format", "name: function\n")
	write("enable", "0\n")
	return dir
}

func tpTestCatalog(t *testing.T, tracefs ...string) *Catalog {
	k := &kernel{types: func(string) (KernelTypes, error) { return tpTestTypes{}, nil }}
	ev := newTPEvents(tracefs)
	return New(newTPProvider("sdt", false, k, ev), newTPProvider("rawtp", true, k, ev))
}

// TestTracepointProbes checks the probes of the sdt and rawtp
// providers: one per event of available_events but those of the
// syscall provider and of tracers, named as Oracle's DTrace names them.
func TestTracepointProbes(t *testing.T) {
	c := tpTestCatalog(t, filepath.Join(t.TempDir(), "absent"), tpTestFS(t))
	var got []string
	if err := c.Walk(Desc{}, func(p *Probe) bool { got = append(got, p.String()); return true }); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"sdt:task::task_rename", "sdt:sched::sched_process_fork", "sdt:sched::sched_gone", "sdt:dt_x_y::kept",
		"rawtp:task::task_rename", "rawtp:sched::sched_process_fork", "rawtp:sched::sched_gone", "rawtp:dt_x_y::kept",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("probes (-want +got):\n%s", diff)
	}
	for d, want := range map[Desc]int{
		{Provider: "sdt", Module: "sched"}:                  2,
		{Provider: "rawtp", Name: "sched_process_*"}:        1,
		{Provider: "sdt", Function: "f"}:                    0,
		{Provider: "sdt", Module: "syscalls"}:               0,
		{Module: "task", Function: "", Name: "task_rename"}: 2,
	} {
		if n, err := c.Count(d); n != want || err != nil {
			t.Errorf("Count(%v) = %d, %v; want %d", d, n, err, want)
		}
	}
	// Without tracefs, there are none, as in Oracle's DTrace.
	if n, err := tpTestCatalog(t, filepath.Join(t.TempDir(), "absent")).Count(Desc{}); n != 0 || err != nil {
		t.Errorf("without tracefs: %d probes, %v; want none", n, err)
	}
}

// TestTracepointArgs checks the sdt probes' arguments, typed from their
// events' formats, and how their sites read them from the record; and
// the rawtp probes', typed from BTF.
func TestTracepointArgs(t *testing.T) {
	c := tpTestCatalog(t, tpTestFS(t))
	tests := []struct {
		desc  Desc
		types []string
		exprs []string
	}{
		{Desc{"sdt", "task", "", "task_rename"},
			[]string{"pid_t", "char [16]", "char [16]", "short"},
			[]string{"*(int32_t *)(arg0 + 8)", "(arg0 + 12)", "(arg0 + 28)", "*(int16_t *)(arg0 + 44)"}},
		// A string of the record's dynamic data is a char * to it.
		{Desc{"sdt", "sched", "", "sched_process_fork"},
			[]string{"char *", "pid_t", "char *", "pid_t"},
			[]string{"arg0 + (*(uint32_t *)(arg0 + 8) & 0xffff)", "*(int32_t *)(arg0 + 12)",
				"arg0 + (*(uint32_t *)(arg0 + 16) & 0xffff)", "*(int32_t *)(arg0 + 20)"}},
		// A __rel_loc field's data is past its end; an array's size
		// is the field's; a type not found is an integer of the
		// field's size and sign, a pointer's void *, or bytes.
		{Desc{"sdt", "dt_x_y", "", "kept"},
			[]string{"unsigned int *", "uint8_t [16]", "void *", "int64_t", "uint8_t [12]", "uint8_t [0]"},
			[]string{"arg0 + 12 + (*(uint32_t *)(arg0 + 8) & 0xffff)", "(arg0 + 12)", "*(uint64_t *)(arg0 + 32)",
				"*(int64_t *)(arg0 + 40)", "(arg0 + 48)", "(arg0 + 60)"}},
		{Desc{"rawtp", "sched", "", "sched_process_fork"},
			[]string{"struct task_struct *", "struct task_struct *"},
			[]string{"arg0", "arg1"}},
		// No prototype in BTF: no arguments.
		{Desc{"rawtp", "task", "", "task_rename"}, nil, nil},
	}
	for _, tt := range tests {
		ps, err := c.Match(tt.desc)
		if err != nil || len(ps) != 1 {
			t.Fatalf("Match(%v) = %d probes, %v", tt.desc, len(ps), err)
		}
		p := ps[0]
		args, err := p.Args()
		if err != nil {
			t.Errorf("%v: %v", p, err)
		}
		if got := typeStrings(args); !cmp.Equal(got, tt.types) {
			t.Errorf("%v: args %q, want %q", p, got, tt.types)
		}
		tp, ok := p.Detail.(*Tracepoint)
		if !ok {
			t.Fatalf("%v: detail %T", p, p.Detail)
		}
		st, err := tp.Site()
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		want := SDTSite{System: tt.desc.Module, Event: tt.desc.Name, Record: tt.desc.Provider == "sdt", Args: tt.exprs}
		if diff := cmp.Diff(want, st); diff != "" {
			t.Errorf("%v: site (-want +got):\n%s", p, diff)
		}
	}
	// An event the list has but whose directory is gone cannot be
	// typed or put in place.
	if _, err := c.Match(Desc{Provider: "sdt"}); err != nil {
		t.Fatal(err)
	}
	ps, err := c.Match(Desc{"sdt", "sched", "", "sched_gone"})
	if err != nil || len(ps) != 1 {
		t.Fatalf("sdt:sched::sched_gone: %d probes, %v", len(ps), err)
	}
	const want = "the kernel has no trace event sched:sched_gone"
	if _, err := ps[0].Args(); err == nil || err.Error() != want {
		t.Errorf("Args: %v, want %q", err, want)
	}
	if _, err := ps[0].Detail.(*Tracepoint).Site(); err == nil || err.Error() != want {
		t.Errorf("Site: %v, want %q", err, want)
	}
}

// TestTracepointManyArgs checks that a record's fields past the tenth
// are not arguments: D has ten.
func TestTracepointManyArgs(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("format:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n")
	for i := range 12 {
		fmt.Fprintf(&b, "\tfield:int f%d;\toffset:%d;\tsize:4;\tsigned:1;\n", i, 8+4*i)
	}
	if err := os.MkdirAll(filepath.Join(dir, "events", "s", "e"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "events", "s", "e", "format"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "available_events"), []byte("s:e\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := tpTestCatalog(t, dir).Match(Desc{Provider: "sdt"})
	if err != nil || len(ps) != 1 {
		t.Fatalf("%d probes, %v", len(ps), err)
	}
	args, err := ps[0].Args()
	st, serr := ps[0].Detail.(*Tracepoint).Site()
	if err != nil || serr != nil || len(args) != maxTPArgs || len(st.Args) != maxTPArgs {
		t.Errorf("%d arguments (%v), a site of %d (%v); want %d", len(args), err, len(st.Args), serr, maxTPArgs)
	}
}

func TestTracerSystem(t *testing.T) {
	for sys, want := range map[string]bool{
		"syscalls": true, "kprobes": true, "uprobes": true, "dt_pid": true, "dt_42_io": true,
		"sched": false, "dt_x_io": false, "dt_42_": false, "dt_": false, "syscalls2": false,
	} {
		if got := tracerSystem(sys); got != want {
			t.Errorf("tracerSystem(%q) = %t, want %t", sys, got, want)
		}
	}
}

// TestTracepointNotEventName checks that a description whose name no
// event can have (tick-1s, the profile provider's) matches no sdt or
// rawtp probe without the list of events being read, which every
// script of the profile provider would otherwise pay for.
func TestTracepointNotEventName(t *testing.T) {
	fs := tpTestFS(t)
	c := tpTestCatalog(t, fs)
	sdt := c.byName["sdt"].(*tpProvider)
	for _, name := range []string{"tick-1s", "profile-97hz", "a.b", ""} {
		if n, err := c.Count(Desc{Name: name}); err != nil || name != "" && n != 0 {
			t.Errorf("Count(%q) = %d, %v; want 0", name, n, err)
		}
		if name != "" && sdt.ev.dir != "" {
			t.Fatalf("the events were read for %q", name)
		}
	}
	if n, err := c.Count(Desc{Name: "task_rename"}); n != 2 || err != nil || sdt.ev.dir != fs {
		t.Errorf("Count(task_rename) = %d, %v, events read from %q; want 2 from %s", n, err, sdt.ev.dir, fs)
	}
}

// TestTracepointNamed checks that a description naming one event finds
// it in the events directory without the list being read, as the list
// would: not ftrace's own events, which have no enable file, nor those
// of tracers, nor a module that is a path. An event of two systems is
// found in the list, in its order, which the directory's may not be.
func TestTracepointNamed(t *testing.T) {
	fs := tpTestFS(t)
	c := tpTestCatalog(t, fs)
	ev := c.byName["sdt"].(*tpProvider).ev
	for _, tt := range []struct {
		desc Desc
		want int
	}{
		{Desc{Name: "task_rename"}, 2},
		{Desc{Provider: "sdt", Module: "sched", Name: "sched_process_fork"}, 1},
		{Desc{Module: "s*", Name: "sched_process_fork"}, 2},
		{Desc{Module: "task", Name: "sched_process_fork"}, 0},
		{Desc{Name: "kept"}, 2},
		{Desc{Name: "sched_gone"}, 0},
		{Desc{Name: "function"}, 0},
		{Desc{Name: "myprobe"}, 0},
		{Desc{Name: "enable"}, 0},
		{Desc{Module: "../events/task", Name: "task_rename"}, 0},
		{Desc{Name: "BEGIN"}, 0},
	} {
		if n, err := c.Count(tt.desc); n != tt.want || err != nil {
			t.Errorf("Count(%v) = %d, %v; want %d", tt.desc, n, err, tt.want)
		}
	}
	if ev.listed.Load() {
		t.Fatal("the list was read")
	}

	f, err := os.OpenFile(filepath.Join(fs, "available_events"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("other:task_rename\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.MkdirAll(filepath.Join(fs, "events/other/task_rename"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fs, "events/other/task_rename/enable"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c = tpTestCatalog(t, fs)
	ps, err := c.Match(Desc{Provider: "sdt", Name: "task_rename"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	if want := []string{"sdt:task::task_rename", "sdt:other::task_rename"}; !cmp.Equal(got, want) {
		t.Errorf("Match(sdt:::task_rename) = %q, want %q", got, want)
	}
	if !c.byName["sdt"].(*tpProvider).ev.listed.Load() {
		t.Error("an event of two systems was not found in the list")
	}
}

// TestTracepointWarm checks that Catalog.Warm reads what a later match
// of a description naming no module needs, and only that: the match
// then asks tracefs nothing, as it finds the events Warm found even
// once they are gone.
func TestTracepointWarm(t *testing.T) {
	fs := tpTestFS(t)
	c := tpTestCatalog(t, fs)
	ev := c.byName["sdt"].(*tpProvider).ev
	c.Warm(Desc{Provider: "sdt", Module: "sched", Name: "sched_process_fork"}) // one lookup: left to the match
	c.Warm(Desc{Provider: "profile", Name: "task_rename"})                     // no tracepoint provider
	c.Warm(Desc{Name: "tick-1s"})                                              // names no event
	ev.mu.Lock()
	if ev.sysRead {
		t.Error("Warm read tracefs for descriptions that need one lookup or none")
	}
	ev.mu.Unlock()
	c.Warm(Desc{Name: "task_rename"})
	c.Warm(Desc{Provider: "s*", Name: "sched_process_fork"})
	if err := os.RemoveAll(filepath.Join(fs, "events")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		desc Desc
		want int
	}{
		{Desc{Name: "task_rename"}, 2},
		{Desc{Provider: "rawtp", Name: "task_rename"}, 1},
		{Desc{Module: "s*", Name: "sched_process_fork"}, 2},
	} {
		if n, err := c.Count(tt.desc); n != tt.want || err != nil {
			t.Errorf("Count(%v) = %d, %v; want %d", tt.desc, n, err, tt.want)
		}
	}
	if ev.listed.Load() {
		t.Error("the list was read")
	}
}
